//! The Anthropic Messages client against the mock server: exact request shape, usage
//! and error format.

use serde_json::json;
use sleuth::llm::{
    AnthropicClient, AnthropicConfig, ApiKey, ChatModel, ChatRequest, LlmError, Message,
};
use sleuth_testkit::{MockServer, Reply};
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
    assert_eq!(
        seen.body,
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "Context: Dune.\n\nWho wrote it?"},
                {"role": "assistant", "content": "Thought:"}
            ],
            "temperature": 0.5,
            "stop_sequences": ["Observation:"]
        })
    );
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
