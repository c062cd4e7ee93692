//! MuSiQue's hop splits as datasets of their own (SLEUTH §4 "Datasets": the 2/3/4-hop
//! answerable splits, N = 1,252/760/405; Table 1 and Figure 2 show them apart, and so
//! do Tables 13 and 14, and the Holm families of App. G count five benchmarks).
//!
//! A record says `dataset: "musique"` whatever its split, so the loader's arms pool
//! the splits. The analyses that the paper shows per benchmark (summaries, paired
//! comparisons and their Holm families, error decomposition, accuracy at turn t, memory
//! dynamics, sweeps) run on the arms [`by_split`] returns: one arm per split, named
//! `musique_2hop`, `musique_3hop`, `musique_4hop`. The paper has no pooled MuSiQue row,
//! so none is shown; the EM-by-hop-count breakdown (Figure 2a) is read off the pooled
//! arms, which is the same numbers laid side by side. Records without a hop count stay
//! in a `musique` arm.

use super::load::Arm;
use std::collections::BTreeMap;

/// The dataset whose records are split by hop count.
const SPLIT: &str = "musique";

/// The dataset name of one MuSiQue split: `musique_3hop`.
pub fn split_name(hops: u8) -> String {
    format!("{SPLIT}_{hops}hop")
}

/// The hop count of a split dataset name (`musique_3hop` -> 3).
pub fn split_hops(dataset: &str) -> Option<u8> {
    dataset
        .strip_prefix(SPLIT)?
        .strip_prefix('_')?
        .strip_suffix("hop")?
        .parse()
        .ok()
}

/// `arms` with every MuSiQue arm replaced by one arm per hop split (records keep their
/// order and origins), in split order.
pub fn by_split(arms: &[Arm]) -> Vec<Arm> {
    let mut out = Vec::new();
    for arm in arms {
        if arm.key.dataset != SPLIT {
            out.push(arm.clone());
            continue;
        }
        let mut parts: BTreeMap<Option<u8>, Arm> = BTreeMap::new();
        for (record, origin) in arm.records.iter().zip(&arm.origins) {
            let part = parts.entry(record.hops).or_insert_with(|| {
                let mut key = arm.key.clone();
                if let Some(h) = record.hops {
                    key.dataset = split_name(h);
                }
                Arm {
                    key,
                    settings: arm.settings.clone(),
                    records: Vec::new(),
                    origins: Vec::new(),
                }
            });
            part.records.push(record.clone());
            part.origins.push(*origin);
        }
        out.extend(parts.into_values());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::analysis::{ArmKey, RecordDigest};
    use crate::eval::RunRecord;

    fn record(id: &str, hops: Option<u8>) -> RunRecord {
        serde_json::from_value(serde_json::json!({
            "id": id, "dataset": "musique", "hops": hops, "method": "sleuth", "model": "m",
            "answer": "a", "gold": ["a"], "em": 1.0, "f1": 1.0, "finished": true,
            "timed_out": false, "stop": "finished", "turns": 1, "calls": 1,
            "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "nudge_turn": null,
            "reminders": 0, "retrieved": [], "gold_titles": [], "error": null, "trace": []
        }))
        .unwrap()
    }

    #[test]
    fn a_musique_arm_becomes_one_arm_per_split_and_others_stay() {
        let arm = |dataset: &str, records: Vec<RunRecord>| Arm {
            key: ArmKey {
                dataset: dataset.into(),
                method: "sleuth".into(),
                model: "m".into(),
                label: String::new(),
            },
            settings: BTreeMap::new(),
            origins: vec![0; records.len()],
            records: records
                .iter()
                .map(|r| std::sync::Arc::new(RecordDigest::of(r, 0)))
                .collect(),
        };
        let pooled = arm(
            "musique",
            vec![
                record("2hop__1", Some(2)),
                record("4hop__1", Some(4)),
                record("2hop__2", Some(2)),
                record("x", None),
            ],
        );
        let split = by_split(&[arm("hotpotqa", vec![]), pooled]);
        let names: Vec<(&str, usize)> = split
            .iter()
            .map(|a| (a.key.dataset.as_str(), a.records.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("hotpotqa", 0),
                ("musique", 1),
                ("musique_2hop", 2),
                ("musique_4hop", 1)
            ]
        );
        assert_eq!(split_hops("musique_4hop"), Some(4));
        assert_eq!(split_hops("musique"), None);
    }
}
