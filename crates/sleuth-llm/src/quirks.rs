//! What differs between servers that all claim the OpenAI chat-completions protocol.
//!
//! The differences that matter to us, as documented by each project:
//! - **OpenAI** GPT models take `max_completion_tokens` (`max_tokens` is deprecated and
//!   rejected by reasoning models), at most 4 `stop` sequences, and `response_format`
//!   `{type: json_schema, json_schema: {name, schema}}`. Reasoning models (o1, o3,
//!   o4-mini, gpt-5) additionally reject `stop` and any temperature but the default.
//! - **vLLM** takes `max_tokens`, any number of stop sequences and the OpenAI
//!   `json_schema` response format (guided decoding); its grammar dialects are not
//!   GBNF, so our grammars are not sent.
//! - **SGLang** takes the OpenAI `json_schema` response format and, as a separate
//!   `ebnf` field, a grammar in GGML BNF (its default XGrammar backend), which is the
//!   GBNF our grammars are written in.
//! - **llama.cpp server** (`llama-server`) takes `json_schema` (OpenAI form) and a GBNF
//!   `grammar` field.
//! - **llama-cpp-python**'s server takes `response_format` of type `text` or
//!   `json_object` only, the schema inside it (`{type: json_object, schema}`), and a
//!   GBNF `grammar` field; a `json_schema` response format fails its request validation.
//! - Both **llama.cpp** servers turn a schema into a grammar by expanding each
//!   `maxLength` / `maxItems` bound into nested optional rules: at 4,000 characters and
//!   32 items llama-cpp-python's server died compiling the EIR schemas on the first
//!   request (tests/cli/servers.rs). Their presets clamp the bounds they are sent
//!   ([`SchemaBounds`]); every other server gets the schema as the method declares it.
//! - **Ollama**'s `/v1` endpoint turns the OpenAI `json_schema` response format into its
//!   native `format` field (a top-level `format` is ignored there); no grammar.
//! - **LM Studio** takes `max_tokens`, `stop` and the OpenAI `json_schema` form.
//! - **OpenAI o1-mini / o1-preview** (`openai-reasoning-no-system`) refuse `system`
//!   and `developer` messages: the system prompt opens the first user message.
//! - **generic**: the conservative common subset (`max_tokens`, `stop`, no constraints).
//!
//! Native tool calls (`tool_channel=native`) go back in the protocol's own form on every
//! preset: the assistant message with its `tool_calls`, then one `role: tool` message
//! per call naming its `tool_call_id`. What differs is the assistant message's
//! `content` when the model wrote no text beside its calls: OpenAI sends (and takes)
//! `null`; the open servers' request validators are written for a string, so their
//! presets send `""` ([`ToolCallContent`]).
//!
//! A server that refuses a constraint anyway (an older build, a gateway in front of
//! it) is handled by the client: it resends the request without the constraint and
//! stops sending it (see [`super::openai`]).
//!
//! Stop sequences are also applied client-side (the reply is cut at the first one), so
//! a server that drops or limits them still yields the same text.

use serde_json::Value;

use super::LlmError;

/// Which field carries the output-token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

/// How a JSON-schema constraint travels to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaForm {
    /// Not sent: the server has no schema-constrained decoding.
    Omit,
    /// `response_format: {type: json_schema, json_schema: {name, schema}}` (OpenAI).
    JsonSchema,
    /// `response_format: {type: json_object, schema}` (llama-cpp-python).
    JsonObject,
}

/// How the system prompt travels to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemRole {
    /// As `role: system` messages (every server but the oldest reasoning models).
    System,
    /// Prepended to the first user message: o1-mini and o1-preview refuse both
    /// `system` and `developer` (400 `unsupported_value`).
    FirstUser,
}

/// How a GBNF grammar constraint travels to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrammarForm {
    /// Not sent.
    Omit,
    /// A top-level `grammar` field (llama.cpp server, llama-cpp-python).
    Grammar,
    /// A top-level `ebnf` field (SGLang).
    Ebnf,
}

/// What an assistant message that made native tool calls, and wrote no text, carries as
/// its `content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallContent {
    /// `null`, as OpenAI itself writes such a message.
    Null,
    /// `""`: a string, which every server's request validation takes.
    EmptyString,
}

/// The largest `maxLength` and `maxItems` a server's schema-to-grammar converter
/// compiles; a schema's larger bounds are lowered to these before it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaBounds {
    pub max_length: u64,
    pub max_items: u64,
}

impl SchemaBounds {
    /// What llama-cpp-python 0.3's converter serves on every EIR-setting schema
    /// (measured with tests/cli/servers.rs: 4,000 / 32 crashed it, 600 / 8 runs).
    pub const LLAMA_CPP: SchemaBounds = SchemaBounds {
        max_length: 600,
        max_items: 8,
    };

    /// `schema` with every bound above these lowered to them.
    pub fn clamp(self, schema: &Value) -> Value {
        match schema {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| {
                        let cap = match key.as_str() {
                            "maxLength" => Some(self.max_length),
                            "maxItems" => Some(self.max_items),
                            _ => None,
                        };
                        let value = match (cap, value.as_u64()) {
                            (Some(cap), Some(n)) if n > cap => Value::from(cap),
                            _ => self.clamp(value),
                        };
                        (key.clone(), value)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.clamp(v)).collect()),
            other => other.clone(),
        }
    }
}

/// Per-server protocol differences; see the module docs for the presets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quirks {
    /// Preset name, for messages.
    pub name: &'static str,
    pub max_tokens_field: MaxTokensField,
    /// How many stop sequences the server accepts: `None` unlimited, `Some(0)` none.
    pub max_stop: Option<usize>,
    /// Whether to send `temperature` at all (reasoning models reject it).
    pub temperature: bool,
    pub schema: SchemaForm,
    pub grammar: GrammarForm,
    pub system_role: SystemRole,
    pub tool_call_content: ToolCallContent,
    /// Bounds the server's schema converter compiles; `None`: the schema as declared.
    pub schema_bounds: Option<SchemaBounds>,
}

impl Quirks {
    pub const PRESETS: [&'static str; 10] = [
        "openai",
        "openai-reasoning",
        "openai-reasoning-no-system",
        "vllm",
        "sglang",
        "llama-cpp",
        "llama-cpp-python",
        "ollama",
        "lmstudio",
        "generic",
    ];

    pub fn openai() -> Quirks {
        Quirks {
            name: "openai",
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            max_stop: Some(4),
            temperature: true,
            schema: SchemaForm::JsonSchema,
            grammar: GrammarForm::Omit,
            system_role: SystemRole::System,
            tool_call_content: ToolCallContent::Null,
            schema_bounds: None,
        }
    }

    pub fn openai_reasoning() -> Quirks {
        Quirks {
            name: "openai-reasoning",
            max_stop: Some(0),
            temperature: false,
            ..Quirks::openai()
        }
    }

    /// o1-mini and o1-preview: reasoning models that take no system message at all.
    pub fn openai_reasoning_no_system() -> Quirks {
        Quirks {
            name: "openai-reasoning-no-system",
            system_role: SystemRole::FirstUser,
            ..Quirks::openai_reasoning()
        }
    }

    pub fn generic() -> Quirks {
        Quirks {
            name: "generic",
            max_tokens_field: MaxTokensField::MaxTokens,
            max_stop: None,
            temperature: true,
            schema: SchemaForm::Omit,
            grammar: GrammarForm::Omit,
            system_role: SystemRole::System,
            tool_call_content: ToolCallContent::EmptyString,
            schema_bounds: None,
        }
    }

    fn with(name: &'static str, schema: SchemaForm, grammar: GrammarForm) -> Quirks {
        Quirks {
            name,
            schema,
            grammar,
            ..Quirks::generic()
        }
    }

    pub fn vllm() -> Quirks {
        Quirks::with("vllm", SchemaForm::JsonSchema, GrammarForm::Omit)
    }
    pub fn sglang() -> Quirks {
        Quirks::with("sglang", SchemaForm::JsonSchema, GrammarForm::Ebnf)
    }
    pub fn ollama() -> Quirks {
        Quirks::with("ollama", SchemaForm::JsonSchema, GrammarForm::Omit)
    }
    pub fn lmstudio() -> Quirks {
        Quirks::with("lmstudio", SchemaForm::JsonSchema, GrammarForm::Omit)
    }
    pub fn llama_cpp() -> Quirks {
        Quirks {
            schema_bounds: Some(SchemaBounds::LLAMA_CPP),
            ..Quirks::with("llama-cpp", SchemaForm::JsonSchema, GrammarForm::Grammar)
        }
    }
    pub fn llama_cpp_python() -> Quirks {
        Quirks {
            schema_bounds: Some(SchemaBounds::LLAMA_CPP),
            ..Quirks::with(
                "llama-cpp-python",
                SchemaForm::JsonObject,
                GrammarForm::Grammar,
            )
        }
    }

    /// The schema as this server is sent it (see [`SchemaBounds`]).
    pub fn schema_for_server(&self, schema: &Value) -> Value {
        match self.schema_bounds {
            Some(bounds) => bounds.clamp(schema),
            None => schema.clone(),
        }
    }

    /// A preset by name (see [`Quirks::PRESETS`]).
    pub fn preset(name: &str) -> Result<Quirks, LlmError> {
        Ok(match name {
            "openai" => Quirks::openai(),
            "openai-reasoning" => Quirks::openai_reasoning(),
            "openai-reasoning-no-system" => Quirks::openai_reasoning_no_system(),
            "vllm" => Quirks::vllm(),
            "sglang" => Quirks::sglang(),
            "llama-cpp" | "llamacpp" | "llama.cpp" => Quirks::llama_cpp(),
            "llama-cpp-python" => Quirks::llama_cpp_python(),
            "ollama" => Quirks::ollama(),
            "lmstudio" | "lm-studio" => Quirks::lmstudio(),
            "generic" => Quirks::generic(),
            other => {
                return Err(LlmError::Config(format!(
                    "unknown server preset `{other}` (known: {})",
                    Quirks::PRESETS.join(", ")
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_resolve_by_name() {
        for name in Quirks::PRESETS {
            assert_eq!(Quirks::preset(name).unwrap().name, name);
        }
        assert!(Quirks::preset("nope")
            .unwrap_err()
            .to_string()
            .contains("llama-cpp-python"));
        assert_eq!(
            Quirks::openai_reasoning_no_system().system_role,
            SystemRole::FirstUser
        );
    }

    #[test]
    fn llama_cpp_presets_lower_only_the_bounds_above_theirs() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "reasoning": {"type": "string", "maxLength": 4000},
            "title": {"type": "string", "maxLength": 120},
            "items": {"type": "array", "maxItems": 32,
                      "items": {"type": "string", "maxLength": 1000}},
        }});
        let sent = Quirks::llama_cpp_python().schema_for_server(&schema);
        let p = &sent["properties"];
        assert_eq!(p["reasoning"]["maxLength"], 600);
        assert_eq!(p["title"]["maxLength"], 120);
        assert_eq!(p["items"]["maxItems"], 8);
        assert_eq!(p["items"]["items"]["maxLength"], 600);
        assert_eq!(Quirks::llama_cpp().schema_for_server(&schema), sent);
        for other in ["openai", "vllm", "sglang", "ollama", "lmstudio", "generic"] {
            let q = Quirks::preset(other).unwrap();
            assert_eq!(q.schema_for_server(&schema), schema, "{other}");
        }
    }
}

/// Cuts `text` at the earliest occurrence of any stop sequence; returns whether it cut.
pub(crate) fn cut_at_stop(text: &mut String, stops: &[String]) -> bool {
    let first = stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min();
    match first {
        Some(at) => {
            text.truncate(at);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod stop_tests {
    #[test]
    fn cuts_at_the_earliest_stop() {
        let mut t = "Thought: x\nObservation: y\nAction: z".to_string();
        assert!(super::cut_at_stop(
            &mut t,
            &["Action:".into(), "Observation:".into()]
        ));
        assert_eq!(t, "Thought: x\n");
        let mut u = "no stops here".to_string();
        assert!(!super::cut_at_stop(&mut u, &["".into(), "zzz".into()]));
        assert_eq!(u, "no stops here");
    }
}
