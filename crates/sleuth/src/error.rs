//! The crate-wide error type. Each layer has its own error enum carrying the context a
//! user needs (file and line, HTTP status, raw model text); this type unifies them at
//! the library's public edges.

use std::path::PathBuf;

/// Crate-wide result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Data(#[from] crate::data::DataError),
    #[error(transparent)]
    Llm(#[from] crate::llm::LlmError),
    #[error(transparent)]
    Agent(#[from] crate::methods::AgentError),
    #[error(transparent)]
    Index(#[from] crate::retrieval::bm25::IndexError),
    /// An index directory the user named that cannot be opened.
    #[error("{}: {source}", .dir.display())]
    IndexAt {
        dir: PathBuf,
        #[source]
        source: crate::retrieval::bm25::IndexError,
    },
    /// An unknown method or setting, or a value a method does not accept.
    #[error(transparent)]
    Method(#[from] crate::methods::MethodError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Another process is writing this run directory (see `eval::lock`).
    #[error("{}: another sleuth is writing this run directory ({}); wait for it to finish or use another {}", .dir.display(), holder(.pid), crate::knob::Knob::Out)]
    RunLocked { dir: PathBuf, pid: Option<u32> },
    /// A resume asked under other conditions than the directory's run was made under.
    #[error("{}: the run in this directory was made under other conditions: {difference}; resume it as it was, or use another {} directory", .dir.display(), crate::knob::Knob::Out)]
    RunDiffers {
        dir: PathBuf,
        difference: crate::eval::difference::RunDifference,
    },
    /// An export that could not choose its arm or its gold file.
    #[error(transparent)]
    Export(#[from] crate::eval::refusals::ExportError),
    /// A prediction file that could not be scored.
    #[error(transparent)]
    Score(#[from] crate::eval::refusals::ScoreError),
    /// Why an experiment refuses to start or go on.
    #[error(transparent)]
    Experiment(#[from] crate::study::ExperimentError),
    /// A prompt template that does not parse or render (a `prompts` override): the fix
    /// is in the templates, not the model endpoint.
    #[error(transparent)]
    Template(#[from] crate::methods::TemplateError),
    #[error("{0}")]
    Invalid(String),
}

fn holder(pid: &Option<u32>) -> String {
    match pid {
        Some(pid) => format!("pid {pid}"),
        None => "pid unknown".to_string(),
    }
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
