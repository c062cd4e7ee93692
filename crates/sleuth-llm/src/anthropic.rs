//! The Anthropic Messages API client.
//!
//! Differences from the OpenAI shape that this client absorbs: the system prompt is a
//! top-level `system` field; messages must alternate user/assistant, so consecutive
//! messages of one role are merged; `max_tokens` is required (we default it);
//! temperature is limited to [0, 1]; stop sequences go in `stop_sequences`. Output
//! constraints (JSON schema, GBNF) are not sent: the agents validate text themselves.
//! Native tool calls go back in the API's own form: the assistant turn's text and
//! `tool_use` blocks (with their ids), then a user turn that opens with one
//! `tool_result` block per call naming its `tool_use_id` (see `Turn::wire`).
//!
//! Usage is normalized to the OpenAI convention used throughout sleuth:
//! `input_tokens` counts the whole prompt, including prompt-cache reads and writes,
//! which Anthropic reports separately.
//!
//! # Prompt caching (ours, on Anthropic's explicit prompt caching)
//!
//! Anthropic caches a prompt prefix only where a content block is marked
//! `cache_control: {"type": "ephemeral"}` (a *breakpoint*; at most four per request);
//! a later request that starts with a written prefix reads it at a tenth of the input
//! price, and writing costs 1.25x (docs/prices.md). The agent loops resend a growing,
//! stable prefix: every turn is the system prompt, the whole conversation so far, and
//! one new user turn (observations, reminders). So by default the client marks three
//! places (`cache_breakpoints`):
//!
//! 1. **the system prompt**, the same on every turn of an episode (tools, which the
//!    provider caches before it, are covered by it);
//! 2. **the latest user turn**, which writes the whole prompt so far: the next request
//!    starts with exactly it;
//! 3. **the user turn before that**, which is where the previous request wrote, so this
//!    request reads it at one of its own breakpoints rather than relying on the
//!    provider's lookback over earlier block boundaries (about 20 blocks).
//!
//! A prefix shorter than the model's minimum (1,024 or more tokens) is not cached and
//! costs nothing extra. A compacted context (`compact=K`) rewrites the turn after the
//! system prompt every turn, so there only the system prompt is read, unless
//! `compact_slack=S` holds the compacted prefix fixed for S turns. Marks change no
//! text: with `anthropic:MODEL?prompt_cache=off` ([`AnthropicConfig::prompt_cache`])
//! the same turns go as plain strings and nothing is cached.

use super::http::{self, CallContext};
use super::secret::ApiKey;
use super::types::{plausible, TokenCount};
use super::{ChatModel, ChatRequest, ChatResponse, FinishReason, LlmError, Role, ToolCall, Usage};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The host root, as the official SDKs take it; `/v1/messages` is appended.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// The host root, e.g. `https://api.anthropic.com` (as in the official SDKs);
    /// `/v1/messages` is appended. A base ending in `/v1` is accepted too.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    pub timeout: Duration,
    /// Sent when a request has no `max_tokens` (the API requires one).
    pub default_max_tokens: u32,
    pub name: String,
    /// Mark the stable prefix with `cache_control` breakpoints (see the module
    /// documentation); on by default.
    pub prompt_cache: bool,
    /// The longest reply body read (see [`http::DEFAULT_MAX_REPLY_BYTES`]).
    pub max_reply_bytes: usize,
}

impl AnthropicConfig {
    pub fn new(model: impl Into<String>) -> AnthropicConfig {
        let model = model.into();
        AnthropicConfig {
            name: format!("anthropic:{model}"),
            base_url: ANTHROPIC_BASE_URL.into(),
            model,
            api_key: None,
            timeout: Duration::from_secs(120),
            default_max_tokens: 1024,
            prompt_cache: true,
            max_reply_bytes: http::DEFAULT_MAX_REPLY_BYTES,
        }
    }
    pub fn max_reply_bytes(mut self, n: usize) -> Self {
        self.max_reply_bytes = n;
        self
    }
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_string();
        self
    }
    pub fn api_key(mut self, key: Option<ApiKey>) -> Self {
        self.api_key = key;
        self
    }
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
    pub fn default_max_tokens(mut self, n: u32) -> Self {
        self.default_max_tokens = n;
        self
    }
    pub fn prompt_cache(mut self, on: bool) -> Self {
        self.prompt_cache = on;
        self
    }
}

pub struct AnthropicClient {
    config: AnthropicConfig,
    http: reqwest::Client,
    url: String,
    /// The server refused a request with cache marks and took it without: marks are not
    /// sent to it again.
    marks_refused: AtomicBool,
}

impl std::fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("config", &self.config)
            .finish()
    }
}

impl AnthropicClient {
    pub fn new(config: AnthropicConfig) -> Result<AnthropicClient, LlmError> {
        let http = http::client(config.timeout)?;
        let url = super::endpoint::anthropic_messages_url(&config.base_url);
        Ok(AnthropicClient {
            config,
            http,
            url,
            marks_refused: AtomicBool::new(false),
        })
    }

    /// The JSON body for `request`, with the prompt-cache marks unless they are off.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        self.body(request, self.config.prompt_cache)
    }

    fn body(&self, request: &ChatRequest, cache: bool) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let turns = merged_turns(&request.messages);
        let marked = if cache {
            cache_breakpoints(&turns)
        } else {
            Vec::new()
        };
        let messages: Vec<Value> = turns
            .into_iter()
            .enumerate()
            .map(|(i, turn)| turn.wire(marked.contains(&i), &request.tools))
            .collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(self.config.model));
        body.insert(
            "max_tokens".into(),
            json!(request.max_tokens.unwrap_or(self.config.default_max_tokens)),
        );
        if !system.is_empty() {
            let text = system.join("\n\n");
            let system = if cache && !text.trim().is_empty() {
                json!([cached_text(text)])
            } else {
                json!(text)
            };
            body.insert("system".into(), system);
        }
        body.insert("messages".into(), Value::Array(messages));
        body.insert(
            "temperature".into(),
            json!(request.temperature.clamp(0.0, 1.0)),
        );
        if !request.stop.is_empty() {
            body.insert("stop_sequences".into(), json!(request.stop));
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema()}))
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        Value::Object(body)
    }
}

/// The merged turns that end with a prompt-cache breakpoint: the latest user turn and
/// the user turn before it, latest first (the system prompt is the third breakpoint;
/// why these, in the module documentation). Never more than the API's four, and never
/// an empty text (the API refuses `cache_control` on an empty block).
fn cache_breakpoints(turns: &[Turn]) -> Vec<usize> {
    turns
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, t)| t.role == Role::User && !t.is_empty())
        .map(|(i, _)| i)
        .take(2)
        .collect()
}

/// One turn of the Messages API: a role, its text, and the native tool blocks (an
/// assistant's `tool_use`s, a user turn's `tool_result`s).
#[derive(Debug, Clone, PartialEq)]
struct Turn {
    role: Role,
    text: String,
    /// Assistant turns: the calls made, in order.
    calls: Vec<ToolCall>,
    /// User turns: the results answered, `(tool_use_id, content)` in order.
    results: Vec<(String, String)>,
}

impl Turn {
    fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.calls.is_empty() && self.results.is_empty()
    }

    /// The turn on the wire. A turn of text alone is a string, as it always was (one
    /// marked text block when it ends a cached prefix). A turn with tool blocks is a
    /// list: an assistant's text then its `tool_use` blocks; a user's `tool_result`
    /// blocks first (the API takes text only after them), then its text. A marked list
    /// carries `cache_control` on its last block.
    fn wire(self, marked: bool, tools: &[crate::ToolSpec]) -> Value {
        if self.calls.is_empty() && self.results.is_empty() {
            return match marked {
                true => json!({"role": self.role, "content": [cached_text(self.text)]}),
                false => json!({"role": self.role, "content": self.text}),
            };
        }
        let text =
            (!self.text.trim().is_empty()).then(|| json!({"type": "text", "text": self.text}));
        let mut blocks: Vec<Value> = Vec::new();
        if self.role == Role::Assistant {
            blocks.extend(text);
            blocks.extend(self.calls.iter().map(|c| {
                json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.input_object(tools)})
            }));
        } else {
            blocks.extend(self.results.into_iter().map(|(id, content)| {
                json!({"type": "tool_result", "tool_use_id": id, "content": content})
            }));
            blocks.extend(text);
        }
        if let (true, Some(Value::Object(last))) = (marked, blocks.last_mut()) {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        json!({"role": self.role, "content": blocks})
    }
}

/// The conversation as the API's alternating turns. Tool results are user turns. Runs
/// of one role merge (the API rejects two user, or two assistant, turns in a row):
/// texts join with a blank line, tool blocks keep their order. Empty texts are left out
/// first: the API rejects a message with empty content, and an empty reply (thinking
/// only, cut at `max_tokens`) is one; a message with tool blocks is never empty.
fn merged_turns(messages: &[crate::Message]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for m in messages.iter().filter(|m| m.role != Role::System) {
        let role = match m.role {
            Role::Tool => Role::User,
            other => other,
        };
        let (text, results) = match m.role {
            Role::Tool => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                (String::new(), vec![(id, m.content.clone())])
            }
            _ => (m.content.clone(), Vec::new()),
        };
        let next = Turn {
            role,
            text,
            calls: m.tool_calls.clone(),
            results,
        };
        if next.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => {
                if !next.text.trim().is_empty() {
                    if !last.text.trim().is_empty() {
                        last.text.push_str("\n\n");
                    }
                    last.text.push_str(&next.text);
                }
                last.calls.extend(next.calls);
                last.results.extend(next.results);
            }
            _ => turns.push(next),
        }
    }
    turns
}

/// One text block that ends a cacheable prefix.
fn cached_text(text: String) -> Value {
    json!({"type": "text", "text": text, "cache_control": {"type": "ephemeral"}})
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireBlock {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    /// `tool_use` blocks: the call's id, the tool's name and its input object.
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: TokenCount,
    #[serde(default)]
    output_tokens: TokenCount,
    #[serde(default)]
    cache_read_input_tokens: TokenCount,
    #[serde(default)]
    cache_creation_input_tokens: TokenCount,
}

pub(crate) fn parse_response(body: &str, provider: &str) -> Result<ChatResponse, LlmError> {
    let decode = |message: String| LlmError::Decode {
        provider: provider.to_string(),
        message,
        raw: http::quote(body),
    };
    let value: Value = serde_json::from_str(body).map_err(|e| decode(format!("not JSON: {e}")))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(decode(http::error_message(body)));
    }
    let wire: WireResponse =
        serde_json::from_value(value).map_err(|e| decode(format!("not a message: {e}")))?;
    let text: String = wire
        .content
        .iter()
        .filter(|b| b.kind.as_deref().unwrap_or("text") == "text")
        .filter_map(|b| b.text.as_deref())
        .collect();
    let calls: Vec<ToolCall> = wire
        .content
        .iter()
        .filter(|b| b.kind.as_deref() == Some("tool_use"))
        .filter_map(|b| {
            let input = b.input.clone().unwrap_or(Value::Null);
            let call = ToolCall::from_input(b.name.as_deref()?, &input);
            Some(call.with_id(b.id.clone().unwrap_or_default()))
        })
        .collect();
    let u = wire.usage.unwrap_or_default();
    let counts = plausible([
        &u.input_tokens,
        &u.output_tokens,
        &u.cache_read_input_tokens,
        &u.cache_creation_input_tokens,
    ]);
    let [fresh, output, read, write] = counts.unwrap_or_default();
    let finish_reason = match wire.stop_reason.as_deref() {
        None | Some("end_turn") | Some("stop_sequence") => FinishReason::Stop,
        Some("max_tokens") | Some("model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::Stop,
        Some("refusal") => FinishReason::Refusal,
        Some(_) => FinishReason::Other,
    };
    Ok(ChatResponse {
        text,
        usage: Usage {
            input_tokens: fresh + read + write,
            output_tokens: output,
            cached_input_tokens: read,
            cache_write_tokens: write,
        },
        usage_unknown: counts.is_none(),
        finish_reason,
        cached: false,
        constraint_dropped: false,
        tool_calls: calls,
        cache_marks_dropped: false,
        batched: false,
    })
}

#[async_trait]
impl ChatModel for AnthropicClient {
    fn name(&self) -> &str {
        &self.config.name
    }

    /// The endpoint, model and the options that change the body.
    fn cache_identity(&self) -> Option<String> {
        let c = &self.config;
        Some(format!(
            "anthropic-messages {} model={} prompt_cache={} default_max_tokens={}",
            self.url, c.model, c.prompt_cache, c.default_max_tokens
        ))
    }

    /// Sends the request with its prompt-cache marks. A server that speaks the Messages
    /// API but not its content blocks (a gateway translating to another backend) may
    /// refuse them; the marks stop only on evidence (see [`marks_refusal`]): then the
    /// request is sent as plain strings, and when that succeeds marks are not sent to
    /// this server again (one warning), and every reply without them is marked
    /// [`ChatResponse::cache_marks_dropped`] (counted per record).
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let refused_before = self.marks_refused.load(Ordering::Relaxed);
        let marks = self.config.prompt_cache && !refused_before;
        let (body, dropped) = match self.post(&self.body(request, marks)).await {
            Ok(body) => (body, self.config.prompt_cache && refused_before),
            Err(e) if marks => self.without_marks(request, e).await?,
            Err(e) => return Err(e),
        };
        let mut response = parse_response(&body, &self.config.name)
            .map_err(|e| http::redact_error(e, self.config.api_key.as_ref()))?;
        response.cache_marks_dropped = dropped;
        Ok(http::finish_response(
            response,
            self.config.api_key.as_ref(),
            &request.stop,
        ))
    }
}

impl AnthropicClient {
    /// After a marked request failed with `e`: the reply body of the same request sent
    /// without marks when the failure is a refusal of the marks, else `e` (or the
    /// repeat's own error) for the retry layer to judge like any other. A 500 that names
    /// the body is sent once more as it was: only when it repeats does the plain request
    /// go, and only when that succeeds do the marks stop. Returns the body and whether
    /// it came without the marks.
    async fn without_marks(
        &self,
        request: &ChatRequest,
        e: LlmError,
    ) -> Result<(String, bool), LlmError> {
        match marks_refusal(&e) {
            MarksRefusal::No => return Err(e),
            MarksRefusal::Certain => {}
            MarksRefusal::IfRepeated => {
                if let Ok(body) = self.post(&self.body(request, true)).await {
                    return Ok((body, false));
                }
            }
        }
        // If this fails too, its error is the one that matters.
        let body = self.post(&self.body(request, false)).await?;
        if !self.marks_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                model = %self.config.name,
                error = %e,
                "the server refused prompt-cache marks; sending plain text from now on"
            );
        }
        Ok((body, true))
    }

    async fn post(&self, body: &Value) -> Result<String, LlmError> {
        let ctx = CallContext {
            provider: &self.config.name,
            key: self.config.api_key.as_ref(),
            timeout: self.config.timeout,
            max_reply_bytes: self.config.max_reply_bytes,
        };
        let mut builder = self
            .http
            .post(&self.url)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .json(body);
        if let Some(key) = &self.config.api_key {
            builder = builder.header("x-api-key", key.expose());
        }
        http::send(builder, &ctx).await
    }
}

/// What a failed marked request says about the marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarksRefusal {
    /// Nothing: authentication, a missing endpoint or model, a rate limit, a timeout, an
    /// overloaded or failing server (any 5xx that does not name the body). The error is
    /// retried as it is, marks and all.
    No,
    /// A bad request (400, 422) that names the content blocks or `cache_control`.
    Certain,
    /// A 500 that names the body (a gateway's validation error from the backend it
    /// translates to): a refusal only if it repeats.
    IfRepeated,
}

/// Words of a refusal that is about the message form: Anthropic's own (`cache_control`,
/// content blocks) and the validation errors of gateways (LiteLLM passing on
/// llama-cpp-python's `messages.0.content` errors).
const BODY_WORDING: [&str; 6] = [
    "cache_control",
    "content block",
    "ephemeral",
    ".content",
    "validation error",
    "input should be a valid string",
];

fn marks_refusal(e: &LlmError) -> MarksRefusal {
    let LlmError::Http {
        status, message, ..
    } = e
    else {
        return MarksRefusal::No;
    };
    let m = message.to_ascii_lowercase();
    if !BODY_WORDING.iter().any(|w| m.contains(w)) {
        return MarksRefusal::No;
    }
    match status {
        400 | 422 => MarksRefusal::Certain,
        500 => MarksRefusal::IfRepeated,
        _ => MarksRefusal::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoints_go_on_the_last_two_nonempty_user_turns() {
        let turns = |roles: &str| -> Vec<Turn> {
            roles
                .chars()
                .map(|c| {
                    let (role, text) = match c {
                        'u' => (Role::User, "text"),
                        'e' => (Role::User, " "),
                        _ => (Role::Assistant, "text"),
                    };
                    Turn {
                        role,
                        text: text.into(),
                        calls: Vec::new(),
                        results: Vec::new(),
                    }
                })
                .collect()
        };
        assert_eq!(cache_breakpoints(&turns("")), Vec::<usize>::new());
        assert_eq!(cache_breakpoints(&turns("a")), Vec::<usize>::new());
        assert_eq!(cache_breakpoints(&turns("u")), [0]);
        assert_eq!(cache_breakpoints(&turns("uaua")), [2, 0]);
        assert_eq!(cache_breakpoints(&turns("uauauau")), [6, 4]);
        assert_eq!(cache_breakpoints(&turns("uauae")), [2, 0]);
        let client = AnthropicClient::new(AnthropicConfig::new("m")).unwrap();
        let body = client.request_body(&ChatRequest::new(vec![
            crate::Message::system(""),
            crate::Message::user("hi"),
        ]));
        assert_eq!(body["system"], "", "no cache_control on an empty block");
    }

    #[test]
    fn empty_turns_are_left_out_and_marks_stop_only_on_evidence() {
        let client = AnthropicClient::new(AnthropicConfig::new("m")).unwrap();
        let body = client.request_body(&ChatRequest::new(vec![
            crate::Message::user("q"),
            crate::Message::assistant(""),
            crate::Message::user("Your reply was empty."),
        ]));
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1, "the two user turns merge: {body}");
        assert_eq!(messages[0]["role"], "user");

        let http = |status: u16, message: &str| LlmError::Http {
            provider: "a".into(),
            status,
            message: message.into(),
            retry_after: None,
        };
        use MarksRefusal::*;
        for (e, want) in [
            (http(500, "Internal server error (api_error)"), No),
            (http(529, "Overloaded (overloaded_error)"), No),
            (
                http(500, "1 validation error: messages.0.content"),
                IfRepeated,
            ),
            (
                http(
                    400,
                    "system.0.cache_control: Extra inputs are not permitted",
                ),
                Certain,
            ),
            (
                http(400, "messages.1: all messages must have non-empty content"),
                No,
            ),
            (http(401, "cache_control"), No),
        ] {
            assert_eq!(marks_refusal(&e), want, "{e}");
        }
    }

    #[test]
    fn tool_use_blocks_become_tool_calls() {
        let body = r#"{"content":[{"type":"text","text":"Looking."},
            {"type":"tool_use","id":"t1","name":"search","input":{"query":"Charles Mingus"}},
            {"type":"tool_use","id":"t2","name":"lookup","input":{"title":"Tucson, Arizona"}}],
            "stop_reason":"tool_use"}"#;
        let r = parse_response(body, "a").unwrap();
        assert_eq!(r.text, "Looking.");
        assert_eq!(r.finish_reason, FinishReason::Stop);
        assert_eq!(
            r.tool_calls,
            [
                ToolCall {
                    input: r#"{"query":"Charles Mingus"}"#.into(),
                    ..ToolCall::new("search", "Charles Mingus").with_id("t1")
                },
                ToolCall {
                    input: r#"{"title":"Tucson, Arizona"}"#.into(),
                    ..ToolCall::new("lookup", "Tucson, Arizona").with_id("t2")
                },
            ]
        );
    }

    #[test]
    fn usage_includes_cache_reads_and_writes_and_stop_reasons_map() {
        let body = r#"{"content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Paris"}],
            "stop_reason":"max_tokens",
            "usage":{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":100,"cache_creation_input_tokens":20}}"#;
        let r = parse_response(body, "a").unwrap();
        assert_eq!(r.text, "Paris");
        assert_eq!(r.finish_reason, FinishReason::Length);
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 125,
                output_tokens: 1,
                cached_input_tokens: 100,
                cache_write_tokens: 20
            }
        );
        let minimal = parse_response(r#"{"content":[{"text":"x"}]}"#, "a").unwrap();
        assert_eq!(
            (minimal.text.as_str(), minimal.finish_reason),
            ("x", FinishReason::Stop)
        );
        let err = parse_response(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            "a",
        );
        assert!(matches!(err, Err(LlmError::Decode { .. })));
    }
}
