//! Supporting-fact metrics: `update_sp` of `hotpot_evaluate_v1.py`, which MuSiQue's
//! `SupportMetric` reuses on paragraph indices and 2Wiki's script reuses after
//! lowercasing titles.
//!
//! Both sides are first made sets. Then tp = predicted items found in gold, fp = the
//! other predicted items, fn = gold items not predicted; precision and recall are 0 when
//! their denominator is 0, and EM is 1 exactly when fp + fn = 0 (so an empty prediction
//! against an empty gold has EM 1 and F1 0, as in the scripts).

use crate::data::{Dataset, SupportingFact};
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct SupportScore {
    pub em: f64,
    pub f1: f64,
    pub precision: f64,
    pub recall: f64,
}

/// Sentence-level support for HotpotQA, 2Wiki and `jsonl`.
pub fn support_sentences(
    dataset: Dataset,
    predicted: &[SupportingFact],
    gold: &[SupportingFact],
) -> SupportScore {
    // 2Wiki's normalize_sp lowercases titles *after* taking the set and keeps a list,
    // so two predictions that differ only in title case both count.
    let prepare = |facts: &[SupportingFact]| -> Vec<(String, usize)> {
        let unique: BTreeSet<(&str, usize)> = facts
            .iter()
            .map(|f| (f.title.as_str(), f.sentence))
            .collect();
        unique
            .into_iter()
            .map(|(t, s)| match dataset {
                Dataset::TwoWiki => (t.to_lowercase(), s),
                _ => (t.to_string(), s),
            })
            .collect()
    };
    overlap(&prepare(predicted), &prepare(gold))
}

/// Paragraph-level support for MuSiQue (`predicted_support_idxs` vs gold `idx`s).
pub fn support_paragraphs(predicted: &[usize], gold: &[usize]) -> SupportScore {
    let p: Vec<usize> = predicted
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let g: Vec<usize> = gold
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    overlap(&p, &g)
}

fn overlap<T: PartialEq>(predicted: &[T], gold: &[T]) -> SupportScore {
    let tp = predicted.iter().filter(|e| gold.contains(e)).count() as f64;
    let fp = predicted.len() as f64 - tp;
    let fn_ = gold.iter().filter(|e| !predicted.contains(e)).count() as f64;
    let precision = if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
    let recall = if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 0.0 };
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    SupportScore {
        em: if fp + fn_ == 0.0 { 1.0 } else { 0.0 },
        f1,
        precision,
        recall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(items: &[(&str, usize)]) -> Vec<SupportingFact> {
        items
            .iter()
            .map(|(t, s)| SupportingFact {
                title: t.to_string(),
                sentence: *s,
            })
            .collect()
    }

    #[test]
    fn exact_sets_score_one() {
        let g = facts(&[("A", 0), ("B", 2)]);
        let s = support_sentences(Dataset::HotpotQa, &facts(&[("B", 2), ("A", 0)]), &g);
        assert_eq!((s.em, s.f1, s.precision, s.recall), (1.0, 1.0, 1.0, 1.0));
    }

    #[test]
    fn precision_and_recall_from_set_membership() {
        // tp = 1 (A,0), fp = 2 (A,1), (C,0); fn = 1 (B,2).
        let s = support_sentences(
            Dataset::HotpotQa,
            &facts(&[("A", 0), ("A", 1), ("C", 0)]),
            &facts(&[("A", 0), ("B", 2)]),
        );
        assert_eq!(s.em, 0.0);
        assert!((s.precision - 1.0 / 3.0).abs() < 1e-12 && (s.recall - 0.5).abs() < 1e-12);
        assert!((s.f1 - 0.4).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn duplicate_predictions_count_once() {
        let s = support_sentences(
            Dataset::HotpotQa,
            &facts(&[("A", 0), ("A", 0), ("A", 0)]),
            &facts(&[("A", 0), ("B", 1)]),
        );
        assert_eq!((s.precision, s.recall), (1.0, 0.5));
    }

    #[test]
    fn sentence_index_and_title_case_matter_in_hotpot() {
        let s = support_sentences(
            Dataset::HotpotQa,
            &facts(&[("a", 0), ("A", 1)]),
            &facts(&[("A", 0)]),
        );
        assert_eq!((s.em, s.f1), (0.0, 0.0));
    }

    #[test]
    fn twowiki_lowercases_titles_after_dedup() {
        let s = support_sentences(Dataset::TwoWiki, &facts(&[("a", 0)]), &facts(&[("A", 0)]));
        assert_eq!((s.em, s.f1), (1.0, 1.0));
        // "A" and "a" are distinct before lowercasing, so both count as true positives.
        let s = support_sentences(
            Dataset::TwoWiki,
            &facts(&[("a", 0), ("A", 0)]),
            &facts(&[("A", 0)]),
        );
        assert_eq!((s.em, s.precision, s.recall), (1.0, 1.0, 1.0));
    }

    #[test]
    fn empty_prediction_and_empty_gold() {
        let s = support_sentences(Dataset::HotpotQa, &[], &facts(&[("A", 0)]));
        assert_eq!((s.em, s.f1, s.precision, s.recall), (0.0, 0.0, 0.0, 0.0));
        let s = support_paragraphs(&[], &[]);
        assert_eq!((s.em, s.f1), (1.0, 0.0));
    }

    #[test]
    fn musique_paragraph_indices() {
        let s = support_paragraphs(&[3, 7, 7, 12], &[7, 12, 15]);
        assert_eq!(s.em, 0.0);
        assert!((s.precision - 2.0 / 3.0).abs() < 1e-12 && (s.recall - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(support_paragraphs(&[12, 7], &[7, 12]).em, 1.0);
    }
}
