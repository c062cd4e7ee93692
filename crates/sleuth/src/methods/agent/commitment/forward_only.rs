//! Forward-only commitment (SLEUTH paper App. D.5, "Why forward-only commitment fails"):
//! settled links are never revisited.
//!
//! The system prompt states the rule; the loop enforces it by refusing a retrieval the
//! agent already made (the same action, argument included) with an observation saying
//! so, instead of running it. A refused repeat still counts as a tool call.

use super::Strategy;
use crate::env::Action;
use crate::methods::agent::template::render;
use crate::methods::AgentError;
use crate::methods::PromptSet;
use minijinja::context;

#[derive(Default)]
pub(super) struct ForwardOnly {
    /// Every action the loop ran or refused so far.
    past: Vec<Action>,
}

impl Strategy for ForwardOnly {
    fn prompt(&self) -> Option<&'static str> {
        Some("stop_forward_only.txt")
    }

    fn refuse(
        &mut self,
        action: &Action,
        prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        let repeat = self.past.contains(action);
        self.past.push(action.clone());
        if !repeat {
            return Ok(None);
        }
        let action = action.to_string();
        render(prompts, "forward_only_repeat.txt", context! { action }).map(Some)
    }
}
