//! Evaluation: run records, the runner that produces them, the official metrics that
//! score them, and the statistics that compare methods. Reports read records only.

pub mod analysis;
pub mod conditions;
pub mod difference;
pub mod estimate;
pub mod export;
pub mod lock;
pub mod metrics;
mod record;
pub(crate) mod refusals;
pub mod runner;
pub mod scoring;
pub mod stats;
pub mod store;
mod verdict;

pub use conditions::{RunConditions, RunConfig, RunDifference};
pub use record::{FirstAttempt, RecordContext, RunRecord, SupportScores, RECORD_VERSION};
pub use runner::{run_episode, Outcome, Progress, Quiet, RunSummary, Runner};
pub use store::{RecordedRuns, RunStore};
pub use verdict::Verdict;
