//! The OpenAI-compatible chat-completions client (OpenAI, vLLM, SGLang, Ollama,
//! llama.cpp server, LM Studio, gateways). Wire types are our own and lenient: every
//! response field is optional because real servers omit `id`, `created`, `usage` and
//! more; only a choice with a message is required.
//!
//! What the recorded OpenAI traffic showed (`crates/sleuth-testkit/cassettes/`): a
//! refusal comes as `message.refusal` with `content: null`, and is the reply (marked
//! [`FinishReason::Refusal`]); explicit prompt caching reports its writes in
//! `prompt_tokens_details.cache_write_tokens`, part of `prompt_tokens` like cached
//! reads; `finish_reason: length` is a truncated reply ([`FinishReason::Length`]).
//!
//! Native tool calls travel in the protocol's own form both ways: a reply's
//! `tool_calls` (with their ids) become [`ToolCall`]s, and a conversation that carries
//! them goes back as the assistant message with its `tool_calls` followed by one
//! `{"role": "tool", "tool_call_id", "content"}` message per call ([`wire_message`]).

use super::endpoint;
use super::http::{self, CallContext};
use super::quirks::{GrammarForm, MaxTokensField, Quirks, SchemaForm, SystemRole, ToolCallContent};
use super::secret::ApiKey;
use super::types::{plausible, TokenCount};
use super::{
    ChatModel, ChatRequest, ChatResponse, FinishReason, LlmError, Message, OutputConstraint, Role,
    ToolCall, ToolSpec, Usage,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Configuration of one OpenAI-compatible endpoint and model.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1` (the version included, as in the OpenAI SDKs);
    /// `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    pub timeout: Duration,
    pub quirks: Quirks,
    /// The name reported by [`ChatModel::name`] and used in errors and cache keys.
    pub name: String,
    /// The longest reply body read (see [`http::DEFAULT_MAX_REPLY_BYTES`]).
    pub max_reply_bytes: usize,
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        let base_url = base_url.into().trim_end_matches('/').to_string();
        let model = model.into();
        OpenAiConfig {
            name: format!("openai-compat:{base_url}#{model}"),
            base_url,
            model,
            api_key: None,
            timeout: Duration::from_secs(120),
            quirks: Quirks::generic(),
            max_reply_bytes: http::DEFAULT_MAX_REPLY_BYTES,
        }
    }
    pub fn max_reply_bytes(mut self, n: usize) -> Self {
        self.max_reply_bytes = n;
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
    pub fn quirks(mut self, q: Quirks) -> Self {
        self.quirks = q;
        self
    }
    pub fn name(mut self, n: impl Into<String>) -> Self {
        self.name = n.into();
        self
    }
}

pub struct OpenAiClient {
    config: OpenAiConfig,
    http: reqwest::Client,
    url: String,
    /// Constraint forms this server refused; they are not sent again (see [`Self::complete`]).
    refused_schema: AtomicBool,
    refused_grammar: AtomicBool,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("config", &self.config)
            .finish()
    }
}

/// Which kind of output constraint a request carries on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Schema,
    Grammar,
}

impl OpenAiClient {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiClient, LlmError> {
        let http = http::client(config.timeout)?;
        let url = endpoint::openai_chat_url(&config.base_url);
        Ok(OpenAiClient {
            config,
            http,
            url,
            refused_schema: AtomicBool::new(false),
            refused_grammar: AtomicBool::new(false),
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    fn refused(&self, kind: Sent) -> &AtomicBool {
        match kind {
            Sent::Schema => &self.refused_schema,
            Sent::Grammar => &self.refused_grammar,
        }
    }

    /// The constraint kind `request` would carry under this preset, refusals aside.
    fn form_for(&self, request: &ChatRequest) -> Option<Sent> {
        let q = &self.config.quirks;
        match &request.constraint {
            Some(OutputConstraint::JsonSchema(_)) if q.schema != SchemaForm::Omit => {
                Some(Sent::Schema)
            }
            Some(OutputConstraint::Grammar(_)) if q.grammar != GrammarForm::Omit => {
                Some(Sent::Grammar)
            }
            _ => None,
        }
    }

    /// The JSON body for `request` under this endpoint's quirks.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        self.body(request, true)
    }

    fn body(&self, request: &ChatRequest, constrain: bool) -> Value {
        let q = &self.config.quirks;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.config.model));
        body.insert("messages".into(), wire_messages(request, q));
        if q.temperature {
            body.insert("temperature".into(), json!(request.temperature));
        }
        if let Some(n) = request.max_tokens {
            let field = match q.max_tokens_field {
                MaxTokensField::MaxTokens => "max_tokens",
                MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            };
            body.insert(field.into(), json!(n));
        }
        let limit = q.max_stop.unwrap_or(usize::MAX);
        if !request.stop.is_empty() && limit > 0 {
            let stops: Vec<&String> = request.stop.iter().take(limit).collect();
            body.insert("stop".into(), json!(stops));
        }
        // Tools are the action channel, not an output constraint: a server that refused
        // a constraint still gets them.
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.input_schema()
                    }})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            body.insert("parallel_tool_calls".into(), json!(true));
        }
        if !constrain {
            return Value::Object(body);
        }
        match (&request.constraint, q.schema, q.grammar) {
            (Some(OutputConstraint::JsonSchema(schema)), SchemaForm::JsonSchema, _) => {
                let schema = q.schema_for_server(schema);
                body.insert(
                    "response_format".into(),
                    json!({"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}),
                );
            }
            (Some(OutputConstraint::JsonSchema(schema)), SchemaForm::JsonObject, _) => {
                let schema = q.schema_for_server(schema);
                body.insert(
                    "response_format".into(),
                    json!({"type": "json_object", "schema": schema}),
                );
            }
            (Some(OutputConstraint::Grammar(gbnf)), _, GrammarForm::Grammar) => {
                body.insert("grammar".into(), json!(gbnf));
            }
            (Some(OutputConstraint::Grammar(gbnf)), _, GrammarForm::Ebnf) => {
                body.insert("ebnf".into(), json!(gbnf));
            }
            _ => {}
        }
        Value::Object(body)
    }

    async fn post(&self, body: &Value) -> Result<String, LlmError> {
        let ctx = CallContext {
            provider: &self.config.name,
            key: self.config.api_key.as_ref(),
            timeout: self.config.timeout,
            max_reply_bytes: self.config.max_reply_bytes,
        };
        let mut builder = self.http.post(&self.url).json(body);
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        http::send(builder, &ctx).await
    }
}

/// The messages as the server takes them: as they are, or (models that refuse any
/// system message) with the system prompt opening the first user message.
fn wire_messages(request: &ChatRequest, q: &Quirks) -> Value {
    let messages = &request.messages;
    let wire = |ms: &[Message]| -> Value {
        ms.iter()
            .map(|m| wire_message(m, &request.tools, q.tool_call_content))
            .collect()
    };
    if q.system_role == SystemRole::System || !messages.iter().any(|m| m.role == Role::System) {
        return wire(messages);
    }
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let mut rest: Vec<Message> = messages
        .iter()
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect();
    let system = system.join("\n\n");
    match rest.iter_mut().find(|m| m.role == Role::User) {
        Some(first) => first.content = format!("{system}\n\n{}", first.content),
        None => rest.insert(0, Message::user(system)),
    }
    wire(&rest)
}

/// One message in the chat-completions form: `{role, content}`; an assistant message
/// that made native calls adds its `tool_calls` (its `content` `null` or `""` when it
/// wrote nothing, per [`ToolCallContent`]); a tool result is `{role: tool,
/// tool_call_id, content}`.
fn wire_message(m: &Message, tools: &[ToolSpec], empty: ToolCallContent) -> Value {
    match m.role {
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.as_deref().unwrap_or_default(),
            "content": m.content,
        }),
        Role::Assistant if !m.tool_calls.is_empty() => {
            let content = match (m.content.is_empty(), empty) {
                (true, ToolCallContent::Null) => Value::Null,
                _ => json!(m.content),
            };
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    let arguments = match c.input.is_empty() {
                        true => c.input_object(tools).to_string(),
                        false => c.input.clone(),
                    };
                    json!({"id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": arguments}})
                })
                .collect();
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        role => json!({"role": role, "content": m.content}),
    }
}

/// Whether `e` is a server refusing the output constraint itself (not the rest of the
/// request): an error status whose message names the constraint's field or kind.
/// Servers answer this with 400, 422 or (llama-cpp-python) 500.
fn refuses_constraint(e: &LlmError) -> bool {
    let LlmError::Http {
        status, message, ..
    } = e
    else {
        return false;
    };
    if matches!(status, 401 | 403 | 404 | 408 | 429) || !(400..600).contains(status) {
        return false;
    }
    let m = message.to_ascii_lowercase();
    [
        "response_format",
        "json_schema",
        "json_object",
        "schema",
        "grammar",
        "ebnf",
        "guided",
        "structured output",
    ]
    .iter()
    .any(|w| m.contains(w))
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default)]
    message: Option<WireMessage>,
    /// Legacy completions-style servers put the text here.
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    /// A string, null (refusals, tool calls) or an array of content parts.
    #[serde(default)]
    content: Option<Value>,
    /// Native tool calls: `{"id", "function": {"name", "arguments": "<JSON text>"}}`.
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
    /// OpenAI's refusal text: set (and `content` null) when the model declined.
    #[serde(default)]
    refusal: Option<String>,
}

/// Reads OpenAI-style tool calls; `arguments` is JSON text (or, leniently, an object).
fn tool_calls(calls: &[Value]) -> Vec<ToolCall> {
    calls
        .iter()
        .filter_map(|c| {
            let f = c.get("function")?;
            let name = f.get("name")?.as_str()?;
            let (input, raw) = match f.get("arguments") {
                Some(Value::String(text)) => (
                    serde_json::from_str(text).unwrap_or(Value::String(text.clone())),
                    text.clone(),
                ),
                Some(other) => (other.clone(), other.to_string()),
                None => (Value::Null, String::new()),
            };
            let id = c.get("id").and_then(Value::as_str).unwrap_or_default();
            Some(ToolCall {
                input: raw,
                ..ToolCall::from_input(name, &input).with_id(id)
            })
        })
        .collect()
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: TokenCount,
    #[serde(default)]
    completion_tokens: TokenCount,
    #[serde(default)]
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize, Default)]
struct WirePromptDetails {
    #[serde(default)]
    cached_tokens: TokenCount,
    /// Prompt tokens written to the cache (OpenAI's explicit prompt caching); they are
    /// part of `prompt_tokens`, as cached reads are.
    #[serde(default)]
    cache_write_tokens: TokenCount,
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Decodes a successful chat-completions body.
pub(crate) fn parse_response(body: &str, provider: &str) -> Result<ChatResponse, LlmError> {
    let decode = |message: String| LlmError::Decode {
        provider: provider.to_string(),
        message,
        raw: http::quote(body),
    };
    let wire: WireResponse =
        serde_json::from_str(body).map_err(|e| decode(format!("not a chat completion: {e}")))?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| decode("no choices in response".into()))?;
    let mut refused = false;
    let (text, calls) = match (choice.message, choice.text) {
        (Some(m), _) => {
            let mut text = m.content.as_ref().map(content_text).unwrap_or_default();
            // A refusal is the reply: recorded as its text and marked by its stop reason.
            if let Some(refusal) = m.refusal.filter(|r| !r.trim().is_empty()) {
                refused = true;
                if text.trim().is_empty() {
                    text = refusal;
                }
            }
            let calls = m.tool_calls.as_deref().map(tool_calls).unwrap_or_default();
            (text, calls)
        }
        (None, Some(t)) => (t, Vec::new()),
        (None, None) => return Err(decode("choice has neither message nor text".into())),
    };
    let usage = wire.usage.unwrap_or_default();
    let finish_reason = match choice.finish_reason.as_deref() {
        _ if refused => FinishReason::Refusal,
        None | Some("stop") | Some("eos") | Some("tool_calls") | Some("function_call") => {
            FinishReason::Stop
        }
        Some("length") => FinishReason::Length,
        Some(_) => FinishReason::Other,
    };
    let details = usage.prompt_tokens_details.unwrap_or_default();
    let counts = plausible([
        &usage.prompt_tokens,
        &usage.completion_tokens,
        &details.cached_tokens,
        &details.cache_write_tokens,
    ]);
    let [input, output, cached, written] = counts.unwrap_or_default();
    Ok(ChatResponse {
        text,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
            cache_write_tokens: written,
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
impl ChatModel for OpenAiClient {
    fn name(&self) -> &str {
        &self.config.name
    }

    /// The endpoint, model and preset: `openai:` names leave the base URL out, and a
    /// preset changes the body.
    fn cache_identity(&self) -> Option<String> {
        let c = &self.config;
        Some(format!(
            "openai-chat {} model={} preset={}",
            self.url, c.model, c.quirks.name
        ))
    }

    /// Sends the request with its output constraint in the preset's form. A server that
    /// refuses the constraint gets the request again without it; when that succeeds the
    /// form is not sent to this server again, and every reply made without it is marked
    /// [`ChatResponse::constraint_dropped`] (counted per record and per run).
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let form = self.form_for(request);
        let refused_before = form.is_some_and(|k| self.refused(k).load(Ordering::Relaxed));
        let constrain = form.is_some() && !refused_before;
        let (body, dropped) = match self.post(&self.body(request, constrain)).await {
            Ok(body) => (body, refused_before),
            Err(e) if constrain && refuses_constraint(&e) => {
                // If this fails too, its error is the one that matters: the constraint
                // was not (only) the problem, and a transient failure stays retryable.
                let body = self.post(&self.body(request, false)).await?;
                let kind = form.expect("constrained requests have a form");
                if !self.refused(kind).swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        model = %self.config.name,
                        preset = self.config.quirks.name,
                        error = %e,
                        "the server refused the output constraint; sending requests without it"
                    );
                }
                (body, true)
            }
            Err(e) => return Err(e),
        };
        let mut response = parse_response(&body, &self.config.name)
            .map_err(|e| http::redact_error(e, self.config.api_key.as_ref()))?;
        response.constraint_dropped = dropped;
        Ok(http::finish_response(
            response,
            self.config.api_key.as_ref(),
            &request.stop,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_and_odd_bodies_parse_leniently() {
        let r = parse_response(r#"{"choices":[{"message":{"content":"hi"}}]}"#, "p").unwrap();
        assert_eq!(r.text, "hi");
        assert_eq!(r.usage, Usage::default());
        assert_eq!(r.finish_reason, FinishReason::Stop);

        let parts = r#"{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"length"}],
            "usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}}}"#;
        let r = parse_response(parts, "p").unwrap();
        assert_eq!(
            (r.text.as_str(), r.finish_reason),
            ("ab", FinishReason::Length)
        );
        assert_eq!(r.usage.cached_input_tokens, 8);

        let legacy = parse_response(
            r#"{"choices":[{"text":"old","finish_reason":null}],"usage":null}"#,
            "p",
        );
        assert_eq!(legacy.unwrap().text, "old");

        let e = parse_response(r#"{"choices":[]}"#, "p").unwrap_err();
        assert!(matches!(e, LlmError::Decode { .. }), "{e}");
        let e = parse_response("{nope", "p").unwrap_err();
        assert!(matches!(&e, LlmError::Decode { raw, .. } if raw == "{nope"));
    }

    #[test]
    fn refusals_and_cache_writes_are_read() {
        let refusal = r#"{"choices":[{"message":{"role":"assistant","content":null,"refusal":"No."},"finish_reason":"stop"}]}"#;
        let r = parse_response(refusal, "p").unwrap();
        assert_eq!(
            (r.text.as_str(), r.finish_reason),
            ("No.", FinishReason::Refusal)
        );
        let writes = r#"{"choices":[{"message":{"content":"OK","refusal":null},"finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":4020,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":4012}}}"#;
        let r = parse_response(writes, "p").unwrap();
        assert_eq!(r.finish_reason, FinishReason::Stop);
        assert_eq!(
            (r.usage.input_tokens, r.usage.cache_write_tokens),
            (4020, 4012)
        );
    }

    #[test]
    fn models_without_system_messages_get_the_prompt_in_the_first_user_turn() {
        let req = ChatRequest::new(vec![
            Message::system("Be brief."),
            Message::user("q"),
            Message::assistant("a"),
            Message::user("q2"),
        ]);
        let o1 = OpenAiClient::new(
            OpenAiConfig::new("http://x/v1", "o1-mini")
                .quirks(Quirks::openai_reasoning_no_system()),
        )
        .unwrap();
        let b = o1.request_body(&req);
        assert_eq!(
            b["messages"][0],
            json!({"role": "user", "content": "Be brief.\n\nq"})
        );
        assert_eq!(b["messages"].as_array().unwrap().len(), 3);
        let only_system = o1.request_body(&ChatRequest::new(vec![Message::system("s")]));
        assert_eq!(
            only_system["messages"],
            json!([{"role": "user", "content": "s"}])
        );
    }

    #[test]
    fn quirks_shape_the_request_body() {
        let req = ChatRequest::new(vec![Message::user("q")])
            .max_tokens(50)
            .stop((0..6).map(|i| format!("s{i}")).collect())
            .constraint(OutputConstraint::Grammar("root ::= \"x\"".into()));
        let openai =
            OpenAiClient::new(OpenAiConfig::new("http://x/v1", "gpt-4o").quirks(Quirks::openai()))
                .unwrap();
        let b = openai.request_body(&req);
        assert_eq!(b["max_completion_tokens"], 50);
        assert_eq!(b["stop"].as_array().unwrap().len(), 4);
        assert!(b.get("grammar").is_none());

        let reasoning = OpenAiClient::new(
            OpenAiConfig::new("http://x/v1", "o3").quirks(Quirks::openai_reasoning()),
        )
        .unwrap();
        let b = reasoning.request_body(&req);
        assert!(b.get("stop").is_none() && b.get("temperature").is_none());

        let llama =
            OpenAiClient::new(OpenAiConfig::new("http://x/v1/", "m").quirks(Quirks::llama_cpp()))
                .unwrap();
        let b = llama.request_body(&req);
        assert_eq!(b["max_tokens"], 50);
        assert_eq!(b["stop"].as_array().unwrap().len(), 6);
        assert_eq!(b["grammar"], "root ::= \"x\"");
        assert_eq!(llama.url, "http://x/v1/chat/completions");

        let schema = json!({"type": "object"});
        let vllm = OpenAiClient::new(OpenAiConfig::new("http://x/v1", "m").quirks(Quirks::vllm()))
            .unwrap();
        let b = vllm.request_body(
            &req.clone()
                .constraint(OutputConstraint::JsonSchema(schema.clone())),
        );
        assert_eq!(b["response_format"]["json_schema"]["schema"], schema);
        let generic = OpenAiClient::new(OpenAiConfig::new("http://x/v1", "m")).unwrap();
        let b = generic.request_body(&req.constraint(OutputConstraint::JsonSchema(schema)));
        assert!(b.get("response_format").is_none());
    }

    #[test]
    fn each_preset_sends_constraints_in_its_servers_form() {
        let schema = json!({"type": "object", "required": ["a"]});
        let by_schema = ChatRequest::new(vec![Message::user("q")])
            .constraint(OutputConstraint::JsonSchema(schema.clone()));
        let by_grammar = ChatRequest::new(vec![Message::user("q")])
            .constraint(OutputConstraint::Grammar("root ::= \"x\"".into()));
        let client =
            |q: Quirks| OpenAiClient::new(OpenAiConfig::new("http://x/v1", "m").quirks(q)).unwrap();
        let openai_form =
            json!({"type": "json_schema", "json_schema": {"name": "output", "schema": schema}});
        for preset in [
            "openai",
            "vllm",
            "sglang",
            "llama-cpp",
            "ollama",
            "lmstudio",
        ] {
            let b = client(Quirks::preset(preset).unwrap()).request_body(&by_schema);
            assert_eq!(b["response_format"], openai_form, "{preset}");
        }
        let b = client(Quirks::llama_cpp_python()).request_body(&by_schema);
        assert_eq!(
            b["response_format"],
            json!({"type": "json_object", "schema": schema})
        );
        for (preset, field) in [
            ("llama-cpp", Some("grammar")),
            ("llama-cpp-python", Some("grammar")),
            ("sglang", Some("ebnf")),
            ("vllm", None),
            ("ollama", None),
            ("openai", None),
            ("generic", None),
        ] {
            let b = client(Quirks::preset(preset).unwrap()).request_body(&by_grammar);
            let sent: Vec<&str> = ["grammar", "ebnf", "response_format"]
                .into_iter()
                .filter(|f| b.get(*f).is_some())
                .collect();
            assert_eq!(sent, field.into_iter().collect::<Vec<_>>(), "{preset}");
        }
    }

    #[test]
    fn constraint_refusals_are_told_apart_from_other_errors() {
        let http = |status: u16, message: &str| LlmError::Http {
            provider: "p".into(),
            status,
            message: message.into(),
            retry_after: None,
        };
        assert!(refuses_constraint(&http(
            500,
            "Input should be 'text' or 'json_object' (loc: body.response_format.type)"
        )));
        assert!(refuses_constraint(&http(400, "failed to parse grammar")));
        assert!(refuses_constraint(&http(
            422,
            "json_schema is not supported"
        )));
        assert!(!refuses_constraint(&http(500, "Internal Server Error")));
        assert!(!refuses_constraint(&http(400, "bad temperature")));
        assert!(!refuses_constraint(&http(429, "schema rate limit")));
        assert!(!refuses_constraint(&LlmError::Config("schema".into())));
    }
}
