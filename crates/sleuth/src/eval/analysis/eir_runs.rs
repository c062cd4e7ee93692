//! The EIR paper's analyses of what happened inside the recorded runs (App. F.4, H.4):
//! the final call against the trajectory's own answer, additional retrieval, calls after
//! the annotated support was read, and rejected actions with their denominators.

use super::digest::{ExtraReadsDigest, RecordDigest};
use super::load::{Arm, ArmKey};
use crate::eval::stats::{mcnemar_exact, BootstrapCi, Resampling};
use crate::methods::CallKind;
use serde::Serialize;
use std::collections::BTreeMap;

/// The method of the recovery tests' arms (App. F.2, F.3), reported apart.
pub(super) const RECOVER: &str = "eir-recover";

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// App. H.4 "Effect of EIR's final answer call": on runs whose trajectory submitted an
/// answer, that answer's scores against the final call's. Forced endings (no
/// submission) are counted and left out.
#[derive(Debug, Clone, Serialize)]
pub struct FinalVsRetrieval {
    pub arm: ArmKey,
    /// Runs with an accepted submission during retrieval.
    pub n: usize,
    pub forced_endings: usize,
    pub f1_retrieval: f64,
    pub f1_final: f64,
    /// Questions whose EM the final call gained, and lost.
    pub em_gained: usize,
    pub em_lost: usize,
}

pub fn final_vs_retrieval(arm: &Arm) -> Option<FinalVsRetrieval> {
    // A recovery record's earlier answer is a final call's, not a trajectory's (Table 16).
    if arm.key.method == RECOVER {
        return None;
    }
    let finals: Vec<(&RecordDigest, Option<(f64, f64)>)> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter_map(|r| Some((r, r.final_call.as_ref()?.retrieval_score)))
        .collect();
    if finals.is_empty() {
        return None;
    }
    let submitted: Vec<(&RecordDigest, (f64, f64))> = finals
        .iter()
        .filter_map(|(r, s)| s.map(|s| (*r, s)))
        .collect();
    Some(FinalVsRetrieval {
        arm: arm.key.clone(),
        n: submitted.len(),
        forced_endings: finals.len() - submitted.len(),
        f1_retrieval: 100.0 * mean(submitted.iter().map(|(_, s)| s.1)),
        f1_final: 100.0 * mean(submitted.iter().map(|(r, _)| r.f1)),
        em_gained: submitted.iter().filter(|(r, s)| r.em > s.0).count(),
        em_lost: submitted.iter().filter(|(r, s)| r.em < s.0).count(),
    })
}

/// App. F.4 / Table 17: the additional-retrieval control on every question. Its paired
/// statistics compare, within each record, the first final answer (`answer_before`)
/// with the answer after the extra reads, the paper's "paired gain" on the same
/// questions; no other arm is involved.
#[derive(Debug, Clone, Serialize)]
pub struct MoreReads {
    pub arm: ArmKey,
    pub n: usize,
    /// % of questions for which the model asked to read more.
    pub requested: f64,
    /// % of questions where at least one extra paragraph was read (the final call ran again).
    pub read: f64,
    pub em_before: f64,
    pub em_after: f64,
    pub f1_before: f64,
    pub f1_after: f64,
    /// Non-exact answers made exact, and exact answers lost.
    pub gained: usize,
    pub lost: usize,
    /// Paired Answer F1 gain (after minus before, points) with its bootstrap interval.
    pub f1_gain: Option<BootstrapCi>,
    /// Exact two-sided McNemar test of `gained` against `lost` (F.4: "p = 5.14e-14").
    pub em_p: f64,
    /// F.4's other before/after figures, means over the records that keep both sides
    /// (None without any: no support annotations, or records older than the field):
    /// Support F1 (0-100) of the cited evidence, ...
    pub support_f1: Option<BeforeAfter>,
    /// ... the share of annotated paragraphs read (%), ...
    pub recall: Option<BeforeAfter>,
    /// ... and model calls per question (before: up to the first final answer).
    pub calls: Option<BeforeAfter>,
}

/// A mean before and after the extra reads, over the same records.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BeforeAfter {
    pub n: usize,
    pub before: f64,
    pub after: f64,
}

impl BeforeAfter {
    /// The means of the pairs `of` yields, scaled by `scale`; None without pairs.
    fn of(pairs: impl Iterator<Item = (f64, f64)>, scale: f64) -> Option<BeforeAfter> {
        let pairs: Vec<(f64, f64)> = pairs.collect();
        (!pairs.is_empty()).then(|| BeforeAfter {
            n: pairs.len(),
            before: scale * mean(pairs.iter().map(|p| p.0)),
            after: scale * mean(pairs.iter().map(|p| p.1)),
        })
    }
}

pub fn more_reads(arm: &Arm, boot: Resampling) -> Option<MoreReads> {
    // `recover=selected` reads more after a known failure: Table 16's, not Table 17's.
    if arm.key.method == RECOVER {
        return None;
    }
    let runs: Vec<(&RecordDigest, &ExtraReadsDigest)> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter_map(|r| Some((r, r.final_call.as_ref()?.extra_reads.as_ref()?)))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let n = runs.len() as f64;
    let before: Vec<(f64, f64)> = runs.iter().map(|(_, x)| x.before).collect();
    let pct = |k: usize| 100.0 * k as f64 / n;
    let gained = runs
        .iter()
        .zip(&before)
        .filter(|((r, _), b)| r.em > b.0)
        .count();
    let lost = runs
        .iter()
        .zip(&before)
        .filter(|((r, _), b)| r.em < b.0)
        .count();
    let after_f1: Vec<f64> = runs.iter().map(|(r, _)| 100.0 * r.f1).collect();
    let before_f1: Vec<f64> = before.iter().map(|s| 100.0 * s.1).collect();
    Some(MoreReads {
        arm: arm.key.clone(),
        n: runs.len(),
        requested: pct(runs.iter().filter(|(_, x)| x.requested).count()),
        read: pct(runs.iter().filter(|(_, x)| x.read).count()),
        em_before: 100.0 * mean(before.iter().map(|s| s.0)),
        em_after: 100.0 * mean(runs.iter().map(|(r, _)| r.em)),
        f1_before: mean(before_f1.iter().copied()),
        f1_after: mean(after_f1.iter().copied()),
        gained,
        lost,
        f1_gain: boot.paired(&after_f1, &before_f1),
        em_p: mcnemar_exact(gained as u64, lost as u64),
        support_f1: BeforeAfter::of(
            runs.iter()
                .filter_map(|(r, x)| Some((x.support_before?.support_f1?, r.support_f1?))),
            100.0,
        ),
        recall: BeforeAfter::of(
            runs.iter()
                .filter_map(|(r, x)| Some((x.support_before?.gold_recall?, r.gold_recall?))),
            100.0,
        ),
        calls: BeforeAfter::of(
            runs.iter().filter_map(|(r, x)| {
                Some((f64::from(x.support_before?.calls), f64::from(r.calls)))
            }),
            1.0,
        ),
    })
}

/// App. H.4 / Table 21: calls made after every annotated paragraph was first read (the
/// read that completes it excluded). Agentic SSR is not covered, as in the paper.
#[derive(Debug, Clone, Serialize)]
pub struct AfterSupport {
    pub arm: ArmKey,
    /// Runs in which a trajectory (for Reflexion: at least one trial) read every
    /// annotated paragraph.
    pub questions: usize,
    /// Totals over those runs.
    pub action_calls: u64,
    pub reflection_calls: u64,
    pub final_calls: u64,
}

pub fn after_support(arm: &Arm) -> Option<AfterSupport> {
    if arm.key.method == "ssr" || !arm.records.iter().any(|r| r.support_f1.is_some()) {
        return None;
    }
    let mut out = AfterSupport {
        arm: arm.key.clone(),
        questions: 0,
        action_calls: 0,
        reflection_calls: 0,
        final_calls: 0,
    };
    for r in &arm.records {
        let Some(k) = r.completing_turn else {
            continue;
        };
        out.questions += 1;
        let later = &r.trace[k + 1..];
        out.action_calls += later.len() as u64;
        // A reflection runs between two trials: one per trial started after turn k.
        let restarts = (k + 1..r.trace.len())
            .filter(|&i| r.starts_trial(i))
            .count();
        out.reflection_calls += restarts as u64;
        out.final_calls += u64::from(r.calls_of(CallKind::Final));
        // Extra-reads selection calls count as action calls after the trajectory.
        if r.final_call
            .as_ref()
            .is_some_and(|f| f.extra_reads.is_some())
        {
            out.action_calls += 1;
        }
    }
    (out.questions > 0).then_some(out)
}

/// App. H.4 / Table 22: refused actions over recorded actions (every trial's action
/// turns; reflections and final calls are not actions). The denominators exclude
/// unfinished requests: a turn whose call failed before it finished (`Turn::unfinished`,
/// the partial turn an error record keeps) is no action.
#[derive(Debug, Clone, Serialize)]
pub struct RejectedActions {
    pub arm: ArmKey,
    pub actions: u64,
    pub rejected: u64,
    pub rate: f64,
    pub by_cause: BTreeMap<String, u64>,
    /// Trajectories that ended without a submission.
    pub forced_endings: usize,
}

pub fn rejected_actions(arm: &Arm) -> Option<RejectedActions> {
    if !arm.records.iter().any(|r| r.evidence.is_some()) {
        return None;
    }
    let mut out = RejectedActions {
        arm: arm.key.clone(),
        actions: 0,
        rejected: 0,
        rate: 0.0,
        by_cause: BTreeMap::new(),
        forced_endings: 0,
    };
    for r in &arm.records {
        out.actions += r.trace.iter().filter(|t| !t.unfinished).count() as u64;
        for t in r.trace.iter() {
            if let Some(cause) = t.rejection {
                out.rejected += 1;
                *out.by_cause.entry(cause.name().to_string()).or_default() += 1;
            }
        }
        out.forced_endings += usize::from(r.forced_end());
    }
    if out.actions > 0 {
        out.rate = 100.0 * out.rejected as f64 / out.actions as f64;
    }
    Some(out)
}
