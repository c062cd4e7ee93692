//! Integration tests: `sleuth index build` and `sleuth index search` on a small corpus
//! written here.

use crate::util::{ok, sleuth, stderr};
use std::path::Path;

fn write_corpus(dir: &Path) -> std::path::PathBuf {
    let corpus = dir.join("corpus.jsonl");
    let lines = [
        r#"{"id":"1","title":"Charles Mingus","text":"Charles Mingus was a jazz bassist. He was born in Nogales.","sentences":["Charles Mingus was a jazz bassist."," He was born in Nogales."]}"#,
        r#"{"id":"2","title":"Nogales, Arizona","text":"Nogales is a city in Arizona."}"#,
        r#"{"id":"3","title":"Jazz","sentences":["Jazz is a music genre.","Jazz began in New Orleans."]}"#,
        r#"{"id":"4","title":"Tucson","text":"Tucson is the second largest city in Arizona."}"#,
    ];
    std::fs::write(&corpus, lines.join("\n") + "\n").unwrap();
    corpus
}

#[test]
fn build_then_search_and_explain() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_corpus(tmp.path());
    let out = tmp.path().join("idx");
    let summary = ok(&[
        "index",
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(summary.contains("paragraphs   4"), "{summary}");
    assert!(summary.contains("k1, b        0.9, 0.4"), "{summary}");

    let dir = out.to_str().unwrap();
    let text = ok(&["index", "search", dir, "jazz Arizona", "-k", "3"]);
    assert!(text.contains("query terms: jazz arizona"), "{text}");
    assert!(
        text.contains("1. ") && text.contains("[id 3] Jazz"),
        "{text}"
    );

    // The explained score is the sum of its term contributions, each idf * tf / (...).
    let json = ok(&["index", "search", dir, "jazz", "--explain", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["id"], "3", "tf 3 beats tf 1");
    let e = &hits[0]["explain"];
    let term = &e["terms"][0];
    assert_eq!(
        (term["tf"].as_u64(), term["df"].as_u64()),
        (Some(3), Some(2))
    );
    let idf = (1.0f64 + (4.0 - 2.0 + 0.5) / (2.0 + 0.5)).ln();
    assert!((term["idf"].as_f64().unwrap() - idf).abs() < 1e-9);
    let (dl, avgdl) = (e["dl"].as_f64().unwrap(), e["avgdl"].as_f64().unwrap());
    let by_hand = idf * 3.0 / (3.0 + 0.9 * (0.6 + 0.4 * dl / avgdl));
    assert!((e["score"].as_f64().unwrap() - by_hand).abs() < 1e-9);
    assert!((hits[0]["score"].as_f64().unwrap() - by_hand).abs() < 1e-5);

    let explained = ok(&["index", "search", dir, "Nogales", "--explain"]);
    assert!(
        explained.contains("idf = ln(1 + (N - df + 0.5) / (df + 0.5))"),
        "{explained}"
    );
    assert!(
        explained.contains("dl = ") && explained.contains("tf = "),
        "{explained}"
    );

    // Overriding b at search time changes scores.
    let b0 = ok(&["index", "search", dir, "jazz", "--json", "--b", "0"]);
    let v0: serde_json::Value = serde_json::from_str(&b0).unwrap();
    assert_ne!(v0["hits"][1]["score"], hits[1]["score"]);
}

#[test]
fn errors_are_one_clear_line() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = sleuth(&[
        "index",
        "search",
        tmp.path().join("nope").to_str().unwrap(),
        "x",
    ]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("no such index directory"),
        "{}",
        stderr(&missing)
    );

    let corpus = tmp.path().join("bad.jsonl");
    std::fs::write(
        &corpus,
        "{\"id\":\"1\",\"text\":\"fine\"}\n{\"id\":\"2\",\"title\":\"x\"}\n",
    )
    .unwrap();
    let bad = sleuth(&[
        "index",
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        tmp.path().join("i").to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("bad.jsonl:2:"), "{}", stderr(&bad));

    let out = tmp.path().join("idx");
    let corpus = write_corpus(tmp.path());
    ok(&[
        "index",
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    std::fs::write(out.join("index.bin"), b"garbage").unwrap();
    let corrupt = sleuth(&["index", "search", out.to_str().unwrap(), "jazz"]);
    assert!(!corrupt.status.success());
    assert!(
        stderr(&corrupt).contains("not a usable sleuth BM25 index"),
        "{}",
        stderr(&corrupt)
    );
}

fn build_index(dir: &Path) -> std::path::PathBuf {
    let corpus = write_corpus(dir);
    let out = dir.join("idx");
    ok(&[
        "index",
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

#[test]
fn check_passes_a_sound_index_and_catches_random_byte_flips() {
    use rand::{Rng, SeedableRng};
    let tmp = tempfile::tempdir().unwrap();
    let out = build_index(tmp.path());
    let dir = out.to_str().unwrap();
    let report = ok(&["index", "check", dir]);
    assert!(
        report.contains(": ok (4 paragraphs,") && report.contains("postings"),
        "{report}"
    );

    // 20 single-byte changes anywhere in either file; each is caught, by `check` at
    // the latest, and named as damage to that file.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    for trial in 0..20 {
        let name = if trial % 2 == 0 {
            "index.bin"
        } else {
            "docs.bin"
        };
        let file = out.join(name);
        let good = std::fs::read(&file).unwrap();
        let mut bad = good.clone();
        let at = rng.gen_range(0..bad.len());
        bad[at] ^= rng.gen_range(1..=255u8);
        std::fs::write(&file, &bad).unwrap();
        let o = sleuth(&["index", "check", dir]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{name} byte {at} not caught");
        assert!(
            err.contains("not a usable sleuth BM25 index") && err.contains(name),
            "{name} byte {at}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        std::fs::write(&file, &good).unwrap();
    }
    ok(&["index", "check", dir]);
}

#[test]
fn an_index_from_an_older_sleuth_asks_for_a_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let out = build_index(tmp.path());
    let file = out.join("index.bin");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    std::fs::write(&file, bytes).unwrap();
    for command in ["search", "check"] {
        let mut args = vec!["index", command, out.to_str().unwrap()];
        if command == "search" {
            args.push("jazz");
        }
        let o = sleuth(&args);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(
            err.contains("format version 2") && err.contains("`sleuth index build`"),
            "{err}"
        );
    }
}

#[test]
fn search_prints_hostile_titles_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus.jsonl");
    let line = serde_json::json!({
        "id": "7\u{1b}[2J",
        "title": "Jazz\u{1b}]0;pwned\u{7}",
        "text": "Jazz from New Orleans."
    });
    std::fs::write(&corpus, format!("{line}\n")).unwrap();
    let out = tmp.path().join("idx");
    ok(&[
        "index",
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = ok(&[
        "index",
        "search",
        out.to_str().unwrap(),
        "jazz",
        "--explain",
    ]);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(
        text.contains("[id 7\\u{1b}[2J] Jazz\\u{1b}]0;pwned\\u{7}"),
        "{text}"
    );
}
