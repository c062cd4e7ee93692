//! `openai:` on OpenAI's recorded (and documented) responses.

use super::{messages, replay, reply, run, run_opts, u, OPENAI_CANARY};
use serde_json::Value;
use sleuth_testkit::{Cassette, MockServer};

/// The recorded body of response `i` of `name`, parsed.
fn body(name: &str, i: usize) -> Value {
    serde_json::from_str(&Cassette::load(name).responses[i].body).unwrap()
}

#[test]
fn plain_text_keeps_the_reply_and_usage_and_sends_the_key_only_as_a_header() {
    let server = replay("openai-text-gpt-4o");
    let r = run(&server, "openai:gpt-4o", 1, &[]);
    let rec = r.one();
    let want = body("openai-text-gpt-4o", 0);
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    assert_eq!(reply(rec), want["choices"][0]["message"]["content"]);
    assert_eq!(rec["input_tokens"], want["usage"]["prompt_tokens"]);
    assert_eq!(rec["output_tokens"], want["usage"]["completion_tokens"]);
    assert!(rec["cost_usd"].as_f64().unwrap() > 0.0, "gpt-4o is priced");
    assert!(rec.get("call_stops").is_none() && rec.get("truncated_calls").is_none());
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.bearer(), Some(OPENAI_CANARY));
    assert_eq!(req.body["temperature"], 0.0, "gpt-4o takes a temperature");
    assert!(!req.raw_body.contains(OPENAI_CANARY));
}

#[test]
fn parallel_tool_calls_become_one_turns_actions() {
    let server = replay("openai-parallel-tool-calls");
    let r = run(&server, "openai:gpt-4o", 1, &["tool_channel=native"]);
    let rec = r.one();
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    let text = reply(rec);
    assert!(
        text.contains("delete_file[.env]") && text.contains("create_file[test.txt]"),
        "{text}"
    );
    assert!(server.requests()[0].body["tools"].is_array());

    // A second turn: the recorded calls go back with their recorded ids, each answered
    // by a tool message (these tools are not the pool's, so nothing ran).
    let server = replay("openai-parallel-tool-calls");
    let r = run(
        &server,
        "openai:gpt-4o",
        1,
        &["tool_channel=native", "turns=2"],
    );
    assert!(r.one()["error"].is_null(), "{}", r.one()["error"]);
    let recorded = &body("openai-parallel-tool-calls", 0)["choices"][0]["message"];
    let sent = &server.requests()[1].body["messages"];
    assert_eq!(sent[2]["tool_calls"], recorded["tool_calls"]);
    assert_eq!(sent[2]["content"], Value::Null);
    for (i, call) in recorded["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let result = &sent[3 + i];
        assert_eq!(result["role"], "tool");
        assert_eq!(result["tool_call_id"], call["id"]);
        assert!(result["content"]
            .as_str()
            .unwrap()
            .starts_with("Nothing ran"));
    }
}

/// Bug 1: `prompt_tokens_details.cache_write_tokens` was never read (the record said 0
/// where OpenAI said 4,012), so the writes were priced as plain input.
#[test]
fn cache_writes_and_reads_are_counted_and_priced() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[\"gpt-5.6-sol\"]\ninput = 1.0\noutput = 2.0\ncached_input = 0.1\ncache_write = 1.25\n",
    )
    .unwrap();
    let server = replay("openai-cache-write-then-read");
    let prices = [("--prices", prices.display().to_string())];
    let r = run_opts(&server, "openai:gpt-5.6-sol", 2, &[], &prices);
    assert!(r.success, "{}", r.stderr);
    let mut records = r.records.clone();
    records.sort_by_key(|r| u(&r["cached_input_tokens"]));
    let (first, second) = (&records[0], &records[1]);
    assert_eq!(
        (u(&first["input_tokens"]), u(&first["cache_write_tokens"])),
        (4020, 4012)
    );
    assert_eq!(u(&first["cached_input_tokens"]), 0);
    assert_eq!(
        (
            u(&second["cached_input_tokens"]),
            u(&second["cache_write_tokens"])
        ),
        (4012, 0)
    );
    // 8 fresh input tokens, 4,012 written at 1.25, 4 output tokens at 2 (per million).
    let want = (8.0 + 4012.0 * 1.25 + 4.0 * 2.0) / 1e6;
    assert!(
        (first["cost_usd"].as_f64().unwrap() - want).abs() < 1e-9,
        "{first}"
    );
    let read = (8.0 + 4012.0 * 0.1 + 4.0 * 2.0) / 1e6;
    assert!(
        (second["cost_usd"].as_f64().unwrap() - read).abs() < 1e-9,
        "{second}"
    );
}

/// Bug 2 (newer names): a `gpt-5.x` model is a reasoning model and gets no
/// temperature and no stop sequences.
#[test]
fn gpt_5_point_x_gets_no_temperature_or_stop() {
    let server = replay("openai-cache-write-then-read");
    let r = run(&server, "openai:gpt-5.6-sol", 1, &[]);
    assert!(r.one()["error"].is_null(), "{}", r.one()["error"]);
    let req = &server.requests()[0];
    assert!(req.body.get("temperature").is_none(), "{}", req.raw_body);
    assert!(req.body.get("stop").is_none(), "{}", req.raw_body);
}

/// Bug 2: o1-mini refuses `system` and `developer` messages (both recorded as 400
/// `unsupported_value`); the system prompt must travel in the first user message.
#[test]
fn o1_mini_gets_its_system_prompt_in_the_first_user_message() {
    let cassette = Cassette::load("openai-o1-mini-system-roles");
    let server = MockServer::spawn(move |req| {
        let roles: Vec<String> = messages(&req.body).into_iter().map(|(r, _)| r).collect();
        if roles.iter().any(|r| r == "system") {
            cassette.reply(0)
        } else if roles.iter().any(|r| r == "developer") {
            cassette.reply(1)
        } else {
            cassette.reply(2)
        }
    });
    let r = run(&server, "openai:o1-mini", 1, &[]);
    let rec = r.one();
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    assert_eq!(reply(rec), "The capital of France is **Paris**.");
    let sent = messages(&server.requests()[0].body);
    assert!(sent.iter().all(|(role, _)| role == "user"), "{sent:?}");
    assert_eq!(server.request_count(), 1, "no refused request was needed");
    // The same question to gpt-4o, which takes a system message: o1-mini's first user
    // message opens with that system prompt.
    let gpt = replay("openai-text-gpt-4o");
    run(&gpt, "openai:gpt-4o", 1, &[]);
    let with_system = messages(&gpt.requests()[0].body);
    assert_eq!(with_system[0].0, "system");
    assert!(sent[0].1.starts_with(&with_system[0].1), "{}", sent[0].1);
    assert!(sent[0].1.ends_with(&with_system[1].1));
    assert!(server.requests()[0].body.get("temperature").is_none());
}

#[test]
fn reasoning_models_count_reasoning_tokens_as_output_and_get_no_temperature() {
    let server = replay("openai-o3-mini-reasoning");
    let r = run(&server, "openai:o3-mini", 1, &[]);
    let rec = r.one();
    let want = body("openai-o3-mini-reasoning", 0);
    assert_eq!(reply(rec), want["choices"][0]["message"]["content"]);
    assert_eq!(rec["output_tokens"], want["usage"]["completion_tokens"]);
    assert_eq!(rec["input_tokens"], want["usage"]["prompt_tokens"]);
    let req = &server.requests()[0];
    assert!(req.body.get("temperature").is_none() && req.body.get("stop").is_none());
}

/// Errors no retry can fix: one request each, and the record says why.
#[test]
fn unknown_models_bad_requests_and_bad_keys_fail_once_with_the_providers_message() {
    for (name, model, status, words) in [
        (
            "openai-404-model",
            "openai:gpt-5.2-proo",
            "404",
            "does not exist",
        ),
        (
            "openai-400-invalid-request",
            "openai:gpt-4o",
            "400",
            "not supported",
        ),
        (
            "openai-401-invalid-key",
            "openai:gpt-4o",
            "401",
            "Incorrect API key",
        ),
    ] {
        let server = replay(name);
        let r = run(&server, model, 1, &[]);
        assert!(!r.success, "{name}: every question failed");
        let error = r.one()["error"].as_str().unwrap().to_string();
        assert!(
            error.contains(&format!("HTTP {status}")) && error.contains(words),
            "{name}: {error}"
        );
        assert!(error.contains("not retried"), "{name}: {error}");
        assert_eq!(server.request_count(), 1, "{name}");
    }
}

/// A 429 with `retry-after` and a 500 are retried, and the retry is counted.
#[test]
fn rate_limits_and_server_errors_are_retried_and_counted() {
    for name in ["openai-429-retry-after", "openai-500-then-ok"] {
        let server = replay(name);
        let started = std::time::Instant::now();
        let r = run(&server, "openai:gpt-4o", 1, &[]);
        let rec = r.one();
        assert!(rec["error"].is_null(), "{name}: {}", rec["error"]);
        assert_eq!(rec["retries"], 1, "{name}");
        assert_eq!(server.request_count(), 2, "{name}");
        if name.contains("429") {
            assert!(
                started.elapsed().as_secs_f64() >= 1.0,
                "retry-after: 1 was honoured"
            );
        }
    }
}

/// Bug 6: `finish_reason: length` was parsed and dropped; a truncated reply looked
/// complete.
#[test]
fn a_length_stop_is_recorded_per_call_and_counted() {
    let server = replay("openai-length");
    let r = run(&server, "openai:gpt-4o", 1, &[]);
    let rec = r.one();
    assert_eq!(reply(rec), "The county seat of Mountrail County is");
    assert_eq!(rec["truncated_calls"], 1);
    assert_eq!(
        rec["call_stops"],
        serde_json::json!([{"call": 1, "kind": "action", "stop": "length"}])
    );
    assert!(r.stderr.contains("1 calls truncated"), "{}", r.stderr);
    let report = crate::util::ok(&["report", r.out().to_str().unwrap()]);
    assert!(
        report.contains("| truncated | refused |") && report.contains("call_stops"),
        "{report}"
    );
}

/// Bug 5: `message.refusal` was ignored; the turn was empty and the refusal nowhere.
#[test]
fn a_refusal_is_the_reply_marked_and_counted() {
    let server = replay("openai-refusal");
    let r = run(&server, "openai:gpt-4o", 1, &[]);
    let rec = r.one();
    assert_eq!(reply(rec), "I'm sorry, I cannot assist with that request.");
    assert_eq!(rec["refusals"], 1);
    assert_eq!(rec["call_stops"][0]["stop"], "refusal");
    assert!(r.stderr.contains("1 refused"), "{}", r.stderr);
}
