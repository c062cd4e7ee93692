//! Enum values with names, each name declared once.
//!
//! Settings (`--set stopping=forward-only`), stop reasons and the like are enums whose
//! values have a name users type and records carry. Writing `name()`, `parse()` and a
//! list of names by hand spells each name several times, and they drift; instead the
//! enum derives them with `strum` (`EnumString`, `IntoStaticStr`, `VariantNames`, under
//! one `serialize_all` rule or a `to_string` per variant), and this trait gives every such
//! enum the same three functions.

use std::str::FromStr;

/// An enum whose values have names.
pub trait Named: Sized + Copy + Into<&'static str> + FromStr + strum::VariantNames {
    /// The value's name (what records and `--set` use).
    fn name(self) -> &'static str {
        self.into()
    }

    /// The value a name (or one of its aliases) stands for; surrounding spaces ignored.
    fn from_name(text: &str) -> Option<Self> {
        text.trim().parse().ok()
    }

    /// Every name, in declaration order (for help texts and error messages).
    fn names() -> &'static [&'static str] {
        Self::VARIANTS
    }
}

impl<T> Named for T where T: Sized + Copy + Into<&'static str> + FromStr + strum::VariantNames {}
