//! What can go wrong while fetching: each message says what happened to the files and
//! what to do next.

use crate::knob::Knob;
use std::path::{Path, PathBuf};

/// What can go wrong while fetching. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("unknown dataset `{0}` (fetchable: {names})", names = super::registry::names())]
    UnknownSource(String),
    #[error("{url}: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} answered with a web page instead of the file; download it in a browser and install it with `sleuth data fetch NAME {} FILE`", Knob::From.flag())]
    Html { url: String },
    #[error("download of {url} failed after {attempts} tries ({message}); {bytes} bytes are kept: run the same command again to resume")]
    Interrupted {
        url: String,
        attempts: u32,
        message: String,
        bytes: u64,
    },
    #[error("{url}: {message}, {attempts} tries; is this machine offline? Download the file on a machine that can reach it and install it with `sleuth data fetch NAME {} FILE`, or pass a local file to a command with {}", Knob::From.flag(), Knob::Data.with("FILE"))]
    Unreachable {
        url: String,
        attempts: u32,
        message: String,
    },
    #[error("{what}: sha256 is {actual}, expected {expected} ({why}); {disposal} and nothing was installed")]
    Digest {
        what: String,
        expected: String,
        actual: String,
        why: &'static str,
        /// What became of the file: a download is deleted, the user's own file kept.
        disposal: &'static str,
    },
    /// Unpacked files that are not what the dataset holds (a web page, garbage, links).
    #[error("{what} is not what the dataset holds: {message}; nothing was installed and no digest was recorded")]
    Invalid { what: String, message: String },
    /// A download or an unpacked dataset past its bound (an endless body, a bomb).
    #[error("{what}: {found}, more than the {limit} bytes sleuth allows for it (the registry's size plus slack); it was stopped, its files deleted, and nothing was installed")]
    TooLarge {
        what: String,
        found: String,
        limit: u64,
    },
    /// Not enough free space to start.
    #[error("{}: about {need_mb} MB are needed (the download and what it unpacks to) but {free_mb} MB are free; free some space, or set SLEUTH_DATA_DIR to a disk with room", .dir.display())]
    NoSpace {
        dir: PathBuf,
        need_mb: u64,
        free_mb: u64,
    },
    /// A write that failed (a full disk): what was being written is deleted.
    #[error("{}: cannot write: {cause}; {cleaned} and nothing was installed (free some space, or set SLEUTH_DATA_DIR to a disk with room, then run the same command again)", .path.display())]
    WriteFailed {
        path: PathBuf,
        cause: std::io::Error,
        cleaned: &'static str,
    },
    /// A download in an archive format this build cannot read.
    #[error(transparent)]
    ArchivesNotBuilt(#[from] crate::ArchivesNotBuilt),
    #[error("{path}: {message}")]
    Archive { path: PathBuf, message: String },
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
}

impl FetchError {
    pub(super) fn io(path: &Path, cause: std::io::Error) -> FetchError {
        FetchError::Io {
            path: path.to_path_buf(),
            cause,
        }
    }
}
