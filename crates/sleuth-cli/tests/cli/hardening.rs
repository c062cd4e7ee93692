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

/// A server on 127.0.0.1 that answers every request with `307` to `target` (plus the
/// request's path), as a hostile or misconfigured endpoint might. Returns its origin.
fn redirector(target: String) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut path, mut length, mut line) = (String::new(), 0usize, String::new());
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if path.is_empty() {
                    path = line.split(' ').nth(1).unwrap_or("/").to_string();
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let _ = write!(
                stream,
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    origin
}

#[test]
fn a_redirect_never_carries_the_key_or_the_prompt_elsewhere() {
    let elsewhere =
        sleuth_testkit::MockServer::spawn(|_| sleuth_testkit::Reply::text("Action: finish[x]"));
    let from = redirector(elsewhere.origin());
    let dir = tempfile::tempdir().unwrap();
    let paragraphs = dir.path().join("p.json");
    std::fs::write(&paragraphs, r#"[{"title": "T", "text": "Some text."}]"#).unwrap();
    let canary = "sk-canary-never-elsewhere";
    let compat = format!("openai-compat:{from}/v1#m");
    for (model, base_var, key_var) in [
        (
            "anthropic:claude-test",
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
        ),
        ("openai:gpt-test", "OPENAI_BASE_URL", "OPENAI_API_KEY"),
        (compat.as_str(), "UNUSED_BASE_URL", "OPENAI_API_KEY"),
    ] {
        let base = if model.starts_with("anthropic") {
            from.clone()
        } else {
            format!("{from}/v1")
        };
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_sleuth"))
            .args(["ask", "--method", "react", "--model", model, "--no-cache"])
            .args([
                "--question",
                "q?",
                "--paragraphs",
                paragraphs.to_str().unwrap(),
            ])
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env(base_var, &base)
            .env(key_var, canary)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!o.status.success(), "{model}: {err}");
        assert!(
            err.contains("307") && err.contains("does not follow redirects"),
            "{model}: {err}"
        );
        assert!(!err.contains(canary) && !stdout(&o).contains(canary));
    }
    assert_eq!(
        elsewhere.request_count(),
        0,
        "nothing reached the other server"
    );
}
