//! A retry wrapper's trials inside one record (both Reflexions, EIR App. D.1): where
//! each trial starts, the first trial as a record of its own, and the turn whose read
//! completed the annotated support within its trial. Record-level, so the digests
//! ([`super::digest`]) are computed from them when records are read.

use crate::eval::RunRecord;
use crate::methods::{CallKind, Turn};
use std::collections::BTreeMap;

/// The method-name suffix of a retry wrapper's first-attempt arm.
pub const FIRST_TRIAL: &str = "/first-attempt";

/// A retry wrapper's record as its first attempt alone: that attempt's answer, scores,
/// turns and calls (all action calls; no reflection ran before it), its own tokens and
/// cost, retrieval and turns ([`super::with_first_trials`] uses its digest when records are read).
pub(super) fn first_trial_record(r: &RunRecord) -> RunRecord {
    let mut t = r.clone();
    let Some(f) = &r.first_attempt else {
        return t;
    };
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
        t.list_cost_usd,
    ) = (
        f.input_tokens,
        f.output_tokens,
        f.cached_input_tokens,
        f.cache_write_tokens,
        f.cost_usd,
        f.list_cost_usd,
    );
    t.first_attempt = None;
    let first = r.outputs.attempts.first();
    t.retrieved = first.map(|a| a.retrieved.clone()).unwrap_or_default();
    t.trace = first_trial_turns(r);
    t
}

/// Whether `trace[i]` opens a new trial: its recorded trial differs from the previous
/// turn's (EIR App. D.1, H.4: every trial of a retry wrapper is told apart in the
/// record); records written before turns carried their trial fall back to turn numbers
/// starting again.
pub fn starts_trial(trace: &[Turn], i: usize) -> bool {
    if i == 0 || i >= trace.len() {
        return false;
    }
    opens_trial(
        (trace[i - 1].number, trace[i - 1].trial),
        (trace[i].number, trace[i].trial),
    )
}

/// Whether a turn (number, trial) opens a new trial after the turn before it.
pub(super) fn opens_trial(before: (u32, Option<u32>), turn: (u32, Option<u32>)) -> bool {
    match (before.1, turn.1) {
        (Some(a), Some(b)) => a != b,
        _ => turn.0 <= before.0,
    }
}

/// The turns of the first trial.
fn first_trial_turns(r: &RunRecord) -> Vec<Turn> {
    trials(r)
        .into_iter()
        .next()
        .map(<[_]>::to_vec)
        .unwrap_or_default()
}

/// A record's trace split into trials ([`starts_trial`]).
fn trials(r: &RunRecord) -> Vec<&[Turn]> {
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

/// Whether an observation showed the paragraph titled `title` (pool: by title; corpus:
/// the `[id N] Title` header of a read).
fn shows(turn: &Turn, title: &str) -> bool {
    turn.observations.iter().any(|o| {
        o.shown.iter().any(|s| s == title)
            || o.text
                .lines()
                .next()
                .is_some_and(|l| l.starts_with("[id ") && l.ends_with(&format!("] {title}")))
    })
}

/// The index in `trace` of the turn whose read completed the annotated support within
/// its trial, if any trial completed it.
pub(super) fn completing_turn(r: &RunRecord) -> Option<usize> {
    if r.gold_titles.is_empty() {
        return None;
    }
    let mut seen = vec![false; r.gold_titles.len()];
    for (i, t) in r.trace.iter().enumerate() {
        if starts_trial(&r.trace, i) {
            seen.iter_mut().for_each(|s| *s = false);
        }
        for (g, s) in r.gold_titles.iter().zip(seen.iter_mut()) {
            *s |= shows(t, g);
        }
        if seen.iter().all(|s| *s) {
            return Some(i);
        }
    }
    None
}
