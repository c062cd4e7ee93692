//! Commitment: when the agent is told to stop searching and answer, and which finishes
//! and actions the loop accepts on the way (SLEUTH paper §3.3, App. D.4–D.5).
//!
//! Every rule is a [`Strategy`]. The `nudge` setting gives one: the time-based nudge
//! (α·T or `turn:N`, gated by τ; [`nudge`]) or adaptive commitment (ours; [`adaptive`]).
//! The `stopping` setting gives the other: the paper's plain nudge, or one of App. D.5's
//! alternatives, each in its own file (structural completion, forward-only, contrastive
//! elimination, late verification). An episode's [`CommitmentRules`] hold both, nudge
//! first; the loop asks them for the commit message of a turn, about each finish and
//! about each action. A new stopping strategy is one file implementing [`Strategy`],
//! its `Stopping` variant (the `--set stopping=` name) and its arm in [`stopping`].

mod adaptive;
mod contrastive;
mod forward_only;
mod late_verification;
mod nudge;
mod structural;
#[cfg(test)]
mod tests;

use crate::env::Action;
use crate::memory::{MemoryKind, WorkingMemory};
use crate::methods::outputs::Commitment;
use crate::methods::settings::{AdaptiveCondition, AgentSettings, NudgeAt, Stopping};
use crate::methods::PromptSet;
use crate::methods::{AgentError, Episode, Turn};

/// One commitment rule: the hooks the loop calls. Every hook has a default that does
/// nothing, so a rule writes only what it changes.
pub(super) trait Strategy: Send + Sync {
    /// The system prompt's paragraph on this strategy (a template name).
    fn prompt(&self) -> Option<&'static str> {
        None
    }

    /// Whether the method keeps its working memory while it searches.
    fn keeps_memory(&self) -> bool {
        true
    }

    /// The commit message to give with this turn, if the rule fires now. Asked only
    /// while no rule has fired in the episode: a commitment trigger fires once.
    fn trigger(
        &self,
        _at: &TurnState<'_>,
        _prompts: &PromptSet,
    ) -> Result<Option<Trigger>, AgentError> {
        Ok(None)
    }

    /// Feedback answering `finish[answer]` instead of accepting it, if any.
    fn finish(
        &mut self,
        _answer: &str,
        _prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        Ok(None)
    }

    /// The observation given instead of running `action`, if it is refused. Sees every
    /// action the loop would run, in order.
    fn refuse(
        &mut self,
        _action: &Action,
        _prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        Ok(None)
    }
}

/// What a rule sees before a turn.
pub(super) struct TurnState<'a> {
    /// The turn about to be taken (1-based).
    pub number: u32,
    /// The merged memory after the previous turn.
    pub state: &'a WorkingMemory,
    /// The turns taken so far.
    pub turns: &'a [Turn],
}

/// A commit message due with a turn.
pub(super) struct Trigger {
    pub message: String,
    /// The adaptive condition that fired, recorded as the episode's commitment.
    pub condition: Option<AdaptiveCondition>,
}

impl Trigger {
    /// Records the trigger in the turn and the episode; returns the message to append
    /// to the turn's user message.
    pub fn record(self, episode: &mut Episode, turn: &mut Turn) -> String {
        turn.nudged = true;
        episode.nudge_turn = Some(turn.number);
        if let Some(condition) = self.condition {
            episode.outputs.commitment = Some(Commitment {
                turn: turn.number,
                condition,
            });
        }
        self.message
    }
}

/// The `stopping` setting's strategy for a method keeping `memory`. App. D.5's
/// strategies all work on the typed memory ("all use the same working memory
/// structure"); a method without one keeps the nudge's rule alone.
pub(super) fn stopping(stopping: Stopping, memory: &MemoryKind) -> Box<dyn Strategy> {
    let Some(schema) = memory.typed() else {
        return Box::new(NudgeOnly);
    };
    match stopping {
        Stopping::Nudge => Box::new(NudgeOnly),
        Stopping::Structural => Box::new(structural::Structural::new(schema)),
        Stopping::ForwardOnly => Box::new(forward_only::ForwardOnly::default()),
        Stopping::Contrastive => Box::new(contrastive::Contrastive),
        Stopping::LateVerification => {
            Box::new(late_verification::LateVerification::searching_free())
        }
        Stopping::LateVerificationMemory => {
            Box::new(late_verification::LateVerification::keeping_memory())
        }
    }
}

/// The `nudge` setting's rule for an episode acting with `memory`, if it has one.
/// `hops` is the question's hop count when the benchmark says (adaptive coverage).
pub(super) fn nudge(
    settings: &AgentSettings,
    memory: &MemoryKind,
    hops: Option<u8>,
) -> Option<Box<dyn Strategy>> {
    match settings.nudge {
        NudgeAt::Adaptive => memory
            .typed()
            .map(|schema| Box::new(adaptive::Adaptive::new(settings, schema, hops)) as _),
        NudgeAt::Fraction(_) | NudgeAt::Turn(_) => {
            nudge::TimeNudge::new(settings, memory).map(|n| Box::new(n) as _)
        }
        NudgeAt::Never => None,
    }
}

/// `stopping=nudge` (SLEUTH's default): no rule beyond the nudge.
struct NudgeOnly;

impl Strategy for NudgeOnly {}

/// An episode's commitment rules, asked in order: the nudge's, then the stopping
/// strategy's.
pub(super) struct CommitmentRules {
    rules: Vec<Box<dyn Strategy>>,
}

impl CommitmentRules {
    pub fn new(nudge: Option<Box<dyn Strategy>>, stopping: Box<dyn Strategy>) -> Self {
        CommitmentRules {
            rules: nudge.into_iter().chain([stopping]).collect(),
        }
    }

    /// The commit message due with turn `number`: the first rule that fires, once per
    /// episode.
    pub fn due(
        &self,
        number: u32,
        state: &WorkingMemory,
        episode: &Episode,
        prompts: &PromptSet,
    ) -> Result<Option<Trigger>, AgentError> {
        if episode.nudge_turn.is_some() {
            return Ok(None);
        }
        let at = TurnState {
            number,
            state,
            turns: &episode.turns,
        };
        for rule in &self.rules {
            if let Some(trigger) = rule.trigger(&at, prompts)? {
                return Ok(Some(trigger));
            }
        }
        Ok(None)
    }

    /// Feedback answering a finish instead of accepting it (the first rule's), if any.
    pub fn finish(
        &mut self,
        answer: &str,
        prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        for rule in &mut self.rules {
            if let Some(feedback) = rule.finish(answer, prompts)? {
                return Ok(Some(feedback));
            }
        }
        Ok(None)
    }

    /// The observation refusing `action` (the first rule's), if any; every rule sees
    /// the action.
    pub fn refuse(
        &mut self,
        action: &Action,
        prompts: &PromptSet,
    ) -> Result<Option<String>, AgentError> {
        let mut refusal = None;
        for rule in &mut self.rules {
            let this = rule.refuse(action, prompts)?;
            refusal = refusal.or(this);
        }
        Ok(refusal)
    }
}
