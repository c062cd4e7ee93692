//! Why an episode ended: the one vocabulary of endings every method, the record and the
//! reports share.

use serde::{Deserialize, Serialize};

/// Why an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Finished,
    Timeout,
    ParseFailure,
    ContextOverflow,
    Error,
}

impl StopReason {
    /// The name records and reports use (`finished`, `parse_failure`, ...).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Finished => "finished",
            StopReason::Timeout => "timeout",
            StopReason::ParseFailure => "parse_failure",
            StopReason::ContextOverflow => "context_overflow",
            StopReason::Error => "error",
        }
    }
}
