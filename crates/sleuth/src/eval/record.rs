//! One JSON line per question × method × model: the unit every report is built from.
//! Field names are a stable contract (other tools read them).

use crate::data::Question;
use crate::methods::{Episode, StopReason, Turn};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub dataset: String,
    pub hops: Option<u8>,
    #[serde(default)]
    pub kind: Option<String>,
    /// The question text (for people reading records and traces).
    #[serde(default)]
    pub question: String,
    pub method: String,
    pub model: String,
    pub answer: Option<String>,
    /// Gold answer first, then aliases.
    pub gold: Vec<String>,
    pub em: f64,
    pub f1: f64,
    pub finished: bool,
    pub timed_out: bool,
    pub stop: String,
    pub turns: u32,
    pub calls: u32,
    #[serde(default)]
    pub calls_by_kind: std::collections::BTreeMap<String, u32>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub cost_usd: f64,
    #[serde(default)]
    pub retries: u32,
    pub nudge_turn: Option<u32>,
    pub reminders: u32,
    /// Fraction of structured turns that followed the memory notation (None for
    /// unstructured methods).
    #[serde(default)]
    pub adherence: Option<f64>,
    pub retrieved: Vec<String>,
    /// Titles of the gold paragraphs, for support recall.
    #[serde(default)]
    pub gold_titles: Vec<String>,
    pub error: Option<String>,
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Per turn: the model text, parsed memory, actions, observations, flags.
    pub trace: Vec<Turn>,
}

/// Who produced a record, besides the episode itself.
pub struct RecordContext<'a> {
    pub method: &'a str,
    pub model: &'a str,
    pub retries: u32,
    /// What the provider billed for this episode (cache hits cost nothing).
    pub cost_usd: f64,
}

impl RunRecord {
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
        let stop = serde_json::to_value(episode.stop)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        RunRecord {
            id: question.id.clone(),
            dataset: question.dataset.name().to_string(),
            hops: question.hops,
            kind: question.kind.clone(),
            question: question.text.clone(),
            method: ctx.method.to_string(),
            model: ctx.model.to_string(),
            answer: episode.answer.clone(),
            gold: question.answers.clone(),
            em: scores.em,
            f1: scores.f1,
            finished: episode.stop == StopReason::Finished,
            timed_out: episode.stop == StopReason::Timeout,
            stop,
            turns: episode.turns.len() as u32,
            calls: episode.total_calls(),
            calls_by_kind: episode
                .calls
                .iter()
                .map(|(k, v)| {
                    let key = serde_json::to_value(k)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string));
                    (key.unwrap_or_default(), *v)
                })
                .collect(),
            input_tokens: episode.usage.input_tokens,
            output_tokens: episode.usage.output_tokens,
            cached_input_tokens: episode.usage.cached_input_tokens,
            cost_usd: ctx.cost_usd,
            retries: ctx.retries,
            nudge_turn: episode.nudge_turn,
            reminders: episode.reminders,
            adherence,
            retrieved: episode.retrieved.clone(),
            gold_titles: question
                .gold_titles()
                .into_iter()
                .map(str::to_string)
                .collect(),
            error: None,
            extra: episode.extra.clone(),
            trace: episode.turns,
        }
    }
}
