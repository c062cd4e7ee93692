//! Hardening II (issue 26): the second round of hostile probes, each reproduced through
//! the real binary against loopback servers, real files and, for full disks, an
//! injected write error (`RLIMIT_FSIZE`, which makes a write past the limit fail with
//! EFBIG the way a full disk fails with ENOSPC, without root or a tmpfs mount).
//! `docs/security.md` lists the classes and what each test proves.

mod cache;
mod disk;
mod fetch;
mod pages;
mod secrets;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The one-question fixture the tests run on.
pub fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/benchmarks/hotpotqa/dev_distractor_sample.jsonl")
}

/// `sleuth ARGS` with exactly these environment variables added to a clean one (no
/// keys, no cache settings from the caller's environment).
pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(args);
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "SLEUTH_CACHE",
        "SLEUTH_NO_CACHE",
        "SLEUTH_API_KEY_ENV",
        "SLEUTH_DATA_DIR",
        "SLEUTH_DATA_MIRROR",
        "NO_COLOR",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd
}

pub fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().expect("run sleuth")
}

/// `sleuth eval` of `methods` on the hotpotqa file `data` with `model` into `out`,
/// then `extra` arguments, with `env` added (as [`command`]).
pub fn eval(
    data: &Path,
    methods: &str,
    model: &str,
    out: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Command {
    let (data, out) = (data.to_str().unwrap(), out.to_str().unwrap());
    let mut args = vec![
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        data,
        "--methods",
        methods,
        "--model",
        model,
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    command(&args, env)
}

/// Waits for `child` at most `limit`, killing it (and failing) when it runs longer: an
/// attack that made the binary run forever fails the test instead of hanging it.
pub fn finish_within(
    mut child: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> Output {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("{what} still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Every file below `dir` (the SQLite cache included, read as lossy text).
pub fn files_below(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(files_below(&path));
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).unwrap_or_default();
            out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    out
}

/// Fails when `text` holds any 8 consecutive characters of `secret`: the whole key and
/// every part of it long enough to matter.
pub fn assert_no_part_of(secret: &str, what: &str, text: &str) {
    for start in 0..=secret.len().saturating_sub(8) {
        let part = &secret[start..start + 8];
        if let Some(at) = text.find(part) {
            let around = text.get(at.saturating_sub(80)..(at + 80).min(text.len()));
            panic!("{what} holds `{part}` of the secret: {around:?}");
        }
    }
}

/// `Command::pre_exec` for a child whose writes past `bytes` fail with EFBIG (a full
/// disk, portably and without root): RLIMIT_FSIZE, with SIGXFSZ ignored so the write
/// returns the error instead of killing the process.
#[cfg(unix)]
pub fn limit_file_size(cmd: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (signal, setrlimit) run between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
