//! Model-call errors, classified so middleware can decide what to retry.

use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// The server answered with a non-success status.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("{provider}: request timed out after {after:?}")]
    Timeout { provider: String, after: Duration },
    #[error("{provider}: cannot connect: {message}")]
    Connection { provider: String, message: String },
    /// The response arrived but could not be decoded; `raw` keeps what came back.
    #[error("{provider}: malformed response: {message}")]
    Decode {
        provider: String,
        message: String,
        raw: String,
    },
    /// The prompt no longer fits the model's context window.
    #[error("{provider}: context window exceeded: {message}")]
    ContextOverflow { provider: String, message: String },
    /// Misconfiguration (bad model spec, missing key): never retried.
    #[error("{0}")]
    Config(String),
    /// A guard stopped the call (e.g. the run's cost budget).
    #[error("{0}")]
    Refused(String),
}

impl LlmError {
    /// Whether trying the same request again can succeed: rate limits, server errors,
    /// dropped connections, timeouts and garbled bodies are transient; auth, bad
    /// requests, exhausted quota and configuration are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http {
                status, message, ..
            } => {
                let quota = message.contains("insufficient_quota");
                (*status == 429 && !quota) || *status == 408 || (500..600).contains(status)
            }
            LlmError::Timeout { .. } | LlmError::Connection { .. } | LlmError::Decode { .. } => {
                true
            }
            LlmError::ContextOverflow { .. } | LlmError::Config(_) | LlmError::Refused(_) => false,
        }
    }

    /// The server's requested wait, when it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
