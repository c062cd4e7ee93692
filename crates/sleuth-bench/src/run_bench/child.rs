//! One measured process: wall time from spawn to exit, and its own peak resident
//! memory as the kernel counted it (`wait4`'s `ru_maxrss`), so each figure is that
//! command's alone, whatever ran before it in this process.

use anyhow::{bail, Context};
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What one run of a command measured.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    pub wall_s: f64,
    pub peak_rss_mb: f64,
}

/// Runs `cmd` with its stdout and stderr written to `log` (`.out` / `.err`), and fails
/// with the end of its stderr when it exits unsuccessfully.
pub fn run(mut cmd: Command, log: &Path) -> anyhow::Result<Measured> {
    let out = File::create(log.with_extension("out"))?;
    let err_path = log.with_extension("err");
    let err = File::create(&err_path)?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let started = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; both pointers are valid for the call.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall_s = started.elapsed().as_secs_f64();
    // The child is reaped here; `Child`'s drop neither waits nor kills.
    drop(child);
    if reaped != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let text = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: String = text.lines().rev().take(8).collect::<Vec<_>>().join("\n");
        bail!("{cmd:?} failed (status {status}):\n{tail}");
    }
    Ok(Measured {
        wall_s,
        // Linux reports ru_maxrss in KiB.
        peak_rss_mb: usage.ru_maxrss as f64 / 1024.0,
    })
}
