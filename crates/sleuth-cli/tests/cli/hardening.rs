//! Integration tests: hostile input through the real binary. Numbers out of range are
//! refused while parsing arguments; text from data or a model never reaches the
//! terminal with its control characters live.

use crate::util::*;
use std::path::{Path, PathBuf};

#[test]
fn numbers_out_of_range_are_refused_while_parsing() {
    // Every file named here is missing: a refusal that names the argument (and exit
    // code 2, clap's usage error) shows the number was checked before anything ran.
    let eval = |extra: &[&str]| {
        let mut a = vec![
            "eval",
            "--dataset",
            "hotpotqa",
            "--data",
            "/none.jsonl",
            "--methods",
            "react",
            "--model",
            "scripted:/none.json",
            "--out",
            "/none-out",
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (eval(&["--concurrency", "0"]), "--concurrency"),
        (eval(&["--attempts", "0"]), "--attempts"),
        (eval(&["--timeout", "0"]), "--timeout"),
        (eval(&["--timeout", "99999999999"]), "--timeout"),
        (eval(&["--limit", "0"]), "--limit"),
        (eval(&["--sample", "0"]), "--sample"),
        (eval(&["--hops", "0"]), "--hops"),
        (eval(&["--rpm", "0"]), "--rpm"),
        (eval(&["--tpm", "nan"]), "--tpm"),
        (eval(&["--max-cost=-1"]), "--max-cost"),
        (eval(&["--corpus-reads", "0"]), "--corpus-reads"),
        (eval(&["--threads", "0"]), "--threads"),
        (eval(&["--ctx-size", "0"]), "--ctx-size"),
        (eval(&["--repeat-penalty", "0"]), "--repeat-penalty"),
        (
            words("ask --model scripted:/x --question q --paragraphs /x --attempts 0"),
            "--attempts",
        ),
        (words("index search /none q -k 0"), "--top-k"),
        (words("index search /none q --b 1.5"), "--b"),
        (
            words("index build --corpus /none --out /none --k1=-1"),
            "--k1",
        ),
        (words("report /none --resamples 0"), "--resamples"),
        (words("report /none --cohort 0"), "--cohort"),
        (
            words("data stats --dataset musique --data /none --hops 0"),
            "--hops",
        ),
        (
            words("score --dataset musique --data /none --predictions /none --hops 0"),
            "--hops",
        ),
        (words("demo --questions 0"), "--questions"),
        (
            words("experiment /none.toml --model scripted:x --limit 0"),
            "--limit",
        ),
        (words("model bench --turns 0"), "--turns"),
    ];
    for (args, flag) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = sleuth(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?} must be refused: {err}");
        assert!(
            err.contains("invalid value") && err.contains(flag),
            "{args:?}: {err}"
        );
    }
}

/// Escape sequences a hostile file might carry: clear screen, set the window title,
/// write the clipboard (OSC 52), bell, a C1 CSI and a right-to-left override.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;Zm9v\u{7}\u{9b}31m\u{202e}";

/// True when `text` holds something a terminal would act on (line breaks aside).
fn live_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// A one-question `jsonl` dataset whose id, question, title and text are hostile, and
/// a scripted model that searches, then answers with escape sequences.
fn hostile_files(dir: &Path) -> (PathBuf, PathBuf, String) {
    let id = format!("q{HOSTILE}1");
    let question = serde_json::json!({
        "id": id,
        "question": format!("Which city{HOSTILE}?"),
        "answers": ["Paris"],
        "paragraphs": [
            {"title": format!("Evil{HOSTILE}"), "text": format!("The city is Paris.{HOSTILE} More.")},
            {"title": "Plain", "text": "Nothing to see."}
        ]
    });
    let data = dir.join("hostile.jsonl");
    std::fs::write(&data, format!("{question}\n")).unwrap();
    let replies = serde_json::json!([
        "Thought: look it up.\nAction: search[city]",
        format!("Thought: found it{HOSTILE}\nAction: finish[Paris{HOSTILE}]"),
    ]);
    let model = dir.join("model.json");
    std::fs::write(&model, replies.to_string()).unwrap();
    (data, model, id)
}

#[test]
fn eval_progress_lines_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let (data, model, _) = hostile_files(dir.path());
    let model = format!("scripted:{}", model.display());
    let o = Eval::new("jsonl", &data, "react", &model, dir.path().join("run")).output();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(live_controls(&err), Vec::<char>::new(), "{err:?}");
    assert!(err.contains("q\\u{1b}[2J\\u{1b}]0;pwned\\u{7}"), "{err}");
}

#[test]
fn ask_shows_hostile_data_and_model_text_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (data, model, id) = hostile_files(dir.path());
    let model = format!("scripted:{}", model.display());
    let d = data.to_str().unwrap();
    let o = sleuth(&[
        "ask",
        "--method",
        "react",
        "--model",
        &model,
        "--dataset",
        "jsonl",
        "--data",
        d,
        "--id",
        &id,
        "--full",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(live_controls(&out), Vec::<char>::new(), "{out:?}");
    // The question, the observed paragraph and the answer are all there, escaped.
    for shown in [
        "Which city\\u{1b}[2J",
        "The city is Paris.\\u{1b}[2J",
        "Answer: Paris\\u{1b}[2J",
    ] {
        assert!(out.contains(shown), "{shown:?} missing from {out}");
    }

    // An error that quotes data (here the id asked for) is escaped too.
    let o = sleuth(&[
        "ask",
        "--method",
        "react",
        "--model",
        &model,
        "--dataset",
        "jsonl",
        "--data",
        d,
        "--id",
        "missing\u{1b}[2J",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(live_controls(&err), Vec::<char>::new(), "{err:?}");
    assert!(err.contains("missing\\u{1b}[2J"), "{err}");
}
