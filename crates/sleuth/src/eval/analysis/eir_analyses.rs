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
//!   (App. C.2): the Answer F1 bootstrap and the EM McNemar test.

use super::compare::HolmFamily;
use super::digest::RecordDigest;
use super::load::{Arm, ArmKey};
use crate::eval::stats::{holm_in_family, mcnemar_exact, BootstrapCi, Resampling};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

pub use super::trials::FIRST_TRIAL;

/// Adds, for every arm whose records carry a first attempt (both Reflexions), an arm
/// `METHOD/first-attempt` scored on that attempt alone: its answer, scores, turns and
/// calls (all action calls; no reflection ran before it), and its own tokens and cost
/// (recorded per attempt; records written before that show none). EIR paper §4.2: "Reflexion
/// first trial reports the initial answer before any retries"; SLEUTH paper §4 reports
/// Reflexion over 2 episodes, the first alone being the single-episode control.
///
/// A record of such an arm without a first attempt (an error record: the question failed
/// before its first trial was recorded) stays in the first-trial arm as the error it
/// is, unanswered and scored 0, so the arm keeps every question; the returned warnings
/// say how many. Table 1's "Reflexion first trial" row never vanishes for one failure.
pub fn with_first_trials(arms: &[Arm]) -> (Vec<Arm>, Vec<String>) {
    let mut out = arms.to_vec();
    let mut warnings = Vec::new();
    for arm in arms {
        if !arm.records.iter().any(|r| r.first_trial.is_some()) {
            continue;
        }
        let missing = arm
            .records
            .iter()
            .filter(|r| r.first_trial.is_none())
            .count();
        if missing > 0 {
            warnings.push(format!(
                "{} on {} ({}): {missing} of {} records carry no first attempt; {}{FIRST_TRIAL} counts them as errors (unanswered, scored 0)",
                arm.key.method,
                arm.key.dataset,
                arm.key.model,
                arm.records.len(),
                arm.key.method,
            ));
        }
        let records = arm
            .records
            .iter()
            .map(|r| {
                let first = match r.first_trial.as_deref() {
                    Some(first) => first.clone(),
                    None => r.failed_first_trial(),
                };
                std::sync::Arc::new(first)
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
    (out, warnings)
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
type Paired<'a> = (&'a Arm, &'a Arm, Vec<(&'a RecordDigest, &'a RecordDigest)>);

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
        let by_id: BTreeMap<&str, &RecordDigest> =
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

/// Tables 5 and 8: Support F1 differences on every question both arms ran, where both
/// cite (EIR-setting methods), Holm-adjusted within the report's `family` (Table 8's
/// "Holm adjustment across those six comparisons" is `HolmFamily::Baseline`), each
/// family counted as at least `holm_size` comparisons. Table 8 "includes all 1,000
/// questions": a question without a Support F1 (no answer, no valid citation, an error)
/// counts as 0, as the summary's Support F1 counts it.
pub fn support_comparisons(
    arms: &[Arm],
    baseline: &str,
    boot: Resampling,
    family: HolmFamily,
    holm_size: usize,
) -> Vec<SupportComparison> {
    let mut out = Vec::new();
    let cites = |arm: &Arm| arm.records.iter().any(|r| r.evidence.is_some());
    for (base, arm, pairs) in paired(arms, baseline) {
        if !cites(base) || !cites(arm) {
            continue;
        }
        let score = |r: &RecordDigest| 100.0 * r.support_f1.unwrap_or(0.0);
        let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().map(|(b, a)| (score(a), score(b))).unzip();
        if let Some(diff) = boot.paired(&a, &b) {
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
    /// On the same questions, exact matches only under the baseline (`b`) and only
    /// under the arm (`c`), and the exact two-sided McNemar p: C.2's "Exact Match
    /// conclusions remain unchanged" is this test repeated on the readable subset.
    pub b: u64,
    pub c: u64,
    pub p_mcnemar: f64,
}

/// An answer that could be read in the required format (an unparseable response or
/// no valid submission leaves none).
fn readable(r: &RecordDigest) -> bool {
    r.answer.is_some() && !r.has_error
}

pub fn readable_comparisons(
    arms: &[Arm],
    baseline: &str,
    boot: Resampling,
) -> Vec<ReadableComparison> {
    let mut out = Vec::new();
    for (base, arm, pairs) in paired(arms, baseline) {
        let n = pairs.len() as f64;
        let pct = |f: &dyn Fn(&(&RecordDigest, &RecordDigest)) -> bool| {
            100.0 * pairs.iter().filter(|p| f(p)).count() as f64 / n
        };
        let both: Vec<&(&RecordDigest, &RecordDigest)> = pairs
            .iter()
            .filter(|(b, a)| readable(a) && readable(b))
            .collect();
        let (a, b): (Vec<f64>, Vec<f64>) = both
            .iter()
            .map(|(b, a)| (100.0 * a.f1, 100.0 * b.f1))
            .unzip();
        let exact = |r: &RecordDigest| r.em >= 1.0;
        let only_base = both.iter().filter(|(b, a)| exact(b) && !exact(a)).count() as u64;
        let only_arm = both.iter().filter(|(b, a)| exact(a) && !exact(b)).count() as u64;
        if let Some(f1) = boot.paired(&a, &b) {
            out.push(ReadableComparison {
                baseline: base.key.clone(),
                arm: arm.key.clone(),
                unreadable_arm: pct(&|(_, a)| !readable(a)),
                unreadable_baseline: pct(&|(b, _)| !readable(b)),
                n: a.len(),
                f1,
                b: only_base,
                c: only_arm,
                p_mcnemar: mcnemar_exact(only_base, only_arm),
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
    let scored: Vec<(&RecordDigest, usize)> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter_map(|r| r.missing_gold.map(|m| (r, m)))
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
