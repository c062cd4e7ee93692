//! Evidence records of the EIR setting, and the interface EIR's methods act through.
//!
//! Reading a paragraph copies its sentences, verbatim, into [`EvidenceRecord`]s: paragraph
//! title, sentence number, the turn it was retrieved on, and the text. The records are the
//! only thing that crosses the evidence–inference boundary into EIR's final call, so no
//! model output may change them: the fields are private with getters only, and the
//! [`EvidenceStore`] has no operation but appending a paragraph not yet stored; it hands
//! out shared references only. Even a record's copy cannot be rewritten (E0616, private
//! field), so no code outside this module can fabricate or alter a record:
//!
//! ```compile_fail,E0616
//! let mut store = sleuth::env::EvidenceStore::default();
//! store.add_paragraph("Paris", &["Paris is in France.".to_string()], 1);
//! let mut copy = store.records()[0].clone();
//! copy.text = "Paris is in Spain.".to_string();
//! ```
//!
//! [`EvidenceEnv`] is what EIR, Direct, Agentic SSR and their Reflexion need from an
//! environment: what may be read now, reading it, and the evidence collected so far. The
//! question's paragraph pool ([`super::TitlesEnv`]) implements it; a corpus environment
//! (search by keywords, read by id) can implement it too, with [`EvidenceEnv::search`].

use super::Observation;
use crate::data::Question;
use serde::Serialize;

/// One sentence of a paragraph that was read. Immutable once created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvidenceRecord {
    title: String,
    sentence: usize,
    turn: u32,
    text: String,
}

impl EvidenceRecord {
    /// The title of the paragraph the sentence belongs to.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The sentence's 0-based position in its paragraph (the benchmarks' numbering).
    pub fn sentence(&self) -> usize {
        self.sentence
    }

    /// The retrieval turn on which the paragraph was first read.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The sentence, verbatim.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Every sentence read so far, in reading order. Append-only; reading a paragraph a
/// second time adds nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidenceStore {
    records: Vec<EvidenceRecord>,
    /// Titles in order of first read, without repeats.
    titles: Vec<String>,
}

impl EvidenceStore {
    /// Stores every sentence of a paragraph read on `turn`. Returns false (and stores
    /// nothing) when a paragraph with this title is already stored.
    pub fn add_paragraph(&mut self, title: &str, sentences: &[String], turn: u32) -> bool {
        if self.titles.iter().any(|t| t == title) {
            return false;
        }
        self.titles.push(title.to_string());
        self.records.extend(
            sentences
                .iter()
                .enumerate()
                .map(|(sentence, text)| EvidenceRecord {
                    title: title.to_string(),
                    sentence,
                    turn,
                    text: text.clone(),
                }),
        );
        true
    }

    /// Stores one sentence under its own number (a fact's source sentence, for
    /// `sleuth-eir`). Returns false when that sentence is already stored.
    pub fn add_sentence(&mut self, title: &str, sentence: usize, text: &str, turn: u32) -> bool {
        if self
            .records
            .iter()
            .any(|r| r.title == title && r.sentence == sentence)
        {
            return false;
        }
        if !self.titles.iter().any(|t| t == title) {
            self.titles.push(title.to_string());
        }
        self.records.push(EvidenceRecord {
            title: title.to_string(),
            sentence,
            turn,
            text: text.to_string(),
        });
        true
    }

    pub fn records(&self) -> &[EvidenceRecord] {
        &self.records
    }

    /// Titles of the stored paragraphs, in order of first read.
    pub fn titles(&self) -> &[String] {
        &self.titles
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The stored title a citation's title refers to: exact, then ignoring case and
    /// surrounding whitespace (models often change the case of a title).
    pub fn resolve_title(&self, title: &str) -> Option<&str> {
        let wanted = title.trim();
        self.titles
            .iter()
            .find(|t| *t == wanted)
            .or_else(|| {
                let lower = wanted.to_lowercase();
                self.titles.iter().find(|t| t.to_lowercase() == lower)
            })
            .map(String::as_str)
    }

    /// The record for `(title, sentence)`, if that sentence was read.
    pub fn get(&self, title: &str, sentence: usize) -> Option<&EvidenceRecord> {
        let title = self.resolve_title(title)?;
        self.records
            .iter()
            .find(|r| r.title == title && r.sentence == sentence)
    }

    /// The stored paragraphs, each as its title and its records.
    pub fn paragraphs(&self) -> Vec<(&str, Vec<&EvidenceRecord>)> {
        self.titles
            .iter()
            .map(|t| {
                (
                    t.as_str(),
                    self.records.iter().filter(|r| &r.title == t).collect(),
                )
            })
            .collect()
    }
}

/// What one read did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOutcome {
    /// The text shown to the agent (the paragraph with numbered sentences, or why
    /// nothing was read).
    pub observation: Observation,
    /// The title actually read, if any.
    pub title: Option<String>,
    /// True when the requested title matched nothing readable and another was read.
    pub substituted: bool,
}

/// An environment of the EIR setting.
pub trait EvidenceEnv: Send {
    /// What the agent may read now, as the titles (or ids) a read accepts.
    fn readable(&self) -> Vec<String>;

    /// The readable paragraphs as an action prompt lists them: the titles, or in the
    /// corpus setting this trial's accumulated search results as `[id N] title`.
    fn choices(&self) -> Vec<String> {
        self.readable()
    }

    /// Reads one paragraph on `turn`, storing its sentences as evidence.
    fn read(&mut self, target: &str, turn: u32) -> ReadOutcome;

    /// Read attempts the environment itself allows per episode, if it limits them (the
    /// corpus setting's `--corpus-reads`); the trajectory keeps the smaller budget.
    fn read_budget(&self) -> Option<u32> {
        None
    }

    /// Counts a read attempt that was refused before it ran (the corpus setting: EIR
    /// App. H.1, "invalid reads also consume a read attempt"); a no-op where the
    /// environment does not limit reads.
    fn use_read_attempt(&mut self) {}

    /// Whether [`EvidenceEnv::search`] is offered (the corpus setting).
    fn can_search(&self) -> bool {
        false
    }

    /// Searches for paragraphs (corpus setting); `None` where the environment offers
    /// no search (the per-question pool).
    fn search(&mut self, _query: &str, _turn: u32) -> Option<Observation> {
        None
    }

    /// The evidence collected so far.
    fn evidence(&self) -> &EvidenceStore;

    /// Titles (or ids) read, in order of first read.
    fn retrieved(&self) -> &[String] {
        self.evidence().titles()
    }
}

/// Builds the EIR-setting environment for one question (the default is the question's
/// own pool behind [`super::TitlesEnv`]).
pub trait EvidenceEnvFactory: Send + Sync {
    fn make(&self, question: &Question) -> Box<dyn EvidenceEnv>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn records_keep_title_sentence_turn_and_text() {
        let mut store = EvidenceStore::default();
        assert!(store.add_paragraph("Paris", &sentences(&["A.", "B."]), 3));
        let r = &store.records()[1];
        assert_eq!(
            (r.title(), r.sentence(), r.turn(), r.text()),
            ("Paris", 1, 3, "B.")
        );
        assert_eq!(store.get("paris", 1).map(|r| r.text()), Some("B."));
        assert!(store.get("Paris", 2).is_none());
        assert!(store.get("Lyon", 0).is_none());
    }

    #[test]
    fn a_second_read_neither_duplicates_nor_rewrites() {
        let mut store = EvidenceStore::default();
        store.add_paragraph("Paris", &sentences(&["Paris is in France."]), 1);
        let before = store.clone();
        // The same title with different text (as a confused caller or a model quoting
        // it wrongly might supply) changes nothing: not the text, not the turn.
        assert!(!store.add_paragraph("Paris", &sentences(&["Paris is in Spain."]), 4));
        assert_eq!(store, before);
        assert_eq!(store.records()[0].text(), "Paris is in France.");
        assert_eq!(store.records()[0].turn(), 1);
        assert_eq!(store.titles(), ["Paris"]);
    }
}
