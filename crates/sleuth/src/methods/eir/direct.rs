//! Direct: the EIR paper's baseline (§4.2, App. B.3). Reasoning and reading interleave;
//! H turns in all, the submission included; scored on the first valid submitted answer.
//!
//! Its inputs are EIR's without the lists (App. B.3): the question, the previous
//! action's returned text (or why its response was refused) and the unread titles;
//! earlier steps' reasoning and text are not carried. In the corpus setting the prompt
//! also holds the two most recently read paragraphs and asks what the action should
//! establish, its expected result and how progress will be judged.
//!
//! The same policy runs Agentic SSR (a [`Check`] between proposal and execution) and
//! each of Reflexion's trials ([`EirAttempt`], with notes from earlier trials).

use super::json::{
    extract_object, opt_string, parse_move, Citation, Extraction, Move, RejectCause, Rejection,
};
use super::schema::{self, reply};
use super::trajectory::{rejection_feedback, Budget, Policy, Trajectory};
use super::verification::Verification;
use super::Shared;
use crate::data::Question;
use crate::env::Observation;
use crate::llm::{ChatRequest, Message};
use crate::methods::retry::{attempt_text, Attempt};
use crate::methods::{AgentError, Episode, Method, RunContext, StopReason, Turn};
use async_trait::async_trait;
use minijinja::context;
use serde_json::Value;

/// What runs between a proposal and its execution (Agentic SSR's verification, EIR
/// App. D.1): the move to execute instead, and the record of how it was chosen.
#[async_trait]
pub trait Check: Send + Sync {
    /// `context` is what the agent has seen as the prompt shows it; `turn` is the turn
    /// in progress (kept in the partial episode if a call fails).
    async fn check(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        context: &str,
        proposal: &Proposal,
        turn: &Turn,
    ) -> Result<(Move, Verification), AgentError>;
}

/// A parsed proposal: the reasoning and the action.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub reasoning: String,
    pub action: Move,
}

/// Parses a Direct-format response. The whole response must be JSON (fences allowed).
pub fn parse_proposal(text: &str) -> Result<Proposal, Rejection> {
    let obj = extract_object(text, Extraction::Strict).ok_or_else(|| {
        Rejection::new(
            RejectCause::Unparseable,
            "the response was not a single JSON object",
        )
    })?;
    Ok(Proposal {
        reasoning: opt_string(&obj, &reply::REASONING)?.unwrap_or_default(),
        action: parse_move(&obj)?,
    })
}

/// Paragraphs the corpus-setting prompt keeps (EIR App. B.3: the two most recent).
const RECENT_READS: usize = 2;

pub fn describe(mv: &Move) -> String {
    match mv {
        Move::Read { title } => format!("read \"{title}\""),
        Move::Search { query } => format!("search \"{query}\""),
        Move::Submit { answer, .. } => format!("submit \"{answer}\""),
    }
}

pub struct Direct {
    shared: Shared,
}

/// Direct on the shared loop: the previous step's result in the prompt, a response that
/// must be one JSON object, and (for SSR) a checker between proposal and execution.
struct DirectPolicy<'q> {
    shared: &'q Shared,
    question: &'q Question,
    reflections: &'q [String],
    checker: Option<&'q dyn Check>,
    /// The corpus setting (search offered): the recent paragraphs are kept.
    corpus: bool,
    /// The previous action's returned text, or why its response was refused.
    previous: String,
    /// The latest read paragraphs, oldest first (corpus setting only).
    recent: Vec<String>,
}

impl DirectPolicy<'_> {
    /// The previous step's result as the prompt shows it: in the corpus setting a read's
    /// result is the latest of the recent paragraphs, already shown once (EIR App. B.3
    /// gives Direct the two most recent paragraphs, not the latest twice).
    fn previous_shown(&self) -> &str {
        if self.recent.last() == Some(&self.previous) {
            ""
        } else {
            &self.previous
        }
    }

    /// What the agent has seen as the prompt shows it (also SSR's context).
    fn view(&self) -> String {
        let mut parts: Vec<String> = self
            .recent
            .iter()
            .map(|p| format!("Recently read:\n{p}"))
            .collect();
        let previous = self.previous_shown();
        if !previous.is_empty() {
            parts.push(format!("Result of the previous step:\n{previous}"));
        }
        if parts.is_empty() {
            return "(nothing yet)".into();
        }
        parts.join("\n\n")
    }
}

#[async_trait]
impl Policy for DirectPolicy<'_> {
    fn prompt(&self, t: &Trajectory<'_>, turn: u32) -> Result<(String, Value), AgentError> {
        let prompt = self
            .shared
            .prompts
            .render(
                "direct_action.txt",
                context! {
                    question => &self.question.text,
                    reflections => self.reflections,
                    previous => self.previous_shown(),
                    recent => &self.recent,
                    can_search => t.env.can_search(),
                    readable => t.env.choices(),
                    reads_left => t.budget.reads.saturating_sub(t.reads_used),
                    turn,
                    turns => t.budget.turns,
                    submit_only => t.submit_only(turn),
                },
            )
            .map_err(AgentError::from)?;
        Ok((prompt, schema::direct_action(t.env.can_search())))
    }

    async fn accept(
        &mut self,
        t: &mut Trajectory<'_>,
        turn: &mut Turn,
    ) -> Result<Result<Move, Rejection>, AgentError> {
        let mut result = parse_proposal(&turn.response);
        if let (Ok(proposal), Some(checker)) = (&result, self.checker) {
            let context = self.view();
            let (action, report) = checker
                .check(self.question, t, &context, proposal, turn)
                .await?;
            turn.verification = Some(report);
            result = Ok(Proposal {
                reasoning: proposal.reasoning.clone(),
                action,
            });
        }
        Ok(result.and_then(|p| {
            runnable(t, &p.action, turn.number)?;
            Ok(p.action)
        }))
    }

    fn refused(&mut self, rejection: &Rejection, turn: &mut Turn) {
        self.previous = rejection_feedback(rejection, turn.number);
    }

    fn observed(&mut self, mv: &Move, observation: &Observation, _turn: u32) {
        self.previous = observation.text.clone();
        // A read that showed a paragraph (a refused read shows none).
        if matches!(mv, Move::Read { .. }) && !observation.shown.is_empty() && self.corpus {
            self.recent.push(observation.text.clone());
            if self.recent.len() > RECENT_READS {
                self.recent.remove(0);
            }
        }
    }
}

/// Whether the trajectory would run `mv` on `turn`: the check every Direct-format action
/// passes before it runs (allowed now, citing only read sentences). Agentic SSR applies
/// the same check to a refined action and to a correction (EIR App. D.1, "no valid
/// action"), so a fallback is never an action the trajectory would refuse.
pub fn runnable(t: &Trajectory<'_>, mv: &Move, turn: u32) -> Result<(), Rejection> {
    t.allowed(mv, turn)?;
    cites_only_read(t, mv)
}

/// EIR App. H.4: an invalid citation is a cause of rejection (Table 22). A submission
/// citing a sentence that was not read is refused like any other invalid action (it uses
/// its turn, and its cause is in the record), never accepted with the citation dropped.
fn cites_only_read(t: &Trajectory<'_>, mv: &Move) -> Result<(), Rejection> {
    let Move::Submit { evidence, .. } = mv else {
        return Ok(());
    };
    let store = t.env.evidence();
    let unread: Vec<String> = evidence
        .iter()
        .filter(|c| store.get(&c.title, c.sentence).is_none())
        .map(|c| format!("\"{}\" sentence {}", c.title, c.sentence))
        .collect();
    if unread.is_empty() {
        return Ok(());
    }
    Err(Rejection::new(
        RejectCause::InvalidCitation,
        format!(
            "the submission cites sentences that were not read: {}; cite only sentences you have read",
            unread.join(", ")
        ),
    ))
}

impl Direct {
    pub fn new(shared: Shared) -> Self {
        Direct { shared }
    }

    /// One trajectory. `reflections` are Reflexion's notes from earlier trials;
    /// `checker` is Agentic SSR's verification of each proposal.
    pub async fn trial(
        &self,
        question: &Question,
        ctx: &RunContext,
        reflections: &[String],
        checker: Option<&dyn Check>,
    ) -> Result<Episode, AgentError> {
        let settings = &self.shared.settings;
        let env = self.shared.env.make(question);
        let mut t = Trajectory::new(ctx, settings, env, Budget::direct(settings));
        let mut policy = DirectPolicy {
            shared: &self.shared,
            question,
            reflections,
            checker,
            corpus: t.env.can_search(),
            previous: String::new(),
            recent: Vec::new(),
        };
        let ending = t.run(&mut policy).await?;
        // Scored on the first valid submission (EIR §4.2); an accepted submission cites
        // only read sentences (`cites_only_read`), named here as the store names them.
        let (answer, cited, dropped) = match ending.submission {
            Some(s) => {
                let store = t.env.evidence();
                let mut valid: Vec<Citation> = Vec::new();
                for c in &s.evidence {
                    if let Some(r) = store.get(&c.title, c.sentence) {
                        let c = Citation {
                            title: r.title().to_string(),
                            sentence: r.sentence(),
                        };
                        if !valid.contains(&c) {
                            valid.push(c);
                        }
                    }
                }
                let dropped = s.evidence.len() - valid.len();
                (Some(s.answer), valid, dropped)
            }
            None => (None, Vec::new(), 0),
        };
        t.episode.stop = match (&answer, ending.overflow) {
            (_, true) => StopReason::ContextOverflow,
            (Some(_), _) => StopReason::Finished,
            (None, _) => StopReason::Timeout,
        };
        t.episode.answer = answer;
        Ok(t.finish(cited, dropped))
    }
}

#[async_trait]
impl Method for Direct {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        self.trial(question, ctx, &[], None).await
    }
}

/// Observation text kept per read when a trial is shown back for reflection.
const REFLECTION_OBSERVATION_CHARS: usize = 800;

/// Reflexion in the EIR setting (EIR paper App. D.1): each trial is a fresh Direct
/// trajectory (no earlier text or reads) with every reflection so far in its prompt;
/// the reflection is written on the latest trial alone.
pub struct EirAttempt {
    direct: Direct,
}

impl EirAttempt {
    pub fn new(shared: Shared) -> Self {
        EirAttempt {
            direct: Direct::new(shared),
        }
    }
}

#[async_trait]
impl Attempt for EirAttempt {
    async fn attempt(
        &self,
        question: &Question,
        ctx: &RunContext,
        reflections: &[String],
    ) -> Result<Episode, AgentError> {
        self.direct.trial(question, ctx, reflections, None).await
    }

    fn reflection(
        &self,
        question: &Question,
        last: &Episode,
        _so_far: &Episode,
    ) -> Result<ChatRequest, AgentError> {
        let shared = &self.direct.shared;
        let answer = last
            .answer
            .clone()
            .unwrap_or_else(|| "(none: no valid answer was submitted)".into());
        let prompt = shared
            .prompts
            .render(
                "direct_reflection.txt",
                context! {
                    question => &question.text,
                    trajectory => attempt_text(last, REFLECTION_OBSERVATION_CHARS),
                    answer,
                },
            )
            .map_err(AgentError::from)?;
        Ok(ChatRequest::new(vec![Message::user(prompt)])
            .temperature(shared.settings.temperature)
            .max_tokens(shared.settings.max_tokens))
    }

    fn max_attempts(&self) -> u32 {
        self.direct.shared.settings.trials
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_requires_json_as_a_whole() {
        let ok = parse_proposal(
            "```json\n{\"reasoning\": \"r\", \"action\": {\"type\": \"read\", \"title\": \"A\"}}\n```",
        )
        .unwrap();
        assert_eq!(ok.action, Move::Read { title: "A".into() });
        let prose = "I will read A: {\"reasoning\": \"r\", \"action\": {\"type\": \"read\", \"title\": \"A\"}}";
        assert_eq!(
            parse_proposal(prose).unwrap_err().cause,
            RejectCause::Unparseable
        );
    }
}
