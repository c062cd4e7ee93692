//! The numbers each benchmark's official script prints, under its own key names and on
//! its own scale: `hotpot_evaluate_v1.py` prints fractions (0-1) unrounded, MuSiQue's
//! `evaluate_v1.0.py` fractions rounded to 3 decimals, `2wikimultihop_evaluate_v1.1.py`
//! percentages (0-100) rounded to 2. We print the same keys on the same scale, unrounded
//! ([`Official::rounding`] says how the script rounds), so a reader can set our output
//! beside the script's and compare to the script's last digit.

use super::{EvidenceSummary, Summary};
use crate::data::Dataset;

/// One script's metrics, computed by us.
#[derive(Debug, Clone, PartialEq)]
pub struct Official {
    /// `0-1` or `0-100`.
    pub scale: &'static str,
    /// Decimals the script rounds to (`None`: it prints the float as is).
    pub rounding: Option<u32>,
    /// The script's keys, in the order it prints them, with our values on its scale.
    pub metrics: Vec<(&'static str, f64)>,
}

/// The official metrics of `summary` (and 2Wiki's evidence and three-way joint), for
/// the parts the predictions hold (MuSiQue's script prints three; the others we compute
/// follow them, named in its style): support keys only when support was predicted, 2Wiki's
/// evidence and joint keys only with evidence triples. Our own `jsonl` schema follows
/// the HotpotQA script.
pub fn official(summary: &Summary, evidence: Option<&EvidenceSummary>) -> Official {
    let mut metrics = Vec::new();
    match summary.dataset {
        Dataset::Musique => {
            metrics.push(("answer_f1", summary.f1));
            metrics.push(("answer_em", summary.em));
            metrics.extend(summary.support_f1.map(|v| ("support_f1", v)));
            // Ours beyond the script's three, named in its style, on its scale.
            metrics.push(("answer_precision", summary.precision));
            metrics.push(("answer_recall", summary.recall));
            let support = [
                ("support_em", summary.support_em),
                ("support_precision", summary.support_precision),
                ("support_recall", summary.support_recall),
            ];
            metrics.extend(support.into_iter().filter_map(|(k, v)| Some((k, v?))));
            return Official {
                scale: "0-1",
                rounding: Some(3),
                metrics,
            };
        }
        Dataset::HotpotQa | Dataset::TwoWiki | Dataset::Jsonl => {}
    }
    metrics.extend([
        ("em", summary.em),
        ("f1", summary.f1),
        ("prec", summary.precision),
        ("recall", summary.recall),
    ]);
    let support = [
        ("sp_em", summary.support_em),
        ("sp_f1", summary.support_f1),
        ("sp_prec", summary.support_precision),
        ("sp_recall", summary.support_recall),
    ];
    metrics.extend(support.into_iter().filter_map(|(k, v)| Some((k, v?))));
    if summary.dataset == Dataset::TwoWiki {
        if let Some(e) = evidence {
            metrics.extend([
                ("evi_em", e.evidence_em),
                ("evi_f1", e.evidence_f1),
                ("evi_prec", e.evidence_precision),
                ("evi_recall", e.evidence_recall),
                ("joint_em", e.joint_em),
                ("joint_f1", e.joint_f1),
                ("joint_prec", e.joint_precision),
                ("joint_recall", e.joint_recall),
            ]);
        }
        // The script divides by N, then multiplies by 100: the same order here.
        for (_, v) in &mut metrics {
            *v *= 100.0;
        }
        return Official {
            scale: "0-100",
            rounding: Some(2),
            metrics,
        };
    }
    let joint = [
        ("joint_em", summary.joint_em),
        ("joint_f1", summary.joint_f1),
        ("joint_prec", summary.joint_precision),
        ("joint_recall", summary.joint_recall),
    ];
    metrics.extend(joint.into_iter().filter_map(|(k, v)| Some((k, v?))));
    Official {
        scale: "0-1",
        rounding: None,
        metrics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::{AnswerScore, QuestionScore, SupportScore};

    fn scores() -> Vec<QuestionScore> {
        let answer = AnswerScore {
            em: 1.0,
            f1: 1.0,
            precision: 1.0,
            recall: 1.0,
        };
        let support = SupportScore {
            em: 0.0,
            f1: 0.5,
            precision: 0.5,
            recall: 0.5,
        };
        vec![
            QuestionScore {
                id: "a".into(),
                answer: Some(answer),
                support: Some(support),
            },
            QuestionScore {
                id: "b".into(),
                answer: None,
                support: None,
            },
        ]
    }

    fn get(o: &Official, key: &str) -> f64 {
        o.metrics.iter().find(|(k, _)| *k == key).unwrap().1
    }

    #[test]
    fn each_script_has_its_keys_and_scale() {
        let s = scores();
        let hotpot = official(&Summary::of(Dataset::HotpotQa, &s, true), None);
        assert_eq!((hotpot.scale, hotpot.rounding), ("0-1", None));
        assert_eq!((get(&hotpot, "em"), get(&hotpot, "sp_f1")), (0.5, 0.25));
        assert_eq!(get(&hotpot, "joint_prec"), 0.25);
        let musique = official(&Summary::of(Dataset::Musique, &s, true), None);
        let keys: Vec<&str> = musique.metrics.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys[..3], ["answer_f1", "answer_em", "support_f1"]);
        assert_eq!(musique.rounding, Some(3));
        let wiki = official(&Summary::of(Dataset::TwoWiki, &s, true), None);
        assert_eq!((wiki.scale, get(&wiki, "em")), ("0-100", 50.0));
        assert!(wiki.metrics.iter().all(|(k, _)| !k.starts_with("joint")));
        let no_support = official(&Summary::of(Dataset::HotpotQa, &s, false), None);
        assert!(no_support
            .metrics
            .iter()
            .all(|(k, _)| !k.starts_with("sp_")));
    }
}
