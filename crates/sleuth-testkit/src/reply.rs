//! What the server sends back, and how a completion is rendered in each protocol.

use crate::cache::Cached;
use crate::prompt::Prompt;
use crate::ReceivedRequest;
use serde_json::{json, Value};
use std::time::Duration;

/// Which wire protocol a request used, decided by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `/v1/chat/completions` or `/chat/completions`.
    OpenAi,
    /// `/v1/messages` or `/messages`.
    Anthropic,
}

impl Protocol {
    /// The protocol served at `path`: exactly the paths real servers serve, so a client
    /// that doubles a segment (`/v1/v1/messages`) gets a 404 as it would in production.
    pub fn of_path(path: &str) -> Option<Protocol> {
        match path {
            "/v1/chat/completions" | "/chat/completions" => Some(Protocol::OpenAi),
            "/v1/messages" | "/messages" => Some(Protocol::Anthropic),
            _ => None,
        }
    }
}

/// The server's answer to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A well-formed completion whose text is this string, with usage numbers
    /// (whitespace-word counts of the prompt and the reply; with the prompt-cache
    /// emulation on, the cached counts as the provider reports them).
    Text(String),
    /// A 200 response whose body is exactly this JSON (for testing lenient parsing).
    Json(Value),
    /// A non-success status with an optional `Retry-After` (seconds) and a raw body.
    Status {
        code: u16,
        retry_after: Option<u64>,
        body: String,
    },
    /// Read the request, wait this long, then drop the connection without answering.
    Hang(Duration),
    /// Wait, then send the inner reply (a slow but healthy server).
    Delayed(Duration, Box<Reply>),
    /// Drop the connection right after reading the request.
    CloseConnection,
    /// A 200 response with a JSON content type and these raw bytes as body.
    Malformed(String),
    /// A 200 response that announces a full body but stops halfway and drops the
    /// connection.
    Truncated,
    /// A response as a real provider sent it (status, headers, raw body): see
    /// [`crate::Cassette`].
    Recorded(crate::Recorded),
    /// Inside a provider batch: the batch's window ended before this request ran (an
    /// OpenAI `batch_expired` error line, an Anthropic `expired` result). Sent on its
    /// own, a 504.
    Expired,
}

impl Reply {
    pub fn text(s: impl Into<String>) -> Reply {
        Reply::Text(s.into())
    }

    /// A plain status with an empty body.
    pub fn status(code: u16) -> Reply {
        Reply::Status {
            code,
            retry_after: None,
            body: String::new(),
        }
    }

    /// 429 with `Retry-After: secs` and an OpenAI-style rate-limit body.
    pub fn rate_limited(secs: u64) -> Reply {
        Reply::Status {
            code: 429,
            retry_after: Some(secs),
            body: openai_error_body("rate_limit_exceeded", "Rate limit reached; slow down."),
        }
    }

    /// An OpenAI-style error: `{"error": {"message", "type", "code"}}`.
    pub fn openai_error(code: u16, kind: &str, message: &str) -> Reply {
        Reply::Status {
            code,
            retry_after: None,
            body: openai_error_body(kind, message),
        }
    }

    /// An Anthropic-style error: `{"type": "error", "error": {"type", "message"}}`.
    pub fn anthropic_error(code: u16, kind: &str, message: &str) -> Reply {
        Reply::Status {
            code,
            retry_after: None,
            body: json!({"type": "error", "error": {"type": kind, "message": message}}).to_string(),
        }
    }

    pub fn delayed(after: Duration, reply: Reply) -> Reply {
        Reply::Delayed(after, Box::new(reply))
    }
}

fn openai_error_body(kind: &str, message: &str) -> String {
    json!({"error": {"message": message, "type": kind, "code": kind, "param": null}}).to_string()
}

fn words(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

/// The output-token limit the request sets (`max_completion_tokens` or `max_tokens`).
fn output_limit(body: &Value) -> Option<u64> {
    ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
}

/// `text` cut after its first `limit` words, as a server cuts a reply at the
/// output-token limit (words are this server's token unit); whether it was cut.
fn within(text: &str, limit: Option<u64>) -> (&str, bool) {
    let Some(limit) = limit.filter(|&n| words(text) > n) else {
        return (text, false);
    };
    let end = text
        .split_whitespace()
        .take(limit as usize)
        .last()
        .map_or(0, |w| {
            w.as_ptr() as usize - text.as_ptr() as usize + w.len()
        });
    (&text[..end], true)
}

/// The JSON body of a successful completion with text `text`, in `protocol`. The
/// prompt is counted in whitespace words of the system prompt and every message,
/// string or text blocks; `cached` (the emulation's verdict, when it is on) adds the
/// provider's cache fields. A reply longer than the request's output-token limit is
/// cut there and says so (`finish_reason: length`, `stop_reason: max_tokens`).
pub(crate) fn completion_body(
    protocol: Protocol,
    req: &ReceivedRequest,
    text: &str,
    cached: Option<Cached>,
) -> Value {
    let model = req.model().unwrap_or("mock-model");
    let (text, cut) = within(text, output_limit(&req.body));
    let (input, output) = (Prompt::of(&req.body).len(), words(text));
    let mut body = match protocol {
        Protocol::OpenAi => json!({
            "id": format!("chatcmpl-mock-{}", req.index),
            "object": "chat.completion",
            "created": 1_700_000_000u64,
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": if cut { "length" } else { "stop" }
            }],
            "usage": {
                "prompt_tokens": input,
                "completion_tokens": output,
                "total_tokens": input + output
            }
        }),
        Protocol::Anthropic => json!({
            "id": format!("msg_mock_{}", req.index),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": if cut { "max_tokens" } else { "end_turn" },
            "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": output}
        }),
    };
    if let Some(c) = cached {
        let usage = &mut body["usage"];
        match protocol {
            Protocol::OpenAi => {
                usage["prompt_tokens_details"] = json!({"cached_tokens": c.read});
            }
            // Anthropic's `input_tokens` leaves out what was read from or written to
            // the cache.
            Protocol::Anthropic => {
                usage["input_tokens"] = json!(input - c.read - c.write);
                usage["cache_read_input_tokens"] = json!(c.read);
                usage["cache_creation_input_tokens"] = json!(c.write);
            }
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn a_reply_is_cut_after_the_limits_last_word() {
        assert_eq!(within("one two  three four", Some(2)), ("one two", true));
        assert_eq!(within("one two", Some(2)), ("one two", false));
        assert_eq!(within("  lead word", Some(1)), ("  lead", true));
        assert_eq!(within("a b c", None), ("a b c", false));
    }
}
