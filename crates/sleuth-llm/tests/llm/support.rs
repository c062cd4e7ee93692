//! Shared helpers: model options pointed at a mock server, with ms-scale backoff.

use sleuth_llm::{
    ChatModel, ChatRequest, EnvSource, Message, ModelOptions, ModelSpec, RetryPolicy, Usage,
};
use sleuth_testkit::MockServer;
use std::time::Duration;

/// Fast retries so the suite stays quick; Retry-After is still honoured in full.
pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        max_retry_after: Duration::from_secs(5),
    }
}

/// Options with an isolated environment and quick retries.
pub fn options() -> ModelOptions {
    ModelOptions {
        timeout: Duration::from_secs(5),
        retry: fast_retry(4),
        env: EnvSource::isolated(),
        ..ModelOptions::default()
    }
}

/// `openai-compat:` spec for the mock server.
pub fn compat_spec(server: &MockServer, model: &str) -> ModelSpec {
    ModelSpec::parse(&format!("openai-compat:{}#{model}", server.url())).unwrap()
}

pub fn question(text: &str) -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Answer briefly."),
        Message::user(text),
    ])
}

/// Runs a growing conversation of `turns` requests, as an agent loop does (system
/// prompt 9 words, question 10, then each exchange 3 + 9 words when the model answers
/// in 3), and returns each call's usage.
pub async fn growing_conversation(model: &dyn ChatModel, turns: usize) -> Vec<Usage> {
    let mut messages = vec![
        Message::system("You are a careful researcher who answers multi-hop questions."),
        Message::user("Question: in which city was the author of Dune born?"),
    ];
    let mut usages = Vec::new();
    for i in 0..turns {
        let r = model
            .complete(&ChatRequest::new(messages.clone()))
            .await
            .unwrap();
        usages.push(r.usage);
        messages.push(Message::assistant(r.text));
        messages.push(Message::user(format!(
            "Observation {i}: Frank Herbert was born in Tacoma, Washington."
        )));
    }
    usages
}
