//! Classes 10-13: `data fetch` and `data corpus` against hostile archives and mirrors.
//! No link is followed out of the data or around in it, disk use is bounded and
//! cleaned up with the reason said, wrong content installs nothing (and pins no
//! digest), and two fetches of one dataset never race.

use super::{finish_within, limit_file_size};
use crate::fetch::{bz2, sleuth_in, zip};
use crate::fetch_server::{Behaviour, FileServer};
use crate::util::{stderr, stdout};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const WIKI: &str = "hotpotqa-wiki/enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2";
const DISTRACTOR: &str = "hotpotqa/hotpot_dev_distractor_v1.json";
const FULLWIKI: &str = "hotpotqa/hotpot_dev_fullwiki_v1.json";

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/benchmarks")
        .join(rel)
}

/// The fixture's HotpotQA questions as the official file has them: one JSON array.
fn hotpot_array() -> Vec<u8> {
    let text = std::fs::read_to_string(fixture("hotpotqa/dev_distractor_sample.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    serde_json::to_vec(&rows).unwrap()
}

/// One bz2 file of JSON Lines articles.
fn articles(titles: &[&str]) -> Vec<u8> {
    let lines: String = titles
        .iter()
        .map(|t| {
            format!(
                "{}\n",
                json!({"id": "1", "title": t, "text": [format!("{t} is a page.")]})
            )
        })
        .collect();
    bz2(lines.as_bytes())
}

/// A tar.bz2 of `(name, bytes)` files and `(name, target)` symbolic links.
fn tar_bz2(files: &[(&str, Vec<u8>)], links: &[(&str, &str)]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append_data(&mut h, name, data.as_slice()).unwrap();
    }
    for (name, target) in links {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        h.set_mode(0o777);
        tar.append_link(&mut h, name, target).unwrap();
    }
    bz2(&tar.into_inner().unwrap())
}

fn sleuth_cmd(data_dir: &Path, mirror: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = super::command(args, &[("SLEUTH_NO_CACHE", "true")]);
    cmd.env("SLEUTH_DATA_DIR", data_dir)
        .env_remove("SLEUTH_HOME");
    if let Some(m) = mirror {
        cmd.env("SLEUTH_DATA_MIRROR", m);
    }
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd
}

fn links_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            out.push(e.path());
        } else if kind.is_dir() {
            out.extend(links_below(&e.path()));
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn data_corpus_follows_no_link_out_of_the_dump_or_around_in_it() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    // A dump folder as an archive could leave it: loops, and links to files outside.
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("wiki_99.bz2"), articles(&["Secret"])).unwrap();
    let dump = tmp.path().join("abstracts");
    std::fs::create_dir_all(dump.join("AA")).unwrap();
    std::fs::write(
        dump.join("AA/wiki_00.bz2"),
        articles(&["Anarchism", "Albedo"]),
    )
    .unwrap();
    symlink(".", dump.join("AA/loop")).unwrap();
    symlink("..", dump.join("AA/up")).unwrap();
    symlink("AA", dump.join("AB")).unwrap();
    symlink(outside.join("wiki_99.bz2"), dump.join("AA/wiki_01.bz2")).unwrap();
    symlink(&outside, dump.join("AC")).unwrap();
    let corpus = tmp.path().join("corpus.jsonl");
    let args = [
        "data",
        "corpus",
        "--dataset",
        "hotpotqa-wiki",
        "--data",
        dump.to_str().unwrap(),
        "--out",
        corpus.to_str().unwrap(),
    ];
    let o = finish_within(
        sleuth_cmd(tmp.path(), None, &args).spawn().unwrap(),
        Duration::from_secs(60),
        "data corpus over looping links",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&corpus).unwrap();
    assert_eq!(text.lines().count(), 2, "each article once: {text}");
    assert!(!text.contains("Secret"), "nothing from outside the dump");
    assert!(
        stderr(&o).contains("skipped 5 symbolic links"),
        "{}",
        stderr(&o)
    );

    // An archive with such links installs without them.
    let server = FileServer::start(Behaviour::default());
    let archive = tar_bz2(
        &[("AA/wiki_00.bz2", articles(&["Anarchism"]))],
        &[
            ("AA/loop", "."),
            ("AB", "AA"),
            ("AA/wiki_01.bz2", "/etc/passwd"),
        ],
    );
    server.put(WIKI, archive);
    let data = tmp.path().join("data");
    let o = sleuth_in(
        &data,
        Some(&server.url()),
        &["data", "fetch", "hotpotqa-wiki"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped AA/loop"), "{}", stderr(&o));
    assert_eq!(
        links_below(&data.join("hotpotqa-wiki")),
        Vec::<PathBuf>::new()
    );
}

#[cfg(unix)]
#[test]
fn fetch_disk_use_is_bounded_and_a_full_disk_is_cleaned_up_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let server = FileServer::start(Behaviour::default());
    server.put(DISTRACTOR, hotpot_array());
    server.put(FULLWIKI, hotpot_array());
    let leftovers = |data: &Path| -> Vec<String> {
        super::files_below(data)
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .filter(|p| p.ends_with(".part") || p.contains(".staging"))
            .collect()
    };
    let not_installed = |data: &Path| !data.join("hotpotqa/.installed.json").exists();

    // A mirror announcing a terabyte is not read.
    server.set(Behaviour {
        announce: Some(1 << 40),
        ..Behaviour::default()
    });
    let data = tmp.path().join("announced");
    let o = sleuth_in(&data, Some(&server.url()), &["data", "fetch", "hotpotqa"]);
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains("announced 1099511627776 bytes"),
        "{err}"
    );
    assert!(err.contains("bytes sleuth allows"), "{err}");
    assert!(leftovers(&data).is_empty() && not_installed(&data));

    // An endless body on a disk with 2 MB of room: stopped, deleted, the cause said.
    server.set(Behaviour {
        endless: true,
        ..Behaviour::default()
    });
    let data = tmp.path().join("endless");
    let mut cmd = sleuth_cmd(&data, Some(&server.url()), &["data", "fetch", "hotpotqa"]);
    limit_file_size(&mut cmd, 2 << 20);
    let o = finish_within(
        cmd.spawn().unwrap(),
        Duration::from_secs(60),
        "an endless download",
    );
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("File too large") && err.contains("partial download was deleted"),
        "{err}"
    );
    assert!(leftovers(&data).is_empty(), "{:?}", leftovers(&data));
    assert!(not_installed(&data));

    // A 4 KB tar.bz2 that unpacks to 16 MB, on the same small disk.
    let bomb = tar_bz2(&[("AA/wiki_00.bz2", vec![0u8; 16 << 20])], &[]);
    assert!(bomb.len() < 8 << 10, "{} bytes", bomb.len());
    server.set(Behaviour::default());
    server.put(WIKI, bomb);
    let data = tmp.path().join("bomb");
    let mut cmd = sleuth_cmd(
        &data,
        Some(&server.url()),
        &["data", "fetch", "hotpotqa-wiki"],
    );
    limit_file_size(&mut cmd, 2 << 20);
    let o = finish_within(cmd.spawn().unwrap(), Duration::from_secs(60), "a tar bomb");
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("File too large") && err.contains("unpacked files were deleted"),
        "{err}"
    );
    assert!(leftovers(&data).is_empty(), "{:?}", leftovers(&data));
    assert!(!data.join("hotpotqa-wiki/.installed.json").exists());
}

#[cfg(unix)]
#[test]
fn a_wrong_archive_installs_nothing_and_pins_no_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let musique = std::fs::read(fixture("musique/dev_sample.jsonl")).unwrap();
    let write = |name: &str, bytes: Vec<u8>| {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let html = b"<html><body>Sign in to download</body></html>".to_vec();
    let pages = write(
        "pages.zip",
        zip(&[
            ("data/musique_ans_v1.0_dev.jsonl", html.clone()),
            ("data/musique_full_v1.0_dev.jsonl", html),
        ]),
    );
    let garbage = write(
        "garbage.zip",
        b"PK\x03\x04 not really a zip at all".to_vec(),
    );
    let links = write("links.zip", {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default();
        w.add_symlink("data/musique_ans_v1.0_dev.jsonl", "/etc/passwd", o)
            .unwrap();
        w.add_symlink("data/musique_full_v1.0_dev.jsonl", "/etc/passwd", o)
            .unwrap();
        w.finish().unwrap().into_inner()
    });
    let genuine = write(
        "genuine.zip",
        zip(&[
            ("data/musique_ans_v1.0_dev.jsonl", musique.clone()),
            ("data/musique_full_v1.0_dev.jsonl", musique.clone()),
        ]),
    );
    let fetch = |file: &Path, force: bool| {
        let mut args = vec!["data", "fetch", "musique", "--from", file.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        sleuth_in(&data, None, &args)
    };
    for (file, says) in [
        (&pages, "it starts with \"<html><body>Sign in"),
        (&garbage, "garbage.zip"),
        (&links, "symbolic link"),
    ] {
        let o = fetch(file, false);
        let err = stderr(&o);
        assert!(!o.status.success(), "{}: {err}", file.display());
        assert!(err.contains(says), "{}: {err}", file.display());
        assert!(!data.join("musique/.installed.json").exists());
        let digests = std::fs::read_to_string(data.join("digests.json")).unwrap_or_default();
        assert!(!digests.contains("musique"), "no digest pinned: {digests}");
        assert!(file.exists(), "the user's file is kept");
    }
    // The genuine archive then installs, and is not taken for a changed upstream file.
    let o = fetch(&genuine, false);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats = sleuth_in(
        &data,
        None,
        &["data", "stats", "--dataset", "musique", "--json"],
    );
    assert!(stats.status.success(), "{}", stderr(&stats));

    // Another archive than the pinned one: refused, the user's file left as it is.
    let other = write(
        "other.zip",
        zip(&[
            ("data/musique_ans_v1.0_dev.jsonl", musique.clone()),
            (
                "data/musique_full_v1.0_dev.jsonl",
                [musique.as_slice(), b"\n"].concat(),
            ),
        ]),
    );
    let o = fetch(&other, true);
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains("the file you gave was left as it is"),
        "{err}"
    );
    assert!(
        !err.contains("deleted") && !err.contains("changed upstream"),
        "{err}"
    );
    assert!(other.exists());
}

#[test]
fn two_fetches_of_one_dataset_at_once_both_leave_it_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let server = FileServer::start(Behaviour {
        slow: Some(Duration::from_millis(700)),
        ..Behaviour::default()
    });
    server.put(DISTRACTOR, hotpot_array());
    server.put(FULLWIKI, hotpot_array());
    let data = tmp.path().join("data");
    let children: Vec<_> = (0..2)
        .map(|_| {
            sleuth_cmd(&data, Some(&server.url()), &["data", "fetch", "hotpotqa"])
                .spawn()
                .unwrap()
        })
        .collect();
    let mut logs = String::new();
    for child in children {
        let o = finish_within(child, Duration::from_secs(60), "a fetch");
        assert!(o.status.success(), "{}", stderr(&o));
        // Whoever says it is done: it is.
        assert!(
            data.join("hotpotqa/.installed.json").exists(),
            "{}",
            stderr(&o)
        );
        logs += &(stdout(&o) + &stderr(&o));
    }
    assert!(logs.contains("waiting for it to finish"), "{logs}");
    let stats = sleuth_in(
        &data,
        None,
        &["data", "stats", "--dataset", "hotpotqa", "--json"],
    );
    assert!(stats.status.success(), "{}", stderr(&stats));
    assert_eq!(
        server.log().len(),
        2,
        "each file downloaded once: {:?}",
        server.log()
    );
}
