//! The state the working-memory entries form, and how each turn's entries fold into it.

use super::conflict::{self, Conflict, Resolution};
use super::rewording::{self, FactIdReuse};
use crate::protocol::notation::{self, Fact, Hypothesis, MemorySchema, OpenQuestion, Written};
use serde::{Deserialize, Serialize};

/// Parses the sections of `schema` out of a model response (the notation's tolerant
/// reading, [`notation::parse`]) as a memory to merge.
pub fn parse_memory(text: &str, schema: &MemorySchema) -> WorkingMemory {
    notation::parse(text, schema).into()
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
    /// Merged state under contradiction detection: every contradiction raised, open or
    /// settled, in the order raised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
    /// Confirmed facts a settled conflict replaced (no longer confirmed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retracted: Vec<Fact>,
}

/// What one merge changed besides the state itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// Confirmed facts the model's latest memory left out (they stay in the state).
    pub dropped: Vec<Fact>,
    /// Ids of the questions resolved by this turn's memory.
    pub resolved: Vec<String>,
    /// Contradiction detection: the conflicts this turn raised (new facts held out).
    pub raised: Vec<Conflict>,
    /// Contradiction detection: open conflicts whose question this turn's memory left
    /// out (they stay open until marked resolved).
    pub pending: Vec<Conflict>,
}

/// How a turn's memory is folded into the state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeRules {
    /// Hold contradicting facts out and raise them as open questions (ours).
    pub contradictions: bool,
    /// The turn being merged (recorded on the conflicts it raises or settles).
    pub turn: u32,
    /// How a new statement under a confirmed fact's id is read ([`FactIdReuse`]).
    pub fact_id_reuse: FactIdReuse,
}

fn normalized(statement: &str) -> String {
    statement
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches('.')
        .to_lowercase()
}

/// Whether `new`, written under `old`'s id, rewords `old` (under `reuse`).
fn rewords(old: &Fact, new: &Fact, reuse: FactIdReuse) -> bool {
    reuse == FactIdReuse::Rewording || rewording::is_rewording(old, new)
}

impl WorkingMemory {
    /// Folds the memory the model wrote this turn into the running state (the paper's
    /// merge, without contradiction detection).
    pub fn merge(&mut self, written: &WorkingMemory) -> Merged {
        self.merge_with(written, MergeRules::default())
    }

    /// Folds the memory the model wrote this turn into the running state.
    ///
    /// Facts are monotonic: every fact ever confirmed stays, even when the model's
    /// latest memory omits it (SLEUTH §3.1: never retracted; §3.2 step 1: F_t ⊇
    /// F_{t−1}). The same statement under another id is the fact already held. A new
    /// statement under an id already confirmed is that fact reworded only when
    /// [`rewording::is_rewording`] says so (same source, most content words and every
    /// name and number kept): then it replaces the wording and adds nothing. Otherwise
    /// the model has renumbered its list: the old fact stays under its id, and the new
    /// one updates a held fact it rewords or is added under a fresh id
    /// (`rules.fact_id_reuse` = `Rewording` reads every reuse as a rewording, the
    /// earlier reading). Hypotheses, questions and notes are the model's latest view
    /// (they are meant to change). A question counts as resolved when the model marks
    /// it `(resolved)` or removes it from its list (SLEUTH paper §3.2 step 3: "remove
    /// questions answered by the new observation"); resolved questions are kept,
    /// monotonically, in `resolved`.
    ///
    /// Under `rules.contradictions` (ours, see [`conflict`]): a new fact contradicting a
    /// confirmed one is held out and raised as an open question; that question is
    /// resolved only by an explicit mark (leaving it out keeps it open), and the facts
    /// of the marking turn settle the conflict.
    pub fn merge_with(&mut self, written: &WorkingMemory, rules: MergeRules) -> Merged {
        let open_conflicts: Vec<String> = self
            .conflicts
            .iter()
            .filter(|c| c.is_open())
            .map(|c| c.question.clone())
            .collect();
        let marked_resolved =
            |id: &str| written.questions.iter().find(|w| w.id == id && w.resolved);
        let mut resolved = Vec::new();
        for q in &self.questions {
            let still_open = written
                .questions
                .iter()
                .any(|w| w.id == q.id && !w.resolved);
            let marked = marked_resolved(&q.id);
            if still_open || (marked.is_none() && open_conflicts.contains(&q.id)) {
                continue;
            }
            let mut done = marked.cloned().unwrap_or_else(|| q.clone());
            done.resolved = true;
            resolved.push(done);
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
        let resolved_ids: Vec<String> = resolved.iter().map(|q| q.id.clone()).collect();
        self.resolved.extend(resolved);
        self.settle_conflicts(&written.facts, &resolved_ids, rules.turn);

        let mut seen = Vec::new();
        let mut raised = Vec::new();
        for fact in &written.facts {
            let key = normalized(&fact.statement);
            if let Some(existing) = self.facts.iter().find(|f| normalized(&f.statement) == key) {
                seen.push(existing.id.clone());
                continue;
            }
            if rules.contradictions {
                if self.is_held(fact) {
                    continue;
                }
                if let Some(conflict) = self.contradiction(fact, written, rules.turn) {
                    raised.push(conflict.clone());
                    self.conflicts.push(conflict);
                    continue;
                }
            }
            match self.facts.iter().position(|f| f.id == fact.id) {
                // A rewording updates the fact under its id (§3.1: nothing retracted).
                Some(at) if rewords(&self.facts[at], fact, rules.fact_id_reuse) => {
                    seen.push(fact.id.clone());
                    self.facts[at] = fact.clone();
                }
                // Another fact reusing the id: the old one stays (§3.2 step 1: F_t ⊇
                // F_{t−1}). The new one rewords a fact held under another id (one kept
                // under a fresh id on an earlier turn), or is added under a fresh id.
                Some(_) => match self.rewording_held(fact) {
                    Some(at) => {
                        seen.push(self.facts[at].id.clone());
                        self.facts[at] = Fact {
                            id: self.facts[at].id.clone(),
                            ..fact.clone()
                        };
                    }
                    None => {
                        let mut added = fact.clone();
                        added.id = self.fresh_fact_id(written);
                        seen.push(added.id.clone());
                        self.facts.push(added);
                    }
                },
                None => {
                    seen.push(fact.id.clone());
                    self.facts.push(fact.clone());
                }
            }
        }
        self.hypotheses = written.hypotheses.clone();
        self.questions = written
            .questions
            .iter()
            .filter(|q| !q.resolved)
            .cloned()
            .collect();
        // Open conflicts stay open questions whether or not the model rewrote them.
        let mut pending = Vec::new();
        for c in self.conflicts.iter().filter(|c| c.is_open()) {
            if self.questions.iter().any(|q| q.id == c.question) {
                continue;
            }
            if let Some(confirmed) = self.facts.iter().find(|f| f.id == c.confirmed) {
                let q = conflict::conflict_question(c.question.clone(), confirmed, &c.claim);
                self.questions.push(q);
            }
            if !raised.iter().any(|r: &Conflict| r.question == c.question) {
                pending.push(c.clone());
            }
        }
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
            raised,
            pending,
        }
    }

    /// The held fact `fact` rewords, under whatever id it is held (`fact_id_reuse=check`).
    fn rewording_held(&self, fact: &Fact) -> Option<usize> {
        self.facts
            .iter()
            .position(|held| rewording::is_rewording(held, fact))
    }

    /// An id no fact of the state, of those retracted or of `written` has: one past the
    /// highest fact number in use.
    fn fresh_fact_id(&self, written: &WorkingMemory) -> String {
        let highest = self
            .facts
            .iter()
            .chain(&self.retracted)
            .chain(&written.facts)
            .filter_map(|f| f.id.strip_prefix('F')?.parse::<u32>().ok())
            .max()
            .unwrap_or(0);
        format!("F{}", highest + 1)
    }

    /// `fact`, renumbered when its id is already taken.
    fn with_free_id(&self, mut fact: Fact) -> Fact {
        if self.facts.iter().any(|f| f.id == fact.id) {
            fact.id = format!("F{}", self.facts.len() + self.retracted.len() + 1);
            while self.facts.iter().any(|f| f.id == fact.id) {
                fact.id.push('\'');
            }
        }
        fact
    }

    /// Whether `fact` is the claim of an open conflict (held until it is settled).
    fn is_held(&self, fact: &Fact) -> bool {
        let key = normalized(&fact.statement);
        self.conflicts
            .iter()
            .any(|c| c.is_open() && normalized(&c.claim.statement) == key)
    }

    /// The conflict `fact` raises, if it contradicts a confirmed fact.
    fn contradiction(&self, fact: &Fact, written: &WorkingMemory, turn: u32) -> Option<Conflict> {
        let claim = fact.claim()?;
        let confirmed = self
            .facts
            .iter()
            .find(|f| f.claim().is_some_and(|t| t.contradicts(&claim)))?;
        let ids = self
            .questions
            .iter()
            .chain(&self.resolved)
            .chain(&written.questions)
            .map(|q| q.id.as_str())
            .chain(self.conflicts.iter().map(|c| c.question.as_str()));
        let question = format!("Q{}", conflict::next_question_number(ids));
        Some(Conflict {
            question,
            confirmed: confirmed.id.clone(),
            claim: fact.clone(),
            raised: turn,
            settled: None,
            resolution: None,
        })
    }

    /// Settles the open conflicts whose question this turn marked resolved, by the
    /// values this turn's facts carry ([`conflict::resolution`]).
    fn settle_conflicts(&mut self, written: &[Fact], resolved: &[String], turn: u32) {
        for i in 0..self.conflicts.len() {
            let c = &self.conflicts[i];
            if !c.is_open() || !resolved.contains(&c.question) {
                continue;
            }
            // The confirmed fact may already be gone (another conflict replaced it):
            // then the claim's attribute holds one value again and the claim is dropped.
            let at = self.facts.iter().position(|f| f.id == c.confirmed);
            let how = at.map_or(Resolution::Kept, |at| {
                conflict::resolution(written, &self.facts[at], &c.claim)
            });
            let claim = c.claim.clone();
            if let (Resolution::Replaced, Some(at)) = (how, at) {
                let old = self.facts.remove(at);
                self.retracted.push(old);
            }
            if how != Resolution::Kept {
                let claim = self.with_free_id(claim);
                self.facts.push(claim);
            }
            let c = &mut self.conflicts[i];
            c.resolution = Some(how);
            c.settled = Some(turn);
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
    pub fn render(&self, schema: &MemorySchema) -> String {
        notation::render(
            schema,
            &self.facts,
            &self.hypotheses,
            &self.questions,
            self.notes.as_deref(),
        )
    }
}

impl From<Written> for WorkingMemory {
    fn from(w: Written) -> Self {
        WorkingMemory {
            facts: w.facts,
            hypotheses: w.hypotheses,
            questions: w.questions,
            notes: w.notes,
            ..WorkingMemory::default()
        }
    }
}
