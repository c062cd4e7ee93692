//! The time-based commitment nudge (SLEUTH paper §3.3; the ReAct control, App. D.4).
//!
//! The nudge is given, once, with the first turn t ≥ the nudge turn (⌈α·T⌉, α = 0.7 by
//! default, or `turn:N` as in Table 11) at which the memory holds something to commit
//! from: τ confirmed facts for a typed memory (§3.3: τ = 2; with
//! `nudge_needs_empty_questions`, the weaker variant the paper reports, also no open
//! question). Notes shares SLEUTH's commitment rule (§5.1, middle block) but has no
//! typed facts to count, so its gate is the nearest thing: a non-empty scratchpad.
//! Methods without a memory get it only with `nudge_all`, ungated (App. D.4's ReAct +
//! nudge). `nudge_turn` in the record is that t.

use super::{Strategy, Trigger, TurnState};
use crate::memory::MemoryKind;
use crate::methods::agent::template::render;
use crate::methods::settings::AgentSettings;
use crate::methods::AgentError;
use crate::methods::PromptSet;
use minijinja::context;

/// The nudge at a fixed turn, gated by what the memory holds.
pub(super) struct TimeNudge {
    /// The first turn the nudge may come with.
    at: u32,
    budget: u32,
    gate: Gate,
}

/// What must hold, besides the turn, for the nudge to fire.
enum Gate {
    /// τ confirmed facts (and, in the weaker variant, no open question).
    Facts { tau: usize, empty_questions: bool },
    /// A non-empty scratchpad (Notes).
    Scratchpad,
    /// Nothing (`nudge_all` for methods without a memory).
    None,
}

impl TimeNudge {
    /// The nudge of `settings` for an episode acting with `memory`; none when the
    /// setting gives no turn or the method has no memory and `nudge_all` is off.
    pub fn new(settings: &AgentSettings, memory: &MemoryKind) -> Option<TimeNudge> {
        let at = settings.nudge_turn()?;
        let gate = match memory {
            MemoryKind::Sections(_) => Gate::Facts {
                tau: settings.tau,
                empty_questions: settings.nudge_needs_empty_questions,
            },
            MemoryKind::Notes => Gate::Scratchpad,
            MemoryKind::None if settings.nudge_all => Gate::None,
            MemoryKind::None => return None,
        };
        Some(TimeNudge {
            at,
            budget: settings.turns,
            gate,
        })
    }
}

impl Strategy for TimeNudge {
    fn trigger(
        &self,
        at: &TurnState<'_>,
        prompts: &PromptSet,
    ) -> Result<Option<Trigger>, AgentError> {
        let state = at.state;
        let open = at.number >= self.at
            && match self.gate {
                Gate::Facts {
                    tau,
                    empty_questions,
                } => state.facts.len() >= tau && (!empty_questions || state.questions.is_empty()),
                Gate::Scratchpad => state.notes.as_deref().is_some_and(|n| !n.trim().is_empty()),
                Gate::None => true,
            };
        if !open {
            return Ok(None);
        }
        Ok(Some(Trigger {
            message: message(prompts, at.number, self.budget)?,
            condition: None,
        }))
    }
}

/// The nudge message given with turn `turn` of `budget` (`nudge.txt`; also the
/// adaptive nudge's). One message, word for word, for every method it is given to:
/// App. D.4 makes "the identical nudge message" ReAct's causal control, and §3.3 words
/// it as synthesis from the confirmed facts and hypotheses, so Notes and ReAct read
/// the same sentence SLEUTH does.
pub(super) fn message(prompts: &PromptSet, turn: u32, budget: u32) -> Result<String, AgentError> {
    render(prompts, "nudge.txt", context! { turn, budget })
}
