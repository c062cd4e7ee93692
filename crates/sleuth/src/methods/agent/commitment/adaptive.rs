//! Adaptive commitment (`nudge=adaptive`, ours): the nudge fires, once, from the merged
//! memory's state instead of the clock.
//!
//! SLEUTH paper App. M ("Nudge threshold generality") leaves an adaptive threshold "based
//! on state features such as hypothesis confidence …, the ratio of open questions to
//! confirmed facts, or the rate of new fact discovery" as future work; these are three
//! such features, each a setting of its own ([`AdaptiveRule`]). Only a typed memory has
//! the state to read, so other methods get no nudge under it. Every condition but a
//! confident hypothesis (which already names its facts) needs τ confirmed facts, so
//! there is something to commit from. When several hold, the first in the order
//! confident, questions closed, stagnation is recorded.

use super::{nudge, Strategy, Trigger, TurnState};
use crate::memory::{Confidence, MemorySchema, Section, WorkingMemory};
use crate::methods::agent::PromptSet;
use crate::methods::settings::{AdaptiveCondition, AdaptiveRule, AgentSettings};
use crate::methods::{AgentError, Turn};

pub(super) struct Adaptive {
    rule: AdaptiveRule,
    tau: usize,
    /// The question's hops when the benchmark says (a confident hypothesis must cite as
    /// many confirmed facts; τ when unknown).
    hops: Option<u8>,
    hypotheses: bool,
    questions: bool,
    budget: u32,
}

impl Adaptive {
    pub fn new(settings: &AgentSettings, schema: &MemorySchema, hops: Option<u8>) -> Adaptive {
        Adaptive {
            rule: settings.adaptive,
            tau: settings.tau,
            hops,
            hypotheses: schema.has(Section::Hypotheses),
            questions: schema.has(Section::Questions),
            budget: settings.turns,
        }
    }

    /// The condition that holds in `state` after `turns`, first in the rule's order.
    fn condition(&self, state: &WorkingMemory, turns: &[Turn]) -> Option<AdaptiveCondition> {
        let enough = state.facts.len() >= self.tau;
        if self.rule.confident && self.hypotheses && self.confident(state) {
            return Some(AdaptiveCondition::Confident);
        }
        if self.rule.questions_closed && self.questions && enough && state.all_questions_resolved()
        {
            return Some(AdaptiveCondition::QuestionsClosed);
        }
        if self.rule.stagnation > 0 && enough && stagnant_turns(turns) >= self.rule.stagnation {
            return Some(AdaptiveCondition::Stagnation);
        }
        None
    }

    /// Whether the top-ranked hypothesis is high-confidence and cites enough distinct
    /// confirmed facts.
    fn confident(&self, state: &WorkingMemory) -> bool {
        let need = self.hops.map_or(self.tau, usize::from).max(1);
        let Some(top) = state.hypotheses.first() else {
            return false;
        };
        let mut cited: Vec<&String> = top
            .supports
            .iter()
            .filter(|id| state.facts.iter().any(|f| &f.id == *id))
            .collect();
        cited.sort();
        cited.dedup();
        top.confidence == Some(Confidence::High) && cited.len() >= need
    }
}

impl Strategy for Adaptive {
    fn trigger(
        &self,
        at: &TurnState<'_>,
        prompts: &PromptSet,
    ) -> Result<Option<Trigger>, AgentError> {
        let Some(condition) = self.condition(at.state, at.turns) else {
            return Ok(None);
        };
        Ok(Some(Trigger {
            message: nudge::message(prompts, at.number, self.budget)?,
            condition: Some(condition),
        }))
    }
}

/// How many of the latest turns in a row added no confirmed fact to the merged state.
fn stagnant_turns(turns: &[Turn]) -> u32 {
    let facts: Vec<usize> = turns
        .iter()
        .map(|t| t.state.as_ref().map_or(0, |s| s.facts.len()))
        .collect();
    let mut still = 0;
    for i in (0..facts.len()).rev() {
        let before = if i == 0 { 0 } else { facts[i - 1] };
        if facts[i] > before {
            break;
        }
        still += 1;
    }
    still
}
