//! The sha256 of every download, recorded the first time it is fetched
//! (`<data dir>/digests.json`). The hosts publish no digests, so this is trust on first
//! use: a later fetch that receives different bytes for the same file is refused rather
//! than silently replacing the data a past evaluation ran on.

use super::FetchError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub sha256: String,
    pub bytes: u64,
    pub url: String,
}

/// Recorded digests by download (its mirror path).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Digests {
    #[serde(flatten)]
    pub by_file: BTreeMap<String, Recorded>,
}

pub(super) fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("digests.json")
}

impl Digests {
    pub(super) fn read(data_dir: &Path) -> Result<Digests, FetchError> {
        let path = path(data_dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| FetchError::Archive {
                path,
                message: format!("not a digest record: {e}"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Digests::default()),
            Err(e) => Err(FetchError::io(&path, e)),
        }
    }

    /// Writes the record atomically (temp file + rename).
    pub(super) fn write(&self, data_dir: &Path) -> Result<(), FetchError> {
        let text = serde_json::to_string_pretty(self).expect("digests serialize");
        super::write_atomic(&path(data_dir), text.as_bytes())
    }
}
