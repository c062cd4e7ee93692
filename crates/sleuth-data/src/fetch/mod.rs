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
//!
//! What a fetch may do to the disk is bounded ([`limits`]): one fetch per dataset at a
//! time (a lock in the data directory), a free-space check before a download, a bound
//! on each download and on what it unpacks, no links created, and a failed write that
//! cleans up after itself. What it installs is checked first ([`validate`]): a wrong
//! archive installs nothing and records no digest.

#[cfg(feature = "archives")]
mod archives;
mod digests;
mod download;
mod error;
mod limits;
mod progress;
pub mod registry;
mod unpack;
mod validate;

#[cfg(test)]
mod bounds_tests;

use crate::knob::Knob;
pub use digests::{Digests, Recorded};
pub use error::FetchError;
use limits::{room_for, Staging};
pub use progress::{FetchProgress, Quiet};
pub use registry::{source, source_of, Content, Source, SOURCES};

use crate::{DataError, Dataset};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

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
            "{} needs {} (there is nothing to fetch for it)",
            Knob::Dataset.with(dataset),
            Knob::Data.with("FILE")
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
    let present = || {
        (!opts.force)
            .then(|| installed(source, &opts.data_dir))
            .flatten()
            .map(|installed| Fetched {
                dir: dir.clone(),
                installed,
                already_present: true,
            })
    };
    if let Some(done) = present() {
        return Ok(done);
    }
    if !opts.from.is_empty() && opts.from.len() != source.remotes.len() {
        return Err(FetchError::Archive {
            path: opts.from[0].clone(),
            message: format!(
                "{} needs {} file(s) for {}, in this order: {}",
                source.name,
                source.remotes.len(),
                Knob::From,
                source
                    .remotes
                    .iter()
                    .map(|r| r.mirror_path)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    mkdir(&opts.data_dir)?;
    // One fetch of a dataset at a time; one that waited finds it installed.
    let _lock = limits::lock_dataset(&opts.data_dir, source.name, progress).await?;
    if let Some(done) = present() {
        return Ok(done);
    }
    let downloads = opts.data_dir.join(".downloads");
    mkdir(&downloads)?;
    let staging = Staging::new(opts.data_dir.join(format!(".{}.staging", source.name)))?;
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
    let mut budget = unpack::Budget {
        written: 0,
        limit: source.max_unpacked,
    };
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
        let room = |n: u64| room_for(source, remote, n);
        let (path, from_local) = match opts.from.get(i) {
            Some(local) => (local.clone(), true),
            None => {
                let part = downloads.join(format!("{name}.part"));
                let bounds = download::Bounds {
                    max_bytes: remote.max_bytes,
                    expected: remote.bytes,
                    room: &room,
                    data_dir: &opts.data_dir,
                };
                download::download(&client, &url, &part, name, &bounds, progress).await?;
                (part, false)
            }
        };
        let (sha256, bytes) = sha256_file(&path)?;
        let discard = || {
            if !from_local {
                let _ = std::fs::remove_file(&path);
            }
        };
        let disposal = if from_local {
            "the file you gave was left as it is"
        } else {
            "the download was deleted"
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
                    disposal,
                });
            }
        } else if let Some(seen) = digests.by_file.get(remote.mirror_path) {
            if seen.sha256 != sha256 {
                discard();
                let why = if from_local {
                    "recorded at the first fetch in digests.json: this is not the file installed then; delete its entry there to accept this one"
                } else {
                    "recorded at the first fetch in digests.json: the file changed upstream; delete its entry there to accept the new one"
                };
                return Err(FetchError::Digest {
                    what,
                    expected: seen.sha256.clone(),
                    actual: sha256,
                    why,
                    disposal,
                });
            }
        }
        if from_local {
            limits::check_room(
                &opts.data_dir,
                room(bytes),
                limits::available(&opts.data_dir),
            )?;
        }
        progress.note(&format!(
            "{name}: sha256 {sha256} ({bytes} bytes); unpacking"
        ));
        let how = match (remote.unpack, from_local) {
            // Never move the user's own file: unpack a copy.
            (registry::Unpack::Plain(dest), true) => {
                let to = staging.path.join(dest);
                std::fs::copy(&path, &to).map_err(|e| FetchError::WriteFailed {
                    path: to.clone(),
                    cause: e,
                    cleaned: "the copy was deleted",
                })?;
                files.push(dest.to_string());
                None
            }
            (how, _) => Some(how),
        };
        if let Some(how) = how {
            let unpacked = unpack::unpack(&path, how, &staging.path, &mut budget, progress);
            if !from_local && path.exists() {
                let _ = std::fs::remove_file(&path);
            }
            files.extend(unpacked?);
        }
        let entry = Recorded { sha256, bytes, url };
        recorded.push((remote.mirror_path, entry));
    }
    // Before anything is installed or recorded: the files are what the dataset holds.
    let origin = match opts.from.as_slice() {
        [] => "the download".to_string(),
        from => from
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    validate::check(source, &staging.path, &origin)?;
    for (file, entry) in &recorded {
        digests
            .by_file
            .entry(file.to_string())
            .or_insert_with(|| entry.clone());
    }
    let installed = Installed {
        source: source.name.to_string(),
        files,
        downloads: recorded.into_iter().map(|(_, e)| e).collect(),
    };
    // Swap the staged files in: first forget the old install, then move, then mark.
    mkdir(&dir)?;
    let marker = dir.join(MARKER);
    if marker.exists() {
        std::fs::remove_file(&marker).map_err(|e| FetchError::io(&marker, e))?;
    }
    for file in &installed.files {
        let (from, to) = (staging.path.join(file), dir.join(file));
        if to.is_dir() {
            std::fs::remove_dir_all(&to).map_err(|e| FetchError::io(&to, e))?;
        }
        std::fs::rename(&from, &to).map_err(|e| FetchError::io(&to, e))?;
    }
    drop(staging);
    digests.write(&opts.data_dir)?;
    let text = serde_json::to_string_pretty(&installed).expect("marker serializes");
    write_atomic(&marker, text.as_bytes())?;
    Ok(Fetched {
        dir,
        installed,
        already_present: false,
    })
}

pub(super) fn mkdir(dir: &Path) -> Result<(), FetchError> {
    std::fs::create_dir_all(dir).map_err(|e| FetchError::io(dir, e))
}

/// Writes `bytes` over `path` through a synced temporary file ([`crate::atomic`]).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FetchError> {
    crate::atomic::write(path, bytes).map_err(|e| FetchError::io(path, e))
}

/// sha256 (hex) and length of a file.
pub fn sha256_file(path: &Path) -> Result<(String, u64), FetchError> {
    file_sha256(path).map_err(|e| FetchError::io(path, e))
}

/// sha256 (hex) and length of a file, read in 64 KiB pieces.
pub fn file_sha256(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf)?;
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
            bytes: 100,
            max_bytes: 1000,
        }]));
        Source {
            name: "pinned",
            description: "test",
            size: "tiny",
            remotes,
            default_file: Some("x.json"),
            unpacked: 100,
            max_unpacked: 1000,
            checks: &[],
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
            "dataset=jsonl needs data=FILE (there is nothing to fetch for it)"
        );
    }
}
