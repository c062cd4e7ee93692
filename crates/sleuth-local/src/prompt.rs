//! Turning chat messages into the model's prompt text.
//!
//! The model's own chat template (GGUF metadata `tokenizer.chat_template`) is preferred;
//! llama.cpp recognises the common template families from it. A model without a
//! template, or with one llama.cpp cannot apply, gets ChatML, the format SmolLM2 and
//! most small instruction-tuned models were trained on.
//!
//! Only the template's own markers are read as special tokens ([`Template::tokens`]):
//! a paragraph or a reply holding `<|im_end|>` is text to the model, so data can neither
//! end a turn nor forge a role (hardening III, item 10).

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use sleuth_llm::{LlmError, Message, Role};

/// Stands in for message `i`'s content while the template is applied: private-use
/// characters no template changes and no text of ours holds.
fn placeholder(i: usize) -> String {
    format!("\u{F8FF}{i}\u{F8FF}")
}

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

    /// The prompt's tokens for `messages`: the template's text with its special tokens
    /// parsed, each message's content as plain text (special-token text in it stays
    /// text). Falls back to the whole prompt parsed as before, with a warning, for a
    /// template that does not keep a message's content as given.
    pub(crate) fn tokens(
        &self,
        model: &LlamaModel,
        messages: &[Message],
    ) -> Result<Vec<LlamaToken>, LlmError> {
        let marked: Vec<String> = (0..messages.len()).map(placeholder).collect();
        let frame = self.apply(model, messages, |i, _| marked[i].clone())?;
        let vocab = model.vocab();
        let mut tokens = Vec::new();
        let mut rest = frame.as_str();
        for (i, mark) in marked.iter().enumerate() {
            let Some((before, after)) = rest.split_once(mark.as_str()) else {
                tracing::warn!(
                    "the chat template reshapes message text; special tokens in it are parsed"
                );
                let prompt = self.render(model, messages)?;
                return Ok(vocab.tokenize(prompt.as_bytes(), true, true));
            };
            tokens.extend(vocab.tokenize(before.as_bytes(), i == 0, true));
            tokens.extend(vocab.tokenize(messages[i].content.as_bytes(), false, false));
            rest = after;
        }
        tokens.extend(vocab.tokenize(rest.as_bytes(), marked.is_empty(), true));
        Ok(tokens)
    }

    /// The prompt for `messages`, ending with the opening of the assistant's turn.
    pub(crate) fn render(
        &self,
        model: &LlamaModel,
        messages: &[Message],
    ) -> Result<String, LlmError> {
        self.apply(model, messages, |_, m| m.content.clone())
    }

    /// Applies the template to `messages`, each message's content given by `content`.
    fn apply(
        &self,
        model: &LlamaModel,
        messages: &[Message],
        content: impl Fn(usize, &Message) -> String,
    ) -> Result<String, LlmError> {
        let chat = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    // The embedded model makes no native tool calls, so none are
                    // answered; a result handed to it reads as the user's text.
                    Role::Tool => "user",
                };
                LlamaChatMessage::new(role.into(), content(i, m)).map_err(|_| {
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
