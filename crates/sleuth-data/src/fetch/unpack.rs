//! Turning a verified download into the files the loaders read, inside a staging folder
//! (the caller moves the staging folder into place only when everything succeeded).
//!
//! Unpacking is bounded: everything written counts against the dataset's bound
//! ([`super::registry::Source::max_unpacked`]). The archive formats are read in
//! `archives.rs`, compiled only with the `archives` cargo feature.

use super::registry::Unpack;
use super::{FetchError, FetchProgress};
use std::fs;
use std::path::Path;

/// What unpacking may still write, shared by every download of one dataset.
pub(super) struct Budget {
    pub written: u64,
    pub limit: u64,
}

impl Budget {
    /// Counts `n` more bytes, or says the bound would be passed.
    pub(super) fn take(&mut self, n: u64, what: &str) -> Result<(), FetchError> {
        if self.written + n > self.limit {
            return Err(FetchError::TooLarge {
                what: what.to_string(),
                found: "it unpacks to more".into(),
                limit: self.limit,
            });
        }
        self.written += n;
        Ok(())
    }
}

/// Unpacks `download` into `staging` as `how` says; returns the paths written, relative
/// to `staging`. A tar.bz2 (the multi-GB Wikipedia dump) reports progress in compressed
/// bytes read.
pub(super) fn unpack(
    download: &Path,
    how: Unpack,
    staging: &Path,
    budget: &mut Budget,
    progress: &dyn FetchProgress,
) -> Result<Vec<String>, FetchError> {
    match how {
        Unpack::Plain(dest) => {
            let to = staging.join(dest);
            let len = fs::metadata(download).map_or(0, |m| m.len());
            budget.take(len, dest)?;
            fs::rename(download, &to).map_err(|e| FetchError::io(&to, e))?;
            Ok(vec![dest.to_string()])
        }
        #[cfg(feature = "archives")]
        Unpack::Zip(members) => super::archives::unzip(download, members, staging, budget),
        #[cfg(feature = "archives")]
        Unpack::TarBz2(dir) => {
            super::archives::untar_bz2(download, &staging.join(dir), budget, progress)?;
            Ok(vec![dir.to_string()])
        }
        #[cfg(not(feature = "archives"))]
        Unpack::Zip(_) | Unpack::TarBz2(_) => {
            let _ = progress;
            Err(crate::ArchivesNotBuilt {
                what: "zip and tar.bz2 downloads",
            }
            .into())
        }
    }
}
