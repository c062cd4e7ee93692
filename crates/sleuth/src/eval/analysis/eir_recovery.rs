//! The EIR paper's recovery tests on known failures (App. F.2, F.3, Table 16), read from
//! `eir-recover` arms: each record answers one earlier EIR error again, with the earlier
//! answer kept beside the new one (`outputs.final_call.retrieval_answer`). The paper
//! reports, per procedure, the exact matches with a Wilson 95% interval of their share,
//! an exact McNemar test of the earlier answers against the new ones, the paired Answer
//! F1 gain with its bootstrap interval, for model-selected reads how many matches follow
//! a successful read, and which questions become exact under two procedures.

use super::digest::RecordDigest;
use super::eir_analyses::wilson;
use super::eir_runs::RECOVER;
use super::load::{Arm, ArmKey};
use crate::eval::stats::{mcnemar_exact, BootstrapCi, Resampling};
use serde::Serialize;
use std::collections::BTreeSet;

/// One recovery procedure on one arm's known failures (a row of Table 16).
#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    pub arm: ArmKey,
    /// `added`, `unchanged` or `selected` (the arm's `recover` setting).
    pub mode: String,
    /// The known failures answered again (the paper's NN).
    pub n: usize,
    /// New answers that are exact matches.
    pub exact: usize,
    /// `exact` as % of `n`, with a Wilson 95% interval.
    pub exact_pct: f64,
    pub exact_ci: (f64, f64),
    /// Exact two-sided McNemar test of the earlier answers' EM against the new ones'.
    pub mcnemar_p: f64,
    pub f1_before: f64,
    pub f1_after: f64,
    /// Paired Answer F1 gain (new minus earlier, points) with its bootstrap interval.
    pub f1_gain: Option<BootstrapCi>,
    /// `selected`: exact matches that follow a successful additional read (F.3's
    /// "173 of 174").
    pub exact_after_read: Option<usize>,
}

/// Questions two procedures on the same dataset and model made exact (F.2: "Thirteen
/// questions become exact under both procedures, 322 only with added evidence, and four
/// only without it").
#[derive(Debug, Clone, Serialize)]
pub struct RecoveryOverlap {
    pub dataset: String,
    pub model: String,
    pub first: String,
    pub second: String,
    /// Questions both arms answered again.
    pub n: usize,
    pub both: usize,
    pub only_first: usize,
    pub only_second: usize,
}

fn mode(arm: &Arm) -> String {
    arm.settings
        .get("recover")
        .cloned()
        .unwrap_or_else(|| "added".into())
}

/// (EM, F1) of the earlier answer a recovery record answered again (0 without one).
fn earlier(r: &RecordDigest) -> (f64, f64) {
    r.final_call
        .as_ref()
        .and_then(|f| f.retrieval_score)
        .unwrap_or((0.0, 0.0))
}

fn is_recovery(arm: &Arm) -> bool {
    arm.key.method == RECOVER && arm.records.iter().any(|r| r.final_call.is_some())
}

/// Table 16's row of one `eir-recover` arm.
pub fn recovery(arm: &Arm, boot: Resampling) -> Option<Recovery> {
    if !is_recovery(arm) {
        return None;
    }
    let records: Vec<&RecordDigest> = arm
        .records
        .iter()
        .filter(|r| r.final_call.is_some())
        .map(|r| &**r)
        .collect();
    let n = records.len();
    let before: Vec<(f64, f64)> = records.iter().map(|r| earlier(r)).collect();
    let exact = records.iter().filter(|r| r.em >= 1.0).count();
    let gained = records
        .iter()
        .zip(&before)
        .filter(|(r, b)| r.em > b.0)
        .count() as u64;
    let lost = records
        .iter()
        .zip(&before)
        .filter(|(r, b)| r.em < b.0)
        .count() as u64;
    let after_f1: Vec<f64> = records.iter().map(|r| 100.0 * r.f1).collect();
    let before_f1: Vec<f64> = before.iter().map(|b| 100.0 * b.1).collect();
    let mode = mode(arm);
    let exact_after_read = (mode == "selected").then(|| {
        records
            .iter()
            .filter(|r| r.em >= 1.0)
            .filter(|r| {
                r.final_call
                    .as_ref()
                    .and_then(|f| f.extra_reads.as_ref())
                    .is_some_and(|x| x.read)
            })
            .count()
    });
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    Some(Recovery {
        arm: arm.key.clone(),
        mode,
        n,
        exact,
        exact_pct: 100.0 * exact as f64 / n.max(1) as f64,
        exact_ci: wilson(exact, n),
        mcnemar_p: mcnemar_exact(gained, lost),
        f1_before: mean(&before_f1),
        f1_after: mean(&after_f1),
        f1_gain: boot.paired(&after_f1, &before_f1),
        exact_after_read,
    })
}

/// Every pair of recovery arms on the same dataset and model, on the questions both
/// answered again.
pub fn recovery_overlaps(arms: &[Arm]) -> Vec<RecoveryOverlap> {
    let recovering: Vec<&Arm> = arms.iter().filter(|a| is_recovery(a)).collect();
    let exact_ids = |a: &Arm| -> BTreeSet<String> {
        a.records
            .iter()
            .filter(|r| r.em >= 1.0)
            .map(|r| r.id.clone())
            .collect()
    };
    let mut out = Vec::new();
    for (i, a) in recovering.iter().enumerate() {
        for b in &recovering[i + 1..] {
            if a.key.dataset != b.key.dataset || a.key.model != b.key.model {
                continue;
            }
            let ids_b: BTreeSet<&str> = b.records.iter().map(|r| r.id.as_str()).collect();
            let shared: BTreeSet<String> = a
                .records
                .iter()
                .filter(|r| ids_b.contains(r.id.as_str()))
                .map(|r| r.id.clone())
                .collect();
            let (ea, eb) = (exact_ids(a), exact_ids(b));
            let in_a = |id: &String| ea.contains(id);
            let in_b = |id: &String| eb.contains(id);
            out.push(RecoveryOverlap {
                dataset: a.key.dataset.clone(),
                model: a.key.model.clone(),
                first: mode(a),
                second: mode(b),
                n: shared.len(),
                both: shared.iter().filter(|id| in_a(id) && in_b(id)).count(),
                only_first: shared.iter().filter(|id| in_a(id) && !in_b(id)).count(),
                only_second: shared.iter().filter(|id| !in_a(id) && in_b(id)).count(),
            });
        }
    }
    out
}
