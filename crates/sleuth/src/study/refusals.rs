//! Why an experiment refuses to start or go on, as data; what to change is a
//! [`Knob`], worded by the front end that speaks (the CLI's flags, Python's keywords).
//! Kept apart from
//! [`super::experiment_run`] because the crate's error type holds it, and that module
//! returns the crate's error.

use crate::data::Dataset;
use crate::knob::Knob;
use std::path::PathBuf;

/// Why an experiment cannot start or go on; worded by each front end, which knows what
/// its users pass.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExperimentError {
    /// A job's benchmark file is missing (checked before a dry run too: a plan of "0
    /// episodes" over missing files is no plan).
    #[error("{}: data file not found for dataset {dataset} (install it with `sleuth data fetch {dataset}`, or point {} at the folder holding it)", file.display(), Knob::DataRoot)]
    DataMissing { file: PathBuf, dataset: Dataset },
    /// `on_setup` asked of a recipe that holds no setup questions out.
    #[error("{} holds no setup questions out (`setup = N` with `sample`)", recipe.display())]
    NoSetupQuestions { recipe: PathBuf },
    /// The experiment's budget was spent before job `done + 1` of `jobs`.
    #[error("the experiment's cost budget (${limit:.2}) is spent after {done} of {jobs} jobs; rerun with a larger {} to continue", Knob::MaxCost)]
    BudgetSpent {
        limit: f64,
        done: usize,
        jobs: usize,
    },
}
