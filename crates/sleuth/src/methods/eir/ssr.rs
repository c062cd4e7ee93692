//! Agentic SSR: Socratic Self-Refine adapted to action selection, as the EIR paper's
//! Appendix D.1 specifies it.
//!
//! Per proposed action: one call decomposes the proposal into established facts, the
//! justification, and the action; three verifier calls judge each part (at the verifier
//! temperature, 0.7 by default, each with its own sample index so a response cache never
//! merges them). The vote ([`super::verification`]) picks at most one part to refine; if
//! one qualifies, one refinement call revises it. If the refinement yields no valid
//! action (none that the trajectory would run: unreadable, or a read on the submit-only
//! turn, a read with none left, a submission citing unread sentences), the action part's
//! agreed correction is used when that part qualified and the correction is valid;
//! otherwise the original action stands. The checker runs between a Direct proposal and its
//! execution, through Direct's [`Check`] seam.

use super::direct::{describe, parse_proposal, runnable, Check, Direct, Proposal};
use super::json::{Move, RejectCause};
use super::schema;
use super::trajectory::Trajectory;
use super::verification::{
    correction_action, parse_judgment, pick, tally, Decomposition, Outcome, PartJudgments,
    PartVote, Refinement, Verification,
};
use super::Shared;
use crate::data::Question;
use crate::methods::{AgentError, CallKind, Episode, Method, RunContext, Turn};
use async_trait::async_trait;
use minijinja::context;

pub use super::verification::{Part, PARTS, SAMPLES};

/// Verification of proposals, run inside a Direct trial.
pub struct Checker<'s> {
    shared: &'s Shared,
}

#[async_trait]
impl Check for Checker<'_> {
    /// Checks one proposal: returns the action to execute and the trace's record of how.
    async fn check(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        context: &str,
        proposal: &Proposal,
        turn: &Turn,
    ) -> Result<(Move, Verification), AgentError> {
        let prompts = &self.shared.prompts;
        let proposal_text = format!(
            "Reasoning: {}\nAction: {}",
            proposal.reasoning,
            describe(&proposal.action)
        );
        let prompt = prompts
            .render(
                "ssr_decompose.txt",
                context! { question => &question.text, context, proposal => &proposal_text },
            )
            .map_err(AgentError::from)?;
        let req = t.request(prompt, schema::decomposition());
        let decomposition = t
            .call(CallKind::Decomposition, &req, Some(turn))
            .await?
            .and_then(|text| Decomposition::parse(&text));
        let Some(parts) = decomposition else {
            return Ok((proposal.action.clone(), Verification::unreadable()));
        };

        let mut votes = Vec::new();
        let mut judgments_log = Vec::new();
        for part in PARTS {
            let prompt = prompts
                .render(
                    "ssr_verify.txt",
                    context! {
                        question => &question.text,
                        context,
                        facts => &parts.facts,
                        justification => &parts.justification,
                        action => &parts.action,
                        part => part.name(),
                    },
                )
                .map_err(AgentError::from)?;
            let mut judgments = Vec::new();
            for sample in 0..SAMPLES {
                let req = t
                    .request(prompt.clone(), schema::verdict())
                    .temperature(self.shared.settings.verifier_temperature)
                    .sample_index(sample);
                let reply = t.call(CallKind::Verification, &req, Some(turn)).await?;
                judgments.push(reply.as_deref().and_then(parse_judgment));
            }
            votes.push(tally(part, &judgments));
            judgments_log.push(PartJudgments { part, judgments });
        }

        let mut report = Verification {
            decomposition: Some(parts.clone()),
            judgments: judgments_log,
            votes,
            refinement: None,
            outcome: Outcome::NoPartQualified,
        };
        let Some(chosen) = pick(&report.votes) else {
            return Ok((proposal.action.clone(), report));
        };
        let part = PARTS[chosen];
        let readable = t.env.choices();
        let can_search = t.env.can_search();
        let number = turn.number;
        let prompt = prompts
            .render(
                "ssr_refine.txt",
                context! {
                    question => &question.text,
                    context,
                    readable,
                    can_search,
                    proposal => &proposal_text,
                    part => part.name(),
                    text => parts.part(part),
                    correction => report.votes[chosen].agreed.as_deref().unwrap_or(""),
                    turn => number,
                    turns => t.budget.turns,
                    submit_only => t.submit_only(number),
                },
            )
            .map_err(AgentError::from)?;
        let req = t.request(prompt, schema::direct_action(can_search));
        let refined = t.call(CallKind::Refinement, &req, Some(turn)).await?;
        // EIR App. D.1: "if refinement gives no valid action, an agreed correction to the
        // action part is used if available; otherwise the original action is retained".
        // Valid means what the trajectory would run (`runnable`: allowed on this turn,
        // citing only read sentences), not merely what parses: a refined read on the
        // submit-only turn, or a submission citing unread sentences, is no valid action.
        let refined_move = refined.as_deref().map(|r| {
            parse_proposal(r).and_then(|p| runnable(t, &p.action, number).map(|()| p.action))
        });
        let correction =
            agreed_action_correction(&report.votes).filter(|mv| runnable(t, mv, number).is_ok());
        let rejection = refined_move
            .as_ref()
            .and_then(|r| r.as_ref().err().cloned());
        let parsed = rejection
            .as_ref()
            .is_some_and(|r| !matches!(r.cause, RejectCause::Unparseable));
        report.refinement = Some(Refinement {
            refined_part: part,
            refinement: refined,
            rejection,
        });
        let (mv, outcome) = match (refined_move, correction) {
            (Some(Ok(mv)), _) => (mv, Outcome::Refined),
            (_, Some(mv)) => (mv, Outcome::ActionCorrection),
            _ if parsed => (proposal.action.clone(), Outcome::RefinementInvalid),
            _ => (proposal.action.clone(), Outcome::RefinementUnreadable),
        };
        report.outcome = outcome;
        Ok((mv, report))
    }
}

/// The action part's agreed correction, read as an action, when the action part
/// qualified (EIR App. D.1): "agreed" is the vote's agreement, which needs at least two
/// rejections, a majority of valid judgments rejecting and a majority of the rejections
/// agreeing. A lone rejection's correction is no agreement (`tally` records none), and
/// is never a fallback.
fn agreed_action_correction(votes: &[PartVote]) -> Option<Move> {
    let vote = votes.iter().find(|v| v.part == Part::Action)?;
    if !vote.qualifies {
        return None;
    }
    vote.agreed.as_deref().and_then(correction_action)
}

/// The method: Direct's loop with every proposal checked.
pub struct Ssr {
    direct: Direct,
    shared: Shared,
}

impl Ssr {
    pub fn new(shared: Shared) -> Self {
        Ssr {
            direct: Direct::new(shared.clone()),
            shared,
        }
    }
}

#[async_trait]
impl Method for Ssr {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let checker = Checker {
            shared: &self.shared,
        };
        self.direct.trial(question, ctx, &[], Some(&checker)).await
    }
}
