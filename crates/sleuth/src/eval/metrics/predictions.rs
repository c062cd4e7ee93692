//! The official prediction file formats.
//!
//! - HotpotQA, 2Wiki and `jsonl`: one JSON object
//!   `{"answer": {id: text}, "sp": {id: [[title, sent]]}}`; `sp` may be left out.
//! - MuSiQue: JSON Lines (or an array) of `{"id", "predicted_answer",
//!   "predicted_support_idxs", "predicted_answerable"}`; the support list may be left out.
//!
//! Errors name the file and line like the data loaders.

use crate::data::records::{self, Problem};
use crate::data::{DataError, Dataset, SupportingFact};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// What a system predicted for one question.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prediction {
    /// None when the file gives support for this id but no answer.
    pub answer: Option<String>,
    pub support: Option<SupportPrediction>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SupportPrediction {
    Sentences(Vec<SupportingFact>),
    Paragraphs(Vec<usize>),
}

#[derive(Debug, Clone, Default)]
pub struct PredictionSet {
    pub by_id: HashMap<String, Prediction>,
    /// Whether the file predicts support at all; if not, support is not scored.
    pub has_support: bool,
}

#[derive(Deserialize)]
struct HotpotFile {
    answer: HashMap<String, String>,
    #[serde(default)]
    sp: Option<HashMap<String, Vec<(String, usize)>>>,
}

#[derive(Deserialize)]
struct MusiqueRow {
    id: String,
    predicted_answer: String,
    #[serde(default)]
    predicted_support_idxs: Option<Vec<usize>>,
    /// Read for completeness; the answerable-only benchmark does not score it.
    #[serde(default)]
    #[allow(dead_code)]
    predicted_answerable: Option<bool>,
}

/// Reads `path` in `dataset`'s official prediction format.
pub fn read_predictions(dataset: Dataset, path: &Path) -> Result<PredictionSet, DataError> {
    let text = std::fs::read_to_string(path).map_err(|cause| DataError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    match dataset {
        Dataset::Musique => musique(path, &text),
        Dataset::HotpotQa | Dataset::TwoWiki | Dataset::Jsonl => hotpot(path, &text),
    }
}

fn hotpot(path: &Path, text: &str) -> Result<PredictionSet, DataError> {
    let record = records::Record { line: 1, text };
    let file: HotpotFile = record.decode().map_err(|p| record.error(path, p))?;
    let mut by_id: HashMap<String, Prediction> = file
        .answer
        .into_iter()
        .map(|(id, answer)| {
            let p = Prediction {
                answer: Some(answer),
                support: None,
            };
            (id, p)
        })
        .collect();
    let has_support = file.sp.is_some();
    for (id, facts) in file.sp.unwrap_or_default() {
        let facts = facts
            .into_iter()
            .map(|(title, sentence)| SupportingFact { title, sentence })
            .collect();
        by_id.entry(id).or_default().support = Some(SupportPrediction::Sentences(facts));
    }
    Ok(PredictionSet { by_id, has_support })
}

fn musique(path: &Path, text: &str) -> Result<PredictionSet, DataError> {
    let mut set = PredictionSet::default();
    for record in records::split(path, text)? {
        let row: MusiqueRow = record.decode().map_err(|p| record.error(path, p))?;
        if set.by_id.contains_key(&row.id) {
            let message = format!("duplicate prediction for id `{}`", row.id);
            return Err(record.error(path, Problem::from(message)));
        }
        set.has_support |= row.predicted_support_idxs.is_some();
        let prediction = Prediction {
            answer: Some(row.predicted_answer),
            support: row
                .predicted_support_idxs
                .map(SupportPrediction::Paragraphs),
        };
        set.by_id.insert(row.id, prediction);
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(dataset: Dataset, text: &str) -> Result<PredictionSet, DataError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pred.json");
        std::fs::write(&path, text).unwrap();
        read_predictions(dataset, &path)
    }

    #[test]
    fn hotpot_format_with_and_without_sp() {
        let set = read(
            Dataset::HotpotQa,
            r#"{"answer": {"a": "x", "b": "y"}, "sp": {"a": [["T", 1]], "c": []}}"#,
        )
        .unwrap();
        assert!(set.has_support);
        assert_eq!(set.by_id.len(), 3);
        assert_eq!(set.by_id["c"].answer, None);
        assert_eq!(
            set.by_id["a"].support,
            Some(SupportPrediction::Sentences(vec![SupportingFact {
                title: "T".into(),
                sentence: 1
            }]))
        );
        let set = read(Dataset::TwoWiki, r#"{"answer": {"a": "x"}}"#).unwrap();
        assert!(!set.has_support && set.by_id["a"].support.is_none());
    }

    #[test]
    fn hotpot_format_errors_name_the_line() {
        let err = read(
            Dataset::HotpotQa,
            "{\"answer\": {\n\"a\": \"x\",\n\"b\": 3}}",
        )
        .unwrap_err();
        let DataError::Parse { line, message, .. } = err else {
            panic!()
        };
        assert_eq!(line, 3);
        assert!(message.contains("invalid type"), "{message}");
    }

    #[test]
    fn musique_lines() {
        let text = "{\"id\": \"q1\", \"predicted_answer\": \"x\", \"predicted_support_idxs\": [1, 4], \"predicted_answerable\": true}\n{\"id\": \"q2\", \"predicted_answer\": \"y\"}\n";
        let set = read(Dataset::Musique, text).unwrap();
        assert!(set.has_support);
        assert_eq!(
            set.by_id["q1"].support,
            Some(SupportPrediction::Paragraphs(vec![1, 4]))
        );
        assert_eq!(set.by_id["q2"].support, None);
        let dup = format!("{text}{{\"id\": \"q1\", \"predicted_answer\": \"z\"}}\n");
        let DataError::Parse { line, message, .. } = read(Dataset::Musique, &dup).unwrap_err()
        else {
            panic!()
        };
        assert_eq!(line, 3);
        assert!(message.contains("duplicate prediction for id `q1`"));
    }
}
