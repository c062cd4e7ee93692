//! One JSON line per question × method × model: the unit every report is built from.
//! Field names are a stable contract (other tools read them).

use crate::methods::Turn;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub dataset: String,
    pub hops: Option<u8>,
    #[serde(default)]
    pub kind: Option<String>,
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
