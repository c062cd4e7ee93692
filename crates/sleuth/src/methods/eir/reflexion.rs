//! Reflexion in the EIR setting: up to `trials` Direct trajectories (5 by default). After
//! a trial whose answer is not an exact match, the model writes a reflection on that
//! trial, and the next trial starts over (no earlier text or reads) with every
//! reflection so far in its prompt.
//!
//! The exact-match check is the external controller's: it compares the answer with the
//! reference, and the model never sees the reference or a score. The record reports
//! both readings of the method: the episode's answer is the oracle-stopped one (first
//! exact match, else the last trial's), and `first_trial_*` values in `extra` give the
//! first trial alone.

use super::direct::Direct;
use super::Shared;
use crate::data::Question;
use crate::eval::metrics::answer_scores;
use crate::llm::{ChatRequest, LlmError, Message};
use crate::methods::{AgentError, CallKind, Episode, Method, RunContext};
use async_trait::async_trait;
use minijinja::context;
use serde_json::{json, Value};

/// Observation text kept per read when a trial is shown back for reflection.
const OBSERVATION_CHARS: usize = 800;

pub struct EirReflexion {
    direct: Direct,
    shared: Shared,
}

impl EirReflexion {
    pub fn new(shared: Shared) -> Self {
        EirReflexion {
            direct: Direct::new(shared.clone()),
            shared,
        }
    }
}

/// A trial as text for the reflection prompt: each response and (clipped) result.
fn trajectory(trial: &Episode) -> String {
    let mut out = String::new();
    for turn in &trial.turns {
        out.push_str(&format!("Turn {}: {}\n", turn.number, turn.response.trim()));
        if let Some(r) = &turn.rejection {
            out.push_str(&format!("Rejected: {}\n", r.message));
        }
        for obs in &turn.observations {
            let clipped: String = obs.text.chars().take(OBSERVATION_CHARS).collect();
            out.push_str(&format!("Result: {clipped}\n"));
        }
    }
    out
}

/// Folds a trial into the running episode; its turns are renumbered to follow on.
fn absorb(total: &mut Episode, mut trial: Episode) {
    let offset = total.turns.len() as u32;
    for t in &mut trial.turns {
        t.number += offset;
    }
    total.usage += trial.usage;
    total.billed_usage += trial.billed_usage;
    for (k, v) in &trial.calls {
        *total.calls.entry(*k).or_default() += v;
    }
    total.tool_calls += trial.tool_calls;
    for r in &trial.retrieved {
        if !total.retrieved.contains(r) {
            total.retrieved.push(r.clone());
        }
    }
    total.turns.append(&mut trial.turns);
    total.answer = trial.answer.clone();
    total.stop = trial.stop;
    // The scored trial's metrics replace the previous trial's.
    for key in [
        "support_f1",
        "cited",
        "paragraphs_read",
        "gold_recall",
        "dropped_citations",
    ] {
        if let Some(v) = trial.extra.get(key) {
            total.extra.insert(key.into(), v.clone());
        }
    }
    // Rejections add up over trials.
    let mut sum = total
        .extra
        .get("rejected_actions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(m)) = trial.extra.get("rejected_actions") {
        for (k, v) in m {
            let n = sum.get(k).and_then(Value::as_u64).unwrap_or(0) + v.as_u64().unwrap_or(0);
            sum.insert(k.clone(), json!(n));
        }
    }
    let total_rejected: u64 = sum.values().filter_map(Value::as_u64).sum();
    total
        .extra
        .insert("rejected_actions".into(), Value::Object(sum));
    total
        .extra
        .insert("rejected_total".into(), json!(total_rejected));
}

#[async_trait]
impl Method for EirReflexion {
    fn name(&self) -> &str {
        "eir-reflexion"
    }

    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let settings = &self.shared.settings;
        let mut total = Episode::default();
        let mut reflections: Vec<String> = Vec::new();
        let mut answers: Vec<Option<String>> = Vec::new();
        let mut matched = false;
        for trial_no in 1..=settings.trials {
            let trial = match self.direct.trial(question, ctx, &reflections, None).await {
                Ok(t) => t,
                Err(AgentError::Llm { source, partial }) => {
                    absorb(&mut total, *partial);
                    return Err(AgentError::Llm {
                        source,
                        partial: Box::new(total),
                    });
                }
                Err(e) => return Err(e),
            };
            let scores = answer_scores(question, trial.answer.as_deref());
            if trial_no == 1 {
                let extra = &mut total.extra;
                extra.insert("first_trial_answer".into(), json!(trial.answer));
                extra.insert("first_trial_em".into(), json!(scores.em));
                extra.insert("first_trial_f1".into(), json!(scores.f1));
                extra.insert("first_trial_calls".into(), json!(trial.total_calls()));
                for key in ["support_f1", "gold_recall", "paragraphs_read"] {
                    if let Some(v) = trial.extra.get(key) {
                        extra.insert(format!("first_trial_{key}"), v.clone());
                    }
                }
            }
            answers.push(trial.answer.clone());
            let attempt = trajectory(&trial);
            let answer_text = trial
                .answer
                .clone()
                .unwrap_or_else(|| "(none: no valid answer was submitted)".into());
            absorb(&mut total, trial);
            if scores.em >= 1.0 {
                matched = true;
                break;
            }
            if trial_no == settings.trials {
                break;
            }
            let prompt = self
                .shared
                .prompts
                .render(
                    "direct_reflection.txt",
                    context! { question => &question.text, trajectory => attempt, answer => answer_text },
                )
                .map_err(AgentError::config)?;
            let req = ChatRequest::new(vec![Message::user(prompt)])
                .temperature(settings.temperature)
                .max_tokens(settings.max_tokens);
            match ctx.model.complete(&req).await {
                Ok(response) => {
                    total.count_call(CallKind::Reflection, &response);
                    reflections.push(response.text.trim().to_string());
                }
                Err(LlmError::ContextOverflow { .. }) => break,
                Err(source) => {
                    return Err(AgentError::Llm {
                        source,
                        partial: Box::new(total),
                    })
                }
            }
        }
        let extra = &mut total.extra;
        extra.insert("trials".into(), json!(answers.len()));
        extra.insert("trial_answers".into(), json!(answers));
        extra.insert("oracle_matched".into(), json!(matched));
        extra.insert("reflections".into(), json!(reflections));
        Ok(total)
    }
}
