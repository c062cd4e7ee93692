//! One writer per run directory.
//!
//! Two `sleuth eval`s on one `--out` would each read the resume set once, run every
//! question and append their own records, leaving two records per question. The store
//! therefore holds an exclusive lock on `DIR/run.lock` for as long as it is open, and a
//! second writer is refused with the holder's pid.
//!
//! Why an OS advisory lock (`flock(2)`) and not a pid file checked for liveness: the
//! kernel drops the lock when the holding process ends, however it ends (kill -9, a
//! crash, the OOM killer), so a stale lock cannot exist and there is nothing to
//! recover; there is no window between "is that pid alive?" and "take over", and a
//! reused pid cannot fool it. The pid written into the file is only there so the
//! refusal can name the holder; the file itself stays behind harmlessly. Limits: the
//! lock binds sleuth processes, not other programs, and on some network file systems
//! it is local to one machine. Off Unix no lock is taken.

use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const LOCK_FILE: &str = "run.lock";

/// Held while a run directory is written; released on drop or process exit.
#[derive(Debug)]
pub struct RunLock {
    // Kept open: closing the file would release the lock.
    _file: File,
    path: PathBuf,
}

impl RunLock {
    /// Takes the lock of `dir` (which must exist), or says who holds it.
    pub fn acquire(dir: &Path) -> Result<RunLock> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        if !try_lock(&file).map_err(|e| Error::io(&path, e))? {
            return Err(Error::RunLocked {
                dir: dir.to_path_buf(),
                pid: holder_pid(&mut file),
            });
        }
        let pid = format!("{}\n", std::process::id());
        file.set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| file.write_all(pid.as_bytes()))
            .and_then(|_| file.flush())
            .map_err(|e| Error::io(&path, e))?;
        Ok(RunLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The pid the holder wrote. It writes just after locking, so a refusal that comes in
/// between may read an empty file: wait a moment for it.
fn holder_pid(file: &mut File) -> Option<u32> {
    for _ in 0..20 {
        let mut text = String::new();
        if file.rewind().is_ok() && file.read_to_string(&mut text).is_ok() {
            if let Ok(pid) = text.trim().parse() {
                return Some(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// Ok(false) when another open file (in this or another process) holds the lock.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: the descriptor is valid for the duration of the call (we borrow the
        // open file); flock has no other preconditions.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(err),
        }
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holder_pid_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let held = RunLock::acquire(dir.path()).unwrap();
        // A second open file description conflicts even within one process.
        match RunLock::acquire(dir.path()) {
            Err(Error::RunLocked { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected a refusal, got {other:?}"),
        }
        drop(held);
        // The file and its old pid remain; the lock does not.
        assert!(dir.path().join(LOCK_FILE).exists());
        RunLock::acquire(dir.path()).unwrap();
    }
}
