//! The entries of the working-memory notation (SLEUTH paper §3.2, App. K): a confirmed
//! fact, a hypothesis, an open question, and the levels and triple they carry, each with
//! the one line the notation writes for it. What the memory does with them (merging,
//! contradictions) is [`crate::memory`]'s.

use serde::{Deserialize, Serialize};
use std::fmt;

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

/// `[F1] <statement> (source: <title>)`, under `contradictions=true` optionally followed
/// by `| confidence: high | triple: <subject> ; <relation> ; <value>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    pub id: String,
    pub statement: String,
    pub source: Option<String>,
    /// How sure the model is of the fact (ours: per-fact confidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// What the fact states, when the model wrote it as a triple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triple: Option<Triple>,
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

/// `[Q1] <question> | action: <search terms> | priority: high`, optionally marked
/// `(resolved)` (SLEUTH paper App. K: "Mark resolved questions").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenQuestion {
    pub id: String,
    pub text: String,
    pub action: Option<String>,
    pub priority: Option<Priority>,
    /// The model marked this question resolved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resolved: bool,
}

/// What a fact states, as `subject ; relation ; value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triple {
    pub subject: String,
    pub relation: String,
    pub value: String,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
        }
    }
}

impl Triple {
    /// The `triple:` field as written: `subject ; relation ; value`, parentheses allowed.
    pub fn parse(text: &str) -> Option<Triple> {
        let text = text.trim().trim_start_matches('(').trim_end_matches(')');
        let parts: Vec<&str> = text.split(';').map(str::trim).collect();
        match parts.as_slice() {
            [s, r, v] if !s.is_empty() && !r.is_empty() && !v.is_empty() => Some(Triple {
                subject: s.to_string(),
                relation: r.to_string(),
                value: v.to_string(),
            }),
            _ => None,
        }
    }
}

impl fmt::Display for Triple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ; {} ; {}", self.subject, self.relation, self.value)
    }
}

impl Fact {
    pub fn render(&self) -> String {
        let mut out = match &self.source {
            Some(s) => format!("[{}] {} (source: {})", self.id, self.statement, s),
            None => format!("[{}] {}", self.id, self.statement),
        };
        if let Some(c) = self.confidence {
            out.push_str(&format!(" | confidence: {}", c.as_str()));
        }
        if let Some(t) = &self.triple {
            out.push_str(&format!(" | triple: {t}"));
        }
        out
    }
}

fn id_list(ids: &[String]) -> String {
    if ids.is_empty() {
        "-".into()
    } else {
        ids.join(", ")
    }
}

impl Hypothesis {
    pub fn render(&self) -> String {
        format!(
            "[{}] {} | confidence: {} | supports: {} | contradicts: {}",
            self.id,
            self.text,
            self.confidence.map_or("?", Confidence::as_str),
            id_list(&self.supports),
            id_list(&self.contradicts)
        )
    }
}

impl OpenQuestion {
    pub fn render(&self) -> String {
        format!(
            "[{}] {} | action: {} | priority: {}{}",
            self.id,
            self.text,
            self.action.as_deref().unwrap_or("-"),
            self.priority.map_or("?", Priority::as_str),
            if self.resolved { " (resolved)" } else { "" }
        )
    }
}
