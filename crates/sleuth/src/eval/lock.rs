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

use crate::file_lock::FileLock;
use crate::{Error, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

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
        match FileLock::try_acquire(&path).map_err(|e| Error::io(&path, e))? {
            Ok(lock) => Ok(RunLock {
                _file: lock.into_file(),
                path,
            }),
            Err(pid) => Err(Error::RunLocked {
                dir: dir.to_path_buf(),
                pid,
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
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
