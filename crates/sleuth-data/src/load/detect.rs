//! Which benchmark schema a file is in, read from the fields of its first record.
//!
//! The four schemas differ in fields the official files always carry: MuSiQue rows have
//! `paragraphs` of `{idx, title, paragraph_text}`; HotpotQA and 2Wiki rows share `_id` +
//! `context`, and only 2Wiki rows carry `evidences` / `answer_id` / `entity_ids` (and
//! only HotpotQA rows carry `level`); our own schema has `id` + `paragraphs` of `{title,
//! text | sentences}`. Reading a file as the wrong one of two similar schemas would load
//! without complaint and give wrong hop counts and scores, so a mismatch is an error.

use super::records::{self, Record};
use crate::{DataError, Dataset};
use serde_json::{Map, Value};
use std::path::Path;

/// The schema of `text` (read from `path`), from its first record.
pub fn detect(path: &Path, text: &str) -> Result<Dataset, DataError> {
    let records = records::split(path, text)?;
    let Some(first) = records.first() else {
        return Err(DataError::Parse {
            path: path.to_path_buf(),
            line: 1,
            message: "the file holds no questions (it is empty)".into(),
        });
    };
    match schema_of(first) {
        Some((dataset, _)) => Ok(dataset),
        None => Err(first.error(
            path,
            "cannot tell the benchmark schema from this record; give --dataset \
             (hotpotqa, musique, 2wiki or jsonl)"
                .to_string()
                .into(),
        )),
    }
}

/// Refuses `dataset` when the first record is plainly another schema.
pub(super) fn check(path: &Path, first: &Record<'_>, dataset: Dataset) -> Result<(), DataError> {
    match schema_of(first) {
        Some((found, why)) if found != dataset => Err(first.error(
            path,
            format!(
                "this is a {found} record ({why}), not {dataset}; use --dataset {found} \
                 (or leave --dataset out to detect it)"
            )
            .into(),
        )),
        _ => Ok(()),
    }
}

/// The schema of one record and the field that gives it away.
fn schema_of(record: &Record<'_>) -> Option<(Dataset, &'static str)> {
    let row: Map<String, Value> = serde_json::from_str(record.text).ok()?;
    let has = |k: &str| row.contains_key(k);
    if has("_id") {
        for key in ["evidences", "answer_id", "entity_ids", "evidences_id"] {
            if has(key) {
                return Some((Dataset::TwoWiki, two_wiki_reason(key)));
            }
        }
        return Some((Dataset::HotpotQa, "it has `_id` and no 2Wiki `evidences`"));
    }
    if has("id") {
        if has("question_decomposition") || has("answerable") {
            return Some((
                Dataset::Musique,
                "it has `question_decomposition`/`answerable`",
            ));
        }
        let first_paragraph = row
            .get("paragraphs")
            .and_then(Value::as_array)
            .and_then(|p| p.first())
            .and_then(Value::as_object);
        if let Some(p) = first_paragraph {
            if p.contains_key("paragraph_text") {
                return Some((Dataset::Musique, "its paragraphs have `paragraph_text`"));
            }
            return Some((
                Dataset::Jsonl,
                "it has `id` and `paragraphs` of title and text",
            ));
        }
    }
    None
}

fn two_wiki_reason(key: &str) -> &'static str {
    match key {
        "evidences" => "it has 2Wiki's `evidences`",
        "answer_id" => "it has 2Wiki's `answer_id`",
        "entity_ids" => "it has 2Wiki's `entity_ids`",
        _ => "it has 2Wiki's `evidences_id`",
    }
}
