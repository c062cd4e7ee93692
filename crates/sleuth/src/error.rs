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
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
