//! The archive formats a download may come in: zip (MuSiQue, 2Wiki) and tar.bz2 (the
//! HotpotQA Wikipedia dump). Compiled only with the `archives` cargo feature, so a
//! library user who never fetches leaves zip, tar and bzip2 out of the build.
//!
//! Unpacking never creates a link: every byte written counts against the dataset's
//! bound, so a zip or tar.bz2 bomb stops long before the disk is full; tar entries that
//! are symbolic or hard links (or devices, fifos) are skipped with a note, so nothing
//! installed can point outside the data directory or loop inside it. A failed write
//! names its cause (tar's own message drops "No space left on device").

use super::limits::chain;
use super::unpack::Budget;
use super::{FetchError, FetchProgress};
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

fn write_failed(path: &Path, cause: io::Error) -> FetchError {
    FetchError::WriteFailed {
        path: path.to_path_buf(),
        cause,
        cleaned: "the unpacked files were deleted",
    }
}

pub(super) fn unzip(
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

pub(super) fn untar_bz2(
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
