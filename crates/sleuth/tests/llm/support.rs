//! Shared helpers: model options pointed at a mock server, with ms-scale backoff.

use sleuth::llm::{ChatRequest, EnvSource, Message, ModelOptions, ModelSpec, RetryPolicy};
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
