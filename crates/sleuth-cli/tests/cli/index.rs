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
