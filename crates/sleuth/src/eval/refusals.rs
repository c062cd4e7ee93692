//! Why `export` and `score` refuse, as data: each front end words them for its users
//! (the CLI names its flags, Python its keywords). Kept apart from [`super::export`]
//! and [`super::scoring`] because the crate's error type holds them, and those modules
//! return it.

use crate::data::Dataset;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Why an export could not choose its arm or its gold. Worded by each front end, which
/// knows what its users pass (flags, keywords).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExportError {
    /// No arm matches the method asked for.
    #[error("no records of `{wanted}` (present: {})", quoted(present))]
    NoSuchArm {
        wanted: String,
        present: Vec<String>,
    },
    /// Several arms match: `choices` says which, with their datasets and run folders.
    #[error("the run holds {} arms; choose one", choices.len())]
    SeveralArms {
        wanted: Option<String>,
        choices: Vec<ArmChoice>,
    },
    /// The run's run.json names no benchmark file.
    #[error("{}: run.json names no data file", dir.display())]
    NoDataFile { dir: PathBuf },
    /// Our own schema has no official format.
    #[error("export writes hotpotqa, musique or 2wiki files, not jsonl")]
    NoOfficialFormat,
}

/// One arm an ambiguous export could mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmChoice {
    pub name: String,
    pub dataset: String,
    /// The run directories its records came from.
    pub dirs: Vec<PathBuf>,
}

impl ExportError {
    /// The datasets of an ambiguous choice when they, not the methods, differ: an
    /// experiment root spanning several benchmarks, asked for one method.
    pub fn datasets(&self) -> Option<Vec<String>> {
        let ExportError::SeveralArms { choices, .. } = self else {
            return None;
        };
        let names: BTreeSet<&str> = choices.iter().map(|c| c.name.as_str()).collect();
        let datasets: BTreeSet<&str> = choices.iter().map(|c| c.dataset.as_str()).collect();
        (names.len() == 1 && datasets.len() > 1)
            .then(|| datasets.into_iter().map(str::to_string).collect())
    }
}

fn quoted(names: &[String]) -> String {
    let v: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    v.join(", ")
}

/// Which gold questions a score averages over.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every gold question, as the official scripts do.
    #[default]
    All,
    /// Only the gold questions the predictions answer.
    Predicted,
    /// Only the questions this run directory (or records file) recorded.
    Run(PathBuf),
}

impl Scope {
    pub fn name(&self) -> &'static str {
        match self {
            Scope::All => "all",
            Scope::Predicted => "predicted",
            Scope::Run(_) => "run",
        }
    }
}

/// Why a prediction file could not be scored; worded by each front end.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ScoreError {
    /// The file holds run records, which export turns into predictions.
    #[error("{} holds run records, not predictions", .path.display())]
    RunRecords { path: PathBuf, dataset: Dataset },
    /// The scope left no gold question.
    #[error("no gold question of {} is {}", .data.display(), if matches!(.scope, Scope::Run(_)) { "in the run" } else { "predicted" })]
    NothingScored { data: PathBuf, scope: Scope },
}
