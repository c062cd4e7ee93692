//! Working-memory entries and the state they form.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Low,
    Medium,
    High,
}

/// `[F1] <statement> (source: <title>)`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    pub id: String,
    pub statement: String,
    pub source: Option<String>,
}

/// `[H1] <hypothesis> | confidence: high | supports: F1, F2 | contradicts: -`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hypothesis {
    pub id: String,
    pub text: String,
    pub confidence: Option<Confidence>,
    pub supports: Vec<String>,
    pub contradicts: Vec<String>,
}

/// `[Q1] <question> | action: <search terms> | priority: high`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenQuestion {
    pub id: String,
    pub text: String,
    pub action: Option<String>,
    pub priority: Option<Priority>,
}

/// The state `W_t = (F_t, H_t, Q_t)`, plus free-form notes for the Notes baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingMemory {
    pub facts: Vec<Fact>,
    pub hypotheses: Vec<Hypothesis>,
    pub questions: Vec<OpenQuestion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}
