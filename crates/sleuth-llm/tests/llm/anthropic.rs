//! The Anthropic Messages client against the mock server: exact request shape, usage
//! and error format, and prompt-cache breakpoints (where they go, and what the server's
//! cache emulation then bills).

use crate::support::{growing_conversation as replay, options};
use serde_json::{json, Value};
use sleuth_llm::{
    open_stack, AnthropicClient, AnthropicConfig, ApiKey, ChatModel, ChatRequest, LlmError,
    Message, ModelOptions, ModelSpec, PriceTable, Usage,
};
use sleuth_testkit::{MockServer, PromptCache, Reply};
use std::sync::Arc;
use std::time::Duration;

fn client(server: &MockServer) -> AnthropicClient {
    let config = AnthropicConfig::new("claude-test")
        .base_url(server.url())
        .api_key(Some(ApiKey::new("sk-ant-test")))
        .timeout(Duration::from_secs(5));
    AnthropicClient::new(config).unwrap()
}

#[tokio::test]
async fn request_shape_headers_and_merged_turns() {
    let server = MockServer::start(|_| Reply::text("Frank Herbert")).await;
    let req = ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Context: Dune."),
        Message::user("Who wrote it?"),
        Message::assistant("Thought:"),
    ])
    .temperature(0.5)
    .stop(vec!["Observation:".into()]);
    let resp = client(&server).complete(&req).await.unwrap();
    assert_eq!(resp.text, "Frank Herbert");
    assert_eq!((resp.usage.input_tokens, resp.usage.output_tokens), (8, 2));

    let seen = &server.requests()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen.header("authorization"), None);
    // The system prompt and the one user turn end cacheable prefixes; the assistant
    // prefill after them stays a plain string.
    assert_eq!(
        seen.body,
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Context: Dune.\n\nWho wrote it?", "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": "Thought:"}
            ],
            "temperature": 0.5,
            "stop_sequences": ["Observation:"]
        })
    );
}

/// Where a body's `cache_control` marks are: `"system"`, or the index of the message.
fn marks(body: &Value) -> Vec<String> {
    let marked = |content: &Value| {
        content
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("cache_control").is_some()))
    };
    let mut out = Vec::new();
    if marked(&body["system"]) {
        out.push("system".to_string());
    }
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        if marked(&m["content"]) {
            out.push(i.to_string());
        }
    }
    out
}

/// A conversation of `exchanges` user/assistant pairs and a last user turn.
fn conversation(system: bool, exchanges: usize) -> ChatRequest {
    let mut messages = Vec::new();
    if system {
        messages.push(Message::system("You are a careful researcher."));
    }
    messages.push(Message::user("Question: who wrote Dune?"));
    for i in 0..exchanges {
        messages.push(Message::assistant(format!("Action: search[dune {i}]")));
        messages.push(Message::user(format!("Observation: result {i}")));
    }
    ChatRequest::new(messages)
}

#[tokio::test]
async fn breakpoints_mark_the_system_and_the_last_two_user_turns() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    let model = client(&server);
    for (system, exchanges, want) in [
        (true, 0, vec!["system", "0"]),
        (true, 1, vec!["system", "0", "2"]),
        (true, 6, vec!["system", "10", "12"]),
        (false, 6, vec!["10", "12"]),
    ] {
        model
            .complete(&conversation(system, exchanges))
            .await
            .unwrap();
        let body = server.requests().last().unwrap().body.clone();
        assert_eq!(marks(&body), want, "system {system}, {exchanges} exchanges");
        assert!(marks(&body).len() <= 4, "the API allows four breakpoints");
        // Every unmarked turn is a plain string and the text is unchanged.
        let last = body["messages"].as_array().unwrap().last().unwrap();
        let want = if exchanges == 0 {
            "Question: who wrote Dune?".to_string()
        } else {
            format!("Observation: result {}", exchanges - 1)
        };
        assert_eq!(last["content"][0]["text"], want.as_str());
        if exchanges > 1 {
            assert_eq!(body["messages"][1]["content"], "Action: search[dune 0]");
        }
    }
    let body = &server.requests()[3].body;
    assert!(
        body.get("system").is_none(),
        "no system prompt, no system field"
    );
}

#[tokio::test]
async fn prompt_cache_off_sends_plain_strings_from_config_and_spec() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    let config = AnthropicConfig::new("claude-test")
        .base_url(server.url())
        .prompt_cache(false);
    let off = AnthropicClient::new(config).unwrap();
    off.complete(&conversation(true, 3)).await.unwrap();
    let env = options()
        .env
        .set("ANTHROPIC_API_KEY", "sk-ant")
        .set("ANTHROPIC_BASE_URL", server.url());
    let spec = ModelSpec::parse("anthropic:claude-test?prompt_cache=off").unwrap();
    let stack = open_stack(&spec, &ModelOptions { env, ..options() }).unwrap();
    stack
        .model()
        .complete(&conversation(true, 3))
        .await
        .unwrap();
    let seen = server.requests();
    assert_eq!(
        seen[0].body, seen[1].body,
        "the spec option is the config's switch"
    );
    let body = &seen[0].body;
    assert_eq!(body["system"], "You are a careful researcher.");
    assert!(marks(body).is_empty());
    assert!(body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["content"].is_string()));
}

/// Small thresholds, so short prompts are cacheable.
/// A gateway that translates the Messages API to a backend refusing content blocks (as
/// LiteLLM in front of llama-cpp-python does: a 500 naming validation errors).
#[tokio::test]
async fn a_server_refusing_cache_marks_gets_plain_text_from_then_on() {
    let server = MockServer::start(|req| {
        if req.raw_body.contains("cache_control") {
            Reply::Status {
                code: 500,
                retry_after: None,
                body: r#"{"error":{"message":"10 validation errors: messages.0.content"}}"#.into(),
            }
        } else {
            Reply::text("ok")
        }
    })
    .await;
    let c = client(&server);
    for exchanges in [2, 3, 4] {
        let r = c.complete(&conversation(true, exchanges)).await.unwrap();
        assert_eq!(r.text, "ok");
    }
    let seen = server.requests();
    assert_eq!(
        seen.len(),
        5,
        "a refused request, its repeat refused too, then plain text only"
    );
    assert!(seen[..2].iter().all(|r| !marks(&r.body).is_empty()));
    assert!(seen[2..].iter().all(|r| marks(&r.body).is_empty()));

    // Errors that say nothing about the body are not answered by dropping the marks:
    // they go back to the caller (and its retry layer) as they are.
    for status in [401, 500, 529] {
        let denied = MockServer::start(move |_| Reply::status(status)).await;
        let e = client(&denied)
            .complete(&conversation(true, 2))
            .await
            .unwrap_err();
        assert!(
            matches!(e, LlmError::Http { status: s, .. } if s == status),
            "{e}"
        );
        assert_eq!(denied.requests().len(), 1, "{status}");
    }

    // A 500 naming the body that does not repeat was transient: the marks stay.
    let once = MockServer::start(|req| {
        if req.index == 0 {
            Reply::Status {
                code: 500,
                retry_after: None,
                body: r#"{"error":{"message":"1 validation error: messages.0.content"}}"#.into(),
            }
        } else {
            Reply::text("ok")
        }
    })
    .await;
    let c = client(&once);
    let r = c.complete(&conversation(true, 2)).await.unwrap();
    assert!(!r.cache_marks_dropped);
    c.complete(&conversation(true, 3)).await.unwrap();
    assert!(once.requests().iter().all(|r| !marks(&r.body).is_empty()));

    // A 400 naming the content blocks stops them at once.
    let refused = MockServer::start(|req| {
        if req.raw_body.contains("cache_control") {
            Reply::anthropic_error(
                400,
                "invalid_request_error",
                "system.0.cache_control: Extra inputs are not permitted",
            )
        } else {
            Reply::text("ok")
        }
    })
    .await;
    let r = client(&refused)
        .complete(&conversation(true, 2))
        .await
        .unwrap();
    assert!(r.cache_marks_dropped);
    assert_eq!(refused.requests().len(), 2);
}

fn small_cache() -> PromptCache {
    PromptCache {
        anthropic_min: 8,
        ..PromptCache::providers()
    }
}

#[tokio::test]
async fn breakpoints_make_each_turn_read_what_the_last_one_wrote() {
    let server = MockServer::start_with_cache(small_cache(), |_| {
        Reply::text("Action: search[Frank Herbert]")
    })
    .await;
    let usages = replay(&client(&server), 4).await;
    // Turn 1 writes system (9 words) and question (10): 19. Each later turn reads the
    // prefix the previous one wrote and writes its new exchange (3 + 9 words).
    let read: Vec<u64> = usages.iter().map(|u| u.cached_input_tokens).collect();
    let written: Vec<u64> = usages.iter().map(|u| u.cache_write_tokens).collect();
    let input: Vec<u64> = usages.iter().map(|u| u.input_tokens).collect();
    assert_eq!(
        input,
        [19, 31, 43, 55],
        "the whole prompt, as OpenAI counts it"
    );
    assert_eq!(read, [0, 19, 31, 43]);
    assert_eq!(written, [19, 12, 12, 12]);

    // Priced with Anthropic's rates the cached episode is cheaper; off, nothing is
    // cached and every token is billed fresh.
    let mut prices = PriceTable::empty();
    prices.insert(
        "claude-test",
        PriceTable::defaults()
            .lookup("claude-sonnet-4")
            .copied()
            .unwrap(),
    );
    let prices = Arc::new(prices);
    let cost = |u: &[Usage]| -> f64 {
        u.iter()
            .map(|u| prices.cost_usd("claude-test", u, false))
            .sum()
    };
    let off_server = MockServer::start_with_cache(small_cache(), |_| {
        Reply::text("Action: search[Frank Herbert]")
    })
    .await;
    let config = AnthropicConfig::new("claude-test")
        .base_url(off_server.url())
        .prompt_cache(false);
    let off = replay(&AnthropicClient::new(config).unwrap(), 4).await;
    assert!(off
        .iter()
        .all(|u| u.cached_input_tokens == 0 && u.cache_write_tokens == 0));
    assert_eq!(
        off.iter().map(|u| u.input_tokens).collect::<Vec<_>>(),
        input,
        "the same prompts"
    );
    // Sonnet: fresh 3.00, reads 0.30, writes 3.75 per million.
    let want_on = (55.0 * 3.75 + 93.0 * 0.30) / 1e6;
    let out = usages.iter().map(|u| u.output_tokens).sum::<u64>() as f64 * 15.0 / 1e6;
    assert!(
        (cost(&usages) - want_on - out).abs() < 1e-12,
        "{}",
        cost(&usages)
    );
    assert!((cost(&off) - 148.0 * 3.0 / 1e6 - out).abs() < 1e-12);
}

#[tokio::test]
async fn anthropic_errors_are_classified() {
    let server = MockServer::start(|req| match req.index {
        0 => Reply::anthropic_error(529, "overloaded_error", "Overloaded"),
        1 => Reply::anthropic_error(401, "authentication_error", "invalid x-api-key"),
        _ => Reply::anthropic_error(
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
    })
    .await;
    let model = client(&server);
    let req = ChatRequest::new(vec![Message::user("hi")]);
    let overloaded = model.complete(&req).await.unwrap_err();
    assert!(matches!(&overloaded, LlmError::Http { status: 529, .. }) && overloaded.is_retryable());
    assert!(overloaded.to_string().contains("overloaded_error"));
    let auth = model.complete(&req).await.unwrap_err();
    assert!(matches!(&auth, LlmError::Http { status: 401, .. }) && !auth.is_retryable());
    let long = model.complete(&req).await.unwrap_err();
    assert!(matches!(long, LlmError::ContextOverflow { .. }), "{long:?}");
}
