//! Reflexion, once, over any kind of attempt.
//!
//! Run an attempt; when the controller's [`Judge`] finds the answer wrong (against the
//! gold answer, which the model never sees), ask the model for a reflection on the
//! attempt and run another attempt carrying the reflections so far. Both papers' Reflexion
//! baselines are this wrapper: SLEUTH paper §4 (episodes = 2 on the shared loop, each
//! new episode given the latest reflection) and EIR paper App. D.1 (up to 5 Direct trials,
//! each started afresh with every reflection so far; the record keeps the first trial and
//! the oracle-stopped answer). A method never imports `eval`: the judge is passed in.

use super::{call_model, AgentError, CallKind, Episode, Method, RunContext};
use crate::data::Question;
use crate::llm::ChatRequest;
use crate::methods::outputs::AttemptSummary;
use async_trait::async_trait;
use std::sync::Arc;

/// Decides whether an answer is right: the external controller of both Reflexions.
pub trait Judge: Send + Sync {
    fn is_correct(&self, question: &Question, answer: Option<&str>) -> bool;
}

/// One kind of attempt the wrapper can retry.
#[async_trait]
pub trait Attempt: Send + Sync {
    /// Runs one attempt that carries the reflections written so far.
    async fn attempt(
        &self,
        question: &Question,
        ctx: &RunContext,
        reflections: &[String],
    ) -> Result<Episode, AgentError>;

    /// The reflection request after a failed attempt: `last` is that attempt and
    /// `so_far` every attempt up to it, folded into one episode.
    fn reflection(
        &self,
        question: &Question,
        last: &Episode,
        so_far: &Episode,
    ) -> Result<ChatRequest, AgentError>;

    /// Attempts per question, the first included.
    fn max_attempts(&self) -> u32;
}

/// Reflexion over attempts of kind `A`.
pub struct Retry<A> {
    attempt: A,
    judge: Arc<dyn Judge>,
}

impl<A: Attempt> Retry<A> {
    pub fn new(attempt: A, judge: Arc<dyn Judge>) -> Self {
        Retry { attempt, judge }
    }
}

#[async_trait]
impl<A: Attempt> Method for Retry<A> {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let max = self.attempt.max_attempts().max(1);
        let mut total = Episode::default();
        let mut reflections: Vec<String> = Vec::new();
        for number in 1..=max {
            let episode = match self.attempt.attempt(question, ctx, &reflections).await {
                Ok(ep) => ep,
                Err(AgentError::Llm { source, partial }) => {
                    absorb(&mut total, *partial);
                    total.outputs.reflections = reflections;
                    return Err(AgentError::Llm {
                        source,
                        partial: Box::new(total),
                    });
                }
                Err(e) => return Err(e),
            };
            let correct = self.judge.is_correct(question, episode.answer.as_deref());
            let last = episode.clone();
            absorb(&mut total, episode);
            if correct || number == max {
                break;
            }
            let request = self.attempt.reflection(question, &last, &total)?;
            let retrieved = total.retrieved.clone();
            match call_model(
                ctx,
                &request,
                CallKind::Reflection,
                &mut total,
                None,
                &retrieved,
            )
            .await
            {
                Ok(Some(text)) => reflections.push(text.trim().to_string()),
                // The attempts no longer fit the context: keep the last answer.
                Ok(None) => break,
                Err(AgentError::Llm {
                    source,
                    mut partial,
                }) => {
                    partial.outputs.reflections = reflections;
                    return Err(AgentError::Llm { source, partial });
                }
                Err(e) => return Err(e),
            }
        }
        total.outputs.reflections = reflections;
        Ok(total)
    }
}

/// Folds an attempt into the running episode: its turns are renumbered to follow on and
/// each is marked with its trial (the attempt's 1-based position), counts and usage add up, rejections add up, and the latest attempt's answer, stop
/// reason and evidence are the episode's.
fn absorb(total: &mut Episode, mut next: Episode) {
    let offset = total.turns.len() as u32;
    let trial = total.outputs.attempts.len() as u32 + 1;
    for t in &mut next.turns {
        t.number += offset;
        t.trial = Some(trial);
    }
    total.outputs.attempts.push(AttemptSummary {
        answer: next.answer.clone(),
        stop: next.stop,
        turns: next.turns.len() as u32,
        calls: next.total_calls(),
        retrieved: next.retrieved.clone(),
        cited: next.outputs.evidence.as_ref().map(|e| e.cited.clone()),
        usage: next.usage,
        billed_usage: next.billed_usage,
    });
    let calls_before = total.total_calls();
    total
        .notes
        .absorb(std::mem::take(&mut next.notes), calls_before);
    total.usage += next.usage;
    total.billed_usage += next.billed_usage;
    for (k, v) in &next.calls {
        *total.calls.entry(*k).or_default() += v;
    }
    total.tool_calls += next.tool_calls;
    total.reminders += next.reminders;
    for r in &next.retrieved {
        if !total.retrieved.contains(r) {
            total.retrieved.push(r.clone());
        }
    }
    total.nudge_turn = total.nudge_turn.or(next.nudge_turn.map(|t| t + offset));
    total.turns.append(&mut next.turns);
    total.answer = next.answer;
    total.stop = next.stop;
    let outputs = &mut total.outputs;
    outputs.memory_counts.extend(next.outputs.memory_counts);
    if let Some(mut evidence) = next.outputs.evidence {
        if let Some(before) = &outputs.evidence {
            for (cause, n) in &before.rejected {
                *evidence.rejected.entry(*cause).or_default() += n;
            }
        }
        outputs.evidence = Some(evidence);
    }
}

/// An attempt as text for a reflection prompt: each response, why it was refused if it
/// was, and its observations clipped to `observation_chars`.
pub fn attempt_text(episode: &Episode, observation_chars: usize) -> String {
    let mut out = String::new();
    for turn in &episode.turns {
        out.push_str(&format!(
            "Turn {}:\n{}\n",
            turn.number,
            turn.response.trim()
        ));
        if let Some(r) = &turn.rejection {
            out.push_str(&format!("Rejected: {}\n", r.message));
        }
        for obs in &turn.observations {
            let clipped: String = obs.text.chars().take(observation_chars).collect();
            out.push_str(&format!("Observation: {clipped}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
