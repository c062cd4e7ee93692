//! The one fold of an arm's scores: EM, F1, Support F1 and the eight problem counts,
//! for eval's closing table (CLI and Python), the report's summary and breakdown
//! tables, and so Python's DataFrames of both.
//!
//! Why one fold: eval's closing line and the report's summary were folded by two copies
//! of the same sums and counters, and the copies drifted (eval's problems once left out
//! context overflows). Here a record, whether a whole [`RunRecord`] as eval streams its
//! file or the [`RecordDigest`] the report loaded, says what it adds through one trait
//! ([`Scored`]), and one type ([`ScoreTally`]) holds the running sums and counts.
//! [`Problems`] counts and words what went wrong, in the one order both print.
//!
//! The shape is tantivy's `Collector`/`Fruit`: a [`Collector`] takes records one at a
//! time as they stream past and holds only running totals, never a record (eval reads a
//! run directory of any size this way: issue 32); `harvest` gives its part's [`Fruit`],
//! and the fruits of parts holding different questions merge into the whole's
//! ([`merge_fruits`]), per arm too (a map of fruits is a fruit). [`ScoreTally`] counts
//! every record it is given (the report's arms, which [`super::load`] has kept the
//! first record of each question of); [`FirstPerQuestion`] passes on only the first
//! record of each question (eval's raw records files), holding one 8-byte hash per id;
//! two ids with the same 64-bit hash would count once (for a million questions the
//! chance is about 3e-8). Merged sums may differ from one long fold in the last bit of
//! F1 (floating-point addition in another order), which changes no printed digit; EM
//! sums whole numbers, exactly in any order.

use super::digest::{forced_end, RecordDigest};
use crate::eval::RunRecord;
use crate::methods::StopReason;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};

/// A fold over records as they stream past: `collect` takes one record at a time,
/// `harvest` gives what the records seen add up to.
pub trait Collector {
    /// What the fold of one part of the records gives.
    type Fruit: Fruit;

    /// Adds one record.
    fn collect<R: Scored + ?Sized>(&mut self, record: &R);

    /// The fold of the records collected so far.
    fn harvest(self) -> Self::Fruit;
}

/// What a [`Collector`] gives for one part of the records; parts of different questions
/// merge into the fruit of the whole (the empty fruit is [`Default`]).
pub trait Fruit: Default {
    /// Adds the fruit of another part.
    fn merge(&mut self, other: Self);
}

/// The fruit of the whole, from the fruits of its parts.
pub fn merge_fruits<F: Fruit>(fruits: impl IntoIterator<Item = F>) -> F {
    fruits.into_iter().fold(F::default(), |mut whole, part| {
        whole.merge(part);
        whole
    })
}

/// Per-key fruits (an arm's each) merge key by key.
impl<K: Ord, F: Fruit> Fruit for BTreeMap<K, F> {
    fn merge(&mut self, other: Self) {
        for (key, part) in other {
            self.entry(key).or_default().merge(part);
        }
    }
}

/// A record as the score fold reads it.
pub trait Scored {
    /// The question's id (the first record of each counts).
    fn question_id(&self) -> &str;

    /// What the record adds to its arm's scores.
    fn scores(&self) -> RecordScores;
}

/// What one record adds to its arm's scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordScores {
    pub em: f64,
    pub f1: f64,
    /// Support F1 of a record that carries evidence (0 when its evidence has no score);
    /// None without evidence, so the record counts in no Support F1 mean.
    pub support_f1: Option<f64>,
    pub problems: Problems,
}

impl Scored for RunRecord {
    fn question_id(&self) -> &str {
        &self.id
    }

    fn scores(&self) -> RecordScores {
        let evidence = self.outputs.evidence.as_ref();
        let final_call = self.outputs.final_call.as_ref().map(|f| f.forced_end);
        RecordScores {
            em: self.em,
            f1: self.f1,
            support_f1: evidence.map(|_| self.support_f1.unwrap_or(0.0)),
            problems: Problems::of_episode(
                self.error.is_some(),
                self.stop,
                forced_end(final_call, evidence.is_some(), self.stop),
            )
            .with_calls(
                self.constraints_dropped,
                self.truncated_calls,
                self.refusals,
                evidence.map_or(0, |e| e.rejected_total()),
            ),
        }
    }
}

impl Scored for RecordDigest {
    fn question_id(&self) -> &str {
        &self.id
    }

    fn scores(&self) -> RecordScores {
        RecordScores {
            em: self.em,
            f1: self.f1,
            support_f1: self
                .evidence
                .as_ref()
                .map(|_| self.support_f1.unwrap_or(0.0)),
            problems: Problems::of_episode(self.has_error, self.stop, self.forced_end())
                .with_calls(
                    self.constraints_dropped,
                    self.truncated_calls,
                    self.refusals,
                    self.rejected_total(),
                ),
        }
    }
}

/// What went wrong, counted: episodes that ended in an error, on a context overflow or
/// on an unparseable response, calls sent without their output constraint, cut by the
/// output-token limit or refused, actions the EIR framework rejected, and EIR
/// trajectories that ended without a submission. The report's JSON shows each count
/// (all but `errors` only when not zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Problems {
    /// Records that ended with an error message.
    pub errors: u64,
    /// Episodes whose conversation outgrew the model's context.
    #[serde(skip_serializing_if = "is_zero")]
    pub context_overflows: u64,
    /// Episodes that ended on a response the method could not parse.
    #[serde(skip_serializing_if = "is_zero")]
    pub parse_failures: u64,
    /// Calls sent without their output constraint (the server refused it).
    #[serde(skip_serializing_if = "is_zero")]
    pub constraints_dropped: u64,
    /// Calls cut by the output-token limit (truncated replies).
    #[serde(skip_serializing_if = "is_zero")]
    pub truncated_calls: u64,
    /// Calls the model refused.
    #[serde(skip_serializing_if = "is_zero")]
    pub refusals: u64,
    /// Actions the EIR setting's framework rejected (every cause).
    #[serde(skip_serializing_if = "is_zero")]
    pub rejected_actions: u64,
    /// EIR trajectories that ended without a submission (budget spent, overflow), so
    /// the final call answered from whatever evidence there was.
    #[serde(skip_serializing_if = "is_zero")]
    pub forced_endings: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Problems {
    /// How one episode ended: with an error, on `stop`, without a submission.
    fn of_episode(error: bool, stop: StopReason, forced_end: bool) -> Problems {
        Problems {
            errors: u64::from(error),
            context_overflows: u64::from(stop == StopReason::ContextOverflow),
            parse_failures: u64::from(stop == StopReason::ParseFailure),
            forced_endings: u64::from(forced_end),
            ..Problems::default()
        }
    }

    /// With one episode's counts of calls that went wrong and actions rejected.
    fn with_calls(self, unconstrained: u64, truncated: u32, refused: u32, rejected: u32) -> Self {
        Problems {
            constraints_dropped: unconstrained,
            truncated_calls: u64::from(truncated),
            refusals: u64::from(refused),
            rejected_actions: u64::from(rejected),
            ..self
        }
    }

    /// Each count with what it counts, in the order problems are listed.
    fn counts(&self) -> [(u64, &'static str); 8] {
        [
            (self.errors, "with errors"),
            (self.context_overflows, "context overflows"),
            (self.parse_failures, "unparseable"),
            (self.constraints_dropped, "calls unconstrained"),
            (self.truncated_calls, "calls truncated"),
            (self.refusals, "calls refused"),
            (self.rejected_actions, "actions rejected"),
            (self.forced_endings, "ended without a submission"),
        ]
    }

    /// The counts that are not zero, each as `N what`: the one wording of eval's
    /// closing table and the report's problems column. Empty when nothing went wrong: a
    /// run whose every answer failed to parse, or whose every action was rejected, must
    /// not read as a clean run that scored zero.
    pub fn lines(&self) -> Vec<String> {
        self.counts()
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect()
    }

    /// Adds another count, each problem to its own.
    fn add(&mut self, other: &Problems) {
        self.errors += other.errors;
        self.context_overflows += other.context_overflows;
        self.parse_failures += other.parse_failures;
        self.constraints_dropped += other.constraints_dropped;
        self.truncated_calls += other.truncated_calls;
        self.refusals += other.refusals;
        self.rejected_actions += other.rejected_actions;
        self.forced_endings += other.forced_endings;
    }
}

/// An arm's (or a slice's) running scores: questions, the sums of EM, F1 and Support
/// F1, and the problems. Rates come out as percentages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoreTally {
    /// Questions counted.
    pub n: usize,
    em_sum: f64,
    f1_sum: f64,
    /// Records that carry evidence, and the sum of their Support F1.
    with_evidence: usize,
    support_f1_sum: f64,
    pub problems: Problems,
}

impl ScoreTally {
    /// Adds one question's record.
    pub fn add(&mut self, record: &RecordScores) {
        self.n += 1;
        self.em_sum += record.em;
        self.f1_sum += record.f1;
        if let Some(support_f1) = record.support_f1 {
            self.with_evidence += 1;
            self.support_f1_sum += support_f1;
        }
        self.problems.add(&record.problems);
    }

    /// Mean EM, in % (0 without questions).
    pub fn em(&self) -> f64 {
        percent(self.em_sum, self.n)
    }

    /// Mean F1, in % (0 without questions).
    pub fn f1(&self) -> f64 {
        percent(self.f1_sum, self.n)
    }

    /// Mean Support F1 over the records that carry evidence, in %; None without any.
    pub fn support_f1(&self) -> Option<f64> {
        (self.with_evidence > 0).then(|| percent(self.support_f1_sum, self.with_evidence))
    }

    /// Records that carry evidence.
    pub fn with_evidence(&self) -> usize {
        self.with_evidence
    }
}

/// A sum's mean, in %; 0 over nothing.
fn percent(sum: f64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        100.0 * (sum / n as f64)
    }
}

impl Fruit for ScoreTally {
    fn merge(&mut self, other: Self) {
        self.n += other.n;
        self.em_sum += other.em_sum;
        self.f1_sum += other.f1_sum;
        self.with_evidence += other.with_evidence;
        self.support_f1_sum += other.support_f1_sum;
        self.problems.add(&other.problems);
    }
}

/// A tally is the collector that counts every record it is given: the report's
/// summaries fold arms that [`super::load`] has already kept the first record of each
/// question of.
impl Collector for ScoreTally {
    type Fruit = ScoreTally;

    fn collect<R: Scored + ?Sized>(&mut self, record: &R) {
        self.add(&record.scores());
    }

    fn harvest(self) -> ScoreTally {
        self
    }
}

/// Passes on the first record of each question only (later ones are duplicates: a
/// resumed or pasted-together run), holding one 8-byte hash per question id: eval's
/// closing fold streams raw records files, which nothing has deduplicated.
#[derive(Default)]
pub struct FirstPerQuestion<C> {
    seen: HashSet<u64>,
    inner: C,
}

impl<C: Collector> Collector for FirstPerQuestion<C> {
    type Fruit = C::Fruit;

    fn collect<R: Scored + ?Sized>(&mut self, record: &R) {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        record.question_id().hash(&mut hasher);
        if self.seen.insert(hasher.finish()) {
            self.inner.collect(record);
        }
    }

    fn harvest(self) -> C::Fruit {
        self.inner.harvest()
    }
}

/// The fruit of a fresh `C` fed `records` in order.
pub fn fold<'a, C, R>(records: impl IntoIterator<Item = &'a R>) -> C::Fruit
where
    C: Collector + Default,
    R: Scored + 'a,
{
    let mut collector = C::default();
    for r in records {
        collector.collect(r);
    }
    collector.harvest()
}

/// One arm's scores as eval's closing table folds them from a records file.
pub type ClosingCollector = FirstPerQuestion<ScoreTally>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, f1: f64, extra: serde_json::Value) -> RunRecord {
        let mut r = json!({
            "id": id, "dataset": "hotpotqa", "hops": 2, "method": "eir", "model": "m",
            "answer": "a", "gold": ["a"], "em": f64::from(u8::from(f1 == 1.0)), "f1": f1,
            "finished": true, "timed_out": false, "stop": "finished", "turns": 1, "calls": 1,
            "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "nudge_turn": null,
            "reminders": 0, "retrieved": [], "error": null, "trace": []
        });
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        serde_json::from_value(r).unwrap()
    }

    fn records() -> Vec<RunRecord> {
        let evidence = |support: f64, rejected: u32| {
            json!({"outputs": {"evidence": {"cited": [], "dropped_citations": 0,
                "rejected": {"missing_field": rejected}}}, "support_f1": support})
        };
        vec![
            record("q1", 1.0, evidence(0.5, 2)),
            record("q2", 0.25, json!({"error": "boom", "truncated_calls": 3})),
            record(
                "q3",
                0.5,
                json!({"stop": "context_overflow", "refusals": 1}),
            ),
            record("q4", 0.0, evidence(0.25, 0)),
            record(
                "q5",
                0.75,
                json!({"stop": "parse_failure", "constraints_dropped": 2}),
            ),
            record("q1", 0.0, json!({"error": "again"})), // a duplicate: the first counts
        ]
    }

    /// Fed one by one, or in parts whose fruits merge, records give the same figures;
    /// the run records and their digests give the same too.
    #[test]
    fn one_by_one_merged_parts_and_digests_give_the_same_tally() {
        let records = records();
        let whole = fold::<ClosingCollector, _>(&records);
        assert_eq!(whole.n, 5);
        assert_eq!((whole.em(), whole.f1()), (20.0, 50.0));
        assert_eq!(whole.support_f1(), Some(37.5));
        assert_eq!(whole.with_evidence(), 2);
        assert_eq!(
            whole.problems.lines(),
            [
                "1 with errors",
                "1 context overflows",
                "1 unparseable",
                "2 calls unconstrained",
                "3 calls truncated",
                "1 calls refused",
                "2 actions rejected",
            ]
        );
        // Parts of different questions (the duplicate with its first).
        let (a, b): (Vec<&RunRecord>, Vec<&RunRecord>) =
            records.iter().partition(|r| r.id == "q1" || r.id == "q4");
        let parts = [a, b].map(fold::<ClosingCollector, _>);
        assert_eq!(merge_fruits(parts), whole);
        // One record per part.
        let singles = records.iter().take(5).map(std::slice::from_ref);
        assert_eq!(merge_fruits(singles.map(fold::<ScoreTally, _>)), whole);
        // Digests, as the report loads them (the duplicate left out, as load does),
        // each counted.
        let digests: Vec<RecordDigest> = records[..5]
            .iter()
            .map(|r| RecordDigest::of(r, 0))
            .collect();
        assert_eq!(fold::<ScoreTally, _>(&digests), whole);
    }

    /// Per-arm maps of fruits merge arm by arm.
    #[test]
    fn maps_of_fruits_merge_key_by_key() {
        let records = records();
        let tally = |rs: &[RunRecord]| fold::<ScoreTally, _>(rs);
        let first = BTreeMap::from([("a", tally(&records[..2])), ("b", tally(&records[2..3]))]);
        let second = BTreeMap::from([("b", tally(&records[3..5]))]);
        let merged = merge_fruits([first, second]);
        assert_eq!(merged["a"], tally(&records[..2]));
        assert_eq!(merged["b"], tally(&records[2..5]));
    }

    #[test]
    fn nothing_counted_reads_as_zero_without_problems() {
        let empty = ScoreTally::default();
        assert_eq!((empty.n, empty.em(), empty.f1()), (0, 0.0, 0.0));
        assert_eq!(empty.support_f1(), None);
        assert!(empty.problems.lines().is_empty());
    }
}
