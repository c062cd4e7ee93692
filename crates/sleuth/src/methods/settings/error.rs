//! Why a `--set` pair was refused, typed: the front ends print it, tests match on it,
//! and the method seam carries it instead of a string.

/// A refused setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// No catalogue row has this key.
    #[error("unknown setting `{key}` (known: {})", .known.join(", "))]
    Unknown {
        key: String,
        known: Vec<&'static str>,
    },
    /// The key exists; its value is not one it accepts.
    #[error("{}: expected {expected}", crate::knob::Knob::Set.with(format!("{key}={value}")))]
    Value {
        key: String,
        value: String,
        expected: String,
    },
    /// Values that are valid alone but not together, or a value with a hint of its own
    /// (`nudge=14`: a bare number is α).
    #[error("{0}")]
    Rule(String),
}

impl SettingError {
    /// `value` of `key` is not what the key accepts.
    pub fn value(key: &str, value: &str, expected: impl Into<String>) -> SettingError {
        SettingError::Value {
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}
