//! Why a prediction got its score: for each gold answer, the normalized strings, their
//! tokens, the shared tokens and which branch of the official rule decided. For
//! debugging surprising numbers (`sleuth score --explain ID`).

use super::answer::{compare, score_answer, AnswerScore, Comparison, Decision, F1Rule};
use crate::data::Dataset;
use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub dataset: Dataset,
    pub prediction: String,
    /// One comparison per gold answer, in gold order.
    pub golds: Vec<(String, Comparison)>,
    /// The max over golds, as scored.
    pub best: AnswerScore,
}

pub fn explain(dataset: Dataset, prediction: &str, golds: &[String]) -> Explanation {
    let rule = F1Rule::of(dataset);
    Explanation {
        dataset,
        prediction: prediction.to_string(),
        golds: golds
            .iter()
            .map(|g| (g.clone(), compare(rule, prediction, g)))
            .collect(),
        best: score_answer(dataset, prediction, golds),
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "prediction {:?} ({} rules)",
            self.prediction, self.dataset
        )?;
        for (gold, c) in &self.golds {
            writeln!(f, "  gold {gold:?}")?;
            writeln!(
                f,
                "    normalized: {:?} vs {:?}",
                c.normalized_prediction, c.normalized_gold
            )?;
            writeln!(
                f,
                "    tokens: {:?} vs {:?}; common {:?}",
                c.prediction_tokens, c.gold_tokens, c.common
            )?;
            let why = match c.decision {
                Decision::YesNoMismatch => "yes/no/noanswer mismatch: F1 = 0",
                Decision::EmptyAnswer => "a side has no tokens: F1 = 1 only if both are empty",
                Decision::NoOverlap => "no common token: F1 = 0",
                Decision::Overlap => "token overlap",
            };
            writeln!(
                f,
                "    {why}; EM {} F1 {:.4} (P {:.4} R {:.4})",
                c.score.em, c.score.f1, c.score.precision, c.score.recall
            )?;
        }
        write!(f, "  best: EM {} F1 {:.4}", self.best.em, self.best.f1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_each_gold_and_the_max() {
        let golds = vec!["New York City".to_string(), "NYC".to_string()];
        let e = explain(Dataset::Musique, "the city of New York", &golds);
        assert_eq!(e.golds.len(), 2);
        let (_, first) = &e.golds[0];
        assert_eq!(first.normalized_prediction, "city of new york");
        assert_eq!(first.common, ["city", "new", "york"]);
        assert_eq!(e.golds[1].1.decision, Decision::NoOverlap);
        assert!((e.best.f1 - 6.0 / 7.0).abs() < 1e-12);
        let text = e.to_string();
        assert!(
            text.contains("\"city of new york\" vs \"new york city\""),
            "{text}"
        );
        assert!(text.contains("best: EM 0 F1 0.8571"), "{text}");
    }

    #[test]
    fn names_the_yes_no_rule() {
        let e = explain(Dataset::HotpotQa, "yes", &["yes indeed".to_string()]);
        assert!(e.to_string().contains("yes/no/noanswer mismatch"));
    }
}
