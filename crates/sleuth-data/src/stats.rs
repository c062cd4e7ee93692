//! Summary counts of a question set: how many questions, how big the pools are, and how
//! they split by hop count and question type. Used by `sleuth data stats` to check that a
//! file is what its provenance says before anything is spent evaluating on it.

use super::{Dataset, Question};
use serde::Serialize;
use std::collections::BTreeMap;

/// Total, mean, min and max of one count taken over many items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub total: usize,
    pub mean: f64,
    pub min: usize,
    pub max: usize,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: impl IntoIterator<Item = usize>) -> Self {
        let (mut total, mut n, mut min, mut max) = (0, 0, usize::MAX, 0);
        for v in values {
            total += v;
            n += 1;
            min = min.min(v);
            max = max.max(v);
        }
        Spread {
            total,
            mean: if n == 0 { 0.0 } else { total as f64 / n as f64 },
            min: if n == 0 { 0 } else { min },
            max,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetStats {
    pub dataset: Dataset,
    pub questions: usize,
    /// Paragraphs per question.
    pub paragraphs: Spread,
    /// Sentences per paragraph.
    pub sentences: Spread,
    /// Supporting (gold) paragraphs per question.
    pub supporting_paragraphs: Spread,
    /// Questions per hop count; questions whose hop count is unknown are in `hops_unknown`.
    pub hops: BTreeMap<u8, usize>,
    pub hops_unknown: usize,
    /// Questions per type (`bridge`, `3hop1`, `compositional`, ...; `unknown` if none).
    pub types: BTreeMap<String, usize>,
    /// Question length in tokens (SLEUTH App. A, Table 5): whitespace-separated words,
    /// since the paper names no tokenizer.
    pub question_tokens: Spread,
    /// Length of the first gold answer, in the same tokens.
    pub answer_tokens: Spread,
}

/// Whitespace-separated words: the tokens of [`DatasetStats`]' lengths.
fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

impl DatasetStats {
    pub fn of(dataset: Dataset, questions: &[Question]) -> Self {
        let mut hops = BTreeMap::new();
        let mut hops_unknown = 0;
        let mut types = BTreeMap::new();
        for q in questions {
            match q.hops {
                Some(h) => *hops.entry(h).or_insert(0) += 1,
                None => hops_unknown += 1,
            }
            let kind = q.kind.clone().unwrap_or_else(|| "unknown".to_string());
            *types.entry(kind).or_insert(0) += 1;
        }
        DatasetStats {
            dataset,
            questions: questions.len(),
            paragraphs: Spread::of(questions.iter().map(|q| q.paragraphs.len())),
            sentences: Spread::of(
                questions
                    .iter()
                    .flat_map(|q| q.paragraphs.iter().map(|p| p.sentences.len())),
            ),
            supporting_paragraphs: Spread::of(
                questions.iter().map(|q| q.supporting_paragraphs.len()),
            ),
            hops,
            hops_unknown,
            types,
            question_tokens: Spread::of(questions.iter().map(|q| words(&q.text))),
            answer_tokens: Spread::of(
                questions
                    .iter()
                    .map(|q| q.answers.first().map_or(0, |a| words(a))),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_nothing_is_zero() {
        assert_eq!(
            Spread::of([]),
            Spread {
                total: 0,
                mean: 0.0,
                min: 0,
                max: 0
            }
        );
        let s = Spread::of([2, 10, 9]);
        assert_eq!((s.total, s.min, s.max), (21, 2, 10));
        assert!((s.mean - 7.0).abs() < 1e-12);
    }

    #[test]
    fn real_hotpot_stats_match_the_provenance() {
        let Some(path) = crate::load::tests::shared("hotpotqa/hotpot_dev_distractor_subset.jsonl")
        else {
            return;
        };
        let qs = super::super::load(Dataset::HotpotQa, path).unwrap();
        let s = DatasetStats::of(Dataset::HotpotQa, &qs);
        assert_eq!(s.questions, 396);
        assert_eq!(
            (s.paragraphs.min, s.paragraphs.max, s.paragraphs.total),
            (2, 10, 394 * 10 + 2 * 2)
        );
        assert_eq!(s.hops, BTreeMap::from([(2, 396)]));
        assert_eq!(s.types["bridge"], 295);
        assert_eq!(s.types["comparison"], 101);
    }
}
