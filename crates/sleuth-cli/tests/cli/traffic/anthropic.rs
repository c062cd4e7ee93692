//! `anthropic:` on Anthropic's recorded (and documented) responses.

use super::{replay, reply, run, u, ANTHROPIC_CANARY};
use serde_json::Value;
use sleuth_testkit::{Cassette, MockServer, ReceivedRequest};

const MODEL: &str = "anthropic:claude-sonnet-4-5";

fn body(name: &str, i: usize) -> Value {
    serde_json::from_str(&Cassette::load(name).responses[i].body).unwrap()
}

/// The text of the first text block of a recorded message.
fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect()
}

fn marked(req: &ReceivedRequest) -> bool {
    req.raw_body.contains("cache_control")
}

#[test]
fn plain_text_counts_the_whole_prompt_and_sends_the_key_only_as_a_header() {
    let server = replay("anthropic-text");
    let r = run(&server, MODEL, 1, &[]);
    let rec = r.one();
    let want = body("anthropic-text", 0);
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    assert_eq!(reply(rec), text_of(&want));
    let usage = &want["usage"];
    let whole = u(&usage["input_tokens"])
        + usage["cache_read_input_tokens"].as_u64().unwrap_or(0)
        + usage["cache_creation_input_tokens"].as_u64().unwrap_or(0);
    assert_eq!(u(&rec["input_tokens"]), whole);
    assert_eq!(rec["output_tokens"], usage["output_tokens"]);
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some(ANTHROPIC_CANARY));
    assert!(req.header("anthropic-version").is_some());
}

#[test]
fn cache_writes_and_reads_are_counted_and_priced_at_their_rates() {
    let server = replay("anthropic-cache-write-then-read");
    let r = run(&server, MODEL, 2, &[]);
    assert_eq!(r.records.len(), 2, "{}", r.stderr);
    for (i, rec) in r.records.iter().enumerate() {
        let usage = &body("anthropic-cache-write-then-read", i)["usage"];
        let (fresh, read, write, out) = (
            u(&usage["input_tokens"]),
            u(&usage["cache_read_input_tokens"]),
            u(&usage["cache_creation_input_tokens"]),
            u(&usage["output_tokens"]),
        );
        assert_eq!(u(&rec["cached_input_tokens"]), read, "{i}");
        assert_eq!(u(&rec["cache_write_tokens"]), write, "{i}");
        assert_eq!(u(&rec["input_tokens"]), fresh + read + write, "{i}");
        // Claude Sonnet 4.x: 3 in, 15 out, reads 0.1x, writes 1.25x (per million).
        let want =
            (fresh as f64 * 3.0 + read as f64 * 0.3 + write as f64 * 3.75 + out as f64 * 15.0)
                / 1e6;
        let cost = rec["cost_usd"].as_f64().unwrap();
        assert!((cost - want).abs() < 1e-9, "{i}: {cost} != {want}");
    }
    assert!(server.requests().iter().all(marked));
}

#[test]
fn thinking_and_redacted_thinking_stay_out_of_the_reply() {
    for name in ["anthropic-thinking", "anthropic-redacted-thinking"] {
        let server = replay(name);
        let r = run(&server, MODEL, 1, &[]);
        let rec = r.one();
        let want = body(name, 0);
        assert_eq!(reply(rec), text_of(&want), "{name}");
        for block in want["content"].as_array().unwrap() {
            for field in ["thinking", "data", "signature"] {
                if let Some(hidden) = block[field].as_str() {
                    assert!(!reply(rec).contains(hidden), "{name}: {field} leaked");
                }
            }
        }
    }
}

#[test]
fn parallel_tool_use_blocks_become_one_turns_actions() {
    let server = replay("anthropic-parallel-tool-calls");
    let r = run(&server, MODEL, 1, &["tool_channel=native"]);
    let rec = r.one();
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    let text = reply(rec);
    for name in ["Alice", "Bob", "Charlie", "Daisy"] {
        assert!(
            text.contains(&format!("retrieve_entity_info[{name}]")),
            "{text}"
        );
    }
    assert!(server.requests()[0].body["tools"].is_array());

    // A second turn: the recorded tool_use blocks go back with their ids, and the next
    // user turn opens with one tool_result per call.
    let server = replay("anthropic-parallel-tool-calls");
    let r = run(&server, MODEL, 1, &["tool_channel=native", "turns=2"]);
    assert!(r.one()["error"].is_null(), "{}", r.one()["error"]);
    let recorded = body("anthropic-parallel-tool-calls", 0)["content"].clone();
    let sent = &server.requests()[1].body["messages"];
    let uses: Vec<&Value> = recorded
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .collect();
    let sent_uses = sent[1]["content"].as_array().unwrap();
    assert_eq!(sent_uses.len(), 1 + uses.len(), "the text, then the calls");
    for (i, want) in uses.iter().enumerate() {
        let (got, result) = (&sent_uses[1 + i], &sent[2]["content"][i]);
        for field in ["id", "name", "input"] {
            assert_eq!(got[field], want[field], "{field}");
        }
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["tool_use_id"], want["id"]);
    }
}

#[test]
fn unknown_models_bad_requests_and_bad_keys_fail_once_with_the_providers_message() {
    for (name, status, words) in [
        ("anthropic-404-model", "404", "not_found_error"),
        ("anthropic-400-invalid-request", "400", "does not support"),
        ("anthropic-401-invalid-key", "401", "invalid x-api-key"),
    ] {
        let server = replay(name);
        let r = run(&server, MODEL, 1, &[]);
        assert!(!r.success, "{name}");
        let error = r.one()["error"].as_str().unwrap().to_string();
        assert!(
            error.contains(&format!("HTTP {status}")) && error.contains(words),
            "{name}: {error}"
        );
        assert_eq!(server.request_count(), 1, "{name}: not retried");
    }
}

#[test]
fn rate_limits_and_overload_are_retried_with_the_marks() {
    for name in ["anthropic-429-retry-after", "anthropic-529-overloaded"] {
        let server = replay(name);
        let r = run(&server, MODEL, 1, &[]);
        let rec = r.one();
        assert!(rec["error"].is_null(), "{name}: {}", rec["error"]);
        assert_eq!(rec["retries"], 1, "{name}");
        assert_eq!(server.request_count(), 2, "{name}");
        assert!(server.requests().iter().all(marked), "{name}");
    }
}

/// Bug 3: one transient 500 turned prompt caching off for the rest of the run.
#[test]
fn a_transient_500_is_retried_as_it_is_and_caching_stays_on() {
    let server = replay("anthropic-500-then-ok");
    let r = run(&server, MODEL, 2, &[]);
    assert_eq!(r.records.len(), 2, "{}", r.stderr);
    assert!(r.records.iter().all(|rec| rec["error"].is_null()));
    assert_eq!(server.request_count(), 3, "one retry");
    assert!(
        server.requests().iter().all(marked),
        "every request, the retry and the next question's included, keeps its marks"
    );
    assert!(r
        .records
        .iter()
        .all(|rec| rec.get("cache_marks_dropped").is_none()));
}

/// Bug 3, the other side: a gateway whose backend refuses content blocks (LiteLLM in
/// front of llama-cpp-python) refuses again on the repeat and takes plain text; then,
/// and only then, the marks stop, and the records say so.
#[test]
fn a_refusal_that_repeats_with_marks_and_goes_away_without_them_stops_the_marks() {
    let server = replay("anthropic-gateway-refuses-marks");
    let r = run(&server, MODEL, 2, &[]);
    assert_eq!(r.records.len(), 2, "{}", r.stderr);
    assert!(r.records.iter().all(|rec| rec["error"].is_null()));
    let marks: Vec<bool> = server.requests().iter().map(marked).collect();
    assert_eq!(marks, [true, true, false, false]);
    assert!(r.records.iter().all(|rec| rec["cache_marks_dropped"] == 1));
}

/// Bugs 4 and 6: a reply with no text (thinking only, cut at `max_tokens`) made the
/// next request carry an empty assistant message, which Anthropic refuses with 400;
/// and the truncation was invisible.
#[test]
fn an_empty_truncated_reply_is_recorded_and_the_next_turn_is_accepted() {
    let cassette = Cassette::load("anthropic-max-tokens-thinking-only");
    let server = MockServer::spawn(move |req| {
        let empty = super::messages(&req.body)
            .iter()
            .any(|(_, text)| text.trim().is_empty());
        if req.index == 0 {
            cassette.reply(0)
        } else if empty {
            cassette.reply(1)
        } else {
            cassette.reply(2)
        }
    });
    let r = run(&server, MODEL, 1, &["turns=2"]);
    let rec = r.one();
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    assert!(server.request_count() >= 2);
    assert_eq!(rec["truncated_calls"], 1);
    assert_eq!(rec["call_stops"][0]["stop"], "length");
    assert_eq!(rec["call_stops"][0]["call"], 1);
    assert!(r.stderr.contains("1 calls truncated"), "{}", r.stderr);
}

#[test]
fn a_refusal_stop_is_recorded_and_counted() {
    let server = replay("anthropic-refusal");
    let r = run(&server, MODEL, 1, &[]);
    let rec = r.one();
    assert!(rec["error"].is_null(), "{}", rec["error"]);
    assert_eq!(rec["refusals"], 1);
    assert_eq!(rec["call_stops"][0]["stop"], "refusal");
}
