//! Scores of what an agent cited and read, computed once for every method from its
//! outputs: Support F1 of the citations (the official support rules of
//! [`super::support`], so 2Wiki titles are lowercased as its script does), and the
//! recall of gold paragraphs among those read (EIR paper §4.1).
//!
//! Agents see a pool's titles made unique (`A`, `A (2)`, see
//! [`display_titles`]); citations are mapped back to pool positions here before scoring.
//! Every citation the answer makes counts (EIR App. H.1, H.3: Support F1 of the cited
//! sentences): one naming a paragraph outside the question's pool (the corpus setting
//! reads the whole collection) is a false positive, never dropped.

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
        // A title outside the pool keeps its own text: it matches no annotation.
        let predicted: Vec<SupportingFact> = cited
            .iter()
            .map(|c| SupportingFact {
                title: position(&c.title)
                    .map_or_else(|| c.title.clone(), |i| question.paragraphs[i].title.clone()),
                sentence: c.sentence,
            })
            .collect();
        return Some(
            support_sentences(question.dataset, &predicted, &question.supporting_facts).f1,
        );
    }
    if !question.supporting_paragraphs.is_empty() {
        // A title outside the pool gets a position past its end, one per distinct title.
        let mut outside: Vec<&str> = Vec::new();
        let predicted: Vec<usize> = cited
            .iter()
            .map(|c| {
                position(&c.title).unwrap_or_else(|| {
                    let k = outside
                        .iter()
                        .position(|t| *t == c.title)
                        .unwrap_or_else(|| {
                            outside.push(&c.title);
                            outside.len() - 1
                        });
                    shown.len() + k
                })
            })
            .collect();
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
        // A paragraph outside the pool is a false positive: P = 2/3, R = 1.
        assert!((f1(&[cite("A", 1), cite("B", 0), cite("Elsewhere", 0)]) - 0.8).abs() < 1e-12);
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
        let s = citation_support_f1(&q, &[cite("A (2)", 0), cite("B", 0), cite("Z", 0)]);
        assert!((s.unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(gold_recall(&q, &["B".into(), "A".into()]), Some(0.5));
        assert_eq!(gold_recall(&q, &["A (2)".into(), "B".into()]), Some(1.0));
    }
}
