//! Benchmark questions in one shape.
//!
//! Every loader turns its benchmark's official schema into [`Question`]; agents,
//! environments and metrics only ever see this type, so adding a benchmark never touches
//! them. The one benchmark-specific thing that survives loading is [`Dataset`], because
//! the official metrics differ per benchmark (see `eval::metrics`).

// The shared utilities, under the paths the modules name them by.
use sleuth_common::{atomic, file_lock, knob};

mod corpus;
pub mod fetch;
pub(crate) mod load;
mod question;
mod questions;
mod sentences;
mod stats;
mod wiki;

pub use corpus::{Corpus, CorpusDoc};
pub use load::records;
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
    #[error(transparent)]
    ArchivesNotBuilt(#[from] ArchivesNotBuilt),
    #[error("{0}")]
    Invalid(String),
}

/// A file in an archive format (zip, tar, bz2) given to a build without the `archives`
/// cargo feature: what could not be read, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this build of sleuth reads no {what}: they need the cargo feature `archives` of the sleuth library (on in the CLI)")]
pub struct ArchivesNotBuilt {
    pub what: &'static str,
}
