//! Integration tests: `sleuth data stats` and `sleuth data corpus` on the real benchmark
//! subsets, plus the error paths (malformed line, unknown dataset, missing file).

use crate::util::{self, ok, sleuth, stderr};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

fn stats_json(dataset: &str, path: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "data",
        "stats",
        "--dataset",
        dataset,
        "--data",
        path.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&args)).expect("stats --json prints JSON")
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn stats_hotpotqa_counts_match_the_provenance() {
    let s = stats_json("hotpotqa", &util::hotpot(), &[]);
    assert_eq!(s["questions"], 396);
    assert_eq!(s["types"]["bridge"], 295);
    assert_eq!(s["types"]["comparison"], 101);
    assert_eq!(s["hops"]["2"], 396);
    assert_eq!(s["paragraphs"]["min"], 2);
    assert_eq!(s["paragraphs"]["max"], 10);
    assert_eq!(s["paragraphs"]["total"], 394 * 10 + 2 * 2);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn stats_musique_counts_hops_from_id_prefixes() {
    let s = stats_json("musique", &util::musique(), &[]);
    assert_eq!(s["questions"], 200);
    assert_eq!(s["hops"]["2"], 145);
    assert_eq!(s["hops"]["3"], 32);
    assert_eq!(s["hops"]["4"], 23);
    assert_eq!(s["types"]["3hop1"], 28);
    assert_eq!(s["types"]["4hop3"], 4);
    assert_eq!(s["paragraphs"]["total"], 4000);

    let three = stats_json("musique", &util::musique(), &["--hops", "3"]);
    assert_eq!(three["questions"], 32);
    assert_eq!(three["types"], serde_json::json!({"3hop1": 28, "3hop2": 4}));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn stats_twowiki_counts_types_and_hops() {
    let s = stats_json("2wiki", &util::twowiki(), &[]);
    assert_eq!(s["questions"], 657);
    assert_eq!(s["types"]["compositional"], 256);
    assert_eq!(s["types"]["bridge_comparison"], 172);
    assert_eq!(s["types"]["comparison"], 155);
    assert_eq!(s["types"]["inference"], 74);
    assert_eq!(s["hops"]["4"], 172);
    assert_eq!(s["hops"]["2"], 657 - 172);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn stats_table_is_readable() {
    let out = ok(&[
        "data",
        "stats",
        "--dataset",
        "musique",
        "--data",
        util::musique().to_str().unwrap(),
    ]);
    assert!(out.contains("questions               200"), "{out}");
    assert!(
        out.contains("hops                    2-hop 145, 3-hop 32, 4-hop 23"),
        "{out}"
    );
    assert!(
        out.contains("types                   2hop 145, 3hop1 28, 4hop1 18"),
        "{out}"
    );
}

/// Copies the first lines of a real file into a temp file, breaking line 3.
fn malformed_copy(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(util::hotpot()).unwrap();
    let mut lines: Vec<&str> = text.lines().take(4).collect();
    let truncated = &lines[2][..lines[2].len() / 2];
    lines[2] = truncated;
    let path = dir.join("broken.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn malformed_line_is_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = malformed_copy(dir.path());
    let o = sleuth(&[
        "data",
        "stats",
        "--dataset",
        "hotpotqa",
        "--data",
        path.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains(&format!("{}:3:", path.display())), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn unknown_dataset_is_a_one_line_error() {
    let o = sleuth(&[
        "data",
        "stats",
        "--dataset",
        "squad",
        "--data",
        util::hotpot().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("unknown dataset `squad`"), "{err}");
}

#[test]
fn missing_file_is_named() {
    let o = sleuth(&[
        "data",
        "stats",
        "--dataset",
        "hotpotqa",
        "--data",
        "/nonexistent/x.jsonl",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("data file /nonexistent/x.jsonl does not exist"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // Where the library reads the file itself, the OS cause appears once.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.jsonl");
    let o = sleuth(&[
        "data",
        "corpus",
        "--dataset",
        "hotpotqa",
        "--data",
        "/nonexistent/x.jsonl",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(
        err.trim_end(),
        "error: cannot read /nonexistent/x.jsonl: No such file or directory (os error 2)"
    );
}

// Issue 16, item 3: data that is not what it claims. Each class is an error that names
// the file and line, on one line, for every command that reads data.

/// Runs `data stats` and `score` on `path` (with `--dataset` when given) and returns
/// their stderr, asserting both failed with exactly one line.
fn refused(dataset: Option<&str>, path: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let predictions = dir.path().join("pred.json");
    std::fs::write(&predictions, r#"{"answer": {}}"#).unwrap();
    let mut errs = Vec::new();
    for cmd in [
        vec!["data", "stats"],
        vec!["score", "--predictions", predictions.to_str().unwrap()],
    ] {
        let mut args = cmd.clone();
        if let Some(d) = dataset {
            args.extend(["--dataset", d]);
        }
        args.extend(["--data", path.to_str().unwrap()]);
        let o = sleuth(&args);
        assert!(
            !o.status.success(),
            "{args:?} succeeded: {}",
            util::stdout(&o)
        );
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        errs.push(err);
    }
    assert_eq!(errs[0], errs[1], "stats and score disagree");
    errs.remove(0)
}

/// The first `n` real rows of `src` with `edit` applied to row `at`.
fn edited_copy(
    dir: &Path,
    src: &Path,
    n: usize,
    at: usize,
    edit: impl Fn(&mut Value),
) -> std::path::PathBuf {
    let mut rows: Vec<Value> = read_jsonl(src).into_iter().take(n).collect();
    edit(&mut rows[at]);
    let path = dir.join(src.file_name().unwrap());
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_line_missing_its_answer_is_refused_in_every_schema() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user.jsonl");
    std::fs::write(
        &user,
        "{\"id\": \"a\", \"question\": \"Q\", \"answer\": \"x\", \"paragraphs\": [{\"title\": \"T\", \"text\": \"t\"}]}\n\
         {\"id\": \"b\", \"question\": \"Q\", \"paragraphs\": [{\"title\": \"T\", \"text\": \"t\"}]}\n",
    )
    .unwrap();
    let cases = [
        (
            "hotpotqa",
            edited_copy(dir.path(), &util::hotpot(), 3, 1, |r| {
                r.as_object_mut().unwrap().remove("answer");
            }),
        ),
        (
            "musique",
            edited_copy(dir.path(), &util::musique(), 3, 1, |r| {
                r.as_object_mut().unwrap().remove("answer");
            }),
        ),
        (
            "2wiki",
            edited_copy(dir.path(), &util::twowiki(), 3, 1, |r| {
                r.as_object_mut().unwrap().remove("answer");
            }),
        ),
        ("jsonl", user),
    ];
    for (dataset, path) in &cases {
        for given in [Some(*dataset), None] {
            let err = refused(given, path);
            assert!(
                err.contains(&format!("{}:2:", path.display())),
                "{dataset}: {err}"
            );
            assert!(
                err.contains("missing field `answer`") || err.contains("no gold answer"),
                "{dataset}: {err}"
            );
        }
    }
}

#[test]
fn an_empty_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.jsonl", ""),
        ("blank.jsonl", "\n  \n"),
        ("array.json", "[]"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        for dataset in [Some("hotpotqa"), Some("musique"), None] {
            let err = refused(dataset, &path);
            assert!(
                err.contains(&format!(
                    "{}:1: the file holds no questions",
                    path.display()
                )),
                "{err}"
            );
        }
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_file_read_as_the_wrong_schema_is_refused_and_detected_without_dataset() {
    let err = refused(Some("hotpotqa"), &util::twowiki());
    assert!(
        err.contains(&format!(
            "{}:1: this is a 2wiki record",
            util::twowiki().display()
        )),
        "{err}"
    );
    assert!(err.contains("use --dataset 2wiki"), "{err}");
    let err = refused(Some("2wiki"), &util::hotpot());
    assert!(err.contains("this is a hotpotqa record"), "{err}");
    let err = refused(Some("jsonl"), &util::musique());
    assert!(err.contains("this is a musique record"), "{err}");
    let err = refused(Some("musique"), &util::hotpot());
    assert!(err.contains("this is a hotpotqa record"), "{err}");
    // Left out, the schema comes from the file: 2Wiki hop counts, not HotpotQA's.
    let s = stats_json_detected(&util::twowiki());
    assert_eq!(s["dataset"], "2wiki");
    assert_eq!(s["hops"]["4"], 172);
    let s = stats_json_detected(&util::musique());
    assert_eq!(s["dataset"], "musique");
    assert_eq!(s["questions"], 200);
}

fn stats_json_detected(path: &Path) -> Value {
    serde_json::from_str(&ok(&[
        "data",
        "stats",
        "--data",
        path.to_str().unwrap(),
        "--json",
    ]))
    .unwrap()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn invalid_utf8_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.jsonl");
    let text = std::fs::read_to_string(util::hotpot()).unwrap();
    let mut bytes = Vec::new();
    for (i, line) in text.lines().take(4).enumerate() {
        let mut line = line.as_bytes().to_vec();
        if i == 2 {
            // "é" as Latin-1: one byte that is not UTF-8.
            let at = line.windows(10).position(|w| w == b"\"question\"").unwrap() + 13;
            line.insert(at, 0xE9);
        }
        bytes.extend(line);
        bytes.push(b'\n');
    }
    std::fs::write(&path, bytes).unwrap();
    for dataset in [Some("hotpotqa"), None] {
        let err = refused(dataset, &path);
        assert!(
            err.contains(&format!("{}:3: not valid UTF-8", path.display())),
            "{err}"
        );
        assert_eq!(err.matches("UTF-8").count(), 2, "the cause once: {err}");
    }
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn corpus_deduplicates_titles_across_files_first_wins() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corpus.jsonl");
    let fullwiki = util::shared_data("hotpotqa/hotpot_dev_fullwiki_sample500.jsonl");
    let files = [util::hotpot(), fullwiki];
    let mut args = vec![
        "data",
        "corpus",
        "--dataset",
        "hotpotqa",
        "--out",
        out.to_str().unwrap(),
    ];
    for f in &files {
        args.extend(["--data", f.to_str().unwrap()]);
    }
    let summary = ok(&args);

    // The expectation, computed straight from the raw files.
    let mut seen = HashSet::new();
    let mut expected: Vec<(String, Vec<Value>)> = Vec::new();
    let mut read = 0;
    for f in &files {
        for row in read_jsonl(f) {
            for p in row["context"].as_array().unwrap() {
                read += 1;
                let title = p[0].as_str().unwrap().to_string();
                if seen.insert(title.clone()) {
                    expected.push((title, p[1].as_array().unwrap().clone()));
                }
            }
        }
    }
    let docs = read_jsonl(&out);
    assert_eq!(docs.len(), expected.len());
    assert!(
        summary.contains(&format!("read {read} paragraphs")),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("wrote {} unique paragraphs", expected.len())),
        "{summary}"
    );
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    for (i, (doc, (title, sentences))) in docs.iter().zip(&expected).enumerate() {
        assert_eq!(doc["id"], format!("{i:06}"));
        assert_eq!(doc["title"], title.as_str());
        assert_eq!(doc["sentences"].as_array().unwrap(), sentences);
        // The text holds every sentence in order (joining only adds whitespace).
        let concat: String = sentences.iter().map(|s| s.as_str().unwrap()).collect();
        assert_eq!(
            squeeze(doc["text"].as_str().unwrap()),
            squeeze(&concat),
            "{title}"
        );
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn corpus_of_musique_keeps_the_original_paragraph_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.jsonl");
    ok(&[
        "data",
        "corpus",
        "--dataset",
        "musique",
        "--data",
        util::musique().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut originals = std::collections::HashMap::new();
    for row in read_jsonl(&util::musique()) {
        for p in row["paragraphs"].as_array().unwrap() {
            originals
                .entry(p["title"].as_str().unwrap().to_string())
                .or_insert_with(|| p["paragraph_text"].as_str().unwrap().to_string());
        }
    }
    let docs = read_jsonl(&out);
    assert_eq!(docs.len(), originals.len());
    for d in &docs {
        assert_eq!(
            d["text"].as_str().unwrap(),
            originals[d["title"].as_str().unwrap()]
        );
        assert!(!d["sentences"].as_array().unwrap().is_empty());
    }
}
