//! What a run *is*, shared by every front end: the application layer.
//!
//! A run answers a [`Selection`] of questions with the methods a [`MethodSetup`]
//! builds, calling the model a [`ModelSetup`] describes, into one run directory: a
//! [`Job`]. A job is prepared (questions selected, methods built: every mistake is
//! reported here, before a model is opened or a dollar spent), then planned (its
//! estimated calls, tokens and dollars: a [`Plan`]) or run. An [`Experiment`] is a
//! recipe's list of jobs; an [`ExperimentRun`] runs them under one output root, with
//! its manifest and one budget shared by the jobs. A [`ReportJob`] reads runs back into a [`Report`]: its
//! tables, files and pages. `sleuth eval`, `experiment`, `ask`, `demo`, `report` and
//! the Python package only turn their arguments into these types and print what comes
//! back, so the same numbers pick the same questions, build the same methods and
//! report the same tables everywhere.
//!
//! This is the top layer of the crate: it may use every other, and none uses it
//! (ARCHITECTURE.md, "Layers").

mod demo;
mod experiment;
mod experiment_run;
mod job;
mod methods;
mod model;
mod plan;
mod refusals;
mod report;
mod report_command;
mod selection;
mod shard;

pub use demo::{write_demo_run, DEMO_PAGE, DEMO_RECORDS};
pub use experiment::{Experiment, Overrides, RecipeJob, Running, MANIFEST};
pub use experiment_run::{ExperimentOptions, ExperimentRun, ExperimentStop, NextStep};
pub use job::{Finished, Job, Prepared};
pub use methods::{CorpusChoice, MethodSetup, Methods};
pub use model::{default_cache_dir, default_timeout, CacheChoice, ModelSetup, PriceCheck};
pub use plan::{history, MethodPlan, Plan};
pub use refusals::ExperimentError;
pub use report::{Markdown, Report, ReportError, ReportJob, Written, Wrote, MAX_RESAMPLES};
pub use report_command::{shell_quoted, ReportCommand, ReportSpec, ReportSpecError};
pub use selection::{known_failures, Sample, Selected, Selection, Source};
pub use shard::Shard;
