//! Why an experiment refuses to start or go on, as data: each front end words it for
//! its users (the CLI names its flags, Python its keywords). Kept apart from
//! [`super::experiment_run`] because the crate's error type holds it, and that module
//! returns the crate's error.

use crate::data::Dataset;
use std::path::PathBuf;

/// Why an experiment cannot start or go on; worded by each front end, which knows what
/// its users pass.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExperimentError {
    /// A job's benchmark file is missing (checked before a dry run too: a plan of "0
    /// episodes" over missing files is no plan).
    #[error("{}: data file not found for dataset {dataset}", file.display())]
    DataMissing { file: PathBuf, dataset: Dataset },
    /// `on_setup` asked of a recipe that holds no setup questions out.
    #[error("{} holds no setup questions out (`setup = N` with `sample`)", recipe.display())]
    NoSetupQuestions { recipe: PathBuf },
    /// The experiment's budget was spent before job `done + 1` of `jobs`.
    #[error("the experiment's cost budget (${limit:.2}) is spent after {done} of {jobs} jobs")]
    BudgetSpent {
        limit: f64,
        done: usize,
        jobs: usize,
    },
}
