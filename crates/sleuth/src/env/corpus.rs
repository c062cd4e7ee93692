//! The open-corpus setting of the EIR paper (section 4.3, appendix H): `search` ranks a
//! whole paragraph collection with BM25 and shows at most ten titles with their ids,
//! without text, scores or labels; `read[<id>]` returns one paragraph found by this
//! episode's searches, one numbered sentence per line so boundaries stay visible.
//!
//! Search results accumulate over the episode: any id shown once may be read later.
//! Read attempts are budgeted (6 by default): reading an id not found yet, or reading
//! one again, spends an attempt, and the observation says why. Turn counting (12 action
//! turns, the last one for submission only) belongs to the agent loop, which can ask
//! [`CorpusEnv::can_read`] and [`CorpusEnv::reads_left`].
//!
//! [`Environment::retrieved`] lists the ids of paragraphs whose text was shown (read),
//! in order, without repeats; ids that were only listed by a search are in
//! [`CorpusEnv::searched`].

use super::{Action, Environment, Observation, Tool, ToolCatalogue, ToolKind};
use crate::data::Paragraph;
use crate::retrieval::bm25::Bm25Index;
use std::collections::HashMap;
use std::sync::Arc;

/// Budgets and sizes of the corpus setting; the defaults are the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusOptions {
    /// Titles shown per search.
    pub top_k: usize,
    /// Read attempts per episode.
    pub max_reads: usize,
}

impl Default for CorpusOptions {
    fn default() -> Self {
        CorpusOptions {
            top_k: 10,
            max_reads: 6,
        }
    }
}

/// One episode's view of a corpus index.
pub struct CorpusEnv {
    index: Arc<Bm25Index>,
    opts: CorpusOptions,
    tools: ToolCatalogue,
    /// Every id shown by a search this episode -> (document number, title).
    found: HashMap<String, (u32, String)>,
    searched: Vec<String>,
    read: Vec<String>,
    paragraphs: HashMap<String, Paragraph>,
    reads_used: usize,
}

impl CorpusEnv {
    pub fn new(index: Arc<Bm25Index>, opts: CorpusOptions) -> Self {
        let opts = CorpusOptions {
            top_k: opts.top_k.max(1),
            ..opts
        };
        CorpusEnv {
            index,
            opts,
            tools: Self::catalogue(&opts),
            found: HashMap::new(),
            searched: Vec::new(),
            read: Vec::new(),
            paragraphs: HashMap::new(),
            reads_used: 0,
        }
    }

    /// The tools of a corpus episode with these budgets.
    pub fn catalogue(opts: &CorpusOptions) -> ToolCatalogue {
        ToolCatalogue::new(vec![
            Tool::new(
                ToolKind::Search,
                "query",
                format!(
                    "searches the whole collection and lists up to {} paragraph titles with their ids (no text).",
                    opts.top_k.max(1)
                ),
            ),
            Tool::new(
                ToolKind::Read,
                "id",
                format!(
                    "shows the paragraph with this id, one numbered sentence per line. Only ids listed by your searches can be read; you have {} read attempts, and a failed or repeated read uses one.",
                    opts.max_reads
                ),
            ),
            Tool::finish(),
        ])
    }

    pub fn max_reads(&self) -> usize {
        self.opts.max_reads
    }
    pub fn reads_used(&self) -> usize {
        self.reads_used
    }
    pub fn reads_left(&self) -> usize {
        self.opts.max_reads.saturating_sub(self.reads_used)
    }
    /// Whether another read attempt is allowed.
    pub fn can_read(&self) -> bool {
        self.reads_left() > 0
    }
    /// Counts a read attempt that never reached [`Self::step`] (an EIR-setting read
    /// refused as malformed, EIR App. H.1), so later messages count attempts as the
    /// agent's prompt does.
    pub fn use_read_attempt(&mut self) {
        if self.can_read() {
            self.reads_used += 1;
        }
    }
    /// Ids listed by searches so far, in order of first appearance.
    pub fn searched(&self) -> &[String] {
        &self.searched
    }
    /// The title a search of this episode listed under `id`.
    pub fn found_title(&self, id: &str) -> Option<&str> {
        self.found.get(id).map(|(_, title)| title.as_str())
    }
    /// A paragraph this episode has read (for evidence records and support recall).
    pub fn read_paragraph(&self, id: &str) -> Option<&Paragraph> {
        self.paragraphs.get(id)
    }

    fn search(&mut self, query: &str) -> Observation {
        let terms = self.index.analyzer().query_terms(query);
        if terms.is_empty() {
            return Observation::new(format!(
                "The query \"{}\" has no searchable words (very common words are ignored). Use distinctive words, e.g. names.",
                query.trim()
            ));
        }
        let hits = match self.index.search_terms(&terms, self.opts.top_k) {
            Ok(h) => h,
            Err(e) => return Observation::new(format!("Search failed: {e}")),
        };
        if hits.is_empty() {
            return Observation::new(format!(
                "No paragraph matches \"{}\". Try other words.",
                query.trim()
            ));
        }
        let mut text = format!("Search results for \"{}\":\n", query.trim());
        let mut shown = Vec::with_capacity(hits.len());
        for (rank, hit) in hits.iter().enumerate() {
            let doc = match self.index.doc(hit.doc) {
                Ok(d) => d,
                Err(e) => return Observation::new(format!("Search failed: {e}")),
            };
            text.push_str(&format!("{}. [id {}] {}\n", rank + 1, doc.id, doc.title));
            if !self.found.contains_key(&doc.id) {
                self.searched.push(doc.id.clone());
                self.found.insert(doc.id.clone(), (hit.doc, doc.title));
            }
            shown.push(doc.id);
        }
        text.push_str("Read a paragraph with read[<id>].");
        Observation { text, shown }
    }

    fn read(&mut self, arg: &str) -> Observation {
        if !self.can_read() {
            return Observation::new(format!(
                "No read attempts left ({} of {} used). Submit your answer.",
                self.reads_used, self.opts.max_reads
            ));
        }
        self.reads_used += 1;
        let id = normalize_id(arg);
        let left = self.reads_left();
        let Some((doc, _)) = self.found.get(id).cloned() else {
            // The first listed paragraph with this title, in search order.
            let by_title = self
                .searched
                .iter()
                .find(|i| self.found[*i].1.eq_ignore_ascii_case(id));
            let hint = match by_title {
                Some(i) => format!(" \"{id}\" is a title; read it by its id: read[{i}]."),
                None if self.found.is_empty() => {
                    " Search first, then read one of the ids it lists.".into()
                }
                None => " Only ids listed by your searches can be read.".into(),
            };
            return Observation::new(format!(
                "Cannot read \"{id}\": it is not among this episode's search results.{hint} {left} read attempts left."
            ));
        };
        let stored = match self.index.doc(doc) {
            Ok(d) => d,
            Err(e) => return Observation::new(format!("Read failed: {e}")),
        };
        let mut text = String::new();
        if self.paragraphs.contains_key(id) {
            text.push_str("(You have read this paragraph before; it is shown again.)\n");
        } else {
            self.read.push(id.to_string());
            self.paragraphs.insert(
                id.to_string(),
                Paragraph::new(stored.title.clone(), stored.sentences.clone()),
            );
        }
        text.push_str(&format!("[id {}] {}\n", stored.id, stored.title));
        for (i, s) in stored.sentences.iter().enumerate() {
            text.push_str(&format!("({i}) {}\n", s.trim()));
        }
        text.push_str(&format!("{left} read attempts left."));
        Observation {
            text,
            shown: vec![stored.id],
        }
    }
}

/// Accepts `123`, `id 123`, `[id 123]`, `id: 123` and quotes around any of them.
fn normalize_id(arg: &str) -> &str {
    let s = arg
        .trim()
        .trim_matches(|c| matches!(c, '[' | ']' | '"' | '\''))
        .trim();
    let lower = s.to_ascii_lowercase();
    let s = if lower.starts_with("id") && s.len() > 2 && !s.as_bytes()[2].is_ascii_alphanumeric() {
        s[2..].trim_start_matches([':', '=', ' ', '#'])
    } else {
        s
    };
    s.trim()
}

impl Environment for CorpusEnv {
    fn tools(&self) -> &ToolCatalogue {
        &self.tools
    }

    fn execute(&mut self, action: &Action) -> Observation {
        match action {
            Action::Search(q) => self.search(q),
            Action::Read(id) => self.read(id),
            // Not offered: `step` refuses it before it gets here.
            Action::Lookup(_) => Observation::new(self.tools.refuse(action)),
            Action::Finish(_) => Observation::new("The episode is finished."),
        }
    }

    fn retrieved(&self) -> &[String] {
        &self.read
    }
}

#[cfg(test)]
mod tests;
