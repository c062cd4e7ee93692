//! 2WikiMultiHopQA's evidence metrics and its three-way joint metric, as
//! `2wikimultihop_evaluate_v1.1.py` computes them.
//!
//! Triples are normalized like answers but without removing articles (lowercase, drop
//! ASCII punctuation, collapse whitespace). The prediction becomes a set; each gold
//! triple is the set of its alias spellings (see `data::read_evidence`). A predicted
//! triple matches when it is in any gold triple's set; precision = matches / predicted
//! (0 when nothing is predicted), recall = matches / gold, EM = 1 when matches, predicted
//! and gold counts are all equal. The joint metric multiplies answer, support and
//! evidence precision (and recall, and EM), and is 0 for a question missing any of the
//! three predictions.

use super::normalize::python_split;
use super::score::QuestionScore;
use crate::data::{DataError, GoldEvidence};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub type Triple = (String, String, String);

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct EvidenceScore {
    pub em: f64,
    pub f1: f64,
    pub precision: f64,
    pub recall: f64,
}

fn normalize(s: &str) -> String {
    let lower = s.to_lowercase();
    let no_punct: String = lower
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    python_split(&no_punct).collect::<Vec<_>>().join(" ")
}

fn normalize_triple((s, r, o): &Triple) -> Triple {
    (normalize(s), normalize(r), normalize(o))
}

/// One question's evidence score.
pub fn score_evidence(predicted: &[Triple], gold: &[GoldEvidence]) -> EvidenceScore {
    let predicted: HashSet<Triple> = predicted.iter().map(normalize_triple).collect();
    let gold: Vec<HashSet<Triple>> = gold
        .iter()
        .map(|spellings| spellings.iter().map(normalize_triple).collect())
        .collect();
    let matches = predicted
        .iter()
        .filter(|p| gold.iter().any(|g| g.contains(*p)))
        .count();
    let ratio = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let precision = ratio(matches, predicted.len());
    let recall = ratio(matches, gold.len());
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    let em = (matches == predicted.len() && matches == gold.len()) as u8 as f64;
    EvidenceScore {
        em,
        f1,
        precision,
        recall,
    }
}

/// Evidence and three-way joint averages over a gold file, as fractions (0-1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EvidenceSummary {
    pub evidence_em: f64,
    pub evidence_f1: f64,
    pub evidence_precision: f64,
    pub evidence_recall: f64,
    pub joint_em: f64,
    pub joint_f1: f64,
    pub joint_precision: f64,
    pub joint_recall: f64,
}

/// Averages over `scores` (one per gold question, in any order), with the evidence
/// predictions and the gold evidence by id.
pub fn summarize_evidence(
    scores: &[QuestionScore],
    predicted: &HashMap<String, Vec<Triple>>,
    gold: &HashMap<String, Vec<GoldEvidence>>,
) -> EvidenceSummary {
    let (mut em, mut f1, mut precision, mut recall) = (0.0, 0.0, 0.0, 0.0);
    let (mut joint_em, mut joint_f1, mut joint_precision, mut joint_recall) = (0.0, 0.0, 0.0, 0.0);
    for s in scores {
        let evidence = predicted
            .get(&s.id)
            .map(|p| score_evidence(p, gold.get(&s.id).map_or(&[][..], Vec::as_slice)));
        if let Some(e) = evidence {
            em += e.em;
            f1 += e.f1;
            precision += e.precision;
            recall += e.recall;
        }
        if let (Some(a), Some(sp), Some(e)) = (s.answer, s.support, evidence) {
            let p = a.precision * sp.precision * e.precision;
            let r = a.recall * sp.recall * e.recall;
            joint_f1 += if p + r > 0.0 {
                2.0 * p * r / (p + r)
            } else {
                0.0
            };
            joint_em += a.em * sp.em * e.em;
            joint_precision += p;
            joint_recall += r;
        }
    }
    let n = scores.len().max(1) as f64;
    let mean = |x: f64| x / n;
    EvidenceSummary {
        evidence_em: mean(em),
        evidence_f1: mean(f1),
        evidence_precision: mean(precision),
        evidence_recall: mean(recall),
        joint_em: mean(joint_em),
        joint_f1: mean(joint_f1),
        joint_precision: mean(joint_precision),
        joint_recall: mean(joint_recall),
    }
}

#[derive(Deserialize)]
struct EvidenceFile {
    #[serde(default)]
    evidence: Option<HashMap<String, Vec<Triple>>>,
}

/// The `evidence` part of a 2Wiki prediction file (`{"answer", "sp", "evidence": {id:
/// [[subject, relation, object]]}}`), or None when the file has none.
pub fn read_evidence_predictions(
    path: &Path,
) -> Result<Option<HashMap<String, Vec<Triple>>>, DataError> {
    let text = crate::data::read_text(path)?;
    let record = crate::data::records::Record {
        line: 1,
        text: &text,
    };
    let file: EvidenceFile = record.decode().map_err(|p| record.error(path, p))?;
    Ok(file.evidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, r: &str, o: &str) -> Triple {
        (s.into(), r.into(), o.into())
    }

    #[test]
    fn alias_spellings_match_and_normalization_keeps_articles() {
        let gold = vec![
            vec![
                t("The Mask", "director", "Charles Brabin"),
                t("The Mask", "director", "C. Brabin"),
            ],
            vec![t("Blind Shaft", "director", "Li Yang")],
        ];
        // "c brabin" matches the alias after punctuation removal; "the" is kept, so
        // "Mask" alone does not match "The Mask".
        let s = score_evidence(
            &[
                t("the mask", "Director", "C Brabin"),
                t("Mask", "director", "Li Yang"),
            ],
            &gold,
        );
        assert_eq!((s.precision, s.recall, s.em), (0.5, 0.5, 0.0));
        let all = score_evidence(
            &[
                t("The Mask", "director", "Charles Brabin"),
                t("Blind Shaft", "director", "Li Yang"),
            ],
            &gold,
        );
        assert_eq!((all.em, all.f1), (1.0, 1.0));
        // Nothing predicted: precision 0, recall 0, EM 0 (gold is not empty).
        assert_eq!(score_evidence(&[], &gold), EvidenceScore::default());
        // Two spellings of one gold triple both count as matches (the script's rule).
        let twice = score_evidence(
            &[
                t("The Mask", "director", "Charles Brabin"),
                t("The Mask", "director", "C. Brabin"),
            ],
            &gold,
        );
        assert_eq!((twice.precision, twice.recall), (1.0, 1.0));
    }
}
