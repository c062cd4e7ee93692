//! Why a method could not be built: the typed seam between the registry and whoever
//! assembles a run (its own file, so the crate-wide error can carry it without
//! reaching the registry).

use super::settings::SettingError;

/// A method that could not be built, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MethodError {
    #[error("unknown method `{name}` (known: {})", .known.join(", "))]
    Unknown {
        name: String,
        known: Vec<&'static str>,
    },
    #[error("{name} has no open-corpus setting ({summary})")]
    NoCorpus {
        name: &'static str,
        summary: &'static str,
    },
    /// A known key that none of the chosen methods reads (it would be ignored).
    #[error("setting `{key}` is read by none of {}; it is read by {}", .chosen.join(", "), .readers.join(", "))]
    NotRead {
        key: String,
        chosen: Vec<String>,
        readers: Vec<&'static str>,
    },
    #[error("no method given (e.g. {})", crate::knob::Knob::Methods.with("react,sleuth"))]
    NoneChosen,
    #[error(transparent)]
    Setting(#[from] SettingError),
}
