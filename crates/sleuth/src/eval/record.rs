//! One JSON line per question × method × model: the unit every report is built from.
//! Field names are a stable contract (other tools read them).

use crate::data::Question;
use crate::methods::{CallKind, CallStop, Episode, ErrorKind, Outputs, StopReason, Turn};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the record format (see `docs/records.md`). Version 2 replaced the
/// untyped `extra` map with `outputs`, `settings`, `support_f1`, `gold_recall` and
/// `first_attempt`, and typed `stop` and `calls_by_kind`.
pub const RECORD_VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(default)]
    pub record_version: u32,
    pub id: String,
    pub dataset: String,
    pub hops: Option<u8>,
    #[serde(default)]
    pub kind: Option<String>,
    /// The question text (for people reading records and traces).
    #[serde(default)]
    pub question: String,
    pub method: String,
    /// Every setting the method reads, resolved (defaults included), so records of
    /// different arms stay apart when files are concatenated.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    pub model: String,
    /// The digest of what the record was made under, in a run directory
    /// ([`super::RunConfig::digest_for`]): records that disagree here were not made
    /// under one run's conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<String>,
    pub answer: Option<String>,
    /// Gold answer first, then aliases.
    pub gold: Vec<String>,
    pub em: f64,
    pub f1: f64,
    pub finished: bool,
    pub timed_out: bool,
    pub stop: StopReason,
    pub turns: u32,
    pub calls: u32,
    #[serde(default)]
    pub calls_by_kind: BTreeMap<CallKind, u32>,
    /// Tool calls executed (a turn may issue several).
    #[serde(default)]
    pub tool_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache (priced at its cached rate).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Input tokens written to the provider's prompt cache (Anthropic; priced at its
    /// cache-write rate).
    #[serde(default)]
    pub cache_write_tokens: u64,
    pub cost_usd: f64,
    /// The record's tokens at the fixed list prices (EIR App. D.5: what Tables 9 and 19
    /// report), whatever the response cache or a prompt cache saved. Absent when the
    /// model has no price.
    #[serde(default, skip_serializing_if = "is_zero_usd")]
    pub list_cost_usd: f64,
    #[serde(default)]
    pub retries: u32,
    /// Calls answered without the output constraint the method asked for (the server
    /// refused the form; the client resent the request without it).
    #[serde(default)]
    pub constraints_dropped: u64,
    /// Calls answered through a provider batch (`--batch`), billed at its rate; absent
    /// when none (a run without `--batch`, or one answered from the response cache).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub batched_calls: u64,
    /// Calls cut by the output-token limit (OpenAI `length`, Anthropic `max_tokens`):
    /// their replies are truncated however complete they look. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated_calls: u32,
    /// Calls the model refused; the refusal text is the turn's reply. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refusals: u32,
    /// Calls sent without their prompt-cache marks because the server refused them
    /// (nothing of those was cached). Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_marks_dropped: u32,
    /// Calls whose reported token usage no call has (negative, fractional, above 10^8,
    /// not a number): the reply was kept and its tokens counted as 0, so the record's
    /// token counts and cost are lower bounds. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage_unknown: u32,
    /// The stop reason of every call that did not end normally (its 1-based number
    /// and kind). Absent when every call ended normally.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_stops: Vec<CallStop>,
    pub nudge_turn: Option<u32>,
    pub reminders: u32,
    /// Fraction of structured turns that followed the memory notation (None for
    /// unstructured methods).
    #[serde(default)]
    pub adherence: Option<f64>,
    pub retrieved: Vec<String>,
    /// Titles of the gold paragraphs as the agent sees them (a repeated title is `T (2)`,
    /// as in `retrieved`), for support recall: they identify paragraphs, not homonyms.
    #[serde(default)]
    pub gold_titles: Vec<String>,
    pub error: Option<String>,
    /// Where the fix for `error` lies (`model`, `template`, `method`), decided where the
    /// error was still typed; absent without an error and on records written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// Support F1 of the cited evidence against the annotations (methods that cite).
    #[serde(default)]
    pub support_f1: Option<f64>,
    /// Share of the gold paragraphs that were read (recall; methods that cite).
    #[serde(default)]
    pub gold_recall: Option<f64>,
    /// The retry wrappers' first attempt, scored on its own (Reflexion's first trial).
    #[serde(default)]
    pub first_attempt: Option<FirstAttempt>,
    /// The additional-retrieval control's first final answer, scored on its own (EIR
    /// App. F.4: Support F1 and the share of annotated paragraphs read, before the
    /// extra reads; `support_f1` and `gold_recall` are after them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_extra_reads: Option<SupportScores>,
    /// What the method produced besides the answer (typed; see `methods::outputs`).
    #[serde(default)]
    pub outputs: Outputs,
    /// Per turn: the model text, parsed memory, actions, observations, flags.
    pub trace: Vec<Turn>,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_usd(x: &f64) -> bool {
    *x == 0.0
}

impl RunRecord {
    /// Cost at the fixed list prices (EIR App. D.5); a record written before the field
    /// existed falls back to its billed cost.
    pub fn list_cost(&self) -> f64 {
        list_or_billed(self.list_cost_usd, self.cost_usd)
    }

    /// Why this record's numbers cannot be a run's, if they cannot: a score outside
    /// [0, 1] or a negative or non-finite cost. The runner never writes one, so such a
    /// record was edited or damaged, and scoring it as it is would print an EM of 283%
    /// (hardening III, item 9).
    pub fn out_of_range(&self) -> Option<String> {
        let share = |name: &str, v: f64| {
            (!(0.0..=1.0).contains(&v)).then(|| format!("{name} = {v} is outside 0 to 1"))
        };
        let dollars = |name: &str, v: f64| {
            (!(v.is_finite() && v >= 0.0)).then(|| format!("{name} = {v} is not a cost"))
        };
        share("em", self.em)
            .or_else(|| share("f1", self.f1))
            .or_else(|| self.support_f1.and_then(|v| share("support_f1", v)))
            .or_else(|| self.adherence.and_then(|v| share("adherence", v)))
            .or_else(|| dollars("cost_usd", self.cost_usd))
            .or_else(|| dollars("list_cost_usd", self.list_cost_usd))
    }
}

/// The list cost, or the billed one where a record predates `list_cost_usd` (0).
pub(crate) fn list_or_billed(list_usd: f64, billed_usd: f64) -> f64 {
    if list_usd > 0.0 {
        list_usd
    } else {
        billed_usd
    }
}

/// A retry wrapper's first attempt, scored as if it were the method's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstAttempt {
    pub answer: Option<String>,
    pub em: f64,
    pub f1: f64,
    pub support_f1: Option<f64>,
    pub gold_recall: Option<f64>,
    pub turns: u32,
    pub calls: u32,
    /// The attempt's own tokens and billed cost (the runner prices them; EIR §4.2: the
    /// first trial is reported with what it spent).
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    #[serde(default)]
    pub cost_usd: f64,
    /// The attempt's tokens at the fixed list prices (EIR App. D.5).
    #[serde(default, skip_serializing_if = "is_zero_usd")]
    pub list_cost_usd: f64,
}

/// Support F1 and gold recall of an answer other than the record's own, with the calls
/// made up to it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SupportScores {
    pub support_f1: Option<f64>,
    pub gold_recall: Option<f64>,
    pub calls: u32,
}

/// Who produced a record, besides the episode itself.
pub struct RecordContext<'a> {
    pub method: &'a str,
    /// The method's resolved settings.
    pub settings: &'a BTreeMap<String, String>,
    pub model: &'a str,
    pub retries: u32,
    /// What the provider billed for this episode (cache hits cost nothing).
    pub cost_usd: f64,
    /// Calls that ran without their output constraint because the server refused it.
    pub constraints_dropped: u64,
    /// Calls answered through a provider batch.
    pub batched_calls: u64,
}

impl RunRecord {
    /// EM and F1 of `answer` against the record's gold answers, by its benchmark's
    /// official rule; (0, 0) without an answer or for an unknown benchmark.
    pub fn score(&self, answer: Option<&str>) -> (f64, f64) {
        let (Some(a), Ok(d)) = (answer, self.dataset.parse::<crate::data::Dataset>()) else {
            return (0.0, 0.0);
        };
        let s = super::metrics::answer::score_answer(d, a, &self.gold);
        (s.em, s.f1)
    }

    /// The record scored against its first gold answer alone (`sleuth report --aliases
    /// off`): MuSiQue's `answer_aliases` and 2Wiki's aliases no longer count, for the
    /// answer and the first attempt. A record whose dataset is unknown is left as it is.
    pub fn without_aliases(&mut self) {
        if self.gold.len() <= 1 || self.dataset.parse::<crate::data::Dataset>().is_err() {
            return;
        }
        self.gold.truncate(1);
        (self.em, self.f1) = self.score(self.answer.as_deref());
        let first = (self.first_attempt.as_ref()).map(|f| self.score(f.answer.as_deref()));
        if let (Some(f), Some((em, f1))) = (self.first_attempt.as_mut(), first) {
            (f.em, f.f1) = (em, f1);
        }
    }

    /// Scores an episode against its question and flattens it into a record.
    pub fn from_episode(
        question: &Question,
        episode: Episode,
        ctx: &RecordContext<'_>,
    ) -> RunRecord {
        let scores = super::metrics::answer_scores(question, episode.answer.as_deref());
        let structured: Vec<bool> = episode.turns.iter().filter_map(|t| t.adherent).collect();
        let adherence = (!structured.is_empty())
            .then(|| structured.iter().filter(|a| **a).count() as f64 / structured.len() as f64);
        let cites = episode.outputs.evidence.as_ref();
        let support_f1 =
            cites.and_then(|e| super::metrics::citation_support_f1(question, &e.cited));
        let gold_recall =
            cites.and_then(|_| super::metrics::gold_recall(question, &episode.retrieved));
        let before_extra_reads = episode
            .outputs
            .final_call
            .as_ref()
            .and_then(|f| f.extra_reads.as_ref())
            .and_then(|x| {
                let before = x.before.as_ref()?;
                let retrieved: Vec<String> = episode
                    .retrieved
                    .iter()
                    .filter(|t| !x.read.contains(t))
                    .cloned()
                    .collect();
                Some(SupportScores {
                    support_f1: super::metrics::citation_support_f1(question, &before.cited),
                    gold_recall: super::metrics::gold_recall(question, &retrieved),
                    calls: before.calls,
                })
            });
        let first_attempt = episode.outputs.attempts.first().map(|a| {
            let scores = super::metrics::answer_scores(question, a.answer.as_deref());
            FirstAttempt {
                answer: a.answer.clone(),
                em: scores.em,
                f1: scores.f1,
                support_f1: a
                    .cited
                    .as_ref()
                    .and_then(|c| super::metrics::citation_support_f1(question, c)),
                gold_recall: a
                    .cited
                    .as_ref()
                    .and_then(|_| super::metrics::gold_recall(question, &a.retrieved)),
                turns: a.turns,
                calls: a.calls,
                input_tokens: a.usage.input_tokens,
                output_tokens: a.usage.output_tokens,
                cached_input_tokens: a.usage.cached_input_tokens,
                cache_write_tokens: a.usage.cache_write_tokens,
                cost_usd: 0.0,
                list_cost_usd: 0.0,
            }
        });
        RunRecord {
            record_version: RECORD_VERSION,
            id: question.id.clone(),
            dataset: question.dataset.name().to_string(),
            hops: question.hops,
            kind: question.kind.clone(),
            question: question.text.clone(),
            method: ctx.method.to_string(),
            settings: ctx.settings.clone(),
            model: ctx.model.to_string(),
            conditions: None,
            answer: episode.answer.clone(),
            gold: question.answers.clone(),
            em: scores.em,
            f1: scores.f1,
            finished: episode.stop == StopReason::Finished,
            timed_out: episode.stop == StopReason::Timeout,
            stop: episode.stop,
            turns: episode.turns.len() as u32,
            calls: episode.total_calls(),
            calls_by_kind: episode.calls.clone(),
            tool_calls: episode.tool_calls,
            input_tokens: episode.usage.input_tokens,
            output_tokens: episode.usage.output_tokens,
            cached_input_tokens: episode.usage.cached_input_tokens,
            cache_write_tokens: episode.usage.cache_write_tokens,
            cost_usd: ctx.cost_usd,
            list_cost_usd: 0.0,
            retries: ctx.retries,
            constraints_dropped: ctx.constraints_dropped,
            batched_calls: ctx.batched_calls,
            truncated_calls: episode.notes.truncated(),
            refusals: episode.notes.refusals(),
            cache_marks_dropped: episode.notes.cache_marks_dropped,
            usage_unknown: episode.notes.usage_unknown,
            call_stops: episode.notes.stops.clone(),
            nudge_turn: episode.nudge_turn,
            reminders: episode.reminders,
            adherence,
            retrieved: episode.retrieved.clone(),
            gold_titles: question.gold_shown(),
            error: None,
            error_kind: None,
            support_f1,
            gold_recall,
            first_attempt,
            before_extra_reads,
            outputs: episode.outputs,
            trace: episode.turns,
        }
    }
}
