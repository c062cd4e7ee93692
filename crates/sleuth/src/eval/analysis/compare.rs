//! Paired comparisons against a baseline method, and option sweeps across runs.

use super::digest::RecordDigest;
use super::load::{Arm, ArmKey};
use crate::eval::stats::{holm_in_family, mcnemar_exact, BootstrapCi, HeadToHead, Resampling};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One arm against the baseline arm of the same dataset and model, on the questions
/// both answered. Differences are arm minus baseline, in points (0-100).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub baseline: ArmKey,
    pub arm: ArmKey,
    /// Questions present in both arms.
    pub n: usize,
    pub em: BootstrapCi,
    pub f1: BootstrapCi,
    /// Right only under the baseline.
    pub b: u64,
    /// Right only under the arm.
    pub c: u64,
    pub p_mcnemar: f64,
    /// McNemar p after Holm correction within its family (default: every comparison).
    pub p_holm: f64,
    /// The F1 bootstrap p after Holm correction across the same family.
    pub p_f1_holm: f64,
    pub head_to_head: HeadToHead,
}

/// Which comparisons share one Holm correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HolmFamily {
    /// Every comparison of the report.
    #[default]
    All,
    /// One family per dataset (and model): the rows of one table column.
    Dataset,
    /// One family per compared arm across datasets: a table row, as the SLEUTH paper
    /// tests one baseline against SLEUTH on every benchmark (App. G).
    Arm,
    /// One family per compared method across every dataset and model: EIR's "six
    /// comparisons per baseline" (3 benchmarks x 2 models; EIR Table 1's superscripts,
    /// App. D.2 Table 6: "Holm adjustment covers the six rows for each baseline").
    Baseline,
}

impl HolmFamily {
    pub const NAMES: [&'static str; 4] = ["all", "dataset", "arm", "baseline"];

    pub fn parse(value: &str) -> Option<HolmFamily> {
        match value.trim() {
            "all" => Some(HolmFamily::All),
            "dataset" => Some(HolmFamily::Dataset),
            "arm" | "row" => Some(HolmFamily::Arm),
            "baseline" => Some(HolmFamily::Baseline),
            _ => None,
        }
    }

    /// The name `--holm-family` takes.
    pub fn name(self) -> &'static str {
        match self {
            HolmFamily::All => Self::NAMES[0],
            HolmFamily::Dataset => Self::NAMES[1],
            HolmFamily::Arm => Self::NAMES[2],
            HolmFamily::Baseline => Self::NAMES[3],
        }
    }

    /// How a table note names the family.
    pub fn describe(self) -> &'static str {
        match self {
            HolmFamily::All => "across all rows",
            HolmFamily::Dataset => "within each dataset",
            HolmFamily::Arm => "within each method row across datasets",
            HolmFamily::Baseline => "within each compared method across datasets and models",
        }
    }

    fn key(self, c: &Comparison) -> (String, String) {
        self.family_of(&c.arm)
    }

    /// The family a comparison of `arm` (with its baseline) belongs to: comparisons with
    /// one value are Holm-adjusted together (also the EIR Support F1 comparisons).
    pub fn family_of(self, arm: &ArmKey) -> (String, String) {
        match self {
            HolmFamily::All => (String::new(), String::new()),
            HolmFamily::Dataset => (arm.dataset.clone(), arm.model.clone()),
            HolmFamily::Arm => (arm.name(), arm.model.clone()),
            HolmFamily::Baseline => (arm.name(), String::new()),
        }
    }
}

/// Holm-adjusts the McNemar and F1 p-values within each family, each family counted as
/// at least `size` comparisons (`holm_in_family`).
fn adjust(out: &mut [Comparison], family: HolmFamily, size: usize) {
    let keys: BTreeSet<(String, String)> = out.iter().map(|c| family.key(c)).collect();
    for key in keys {
        let idx: Vec<usize> = (0..out.len())
            .filter(|&i| family.key(&out[i]) == key)
            .collect();
        let p_holm = holm_in_family(
            &idx.iter().map(|&i| out[i].p_mcnemar).collect::<Vec<_>>(),
            size,
        );
        let p_f1_holm = holm_in_family(&idx.iter().map(|&i| out[i].f1.p).collect::<Vec<_>>(), size);
        for ((&i, ph), pf) in idx.iter().zip(p_holm).zip(p_f1_holm) {
            out[i].p_holm = ph;
            out[i].p_f1_holm = pf;
        }
    }
}

/// Compares every arm with the baseline method's arm of the same dataset and model, as
/// one Holm family (see [`compare_to_baseline_in`] for other families). `baseline` names a method (`react`) or one labelled arm
/// (`sleuth [nudge=none]`). Returns the comparisons and warnings (a dataset/model with
/// no baseline arm, an ambiguous baseline).
pub fn compare_to_baseline(
    arms: &[Arm],
    baseline: &str,
    boot: Resampling,
) -> (Vec<Comparison>, Vec<String>) {
    compare_to_baseline_in(arms, baseline, boot, HolmFamily::All)
}

/// [`compare_to_baseline`] with the Holm correction applied within each `family`.
pub fn compare_to_baseline_in(
    arms: &[Arm],
    baseline: &str,
    boot: Resampling,
    family: HolmFamily,
) -> (Vec<Comparison>, Vec<String>) {
    compare_to_baseline_sized(arms, baseline, boot, family, 0)
}

/// [`compare_to_baseline_in`] with every family counted as at least `size` comparisons,
/// those not in the report taken as p = 1 (EIR Table 20 keeps groups of five per metric
/// and model, four of them shown: `--holm-family dataset --holm-size 5`).
pub fn compare_to_baseline_sized(
    arms: &[Arm],
    baseline: &str,
    boot: Resampling,
    family: HolmFamily,
    size: usize,
) -> (Vec<Comparison>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut out = Vec::new();
    let cells: BTreeSet<(&str, &str)> = arms
        .iter()
        .map(|a| (a.key.dataset.as_str(), a.key.model.as_str()))
        .collect();
    for (dataset, model) in cells {
        let here: Vec<&Arm> = arms
            .iter()
            .filter(|a| a.key.dataset == dataset && a.key.model == model)
            .collect();
        let exact: Vec<&&Arm> = here.iter().filter(|a| a.key.name() == baseline).collect();
        let candidates: Vec<&&Arm> = if exact.is_empty() {
            here.iter().filter(|a| a.key.method == baseline).collect()
        } else {
            exact
        };
        let Some(base) = candidates.first() else {
            warnings.push(format!(
                "no `{baseline}` records for {dataset} / {model}: its arms are not compared"
            ));
            continue;
        };
        if candidates.len() > 1 {
            warnings.push(format!(
                "several `{baseline}` arms for {dataset} / {model}; comparing against `{}` (name one as {})",
                base.key.name(),
                crate::knob::Knob::Baseline.with(format!("'{}'", base.key.name()))
            ));
        }
        for arm in here.iter().filter(|a| a.key != base.key) {
            if let Some(c) = compare(base, arm, boot) {
                out.push(c);
            } else {
                warnings.push(format!(
                    "{} and {} share no question on {dataset} / {model}",
                    base.key.name(),
                    arm.key.name()
                ));
            }
        }
    }
    adjust(&mut out, family, size);
    (out, warnings)
}

/// Pairs two arms by question id (records are sorted by id) and compares them.
fn compare(base: &Arm, arm: &Arm, boot: Resampling) -> Option<Comparison> {
    let by_id: BTreeMap<&str, &RecordDigest> =
        base.records.iter().map(|r| (r.id.as_str(), &**r)).collect();
    let pairs: Vec<(&RecordDigest, &RecordDigest)> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter_map(|r| by_id.get(r.id.as_str()).map(|b| (*b, r)))
        .collect();
    let scores = |f: fn(&RecordDigest) -> f64| -> (Vec<f64>, Vec<f64>) {
        pairs
            .iter()
            .map(|(b, a)| (100.0 * f(a), 100.0 * f(b)))
            .unzip()
    };
    let (em_a, em_b) = scores(|r| r.em);
    let (f1_a, f1_b) = scores(|r| r.f1);
    let em = boot.paired(&em_a, &em_b)?;
    let f1 = boot.paired(&f1_a, &f1_b)?;
    let right_a: Vec<bool> = pairs.iter().map(|(_, a)| a.correct()).collect();
    let right_b: Vec<bool> = pairs.iter().map(|(b, _)| b.correct()).collect();
    let h = HeadToHead::count(&right_a, &right_b);
    Some(Comparison {
        baseline: base.key.clone(),
        arm: arm.key.clone(),
        n: pairs.len(),
        em,
        f1,
        b: h.losses,
        c: h.wins,
        p_mcnemar: mcnemar_exact(h.losses, h.wins),
        p_holm: 1.0,
        p_f1_holm: 1.0,
        head_to_head: h,
    })
}

/// EM and timeout rate of one method across the values of one swept option.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    pub key: String,
    pub dataset: String,
    pub method: String,
    pub model: String,
    /// The other options, held fixed along this sweep (`k=v,...`; empty when the arms
    /// differ in this option only).
    pub fixed: String,
    pub points: Vec<SweepPoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    pub value: String,
    /// The arm's full label (other swept options included).
    pub label: String,
    pub n: usize,
    pub em: f64,
    /// Answer F1 (%): EIR's read-budget figure plots it (App. E.1, Figure 6).
    pub f1: f64,
    pub timeout_rate: f64,
}

/// Finds every option whose value differs between runs of one (dataset, method, model)
/// while the other options stay the same, and lists the arms along it, ordered
/// numerically where values are numbers (`none` and other words last). Arms that also
/// differ in another option form separate sweeps, one per value of the others (a grid
/// of T x nudge gives one nudge sweep per T), so no point mixes two settings.
pub fn sweeps(arms: &[Arm]) -> Vec<Sweep> {
    let mut groups: BTreeMap<(&str, &str, &str), Vec<&Arm>> = BTreeMap::new();
    for a in arms.iter().filter(|a| !a.key.label.is_empty()) {
        groups
            .entry((&a.key.dataset, &a.key.method, &a.key.model))
            .or_default()
            .push(a);
    }
    let mut out = Vec::new();
    for ((dataset, method, model), members) in groups {
        let keys: BTreeSet<&str> = members
            .iter()
            .flat_map(|a| a.key.label.split(','))
            .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
            .collect();
        for key in keys {
            let others = |a: &Arm| -> String {
                a.key
                    .label
                    .split(',')
                    .filter(|kv| kv.split_once('=').is_none_or(|(k, _)| k != key))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let mut along: BTreeMap<String, Vec<&Arm>> = BTreeMap::new();
            for a in &members {
                along.entry(others(a)).or_default().push(a);
            }
            for (fixed, line) in along {
                let mut points: Vec<SweepPoint> = line
                    .iter()
                    .map(|a| {
                        let n = a.records.len().max(1) as f64;
                        SweepPoint {
                            value: a
                                .settings
                                .get(key)
                                .cloned()
                                .unwrap_or_else(|| "default".into()),
                            label: a.key.label.clone(),
                            n: a.records.len(),
                            em: 100.0 * a.records.iter().map(|r| r.em).sum::<f64>() / n,
                            f1: 100.0 * a.records.iter().map(|r| r.f1).sum::<f64>() / n,
                            timeout_rate: 100.0
                                * a.records.iter().filter(|r| r.timed_out).count() as f64
                                / n,
                        }
                    })
                    .collect();
                let values: BTreeSet<&str> = points.iter().map(|p| p.value.as_str()).collect();
                if values.len() < 2 {
                    continue;
                }
                points.sort_by(|x, y| sweep_order(&x.value, &y.value).then(x.label.cmp(&y.label)));
                out.push(Sweep {
                    key: key.to_string(),
                    dataset: dataset.to_string(),
                    method: method.to_string(),
                    model: model.to_string(),
                    fixed,
                    points,
                });
            }
        }
    }
    out
}

/// Numbers in numeric order, then words alphabetically (`0.3, 0.7, none`): the order
/// of a sweep's points in tables and on figure axes.
pub fn sweep_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// Arm order in every table and figure: dataset, method, model, then the settings
/// label with values in [`sweep_order`] (`reads=2` before `reads=10`).
pub fn arm_order(a: &ArmKey, b: &ArmKey) -> std::cmp::Ordering {
    let pairs = |l: &str| -> Vec<(String, String)> {
        l.split(',')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (p.to_string(), String::new()),
            })
            .collect()
    };
    (&a.dataset, &a.method, &a.model)
        .cmp(&(&b.dataset, &b.method, &b.model))
        .then_with(|| {
            let (x, y) = (pairs(&a.label), pairs(&b.label));
            for ((kx, vx), (ky, vy)) in x.iter().zip(&y) {
                let o = kx.cmp(ky).then_with(|| sweep_order(vx, vy));
                if o.is_ne() {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(label: &str) -> ArmKey {
        ArmKey {
            dataset: "d".into(),
            method: "m".into(),
            model: "x".into(),
            label: label.into(),
        }
    }

    #[test]
    fn arms_sort_by_numeric_setting_values() {
        let mut keys: Vec<ArmKey> = ["reads=10", "reads=2", "reads=none", "reads=0.5", ""]
            .into_iter()
            .map(key)
            .collect();
        keys.sort_by(arm_order);
        let labels: Vec<&str> = keys.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(
            labels,
            ["", "reads=0.5", "reads=2", "reads=10", "reads=none"]
        );
    }
}
