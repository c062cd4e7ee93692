//! The HTTP plumbing shared by the provider clients: sending a JSON request, turning
//! transport failures and error statuses into [`LlmError`]s (with Retry-After and
//! context-overflow detection), and keeping the API key out of every message: a body is
//! redacted as soon as it has arrived, before it is parsed or cut for a quote (a key
//! straddling the cut would otherwise survive in part).

use super::secret::{redact, redact_response, ApiKey};
use super::LlmError;
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::{Duration, SystemTime};

/// Longest slice of a server's body quoted in an error.
const QUOTE_LIMIT: usize = 600;

/// The default cap on a reply's body (4 MiB): a thousand times a long completion, and
/// small enough that a runaway or hostile server cannot fill memory or a records file.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 4 << 20;

/// Who is being called, for error messages and redaction.
pub(crate) struct CallContext<'a> {
    pub provider: &'a str,
    pub key: Option<&'a ApiKey>,
    pub timeout: Duration,
    /// The longest body read; a longer one fails the call ([`LlmError::TooLarge`]).
    pub max_reply_bytes: usize,
}

/// Builds the shared reqwest client with the request timeout. Redirects are not
/// followed: reqwest drops `Authorization` when a redirect leaves the host but not
/// other key headers (Anthropic's `x-api-key`), and a 307 would resend the prompt too.
/// A key goes to the configured base URL and nowhere else.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .build()
        .map_err(|e| LlmError::Config(format!("cannot build HTTP client: {e}")))
}

/// Sends `request` and returns the body of a successful response; every failure is
/// mapped to an [`LlmError`] with the key redacted.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    ctx: &CallContext<'_>,
) -> Result<String, LlmError> {
    let response = accepted(request, ctx).await?;
    let body = read_capped(response, ctx).await?;
    Ok(redact(&body, ctx.key))
}

/// Sends `request` and returns the response, its body unread, when the status is a
/// success; any other status is read (capped) and turned into its [`LlmError`].
pub(crate) async fn accepted(
    request: reqwest::RequestBuilder,
    ctx: &CallContext<'_>,
) -> Result<reqwest::Response, LlmError> {
    let response = request.send().await.map_err(|e| transport_error(&e, ctx))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let headers = response.headers().clone();
    let body = read_capped(response, ctx).await?;
    let body = redact(&body, ctx.key);
    if (300..400).contains(&status) {
        let to = headers
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("(no Location)");
        // Redacted before it is cut, like a body.
        let to = quote(&redact(to, ctx.key));
        Err(LlmError::Http {
            provider: ctx.provider.to_string(),
            status,
            message: redact(
                &format!("redirected to {to}; sleuth does not follow redirects (a key must not reach another address); if you trust that server, make it the base URL"),
                ctx.key,
            ),
            retry_after: None,
        })
    } else {
        Err(status_error(status, &headers, &body, ctx))
    }
}

/// The body, read chunk by chunk and given up as soon as it passes the cap (a server
/// that announces a longer one is not read at all), so memory stays bounded.
async fn read_capped(
    mut response: reqwest::Response,
    ctx: &CallContext<'_>,
) -> Result<String, LlmError> {
    let too_large = || LlmError::TooLarge {
        provider: ctx.provider.to_string(),
        limit: ctx.max_reply_bytes,
    };
    if response
        .content_length()
        .is_some_and(|n| n > ctx.max_reply_bytes as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(&e, ctx))?
    {
        if body.len() + chunk.len() > ctx.max_reply_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// Removes the key from every text an error carries (a server may echo it anywhere,
/// even in a 200 body that then fails to parse).
pub(crate) fn redact_error(e: LlmError, key: Option<&ApiKey>) -> LlmError {
    let Some(key) = key else { return e };
    let r = |s: String| key.redact(&s);
    match e {
        LlmError::Http {
            provider,
            status,
            message,
            retry_after,
        } => LlmError::Http {
            provider,
            status,
            message: r(message),
            retry_after,
        },
        LlmError::Connection { provider, message } => LlmError::Connection {
            provider,
            message: r(message),
        },
        LlmError::Decode {
            provider,
            message,
            raw,
        } => LlmError::Decode {
            provider,
            message: r(message),
            raw: r(raw),
        },
        LlmError::ContextOverflow { provider, message } => LlmError::ContextOverflow {
            provider,
            message: r(message),
        },
        LlmError::Config(m) => LlmError::Config(r(m)),
        LlmError::Refused(m) => LlmError::Refused(r(m)),
        e @ (LlmError::Timeout { .. } | LlmError::TooLarge { .. }) => e,
    }
}

/// A transport failure (no usable response).
pub(crate) fn transport_error(e: &reqwest::Error, ctx: &CallContext<'_>) -> LlmError {
    let provider = ctx.provider.to_string();
    if e.is_timeout() {
        return LlmError::Timeout {
            provider,
            after: ctx.timeout,
        };
    }
    // reqwest's own message is terse; the source chain says what actually happened.
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    // The URL reqwest quotes may carry a gateway's key in its query string.
    if let Some(url) = e.url() {
        message = message.replace(url.as_str(), &super::endpoint::redact_query(url.as_str()));
    }
    let message = redact(&message, ctx.key);
    if e.is_body() || e.is_decode() {
        LlmError::Connection {
            provider,
            message: format!("response body broken off: {message}"),
        }
    } else {
        LlmError::Connection { provider, message }
    }
}

/// A non-success status: extracts the provider's error message and classifies it. The
/// body is redacted before the message is taken from it and cut.
pub(crate) fn status_error(
    status: u16,
    headers: &HeaderMap,
    body: &str,
    ctx: &CallContext<'_>,
) -> LlmError {
    let message = redact(&error_message(&redact(body, ctx.key)), ctx.key);
    let provider = ctx.provider.to_string();
    if (status == 400 || status == 413 || status == 422) && is_context_overflow(&message) {
        return LlmError::ContextOverflow { provider, message };
    }
    LlmError::Http {
        provider,
        status,
        message,
        retry_after: retry_after(headers, SystemTime::now()),
    }
}

/// `error.message` (+ its type/code) from OpenAI- or Anthropic-style error bodies, else
/// a quote of the raw body.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let err = parsed.as_ref().and_then(|v| v.get("error").or(Some(v)));
    if let Some(err) = err {
        // Some servers (llama.cpp, gateways) put a bare string under "error".
        if let Some(s) = err.as_str() {
            return quote(s);
        }
        if let Some(msg) = err.get("message").and_then(Value::as_str) {
            let kind = err
                .get("code")
                .and_then(Value::as_str)
                .or_else(|| err.get("type").and_then(Value::as_str));
            return match kind {
                Some(k) => quote(&format!("{msg} ({k})")),
                None => quote(msg),
            };
        }
    }
    if body.trim().is_empty() {
        "(empty body)".into()
    } else {
        quote(body.trim())
    }
}

pub(crate) fn quote(s: &str) -> String {
    if s.len() <= QUOTE_LIMIT {
        return s.to_string();
    }
    let mut end = QUOTE_LIMIT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

/// The wording servers use when a prompt does not fit: OpenAI and vLLM ("maximum
/// context length", `context_length_exceeded`), Anthropic ("prompt is too long"),
/// llama.cpp server ("exceeds the available context size").
fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "prompt is too long",
        "exceeds the available context size",
        "exceed_context_size",
        "too many tokens",
    ]
    .iter()
    .any(|p| m.contains(p))
}

/// The longest wait a server's header is read as: a day. A larger value (`1e20`, an
/// integer no `Duration` holds, a date decades ahead) is read as this rather than
/// overflowing, and the retry policy shortens it further
/// ([`RetryPolicy::max_retry_after`](super::middleware::RetryPolicy)), so no header
/// value can crash a run or stall it for long (hardening III, item 2).
pub(crate) const MAX_SERVER_WAIT: Duration = Duration::from_secs(86_400);

/// `secs` as a wait, bounded by [`MAX_SERVER_WAIT`]; `None` for a negative or
/// non-finite number.
fn bounded_wait(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0)
        .then(|| Duration::from_secs_f64(secs.min(MAX_SERVER_WAIT.as_secs_f64())))
}

/// The server's requested wait: `retry-after-ms` (OpenAI), else `retry-after` as
/// seconds (integer or decimal) or an HTTP date; at most [`MAX_SERVER_WAIT`].
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if let Some(wait) = bounded_wait(ms / 1000.0) {
            return Some(wait);
        }
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return bounded_wait(secs);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(MAX_SERVER_WAIT),
    )
}

/// What every provider does to a parsed reply: redact the key from its text and native
/// tool calls (a server that echoes it, even JSON-escaped, must not get it into records,
/// traces or the cache) and cut the text at the first stop sequence (servers differ in
/// how they honour `stop`).
pub(crate) fn finish_response(
    response: super::ChatResponse,
    key: Option<&ApiKey>,
    stop: &[String],
) -> super::ChatResponse {
    let mut response = redact_response(response, key);
    // A reply cut at a stop sequence ended there, whatever the server went on to do;
    // a refusal stays one.
    if super::quirks::cut_at_stop(&mut response.text, stop)
        && response.finish_reason != super::FinishReason::Refusal
    {
        response.finish_reason = super::FinishReason::Stop;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_accepts_seconds_milliseconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "0.5")]), now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "1"), ("retry-after-ms", "250")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(42));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &date)]), now),
            Some(Duration::from_secs(42))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(42));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        // Hardening III item 2: values no Duration holds are bounded, not a panic.
        for (name, value) in [
            ("retry-after", "1e20"),
            ("retry-after", "99999999999999999999"),
            ("retry-after-ms", "1e30"),
            ("retry-after", "1.7976931348623157e308"),
        ] {
            assert_eq!(
                retry_after(&headers(&[(name, value)]), now),
                Some(MAX_SERVER_WAIT),
                "{name}: {value}"
            );
        }
        let far = httpdate::fmt_http_date(now + Duration::from_secs(86_400 * 365 * 50));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &far)]), now),
            Some(MAX_SERVER_WAIT)
        );
        for bad in ["inf", "NaN", "-1e20"] {
            assert_eq!(
                retry_after(&headers(&[("retry-after", bad)]), now),
                None,
                "{bad}"
            );
        }
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn error_messages_from_each_provider_shape() {
        let openai = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        assert_eq!(
            error_message(openai),
            "You exceeded your current quota (insufficient_quota)"
        );
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(error_message(anthropic), "Overloaded (overloaded_error)");
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("upstream gone"), "upstream gone");
        assert_eq!(error_message(""), "(empty body)");
        assert!(error_message(&"x".repeat(5000)).ends_with("(5000 bytes)"));
    }

    #[test]
    fn context_overflow_is_recognised_across_servers() {
        let ctx = CallContext {
            provider: "p",
            key: None,
            timeout: Duration::from_secs(1),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
        };
        let h = HeaderMap::new();
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens.","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        ] {
            assert!(
                matches!(
                    status_error(400, &h, body, &ctx),
                    LlmError::ContextOverflow { .. }
                ),
                "{body}"
            );
        }
        let plain = status_error(400, &h, r#"{"error":{"message":"bad temperature"}}"#, &ctx);
        assert!(matches!(plain, LlmError::Http { status: 400, .. }));
    }
}
