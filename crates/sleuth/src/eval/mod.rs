//! Evaluation: run records, the runner that produces them, the official metrics that
//! score them, and the statistics that compare methods. Reports read records only.

pub mod metrics;
mod record;

pub use record::RunRecord;
