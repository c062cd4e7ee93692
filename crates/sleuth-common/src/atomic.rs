//! Files rewritten in place, written so that a full disk, a write error or a kill at any
//! moment leaves either the old file or the new one, never a cut one: the bytes go to a
//! temporary file beside the target, are flushed to the disk (`fsync`), and the file is
//! renamed over the target (atomic within one file system); the directory is synced so
//! the rename itself survives a crash. `run.json`, fetch markers and digests, report
//! pages and tables are written this way.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (see the module docs). On failure the target is
/// untouched and the temporary file is removed.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |out| out.write_all(bytes))
}

/// Like [`write`], for content streamed by `fill` (a corpus of millions of lines).
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temp_beside(path);
    let result = (|| {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, File::create(&tmp)?);
        fill(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    sync_parent(path);
    Ok(())
}

/// Flushes a file already written (e.g. by a streaming writer) to the disk, before it is
/// renamed into place.
pub fn sync_file(path: &Path) -> std::io::Result<()> {
    File::open(path)?.sync_all()
}

/// Syncs the directory holding `path`, so a rename into it is on the disk. Best effort:
/// some file systems refuse to sync a directory, and the data itself is already synced.
pub fn sync_parent(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// `.NAME.tmp-PID` beside `path`: hidden, and never shared by two processes.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write(&path, b"old").unwrap();
        write(&path, b"new and longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new and longer");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        // A failed write (the target is a directory) keeps what was there.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), "keep").unwrap();
        assert!(write(&blocked, b"no").is_err());
        assert_eq!(std::fs::read(blocked.join("x")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
