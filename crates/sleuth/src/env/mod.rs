//! The tool environment an agent acts in.
//!
//! An environment owns what the agent may see (a question's paragraph pool, or a corpus
//! index), executes [`Action`]s, enforces its own limits and records every paragraph it
//! has shown, so support recall can be computed from the record alone. A failing action
//! (an unknown title, an empty query, a tool it does not offer) is an [`Observation`]
//! for the model, never an error. Each environment owns the [`ToolCatalogue`] of what it
//! offers; the text protocol ([`crate::protocol`]) renders, parses and constrains from it.

mod corpus;
pub mod evidence;
mod pool;
pub mod titles;

pub use corpus::{CorpusEnv, CorpusOptions};
pub use evidence::{EvidenceEnv, EvidenceEnvFactory, EvidenceRecord, EvidenceStore, ReadOutcome};
pub use pool::{LookupRepeats, PoolEnv};
pub use titles::{TitlesEnv, TitlesEnvFactory};

// The protocol's vocabulary, which every environment speaks (defined in `protocol`).
pub use crate::protocol::{Action, Tool, ToolCatalogue, ToolKind};

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
    /// The tools this environment offers: the prompt's tool list, the actions
    /// [`step`](Self::step) accepts, and the output grammar's alternatives.
    fn tools(&self) -> &ToolCatalogue;

    /// Runs an action the catalogue offers. `Finish` is handled by the agent loop.
    fn execute(&mut self, action: &Action) -> Observation;

    /// Titles (or ids) retrieved so far, in order of first retrieval, without repeats.
    fn retrieved(&self) -> &[String];

    /// Executes an action, or refuses one whose tool this environment does not offer
    /// with an observation naming the tools it does (nothing runs then).
    fn step(&mut self, action: &Action) -> Observation {
        match self.tools().refusal(action) {
            Some(refused) => Observation::new(refused),
            None => self.execute(action),
        }
    }
}
