//! Scores of what an agent cited and read, computed once for every method from its
//! outputs: Support F1 of the citations (the official support rules of
//! [`super::support`], so 2Wiki titles are lowercased as its script does), and the
//! recall of gold paragraphs among those read (EIR paper §4.1).
//!
//! Agents see a pool's titles made unique (`A`, `A (2)`, see
//! [`display_titles`]); citations are mapped back to pool positions here before scoring.

use super::support::{support_paragraphs, support_sentences};
use crate::data::{Question, SupportingFact};
use crate::env::titles::display_titles;
use crate::methods::eir::Citation;

/// Support F1 of `cited` in [0, 1], or `None` when the question has no annotations.
/// Sentence-level where the benchmark annotates sentences (HotpotQA, 2Wiki),
/// paragraph-level where it annotates paragraphs (MuSiQue).
pub fn citation_support_f1(question: &Question, cited: &[Citation]) -> Option<f64> {
    let shown = display_titles(&question.paragraphs);
    let position = |title: &str| shown.iter().position(|t| t == title);
    if !question.supporting_facts.is_empty() {
        let predicted: Vec<SupportingFact> = cited
            .iter()
            .filter_map(|c| {
                Some(SupportingFact {
                    title: question.paragraphs[position(&c.title)?].title.clone(),
                    sentence: c.sentence,
                })
            })
            .collect();
        return Some(
            support_sentences(question.dataset, &predicted, &question.supporting_facts).f1,
        );
    }
    if !question.supporting_paragraphs.is_empty() {
        let predicted: Vec<usize> = cited.iter().filter_map(|c| position(&c.title)).collect();
        return Some(support_paragraphs(&predicted, &question.supporting_paragraphs).f1);
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
    use crate::data::{Dataset, Paragraph};

    fn question(dataset: Dataset) -> Question {
        let facts = dataset != Dataset::Musique;
        Question {
            id: "q".into(),
            dataset,
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
        let q = question(Dataset::HotpotQa);
        let f1 = |c: &[Citation]| citation_support_f1(&q, c).unwrap();
        assert_eq!(f1(&[cite("A", 1), cite("B", 0)]), 1.0);
        // One right, one wrong: P = 1/2, R = 1/2.
        assert!((f1(&[cite("A", 1), cite("A", 0)]) - 0.5).abs() < 1e-12);
        assert_eq!(f1(&[]), 0.0);
    }

    #[test]
    fn two_wiki_titles_follow_its_script() {
        // The same rule as `sleuth score`: 2Wiki lowercases titles after the set, so a
        // citation matching the annotation only up to case still counts there.
        let mut q = question(Dataset::TwoWiki);
        q.supporting_facts[1].title = "b".into();
        assert_eq!(
            citation_support_f1(&q, &[cite("A", 1), cite("B", 0)]),
            Some(1.0)
        );
        q.dataset = Dataset::HotpotQa;
        assert!(citation_support_f1(&q, &[cite("A", 1), cite("B", 0)]).unwrap() < 1.0);
    }

    #[test]
    fn paragraph_level_support_maps_repeated_titles_to_positions() {
        let q = question(Dataset::Musique);
        // "A (2)" is the pool's third paragraph, a gold one; "A" is not gold.
        let s = citation_support_f1(&q, &[cite("A (2)", 0), cite("B", 0), cite("B", 3)]);
        assert_eq!(s, Some(1.0));
        assert_eq!(citation_support_f1(&q, &[cite("A", 0)]), Some(0.0));
        assert_eq!(gold_recall(&q, &["B".into(), "A".into()]), Some(0.5));
        assert_eq!(gold_recall(&q, &["A (2)".into(), "B".into()]), Some(1.0));
    }
}
