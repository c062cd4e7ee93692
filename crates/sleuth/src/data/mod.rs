//! Benchmark questions in one shape.
//!
//! Every loader turns its benchmark's official schema into [`Question`]; agents,
//! environments and metrics only ever see this type, so adding a benchmark never touches
//! them. The one benchmark-specific thing that survives loading is [`Dataset`], because
//! the official metrics differ per benchmark (see `eval::metrics`).

mod corpus;
pub mod fetch;
pub(crate) mod load;
mod question;
mod questions;
mod sentences;
mod stats;
mod wiki;

pub use corpus::{Corpus, CorpusDoc};
pub use load::{
    aliases_file, detect, detect_file, filter_hops, load, load_detected, parse, read_aliases,
    read_evidence, read_text, Aliases, GoldEvidence,
};
pub use question::{base_title, display_titles, Dataset, Paragraph, Question, SupportingFact};
pub use questions::Questions;
pub use sentences::split_sentences;
pub use stats::{DatasetStats, Spread};
pub use wiki::{write_wiki_corpus, WikiStats};

use std::path::PathBuf;

/// Errors while reading benchmark files. Every parse error names the file and line.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    // The cause is part of the message and deliberately not a `#[source]`: printing
    // the error chain would otherwise repeat it ("...: No such file: No such file").
    #[error("cannot read {path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot write {path}: {cause}")]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("unknown dataset `{0}` (expected one of: hotpotqa, musique, 2wiki, jsonl)")]
    UnknownDataset(String),
    #[error("{dataset} is not installed in {dir}: run `sleuth data fetch {dataset}` (or give {})", crate::knob::Knob::Data.with("FILE"))]
    NotInstalled { dataset: String, dir: PathBuf },
    #[error("{0}")]
    Invalid(String),
}
