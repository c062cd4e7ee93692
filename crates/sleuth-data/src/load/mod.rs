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
//! - `2wiki`: the same shape plus `evidences`, `answer_id` etc. Answers gain the aliases
//!   and demonyms that `id_aliases.json` (beside the file) lists for `answer_id`, as the
//!   official evaluation script does. Hops follow the question type: 4 for
//!   `bridge_comparison` (two bridge hops then a comparison: its template yields four
//!   evidence triples and four supporting paragraphs), 2 for `comparison`,
//!   `compositional` and `inference`.
//! - `musique`: `{id, question, answer, answer_aliases, answerable, paragraphs: [{idx,
//!   title, paragraph_text, is_supporting}]}`. Hops and kind come from the id prefix
//!   (`2hop`, `3hop1`, `4hop3`, ...); `paragraph_text` is split into sentences by
//!   [`split_sentences`](super::split_sentences). `idx` must equal the paragraph's
//!   position, which holds in every official file, so support scoring can use positions.
//!   Questions with `answerable: false` (the `full` release) are left out: the official
//!   answer and support metrics are computed over answerable questions only.
//! - `jsonl` (ours, for user data), one object per line:
//!   `{"id": "q1", "question": "...", "answers": ["gold", "alias", ...]` (or
//!   `"answer": "gold"`), `"paragraphs": [{"title": "...", "text": "..."}` or
//!   `{"title": "...", "sentences": ["...", "..."]}], "supporting": ["title", ...]`
//!   (optional), `"supporting_facts": [["title", 0]]` (optional), `"hops": 2` and
//!   `"type": "bridge"` (optional)`}`. Paragraph `text` is split into sentences.
//!
//! Every schema requires the gold answer: a question without one cannot be scored, and
//! accepting it would score every prediction 0. A file of one schema read as another
//! (a 2Wiki file as `hotpotqa`, say) is refused at its first record, and [`detect`]
//! names the schema when the user does not.

mod detect;
mod hotpot;
pub(crate) mod index;
mod musique;
pub mod records;
mod twowiki;
mod user;

pub use detect::detect;
pub use index::detect_file;
pub use twowiki::{aliases_file, read_aliases, read_evidence, Aliases, GoldEvidence};

use super::{DataError, Dataset, Question};
use records::Problem;
use std::collections::HashMap;
use std::path::Path;

/// Reads every question of `path` in `dataset`'s schema, in file order. A 2Wiki file
/// takes its answer aliases from `id_aliases.json` beside it, when there is one (the
/// official release ships the two together).
pub fn load(dataset: Dataset, path: impl AsRef<Path>) -> Result<Vec<Question>, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let aliases = match dataset {
        Dataset::TwoWiki => twowiki::aliases_beside(path)?,
        _ => None,
    };
    let questions = parse_with(dataset, path, &text, aliases.as_ref())?;
    if dataset == Dataset::TwoWiki {
        twowiki::warn_without_aliases(path, aliases.as_ref());
    }
    Ok(questions)
}

/// Reads `path`, working out its schema from its first record; the schema is returned
/// with the questions.
pub fn load_detected(path: impl AsRef<Path>) -> Result<(Dataset, Vec<Question>), DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let dataset = detect(path, &text)?;
    let aliases = match dataset {
        Dataset::TwoWiki => twowiki::aliases_beside(path)?,
        _ => None,
    };
    let questions = parse_with(dataset, path, &text, aliases.as_ref())?;
    if dataset == Dataset::TwoWiki {
        twowiki::warn_without_aliases(path, aliases.as_ref());
    }
    Ok((dataset, questions))
}

/// A benchmark file as text. Invalid UTF-8 is reported at its line, like any other
/// defect.
pub fn read_text(path: &Path) -> Result<String, DataError> {
    let bytes = std::fs::read(path).map_err(|cause| DataError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        DataError::Parse {
            path: path.to_path_buf(),
            line,
            message: format!(
                "not valid UTF-8 (byte {} of the line); benchmark files are UTF-8 JSON",
                offset - line_start + 1
            ),
        }
    })
}

/// Parses `text` as if read from `path` (which only labels errors).
pub fn parse(dataset: Dataset, path: &Path, text: &str) -> Result<Vec<Question>, DataError> {
    parse_with(dataset, path, text, None)
}

fn parse_with(
    dataset: Dataset,
    path: &Path,
    text: &str,
    aliases: Option<&Aliases>,
) -> Result<Vec<Question>, DataError> {
    let records = records::split(path, text)?;
    let Some(first) = records.first() else {
        return Err(DataError::Parse {
            path: path.to_path_buf(),
            line: 1,
            message: "the file holds no questions (it is empty)".into(),
        });
    };
    detect::check(path, first, dataset)?;
    let mut questions = Vec::with_capacity(records.len());
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for record in &records {
        let question = parse_record(dataset, record, aliases)
            .map_err(|problem| record.error(path, problem))?;
        // None: a question the benchmark's own evaluation leaves out (MuSiQue's
        // unanswerable ones).
        let Some(question) = question else { continue };
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

/// One record in `dataset`'s schema; None for a question the benchmark's own evaluation
/// leaves out (MuSiQue's unanswerable ones).
fn parse_record(
    dataset: Dataset,
    record: &records::Record<'_>,
    aliases: Option<&Aliases>,
) -> Result<Option<Question>, Problem> {
    match dataset {
        Dataset::HotpotQa => hotpot::parse(record, Dataset::HotpotQa, None).map(Some),
        Dataset::TwoWiki => hotpot::parse(record, Dataset::TwoWiki, aliases).map(Some),
        Dataset::Musique => musique::parse(record),
        Dataset::Jsonl => user::parse(record).map(Some),
    }
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
pub(crate) mod tests;
