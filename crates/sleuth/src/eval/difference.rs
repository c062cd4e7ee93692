//! How a resume is refused: the first difference between a directory's run and the
//! one asked to extend it, as data (worded by its `Display`, shown by the front end).
//! A leaf module, so that the crate's error type can carry it.

use std::fmt;
use std::path::PathBuf;

/// The first thing that tells a directory's run from the one asked to resume it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunDifference {
    Dataset {
        was: String,
        now: String,
    },
    Model {
        was: String,
        now: String,
    },
    Endpoint {
        was: String,
        now: String,
    },
    /// A `--set` pair added, dropped or changed.
    Setting {
        key: String,
        was: Option<String>,
        now: Option<String>,
    },
    /// A resolved setting of a method both runs hold (another version's default).
    MethodSetting {
        method: String,
        key: String,
        was: Option<String>,
        now: Option<String>,
    },
    Hops {
        was: Option<u8>,
        now: Option<u8>,
    },
    Shard {
        was: Option<String>,
        now: Option<String>,
    },
    Order {
        was: String,
        now: String,
    },
    DataFiles {
        was: Vec<PathBuf>,
        now: Vec<PathBuf>,
    },
    DataContent {
        file: PathBuf,
        was: String,
        now: String,
    },
    Environment {
        was: String,
        now: String,
    },
    Index {
        was: String,
        now: String,
    },
    Prompts {
        detail: String,
    },
}

fn shown(value: &Option<String>) -> String {
    match value {
        Some(v) => format!("`{v}`"),
        None => "unset".to_string(),
    }
}

fn shown_hops(value: Option<u8>) -> String {
    value.map_or("all hops".to_string(), |h| format!("{h}-hop"))
}

fn short(digest: &str) -> &str {
    &digest[..digest.len().min(12)]
}

impl fmt::Display for RunDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunDifference::Dataset { was, now } => write!(f, "the dataset is {was}, not {now}"),
            RunDifference::Model { was, now } => write!(f, "the model is {was}, not {now}"),
            RunDifference::Endpoint { was, now } => {
                write!(f, "the model was served at {was}, not {now}")
            }
            RunDifference::Setting { key, was, now } => write!(
                f,
                "setting {key} was {} and is {} now",
                shown(was),
                shown(now)
            ),
            RunDifference::MethodSetting {
                method,
                key,
                was,
                now,
            } => write!(
                f,
                "{method}'s setting {key} resolved to {} and resolves to {} now",
                shown(was),
                shown(now)
            ),
            RunDifference::Hops { was, now } => write!(
                f,
                "the run took {}, not {}",
                shown_hops(*was),
                shown_hops(*now)
            ),
            RunDifference::Shard { was, now } => {
                write!(f, "the shard was {} and is {} now", shown(was), shown(now))
            }
            RunDifference::Order { was, now } => {
                write!(f, "the run took {was}, and this would take {now}")
            }
            RunDifference::DataFiles { was, now } => write!(
                f,
                "the questions came from {}, not {}",
                paths(was),
                paths(now)
            ),
            RunDifference::DataContent { file, was, now } => write!(
                f,
                "{} changed since the run began (sha256 {}… then, {}… now)",
                file.display(),
                short(was),
                short(now)
            ),
            RunDifference::Environment { was, now } => {
                write!(f, "the run searched the {was}, not the {now}")
            }
            RunDifference::Index { was, now } => {
                write!(f, "the corpus index was {was}, not {now}")
            }
            RunDifference::Prompts { detail } => write!(f, "the prompts differ: {detail}"),
        }
    }
}

fn paths(list: &[PathBuf]) -> String {
    if list.is_empty() {
        return "questions given in memory".to_string();
    }
    list.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
