//! Turning a verified download into the files the loaders read, inside a staging folder
//! (the caller moves the staging folder into place only when everything succeeded).
//!
//! Unpacking is bounded and never creates a link: everything written counts against
//! the dataset's bound ([`super::registry::Source::max_unpacked`]), so a zip or tar.bz2
//! bomb stops long before the disk is full; tar entries that are symbolic or hard
//! links (or devices, fifos) are skipped with a note, so nothing installed can point
//! outside the data directory or loop inside it. A failed write names its cause (tar's
//! own message drops "No space left on device").

use super::limits::chain;
use super::registry::Unpack;
use super::{FetchError, FetchProgress};
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

/// What unpacking may still write, shared by every download of one dataset.
pub(super) struct Budget {
    pub written: u64,
    pub limit: u64,
}

impl Budget {
    /// Counts `n` more bytes, or says the bound would be passed.
    fn take(&mut self, n: u64, what: &str) -> Result<(), FetchError> {
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
        Unpack::Zip(members) => unzip(download, members, staging, budget),
        Unpack::TarBz2(dir) => {
            untar_bz2(download, &staging.join(dir), budget, progress)?;
            Ok(vec![dir.to_string()])
        }
    }
}

fn write_failed(path: &Path, cause: io::Error) -> FetchError {
    FetchError::WriteFailed {
        path: path.to_path_buf(),
        cause,
        cleaned: "the unpacked files were deleted",
    }
}

fn unzip(
    download: &Path,
    members: &[(&str, &str)],
    staging: &Path,
    budget: &mut Budget,
) -> Result<Vec<String>, FetchError> {
    let bad = |message: String| FetchError::Archive {
        path: download.to_path_buf(),
        message,
    };
    let file = File::open(download).map_err(|e| FetchError::io(download, e))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file)).map_err(|e| bad(e.to_string()))?;
    let names: Vec<String> = archive.file_names().map(str::to_string).collect();
    let mut written = Vec::new();
    for (wanted, dest) in members {
        let member = names
            .iter()
            .filter(|n| !n.contains("__MACOSX") && !n.ends_with('/'))
            .find(|n| n.rsplit('/').next() == Some(*wanted))
            .ok_or_else(|| bad(format!("the archive has no file named {wanted}")))?;
        let mut entry = archive
            .by_name(member)
            .map_err(|e| bad(format!("{member}: {e}")))?;
        if entry.is_symlink() {
            return Err(bad(format!("{member} is a symbolic link, not the file")));
        }
        let to = staging.join(dest);
        let mut out = File::create(&to).map_err(|e| write_failed(&to, e))?;
        // Copied by hand: a read error is the archive's, a write error the disk's, and
        // the bound is checked before each write (a member may claim any size).
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| bad(format!("{member}: {e}")))?;
            if n == 0 {
                break;
            }
            budget.take(n as u64, member)?;
            out.write_all(&buf[..n]).map_err(|e| write_failed(&to, e))?;
        }
        out.sync_all().map_err(|e| write_failed(&to, e))?;
        written.push(dest.to_string());
    }
    Ok(written)
}

fn untar_bz2(
    download: &Path,
    into: &Path,
    budget: &mut Budget,
    progress: &dyn FetchProgress,
) -> Result<(), FetchError> {
    fs::create_dir_all(into).map_err(|e| write_failed(into, e))?;
    let file = File::open(download).map_err(|e| FetchError::io(download, e))?;
    let total = file.metadata().map(|m| m.len()).ok();
    let name = download
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    progress.begin(
        &format!("unpacking {}", name.trim_end_matches(".part")),
        total,
        0,
    );
    let counted = Counted {
        inner: BufReader::new(file),
        progress,
    };
    let result = untar_entries(download, counted, into, budget, progress);
    progress.end();
    result
}

fn untar_entries(
    download: &Path,
    stream: impl Read,
    into: &Path,
    budget: &mut Budget,
    progress: &dyn FetchProgress,
) -> Result<(), FetchError> {
    let bad = |message: String| FetchError::Archive {
        path: download.to_path_buf(),
        message,
    };
    let mut archive = tar::Archive::new(bzip2::read::MultiBzDecoder::new(stream));
    let mut skipped = 0usize;
    for entry in archive.entries().map_err(|e| bad(chain(&e)))? {
        let mut entry = entry.map_err(|e| bad(chain(&e)))?;
        let kind = entry.header().entry_type();
        let shown = entry
            .path()
            .map_or_else(|_| "?".into(), |p| p.display().to_string());
        if !(kind.is_file() || kind.is_dir()) {
            if skipped < 5 {
                progress.note(&format!("skipped {shown}: a {kind:?} entry, not a file"));
            }
            skipped += 1;
            continue;
        }
        // A tar header states its entry's exact size: check the bound before writing.
        budget.take(entry.header().size().unwrap_or(0), &shown)?;
        // `unpack_in` refuses entries that would land outside `into` (absolute or `..`
        // paths, or a path through a link, and none are created here).
        match entry.unpack_in(into) {
            Ok(true) => {}
            Ok(false) => progress.note(&format!("skipped {shown}: outside the dataset folder")),
            // Decoding errors are the archive's; anything else is the disk's.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
                ) =>
            {
                return Err(bad(chain(&e)))
            }
            Err(e) => {
                let cause = io::Error::new(e.kind(), chain(&e));
                return Err(write_failed(into, cause));
            }
        }
    }
    if skipped > 5 {
        progress.note(&format!(
            "skipped {skipped} entries that are not files in all"
        ));
    }
    Ok(())
}

/// A reader that reports how many bytes went through it.
struct Counted<'a, R> {
    inner: R,
    progress: &'a dyn FetchProgress,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}
