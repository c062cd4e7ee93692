//! Direct: the EIR paper's baseline. Reasoning and reading interleave (ReAct-style: the
//! prompt carries every earlier step's reasoning, action and result); H turns in all,
//! the submission included; scored on the first valid submitted answer.
//!
//! The same trial loop runs Agentic SSR (with a checker between proposal and execution)
//! and each of Reflexion's trials (with notes from earlier trials in the prompt).

use super::json::{
    extract_object, opt_string, parse_move, Citation, Extraction, Move, RejectCause, Rejection,
};
use super::schema;
use super::ssr::Checker;
use super::trajectory::{rejection_feedback, Budget, Trajectory};
use super::Shared;
use crate::data::Question;
use crate::methods::{AgentError, CallKind, Episode, Method, RunContext, StopReason, Turn};
use async_trait::async_trait;
use minijinja::context;
use serde::Serialize;
use serde_json::json;

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
        reasoning: opt_string(&obj, "reasoning")?.unwrap_or_default(),
        action: parse_move(&obj)?,
    })
}

/// One earlier step as the prompt shows it.
#[derive(Debug, Clone, Serialize)]
pub struct StepView {
    pub turn: u32,
    pub reasoning: String,
    pub action: String,
    pub result: String,
}

pub fn steps_text(steps: &[StepView]) -> String {
    if steps.is_empty() {
        return "(nothing yet)".into();
    }
    steps
        .iter()
        .map(|s| {
            format!(
                "Step {}\nReasoning: {}\nAction: {}\nResult:\n{}",
                s.turn, s.reasoning, s.action, s.result
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

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
        checker: Option<&Checker<'_>>,
    ) -> Result<Episode, AgentError> {
        let settings = &self.shared.settings;
        let env = self.shared.env.make(question);
        let mut t = Trajectory::new(ctx, settings, env, Budget::direct(settings.reads));
        let mut steps: Vec<StepView> = Vec::new();
        let mut submitted: Option<(String, Vec<Citation>)> = None;
        let mut overflow = false;
        for number in 1..=t.budget.turns {
            let prompt = self
                .shared
                .prompts
                .render(
                    "direct_action.txt",
                    context! {
                        question => &question.text,
                        reflections,
                        steps => &steps,
                        readable => t.env.readable(),
                        turn => number,
                        turns => t.budget.turns,
                        submit_only => t.is_last(number),
                    },
                )
                .map_err(AgentError::config)?;
            let req = t.request(prompt, schema::direct_action());
            let mut turn = Turn {
                number,
                ..Turn::default()
            };
            let Some(text) = t.call(CallKind::Action, &req, Some(&turn)).await? else {
                overflow = true;
                break;
            };
            turn.response = text;
            let mut result = parse_proposal(&turn.response);
            if let (Ok(proposal), Some(checker)) = (&result, checker) {
                let context = steps_text(&steps);
                let (action, report) = checker
                    .check(question, &mut t, &context, proposal, &turn)
                    .await?;
                turn.verification = Some(report);
                result = Ok(Proposal {
                    reasoning: proposal.reasoning.clone(),
                    action,
                });
            }
            let checked = result.and_then(|p| t.allowed(&p.action, number).map(|_| p));
            let proposal = match checked {
                Ok(p) => p,
                Err(rejection) => {
                    steps.push(StepView {
                        turn: number,
                        reasoning: "(not accepted)".into(),
                        action: "none".into(),
                        result: rejection_feedback(&rejection, number),
                    });
                    t.reject(&mut turn, rejection);
                    t.push(turn);
                    continue;
                }
            };
            turn.actions = vec![proposal.action.to_action()];
            if let Move::Submit { answer, evidence } = &proposal.action {
                submitted = Some((answer.clone(), evidence.clone()));
                t.push(turn);
                break;
            }
            let observation = t.execute(&proposal.action, number);
            steps.push(StepView {
                turn: number,
                reasoning: proposal.reasoning,
                action: describe(&proposal.action),
                result: observation.text.clone(),
            });
            turn.observations.push(observation);
            t.push(turn);
        }
        // Citations count only where they name a read sentence.
        let (answer, cited, dropped) = match submitted {
            Some((answer, evidence)) => {
                let store = t.env.evidence();
                let mut valid: Vec<Citation> = Vec::new();
                for c in &evidence {
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
                let dropped = evidence.len() - valid.len();
                (Some(answer), valid, dropped)
            }
            None => (None, Vec::new(), 0),
        };
        t.episode.stop = match (&answer, overflow) {
            (_, true) => StopReason::ContextOverflow,
            (Some(_), _) => StopReason::Finished,
            (None, _) => StopReason::Timeout,
        };
        t.episode.answer = answer;
        t.episode
            .extra
            .insert("dropped_citations".into(), json!(dropped));
        Ok(t.finish(question, &cited))
    }
}

#[async_trait]
impl Method for Direct {
    fn name(&self) -> &str {
        "direct"
    }

    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        self.trial(question, ctx, &[], None).await
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
