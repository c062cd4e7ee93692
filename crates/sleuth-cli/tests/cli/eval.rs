//! Integration tests: `sleuth eval` — records, resume without loss or duplicates,
//! failures recorded per question, clear errors for bad input.

use crate::agents::read_records;
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::collections::{HashMap, HashSet};
use std::io::Write;

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

fn eval_args<'a>(url: &'a str, out: &'a str, data: &'a str, limit: &'a str) -> Vec<&'a str> {
    vec![
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        data,
        "--methods",
        "react,sleuth",
        "--model",
        url,
        "--limit",
        limit,
        "--concurrency",
        "4",
        "--out",
        out,
    ]
}

#[test]
fn eval_writes_scored_records_and_resumes_without_duplicates() {
    let server = oracle_server();
    let url = format!("openai-compat:{}#oracle", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let data = hotpot();
    let (out_s, data_s) = (out.to_str().unwrap(), data.to_str().unwrap());

    ok(&eval_args(&url, out_s, data_s, "3"));
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
    ok(&eval_args(&url, out_s, data_s, "5"));
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
    ok(&eval_args(&url, out_s, data_s, "5"));
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
    let data = hotpot();
    ok(&eval_args(
        &url,
        out.to_str().unwrap(),
        data.to_str().unwrap(),
        "1",
    ));
    let mut args = eval_args(&url, out.to_str().unwrap(), data.to_str().unwrap(), "1");
    args.extend(["--set", "turns=10"]);
    let o = sleuth(&args);
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
    let data = hotpot();
    let o = sleuth(&[
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        data.to_str().unwrap(),
        "--methods",
        "react",
        "--model",
        &url,
        "--limit",
        "8",
        "--out",
        out.to_str().unwrap(),
    ]);
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
    let data = hotpot();
    let o = sleuth(&[
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        data.to_str().unwrap(),
        "--methods",
        "react",
        "--model",
        "openai-compat:http://127.0.0.1:9/v1#m",
        "--limit",
        "2",
        "--out",
        dir.path().join("r").to_str().unwrap(),
        "--timeout",
        "5",
    ]);
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
    for (args, needle) in [
        (
            vec![
                "eval",
                "--dataset",
                "hotpot2",
                "--data",
                d,
                "--methods",
                "react",
                "--model",
                "scripted:x",
                "--out",
                "/tmp/x",
            ],
            "unknown dataset",
        ),
        (
            vec![
                "eval",
                "--dataset",
                "hotpotqa",
                "--data",
                "/nonexistent.jsonl",
                "--methods",
                "react",
                "--model",
                "scripted:x",
                "--out",
                "/tmp/x",
            ],
            "does not exist",
        ),
        (
            vec![
                "eval",
                "--dataset",
                "hotpotqa",
                "--data",
                d,
                "--methods",
                "reakt",
                "--model",
                "scripted:x",
                "--out",
                "/tmp/x",
            ],
            "unknown method `reakt`",
        ),
        (
            vec![
                "eval",
                "--dataset",
                "hotpotqa",
                "--data",
                d,
                "--methods",
                "react",
                "--model",
                "gpt4",
                "--out",
                "/tmp/x",
            ],
            "invalid model spec `gpt4`",
        ),
        (
            vec![
                "eval",
                "--dataset",
                "hotpotqa",
                "--data",
                d,
                "--methods",
                "react",
                "--model",
                "scripted:x",
                "--set",
                "turnz=3",
                "--out",
                "/tmp/x",
            ],
            "unknown setting `turnz`",
        ),
    ] {
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
