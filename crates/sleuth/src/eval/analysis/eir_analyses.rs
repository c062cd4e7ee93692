//! The EIR paper's analyses beyond accuracy and cost, computed from the records of
//! EIR-setting arms alone. Each answers one question the paper asks:
//!
//! - Reflexion's first trial as an arm of its own ([`with_first_trials`]; Table 1 Panel
//!   B's †, Table 8's "Refl. t1"), so every table and comparison shows it.
//! - Paired Support F1 differences against the baseline (Tables 5 and 8).
//! - EM errors with complete versus incomplete evidence (App. F.1, Table 15, Figure 3).
//! - The final call's answer against the answer the trajectory submitted (App. H.4).
//! - Additional retrieval: how often more was requested, and what it changed (App. F.4,
//!   Table 17).
//! - Calls spent after every annotated paragraph was read (App. H.4, Table 21).
//! - Rejected actions with their denominators (App. H.4, Table 22).
//! - The comparison repeated on questions where both methods gave a readable answer
//!   (App. C.2).

use super::compare::HolmFamily;
use super::load::{Arm, ArmKey};
use crate::eval::stats::{holm_in_family, paired_bootstrap, BootstrapCi};
use crate::eval::RunRecord;
use crate::methods::CallKind;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The method-name suffix of a retry wrapper's first-attempt arm.
pub const FIRST_TRIAL: &str = "/first-attempt";

/// Adds, for every arm whose records carry a first attempt (both Reflexions), an arm
/// `METHOD/first-attempt` scored on that attempt alone: its answer, scores, turns and
/// calls (all action calls; no reflection ran before it), and its own tokens and cost
/// (recorded per attempt; records written before that show none). EIR paper §4.2: "Reflexion
/// first trial reports the initial answer before any retries"; SLEUTH paper §4 reports
/// Reflexion over 2 episodes, the first alone being the single-episode control.
pub fn with_first_trials(arms: &[Arm]) -> Vec<Arm> {
    let mut out = arms.to_vec();
    for arm in arms {
        if arm.records.is_empty() || arm.records.iter().any(|r| r.first_attempt.is_none()) {
            continue;
        }
        let records = arm
            .records
            .iter()
            .map(|r| {
                let f = r.first_attempt.as_ref().expect("checked above");
                let mut t = RunRecord::clone(r);
                t.method = format!("{}{FIRST_TRIAL}", r.method);
                t.answer = f.answer.clone();
                t.em = f.em;
                t.f1 = f.f1;
                t.support_f1 = f.support_f1;
                t.gold_recall = f.gold_recall;
                t.turns = f.turns;
                t.calls = f.calls;
                t.calls_by_kind = BTreeMap::from([(CallKind::Action, f.calls)]);
                t.finished = f.answer.is_some();
                (
                    t.input_tokens,
                    t.output_tokens,
                    t.cached_input_tokens,
                    t.cache_write_tokens,
                    t.cost_usd,
                ) = (
                    f.input_tokens,
                    f.output_tokens,
                    f.cached_input_tokens,
                    f.cache_write_tokens,
                    f.cost_usd,
                );
                t.first_attempt = None;
                let first = r.outputs.attempts.first();
                t.retrieved = first.map(|a| a.retrieved.clone()).unwrap_or_default();
                t.trace = first_trial_turns(r);
                std::sync::Arc::new(t)
            })
            .collect();
        let mut key = arm.key.clone();
        key.method = format!("{}{FIRST_TRIAL}", key.method);
        out.push(Arm {
            key,
            settings: arm.settings.clone(),
            records,
            origins: arm.origins.clone(),
        });
    }
    out
}

/// Whether `trace[i]` opens a new trial: its recorded trial differs from the previous
/// turn's (EIR App. D.1, H.4: every trial of a retry wrapper is told apart in the
/// record); records written before turns carried their trial fall back to turn numbers
/// starting again.
pub fn starts_trial(trace: &[crate::methods::Turn], i: usize) -> bool {
    if i == 0 || i >= trace.len() {
        return false;
    }
    match (trace[i - 1].trial, trace[i].trial) {
        (Some(a), Some(b)) => a != b,
        _ => trace[i].number <= trace[i - 1].number,
    }
}

/// The turns of the first trial.
fn first_trial_turns(r: &RunRecord) -> Vec<crate::methods::Turn> {
    trials(r)
        .into_iter()
        .next()
        .map(<[_]>::to_vec)
        .unwrap_or_default()
}

/// A record's trace split into trials ([`starts_trial`]).
fn trials(r: &RunRecord) -> Vec<&[crate::methods::Turn]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..r.trace.len() {
        if starts_trial(&r.trace, i) {
            out.push(&r.trace[start..i]);
            start = i;
        }
    }
    if !r.trace.is_empty() {
        out.push(&r.trace[start..]);
    }
    out
}

/// One arm's paired Support F1 difference from the baseline (points), Holm-adjusted
/// over the report's Support F1 comparisons.
#[derive(Debug, Clone, Serialize)]
pub struct SupportComparison {
    pub baseline: ArmKey,
    pub arm: ArmKey,
    pub n: usize,
    pub diff: BootstrapCi,
    pub p_holm: f64,
}

/// A baseline arm, another arm, and their records paired by question id.
type Paired<'a> = (&'a Arm, &'a Arm, Vec<(&'a RunRecord, &'a RunRecord)>);

/// Pairs of records (baseline, arm) by question id, for every arm of the baseline's
/// dataset and model; the baseline is matched as the main comparison matches it.
fn paired<'a>(arms: &'a [Arm], baseline: &str) -> Vec<Paired<'a>> {
    let mut out = Vec::new();
    for base in arms {
        let named = base.key.name() == baseline;
        let by_method = base.key.method == baseline
            && !arms.iter().any(|a| {
                a.key.name() == baseline
                    && a.key.dataset == base.key.dataset
                    && a.key.model == base.key.model
            });
        if !named && !by_method {
            continue;
        }
        let by_id: BTreeMap<&str, &RunRecord> =
            base.records.iter().map(|r| (r.id.as_str(), &**r)).collect();
        for arm in arms.iter().filter(|a| {
            a.key != base.key && a.key.dataset == base.key.dataset && a.key.model == base.key.model
        }) {
            let pairs: Vec<_> = arm
                .records
                .iter()
                .map(|r| &**r)
                .filter_map(|r| by_id.get(r.id.as_str()).map(|b| (*b, r)))
                .collect();
            if !pairs.is_empty() {
                out.push((base, arm, pairs));
            }
        }
    }
    out
}

/// Tables 5 and 8: Support F1 differences on the questions both arms answered, where
/// both cite (EIR-setting methods), Holm-adjusted within the report's `family` (Table
/// 8's "Holm adjustment across those six comparisons" is `HolmFamily::Baseline`), each
/// family counted as at least `holm_size` comparisons.
pub fn support_comparisons(
    arms: &[Arm],
    baseline: &str,
    resamples: usize,
    seed: u64,
    family: HolmFamily,
    holm_size: usize,
) -> Vec<SupportComparison> {
    let mut out = Vec::new();
    for (base, arm, pairs) in paired(arms, baseline) {
        let (a, b): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .filter_map(|(b, a)| Some((100.0 * a.support_f1?, 100.0 * b.support_f1?)))
            .unzip();
        if let Some(diff) = paired_bootstrap(&a, &b, resamples, seed) {
            out.push(SupportComparison {
                baseline: base.key.clone(),
                arm: arm.key.clone(),
                n: a.len(),
                diff,
                p_holm: 1.0,
            });
        }
    }
    let families: BTreeSet<(String, String)> =
        out.iter().map(|c| family.family_of(&c.arm)).collect();
    for f in families {
        let idx: Vec<usize> = (0..out.len())
            .filter(|&i| family.family_of(&out[i].arm) == f)
            .collect();
        let adjusted = holm_in_family(
            &idx.iter().map(|&i| out[i].diff.p).collect::<Vec<_>>(),
            holm_size,
        );
        for (&i, p) in idx.iter().zip(adjusted) {
            out[i].p_holm = p;
        }
    }
    out
}

/// App. C.2: the F1 comparison on questions where both arms gave a readable answer.
#[derive(Debug, Clone, Serialize)]
pub struct ReadableComparison {
    pub baseline: ArmKey,
    pub arm: ArmKey,
    /// % of the arm's and the baseline's paired answers that could not be read.
    pub unreadable_arm: f64,
    pub unreadable_baseline: f64,
    /// Questions where both answers were readable.
    pub n: usize,
    pub f1: BootstrapCi,
}

/// An answer that could be read in the required format (an unparseable response or
/// no valid submission leaves none).
fn readable(r: &RunRecord) -> bool {
    r.answer.is_some() && r.error.is_none()
}

pub fn readable_comparisons(
    arms: &[Arm],
    baseline: &str,
    resamples: usize,
    seed: u64,
) -> Vec<ReadableComparison> {
    let mut out = Vec::new();
    for (base, arm, pairs) in paired(arms, baseline) {
        let n = pairs.len() as f64;
        let pct = |f: &dyn Fn(&(&RunRecord, &RunRecord)) -> bool| {
            100.0 * pairs.iter().filter(|p| f(p)).count() as f64 / n
        };
        let (a, b): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .filter(|(b, a)| readable(a) && readable(b))
            .map(|(b, a)| (100.0 * a.f1, 100.0 * b.f1))
            .unzip();
        if let Some(f1) = paired_bootstrap(&a, &b, resamples, seed) {
            out.push(ReadableComparison {
                baseline: base.key.clone(),
                arm: arm.key.clone(),
                unreadable_arm: pct(&|(_, a)| !readable(a)),
                unreadable_baseline: pct(&|(b, _)| !readable(b)),
                n: a.len(),
                f1,
            });
        }
    }
    out
}

/// App. F.1 / Table 15 / Figure 3: EM errors by whether every annotated paragraph was
/// read. Figure 3's two panels divide both kinds of error by all n answers (§5,
/// "Evidence Availability": 17.1%, 3.0%, 37.3% ... incomplete; 28.6%, 36.8%, 22.0% ...
/// complete), so the six values of a panel sum, times 1,000, to F.1's 1,248 and 1,510.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceErrors {
    pub arm: ArmKey,
    pub n: usize,
    /// Figure 3's left panel: EM errors with incomplete evidence as % of all n answers
    /// (the paper's six values sum, times n, to F.1's incomplete error count).
    pub incomplete_errors_share: f64,
    pub errors: usize,
    pub complete: usize,
    pub incomplete: usize,
    /// Incomplete errors as % of EM errors, with a Wilson 95% interval.
    pub incomplete_pct: f64,
    pub ci: (f64, f64),
    /// Figure 3's right panel: EM errors with complete evidence as % of all n answers
    /// (summing, times n, to F.1's complete error count).
    pub complete_errors_share: f64,
    /// Incomplete errors by how many annotated paragraphs were missed (1, 2, 3+).
    pub missing: [usize; 3],
}

/// Annotated paragraphs not read (from the recorded recall and the gold titles).
pub fn missing_gold(r: &RunRecord) -> Option<usize> {
    let recall = r.gold_recall?;
    Some(((1.0 - recall) * r.gold_titles.len() as f64).round() as usize)
}

/// The Wilson score interval of k successes in n, in %.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let (k, n, z) = (k as f64, n as f64, 1.959_963_984_540_054);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt() / (1.0 + z * z / n);
    (100.0 * (centre - half), 100.0 * (centre + half))
}

pub fn evidence_errors(arm: &Arm) -> Option<EvidenceErrors> {
    let scored: Vec<(&RunRecord, usize)> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter_map(|r| missing_gold(r).map(|m| (r, m)))
        .collect();
    if scored.is_empty() {
        return None;
    }
    let wrong: Vec<usize> = scored
        .iter()
        .filter(|(r, _)| r.em < 1.0)
        .map(|(_, m)| *m)
        .collect();
    let incomplete = wrong.iter().filter(|m| **m > 0).count();
    let mut missing = [0; 3];
    for m in wrong.iter().filter(|m| **m > 0) {
        missing[(*m).min(3) - 1] += 1;
    }
    let pct = |k: usize, n: usize| {
        if n == 0 {
            0.0
        } else {
            100.0 * k as f64 / n as f64
        }
    };
    Some(EvidenceErrors {
        arm: arm.key.clone(),
        n: scored.len(),
        incomplete_errors_share: pct(incomplete, scored.len()),
        errors: wrong.len(),
        complete: wrong.len() - incomplete,
        incomplete,
        incomplete_pct: pct(incomplete, wrong.len()),
        ci: wilson(incomplete, wrong.len()),
        complete_errors_share: pct(wrong.len() - incomplete, scored.len()),
        missing,
    })
}

#[cfg(test)]
#[path = "eir_analyses_tests.rs"]
mod tests;
