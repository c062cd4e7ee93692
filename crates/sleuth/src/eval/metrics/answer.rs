//! Answer EM and F1 as the official scripts compute them.

use super::normalize::{normalize_answer, python_split};
use crate::data::Dataset;
use serde::Serialize;
use std::collections::HashMap;

/// One prediction's answer scores, each in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct AnswerScore {
    pub em: f64,
    pub f1: f64,
    pub precision: f64,
    pub recall: f64,
}

/// The two F1 conventions of the official scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F1Rule {
    /// `hotpot_evaluate_v1.py` (also 2Wiki's script): if either normalized side is `yes`,
    /// `no` or `noanswer` and the two differ, everything is 0; no shared token gives 0,
    /// so two empty answers score F1 = 0 (while their EM is 1).
    Hotpot,
    /// MuSiQue (SQuAD 2.0's `compute_f1`): if either side has no tokens, F1 is 1 when
    /// both have none and 0 otherwise; no yes/no rule.
    Squad2,
}

impl F1Rule {
    pub fn of(dataset: Dataset) -> Self {
        match dataset {
            Dataset::Musique => F1Rule::Squad2,
            Dataset::HotpotQa | Dataset::TwoWiki | Dataset::Jsonl => F1Rule::Hotpot,
        }
    }
}

/// Which branch of the rule decided the F1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Hotpot rule: a yes/no/noanswer side differs from the other side.
    YesNoMismatch,
    /// Squad2 rule: at least one side has no tokens.
    EmptyAnswer,
    /// No token in common.
    NoOverlap,
    /// Ordinary multiset token overlap.
    Overlap,
}

/// Everything computed while comparing a prediction with one gold answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub normalized_prediction: String,
    pub normalized_gold: String,
    pub prediction_tokens: Vec<String>,
    pub gold_tokens: Vec<String>,
    /// Multiset intersection, in prediction order.
    pub common: Vec<String>,
    pub decision: Decision,
    pub score: AnswerScore,
}

/// Compares `prediction` with a single gold answer under `rule`.
pub fn compare(rule: F1Rule, prediction: &str, gold: &str) -> Comparison {
    let normalized_prediction = normalize_answer(prediction);
    let normalized_gold = normalize_answer(gold);
    let prediction_tokens: Vec<String> = python_split(&normalized_prediction)
        .map(String::from)
        .collect();
    let gold_tokens: Vec<String> = python_split(&normalized_gold).map(String::from).collect();
    let common = multiset_intersection(&prediction_tokens, &gold_tokens);
    let em = f64::from(u8::from(normalized_prediction == normalized_gold));
    let special = |s: &str| matches!(s, "yes" | "no" | "noanswer");

    let (decision, score) = match rule {
        F1Rule::Hotpot
            if (special(&normalized_prediction) || special(&normalized_gold))
                && normalized_prediction != normalized_gold =>
        {
            (
                Decision::YesNoMismatch,
                AnswerScore {
                    em,
                    ..Default::default()
                },
            )
        }
        F1Rule::Squad2 if prediction_tokens.is_empty() || gold_tokens.is_empty() => {
            let same = f64::from(u8::from(prediction_tokens == gold_tokens));
            let score = AnswerScore {
                em,
                f1: same,
                precision: same,
                recall: same,
            };
            (Decision::EmptyAnswer, score)
        }
        _ if common.is_empty() => (
            Decision::NoOverlap,
            AnswerScore {
                em,
                ..Default::default()
            },
        ),
        _ => {
            let same = common.len() as f64;
            let precision = same / prediction_tokens.len() as f64;
            let recall = same / gold_tokens.len() as f64;
            let f1 = 2.0 * precision * recall / (precision + recall);
            (
                Decision::Overlap,
                AnswerScore {
                    em,
                    f1,
                    precision,
                    recall,
                },
            )
        }
    };
    Comparison {
        normalized_prediction,
        normalized_gold,
        prediction_tokens,
        gold_tokens,
        common,
        decision,
        score,
    }
}

/// `Counter(pred) & Counter(gold)` as a list in prediction order.
fn multiset_intersection(prediction: &[String], gold: &[String]) -> Vec<String> {
    let mut available: HashMap<&str, usize> = HashMap::new();
    for t in gold {
        *available.entry(t).or_insert(0) += 1;
    }
    prediction
        .iter()
        .filter(|t| match available.get_mut(t.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .cloned()
        .collect()
}

/// The prediction's scores against the gold answer and its aliases: each of EM, F1,
/// precision and recall is the max over `golds` (as 2Wiki's `update_answer` and
/// MuSiQue's `metric_max_over_ground_truths` do). No gold answer scores 0.
pub fn score_answer(dataset: Dataset, prediction: &str, golds: &[String]) -> AnswerScore {
    let rule = F1Rule::of(dataset);
    golds
        .iter()
        .map(|g| compare(rule, prediction, g).score)
        .fold(AnswerScore::default(), |best, s| AnswerScore {
            em: best.em.max(s.em),
            f1: best.f1.max(s.f1),
            precision: best.precision.max(s.precision),
            recall: best.recall.max(s.recall),
        })
}

/// Official EM (0 or 1) of `prediction` against `golds`.
pub fn exact_match(dataset: Dataset, prediction: &str, golds: &[String]) -> f64 {
    score_answer(dataset, prediction, golds).em
}

/// Official F1 of `prediction` against `golds`.
pub fn f1(dataset: Dataset, prediction: &str, golds: &[String]) -> f64 {
    score_answer(dataset, prediction, golds).f1
}

#[cfg(test)]
mod tests;
