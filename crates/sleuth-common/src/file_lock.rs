//! An exclusive advisory lock on one file, released when the holder drops it or its
//! process ends however it ends. The run directory's `run.lock` ((`sleuth::eval::lock`))
//! and a dataset being fetched use it; it lives at the bottom of the crate so that both
//! layers can.
//!
//! `flock(2)` rather than a pid file checked for liveness: the kernel drops the lock
//! with the process (kill -9, a crash, the OOM killer), so a stale lock cannot exist and
//! a reused pid cannot fool it. The pid written inside is only there so a refusal can
//! name the holder. Off Unix no lock is taken.
//!
//! [`SharedLock`] is the reading side of the same lock: any number of holders at once,
//! none while the exclusive one is held. A response cache in use holds it, so that
//! `sleuth cache clear` (which takes the exclusive one) refuses instead of deleting the
//! files under a run that is writing them (hardening III, item 3).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::Duration;

/// The same lock on any file (e.g. one dataset of the data directory while it is
/// fetched): held until dropped or the process ends, the holder's pid written inside.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Takes the lock on `path` (created if needed); `Err(pid)` when another open file
    /// holds it, with the holder's pid when it could be read.
    pub fn try_acquire(path: &Path) -> std::io::Result<std::result::Result<FileLock, Option<u32>>> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        if !try_lock(&file, Mode::Exclusive)? {
            return Ok(Err(holder_pid(&mut file)));
        }
        let pid = format!("{}\n", std::process::id());
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(pid.as_bytes())?;
        file.flush()?;
        Ok(Ok(FileLock { file }))
    }

    /// The open file that holds the lock (closing it releases the lock).
    pub fn into_file(self) -> File {
        self.file
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

/// A shared hold on a lock file: held until dropped or the process ends.
#[derive(Debug)]
pub struct SharedLock {
    _file: File,
}

impl SharedLock {
    /// Takes a shared hold on `path` (created if needed); `None` while someone holds
    /// it exclusively.
    pub fn try_acquire(path: &Path) -> std::io::Result<Option<SharedLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(try_lock(&file, Mode::Shared)?.then_some(SharedLock { _file: file }))
    }
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    Exclusive,
    Shared,
}

/// Ok(false) when another open file (in this or another process) holds the lock in a
/// mode that excludes `mode`.
#[cfg(unix)]
fn try_lock(file: &File, mode: Mode) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    let op = match mode {
        Mode::Exclusive => libc::LOCK_EX,
        Mode::Shared => libc::LOCK_SH,
    };
    loop {
        // SAFETY: the descriptor is valid for the duration of the call (we borrow the
        // open file); flock has no other preconditions.
        let rc = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
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
fn try_lock(_file: &File, _mode: Mode) -> std::io::Result<bool> {
    Ok(true)
}
