//! The agents. Every method is composed from parts: a prompt template, a memory schema,
//! and (where a method needs one) a small policy on the one shared agent loop — never a
//! copy of the loop.

mod episode;

pub use episode::{CallKind, Episode, StopReason, Turn};

use crate::data::Question;
use crate::llm::{ChatModel, LlmError};
use async_trait::async_trait;
use std::sync::Arc;

/// Errors that end an episode early. Each carries the partial episode so the trace of
/// what happened before the failure is never lost.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("model call failed: {source}")]
    Llm {
        #[source]
        source: LlmError,
        partial: Box<Episode>,
    },
    #[error("{message}")]
    Config { message: String },
}

impl AgentError {
    pub fn partial(&self) -> Option<&Episode> {
        match self {
            AgentError::Llm { partial, .. } => Some(partial),
            AgentError::Config { .. } => None,
        }
    }
}

/// What a method needs besides the question: the model to call.
#[derive(Clone)]
pub struct RunContext {
    pub model: Arc<dyn ChatModel>,
}

/// A question-answering method.
#[async_trait]
pub trait Method: Send + Sync {
    /// The command-line name (`react`, `sleuth`, ...).
    fn name(&self) -> &str;

    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError>;
}
