//! Errors of the BM25 index layer. Each names the file (and corpus line) at fault, so a
//! bad corpus or a damaged index is a one-line message, never a panic.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Corpus {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: not a usable sleuth BM25 index: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl IndexError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IndexError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn corrupt(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        IndexError::Corrupt {
            path: path.into(),
            message: message.into(),
        }
    }
}

pub type IndexResult<T> = std::result::Result<T, IndexError>;
