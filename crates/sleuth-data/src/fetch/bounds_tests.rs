//! The bounds of a fetch on a tiny source: a body past the download bound (announced
//! or endless) and an archive inflating past the unpacked bound are stopped, their
//! files deleted, and nothing installed.

use super::registry::{Remote, Source, Unpack};
use super::*;
use std::io::{BufRead, BufReader, Write};

fn tiny(unpack: Unpack) -> Source {
    let remotes: &'static [Remote] = Box::leak(Box::new([Remote {
        url: "http://upstream.invalid/x",
        mirror_path: "x/file",
        sha256: None,
        unpack,
        bytes: 100,
        max_bytes: 1000,
    }]));
    Source {
        name: "tiny",
        description: "test",
        size: "tiny",
        remotes,
        default_file: None,
        unpacked: 100,
        max_unpacked: 1000,
        checks: &[],
    }
}

fn fetch_with(source: &Source, dir: &Path, opts: impl FnOnce(&mut FetchOptions)) -> FetchError {
    let mut o = FetchOptions::new(dir.to_path_buf());
    o.mirror = None;
    opts(&mut o);
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(fetch(source, &o, &Quiet))
        .unwrap_err()
}

/// A server answering every request with `head` and then `body` forever (or once).
fn server(head: &'static str, body: Vec<u8>, endless: bool) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let body = body.clone();
            std::thread::spawn(move || {
                let mut out = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let _ = out.write_all(head.as_bytes());
                while out.write_all(&body).is_ok() && endless {}
            });
        }
    });
    url
}

#[test]
fn a_download_past_its_bound_is_stopped_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let source = tiny(Unpack::Plain("file"));
    let announced = server(
        "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n",
        vec![b'x'; 5000],
        false,
    );
    let endless = server(
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
        vec![b'x'; 300],
        true,
    );
    for (origin, found) in [
        (announced, "announced 5000 bytes"),
        (endless, "ran past 1000 bytes"),
    ] {
        let e = fetch_with(&source, dir.path(), |o| o.mirror = Some(origin));
        assert!(
            matches!(&e, FetchError::TooLarge { limit: 1000, .. }),
            "{e}"
        );
        assert!(e.to_string().contains(found), "{e}");
        assert!(!dir.path().join(".downloads/file.part").exists());
        assert!(installed(&source, dir.path()).is_none());
    }
}

#[cfg(feature = "archives")]
#[test]
fn an_archive_inflating_past_its_bound_is_stopped_and_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let source = tiny(Unpack::Zip(&[("big.json", "big.json")]));
    let bomb = dir.path().join("bomb.zip");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&bomb).unwrap());
    w.start_file("big.json", zip::write::SimpleFileOptions::default())
        .unwrap();
    w.write_all(&vec![b' '; 100_000]).unwrap();
    w.finish().unwrap();
    let data = dir.path().join("data");
    let e = fetch_with(&source, &data, |o| o.from = vec![bomb.clone()]);
    assert!(
        matches!(&e, FetchError::TooLarge { limit: 1000, .. }),
        "{e}"
    );
    assert!(!data.join(".tiny.staging").exists(), "staging removed");
    assert!(bomb.exists(), "the user's file is kept");
}

/// A lean build (no `archives` feature) refuses a zip download by naming the feature,
/// and installs nothing; the user's file is kept.
#[cfg(not(feature = "archives"))]
#[test]
fn a_build_without_archives_refuses_a_zip_and_names_the_feature() {
    let dir = tempfile::tempdir().unwrap();
    let source = tiny(Unpack::Zip(&[("dev.json", "dev.json")]));
    let zip = dir.path().join("dev.zip");
    std::fs::write(&zip, b"PK\x05\x06 not read").unwrap();
    let data = dir.path().join("data");
    let e = fetch_with(&source, &data, |o| o.from = vec![zip.clone()]);
    assert!(matches!(&e, FetchError::ArchivesNotBuilt(_)), "{e}");
    assert!(e.to_string().contains("cargo feature `archives`"), "{e}");
    assert!(installed(&source, &data).is_none());
    assert!(!data.join(".tiny.staging").exists(), "staging removed");
    assert!(zip.exists(), "the user's file is kept");
}
