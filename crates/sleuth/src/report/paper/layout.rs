//! What the paper-shaped tables share: the papers' dataset column orders, the row
//! blocks of SLEUTH Table 1, finding an arm's summary, and reading an arm's settings
//! off its label (or, for settings every arm shares, off the runs' configuration).

use crate::eval::analysis::{split_hops, Analysis, ArmKey, Summary};
use std::collections::BTreeSet;

/// SLEUTH paper §4 and Table 1: HotpotQA, MuSiQue 2/3/4-hop, 2WikiMultiHopQA.
pub const SLEUTH_ORDER: [&str; 6] = [
    "hotpotqa",
    "musique_2hop",
    "musique_3hop",
    "musique_4hop",
    "musique",
    "2wiki",
];

/// EIR paper §4, Table 1: HotpotQA, 2WikiMultiHopQA, MuSiQue.
pub const EIR_ORDER: [&str; 3] = ["hotpotqa", "2wiki", "musique"];

/// A dataset's column label (`MuSiQue 3-hop`).
pub fn dataset_label(d: &str) -> String {
    if let Some(h) = split_hops(d) {
        return format!("MuSiQue {h}-hop");
    }
    match d {
        "hotpotqa" => "HotpotQA".into(),
        "2wiki" => "2Wiki".into(),
        "musique" => "MuSiQue".into(),
        other => other.into(),
    }
}

/// The report's datasets in `order`, others after them alphabetically.
pub fn datasets(a: &Analysis, order: &[&str]) -> Vec<String> {
    let mut ds: Vec<String> = a
        .summaries
        .iter()
        .map(|s| s.arm.dataset.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    ds.sort_by_key(|d| {
        (
            order.iter().position(|o| o == d).unwrap_or(usize::MAX),
            d.clone(),
        )
    });
    ds
}

/// Method order: first appearance in the runs' `methods` lists, then alphabetical.
pub fn method_rank(a: &Analysis) -> impl Fn(&str) -> (usize, String) + '_ {
    let mut order: Vec<&str> = Vec::new();
    for s in &a.sources {
        for m in &s.config.methods {
            if !order.contains(&m.as_str()) {
                order.push(m);
            }
        }
    }
    move |m: &str| {
        (
            order.iter().position(|o| *o == m).unwrap_or(usize::MAX),
            m.to_string(),
        )
    }
}

/// The models of the report, sorted.
pub fn models(a: &Analysis) -> Vec<String> {
    a.summaries
        .iter()
        .map(|s| s.arm.model.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// SLEUTH Table 1's blocks: the established baselines (external), then the
/// working-memory ablations (§5.1, App. I), then SLEUTH and what builds on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Block {
    External,
    Ablation,
    Ours,
}

impl Block {
    pub fn of(method: &str) -> Block {
        let base = method.split('/').next().unwrap_or(method);
        match base {
            "react" | "react-cot" | "cot" | "self-ask" | "ircot" | "reflexion" | "direct" => {
                Block::External
            }
            "notes" | "facts-only" | "facts-hyp" | "facts-q" => Block::Ablation,
            _ => Block::Ours,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Block::External => "established baselines",
            Block::Ablation => "working-memory ablations",
            Block::Ours => "SLEUTH",
        }
    }
}

/// One row of a methods x datasets table: an arm without its dataset.
pub fn rows(a: &Analysis, model: &str) -> Vec<ArmKey> {
    let rank = method_rank(a);
    let mut rows: Vec<ArmKey> = a
        .summaries
        .iter()
        .filter(|s| s.arm.model == model)
        .map(|s| ArmKey {
            dataset: String::new(),
            ..s.arm.clone()
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    rows.sort_by(|x, y| {
        (Block::of(&x.method), rank(&x.method), &x.label).cmp(&(
            Block::of(&y.method),
            rank(&y.method),
            &y.label,
        ))
    });
    rows
}

/// The summary of `row`'s arm on `dataset`.
pub fn summary<'a>(a: &'a Analysis, row: &ArmKey, dataset: &str) -> Option<&'a Summary> {
    a.summaries.iter().find(|s| {
        s.arm.dataset == dataset
            && s.arm.method == row.method
            && s.arm.model == row.model
            && s.arm.label == row.label
    })
}

/// The value of setting `key` for `arm`: from its label (`nudge=0.7,turns=10`), else
/// from the configuration of a run that holds the arm's method on its dataset (the
/// setting every arm shares is left out of labels).
pub fn setting(a: &Analysis, arm: &ArmKey, key: &str) -> Option<String> {
    let from_label = arm.label.split(',').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim() == key).then(|| v.trim().to_string())
    });
    from_label.or_else(|| {
        let base = arm.method.split('/').next().unwrap_or(&arm.method);
        let pooled = arm.dataset.split('_').next().unwrap_or(&arm.dataset);
        a.sources
            .iter()
            .filter(|s| s.config.methods.iter().any(|m| m == base))
            .filter(|s| {
                s.config
                    .dataset
                    .as_deref()
                    .is_none_or(|d| d == arm.dataset || d == pooled)
            })
            .find_map(|s| s.config.settings.get(key).cloned())
    })
}

/// The turn at which the nudge fires for `arm`: `turn:N`, or ⌈α·T⌉ (one more under
/// `nudge_count=consumed`; SLEUTH §3.3); None without a nudge (ReAct and the other
/// memoryless methods have one only under `nudge_all=true`, App. D.4).
pub fn nudge_turn(a: &Analysis, arm: &ArmKey) -> Option<u32> {
    let method = arm.method.split('/').next().unwrap_or(&arm.method);
    crate::methods::registry::nudge_turn_of(method, |key| setting(a, arm, key))
}

/// `+4.7` / `-1.2`: a difference in points.
pub fn signed(v: f64) -> String {
    // -0.0 (a negated zero) reads as +0.0.
    format!("{:+.1}", v + 0.0)
}
