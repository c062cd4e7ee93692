//! One retrieval trajectory of the EIR setting, shared by EIR, Direct, Agentic SSR and
//! Reflexion's trials: the budget, model calls with per-kind counting and partial
//! episodes on failure, the check that an action is allowed now, execution of reads,
//! rejection counting by cause, and the per-episode metrics.

use super::json::{Citation, Move, RejectCause, Rejection};
use super::settings::EirSettings;
use super::support::{gold_recall, support_f1};
use crate::data::Question;
use crate::env::{EvidenceEnv, Observation};
use crate::llm::{ChatRequest, LlmError, OutputConstraint};
use crate::methods::{AgentError, CallKind, Episode, RunContext, StopReason, Turn};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Turns and reads of one trajectory. The last turn accepts only a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub turns: u32,
    pub reads: u32,
}

impl Budget {
    /// EIR: H read turns, then one submit-only turn.
    pub fn eir(reads: u32) -> Self {
        Budget {
            turns: reads + 1,
            reads,
        }
    }

    /// Direct, SSR, Reflexion: H turns in all, the submission included.
    pub fn direct(reads: u32) -> Self {
        Budget {
            turns: reads,
            reads,
        }
    }
}

pub struct Trajectory<'a> {
    pub ctx: &'a RunContext,
    pub settings: &'a EirSettings,
    pub env: Box<dyn EvidenceEnv>,
    pub episode: Episode,
    pub budget: Budget,
    pub reads_used: u32,
    rejected: BTreeMap<RejectCause, u32>,
}

impl<'a> Trajectory<'a> {
    pub fn new(
        ctx: &'a RunContext,
        settings: &'a EirSettings,
        env: Box<dyn EvidenceEnv>,
        budget: Budget,
    ) -> Self {
        Trajectory {
            ctx,
            settings,
            env,
            episode: Episode::default(),
            budget,
            reads_used: 0,
            rejected: BTreeMap::new(),
        }
    }

    /// A request at the method's temperature and token limit, constrained by `schema`
    /// unless constraints are switched off.
    pub fn request(&self, prompt: String, schema: Value) -> ChatRequest {
        request(self.settings, prompt, schema)
    }

    /// Calls the model and counts the call. `Ok(None)` when the prompt no longer fits
    /// the model's context; other failures return the partial episode, with `turn`
    /// (the turn in progress) in its trace.
    pub async fn call(
        &mut self,
        kind: CallKind,
        request: &ChatRequest,
        turn: Option<&Turn>,
    ) -> Result<Option<String>, AgentError> {
        match self.ctx.model.complete(request).await {
            Ok(response) => {
                self.episode.count_call(kind, &response);
                Ok(Some(response.text))
            }
            Err(LlmError::ContextOverflow { .. }) => Ok(None),
            Err(source) => {
                let mut partial = self.episode.clone();
                partial.turns.extend(turn.cloned());
                partial.stop = StopReason::Error;
                partial.retrieved = self.env.retrieved().to_vec();
                partial
                    .extra
                    .insert("rejected_actions".into(), self.rejections());
                Err(AgentError::Llm {
                    source,
                    partial: Box::new(partial),
                })
            }
        }
    }

    pub fn is_last(&self, turn: u32) -> bool {
        turn >= self.budget.turns
    }

    /// Whether `mv` may run on `turn`.
    pub fn allowed(&self, mv: &Move, turn: u32) -> Result<(), Rejection> {
        let not_allowed = |m: &str| Err(Rejection::new(RejectCause::NotAllowed, m));
        match mv {
            Move::Submit { .. } => Ok(()),
            _ if self.is_last(turn) => not_allowed("this turn accepts only a submission"),
            Move::Search { .. } if !self.env.can_search() => {
                not_allowed("there is no search here; read one of the listed titles")
            }
            Move::Read { .. } if self.reads_used >= self.budget.reads => {
                not_allowed("no reads are left; submit an answer")
            }
            _ => Ok(()),
        }
    }

    /// Runs a read or search (call [`Self::allowed`] first).
    pub fn execute(&mut self, mv: &Move, turn: u32) -> Observation {
        self.episode.tool_calls += 1;
        match mv {
            Move::Read { title } => {
                self.reads_used += 1;
                self.env.read(title, turn).observation
            }
            Move::Search { query } => self
                .env
                .search(query, turn)
                .unwrap_or_else(|| Observation::new("There is no search here.")),
            Move::Submit { .. } => Observation::new("Submitted."),
        }
    }

    /// Records a rejected response on its turn.
    pub fn reject(&mut self, turn: &mut Turn, rejection: Rejection) {
        *self.rejected.entry(rejection.cause).or_default() += 1;
        turn.rejection = Some(rejection);
    }

    /// Shows a finished turn to the observer and appends it to the trace.
    pub fn push(&mut self, turn: Turn) {
        self.ctx.observe(&turn);
        self.episode.turns.push(turn);
    }

    /// Rejections by cause, as stored in `extra.rejected_actions`.
    pub fn rejections(&self) -> Value {
        Value::Object(
            self.rejected
                .iter()
                .map(|(k, v)| (k.name().to_string(), json!(v)))
                .collect(),
        )
    }

    /// Closes the trajectory: retrieved titles and the setting's metrics go into the
    /// episode (`cited` are the citations the scored answer rests on).
    pub fn finish(mut self, question: &Question, cited: &[Citation]) -> Episode {
        let read = self.env.retrieved().to_vec();
        self.episode.retrieved = read.clone();
        let rejected = self.rejections();
        record_metrics(&mut self.episode, question, cited, &read);
        let extra = &mut self.episode.extra;
        extra.insert(
            "rejected_total".into(),
            json!(self.rejected.values().sum::<u32>()),
        );
        extra.insert("rejected_actions".into(), rejected);
        self.episode
    }
}

pub fn request(settings: &EirSettings, prompt: String, schema: Value) -> ChatRequest {
    let req = ChatRequest::new(vec![crate::llm::Message::user(prompt)])
        .temperature(settings.temperature)
        .max_tokens(settings.max_tokens);
    if settings.json_schema {
        req.constraint(OutputConstraint::JsonSchema(schema))
    } else {
        req
    }
}

/// Support F1, citations, paragraphs read and gold recall, into `episode.extra`.
pub fn record_metrics(
    episode: &mut Episode,
    question: &Question,
    cited: &[Citation],
    read: &[String],
) {
    let extra = &mut episode.extra;
    extra.insert("cited".into(), json!(cited));
    extra.insert("support_f1".into(), json!(support_f1(question, cited)));
    extra.insert("paragraphs_read".into(), json!(read.len()));
    extra.insert("gold_recall".into(), json!(gold_recall(question, read)));
}

/// How a rejection is reported back to the model on the next turn.
pub fn rejection_feedback(rejection: &Rejection, turn: u32) -> String {
    format!(
        "Your response on turn {turn} was rejected ({}): {}. Nothing was changed or read, and the turn was used.",
        rejection.cause.name(),
        rejection.message
    )
}
