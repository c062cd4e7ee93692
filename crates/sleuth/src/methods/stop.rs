//! Why an episode ended: the one vocabulary of endings every method, the record and the
//! reports share.

use serde::{Deserialize, Serialize};

/// Why an episode ended; its names (`finished`, `parse_failure`, ...) are what records
/// and reports use ([`crate::names::Named`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::EnumString, strum::IntoStaticStr, strum::VariantNames)]
#[strum(serialize_all = "snake_case")]
pub enum StopReason {
    Finished,
    Timeout,
    ParseFailure,
    ContextOverflow,
    Error,
}
