//! A prompt template that does not parse or render, kept typed from the template engine
//! to the record (`error_kind: template`) and the run's verdict, so the fix is pointed
//! at the templates rather than read off the message's words. Its own file because both
//! the crate's `Error` and the agents' `AgentError` carry it.

/// A prompt template (built in, or a `prompts` override) that does not parse or render.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prompt template {name}: {message}")]
pub struct TemplateError {
    /// The template's file name (`react.txt`).
    pub name: String,
    /// What the template engine said.
    pub message: String,
}
