//! Official answer and support metrics (HotpotQA, MuSiQue, 2Wiki evaluation scripts).
//! Evaluation: run records, the runner that produces them, the official metrics that
//! score them, and the statistics that compare methods. Reports read records only.

pub mod analysis;
pub mod metrics;
mod record;
pub mod stats;

pub use record::RunRecord;
