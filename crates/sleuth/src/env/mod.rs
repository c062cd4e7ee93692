//! The tool environment an agent acts in.
//!
//! An environment owns what the agent may see (a question's paragraph pool, or a corpus
//! index), executes [`Action`]s, enforces its own limits and records every paragraph it
//! has shown, so support recall can be computed from the record alone. A failing action
//! (an unknown title, an empty query) is an [`Observation`] for the model, never an error.

mod action;
mod corpus;
pub mod evidence;
mod pool;
pub mod titles;

pub use action::Action;
pub use corpus::{CorpusEnv, CorpusOptions};
pub use evidence::{EvidenceEnv, EvidenceEnvFactory, EvidenceRecord, EvidenceStore, ReadOutcome};
pub use pool::PoolEnv;
pub use titles::{TitlesEnv, TitlesEnvFactory};

use serde::{Deserialize, Serialize};

/// What the environment returns for one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub text: String,
    /// Titles (or ids) this observation showed, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<String>,
}

impl Observation {
    pub fn new(text: impl Into<String>) -> Self {
        Observation {
            text: text.into(),
            shown: Vec::new(),
        }
    }
}

/// Anything an agent can act in.
pub trait Environment: Send + Sync {
    /// Executes a retrieval action. `Finish` is handled by the agent loop, not here.
    fn step(&mut self, action: &Action) -> Observation;

    /// Titles (or ids) retrieved so far, in order of first retrieval, without repeats.
    fn retrieved(&self) -> &[String];

    /// The tools this environment offers, described for the prompt.
    fn tool_descriptions(&self) -> String;
}
