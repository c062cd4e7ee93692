//! Averages of per-question scores over a whole gold file, as fractions (0-1, the
//! records' scale), summed in gold order and divided as the official scripts do, so
//! that [`super::official`] can print each script's own numbers. Every gold question
//! counts: a missing prediction adds 0.

use super::score::QuestionScore;
use crate::data::Dataset;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub dataset: Dataset,
    /// Gold questions scored.
    pub n: usize,
    /// Gold questions with a predicted answer.
    pub answered: usize,
    /// Gold questions without one.
    pub missing: usize,
    pub em: f64,
    pub f1: f64,
    pub precision: f64,
    pub recall: f64,
    /// Support metrics; None when the predictions carry no support at all.
    pub support_em: Option<f64>,
    pub support_f1: Option<f64>,
    pub support_precision: Option<f64>,
    pub support_recall: Option<f64>,
    /// HotpotQA-style joint metrics (sentence support only; 2Wiki's official joint also
    /// needs evidence triples, so it is not reported there).
    pub joint_em: Option<f64>,
    pub joint_f1: Option<f64>,
    pub joint_precision: Option<f64>,
    pub joint_recall: Option<f64>,
}

impl Summary {
    /// Averages `scores`; support is reported only when `support_scored`.
    pub fn of(dataset: Dataset, scores: &[QuestionScore], support_scored: bool) -> Self {
        let mean = |f: &dyn Fn(&QuestionScore) -> f64| -> f64 {
            if scores.is_empty() {
                0.0
            } else {
                scores.iter().map(f).sum::<f64>() / scores.len() as f64
            }
        };
        let answer =
            |f: fn(&super::AnswerScore) -> f64| mean(&|s| s.answer.as_ref().map_or(0.0, f));
        let support = |f: fn(&super::SupportScore) -> f64| {
            support_scored.then(|| mean(&|s| s.support.as_ref().map_or(0.0, f)))
        };
        let joint = support_scored && matches!(dataset, Dataset::HotpotQa | Dataset::Jsonl);
        let answered = scores.iter().filter(|s| s.answer.is_some()).count();
        Summary {
            dataset,
            n: scores.len(),
            answered,
            missing: scores.len() - answered,
            em: answer(|a| a.em),
            f1: answer(|a| a.f1),
            precision: answer(|a| a.precision),
            recall: answer(|a| a.recall),
            support_em: support(|s| s.em),
            support_f1: support(|s| s.f1),
            support_precision: support(|s| s.precision),
            support_recall: support(|s| s.recall),
            joint_em: joint.then(|| mean(&|s| s.joint().em)),
            joint_f1: joint.then(|| mean(&|s| s.joint().f1)),
            joint_precision: joint.then(|| mean(&|s| s.joint().precision)),
            joint_recall: joint.then(|| mean(&|s| s.joint().recall)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::{AnswerScore, SupportScore};

    fn score(id: &str, em: f64, f1: f64, support: Option<f64>) -> QuestionScore {
        QuestionScore {
            id: id.into(),
            answer: Some(AnswerScore {
                em,
                f1,
                precision: f1,
                recall: f1,
            }),
            support: support.map(|v| SupportScore {
                em: v,
                f1: v,
                precision: v,
                recall: v,
            }),
        }
    }

    #[test]
    fn missing_predictions_count_as_zero() {
        let mut scores = vec![score("a", 1.0, 1.0, None), score("b", 0.0, 0.5, None)];
        scores.push(QuestionScore {
            id: "c".into(),
            answer: None,
            support: None,
        });
        scores.push(QuestionScore {
            id: "d".into(),
            answer: None,
            support: None,
        });
        let s = Summary::of(Dataset::Musique, &scores, false);
        assert_eq!((s.n, s.answered, s.missing), (4, 2, 2));
        assert_eq!((s.em, s.f1), (0.25, 0.375));
        assert_eq!((s.support_em, s.joint_em), (None, None));
    }

    #[test]
    fn support_and_joint_when_scored() {
        let scores = vec![score("a", 1.0, 1.0, Some(1.0)), score("b", 1.0, 1.0, None)];
        let s = Summary::of(Dataset::HotpotQa, &scores, true);
        assert_eq!((s.support_em, s.support_f1), (Some(0.5), Some(0.5)));
        assert_eq!((s.joint_em, s.joint_f1), (Some(0.5), Some(0.5)));
        let s = Summary::of(Dataset::TwoWiki, &scores, true);
        assert_eq!((s.support_em, s.joint_em), (Some(0.5), None));
    }

    #[test]
    fn empty_gold_averages_to_zero() {
        let s = Summary::of(Dataset::HotpotQa, &[], true);
        assert_eq!((s.n, s.em, s.support_f1), (0, 0.0, Some(0.0)));
    }
}
