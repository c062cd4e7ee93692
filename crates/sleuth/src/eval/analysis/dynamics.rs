//! How episodes unfold: where errors come from, whether timed-out agents had already
//! seen the answer, accuracy if every agent were stopped at turn t, and how the working
//! memory grows over turns.

use super::digest::RecordDigest;
use super::load::{Arm, ArmKey};
use super::outcome::{ErrorClasses, Outcome, ReasoningEvidence};
use serde::Serialize;
use std::collections::BTreeMap;

/// Share of each error class, as a percentage of all the arm's questions.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorDecomposition {
    pub arm: ArmKey,
    pub n: usize,
    pub counts: BTreeMap<Outcome, usize>,
    pub percent: BTreeMap<Outcome, f64>,
    /// Timed-out episodes whose observations contain a gold answer.
    pub timed_out: usize,
    pub gold_in_history: usize,
    /// `gold_in_history / timed_out` in percent; None without timeouts.
    pub gold_in_history_rate: Option<f64>,
}

/// Every record of `arm` in its class (SLEUTH App. J; `evidence` is what a reasoning
/// error needs retrieved, `classes` which account of the classes is read).
pub fn error_decomposition(
    arm: &Arm,
    evidence: ReasoningEvidence,
    classes: ErrorClasses,
) -> ErrorDecomposition {
    let n = arm.records.len();
    let mut counts: BTreeMap<Outcome, usize> = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
    for r in &arm.records {
        *counts
            .entry(r.classify_with(evidence, classes))
            .or_default() += 1;
    }
    let percent = counts
        .iter()
        .map(|(o, c)| (*o, 100.0 * *c as f64 / n.max(1) as f64))
        .collect();
    let timed_out: Vec<&RecordDigest> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter(|r| r.timed_out)
        .collect();
    let with_gold = timed_out.iter().filter(|r| r.gold_in_history).count();
    ErrorDecomposition {
        arm: arm.key.clone(),
        n,
        counts,
        percent,
        timed_out: timed_out.len(),
        gold_in_history: with_gold,
        gold_in_history_rate: (!timed_out.is_empty())
            .then(|| 100.0 * with_gold as f64 / timed_out.len() as f64),
    }
}

/// EM (percent) counting only answers given at or before turn t, for t = 1..=T.
#[derive(Debug, Clone, Serialize)]
pub struct AccuracyCurve {
    pub arm: ArmKey,
    /// `accuracy[t - 1]` is the accuracy at turn t.
    pub accuracy: Vec<f64>,
}

/// Accuracy at turn t for t = 1..=`max_turn`; unanswered episodes count as wrong.
pub fn accuracy_at_turn(arm: &Arm, max_turn: u32) -> AccuracyCurve {
    let n = arm.records.len().max(1) as f64;
    let answered: Vec<u32> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter(|r| r.correct())
        .filter_map(|r| r.answer_turn)
        .collect();
    let accuracy = (1..=max_turn)
        .map(|t| 100.0 * answered.iter().filter(|&&a| a <= t).count() as f64 / n)
        .collect();
    AccuracyCurve {
        arm: arm.key.clone(),
        accuracy,
    }
}

/// Mean working-memory sizes per turn over a fixed cohort of long episodes, so the
/// curve is not biased by easy episodes dropping out early (survivorship).
#[derive(Debug, Clone, Serialize)]
pub struct MemoryDynamics {
    pub arm: ArmKey,
    /// Episodes in the cohort last at least this many turns.
    pub min_turns: u32,
    pub cohort: usize,
    pub turns: Vec<MemoryPoint>,
    /// SLEUTH App. E, Figure 5(b): % of all the arm's episodes (not only the cohort)
    /// that ended by calling finish at or before turn t, t = 1..=the arm's longest
    /// episode.
    pub finished_by_turn: Vec<f64>,
    /// Episodes of the arm (the denominator of `finished_by_turn`).
    pub episodes: usize,
    /// The turn the arm's nudge fires at (⌈α·T⌉), when it has one.
    pub nudge_turn: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryPoint {
    pub turn: u32,
    /// Cohort episodes with a parsed memory at this turn.
    pub n: usize,
    pub facts: f64,
    pub hypotheses: f64,
    pub questions: f64,
    /// 95% intervals of the three means (normal approximation: mean ± 1.96 s/√n;
    /// the mean itself when n < 2). SLEUTH App. E, Figure 5(a).
    pub facts_ci: (f64, f64),
    pub hypotheses_ci: (f64, f64),
    pub questions_ci: (f64, f64),
}

/// The mean of `values` and its 95% normal-approximation interval.
fn mean_ci(values: &[f64]) -> (f64, (f64, f64)) {
    let n = values.len();
    if n == 0 {
        return (0.0, (0.0, 0.0));
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, (mean, mean));
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = 1.96 * (var / n as f64).sqrt();
    (mean, (mean - half, mean + half))
}

/// Memory dynamics for the episodes of `arm` lasting at least `min_turns` turns, using
/// each turn's merged state (or, without one, the memory written that turn). None when
/// the arm keeps no structured memory or no episode is long enough.
pub fn memory_dynamics(arm: &Arm, min_turns: u32) -> Option<MemoryDynamics> {
    let min_turns = min_turns.max(1);
    let cohort: Vec<&RecordDigest> = arm
        .records
        .iter()
        .map(|r| &**r)
        .filter(|r| r.trace.len() as u32 >= min_turns)
        .filter(|r| r.keeps_memory())
        .collect();
    if cohort.is_empty() {
        return None;
    }
    let turns = (1..=min_turns)
        .map(|t| {
            let sizes: Vec<(usize, usize, usize)> = cohort
                .iter()
                .filter_map(|r| {
                    let [facts, hypotheses, questions] = r.trace[t as usize - 1].memory?;
                    Some((facts as usize, hypotheses as usize, questions as usize))
                })
                .collect();
            let column = |f: fn(&(usize, usize, usize)) -> usize| -> Vec<f64> {
                sizes.iter().map(|s| f(s) as f64).collect()
            };
            let (facts, facts_ci) = mean_ci(&column(|s| s.0));
            let (hypotheses, hypotheses_ci) = mean_ci(&column(|s| s.1));
            let (questions, questions_ci) = mean_ci(&column(|s| s.2));
            MemoryPoint {
                turn: t,
                n: sizes.len(),
                facts,
                hypotheses,
                questions,
                facts_ci,
                hypotheses_ci,
                questions_ci,
            }
        })
        .collect();
    let longest = arm.records.iter().map(|r| r.turns).max().unwrap_or(0);
    let episodes = arm.records.len();
    let finished_by_turn = (1..=longest)
        .map(|t| {
            let done = arm
                .records
                .iter()
                .filter(|r| r.finished && r.turns <= t)
                .count();
            100.0 * done as f64 / episodes.max(1) as f64
        })
        .collect();
    Some(MemoryDynamics {
        arm: arm.key.clone(),
        min_turns,
        cohort: cohort.len(),
        turns,
        finished_by_turn,
        episodes,
        nudge_turn: None,
    })
}
