//! Classes 14-16: what people open. Links in the HTML pages are relative paths that
//! can never become a scheme, no CSV cell is a formula, and the cosmetic defects:
//! template errors are not blamed on the model, a redirected log has no colour codes,
//! bidi overrides show in HTML, an empty corpus and a bad byte in one are reported
//! plainly and at their line.

use super::{fixture, run};
use crate::util::{records_under, replies, stderr};
use serde_json::Value;
use std::path::Path;

/// A scripted eval of react on `data` into `out`.
fn eval(data: &Path, model: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--no-cache"];
    args.extend_from_slice(extra);
    super::eval(data, "react", model, out, &args, &[])
        .output()
        .unwrap()
}

/// Every `href="..."` and `src="..."` value of an HTML page.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for part in html.split(attr).skip(1) {
            out.push(part.split('"').next().unwrap().to_string());
        }
    }
    out
}

/// `%XX` decoded, for checking that a link names the file it should.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn a_run_directory_named_like_a_script_url_is_linked_as_a_relative_path() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "m.json", &["Action: finish[yes]".into()]);
    let runs = dir.path().join("runs");
    // Two arms (another setting), so questions.html links both runs' traces.
    for (name, turns) in [
        ("javascript:alert(document.domain)", "turns=5"),
        ("a b#c?d%e", "turns=6"),
    ] {
        let o = eval(
            &fixture(),
            &model,
            &runs.join(name),
            &["--limit", "1", "--set", turns],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run(&["report", runs.to_str().unwrap(), "--html"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for page in ["index.html", "questions.html"] {
        let html = std::fs::read_to_string(runs.join(page)).unwrap();
        let found = links(&html);
        assert!(found.len() >= 2, "{page}: {found:?}");
        for href in found {
            let path = href.split('#').next().unwrap();
            let scheme = path.split_once(':').is_some_and(|(s, _)| {
                s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
            });
            assert!(!scheme && !path.starts_with('/'), "{page}: {href}");
            assert!(
                runs.join(percent_decoded(path)).is_file(),
                "{page}: {href} names no file"
            );
        }
    }
}

#[test]
fn no_csv_cell_is_a_formula_whatever_the_dataset_holds() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = [
        "=HYPERLINK(\"http://evil.example\",\"x\")",
        "+cmd|' /C calc'!A0",
        "@SUM(1+1)",
    ];
    let text = std::fs::read_to_string(fixture()).unwrap();
    let lines: Vec<String> = text
        .lines()
        .zip(hostile)
        .map(|(l, kind)| {
            let mut row: Value = serde_json::from_str(l).unwrap();
            row["type"] = Value::String(kind.to_string());
            row["_id"] = Value::String(format!("-{}", row["_id"].as_str().unwrap()));
            row.to_string()
        })
        .collect();
    let data = dir.path().join("hostile.jsonl");
    std::fs::write(&data, lines.join("\n") + "\n").unwrap();
    let model = replies(dir.path(), "m.json", &["Action: finish[=1+1]".into()]);
    let out = dir.path().join("run");
    assert!(eval(&data, &model, &out, &[]).status.success());
    let tables = dir.path().join("tables");
    let o = run(
        &[
            "report",
            out.to_str().unwrap(),
            "--out",
            tables.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut csvs = 0;
    for entry in std::fs::read_dir(&tables).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        csvs += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            for cell in cells(line) {
                let cell = cell.trim_start_matches('"');
                let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
                assert!(
                    !formula || cell.parse::<f64>().is_ok(),
                    "{}: {cell}",
                    path.display()
                );
            }
        }
    }
    assert!(csvs >= 3, "{csvs} CSV files");
    let by_kind = std::fs::read_to_string(tables.join("by_kind.csv")).unwrap();
    assert!(
        by_kind.contains("'=HYPERLINK") && by_kind.contains("'+cmd"),
        "{by_kind}"
    );
}

/// The cells of one CSV line (quoted cells may hold commas).
fn cells(line: &str) -> Vec<String> {
    let (mut out, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    out.push(cell);
    out
}

#[test]
fn template_errors_are_not_blamed_on_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(prompts.join("react.txt"), "Bad {{ no_such_variable }}\n").unwrap();
    let model = replies(dir.path(), "m.json", &["Action: finish[x]".into()]);
    let out = dir.path().join("run");
    let o = eval(
        &fixture(),
        &model,
        &out,
        &["--prompts", prompts.to_str().unwrap()],
    );
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("prompt template react.txt") && err.contains("fix the prompt template"),
        "{err}"
    );
    assert!(!err.contains("model endpoint and key"), "{err}");
    // The record says so as data, decided where the error was typed (issue 45).
    let records = records_under(&out);
    assert!(!records.is_empty());
    for r in &records {
        assert_eq!(r["error_kind"], "template", "{r}");
    }
}

#[test]
fn a_warning_on_a_redirected_stderr_carries_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join("responses.sqlite3"),
        "not a database".repeat(100),
    )
    .unwrap();
    let server =
        sleuth_testkit::MockServer::spawn(|_| sleuth_testkit::Reply::text("Action: finish[x]"));
    let model = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("run");
    let extra = ["--limit", "1", "--cache", cache.to_str().unwrap()];
    let o = super::eval(&fixture(), "react", &model, &out, &extra, &[])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success() && err.contains("WARN"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn bidi_overrides_show_as_escapes_in_every_html_page() {
    let dir = tempfile::tempdir().unwrap();
    let rlo = '\u{202e}';
    let text = std::fs::read_to_string(fixture()).unwrap();
    let mut row: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    row["question"] = Value::String(format!("Which {rlo}gnp.exe{rlo} city?"));
    let data = dir.path().join("bidi.jsonl");
    std::fs::write(&data, format!("{row}\n")).unwrap();
    let model = replies(
        dir.path(),
        "m.json",
        &[format!("Action: finish[evil{rlo}txt.exe]")],
    );
    let runs = dir.path().join("runs");
    assert!(eval(&data, &model, &runs.join("run"), &[]).status.success());
    let o = run(&["report", runs.to_str().unwrap(), "--html"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for page in [runs.join("run/trace.html"), runs.join("questions.html")] {
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(!html.contains(rlo), "{}", page.display());
        assert!(html.contains("\\u{202e}gnp.exe"), "{}", page.display());
    }
}

#[test]
fn an_empty_corpus_and_a_bad_byte_in_one_are_reported_plainly_and_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let build = |corpus: &Path| {
        run(
            &[
                "index",
                "build",
                "--corpus",
                corpus.to_str().unwrap(),
                "--out",
                index.to_str().unwrap(),
            ],
            &[],
        )
    };
    let empty = dir.path().join("empty.jsonl");
    for (text, says) in [
        ("", "it is empty"),
        ("\n\n  \n", "its 3 lines are all blank"),
    ] {
        std::fs::write(&empty, text).unwrap();
        let o = build(&empty);
        let err = stderr(&o);
        assert!(!o.status.success(), "{err}");
        assert!(
            err.contains("empty.jsonl: the corpus has no paragraphs") && err.contains(says),
            "{err}"
        );
        assert!(!err.contains(":0"), "{err}");
    }
    let bad = dir.path().join("bad.jsonl");
    let mut bytes = br#"{"id": "1", "title": "A", "text": "fine"}"#.to_vec();
    bytes.extend_from_slice(b"\n{\"id\": \"2\", \"title\": \"B\", \"text\": \"caf\xe9\"}\n");
    std::fs::write(&bad, bytes).unwrap();
    let o = build(&bad);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("bad.jsonl:2: not valid UTF-8"), "{err}");
}
