//! What differs between servers that all claim the OpenAI chat-completions protocol.
//!
//! The differences that matter to us, as documented by each project:
//! - **OpenAI** GPT models take `max_completion_tokens` (`max_tokens` is deprecated and
//!   rejected by reasoning models), at most 4 `stop` sequences, and `response_format`
//!   with `json_schema`. Reasoning models (o1, o3, o4-mini, gpt-5) additionally reject
//!   `stop` and any `temperature` other than the default.
//! - **vLLM** and **SGLang** take `max_tokens`, any number of stop sequences and
//!   `response_format: json_schema` (guided decoding); their own grammar formats are
//!   not GBNF, so `grammar` is not sent.
//! - **llama.cpp server** takes `max_tokens`, `stop`, `response_format` json_schema and
//!   a GBNF `grammar` field, the only server here that honours our grammars.
//! - **Ollama**'s `/v1` endpoint takes `max_tokens`, `stop` and `response_format`
//!   json_schema (structured outputs); no grammar.
//! - **LM Studio** takes `max_tokens`, `stop` and json_schema.
//! - **generic**: the conservative common subset (`max_tokens`, `stop`, no constraints).
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
    /// Whether `response_format: {type: json_schema}` is supported.
    pub json_schema: bool,
    /// Whether the llama.cpp-server `grammar` (GBNF) field is supported.
    pub grammar: bool,
}

impl Quirks {
    pub const PRESETS: [&'static str; 8] = [
        "openai",
        "openai-reasoning",
        "vllm",
        "sglang",
        "llama-cpp",
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
            json_schema: true,
            grammar: false,
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

    pub fn generic() -> Quirks {
        Quirks {
            name: "generic",
            max_tokens_field: MaxTokensField::MaxTokens,
            max_stop: None,
            temperature: true,
            json_schema: false,
            grammar: false,
        }
    }

    fn with_json_schema(name: &'static str) -> Quirks {
        Quirks {
            name,
            json_schema: true,
            ..Quirks::generic()
        }
    }

    pub fn vllm() -> Quirks {
        Quirks::with_json_schema("vllm")
    }
    pub fn sglang() -> Quirks {
        Quirks::with_json_schema("sglang")
    }
    pub fn ollama() -> Quirks {
        Quirks::with_json_schema("ollama")
    }
    pub fn lmstudio() -> Quirks {
        Quirks::with_json_schema("lmstudio")
    }
    pub fn llama_cpp() -> Quirks {
        Quirks {
            grammar: true,
            ..Quirks::with_json_schema("llama-cpp")
        }
    }

    /// A preset by name (see [`Quirks::PRESETS`]).
    pub fn preset(name: &str) -> Result<Quirks, LlmError> {
        Ok(match name {
            "openai" => Quirks::openai(),
            "openai-reasoning" => Quirks::openai_reasoning(),
            "vllm" => Quirks::vllm(),
            "sglang" => Quirks::sglang(),
            "llama-cpp" | "llamacpp" | "llama.cpp" => Quirks::llama_cpp(),
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

    /// The preset for a model on api.openai.com, by model family.
    pub fn for_openai_model(model: &str) -> Quirks {
        let reasoning = ["o1", "o3", "o4", "gpt-5"]
            .iter()
            .any(|p| model == *p || model.starts_with(&format!("{p}-")));
        if reasoning {
            Quirks::openai_reasoning()
        } else {
            Quirks::openai()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_resolve_and_reasoning_models_are_detected() {
        for name in Quirks::PRESETS {
            assert_eq!(Quirks::preset(name).unwrap().name, name);
        }
        assert!(Quirks::preset("nope")
            .unwrap_err()
            .to_string()
            .contains("vllm"));
        assert_eq!(Quirks::for_openai_model("o3-mini").name, "openai-reasoning");
        assert_eq!(Quirks::for_openai_model("gpt-5").name, "openai-reasoning");
        assert_eq!(Quirks::for_openai_model("gpt-4o-mini").name, "openai");
        assert_eq!(Quirks::for_openai_model("o1x").name, "openai");
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
