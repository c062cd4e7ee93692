//! Scoring a prediction file in a benchmark's official format against its gold file:
//! the library side of `sleuth score` and Python's `sleuth.score`.
//!
//! The official scripts average over every gold question (a missing prediction scores
//! 0). A run on a subset is diluted by that, so the gold questions can be narrowed to
//! those the predictions answer or those a run recorded ([`Scope`]); the result says
//! which set was scored.

use super::metrics::{
    official, read_evidence_predictions, read_predictions, score_all, summarize_evidence,
    EvidenceSummary, Official, QuestionScore, Summary,
};
pub use super::refusals::{Scope, ScoreError};
use crate::data::{self, Dataset, Question};
use crate::Result;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What to score.
#[derive(Debug, Clone)]
pub struct ScoreRequest {
    pub dataset: Dataset,
    /// The gold benchmark file.
    pub data: PathBuf,
    pub predictions: PathBuf,
    /// Only questions with this many hops.
    pub hops: Option<u8>,
    pub scope: Scope,
}

/// A scored prediction file.
#[derive(Debug, Clone)]
pub struct FileScores {
    pub scope: Scope,
    /// Gold questions in the file (after the hops filter), scored or not.
    pub gold_questions: usize,
    /// The gold questions scored, in the file's order.
    pub questions: Vec<Question>,
    /// One per scored question, in the same order.
    pub scores: Vec<QuestionScore>,
    /// Averages as fractions (0-1).
    pub summary: Summary,
    /// 2Wiki's evidence metrics and three-way joint, when the predictions carry triples.
    pub evidence: Option<EvidenceSummary>,
    /// Predictions for ids outside the scored gold questions (a wrong file pairing shows
    /// here).
    pub unmatched: usize,
}

impl FileScores {
    /// The official script's keys on its scale.
    pub fn official(&self) -> Official {
        official(&self.summary, self.evidence.as_ref())
    }

    /// How many gold questions have no prediction and score 0, when the score averages
    /// over every gold question (the official scripts' denominator) and some were
    /// predicted: a partial prediction file then scores low, which the front ends point
    /// out with the way to score only the predicted questions. `None` otherwise.
    pub fn unpredicted_scored_zero(&self) -> Option<usize> {
        let partial = self.summary.missing > 0 && self.summary.answered > 0;
        (self.scope == Scope::All && partial).then_some(self.summary.missing)
    }

    /// One JSON object: the official script's keys on its scale (`scale` and
    /// `official_rounding` say which), with the counts of what was scored.
    pub fn to_json(&self) -> serde_json::Value {
        let o = self.official();
        let mut v = serde_json::json!({
            "dataset": self.summary.dataset.name(),
            "scale": o.scale,
            "official_rounding": o.rounding,
            "scored": self.scope.name(),
            "n": self.summary.n,
            "answered": self.summary.answered,
            "missing": self.summary.missing,
            "unmatched": self.unmatched,
            "gold_questions": self.gold_questions,
        });
        for (key, value) in o.metrics {
            v[key] = value.into();
        }
        v
    }
}

/// Scores `request.predictions` against `request.data`.
pub fn score_file(request: &ScoreRequest) -> Result<FileScores> {
    let mut questions = data::load(request.dataset, &request.data)?;
    if let Some(h) = request.hops {
        questions = data::filter_hops(questions, h);
    }
    let gold_questions = questions.len();
    let predictions = read_predictions(request.dataset, &request.predictions).map_err(|e| {
        if holds_records(&request.predictions) {
            ScoreError::RunRecords {
                path: request.predictions.clone(),
                dataset: request.dataset,
            }
            .into()
        } else {
            crate::Error::from(e)
        }
    })?;
    match &request.scope {
        Scope::Run(run) => {
            let file = if run.is_dir() {
                run.join(super::store::RECORDS)
            } else {
                run.clone()
            };
            let ids: HashSet<String> = super::store::read_records(&file)?
                .into_iter()
                .map(|r| r.id)
                .collect();
            questions.retain(|q| ids.contains(&q.id));
        }
        Scope::Predicted => questions.retain(|q| predictions.by_id.contains_key(&q.id)),
        Scope::All => {}
    }
    if questions.is_empty() {
        return Err(ScoreError::NothingScored {
            data: request.data.clone(),
            scope: request.scope.clone(),
        }
        .into());
    }
    let scores = score_all(&questions, &predictions);
    let summary = Summary::of(request.dataset, &scores, predictions.has_support);
    let evidence = evidence(request, &scores)?;
    let gold: HashSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    let unmatched = predictions
        .by_id
        .keys()
        .filter(|id| !gold.contains(id.as_str()))
        .count();
    Ok(FileScores {
        scope: request.scope.clone(),
        gold_questions,
        questions,
        scores,
        summary,
        evidence,
        unmatched,
    })
}

/// Whether a file's first line is a run record.
fn holds_records(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().next().map(|l| l.contains("\"record_version\"")))
        .unwrap_or(false)
}

/// 2Wiki's evidence metrics and three-way joint, when the predictions carry evidence.
fn evidence(request: &ScoreRequest, scores: &[QuestionScore]) -> Result<Option<EvidenceSummary>> {
    if request.dataset != Dataset::TwoWiki {
        return Ok(None);
    }
    let Some(predicted) = read_evidence_predictions(&request.predictions)? else {
        return Ok(None);
    };
    let aliases_path = data::aliases_file(&request.data);
    let aliases = if aliases_path.is_file() {
        Some(data::read_aliases(&aliases_path)?)
    } else {
        None
    };
    let gold = data::read_evidence(&request.data, aliases.as_ref())?;
    Ok(Some(summarize_evidence(scores, &predicted, &gold)))
}
