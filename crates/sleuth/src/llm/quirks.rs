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
        Quirks::with("llama-cpp", SchemaForm::JsonSchema, GrammarForm::Grammar)
    }
    pub fn llama_cpp_python() -> Quirks {
        Quirks::with(
            "llama-cpp-python",
            SchemaForm::JsonObject,
            GrammarForm::Grammar,
        )
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
