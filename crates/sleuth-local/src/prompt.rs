//! Turning chat messages into the model's prompt text.
//!
//! The model's own chat template (GGUF metadata `tokenizer.chat_template`) is preferred;
//! llama.cpp recognises the common template families from it. A model without a
//! template, or with one llama.cpp cannot apply, gets ChatML, the format SmolLM2 and
//! most small instruction-tuned models were trained on.

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use sleuth::llm::{LlmError, Message, Role};

/// Which template a model's prompts are rendered with.
pub(crate) struct Template {
    template: LlamaChatTemplate,
    /// `"gguf"` or `"chatml"`, for `model list` and debugging.
    pub(crate) source: &'static str,
}

impl Template {
    /// The model's template if llama.cpp can apply it, else ChatML.
    pub(crate) fn for_model(model: &LlamaModel) -> Template {
        if let Ok(template) = model.chat_template(None) {
            let probe =
                [LlamaChatMessage::new("user".into(), "hi".into()).expect("no NUL in a literal")];
            if model.apply_chat_template(&template, &probe, true).is_ok() {
                return Template {
                    template,
                    source: "gguf",
                };
            }
            tracing::warn!("the model's chat template is not supported; using ChatML");
        }
        Template {
            template: LlamaChatTemplate::new("chatml").expect("no NUL in a literal"),
            source: "chatml",
        }
    }

    /// The prompt for `messages`, ending with the opening of the assistant's turn.
    pub(crate) fn render(
        &self,
        model: &LlamaModel,
        messages: &[Message],
    ) -> Result<String, LlmError> {
        let chat = messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    // The embedded model makes no native tool calls, so none are
                    // answered; a result handed to it reads as the user's text.
                    Role::Tool => "user",
                };
                LlamaChatMessage::new(role.into(), m.content.clone()).map_err(|_| {
                    LlmError::Config(
                        "a message contains a NUL byte, which the local model cannot take".into(),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| LlmError::Config(format!("cannot apply the chat template: {e}")))
    }
}
