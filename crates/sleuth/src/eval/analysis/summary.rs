//! Per-arm accuracy and cost: the numbers of the main tables, overall and split by hop
//! count or question kind.

use super::collect::{fold, Problems, ScoreTally};
use super::digest::RecordDigest;
use super::load::{Arm, ArmKey};
use crate::methods::eir::RejectCause;
use crate::methods::StopReason;
use serde::Serialize;
use std::collections::BTreeMap;

/// Accuracy and cost of one arm (or one slice of it). Rates are percentages (0-100);
/// usage figures are means per question.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub arm: ArmKey,
    pub n: usize,
    pub em: f64,
    pub f1: f64,
    /// Mean fraction of gold paragraphs retrieved, over records that list them.
    pub support_recall: Option<f64>,
    /// EM among finished episodes; None when none finished.
    pub cond_acc: Option<f64>,
    pub finished: usize,
    pub timeout_rate: f64,
    /// Episodes that ended without an answer before the budget ran out (neither
    /// finished nor timed out: context overflow, an unparseable response, an error):
    /// the error decomposition's `unfinished` class, so finished + timeouts + these
    /// are the arm's questions.
    pub unfinished: usize,
    /// What went wrong (errors, context overflows, unparseable responses, calls and
    /// actions that went wrong, forced endings), as eval's closing table counts it;
    /// each count its own field in the JSON.
    #[serde(flatten)]
    pub problems: Problems,
    pub mean_turns: f64,
    pub calls: f64,
    /// Tool calls that ran (searches, lookups, reads; SLEUTH Table 7's "tools").
    pub tool_calls: f64,
    pub calls_by_kind: BTreeMap<String, f64>,
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub cached_input_tokens: f64,
    pub cache_write_tokens: f64,
    /// Share of input tokens read from the provider's prompt cache, in % (over all the
    /// arm's input tokens); None when the records count no input tokens.
    pub cached_share: Option<f64>,
    pub cost_usd: f64,
    /// Mean cost at the fixed list prices (EIR App. D.5, Tables 9 and 19: tokens
    /// priced, no cache savings).
    pub list_cost_usd: f64,
    pub retries: f64,
    /// Adherence to the memory notation, in %: the share of all the arm's turns that
    /// report it which were written in the notation, pooled over turns (SLEUTH §5.5 and
    /// Table 4 give it "of turns": ~15% and ~99% of turns on GLM-5).
    pub adherence: Option<f64>,
    /// The other reading: each episode's share of adherent turns, averaged over the
    /// episodes (long episodes weigh no more than short ones).
    pub adherence_per_episode: Option<f64>,
    pub reminders: f64,
    /// Fraction of episodes in which the commitment nudge fired.
    pub nudge_rate: f64,
    /// The EIR setting's evidence metrics, when the records carry them.
    pub evidence: Option<EvidenceSummary>,
}

/// The share of adherent turns among every turn of `records` that reports adherence.
fn pooled_adherence(records: &[&RecordDigest]) -> Option<f64> {
    let turns: Vec<bool> = records
        .iter()
        .flat_map(|r| r.trace.iter().filter_map(|t| t.adherent))
        .collect();
    (!turns.is_empty()).then(|| turns.iter().filter(|a| **a).count() as f64 / turns.len() as f64)
}

/// Evidence metrics of the EIR setting, from the evidence its methods record:
/// Support F1 of the cited evidence, gold-paragraph recall, paragraphs read, and the
/// proposed actions the framework rejected, by cause.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceSummary {
    /// Records that report evidence metrics.
    pub n: usize,
    /// Mean Support F1 of the cited evidence against the annotations, in %.
    pub support_f1: f64,
    /// Mean share of gold paragraphs read, in %.
    pub gold_recall: f64,
    pub paragraphs_read: f64,
    /// Mean rejected actions per question, all causes.
    pub rejected: f64,
    /// Mean rejected actions per question, by cause.
    pub rejected_by_cause: BTreeMap<String, f64>,
    /// Episodes that ended on an unparseable response, in %.
    pub parse_failures: f64,
}

impl EvidenceSummary {
    /// The evidence metrics of `records`, whose Support F1 `scores` has folded.
    fn of(records: &[&RecordDigest], scores: &ScoreTally) -> Option<EvidenceSummary> {
        let support_f1 = scores.support_f1()?;
        let with: Vec<(&RecordDigest, &[(RejectCause, u32)])> = records
            .iter()
            .filter_map(|r| Some((*r, &**r.evidence.as_ref()?)))
            .collect();
        let n = with.len() as f64;
        let mean =
            |f: &dyn Fn(&RecordDigest) -> f64| with.iter().map(|(r, _)| f(r)).sum::<f64>() / n;
        let mut rejected_by_cause: BTreeMap<String, f64> = BTreeMap::new();
        for (_, e) in &with {
            for (cause, count) in e.iter() {
                *rejected_by_cause
                    .entry(cause.name().to_string())
                    .or_default() += f64::from(*count) / n;
            }
        }
        Some(EvidenceSummary {
            n: scores.with_evidence(),
            support_f1,
            gold_recall: 100.0 * mean(&|r| r.gold_recall.unwrap_or(0.0)),
            paragraphs_read: mean(&|r| r.paragraphs_read as f64),
            rejected: mean(&|r| f64::from(r.rejected_total())),
            rejected_by_cause,
            parse_failures: 100.0
                * mean(&|r| f64::from(u8::from(r.stop == StopReason::ParseFailure))),
        })
    }
}

impl Summary {
    /// Summarizes `records` under `arm`'s key. `records` may be empty.
    pub fn of(arm: &ArmKey, records: &[&RecordDigest]) -> Summary {
        let scores = fold::<ScoreTally, _>(records.iter().copied());
        let n = records.len();
        let mean = |f: &dyn Fn(&RecordDigest) -> f64| -> f64 {
            if n == 0 {
                0.0
            } else {
                records.iter().map(|r| f(r)).sum::<f64>() / n as f64
            }
        };
        let finished: Vec<&&RecordDigest> = records.iter().filter(|r| r.finished).collect();
        let cond_acc = (!finished.is_empty()).then(|| {
            100.0 * finished.iter().filter(|r| r.correct()).count() as f64 / finished.len() as f64
        });
        let mut calls_by_kind: BTreeMap<String, f64> = BTreeMap::new();
        for r in records {
            for (kind, c) in r.calls_by_kind.iter() {
                *calls_by_kind.entry(kind.name().to_string()).or_default() += *c as f64;
            }
        }
        for v in calls_by_kind.values_mut() {
            *v /= n.max(1) as f64;
        }
        Summary {
            arm: arm.clone(),
            n,
            em: scores.em(),
            f1: scores.f1(),
            support_recall: mean_of(records.iter().filter_map(|r| r.support_recall))
                .map(|v| 100.0 * v),
            cond_acc,
            finished: finished.len(),
            timeout_rate: 100.0 * mean(&|r| f64::from(u8::from(r.timed_out))),
            unfinished: records
                .iter()
                .filter(|r| !r.finished && !r.timed_out)
                .count(),
            problems: scores.problems,
            mean_turns: mean(&|r| f64::from(r.turns)),
            calls: mean(&|r| f64::from(r.calls)),
            tool_calls: mean(&|r| f64::from(r.tool_calls)),
            calls_by_kind,
            input_tokens: mean(&|r| r.input_tokens as f64),
            output_tokens: mean(&|r| r.output_tokens as f64),
            cached_input_tokens: mean(&|r| r.cached_input_tokens as f64),
            cache_write_tokens: mean(&|r| r.cache_write_tokens as f64),
            cached_share: cached_share(records),
            cost_usd: mean(&|r| r.cost_usd),
            list_cost_usd: mean(&|r| r.list_cost()),
            retries: mean(&|r| f64::from(r.retries)),
            adherence: pooled_adherence(records).map(|v| 100.0 * v),
            adherence_per_episode: mean_of(records.iter().filter_map(|r| r.adherence))
                .map(|v| 100.0 * v),
            reminders: mean(&|r| f64::from(r.reminders)),
            nudge_rate: 100.0 * mean(&|r| f64::from(u8::from(r.nudge_turn.is_some()))),
            evidence: EvidenceSummary::of(records, &scores),
        }
    }

    /// Summarizes a whole arm.
    pub fn of_arm(arm: &Arm) -> Summary {
        let records: Vec<&RecordDigest> = arm.records.iter().map(|r| &**r).collect();
        Summary::of(&arm.key, &records)
    }
}

/// Input tokens read from a prompt cache as a % of all input tokens.
fn cached_share(records: &[&RecordDigest]) -> Option<f64> {
    let sum = |f: fn(&RecordDigest) -> u64| records.iter().map(|r| f(r)).sum::<u64>();
    let input = sum(|r| r.input_tokens);
    (input > 0).then(|| 100.0 * sum(|r| r.cached_input_tokens) as f64 / input as f64)
}

/// The mean of an iterator, None when it is empty.
pub(super) fn mean_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    (count > 0).then(|| sum / count as f64)
}

/// What a breakdown splits an arm by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    Hops,
    Kind,
}

/// One arm's summary restricted to one hop count or question kind.
#[derive(Debug, Clone, Serialize)]
pub struct Slice {
    pub split: Split,
    /// `2`, `3`, `bridge`, ..., or `-` when the record does not say.
    pub value: String,
    pub summary: Summary,
}

/// Splits every arm by `split`; slices are ordered by arm, then value (hops
/// numerically). Returns nothing when no record carries the split's field.
pub fn breakdown(arms: &[Arm], split: Split) -> Vec<Slice> {
    let value_of = |r: &RecordDigest| -> Option<String> {
        match split {
            Split::Hops => r.hops.map(|h| h.to_string()),
            Split::Kind => r.kind.as_deref().map(str::to_string),
        }
    };
    if !arms
        .iter()
        .flat_map(|a| &a.records)
        .any(|r| value_of(r).is_some())
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    for arm in arms {
        let mut groups: BTreeMap<(usize, String), Vec<&RecordDigest>> = BTreeMap::new();
        for r in &arm.records {
            let v = value_of(r).unwrap_or_else(|| "-".to_string());
            // Sort hop counts by width first so 10 follows 9.
            let width = if split == Split::Hops { v.len() } else { 0 };
            groups.entry((width, v)).or_default().push(r);
        }
        for ((_, value), records) in groups {
            out.push(Slice {
                split,
                value,
                summary: Summary::of(&arm.key, &records),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::RunRecord;

    fn digest(r: &RunRecord) -> RecordDigest {
        RecordDigest::of(r, 0)
    }

    fn record(input: u64, cached: u64, write: u64, cost: f64) -> RunRecord {
        serde_json::from_value(serde_json::json!({
            "id": "q", "dataset": "musique", "hops": null, "method": "sleuth",
            "model": "anthropic:claude-haiku-4-5", "answer": "a", "gold": ["a"], "em": 1.0,
            "f1": 1.0, "finished": true, "timed_out": false, "stop": "finished", "turns": 1,
            "calls": 1, "input_tokens": input, "output_tokens": 1,
            "cached_input_tokens": cached, "cache_write_tokens": write, "cost_usd": cost,
            "nudge_turn": null, "reminders": 0, "retrieved": [], "error": null, "trace": []
        }))
        .unwrap()
    }

    #[test]
    fn cached_share_is_over_all_input_tokens_and_cost_is_per_question() {
        let arm = ArmKey {
            dataset: "musique".into(),
            method: "sleuth".into(),
            model: "m".into(),
            label: String::new(),
        };
        let (a, b) = (
            digest(&record(100, 90, 10, 0.01)),
            digest(&record(900, 0, 0, 0.03)),
        );
        let s = Summary::of(&arm, &[&a, &b]);
        // 90 of 1000 input tokens (not the mean of 90% and 0%).
        assert_eq!(s.cached_share, Some(9.0));
        assert_eq!((s.cached_input_tokens, s.cache_write_tokens), (45.0, 5.0));
        assert!((s.cost_usd - 0.02).abs() < 1e-12);
        // Records without input tokens have no share; old records read as uncached.
        let none = digest(&record(0, 0, 0, 0.0));
        assert_eq!(Summary::of(&arm, &[&none]).cached_share, None);
        let mut old = serde_json::to_value(record(10, 0, 0, 0.0)).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("cached_input_tokens");
        fields.remove("cache_write_tokens");
        let old: RunRecord = serde_json::from_value(old).unwrap();
        assert_eq!(Summary::of(&arm, &[&digest(&old)]).cached_share, Some(0.0));
    }
}
