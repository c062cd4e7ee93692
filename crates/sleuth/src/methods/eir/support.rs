//! Metrics of the EIR setting computed per episode and stored in `episode.extra`:
//! Support F1 of the cited evidence against the benchmark's annotations, and the recall
//! of gold paragraphs among those read.
//!
//! Support is sentence-level where the benchmark annotates sentences (HotpotQA, 2Wiki:
//! `(title, sentence)` pairs) and paragraph-level where it annotates paragraphs
//! (MuSiQue: pool positions), as in the official scripts. Cited titles are the titles
//! the agent saw, which [`display_titles`] maps back to pool positions.

use super::json::Citation;
use crate::data::Question;
use crate::env::titles::display_titles;
use std::collections::HashSet;

fn f1(predicted: usize, gold: usize, hits: usize) -> f64 {
    if predicted == 0 || gold == 0 || hits == 0 {
        return 0.0;
    }
    let p = hits as f64 / predicted as f64;
    let r = hits as f64 / gold as f64;
    2.0 * p * r / (p + r)
}

/// Support F1 of `cited` in [0, 1], or `None` when the question has no annotations.
pub fn support_f1(question: &Question, cited: &[Citation]) -> Option<f64> {
    let shown = display_titles(&question.paragraphs);
    let position = |title: &str| shown.iter().position(|t| t == title);
    if !question.supporting_facts.is_empty() {
        let gold: HashSet<(&str, usize)> = question
            .supporting_facts
            .iter()
            .map(|f| (f.title.as_str(), f.sentence))
            .collect();
        let predicted: HashSet<(&str, usize)> = cited
            .iter()
            .filter_map(|c| {
                let original = position(&c.title).map(|i| question.paragraphs[i].title.as_str());
                Some((original?, c.sentence))
            })
            .collect();
        let hits = predicted.intersection(&gold).count();
        return Some(f1(predicted.len(), gold.len(), hits));
    }
    if !question.supporting_paragraphs.is_empty() {
        let gold: HashSet<usize> = question.supporting_paragraphs.iter().copied().collect();
        let predicted: HashSet<usize> = cited.iter().filter_map(|c| position(&c.title)).collect();
        let hits = predicted.intersection(&gold).count();
        return Some(f1(predicted.len(), gold.len(), hits));
    }
    None
}

/// Fraction of the gold paragraphs whose (displayed) title is among `read`, or `None`
/// when the question names no gold paragraph.
pub fn gold_recall(question: &Question, read: &[String]) -> Option<f64> {
    if question.supporting_paragraphs.is_empty() {
        return None;
    }
    let shown = display_titles(&question.paragraphs);
    let hits = question
        .supporting_paragraphs
        .iter()
        .filter(|&&i| shown.get(i).is_some_and(|t| read.contains(t)))
        .count();
    Some(hits as f64 / question.supporting_paragraphs.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Dataset, Paragraph, SupportingFact};

    fn question(facts: bool) -> Question {
        Question {
            id: "q".into(),
            dataset: if facts {
                Dataset::HotpotQa
            } else {
                Dataset::Musique
            },
            text: "?".into(),
            answers: vec!["a".into()],
            paragraphs: vec![
                Paragraph::new("A", vec!["a0".into(), "a1".into()]),
                Paragraph::new("B", vec!["b0".into()]),
                Paragraph::new("A", vec!["second A".into()]),
            ],
            supporting_facts: if facts {
                vec![
                    SupportingFact {
                        title: "A".into(),
                        sentence: 1,
                    },
                    SupportingFact {
                        title: "B".into(),
                        sentence: 0,
                    },
                ]
            } else {
                vec![]
            },
            supporting_paragraphs: vec![1, 2],
            hops: Some(2),
            kind: None,
        }
    }

    fn cite(title: &str, sentence: usize) -> Citation {
        Citation {
            title: title.into(),
            sentence,
        }
    }

    #[test]
    fn sentence_level_support_when_sentences_are_annotated() {
        let q = question(true);
        assert_eq!(support_f1(&q, &[cite("A", 1), cite("B", 0)]), Some(1.0));
        // One right, one wrong: P = 1/2, R = 1/2.
        let half = support_f1(&q, &[cite("A", 1), cite("A", 0)]).unwrap();
        assert!((half - 0.5).abs() < 1e-12);
        assert_eq!(support_f1(&q, &[]), Some(0.0));
    }

    #[test]
    fn paragraph_level_support_maps_repeated_titles_to_positions() {
        let q = question(false);
        // "A (2)" is the pool's third paragraph, a gold one; "A" is not gold.
        let s = support_f1(&q, &[cite("A (2)", 0), cite("B", 0), cite("B", 3)]).unwrap();
        assert_eq!(s, 1.0);
        let s = support_f1(&q, &[cite("A", 0)]).unwrap();
        assert_eq!(s, 0.0);
        assert_eq!(gold_recall(&q, &["B".into(), "A".into()]), Some(0.5));
        assert_eq!(gold_recall(&q, &["A (2)".into(), "B".into()]), Some(1.0));
    }
}
