//! Loaders: each benchmark's official file schema in, [`Question`]s out.
//!
//! A file may be a JSON array (the official HotpotQA and 2Wiki releases) or JSON Lines
//! (MuSiQue, and most copies); the first non-blank character decides. Either way every
//! record keeps the line it starts on, so a bad record is reported as `file:line: what`,
//! even inside a one-array file.
//!
//! Supported schemas (fields not listed are ignored):
//!
//! - `hotpotqa`: `{_id, question, answer, supporting_facts: [[title, sent]], context:
//!   [[title, [sentences]]], type, level}`. Hops = 2.
//! - `2wiki`: the same shape plus `evidences` etc. Hops follow the question type: 4 for
//!   `bridge_comparison` (two bridge hops then a comparison: its template yields four
//!   evidence triples and four supporting paragraphs), 2 for `comparison`,
//!   `compositional` and `inference`.
//! - `musique`: `{id, question, answer, answer_aliases, answerable, paragraphs: [{idx,
//!   title, paragraph_text, is_supporting}]}`. Hops and kind come from the id prefix
//!   (`2hop`, `3hop1`, `4hop3`, ...); `paragraph_text` is split into sentences by
//!   [`split_sentences`](super::split_sentences). `idx` must equal the paragraph's
//!   position, which holds in every official file, so support scoring can use positions.
//! - `jsonl` (ours, for user data), one object per line:
//!   `{"id": "q1", "question": "...", "answers": ["gold", "alias", ...]` (or
//!   `"answer": "gold"`), `"paragraphs": [{"title": "...", "text": "..."}` or
//!   `{"title": "...", "sentences": ["...", "..."]}], "supporting": ["title", ...]`
//!   (optional), `"supporting_facts": [["title", 0]]` (optional), `"hops": 2` and
//!   `"type": "bridge"` (optional)`}`. Paragraph `text` is split into sentences.

mod hotpot;
mod musique;
pub(crate) mod records;
mod user;

use super::{DataError, Dataset, Question};
use records::Problem;
use std::collections::HashMap;
use std::path::Path;

/// Reads every question of `path` in `dataset`'s schema, in file order.
pub fn load(dataset: Dataset, path: impl AsRef<Path>) -> Result<Vec<Question>, DataError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(dataset, path, &text)
}

/// Parses `text` as if read from `path` (which only labels errors).
pub fn parse(dataset: Dataset, path: &Path, text: &str) -> Result<Vec<Question>, DataError> {
    let records = records::split(path, text)?;
    let mut questions = Vec::with_capacity(records.len());
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for record in &records {
        let question = match dataset {
            Dataset::HotpotQa => hotpot::parse(record, Dataset::HotpotQa),
            Dataset::TwoWiki => hotpot::parse(record, Dataset::TwoWiki),
            Dataset::Musique => musique::parse(record),
            Dataset::Jsonl => user::parse(record),
        }
        .map_err(|problem| record.error(path, problem))?;
        if let Some(first) = first_line.insert(question.id.clone(), record.line) {
            let message = format!(
                "duplicate id `{}` (first seen at line {first})",
                question.id
            );
            return Err(record.error(path, Problem::from(message)));
        }
        questions.push(question);
    }
    Ok(questions)
}

/// Keeps the questions with exactly `hops` hops (questions of unknown hop count drop out).
pub fn filter_hops(questions: Vec<Question>, hops: u8) -> Vec<Question> {
    questions
        .into_iter()
        .filter(|q| q.hops == Some(hops))
        .collect()
}

/// Positions of the paragraphs whose title is in `titles`, in pool order.
fn positions_of(paragraphs: &[super::Paragraph], titles: &[&str]) -> Vec<usize> {
    paragraphs
        .iter()
        .enumerate()
        .filter(|(_, p)| titles.contains(&p.title.as_str()))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests;
