//! Benchmark questions in one shape.
//!
//! Every loader turns its benchmark's official schema into [`Question`]; agents,
//! environments and metrics only ever see this type, so adding a benchmark never touches
//! them. The one benchmark-specific thing that survives loading is [`Dataset`], because
//! the official metrics differ per benchmark (see `eval::metrics`).

mod corpus;
pub(crate) mod load;
mod question;
mod sentences;
mod stats;

pub use corpus::{Corpus, CorpusDoc};
pub use load::{filter_hops, load, parse};
pub use question::{Dataset, Paragraph, Question, SupportingFact};
pub use sentences::split_sentences;
pub use stats::{DatasetStats, Spread};

use std::path::PathBuf;

/// Errors while reading benchmark files. Every parse error names the file and line.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("unknown dataset `{0}` (expected one of: hotpotqa, musique, 2wiki, jsonl)")]
    UnknownDataset(String),
    #[error("{0}")]
    Invalid(String),
}
