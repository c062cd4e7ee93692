//! One question's official scores against one prediction (or none). Aggregation lives in
//! [`aggregate`](super::aggregate), so per-question scores can also feed paired
//! statistics.

use super::answer::{score_answer, AnswerScore};
use super::predictions::{Prediction, PredictionSet, SupportPrediction};
use super::support::{support_paragraphs, support_sentences, SupportScore};
use crate::data::Question;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionScore {
    pub id: String,
    /// None when there is no predicted answer (it counts as 0 in every average).
    pub answer: Option<AnswerScore>,
    /// None when there is no predicted support for this question.
    pub support: Option<SupportScore>,
}

/// HotpotQA's joint metric for one question: answer and support multiplied.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct JointScore {
    pub em: f64,
    pub f1: f64,
    pub precision: f64,
    pub recall: f64,
}

impl QuestionScore {
    /// `hotpot_evaluate_v1.py`'s joint EM/F1: 0 unless both answer and support exist.
    pub fn joint(&self) -> JointScore {
        let (Some(a), Some(s)) = (self.answer, self.support) else {
            return JointScore::default();
        };
        let precision = a.precision * s.precision;
        let recall = a.recall * s.recall;
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        JointScore {
            em: a.em * s.em,
            f1,
            precision,
            recall,
        }
    }
}

/// Scores `prediction` for `question` with its dataset's official rules.
pub fn score_question(question: &Question, prediction: Option<&Prediction>) -> QuestionScore {
    let answer = prediction
        .and_then(|p| p.answer.as_deref())
        .map(|a| score_answer(question.dataset, a, &question.answers));
    let support = prediction
        .and_then(|p| p.support.as_ref())
        .map(|s| match s {
            SupportPrediction::Sentences(facts) => {
                support_sentences(question.dataset, facts, &question.supporting_facts)
            }
            SupportPrediction::Paragraphs(idxs) => {
                support_paragraphs(idxs, &question.supporting_paragraphs)
            }
        });
    QuestionScore {
        id: question.id.clone(),
        answer,
        support,
    }
}

/// Scores every gold question, in gold order.
pub fn score_all(questions: &[Question], predictions: &PredictionSet) -> Vec<QuestionScore> {
    questions
        .iter()
        .map(|q| score_question(q, predictions.by_id.get(&q.id)))
        .collect()
}
