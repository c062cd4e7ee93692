//! The agents. Every method is composed from parts: a prompt template, a memory schema,
//! and (where a method needs one) a small policy on one of two shared loops — the text
//! protocol's agent loop ([`agent`]) or the EIR setting's trajectory ([`eir`]) — never a
//! copy of a loop. [`retry`] wraps either in Reflexion. [`registry`] is the one table
//! from a command-line name to a method, its settings and its call estimate.

pub mod agent;
mod call_kind;
mod call_notes;
pub mod corpus;
pub mod eir;
mod episode;
mod method_error;
pub mod outputs;
mod prompts;
pub mod registry;
pub mod retry;
pub mod settings;
mod stop;
mod template_error;

pub use call_kind::CallKind;
pub use call_notes::{CallNotes, CallStop};
pub(crate) use episode::{call_model, call_model_response};
pub use episode::{Episode, Turn};
pub use method_error::MethodError;
pub use outputs::{EirOutputs, Outputs};
pub(crate) use prompts::short_digest;
pub use prompts::{PromptSet, PromptsIdentity};
pub use registry::RegisteredMethod;
pub use retry::Judge;
pub use stop::StopReason;
pub use template_error::TemplateError;

use crate::data::Question;
use crate::env::Environment;
use crate::llm::{ChatModel, LlmError};
use async_trait::async_trait;
use settings::AgentSettings;
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
    /// A prompt template failed to render.
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("{message}")]
    Config { message: String },
}

/// What kind of failure ended an episode, as its record says (`error_kind`): where the
/// fix lies, decided where the error is still typed rather than read off its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A model call failed (endpoint, key, network, a reply refused).
    Model,
    /// A prompt template failed to render: fix the templates.
    Template,
    /// The method could not go on for a reason of its own (its settings, an earlier
    /// run it needs).
    Method,
}

impl AgentError {
    /// Where the fix lies.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AgentError::Llm { .. } => ErrorKind::Model,
            AgentError::Template(_) => ErrorKind::Template,
            AgentError::Config { .. } => ErrorKind::Method,
        }
    }

    pub(crate) fn config(e: impl std::fmt::Display) -> Self {
        AgentError::Config {
            message: e.to_string(),
        }
    }

    pub fn partial(&self) -> Option<&Episode> {
        match self {
            AgentError::Llm { partial, .. } => Some(partial),
            AgentError::Template(_) | AgentError::Config { .. } => None,
        }
    }
}

/// Builds the environment an episode acts in (the default is the question's own
/// paragraph pool; the corpus setting plugs in a BM25 index here).
pub trait EnvFactory: Send + Sync {
    fn make(&self, question: &Question, settings: &AgentSettings) -> Box<dyn Environment>;
}

/// Sees each turn as soon as it is complete (`sleuth ask` prints them live).
pub trait TurnObserver: Send + Sync {
    fn turn(&self, turn: &Turn);
}

/// What a method needs besides the question: the model to call and, optionally, an
/// observer of turns.
#[derive(Clone)]
pub struct RunContext {
    pub model: Arc<dyn ChatModel>,
    pub observer: Option<Arc<dyn TurnObserver>>,
}

impl RunContext {
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        RunContext {
            model,
            observer: None,
        }
    }

    pub(crate) fn observe(&self, turn: &Turn) {
        if let Some(o) = &self.observer {
            o.turn(turn);
        }
    }
}

/// A question-answering method. Its name, settings and estimate live in its registry
/// row ([`registry::METHODS`]); a built method is a [`RegisteredMethod`].
#[async_trait]
pub trait Method: Send + Sync {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError>;
}
