//! Integration tests: `sleuth eval` — records, resume without loss or duplicates,
//! failures recorded per question, clear errors for bad input.

use crate::agents::read_records;
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

/// A server that finishes every question with its HotpotQA gold answer on turn 2.
fn oracle_server() -> MockServer {
    let gold: HashMap<String, String> = std::fs::read_to_string(hotpot())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["question"].as_str().unwrap().to_string(),
                v["answer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    MockServer::spawn(move |req: &ReceivedRequest| {
        let first_user = req.body["messages"][1]["content"].as_str().unwrap_or("");
        let q = first_user
            .strip_prefix("Question: ")
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let answer = gold.get(q).cloned().unwrap_or_else(|| "unknown".into());
        let assistant_turns = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        Reply::text(if assistant_turns == 0 {
            "Confirmed Facts:\n- none\nActive Hypotheses:\n- none\nOpen Questions:\n- [Q1] who? | action: who | priority: high\nAction: search[the question]".to_string()
        } else {
            format!("Confirmed Facts:\n- [F1] {answer} (source: X)\nActive Hypotheses:\n- [H1] {answer} | confidence: high | supports: F1 | contradicts: -\nOpen Questions:\n- none\nAction: finish[{answer}]")
        })
    })
}

fn oracle_eval(url: &str, out: &Path, limit: usize) -> Eval {
    Eval::new("hotpotqa", hotpot(), "react,sleuth", url, out)
        .opt("--limit", limit)
        .opt("--concurrency", 4)
}

#[test]
fn eval_writes_scored_records_and_resumes_without_duplicates() {
    let server = oracle_server();
    let url = format!("openai-compat:{}#oracle", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");

    oracle_eval(&url, &out, 3).ok();
    let records = read_records(&out);
    assert_eq!(records.len(), 6);
    assert!(records
        .iter()
        .all(|r| r["em"] == 1.0 && r["f1"] == 1.0 && r["finished"] == true && r["turns"] == 2));
    let calls_before = server.request_count();
    assert_eq!(calls_before, 12);

    // A kill mid-write leaves a partial line; resuming cuts it and runs the rest.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("records.jsonl"))
        .unwrap();
    f.write_all(br#"{"id": "half-writ"#).unwrap();
    drop(f);
    oracle_eval(&url, &out, 5).ok();
    let records = read_records(&out);
    assert_eq!(records.len(), 10);
    let keys: HashSet<(String, String)> = records
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().into(),
                r["method"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(keys.len(), 10, "no duplicates");
    assert_eq!(
        server.request_count() - calls_before,
        8,
        "only the 4 new episodes ran"
    );

    // Nothing left to do: no calls.
    oracle_eval(&url, &out, 5).ok();
    assert_eq!(server.request_count() - calls_before, 8);

    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(config["methods"], serde_json::json!(["react", "sleuth"]));
    assert_eq!(config["dataset"], "hotpotqa");
}

#[test]
fn a_changed_configuration_is_refused_in_the_same_directory() {
    let server = oracle_server();
    let url = format!("openai-compat:{}#oracle", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    oracle_eval(&url, &out, 1).ok();
    let o = oracle_eval(&url, &out, 1).set("turns=10").output();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("holds a different run"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn server_errors_become_error_records_and_the_run_goes_on() {
    // Every other request fails permanently (400): those questions get error records.
    let server = MockServer::spawn(|req| {
        let q = req.body["messages"][1]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if q.len() % 2 == 0 {
            Reply::openai_error(400, "invalid_request_error", "bad request for this one")
        } else {
            Reply::text("Action: finish[something]")
        }
    });
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = Eval::new("hotpotqa", hotpot(), "react", &url, &out)
        .opt("--limit", 8)
        .output();
    let records = read_records(&out);
    assert_eq!(records.len(), 8);
    let errors = records.iter().filter(|r| r["error"].is_string()).count();
    assert!(errors > 0 && errors < 8, "{errors} errors");
    assert!(o.status.success(), "{}", stderr(&o));
    let e = records.iter().find(|r| r["error"].is_string()).unwrap();
    assert!(e["error"].as_str().unwrap().contains("400"));
}

#[test]
fn an_unreachable_endpoint_fails_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = Eval::new(
        "hotpotqa",
        hotpot(),
        "react",
        "openai-compat:http://127.0.0.1:9/v1#m",
        dir.path().join("r"),
    )
    .opt("--limit", 2)
    .opt("--timeout", 5)
    .output();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("every question failed") && err.contains("127.0.0.1:9"),
        "{err}"
    );
}

#[test]
fn bad_input_gets_one_line_errors() {
    let data = hotpot();
    let d = data.to_str().unwrap();
    let eval = |dataset: &str, data: &str, methods: &str, model: &str| {
        Eval::new(dataset, data, methods, model, "/tmp/x")
    };
    for (command, needle) in [
        (eval("hotpot2", d, "react", "scripted:x"), "unknown dataset"),
        (
            eval("hotpotqa", "/nonexistent.jsonl", "react", "scripted:x"),
            "does not exist",
        ),
        (
            eval("hotpotqa", d, "reakt", "scripted:x"),
            "unknown method `reakt`",
        ),
        (
            eval("hotpotqa", d, "react", "gpt4"),
            "invalid model spec `gpt4`",
        ),
        (
            eval("hotpotqa", d, "react", "scripted:x").set("turnz=3"),
            "unknown setting `turnz`",
        ),
    ] {
        let args = command.args();
        let o = sleuth(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn every_experiment_recipe_validates_and_plans() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let out = ok(&[
                "experiment",
                path.to_str().unwrap(),
                "--model",
                "scripted:unused",
                "--dry-run",
            ]);
            assert!(out.contains("episodes"), "{}: {out}", path.display());
            n += 1;
        }
    }
    assert!(n >= 9, "recipes found: {n}");
}
