//! Integration tests: the model stack under `sleuth eval` — faults retried and counted,
//! the response cache replaying a run with zero network calls, the cost budget, and API
//! keys never leaking into any output.

use crate::agents::read_records;
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, Reply};
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Finishes on the first turn; every tenth request at positions 1, 4 and 7 fails in a
/// different way (30% of requests).
fn faulty(req: &sleuth_testkit::ReceivedRequest) -> Reply {
    match req.index % 10 {
        1 => Reply::rate_limited(1),
        4 => match (req.index / 10) % 4 {
            0 => Reply::status(503),
            1 => Reply::Malformed("{\"choices\": [".into()),
            2 => Reply::CloseConnection,
            _ => Reply::Truncated,
        },
        7 => {
            if (req.index / 10).is_multiple_of(2) {
                Reply::status(500)
            } else {
                Reply::Hang(Duration::from_secs(5))
            }
        }
        _ => Reply::text("Thought: I know this.\nAction: finish[an answer]"),
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn fifty_questions_with_thirty_percent_faults_lose_nothing_and_count_retries() {
    let server = MockServer::spawn(faulty);
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    Eval::new("hotpotqa", hotpot(), "react", &url, &out)
        .opt("--limit", 50)
        .opt("--concurrency", 8)
        .opt("--timeout", 1)
        .ok();
    let records = read_records(&out);
    assert_eq!(records.len(), 50);
    let ids: HashSet<&str> = records.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 50, "no duplicates");
    assert!(records
        .iter()
        .all(|r| r["error"].is_null() && r["answer"] == "an answer"));
    let calls: u64 = records.iter().map(|r| r["calls"].as_u64().unwrap()).sum();
    let retries: u64 = records.iter().map(|r| r["retries"].as_u64().unwrap()).sum();
    assert_eq!(calls, 50, "retries are not the method's calls");
    assert_eq!(
        calls + retries,
        server.request_count() as u64,
        "every request is a call or a retry"
    );
    assert!(retries >= 15, "{retries} retries");
}

fn cached_eval(url: &str, out: &Path, cache: &Path) -> Eval {
    Eval::new("hotpotqa", hotpot(), "react,sleuth", url, out)
        .opt("--limit", 3)
        .opt("--cache", cache.display())
}

fn sorted_lines(dir: &Path) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(dir.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_rerun_from_the_cache_makes_no_calls_and_reproduces_the_records() {
    let server = MockServer::spawn(|req| {
        let turn = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        Reply::text(if turn == 0 {
            "Action: search[the question words]"
        } else {
            "Action: finish[Paris]"
        })
    });
    let url = format!("openai-compat:{}#gpt-4o-mini", server.url());
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (first, second) = (dir.path().join("a"), dir.path().join("b"));
    cached_eval(&url, &first, &cache).ok();
    let calls = server.request_count();
    assert_eq!(calls, 12);
    let a: Vec<Value> = read_records(&first);
    assert!(
        a.iter().all(|r| r["cost_usd"].as_f64().unwrap() > 0.0),
        "gpt-4o-mini is priced"
    );

    cached_eval(&url, &second, &cache).ok();
    assert_eq!(server.request_count(), calls, "zero network calls");
    let b: Vec<Value> = read_records(&second);
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("cost_usd");
        v.to_string()
    };
    let mut sa: Vec<String> = a.into_iter().map(strip).collect();
    let mut sb: Vec<String> = b.iter().cloned().map(strip).collect();
    sa.sort();
    sb.sort();
    assert_eq!(sa, sb, "identical records apart from the billed cost");
    assert!(
        b.iter().all(|r| r["cost_usd"] == 0.0),
        "cache hits are not billed"
    );
    assert_eq!(sorted_lines(&second).len(), 6);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn the_cost_budget_stops_the_run_cleanly_and_a_resume_finishes_it() {
    let server = MockServer::spawn(|_| Reply::text("Action: search[words words words words]"));
    let url = format!("openai-compat:{}#gpt-4o", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // The budget reserves each call's max_tokens at the output price before it goes
    // out, so the limit is fixed here (4,096 by default would reserve more than 0.02).
    let budgeted = |budget: &str| {
        Eval::new("hotpotqa", hotpot(), "react", &url, &out)
            .opt("--limit", 6)
            .opt("--concurrency", 1)
            .set("turns=3")
            .set("max_tokens=1024")
            .opt("--max-cost", budget)
    };
    let o = budgeted("0.02").output();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cost budget"), "{}", stderr(&o));
    let partial = read_records(&out);
    assert!(
        !partial.is_empty() && partial.len() < 6,
        "{} records",
        partial.len()
    );
    assert!(
        partial.iter().all(|r| r["error"].is_null()),
        "the refused question is not recorded"
    );
    let spent: f64 = partial
        .iter()
        .map(|r| r["cost_usd"].as_f64().unwrap())
        .sum();
    assert!(spent <= 0.02, "spent {spent}");

    budgeted("10").ok();
    let all = read_records(&out);
    assert_eq!(all.len(), 6);
    assert_eq!(
        all.iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect::<HashSet<_>>()
            .len(),
        6
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_planted_key_never_appears_in_any_output() {
    const CANARY: &str = "sk-canary-7f3a9c1e5b";
    let server = MockServer::spawn(|req| {
        // A hostile server echoes the key it was sent in its error messages.
        let key = req.bearer().unwrap_or("").to_string();
        if req.index.is_multiple_of(2) {
            Reply::openai_error(
                401,
                "invalid_api_key",
                &format!("Incorrect API key provided: {key}"),
            )
        } else {
            Reply::text(format!("Action: finish[{key}]"))
        }
    });
    let url = format!("openai-compat:{}#m", server.url());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let cache = dir.path().join("cache");
    let eval = Eval::new("hotpotqa", hotpot(), "react", &url, &out)
        .opt("--limit", 4)
        .opt("--cache", cache.display());
    let o = Command::new(env!("CARGO_BIN_EXE_sleuth"))
        .args(eval.args())
        .env("OPENAI_API_KEY", CANARY)
        .output()
        .unwrap();
    assert!(
        server.requests().iter().any(|r| r.bearer() == Some(CANARY)),
        "the key was sent"
    );
    let report = sleuth(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        "--out",
        dir.path().join("rep").to_str().unwrap(),
    ]);
    let mut haystacks = vec![stdout(&o), stderr(&o), stdout(&report), stderr(&report)];
    for entry in walk(dir.path()) {
        haystacks.push(String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned());
    }
    assert!(haystacks.len() > 5);
    for h in &haystacks {
        assert!(
            !h.contains(CANARY),
            "the key leaked: …{}…",
            &h[h.find(CANARY).unwrap().saturating_sub(80)..][..120.min(h.len())]
        );
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `sleuth eval` of one question with `model`, `OPENAI_API_KEY` set to `default_key` and
/// the extra variables `env`.
fn eval_with_env(model: &str, out: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let eval = Eval::new("hotpotqa", hotpot(), "react", model, out).opt("--limit", 1);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sleuth"));
    cmd.args(eval.args())
        .env("SLEUTH_NO_CACHE", "true")
        .env_remove("SLEUTH_API_KEY_ENV")
        .env("OPENAI_API_KEY", "sk-default-not-for-this-server");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn misplaced_or_unknown_options_and_unset_key_variables_stop_before_any_request() {
    let server = MockServer::spawn(|_| Reply::text("Action: finish[x]"));
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    for (i, (model, why)) in [
        (
            format!("openai-compat:{url}?key_env=MYKEY#mock"),
            "options go after the model, not in the URL",
        ),
        (
            format!("openai-compat:{url}?preset=bogus#mock"),
            "options go after the model, not in the URL",
        ),
        (
            format!("openai-compat:{url}#mock?key_env=UNSET_VAR"),
            "takes its key from UNSET_VAR (named by ?key_env=), but UNSET_VAR is not set",
        ),
        (
            format!("openai-compat:{url}#mock?presett=vllm"),
            "unknown option `presett`",
        ),
        (
            format!("openai-compat:{url}#mock?preset=bogus"),
            "unknown server preset `bogus`",
        ),
        (
            "openai:gpt-4o-mini?key_env=MYKEY".to_string(),
            "`openai:` takes no options",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let o = eval_with_env(
            &model,
            &dir.path().join(format!("r{i}")),
            &[("MYKEY", "mine")],
        );
        let err = stderr(&o);
        assert!(!o.status.success(), "{model} was accepted");
        assert!(err.contains(why), "{model}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert_eq!(server.request_count(), 0, "{model} reached the server");
    }
    // Placed after the model, the option routes the named key, and only that one.
    let model = format!("openai-compat:{url}#mock?key_env=MYKEY");
    let o = eval_with_env(&model, &dir.path().join("ok"), &[("MYKEY", "mine")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let seen = server.requests();
    assert!(!seen.is_empty() && seen.iter().all(|r| r.bearer() == Some("mine")));
    assert!(seen.iter().all(|r| r.path == "/v1/chat/completions"));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_request_that_cannot_succeed_is_sent_once_and_the_record_says_why() {
    // llama-cpp-python reports a failed request validation as HTTP 500.
    let server = MockServer::spawn(|_| {
        Reply::openai_error(
            500,
            "internal_server_error",
            "1 validation error for CreateChatCompletionRequest: Input should be 'text' or 'json_object'",
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let model = format!("openai-compat:{}#m", server.url());
    let o = Eval::new("hotpotqa", hotpot(), "react", &model, &out)
        .opt("--limit", 1)
        .opt("--attempts", 6)
        .output();
    assert!(!o.status.success(), "every question failed");
    assert_eq!(server.request_count(), 1, "not retried");
    let records = read_records(&out);
    let error = records[0]["error"].as_str().unwrap();
    assert!(
        error.contains("not retried: the server rejected the request as invalid"),
        "{error}"
    );
    assert_eq!(records[0]["retries"], 0);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_refused_schema_form_is_dropped_and_the_run_says_so() {
    // A server that, like llama-cpp-python, refuses `json_schema` response formats.
    let server = MockServer::spawn(|req| {
        if req.body["response_format"]["type"] == "json_schema" {
            Reply::openai_error(
                500,
                "internal_server_error",
                "response_format.type: Input should be 'text' or 'json_object'",
            )
        } else {
            crate::eir::reply(req)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let model = format!("openai-compat:{}#m?preset=vllm", server.url());
    let o = Eval::new("musique", crate::util::musique(), "eir", &model, &out)
        .set("json_schema=true")
        .opt("--limit", 2)
        .opt("--concurrency", 1)
        .output();
    assert!(o.status.success(), "{}", stderr(&o));
    let records = read_records(&out);
    assert_eq!(records.len(), 2);
    for r in &records {
        assert!(r["error"].is_null(), "{}", r["error"]);
        assert!(r["constraints_dropped"].as_u64().unwrap() >= 1);
        assert_eq!(r["retries"], 0, "the fallback is not a retry");
    }
    let refused = server
        .requests()
        .iter()
        .filter(|r| r.body.get("response_format").is_some())
        .count();
    assert_eq!(
        refused, 1,
        "the refused form is sent once, then never again"
    );
    assert!(
        stderr(&o).contains("ran without their output constraint"),
        "{}",
        stderr(&o)
    );
}
