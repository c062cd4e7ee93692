//! Classes 1-3: no key is stored or printed, whatever a server echoes and wherever it
//! echoes it, and credentials never ride in a base URL.

use super::{assert_no_part_of, files_below, fixture, run};
use crate::util::{stderr, stdout};
use serde_json::json;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

/// A key with no run of 8 characters that ordinary output could hold.
const KEY: &str = "sk-Zq7xW2pLm9Vt4Rb8Kd1Nf6Hy3Jc5Gs0Ua-Qe2Wr7Ty9Ui";

/// A native tool-call reply (first request) and a finishing one (later requests), each
/// echoing the key in the text, a tool argument and (first) a tool's name.
fn echoing(anthropic: bool) -> impl Fn(&ReceivedRequest) -> Reply + Send + Sync {
    move |req| {
        let first = req.index == 0;
        let (tool, argument) = if first {
            ("search", format!("{KEY} query"))
        } else {
            ("finish", format!("answer {KEY}"))
        };
        let text = format!("Thought: the key is {KEY}");
        if anthropic {
            let mut content = vec![
                json!({"type": "text", "text": text}),
                json!({"type": "tool_use", "id": "t1", "name": tool, "input": {"q": argument}}),
            ];
            if first {
                content.push(
                    json!({"type": "tool_use", "id": "t2", "name": KEY, "input": {"q": KEY}}),
                );
            }
            Reply::Json(
                json!({"type": "message", "role": "assistant", "content": content,
                "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}),
            )
        } else {
            let call = |id: &str, name: &str, arg: &str| {
                json!({"id": id, "type": "function", "function": {
                    "name": name, "arguments": json!({"q": arg}).to_string()}})
            };
            let mut calls = vec![call("a", tool, &argument)];
            if first {
                calls.push(call("b", KEY, KEY));
            }
            Reply::Json(
                json!({"choices": [{"message": {"role": "assistant", "content": text,
                "tool_calls": calls}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
            )
        }
    }
}

#[test]
fn a_key_echoed_in_native_tool_calls_is_stored_nowhere() {
    for anthropic in [false, true] {
        let server = MockServer::spawn(echoing(anthropic));
        let dir = tempfile::tempdir().unwrap();
        let (out, cache) = (dir.path().join("run"), dir.path().join("cache"));
        let (model, base_var, key_var, base) = if anthropic {
            (
                "anthropic:claude-test",
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_API_KEY",
                server.origin(),
            )
        } else {
            (
                "openai:gpt-test",
                "OPENAI_BASE_URL",
                "OPENAI_API_KEY",
                server.url(),
            )
        };
        let data = fixture();
        let env = [(base_var, base.as_str()), (key_var, KEY)];
        let eval = super::eval(
            &data,
            "react",
            model,
            &out,
            &[
                "--limit",
                "1",
                "--set",
                "tool_channel=native",
                "--cache",
                cache.to_str().unwrap(),
            ],
            &env,
        )
        .output()
        .unwrap();
        assert!(eval.status.success(), "{model}: {}", stderr(&eval));
        let export = run(
            &["cache", "export", "--cache", cache.to_str().unwrap()],
            &[],
        );
        assert!(export.status.success(), "{}", stderr(&export));
        let report = run(&["report", out.to_str().unwrap(), "--html"], &[]);
        assert!(report.status.success(), "{}", stderr(&report));
        assert!(out.join("trace.html").exists());

        // The server did get the key, and echoed it: what came back was redacted.
        let sent = &server.requests()[0];
        let got = if anthropic {
            sent.header("x-api-key")
        } else {
            sent.bearer()
        };
        assert_eq!(got, Some(KEY), "{model}");
        let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        assert!(records.contains("[redacted]"), "{records}");
        assert!(stdout(&export).contains("[redacted]"));
        for (path, text) in files_below(dir.path()) {
            assert_no_part_of(KEY, &format!("{model}: {}", path.display()), &text);
        }
        for o in [&eval, &export, &report] {
            assert_no_part_of(KEY, model, &(stdout(o) + &stderr(o)));
        }
    }
}

#[test]
fn a_key_straddling_the_quote_limit_of_an_error_body_leaks_no_part() {
    // The key starts 580 bytes into the message: a quote cut at 600 bytes before
    // redaction kept its first 20 characters.
    let message = format!("{}{KEY} was refused{}", "x".repeat(580), "y".repeat(300));
    let server = MockServer::spawn(move |_| Reply::openai_error(400, "invalid_request", &message));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let model = format!("openai-compat:{}#m?key_env=HARDENING_KEY", server.url());
    let data = fixture();
    let env = [("HARDENING_KEY", KEY)];
    let eval = super::eval(
        &data,
        "react",
        &model,
        &out,
        &["--limit", "1", "--attempts", "1", "--no-cache"],
        &env,
    )
    .output()
    .unwrap();
    let paragraphs = dir.path().join("p.json");
    std::fs::write(&paragraphs, r#"[{"title": "T", "text": "Some text."}]"#).unwrap();
    let ask = run(
        &[
            "ask",
            "--method",
            "react",
            "--model",
            &model,
            "--no-cache",
            "--attempts",
            "1",
            "--question",
            "q?",
            "--paragraphs",
            paragraphs.to_str().unwrap(),
        ],
        &env,
    );
    assert_eq!(server.requests()[0].bearer(), Some(KEY));
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert!(
        records.contains("[redacted]") && records.contains("xxxx"),
        "{records}"
    );
    assert!(!ask.status.success());
    for (what, text) in [
        ("records", records),
        ("eval output", stdout(&eval) + &stderr(&eval)),
        ("ask output", stdout(&ask) + &stderr(&ask)),
    ] {
        assert_no_part_of(KEY, what, &text);
    }
}

#[test]
fn credentials_in_a_base_url_are_refused_and_never_stored() {
    let server = MockServer::spawn(|_| Reply::text("Action: finish[x]"));
    let password = "pw-Hk4Jm8Nq2Rt6Vx0Zb3";
    let dir = tempfile::tempdir().unwrap();
    let data = fixture();
    let authority = format!("user:{password}@{}", server.addr());
    let compat = format!("openai-compat:http://{authority}/v1#m");
    let openai_base = format!("http://{authority}/v1");
    let anthropic_base = format!("http://{authority}");
    let cases = [
        (compat.as_str(), None, "key_env"),
        (
            "openai:gpt-test",
            Some(("OPENAI_BASE_URL", openai_base.as_str())),
            "OPENAI_API_KEY",
        ),
        (
            "anthropic:claude-test",
            Some(("ANTHROPIC_BASE_URL", anthropic_base.as_str())),
            "ANTHROPIC_API_KEY",
        ),
    ];
    for (i, (model, base, named)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("run{i}"));
        let mut env = vec![("OPENAI_API_KEY", "sk-k"), ("ANTHROPIC_API_KEY", "sk-k")];
        env.extend(base);
        let cache = dir.path().join("cache");
        let extra = ["--limit", "1", "--cache", cache.to_str().unwrap()];
        let o = super::eval(&data, "react", model, &out, &extra, &env)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!o.status.success(), "{model}: {err}");
        assert!(
            err.contains("credentials") && err.contains(named),
            "{model}: {err}"
        );
        assert_no_part_of(password, model, &(stdout(&o) + &err));
    }
    assert_eq!(server.request_count(), 0, "nothing was sent");
    for (path, text) in files_below(dir.path()) {
        assert_no_part_of(password, &path.display().to_string(), &text);
    }
}
