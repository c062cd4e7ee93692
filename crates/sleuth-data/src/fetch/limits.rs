//! What a fetch may take from the disk: a free-space check before anything is written,
//! a bound on every download and on everything unpacked (the registry's sizes plus
//! slack, [`super::registry::limit`]), and one lock per dataset so two fetches of it
//! never interleave. A failed write (a full disk) deletes what it was writing and says
//! why; only a dropped connection keeps its partial download, to be resumed.

use super::error::FetchError;
use super::progress::FetchProgress;
use super::registry::{Remote, Source};
use crate::file_lock::FileLock;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bytes free for an unprivileged user on the file system holding `dir`, when the
/// platform says.
pub(super) fn available(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: `path` is a valid NUL-terminated string and `stat` a writable struct
        // that statvfs fills; neither outlives the call.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
            return None;
        }
        Some((stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Refuses to start when `dir`'s file system has less than `need` bytes free.
pub(super) fn check_room(dir: &Path, need: u64, free: Option<u64>) -> Result<(), FetchError> {
    match free {
        Some(free) if free < need => Err(FetchError::NoSpace {
            dir: dir.to_path_buf(),
            need_mb: need.div_ceil(1_000_000),
            free_mb: free / 1_000_000,
        }),
        _ => Ok(()),
    }
}

/// Takes the lock of dataset `name` in `data_dir`, waiting while another process holds
/// it (it is installing the same files; when it is done this one finds them installed).
pub(super) async fn lock_dataset(
    data_dir: &Path,
    name: &str,
    progress: &dyn FetchProgress,
) -> Result<FileLock, FetchError> {
    let path = data_dir.join(format!(".{name}.lock"));
    let mut told = false;
    loop {
        match FileLock::try_acquire(&path).map_err(|e| FetchError::io(&path, e))? {
            Ok(lock) => return Ok(lock),
            Err(pid) => {
                if !told {
                    let who = pid.map_or_else(|| "pid unknown".into(), |p| format!("pid {p}"));
                    progress.note(&format!(
                        "another sleuth ({who}) is fetching {name}; waiting for it to finish"
                    ));
                    told = true;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Free space a download of `n` bytes of `remote` needs: itself plus its share of what
/// the dataset unpacks to, scaled from the registry's estimates by the actual size.
pub(super) fn room_for(source: &Source, remote: &Remote, n: u64) -> u64 {
    let share = source.unpacked / source.remotes.len().max(1) as u64;
    let scaled = (u128::from(share) * u128::from(n) / u128::from(remote.bytes.max(1))) as u64;
    n.saturating_add(scaled)
}

/// The staging folder of one fetch: created empty, and removed when the fetch ends,
/// however it ends (its files have been moved into place when it succeeded).
pub(super) struct Staging {
    pub path: PathBuf,
}

impl Staging {
    pub fn new(path: PathBuf) -> Result<Staging, FetchError> {
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| FetchError::io(&path, e))?;
        }
        std::fs::create_dir_all(&path).map_err(|e| FetchError::io(&path, e))?;
        Ok(Staging { path })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// An error and its causes on one line (tar's and reqwest's own messages leave the
/// cause, such as "No space left on device", out).
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_checked_before_a_fetch() {
        let dir = Path::new("/data");
        assert!(check_room(dir, 10, Some(20)).is_ok());
        assert!(check_room(dir, 10, None).is_ok(), "unknown: go ahead");
        let e = check_room(dir, 3_000_000, Some(1_000_000))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("3 MB") && e.contains("1 MB") && e.contains("SLEUTH_DATA_DIR"),
            "{e}"
        );
        assert!(available(&std::env::temp_dir()).is_some_and(|n| n > 0));
    }
}
