//! Late verification (SLEUTH paper App. D.5, "Why late verification fails"): free
//! search, then one check of the chain before an answer is accepted.
//!
//! The search phase runs "without continuous state tracking", so under
//! `stopping=late-verification` the method drops its working memory and acts on
//! ReAct's protocol until the check; `late-verification-memory` (ours) keeps the memory
//! throughout. The first `finish[answer]` is not accepted: the model is asked to list
//! each link of the chain with its supporting paragraph, and the next finish is taken.
//! The check is asked for when the first finish comes while a turn remains; a finish on
//! the last turn is taken unchecked (the loop's rule, `actions.rs`), so the same reply
//! answers here as under ReAct instead of ending on the budget. The search phase keeps
//! SLEUTH's source-faithful answer rule (App. K), worded for paragraphs instead of
//! Confirmed Facts: the strategy changes when the agent stops, not how it answers.

use super::Strategy;
use crate::methods::agent::template::render;
use crate::methods::AgentError;
use crate::methods::PromptSet;
use minijinja::context;

pub(super) struct LateVerification {
    keeps_memory: bool,
    /// Whether the chain check has been asked for.
    verified: bool,
}

impl LateVerification {
    /// The paper's strategy: free search without the working memory.
    pub fn searching_free() -> LateVerification {
        LateVerification {
            keeps_memory: false,
            verified: false,
        }
    }

    /// Our variant keeping the working memory while searching.
    pub fn keeping_memory() -> LateVerification {
        LateVerification {
            keeps_memory: true,
            verified: false,
        }
    }
}

impl Strategy for LateVerification {
    fn prompt(&self) -> Option<&'static str> {
        Some("stop_late_verification.txt")
    }

    fn keeps_memory(&self) -> bool {
        self.keeps_memory
    }

    fn finish(&mut self, answer: &str, prompts: &PromptSet) -> Result<Option<String>, AgentError> {
        if self.verified {
            return Ok(None);
        }
        self.verified = true;
        render(prompts, "verify.txt", context! { answer }).map(Some)
    }
}
