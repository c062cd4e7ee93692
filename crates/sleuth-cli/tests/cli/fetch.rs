//! `sleuth data fetch` against a real HTTP server on 127.0.0.1 serving small archives in
//! exactly the upstream formats (a JSON array for HotpotQA, a zip with a release folder
//! and `__MACOSX` junk for MuSiQue and 2Wiki, a tar.bz2 of bz2 JSON Lines for the
//! Wikipedia abstracts), built here from real benchmark rows. Also the failure modes:
//! a connection dropped mid-file, a server without range support, a changed upstream
//! file, a web page instead of the file, and a half download that must not look
//! finished.

use crate::fetch_server::{Behaviour, FileServer};
use crate::util;
use serde_json::{json, Value};
use std::io::{Cursor, Write};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `sleuth` with its data directory and mirror set (and nothing else inherited
/// that could point it elsewhere).
pub(crate) fn sleuth_in(data_dir: &Path, mirror: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(args)
        .env("SLEUTH_DATA_DIR", data_dir)
        .env_remove("SLEUTH_HOME")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("SLEUTH_NO_CACHE", "true");
    match mirror {
        Some(m) => cmd.env("SLEUTH_DATA_MIRROR", m),
        None => cmd.env_remove("SLEUTH_DATA_MIRROR"),
    };
    cmd.output().expect("run sleuth")
}

fn ok_in(data_dir: &Path, mirror: Option<&str>, args: &[&str]) -> String {
    let o = sleuth_in(data_dir, mirror, args);
    assert!(
        o.status.success(),
        "sleuth {args:?} failed:\n{}\n{}",
        util::stdout(&o),
        util::stderr(&o)
    );
    util::stdout(&o)
}

fn lines(path: &Path, n: usize) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take(n)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The official HotpotQA dev file shape: one JSON array.
fn hotpot_array(n: usize) -> Vec<u8> {
    serde_json::to_vec(&lines(&util::hotpot(), n)).unwrap()
}

pub(crate) fn zip(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

pub(crate) fn bz2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `musique_v1.0.zip`: `data/*.jsonl` plus the macOS resource forks the release carries.
fn musique_zip() -> Vec<u8> {
    let rows = lines(&util::musique(), 5);
    let ans: String = rows.iter().map(|r| format!("{r}\n")).collect();
    let mut unanswerable = rows[0].clone();
    unanswerable["id"] = json!("2hop__unanswerable_1");
    unanswerable["answerable"] = json!(false);
    let full = format!("{ans}{unanswerable}\n");
    zip(&[
        ("data/musique_ans_v1.0_dev.jsonl", ans.into_bytes()),
        ("data/musique_full_v1.0_dev.jsonl", full.into_bytes()),
        (
            "__MACOSX/data/._musique_ans_v1.0_dev.jsonl",
            b"\0\x05\x16\x07junk".to_vec(),
        ),
    ])
}

/// `data_ids_april7.zip`: dev.json (a JSON array) and id_aliases.json (JSON Lines).
fn twowiki_zip() -> (Vec<u8>, Value) {
    let rows = lines(&util::twowiki(), 4);
    let first = rows[0].clone();
    let aliases = format!(
        "{}\n{}\n",
        json!({"Q_id": first["answer_id"], "aliases": ["An Alias Of The Answer"], "demonyms": []}),
        json!({"Q_id": "Q0", "aliases": [], "demonyms": ["Nobodian"]})
    );
    let bytes = zip(&[
        (
            "data_ids_april7/dev.json",
            serde_json::to_vec(&rows).unwrap(),
        ),
        ("data_ids_april7/id_aliases.json", aliases.into_bytes()),
        ("data_ids_april7/train.json", b"[]".to_vec()),
    ]);
    (bytes, first)
}

/// The abstracts dump: a tar.bz2 of folders of bz2 JSON Lines, one article a line.
fn wiki_tar_bz2() -> Vec<u8> {
    let article = |id: u64, title: &str, text: &[&str]| {
        json!({"id": id.to_string(), "url": format!("https://en.wikipedia.org/wiki?curid={id}"),
               "title": title, "text": text, "charoffset": [],
               "text_with_links": text, "charoffset_with_links": []})
        .to_string()
    };
    let wiki_00 = [
        article(
            12,
            "Anarchism",
            &[
                "Anarchism is a political philosophy.",
                " It rejects rulers.",
            ],
        ),
        article(25, "Empty page", &[]),
        article(39, "Albedo", &["Albedo is the measure of reflection."]),
    ]
    .join("\n");
    let wiki_01 = article(290, "A", &["A is the first letter.", " It is a vowel."]);
    let mut tar = tar::Builder::new(Vec::new());
    for (name, text) in [("AA/wiki_00.bz2", wiki_00), ("AB/wiki_00.bz2", wiki_01)] {
        let data = bz2(format!("{text}\n").as_bytes());
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, data.as_slice()).unwrap();
    }
    bz2(&tar.into_inner().unwrap())
}

fn serve_all(server: &FileServer) {
    server.put("hotpotqa/hotpot_dev_distractor_v1.json", hotpot_array(3));
    server.put("hotpotqa/hotpot_dev_fullwiki_v1.json", hotpot_array(2));
    server.put("musique/musique_v1.0.zip", musique_zip());
    server.put("2wiki/data_ids_april7.zip", twowiki_zip().0);
    server.put(
        "hotpotqa-wiki/enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2",
        wiki_tar_bz2(),
    );
}

fn stats(dir: &Path, dataset: &str) -> Value {
    let out = ok_in(
        dir,
        None,
        &["data", "stats", "--dataset", dataset, "--json"],
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn fetches_all_four_and_commands_need_no_data_path() {
    let server = FileServer::start(Behaviour {
        ranges: true,
        ..Behaviour::default()
    });
    serve_all(&server);
    let dir = tempfile::tempdir().unwrap();
    let mirror = server.url();
    let out = ok_in(
        dir.path(),
        Some(&mirror),
        &[
            "data",
            "fetch",
            "hotpotqa",
            "musique",
            "2wiki",
            "hotpotqa-wiki",
        ],
    );
    for file in [
        "hotpotqa/hotpot_dev_distractor_v1.json",
        "hotpotqa/hotpot_dev_fullwiki_v1.json",
        "musique/musique_ans_v1.0_dev.jsonl",
        "musique/musique_full_v1.0_dev.jsonl",
        "2wiki/dev.json",
        "2wiki/id_aliases.json",
        "hotpotqa-wiki/abstracts",
    ] {
        assert!(out.contains(file), "{file} not reported in:\n{out}");
        assert!(dir.path().join(file).exists(), "{file}");
    }
    // Archives are deleted once unpacked; no .part files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join(".downloads"))
        .unwrap()
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // `--dataset` alone now finds the installed dev set.
    assert_eq!(stats(dir.path(), "hotpotqa")["questions"], 3);
    assert_eq!(stats(dir.path(), "musique")["questions"], 5);
    assert_eq!(stats(dir.path(), "2wiki")["questions"], 4);
    // The full MuSiQue file's unanswerable question is left out, as the official
    // answer metrics leave it out.
    let full = dir.path().join("musique/musique_full_v1.0_dev.jsonl");
    let s: Value = serde_json::from_str(&ok_in(
        dir.path(),
        None,
        &["data", "stats", "--data", full.to_str().unwrap(), "--json"],
    ))
    .unwrap();
    assert_eq!(s["questions"], 5);

    // The Wikipedia dump becomes a corpus: empty abstracts left out, sentences kept.
    let corpus = dir.path().join("wiki.jsonl");
    let out = ok_in(
        dir.path(),
        None,
        &[
            "data",
            "corpus",
            "--dataset",
            "hotpotqa-wiki",
            "--out",
            corpus.to_str().unwrap(),
        ],
    );
    assert!(out.contains("read 4 articles from 2 files"), "{out}");
    assert!(out.contains("wrote 3 paragraphs"), "{out}");
    let docs: Vec<Value> = std::fs::read_to_string(&corpus)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs[0]["title"], "Anarchism");
    assert_eq!(
        docs[0]["text"],
        "Anarchism is a political philosophy. It rejects rulers."
    );
    assert_eq!(docs[2]["id"], "0000002");
    assert_eq!(docs[2]["sentences"].as_array().unwrap().len(), 2);

    // A second fetch downloads nothing.
    let before = server.log().len();
    let o = sleuth_in(dir.path(), Some(&mirror), &["data", "fetch", "musique"]);
    assert!(
        util::stderr(&o).contains("already installed"),
        "{}",
        util::stderr(&o)
    );
    assert_eq!(server.log().len(), before);
    // --list shows the state and the upstream URL.
    let list = ok_in(dir.path(), None, &["data", "fetch", "--list"]);
    assert!(list.contains("data_ids_april7.zip"), "{list}");
    assert!(list.contains("installed]"), "{list}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn dropped_connection_resumes_with_a_range_request() {
    let server = FileServer::start(Behaviour {
        ranges: true,
        drop_after: Some((1000, 1)),
        ..Behaviour::default()
    });
    serve_all(&server);
    let dir = tempfile::tempdir().unwrap();
    let o = sleuth_in(
        dir.path(),
        Some(&server.url()),
        &["data", "fetch", "hotpotqa"],
    );
    assert!(o.status.success(), "{}", util::stderr(&o));
    let log = server.log();
    assert_eq!(log[0].1, None);
    assert_eq!(log[1].1.as_deref(), Some("bytes=1000-"), "{log:?}");
    assert!(
        util::stderr(&o).contains("resuming"),
        "{}",
        util::stderr(&o)
    );
    let installed =
        std::fs::read(dir.path().join("hotpotqa/hotpot_dev_distractor_v1.json")).unwrap();
    assert_eq!(installed, hotpot_array(3));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn server_without_ranges_restarts_the_file() {
    let server = FileServer::start(Behaviour {
        ranges: false,
        drop_after: Some((700, 1)),
        ..Behaviour::default()
    });
    serve_all(&server);
    let dir = tempfile::tempdir().unwrap();
    let o = sleuth_in(dir.path(), Some(&server.url()), &["data", "fetch", "2wiki"]);
    let err = util::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("does not resume downloads; starting over"),
        "{err}"
    );
    assert_eq!(server.log()[1].1.as_deref(), Some("bytes=700-"));
    assert_eq!(stats(dir.path(), "2wiki")["questions"], 4);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn half_download_never_looks_installed_and_the_next_fetch_resumes() {
    let server = FileServer::start(Behaviour {
        ranges: true,
        drop_after: Some((500, 100)),
        ..Behaviour::default()
    });
    serve_all(&server);
    let dir = tempfile::tempdir().unwrap();
    let o = sleuth_in(
        dir.path(),
        Some(&server.url()),
        &["data", "fetch", "musique"],
    );
    let err = util::stderr(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("run the same command again to resume"),
        "{err}"
    );
    assert!(!dir.path().join("musique").exists());
    // Not installed: the command to run is in the error, for stats as for eval.
    let o = sleuth_in(dir.path(), None, &["data", "stats", "--dataset", "musique"]);
    assert!(!o.status.success());
    let err = util::stderr(&o);
    assert!(err.contains("run `sleuth data fetch musique`"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let o = sleuth_in(
        dir.path(),
        None,
        &[
            "eval",
            "--dataset",
            "musique",
            "--methods",
            "react",
            "--model",
            "scripted:/x.json",
            "--out",
            "/tmp/never",
        ],
    );
    assert!(
        util::stderr(&o).contains("sleuth data fetch musique"),
        "{}",
        util::stderr(&o)
    );

    // The mirror recovers: the next fetch asks only for the bytes it lacks.
    let kept = std::fs::metadata(dir.path().join(".downloads/musique_v1.0.zip.part"))
        .unwrap()
        .len();
    assert!(kept >= 500, "{kept}");
    server.set(Behaviour {
        ranges: true,
        ..Behaviour::default()
    });
    ok_in(
        dir.path(),
        Some(&server.url()),
        &["data", "fetch", "musique"],
    );
    let last = server.log().last().unwrap().clone();
    assert_eq!(last.1, Some(format!("bytes={kept}-")));
    assert_eq!(stats(dir.path(), "musique")["questions"], 5);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn changed_upstream_file_is_refused_and_the_install_kept() {
    let server = FileServer::start(Behaviour {
        ranges: true,
        ..Behaviour::default()
    });
    serve_all(&server);
    let dir = tempfile::tempdir().unwrap();
    ok_in(
        dir.path(),
        Some(&server.url()),
        &["data", "fetch", "hotpotqa"],
    );
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("digests.json")).unwrap()).unwrap();
    let digest = recorded["hotpotqa/hotpot_dev_distractor_v1.json"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(digest.len(), 64);

    server.put("hotpotqa/hotpot_dev_distractor_v1.json", hotpot_array(2));
    let o = sleuth_in(
        dir.path(),
        Some(&server.url()),
        &["data", "fetch", "hotpotqa", "--force"],
    );
    let all = util::stderr(&o);
    assert!(!o.status.success());
    // One error line says it all (the lines before it are download progress).
    let err = all.lines().last().unwrap();
    assert!(err.starts_with("error: "), "{all}");
    assert!(err.contains(&format!("expected {digest}")), "{all}");
    assert!(err.contains("changed upstream"), "{all}");
    // The old install is untouched and still counts as installed.
    assert_eq!(stats(dir.path(), "hotpotqa")["questions"], 3);
    assert!(std::fs::read_dir(dir.path().join(".downloads"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn web_page_instead_of_the_file_is_an_error() {
    let server = FileServer::start(Behaviour {
        html: true,
        ..Behaviour::default()
    });
    serve_all(&server);
    let dir = tempfile::tempdir().unwrap();
    let o = sleuth_in(dir.path(), Some(&server.url()), &["data", "fetch", "2wiki"]);
    let err = util::stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("web page instead of the file"), "{err}");
    assert!(err.contains("--from FILE"), "{err}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn from_a_file_downloaded_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let zip_path = dir.path().join("musique_v1.0.zip");
    std::fs::write(&zip_path, musique_zip()).unwrap();
    let data = dir.path().join("data");
    ok_in(
        &data,
        None,
        &[
            "data",
            "fetch",
            "musique",
            "--from",
            zip_path.to_str().unwrap(),
        ],
    );
    assert!(zip_path.exists(), "the user's file is left alone");
    assert_eq!(stats(&data, "musique")["questions"], 5);
    let o = sleuth_in(&data, None, &["data", "fetch", "nosuch"]);
    assert!(
        util::stderr(&o).contains(
            "unknown dataset `nosuch` (fetchable: hotpotqa, musique, 2wiki, hotpotqa-wiki)"
        ),
        "{}",
        util::stderr(&o)
    );
}

#[test]
fn an_experiment_over_missing_data_fails_even_in_a_dry_run() {
    let recipe = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/nudge-sweep.toml");
    let dir = tempfile::tempdir().unwrap();
    let o = sleuth_in(
        dir.path(),
        None,
        &[
            "experiment",
            recipe.to_str().unwrap(),
            "--model",
            "scripted:x",
            "--dry-run",
            "--data-root",
            "/nonexistent",
        ],
    );
    let err = util::stderr(&o);
    assert!(!o.status.success(), "{}", util::stdout(&o));
    assert!(
        err.contains("musique is not installed in /nonexistent"),
        "{err}"
    );
    assert!(err.contains("`sleuth data fetch musique`"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// Offline (nothing answers: here a closed loopback port, as a failed DNS lookup also
/// gives a connect error): the tries say "trying again", never "resuming", and the
/// error names the two ways to go on without the network.
#[test]
fn an_unreachable_server_says_offline_and_how_to_install_by_hand() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let dir = tempfile::tempdir().unwrap();
    let o = sleuth_in(dir.path(), Some(&url), &["data", "fetch", "hotpotqa"]);
    assert!(!o.status.success());
    let err = util::stderr(&o);
    assert!(err.contains("cannot reach the server"), "{err}");
    assert!(err.contains("trying again"), "{err}");
    assert!(!err.contains("resuming"), "{err}");
    assert!(err.contains("offline"), "{err}");
    assert!(
        err.contains("--from FILE") && err.contains("--data FILE"),
        "{err}"
    );
}
