//! Official answer and support metrics (HotpotQA, MuSiQue, 2Wiki evaluation scripts).

use crate::data::Question;

/// EM and F1 of one prediction, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnswerScores {
    pub em: f64,
    pub f1: f64,
}

/// TODO(merge): replaced by the official metrics from the data/metrics branch.
pub fn answer_scores(question: &Question, prediction: Option<&str>) -> AnswerScores {
    let hit = prediction.is_some_and(|p| {
        question
            .answers
            .iter()
            .any(|a| a.trim().eq_ignore_ascii_case(p.trim()))
    });
    AnswerScores {
        em: f64::from(u8::from(hit)),
        f1: f64::from(u8::from(hit)),
    }
}
