//! Structural completion (SLEUTH paper App. D.5, "Why structural completion fails"):
//! decompose the question into sub-questions up front and commit "when all are marked
//! resolved".
//!
//! The trigger is the merged memory's state, not the model's reading of a prompt
//! sentence: once every open question the agent wrote is resolved (marked `(resolved)`
//! or removed; the merge moves them to `resolved`), it is told to commit, once. A memory
//! without an Open Questions section never completes.

use super::{Strategy, Trigger, TurnState};
use crate::memory::{MemorySchema, Section};
use crate::methods::agent::template::render;
use crate::methods::AgentError;
use crate::methods::PromptSet;
use minijinja::context;

pub(super) struct Structural {
    /// Whether the memory keeps Open Questions at all.
    questions: bool,
}

impl Structural {
    pub fn new(schema: &MemorySchema) -> Structural {
        Structural {
            questions: schema.has(Section::Questions),
        }
    }
}

impl Strategy for Structural {
    fn prompt(&self) -> Option<&'static str> {
        Some("stop_structural.txt")
    }

    fn trigger(
        &self,
        at: &TurnState<'_>,
        prompts: &PromptSet,
    ) -> Result<Option<Trigger>, AgentError> {
        if !self.questions || !at.state.all_questions_resolved() {
            return Ok(None);
        }
        let resolved = at.state.resolved.len();
        Ok(Some(Trigger {
            message: render(prompts, "stop_structural_due.txt", context! { resolved })?,
            condition: None,
        }))
    }
}
