//! The native tool channel (`tool_channel=native`, issue 27): through the binary, with
//! `openai:` and `anthropic:` pointed at the testkit's HTTP server, the tool results go
//! back as each provider's tool-result messages, and the second request's wire JSON is
//! checked field for field against the observations the record kept.

use crate::agents::turn_of;
use crate::traffic::run;
use serde_json::{json, Value};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

const THOUGHT: &str = "Thought: both men at once";
const ANTHROPIC: &str = "anthropic:claude-sonnet-4-5";

/// The record's observation texts of turn 1, in order.
fn observations(record: &Value) -> Vec<String> {
    record["trace"][0]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["text"].as_str().unwrap().to_string())
        .collect()
}

fn openai_reply(req: &ReceivedRequest) -> Reply {
    let call = |id: &str, name: &str, arguments: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}});
    let (content, calls) = match turn_of(req) {
        1 => (
            json!(THOUGHT),
            vec![
                call("call_A", "search", r#"{"query": "Scott Derrickson"}"#),
                call("call_B", "lookup", r#"{"title": "Ed Wood"}"#),
            ],
        ),
        _ => (
            Value::Null,
            vec![call("call_C", "finish", r#"{"answer": "yes"}"#)],
        ),
    };
    Reply::Json(
        json!({"choices": [{"message": {"role": "assistant", "content": content,
        "tool_calls": calls}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

#[test]
fn openai_tool_results_are_tool_messages_after_the_assistants_tool_calls() {
    let server = MockServer::spawn(openai_reply);
    let r = run(
        &server,
        "openai:gpt-4o",
        1,
        &["tool_channel=native", "turns=3"],
    );
    let rec = r.one();
    assert_eq!(rec["answer"], "yes", "{}", r.stderr);
    assert_eq!(server.request_count(), 2);
    let obs = observations(rec);
    assert_eq!(obs.len(), 2);
    let sent = &server.requests()[1].body["messages"];
    let sent = sent.as_array().unwrap();
    assert_eq!(sent.len(), 5, "system, question, the calls, two results");
    assert_eq!(
        Value::Array(sent[2..].to_vec()),
        json!([
            {"role": "assistant", "content": THOUGHT, "tool_calls": [
                {"id": "call_A", "type": "function",
                 "function": {"name": "search", "arguments": r#"{"query": "Scott Derrickson"}"#}},
                {"id": "call_B", "type": "function",
                 "function": {"name": "lookup", "arguments": r#"{"title": "Ed Wood"}"#}}]},
            {"role": "tool", "tool_call_id": "call_A", "content": obs[0]},
            {"role": "tool", "tool_call_id": "call_B", "content": obs[1]},
        ])
    );
    assert!(obs[1].contains("Edward Davis Wood Jr."), "{}", obs[1]);
    // The trace is the text protocol's: the calls as action lines after the text.
    assert_eq!(
        rec["trace"][0]["response"],
        format!("{THOUGHT}\nAction: search[Scott Derrickson]\nAction: lookup[Ed Wood]")
    );
}

fn anthropic_reply(req: &ReceivedRequest) -> Reply {
    let call = |id: &str, name: &str, input: Value| json!({"type": "tool_use", "id": id, "name": name, "input": input});
    let content = match turn_of(req) {
        1 => json!([
            {"type": "text", "text": THOUGHT},
            call("toolu_A", "search", json!({"query": "Scott Derrickson"})),
            call("toolu_B", "lookup", json!({"title": "Ed Wood"})),
        ]),
        _ => json!([call("toolu_C", "finish", json!({"answer": "yes"}))]),
    };
    Reply::Json(json!({"content": content, "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 5}}))
}

#[test]
fn anthropic_tool_results_are_tool_result_blocks_after_the_tool_use_blocks() {
    let server = MockServer::spawn(anthropic_reply);
    let model = format!("{ANTHROPIC}?prompt_cache=off");
    let r = run(&server, &model, 1, &["tool_channel=native", "turns=3"]);
    let rec = r.one();
    assert_eq!(rec["answer"], "yes", "{}", r.stderr);
    let obs = observations(rec);
    let sent = server.requests()[1].body["messages"].clone();
    let sent = sent.as_array().unwrap();
    assert_eq!(sent.len(), 3, "question, the calls, the results: {sent:?}");
    assert_eq!(
        Value::Array(sent[1..].to_vec()),
        json!([
            {"role": "assistant", "content": [
                {"type": "text", "text": THOUGHT},
                {"type": "tool_use", "id": "toolu_A", "name": "search",
                 "input": {"query": "Scott Derrickson"}},
                {"type": "tool_use", "id": "toolu_B", "name": "lookup",
                 "input": {"title": "Ed Wood"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_A", "content": obs[0]},
                {"type": "tool_result", "tool_use_id": "toolu_B", "content": obs[1]}]},
        ])
    );

    // With the prompt cache on, the results' turn ends the cached prefix: its last
    // block carries the mark, and nothing else in it does.
    let server = MockServer::spawn(anthropic_reply);
    let r = run(&server, ANTHROPIC, 1, &["tool_channel=native", "turns=3"]);
    assert_eq!(r.one()["answer"], "yes", "{}", r.stderr);
    let results = &server.requests()[1].body["messages"][2]["content"];
    assert_eq!(results[1]["cache_control"], json!({"type": "ephemeral"}));
    assert!(results[0].get("cache_control").is_none(), "{results}");
    assert_eq!(results[0]["type"], "tool_result");
}
