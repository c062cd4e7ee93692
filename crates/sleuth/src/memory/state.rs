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

/// The state `W_t = (F_t, H_t, Q_t)`, plus free-form notes for the Notes baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingMemory {
    pub facts: Vec<Fact>,
    pub hypotheses: Vec<Hypothesis>,
    /// In the model's memory: what it wrote. In the merged state: the questions still
    /// open (resolved ones move to `resolved`).
    pub questions: Vec<OpenQuestion>,
    /// Merged state only: every question resolved so far, in the order resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<OpenQuestion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// What one merge changed besides the state itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// Confirmed facts the model's latest memory left out (they stay in the state).
    pub dropped: Vec<Fact>,
    /// Ids of the questions resolved by this turn's memory.
    pub resolved: Vec<String>,
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

fn normalized(statement: &str) -> String {
    statement
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches('.')
        .to_lowercase()
}

impl WorkingMemory {
    /// Folds the memory the model wrote this turn into the running state.
    ///
    /// Facts are monotonic: every fact ever confirmed stays, even when the model's
    /// latest memory omits it; a new statement under an id already taken gets a fresh
    /// id. Hypotheses, questions and notes are the model's latest view (they are meant
    /// to change). A question counts as resolved when the model marks it `(resolved)` or
    /// removes it from its list (SLEUTH paper §3.2 step 3: "remove questions answered by
    /// the new observation"); resolved questions are kept, monotonically, in `resolved`.
    pub fn merge(&mut self, written: &WorkingMemory) -> Merged {
        let mut resolved = Vec::new();
        for q in &self.questions {
            let still_open = written
                .questions
                .iter()
                .any(|w| w.id == q.id && !w.resolved);
            if !still_open {
                let marked = written
                    .questions
                    .iter()
                    .find(|w| w.id == q.id && w.resolved);
                let mut done = marked.cloned().unwrap_or_else(|| q.clone());
                done.resolved = true;
                resolved.push(done);
            }
        }
        // Marked resolved in the same turn it was written: resolved too.
        for w in written.questions.iter().filter(|w| w.resolved) {
            let known = self.questions.iter().any(|q| q.id == w.id)
                || self
                    .resolved
                    .iter()
                    .any(|r| r.id == w.id && r.text == w.text);
            if !known {
                resolved.push(w.clone());
            }
        }
        let resolved_ids = resolved.iter().map(|q| q.id.clone()).collect();
        self.resolved.extend(resolved);

        let mut seen = Vec::new();
        for fact in &written.facts {
            let key = normalized(&fact.statement);
            if let Some(existing) = self.facts.iter().find(|f| normalized(&f.statement) == key) {
                seen.push(existing.id.clone());
                continue;
            }
            let mut fact = fact.clone();
            if self.facts.iter().any(|f| f.id == fact.id) {
                fact.id = format!("F{}", self.facts.len() + 1);
                while self.facts.iter().any(|f| f.id == fact.id) {
                    fact.id.push('\'');
                }
            }
            seen.push(fact.id.clone());
            self.facts.push(fact);
        }
        self.hypotheses = written.hypotheses.clone();
        self.questions = written
            .questions
            .iter()
            .filter(|q| !q.resolved)
            .cloned()
            .collect();
        if written.notes.is_some() {
            self.notes = written.notes.clone();
        }
        let dropped = self
            .facts
            .iter()
            .filter(|f| !seen.contains(&f.id))
            .cloned()
            .collect();
        Merged {
            dropped,
            resolved: resolved_ids,
        }
    }

    /// Structural completion (SLEUTH paper App. D.5): the question was decomposed into
    /// sub-questions and every one of them is now resolved.
    pub fn all_questions_resolved(&self) -> bool {
        !self.resolved.is_empty() && self.questions.is_empty()
    }

    /// The highest-priority open question (first among equals).
    pub fn top_question(&self) -> Option<&OpenQuestion> {
        self.questions
            .iter()
            .enumerate()
            .max_by(|(i, a), (j, b)| a.priority.cmp(&b.priority).then(j.cmp(i)))
            .map(|(_, q)| q)
    }

    /// Renders the sections of `schema` in the paper's notation.
    pub fn render(&self, schema: &super::MemorySchema) -> String {
        use super::Section;
        let mut out = String::new();
        for &section in &schema.sections {
            out.push_str(section.header());
            out.push('\n');
            let before = out.len();
            match section {
                Section::Facts => {
                    for f in &self.facts {
                        out.push_str(&format!("- {}\n", f.render()));
                    }
                }
                Section::Hypotheses => {
                    for h in &self.hypotheses {
                        out.push_str(&format!("- {}\n", h.render()));
                    }
                }
                Section::Questions => {
                    for q in &self.questions {
                        out.push_str(&format!("- {}\n", q.render()));
                    }
                }
                Section::Notes => {
                    if let Some(n) = &self.notes {
                        out.push_str(n);
                        out.push('\n');
                    }
                }
            }
            if out.len() == before {
                out.push_str("- none\n");
            }
        }
        out
    }
}

impl Fact {
    pub fn render(&self) -> String {
        match &self.source {
            Some(s) => format!("[{}] {} (source: {})", self.id, self.statement, s),
            None => format!("[{}] {}", self.id, self.statement),
        }
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
