//! The normalized request and response.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of one native tool call, answering the call of the assistant
    /// message before it whose id is [`Message::tool_call_id`] (OpenAI `role: tool`,
    /// Anthropic `tool_result` blocks in the following user turn).
    Tool,
}

/// One message of a conversation. Plain messages are a role and a text; the native tool
/// channel adds the calls an assistant message made and the call a tool result answers
/// (both left out of the serialized form when unused, so a text-protocol request, and
/// its response-cache key, are as they were).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// Assistant messages: the native tool calls made with this text, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tool results: the id of the call answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Message::plain(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Message::plain(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::plain(Role::Assistant, content)
    }
    /// An assistant message that made native tool calls (each with its id).
    pub fn assistant_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls: calls,
            ..Message::assistant(content)
        }
    }
    /// The result of the native call `id`.
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            tool_call_id: Some(id.into()),
            ..Message::plain(Role::Tool, content)
        }
    }
}

/// An optional constraint on the shape of the output. Providers that cannot honour a
/// constraint ignore it; the agents still parse and validate whatever comes back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum OutputConstraint {
    /// A JSON schema the output must satisfy.
    JsonSchema(serde_json::Value),
    /// A GBNF grammar (llama.cpp) the output must match.
    Grammar(String),
    /// A GBNF grammar only the embedded in-process model samples under; every other
    /// provider sends and applies nothing (the embedded model's default grammar, a
    /// concession to its size: the papers use prompting alone).
    EmbeddedGrammar(String),
}

/// A tool offered through the provider's native tool-calling channel (OpenAI `tools`,
/// Anthropic `tools`): a function of one string argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The name of its one string argument.
    pub argument: String,
}

impl ToolSpec {
    /// The JSON schema of the tool's input: an object with one required string.
    pub fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": { &self.argument: { "type": "string" } },
            "required": [&self.argument],
        })
    }
}

/// A tool call the model made through the native channel.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`),
    /// which its result names; empty when the server gave none (the agent loop then
    /// gives one, see `methods/agent/native.rs`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub name: String,
    /// The value of the tool's one argument (the first string in the call's input).
    pub argument: String,
    /// The call's input as the provider sent it, as JSON text (sent back verbatim with
    /// the assistant message that made the call); empty: rebuilt from the argument.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub input: String,
}

impl ToolCall {
    /// A call of `name` with `argument` and no id.
    pub fn new(name: impl Into<String>, argument: impl Into<String>) -> ToolCall {
        ToolCall {
            id: String::new(),
            name: name.into(),
            argument: argument.into(),
            input: String::new(),
        }
    }

    /// The same call with the provider's id.
    pub fn with_id(mut self, id: impl Into<String>) -> ToolCall {
        self.id = id.into();
        self
    }

    /// The call's input object to send back: as the provider sent it, or (no input
    /// kept, or not an object) the tool's one argument under the name `tools` give it.
    pub fn input_object(&self, tools: &[ToolSpec]) -> serde_json::Value {
        if let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(&self.input) {
            return v;
        }
        let key = tools
            .iter()
            .find(|t| t.name == self.name)
            .map_or("input", |t| t.argument.as_str());
        serde_json::json!({ key: self.argument })
    }

    /// Reads a call's input object: its first string value is the argument.
    pub fn from_input(name: &str, input: &serde_json::Value) -> ToolCall {
        let argument = match input {
            serde_json::Value::Object(map) => map
                .values()
                .find_map(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            serde_json::Value::String(s) => s.clone(),
            _ => String::new(),
        };
        ToolCall {
            input: match input {
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            },
            ..ToolCall::new(name, argument)
        }
    }
}

/// One chat completion request, identical for every provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub max_tokens: Option<u32>,
    pub stop: Vec<String>,
    pub constraint: Option<OutputConstraint>,
    /// Distinguishes deliberate repeated samples of one request (e.g. SSR's three
    /// verifier votes at temperature 0.7) so a response cache never conflates them.
    pub sample_index: u32,
    /// Tools offered through the native tool-calling channel; empty: the text protocol
    /// only (and the request, and its cache key, are as before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            temperature: 0.0,
            max_tokens: None,
            stop: Vec::new(),
            constraint: None,
            sample_index: 0,
            tools: Vec::new(),
        }
    }
    pub fn temperature(mut self, t: f32) -> Self {
        self.temperature = t;
        self
    }
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }
    pub fn stop(mut self, stop: Vec<String>) -> Self {
        self.stop = stop;
        self
    }
    pub fn constraint(mut self, c: OutputConstraint) -> Self {
        self.constraint = Some(c);
        self
    }
    pub fn sample_index(mut self, i: u32) -> Self {
        self.sample_index = i;
        self
    }
}

/// Token usage of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens served from a provider-side prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Input tokens written to a provider-side prompt cache (Anthropic
    /// `cache_creation_input_tokens`, OpenAI `prompt_tokens_details.cache_write_tokens`).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    /// Saturating: no sum of counts wraps to a small number (hardening III, item 5).
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(o.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(o.output_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(o.cached_input_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(o.cache_write_tokens);
    }
}

/// More tokens than any model reads or writes in one call (the largest context windows
/// hold about ten million): a usage count above it is the server's mistake.
pub const MAX_TOKENS_PER_CALL: u64 = 100_000_000;

/// A usage count as a provider sent it: read from any JSON value, so that a negative,
/// fractional, huge or non-numeric count costs the reply nothing. [`TokenCount::get`]
/// keeps the count when it is a plausible one and says so when it is not; the reply is
/// kept either way, its usage counted as unknown (0) and flagged (hardening III, item 5).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TokenCount(Option<serde_json::Value>);

impl<'de> Deserialize<'de> for TokenCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(TokenCount(Option::<serde_json::Value>::deserialize(d)?))
    }
}

impl TokenCount {
    /// The count (0 when absent), or `None` when the server sent one no call has.
    pub(crate) fn get(&self) -> Option<u64> {
        match &self.0 {
            None | Some(serde_json::Value::Null) => Some(0),
            Some(serde_json::Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    let f = n.as_f64()?;
                    (f.fract() == 0.0 && (0.0..=MAX_TOKENS_PER_CALL as f64).contains(&f))
                        .then_some(f as u64)
                })
                .filter(|n| *n <= MAX_TOKENS_PER_CALL),
            Some(_) => None,
        }
    }
}

/// A reply's usage counts, in order, when every one is plausible; `None` when any is
/// not: the usage is then unknown as a whole, since its parts no longer add up.
pub(crate) fn plausible<const N: usize>(counts: [&TokenCount; N]) -> Option<[u64; N]> {
    let mut out = [0; N];
    for (slot, count) in out.iter_mut().zip(counts) {
        *slot = count.get()?;
    }
    Some(out)
}

/// Why the provider stopped writing a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end, a stop sequence, or a tool call.
    Stop,
    /// Cut by the output-token limit (OpenAI `length`, Anthropic `max_tokens`): the reply
    /// is truncated, however complete it looks.
    Length,
    /// The model declined (OpenAI `message.refusal`, Anthropic `stop_reason: refusal`);
    /// the reply text is the refusal, when the provider gave one.
    Refusal,
    Other,
}

impl FinishReason {
    /// Whether a record should list the call (every reason but a normal stop).
    pub fn is_notable(self) -> bool {
        self != FinishReason::Stop
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    pub finish_reason: FinishReason,
    /// True when the response came from sleuth's own response cache (billed cost 0).
    #[serde(default)]
    pub cached: bool,
    /// True when the request carried an output constraint that the server refused, and
    /// this reply was generated without it (the caller's parser still validates it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub constraint_dropped: bool,
    /// Calls made through the native tool-calling channel, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// True when this request went without the prompt-cache marks it was meant to carry:
    /// the server refused them (see [`super::anthropic`]), so nothing was cached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_marks_dropped: bool,
    /// True when the request went through a provider batch (`--batch`): billed at the
    /// batch rate. Never stored by the response cache (a hit is not a batched call).
    #[serde(default, skip_serializing)]
    pub batched: bool,
    /// True when the server reported token usage no call has (negative, fractional,
    /// above [`MAX_TOKENS_PER_CALL`], not a number): the reply is kept and its usage
    /// counted as unknown (0).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_unknown: bool,
}

impl ChatResponse {
    pub fn new(text: impl Into<String>, usage: Usage) -> Self {
        ChatResponse {
            text: text.into(),
            usage,
            finish_reason: FinishReason::Stop,
            cached: false,
            constraint_dropped: false,
            tool_calls: Vec::new(),
            cache_marks_dropped: false,
            batched: false,
            usage_unknown: false,
        }
    }
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    fn count(json: &str) -> Option<u64> {
        serde_json::from_str::<TokenCount>(json).unwrap().get()
    }

    #[test]
    fn only_plausible_counts_are_kept() {
        assert_eq!(count("12"), Some(12));
        assert_eq!(count("12.0"), Some(12));
        assert_eq!(count("null"), Some(0));
        assert_eq!(count("100000000"), Some(MAX_TOKENS_PER_CALL));
        for bad in [
            "100000001",
            "9223372036854775808",
            "-1",
            "1e30",
            "12.5",
            "\"7\"",
        ] {
            assert_eq!(count(bad), None, "{bad}");
        }
        let (good, bad) = (
            TokenCount::default(),
            TokenCount(Some(serde_json::json!(-1))),
        );
        assert_eq!(plausible([&good, &good]), Some([0, 0]));
        assert_eq!(plausible([&good, &bad]), None);
    }

    #[test]
    fn usage_sums_saturate_instead_of_wrapping() {
        let mut total = Usage {
            input_tokens: u64::MAX - 1,
            ..Usage::default()
        };
        total += Usage {
            input_tokens: 5,
            output_tokens: 1,
            ..Usage::default()
        };
        assert_eq!((total.input_tokens, total.output_tokens), (u64::MAX, 1));
    }
}
