//! A retrieval corpus assembled from the paragraph pools of benchmark questions: every
//! paragraph once, deduplicated by title (the first occurrence wins, as the pools repeat
//! popular Wikipedia pages across questions). Written as JSON Lines of [`CorpusDoc`],
//! the format the BM25 index reads.

use super::{DataError, Question};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

/// One corpus line. `id` is a zero-padded running number, stable for the same inputs in
/// the same order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusDoc {
    pub id: String,
    pub title: String,
    pub text: String,
    pub sentences: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Corpus {
    docs: Vec<CorpusDoc>,
    titles: HashSet<String>,
    read: usize,
}

impl Corpus {
    pub fn new() -> Self {
        Corpus::default()
    }

    /// Adds every paragraph of `questions` whose title is not in the corpus yet.
    pub fn add(&mut self, questions: &[Question]) {
        for p in questions.iter().flat_map(|q| &q.paragraphs) {
            self.read += 1;
            if self.titles.insert(p.title.clone()) {
                self.docs.push(CorpusDoc {
                    id: format!("{:06}", self.docs.len()),
                    title: p.title.clone(),
                    text: p.text(),
                    sentences: p.sentences.clone(),
                });
            }
        }
    }

    pub fn docs(&self) -> &[CorpusDoc] {
        &self.docs
    }

    /// Paragraphs seen so far, duplicates included.
    pub fn read(&self) -> usize {
        self.read
    }

    /// Writes the corpus as JSON Lines, creating parent folders.
    pub fn write_jsonl(&self, path: &Path) -> Result<(), DataError> {
        let io = |cause| DataError::Write {
            path: path.to_path_buf(),
            cause,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        crate::atomic::write_with(path, |out| {
            for doc in &self.docs {
                let line = serde_json::to_string(doc).expect("corpus docs serialize");
                writeln!(out, "{line}")?;
            }
            Ok(())
        })
        .map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dataset, Paragraph};

    fn question(id: &str, titles: &[&str]) -> Question {
        Question {
            id: id.into(),
            dataset: Dataset::Jsonl,
            text: "q".into(),
            answers: vec![],
            paragraphs: titles
                .iter()
                .map(|t| Paragraph::new(*t, vec![format!("{t} one."), format!("{t} two.")]))
                .collect(),
            supporting_facts: vec![],
            supporting_paragraphs: vec![],
            hops: None,
            kind: None,
        }
    }

    #[test]
    fn first_title_wins_and_ids_run_in_order() {
        let mut c = Corpus::new();
        c.add(&[question("a", &["X", "Y"]), question("b", &["Y", "Z"])]);
        c.add(&[question("c", &["X", "W"])]);
        assert_eq!(c.read(), 6);
        let got: Vec<(&str, &str)> = c
            .docs()
            .iter()
            .map(|d| (d.id.as_str(), d.title.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("000000", "X"),
                ("000001", "Y"),
                ("000002", "Z"),
                ("000003", "W")
            ]
        );
        assert_eq!(c.docs()[0].text, "X one. X two.");
    }

    #[test]
    fn writes_one_json_object_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/corpus.jsonl");
        let mut c = Corpus::new();
        c.add(&[question("a", &["X", "Y"])]);
        c.write_jsonl(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let docs: Vec<CorpusDoc> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(docs, c.docs());
    }
}
