//! `sleuth data fetch`: the official benchmark files, by name, into the data directory.
//!
//! A fetch downloads every file of a [`Source`] into `<data dir>/.downloads/*.part`
//! (resumable, see [`download`]), checks its sha256 (pinned in the registry, or recorded
//! at the first fetch in `digests.json`), unpacks it into a staging folder, and only then
//! moves the files into `<data dir>/<name>/` and writes the marker `.installed.json`. A
//! dataset counts as installed only when its marker exists, so an interrupted fetch
//! never looks finished, and a failed re-fetch leaves the installed files untouched.
//!
//! The data directory is `$SLEUTH_DATA_DIR`, else `$SLEUTH_HOME/data`, else the platform
//! cache dir + `sleuth/data`. `SLEUTH_DATA_MIRROR=http://host/root` fetches every file
//! from `root/<mirror path>` instead of its upstream URL (a local mirror, or the tests'
//! server on 127.0.0.1).

mod digests;
mod download;
pub mod registry;
mod unpack;

pub use digests::{Digests, Recorded};
pub use registry::{source, source_of, Source, SOURCES};

use crate::data::{DataError, Dataset};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What can go wrong while fetching. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("unknown dataset `{0}` (fetchable: {names})", names = registry::names())]
    UnknownSource(String),
    #[error("{url}: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} answered with a web page instead of the file; download it in a browser and install it with `sleuth data fetch NAME --from FILE`")]
    Html { url: String },
    #[error("download of {url} failed after {attempts} tries ({message}); {bytes} bytes are kept: run the same command again to resume")]
    Interrupted {
        url: String,
        attempts: u32,
        message: String,
        bytes: u64,
    },
    #[error("{what}: sha256 is {actual}, expected {expected} ({why}); the download was deleted and nothing was installed")]
    Digest {
        what: String,
        expected: String,
        actual: String,
        why: &'static str,
    },
    #[error("{path}: {message}")]
    Archive { path: PathBuf, message: String },
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
}

impl FetchError {
    fn io(path: &Path, cause: std::io::Error) -> FetchError {
        FetchError::Io {
            path: path.to_path_buf(),
            cause,
        }
    }
}

/// Progress of downloads, for a bar or log lines.
pub trait FetchProgress: Send + Sync {
    /// A download (re)starts: `total` bytes when known, `done` already on disk.
    fn begin(&self, label: &str, total: Option<u64>, done: u64);
    fn advance(&self, bytes: u64);
    fn end(&self);
    /// Something worth a line: a resume, a retry, an unpack step.
    fn note(&self, message: &str);
}

/// Reports nothing.
pub struct Quiet;

impl FetchProgress for Quiet {
    fn begin(&self, _: &str, _: Option<u64>, _: u64) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
    fn note(&self, _: &str) {}
}

/// Where fetched data lives (not created).
pub fn data_dir() -> PathBuf {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("SLEUTH_DATA_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(home) = var("SLEUTH_HOME") {
        return PathBuf::from(home).join("data");
    }
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| std::env::temp_dir().join("sleuth-cache"));
    cache.join("sleuth").join("data")
}

/// The marker a finished fetch writes last.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Installed {
    pub source: String,
    /// Paths relative to the source's folder.
    pub files: Vec<String>,
    pub downloads: Vec<Recorded>,
}

const MARKER: &str = ".installed.json";

/// The installed files of `source` under `data_dir`, if a fetch finished.
pub fn installed(source: &Source, data_dir: &Path) -> Option<Installed> {
    let dir = data_dir.join(source.name);
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    let marker: Installed = serde_json::from_str(&text).ok()?;
    marker
        .files
        .iter()
        .all(|f| dir.join(f).exists())
        .then_some(marker)
}

/// The benchmark file to read for `dataset` when no `--data` is given: its default file
/// in the data directory, or an error that gives the command to install it.
pub fn default_file(dataset: Dataset, data_dir: &Path) -> Result<PathBuf, DataError> {
    let source = source_of(dataset).filter(|s| s.default_file.is_some());
    let Some(source) = source else {
        return Err(DataError::Invalid(format!(
            "--dataset {dataset} needs --data FILE (there is nothing to fetch for it)"
        )));
    };
    let file = source.default_file.expect("filtered above");
    match installed(source, data_dir) {
        Some(_) => Ok(data_dir.join(source.name).join(file)),
        None => Err(DataError::NotInstalled {
            dataset: source.name.to_string(),
            dir: data_dir.to_path_buf(),
        }),
    }
}

/// How to fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    pub data_dir: PathBuf,
    /// Root URL replacing every upstream URL (`root/<mirror path>`).
    pub mirror: Option<String>,
    /// Download again even when installed.
    pub force: bool,
    /// Install from local copies of the downloads instead of the network (one per
    /// remote, in order).
    pub from: Vec<PathBuf>,
}

impl FetchOptions {
    pub fn new(data_dir: PathBuf) -> Self {
        FetchOptions {
            data_dir,
            mirror: std::env::var("SLEUTH_DATA_MIRROR")
                .ok()
                .filter(|m| !m.is_empty()),
            force: false,
            from: Vec::new(),
        }
    }
}

/// What [`fetch`] did.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub dir: PathBuf,
    pub installed: Installed,
    pub already_present: bool,
}

/// Installs `source` into `opts.data_dir` (see the module docs for the guarantees).
pub async fn fetch(
    source: &Source,
    opts: &FetchOptions,
    progress: &dyn FetchProgress,
) -> Result<Fetched, FetchError> {
    let dir = opts.data_dir.join(source.name);
    if !opts.force {
        if let Some(installed) = installed(source, &opts.data_dir) {
            return Ok(Fetched {
                dir,
                installed,
                already_present: true,
            });
        }
    }
    if !opts.from.is_empty() && opts.from.len() != source.remotes.len() {
        return Err(FetchError::Archive {
            path: opts.from[0].clone(),
            message: format!(
                "{} needs {} file(s) for --from, in this order: {}",
                source.name,
                source.remotes.len(),
                source
                    .remotes
                    .iter()
                    .map(|r| r.mirror_path)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let downloads = opts.data_dir.join(".downloads");
    mkdir(&downloads)?;
    let staging = opts.data_dir.join(format!(".{}.staging", source.name));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| FetchError::io(&staging, e))?;
    }
    mkdir(&staging)?;
    let client = reqwest::Client::builder()
        .user_agent(concat!("sleuth/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(20))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| FetchError::Archive {
            path: dir.clone(),
            message: format!("cannot start an HTTP client: {e}"),
        })?;
    let mut digests = Digests::read(&opts.data_dir)?;
    let mut files = Vec::new();
    let mut recorded = Vec::new();
    for (i, remote) in source.remotes.iter().enumerate() {
        let url = match &opts.mirror {
            Some(root) => format!("{}/{}", root.trim_end_matches('/'), remote.mirror_path),
            None => remote.url.to_string(),
        };
        let name = remote
            .mirror_path
            .rsplit('/')
            .next()
            .unwrap_or(remote.mirror_path);
        let (path, from_local) = match opts.from.get(i) {
            Some(local) => (local.clone(), true),
            None => {
                let part = downloads.join(format!("{name}.part"));
                download::download(&client, &url, &part, name, progress).await?;
                (part, false)
            }
        };
        let (sha256, bytes) = sha256_file(&path)?;
        let discard = || {
            if !from_local {
                let _ = std::fs::remove_file(&path);
            }
        };
        let what = format!(
            "{name} from {}",
            if from_local {
                path.display().to_string()
            } else {
                url.clone()
            }
        );
        if let Some(expected) = remote.sha256 {
            if expected != sha256 {
                discard();
                return Err(FetchError::Digest {
                    what,
                    expected: expected.to_string(),
                    actual: sha256,
                    why: "pinned in sleuth's source registry",
                });
            }
        } else if let Some(seen) = digests.by_file.get(remote.mirror_path) {
            if seen.sha256 != sha256 {
                discard();
                return Err(FetchError::Digest {
                    what,
                    expected: seen.sha256.clone(),
                    actual: sha256,
                    why: "recorded at the first fetch in digests.json: the file changed upstream; delete its entry there to accept the new one",
                });
            }
        }
        progress.note(&format!(
            "{name}: sha256 {sha256} ({bytes} bytes); unpacking"
        ));
        let how = match (remote.unpack, from_local) {
            // Never move the user's own file: unpack a copy.
            (registry::Unpack::Plain(dest), true) => {
                let to = staging.join(dest);
                std::fs::copy(&path, &to).map_err(|e| FetchError::io(&to, e))?;
                files.push(dest.to_string());
                None
            }
            (how, _) => Some(how),
        };
        if let Some(how) = how {
            files.extend(unpack::unpack(&path, how, &staging, progress)?);
            if !from_local && path.exists() {
                let _ = std::fs::remove_file(&path);
            }
        }
        let entry = Recorded { sha256, bytes, url };
        digests
            .by_file
            .entry(remote.mirror_path.to_string())
            .or_insert_with(|| entry.clone());
        recorded.push(entry);
    }
    let installed = Installed {
        source: source.name.to_string(),
        files,
        downloads: recorded,
    };
    // Swap the staged files in: first forget the old install, then move, then mark.
    mkdir(&dir)?;
    let marker = dir.join(MARKER);
    if marker.exists() {
        std::fs::remove_file(&marker).map_err(|e| FetchError::io(&marker, e))?;
    }
    for file in &installed.files {
        let (from, to) = (staging.join(file), dir.join(file));
        if to.is_dir() {
            std::fs::remove_dir_all(&to).map_err(|e| FetchError::io(&to, e))?;
        }
        std::fs::rename(&from, &to).map_err(|e| FetchError::io(&to, e))?;
    }
    let _ = std::fs::remove_dir_all(&staging);
    digests.write(&opts.data_dir)?;
    let text = serde_json::to_string_pretty(&installed).expect("marker serializes");
    write_atomic(&marker, text.as_bytes())?;
    Ok(Fetched {
        dir,
        installed,
        already_present: false,
    })
}

fn mkdir(dir: &Path) -> Result<(), FetchError> {
    std::fs::create_dir_all(dir).map_err(|e| FetchError::io(dir, e))
}

/// Writes `bytes` to a temp file beside `path`, then renames it over `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FetchError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| FetchError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| FetchError::io(path, e))
}

/// sha256 (hex) and length of a file.
pub fn sha256_file(path: &Path) -> Result<(String, u64), FetchError> {
    let mut file = std::fs::File::open(path).map_err(|e| FetchError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(|e| FetchError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((hex, bytes))
}

#[cfg(test)]
mod tests {
    use super::registry::{Remote, Unpack};
    use super::*;
    use sleuth_testkit::{MockServer, Reply};

    const BODY: &str = r#"{"pinned":true}"#;

    fn source(sha256: &'static str) -> Source {
        // Leaked once per test: sources are 'static in the registry.
        let remotes: &'static [Remote] = Box::leak(Box::new([Remote {
            url: "http://upstream.invalid/x.json",
            // The testkit server answers only its exact chat protocol paths.
            mirror_path: "v1/chat/completions",
            sha256: Some(sha256),
            unpack: Unpack::Plain("x.json"),
        }]));
        Source {
            name: "pinned",
            description: "test",
            size: "tiny",
            remotes,
            default_file: Some("x.json"),
        }
    }

    fn run(source: &Source, dir: &Path, origin: &str) -> Result<Fetched, FetchError> {
        let mut opts = FetchOptions::new(dir.to_path_buf());
        opts.mirror = Some(origin.to_string());
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(fetch(source, &opts, &Quiet))
    }

    #[test]
    fn a_pinned_digest_is_checked_on_the_first_fetch() {
        let server = MockServer::spawn(|_| Reply::Json(serde_json::from_str(BODY).unwrap()));
        let dir = tempfile::tempdir().unwrap();
        let wrong = source("0000000000000000000000000000000000000000000000000000000000000000");
        let err = run(&wrong, dir.path(), &server.origin()).unwrap_err();
        assert!(
            matches!(&err, FetchError::Digest { why, .. } if why.contains("pinned")),
            "{err}"
        );
        assert!(installed(&wrong, dir.path()).is_none());
        assert!(!dir.path().join(".downloads/completions.part").exists());
        assert!(
            !dir.path().join("digests.json").exists(),
            "nothing recorded"
        );

        let (right, _) = {
            let tmp = dir.path().join("body");
            std::fs::write(&tmp, BODY).unwrap();
            sha256_file(&tmp).unwrap()
        };
        let right = source(Box::leak(right.into_boxed_str()));
        let fetched = run(&right, dir.path(), &server.origin()).unwrap();
        assert_eq!(
            std::fs::read_to_string(fetched.dir.join("x.json")).unwrap(),
            BODY
        );
        assert!(installed(&right, dir.path()).is_some());
        assert_eq!(
            default_file(Dataset::Jsonl, dir.path())
                .unwrap_err()
                .to_string(),
            "--dataset jsonl needs --data FILE (there is nothing to fetch for it)"
        );
    }
}
