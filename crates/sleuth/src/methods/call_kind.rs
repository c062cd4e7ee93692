//! What a model call was for: the kinds records and reports count calls by.

use serde::{Deserialize, Serialize};

/// What a model call was for; calls are reported per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    Action,
    Reminder,
    Reflection,
    Final,
    Decomposition,
    Verification,
    Refinement,
    /// EIR's dependency-repair control: revising conclusions that depend on a change.
    Repair,
}

impl CallKind {
    /// The name records and reports use (`action`, `reminder`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Action => "action",
            CallKind::Reminder => "reminder",
            CallKind::Reflection => "reflection",
            CallKind::Final => "final",
            CallKind::Decomposition => "decomposition",
            CallKind::Verification => "verification",
            CallKind::Refinement => "refinement",
            CallKind::Repair => "repair",
        }
    }
}
