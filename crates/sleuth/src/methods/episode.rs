//! The trace of one run of a method on one question.
//!
//! An [`Episode`] is shared by every method; what a family of methods produces besides
//! its answer and trace is the episode's `outputs`, typed per family (tantivy's
//! `Collector::Fruit`): the EIR trajectory fills an `Episode<EirOutputs>`, whose evidence
//! always exists, and a finished method hands the runner an `Episode<Outputs>`, the
//! record's one shape (see [`super::outputs`]).

use super::call_kind::CallKind;
use super::call_notes::CallNotes;
use super::outputs::Outputs;
use super::stop::StopReason;
use super::{AgentError, RunContext};
use crate::env::{Action, Observation};
use crate::llm::{ChatRequest, ChatResponse, LlmError, Usage};
use crate::memory::WorkingMemory;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One turn of the agent loop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// 1-based turn number (rejected responses do not consume a number).
    pub number: u32,
    /// The accepted model response, verbatim.
    pub response: String,
    /// The working memory the model wrote this turn, parsed (structured methods only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<WorkingMemory>,
    /// The merged state after this turn (facts kept monotonically).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<WorkingMemory>,
    /// Whether the response followed the memory notation (structured methods only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adherent: Option<bool>,
    /// Self-Ask sub-questions or IRCoT reasoning steps parsed from the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<crate::protocol::formats::ReasoningSteps>,
    pub actions: Vec<Action>,
    pub observations: Vec<Observation>,
    /// The commitment trigger (the nudge, or structural completion's commit message)
    /// was given to the model with the observation before this turn.
    #[serde(default)]
    pub nudged: bool,
    /// Ids of the confirmed facts this turn's memory left out (they stay in `state`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// Ids of the open questions this turn's memory resolved (marked or removed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<String>,
    /// The accepted response stopped on the output-token limit (`max_tokens`; OpenAI
    /// `finish_reason: length`, Anthropic `stop_reason: max_tokens`): it is cut, however
    /// complete it looks, and its memory may have lost its last sections. The record
    /// counts every cut call (`truncated_calls`, `call_stops`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Responses rejected by protocol enforcement before this one was accepted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
    /// EIR: the Requirements and Conclusions lists after this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lists: Option<super::eir::Lists>,
    /// EIR setting: why this turn's response was not executed (it still used the turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<super::eir::Rejection>,
    /// Agentic SSR: the decomposition, verifier votes and refinement of this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<super::eir::Verification>,
    /// EIR (§3.2, `list_errors=discard`; the list-feedback control's `hidden_lists`,
    /// App. E.2): why this turn's list changes were discarded; the lists stayed as they
    /// were and the turn's action still ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discarded_lists: Option<super::eir::Rejection>,
    /// The retry wrappers (both Reflexions, EIR App. D.1): the 1-based trial this turn
    /// belongs to, so analyses tell trials apart without reading turn numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
    /// The turn in progress when a model call failed: kept so the trace loses nothing,
    /// but its request never finished, so it is no recorded action (EIR App. H.4,
    /// Table 22's denominators exclude "unfinished requests").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfinished: bool,
}

/// A finished (or interrupted) episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode<O = Outputs> {
    pub answer: Option<String>,
    pub stop: StopReason,
    pub turns: Vec<Turn>,
    pub usage: Usage,
    /// Usage of the calls a provider actually served (not sleuth's response cache):
    /// what the episode was billed for.
    #[serde(default)]
    pub billed_usage: Usage,
    pub calls: BTreeMap<CallKind, u32>,
    /// Titles or ids in order of first retrieval.
    pub retrieved: Vec<String>,
    /// Tool calls executed (several per turn when `actions_per_turn` > 1).
    pub tool_calls: u32,
    pub nudge_turn: Option<u32>,
    pub reminders: u32,
    /// What the method produced besides the answer and trace: its family's outputs
    /// while it runs, the record's [`Outputs`] once it is done.
    #[serde(default)]
    pub outputs: O,
    /// Calls that were truncated, refused or sent without their cache marks.
    #[serde(default, skip_serializing_if = "CallNotes::is_empty")]
    pub notes: CallNotes,
}

impl<O: Default> Default for Episode<O> {
    fn default() -> Self {
        Episode {
            answer: None,
            stop: StopReason::Timeout,
            turns: Vec::new(),
            usage: Usage::default(),
            billed_usage: Usage::default(),
            calls: BTreeMap::new(),
            retrieved: Vec::new(),
            tool_calls: 0,
            nudge_turn: None,
            reminders: 0,
            outputs: O::default(),
            notes: CallNotes::default(),
        }
    }
}

impl<O> Episode<O> {
    pub fn total_calls(&self) -> u32 {
        self.calls.values().sum()
    }

    /// Counts one model call of `kind` and its usage.
    pub fn count_call(&mut self, kind: CallKind, response: &ChatResponse) {
        *self.calls.entry(kind).or_default() += 1;
        let number = self.total_calls();
        self.notes.note(number, kind, response);
        self.usage += response.usage;
        if !response.cached {
            self.billed_usage += response.usage;
        }
    }

    /// The same episode with its outputs converted (a family's into the record's
    /// [`Outputs`]: `episode.map_outputs(Outputs::from)`).
    pub fn map_outputs<P>(self, f: impl FnOnce(O) -> P) -> Episode<P> {
        Episode {
            answer: self.answer,
            stop: self.stop,
            turns: self.turns,
            usage: self.usage,
            billed_usage: self.billed_usage,
            calls: self.calls,
            retrieved: self.retrieved,
            tool_calls: self.tool_calls,
            nudge_turn: self.nudge_turn,
            reminders: self.reminders,
            outputs: f(self.outputs),
            notes: self.notes,
        }
    }
}

/// Calls the model for `episode` and counts the call as `kind`: the one place both
/// method families call a model. `Ok(None)` when the prompt no longer fits the model's
/// context; any other failure returns the episode so far (with `in_progress`, the turn
/// being built, and the titles retrieved so far) so its trace is never lost.
pub(crate) async fn call_model<O: Clone + Into<Outputs>>(
    ctx: &RunContext,
    request: &ChatRequest,
    kind: CallKind,
    episode: &mut Episode<O>,
    in_progress: Option<&Turn>,
    retrieved: &[String],
) -> Result<Option<String>, AgentError> {
    Ok(
        call_model_response(ctx, request, kind, episode, in_progress, retrieved)
            .await?
            .map(|r| r.text),
    )
}

/// [`call_model`], returning the whole response (native tool calls included).
pub(crate) async fn call_model_response<O: Clone + Into<Outputs>>(
    ctx: &RunContext,
    request: &ChatRequest,
    kind: CallKind,
    episode: &mut Episode<O>,
    in_progress: Option<&Turn>,
    retrieved: &[String],
) -> Result<Option<ChatResponse>, AgentError> {
    match ctx.model.complete(request).await {
        Ok(response) => {
            episode.count_call(kind, &response);
            Ok(Some(response))
        }
        Err(LlmError::ContextOverflow { .. }) => Ok(None),
        Err(source) => {
            let mut partial = episode.clone().map_outputs(Into::into);
            partial.turns.extend(in_progress.cloned().map(|mut t| {
                t.unfinished = true;
                t
            }));
            partial.stop = StopReason::Error;
            partial.retrieved = retrieved.to_vec();
            // The call was made (and retried) though it failed: the record counts it
            // with the calls that succeeded, as the run's closing summary does.
            *partial.calls.entry(kind).or_default() += 1;
            Err(AgentError::Llm {
                source,
                partial: Box::new(partial),
            })
        }
    }
}
