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
    /// The reply was longer than the configured cap (`--max-reply-bytes`): it was not
    /// read further, and the call failed (a rerun would get the same).
    #[error("{provider}: the reply is longer than the {limit}-byte limit, so it was not read (raise it with {} if the model is meant to write that much)", crate::knob::Knob::MaxReplyBytes)]
    TooLarge { provider: String, limit: usize },
}

/// Wording of server errors that no retry can fix although some servers send them
/// with a 5xx status: request validation (pydantic/FastAPI servers such as
/// llama-cpp-python answer 500 for it) and unknown models (gateways, Ollama).
const INVALID_WORDING: [&str; 4] = [
    "validation error",
    "input should be",
    "field required",
    "extra inputs are not permitted",
];
const UNKNOWN_MODEL_WORDING: [&str; 6] = [
    "not found",
    "not_found",
    "does not exist",
    "no such model",
    "unknown model",
    "invalid model",
];

impl LlmError {
    /// Whether trying the same request again can succeed: rate limits, server errors,
    /// dropped connections, timeouts and garbled bodies are transient; auth, bad
    /// requests, unknown models, exhausted quota and configuration are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => {
                (*status == 429 || *status == 408 || (500..600).contains(status))
                    && self.permanent_reason().is_none()
            }
            LlmError::Timeout { .. } | LlmError::Connection { .. } | LlmError::Decode { .. } => {
                true
            }
            LlmError::ContextOverflow { .. }
            | LlmError::Config(_)
            | LlmError::Refused(_)
            | LlmError::TooLarge { .. } => false,
        }
    }

    /// Why an HTTP error cannot succeed on retry, for the record; `None` when it might
    /// (or when the error is not an HTTP status, whose message already says enough).
    pub fn permanent_reason(&self) -> Option<&'static str> {
        let LlmError::Http {
            status, message, ..
        } = self
        else {
            return None;
        };
        let lower = message.to_ascii_lowercase();
        if INVALID_WORDING.iter().any(|w| lower.contains(w)) {
            return Some("the server rejected the request as invalid");
        }
        if lower.contains("model") && UNKNOWN_MODEL_WORDING.iter().any(|w| lower.contains(w)) {
            return Some("the server does not know the model");
        }
        Some(match status {
            429 if lower.contains("insufficient_quota") => "the account's quota is exhausted",
            401 | 403 => "the server refused the credentials",
            404 => "no such endpoint or model at this URL",
            400 | 405 | 413 | 415 | 422 => "the server rejected the request as invalid",
            s if (400..500).contains(s) && *s != 408 && *s != 429 => {
                "the server rejected the request"
            }
            _ => return None,
        })
    }

    /// The same error with `note` appended to its message (statuses, connections and
    /// decoding errors carry one; others are returned unchanged).
    pub fn with_note(self, note: &str) -> LlmError {
        let add = |m: String| format!("{m} ({note})");
        match self {
            LlmError::Http {
                provider,
                status,
                message,
                retry_after,
            } => LlmError::Http {
                provider,
                status,
                message: add(message),
                retry_after,
            },
            LlmError::Connection { provider, message } => LlmError::Connection {
                provider,
                message: add(message),
            },
            LlmError::Decode {
                provider,
                message,
                raw,
            } => LlmError::Decode {
                provider,
                message: add(message),
                raw,
            },
            other => other,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, message: &str) -> LlmError {
        LlmError::Http {
            provider: "p".into(),
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    #[test]
    fn validation_failures_and_unknown_models_are_final_even_as_500() {
        for (e, why) in [
            (
                http(500, "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object'"),
                "invalid",
            ),
            (http(500, "litellm.NotFoundError: model_not_found"), "model"),
            (http(400, "Invalid model name passed in model=x"), "model"),
            (http(404, "Not Found"), "no such endpoint"),
            (http(422, "bad"), "invalid"),
            (http(401, "nope"), "credentials"),
            (http(429, "You exceeded your current quota (insufficient_quota)"), "quota"),
        ] {
            assert!(!e.is_retryable(), "{e}");
            assert!(e.permanent_reason().unwrap().contains(why), "{e}");
        }
        for e in [
            http(500, "Internal Server Error"),
            http(503, "overloaded"),
            http(429, "slow down"),
            http(408, ""),
        ] {
            assert!(e.is_retryable(), "{e}");
            assert_eq!(e.permanent_reason(), None, "{e}");
        }
    }

    #[test]
    fn notes_are_appended_to_messages() {
        let e = http(400, "bad").with_note("not retried: x");
        assert_eq!(e.to_string(), "p returned HTTP 400: bad (not retried: x)");
        let t = LlmError::Timeout {
            provider: "p".into(),
            after: Duration::from_secs(1),
        };
        assert_eq!(t.clone().with_note("n").to_string(), t.to_string());
    }
}
