//! The closing scores `eval` prints (EM, F1, Support F1 and the problems per arm),
//! folded from the records one line at a time: the run directory is read twice (the
//! arms' settings labels first, then the sums), holding per arm running totals and one
//! 8-byte hash per question id, never a record (issue 32). The figures are the ones
//! [`Summary::of_arm`](super::Summary::of_arm) gives on the loaded arms: the same arms
//! and labels ([`super::load`]'s grouping), the first record of a question kept; the
//! sums run in file order rather than id order, which changes no printed digit (EM
//! sums whole numbers exactly in any order). Two ids with the same 64-bit hash would
//! count once: for a million questions the chance is about 3e-8.

use super::load::{label_of, sources, swept_keys, ArmKey, Source};
use crate::eval::store::each_record_line;
use crate::eval::RunRecord;
use crate::methods::StopReason;
use crate::Result;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// One arm's closing scores. Rates are percentages.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmScores {
    pub key: ArmKey,
    pub n: usize,
    pub em: f64,
    pub f1: f64,
    /// Mean Support F1 over the records that carry evidence (None without any).
    pub support_f1: Option<f64>,
    errors: usize,
    context_overflows: usize,
    parse_failures: usize,
    constraints_dropped: u64,
    truncated_calls: u64,
    refusals: u64,
    rejected_actions: u64,
    forced_endings: usize,
}

impl ArmScores {
    /// What went wrong in the arm, as [`super::Summary::problems`] says it.
    pub fn problems(&self) -> Vec<String> {
        super::summary::problem_lines([
            self.errors as u64,
            self.context_overflows as u64,
            self.parse_failures as u64,
            self.constraints_dropped,
            self.truncated_calls,
            self.refusals,
            self.rejected_actions,
            self.forced_endings as u64,
        ])
    }
}

/// The running totals of one arm.
#[derive(Default)]
struct Totals {
    ids: HashSet<u64>,
    n: usize,
    em: f64,
    f1: f64,
    with_evidence: usize,
    support_f1: f64,
    errors: usize,
    context_overflows: usize,
    parse_failures: usize,
    constraints_dropped: u64,
    truncated_calls: u64,
    refusals: u64,
    rejected_actions: u64,
    forced_endings: usize,
}

impl Totals {
    fn add(&mut self, r: &RunRecord) {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        r.id.hash(&mut hasher);
        if !self.ids.insert(hasher.finish()) {
            return; // a duplicate: the first record of a question counts
        }
        self.n += 1;
        self.em += r.em;
        self.f1 += r.f1;
        if r.outputs.evidence.is_some() {
            self.with_evidence += 1;
            self.support_f1 += r.support_f1.unwrap_or(0.0);
        }
        self.errors += usize::from(r.error.is_some());
        self.context_overflows += usize::from(r.stop == StopReason::ContextOverflow);
        self.parse_failures += usize::from(r.stop == StopReason::ParseFailure);
        self.constraints_dropped += r.constraints_dropped;
        self.truncated_calls += u64::from(r.truncated_calls);
        self.refusals += u64::from(r.refusals);
        let evidence = r.outputs.evidence.as_ref();
        self.rejected_actions += evidence.map_or(0, |e| u64::from(e.rejected_total()));
        let final_call = r.outputs.final_call.as_ref().map(|f| f.forced_end);
        let forced = super::digest::forced_end(final_call, evidence.is_some(), r.stop);
        self.forced_endings += usize::from(forced);
    }

    fn scores(self, key: ArmKey) -> ArmScores {
        let mean = |sum: f64, n: usize| if n == 0 { 0.0 } else { sum / n as f64 };
        ArmScores {
            key,
            n: self.n,
            em: 100.0 * mean(self.em, self.n),
            f1: 100.0 * mean(self.f1, self.n),
            support_f1: (self.with_evidence > 0)
                .then(|| 100.0 * (self.support_f1 / self.with_evidence as f64)),
            errors: self.errors,
            context_overflows: self.context_overflows,
            parse_failures: self.parse_failures,
            constraints_dropped: self.constraints_dropped,
            truncated_calls: self.truncated_calls,
            refusals: self.refusals,
            rejected_actions: self.rejected_actions,
            forced_endings: self.forced_endings,
        }
    }
}

/// What the first pass reads of a record: its group and its settings.
#[derive(Deserialize)]
struct Head {
    dataset: String,
    method: String,
    model: String,
    #[serde(default)]
    settings: BTreeMap<String, String>,
}

/// The settings a record's arm is labelled by: its own, or (records written before
/// they carried them) its run's.
fn settings_of<'a>(
    settings: &'a BTreeMap<String, String>,
    source: &'a Source,
) -> &'a BTreeMap<String, String> {
    if settings.is_empty() {
        &source.config.settings
    } else {
        settings
    }
}

/// Every arm's closing scores under `paths` (run directories or records files), in
/// arm order.
pub fn closing_scores(paths: &[PathBuf]) -> Result<Vec<ArmScores>> {
    let sources = sources(paths)?;
    type Group = (String, String, String);
    let mut variants: BTreeMap<Group, BTreeSet<BTreeMap<String, String>>> = BTreeMap::new();
    for source in &sources {
        each_line_head(source, |head| {
            let settings = settings_of(&head.settings, source).clone();
            variants
                .entry((head.dataset, head.method, head.model))
                .or_default()
                .insert(settings);
        })?;
    }
    let swept: BTreeMap<Group, Vec<String>> = variants
        .into_iter()
        .map(|(g, v)| {
            let keys = swept_keys(v.iter());
            (g, keys)
        })
        .collect();
    let mut arms: BTreeMap<ArmKey, Totals> = BTreeMap::new();
    for source in &sources {
        each_record_line(&source.records_file, |_, r| {
            let g = (r.dataset.clone(), r.method.clone(), r.model.clone());
            let label = label_of(&swept[&g], settings_of(&r.settings, source));
            let key = ArmKey {
                dataset: g.0,
                method: g.1,
                model: g.2,
                label,
            };
            arms.entry(key).or_default().add(&r);
            Ok(())
        })?;
    }
    Ok(arms.into_iter().map(|(k, t)| t.scores(k)).collect())
}

/// Calls `each` with the head of every line of `source` that has one (the second
/// pass reports the lines that are not records).
fn each_line_head(source: &Source, mut each: impl FnMut(Head)) -> Result<()> {
    use std::io::BufRead;
    let path = &source.records_file;
    let file = std::fs::File::open(path).map_err(|e| crate::Error::io(path, e))?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    for line in reader.split(b'\n') {
        let line = line.map_err(|e| crate::Error::io(path, e))?;
        let head = std::str::from_utf8(&line)
            .ok()
            .and_then(|l| serde_json::from_str::<Head>(l).ok());
        if let Some(head) = head {
            each(head);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::analysis::{load, Summary};
    use serde_json::json;

    fn record(id: &str, method: &str, nudge: &str, f1: f64, extra: serde_json::Value) -> String {
        let mut r = json!({
            "id": id, "dataset": "hotpotqa", "hops": 2, "method": method, "model": "m",
            "settings": {"nudge": nudge, "turns": "10"},
            "answer": "a", "gold": ["a"], "em": f64::from(u8::from(f1 == 1.0)), "f1": f1,
            "finished": true, "timed_out": false, "stop": "finished", "turns": 1, "calls": 1,
            "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "nudge_turn": null,
            "reminders": 0, "retrieved": [], "gold_titles": [], "error": null, "trace": []
        });
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r.to_string()
    }

    /// The folded scores are the loaded arms' summaries: the same arms and labels (a
    /// swept setting), the first of duplicate records, errors and evidence counted.
    #[test]
    fn closing_scores_are_the_summaries_of_the_loaded_arms() {
        let dir = tempfile::tempdir().unwrap();
        let evidence = json!({"outputs": {"evidence": {"cited": [], "dropped_citations": 0, "rejected": {"missing_field": 2}}}, "support_f1": 0.25});
        let lines = [
            record("q2", "react", "0.5", 1.0 / 3.0, json!({})),
            record("q1", "react", "0.5", 1.0, json!({"error": "boom"})),
            record("q1", "react", "0.7", 0.2, json!({"stop": "parse_failure"})),
            record("q2", "react", "0.5", 0.0, json!({})), // a duplicate: the first counts
            record("q1", "eir", "0.5", 0.6, evidence.clone()),
            record(
                "q2",
                "eir",
                "0.5",
                1.0,
                json!({"truncated_calls": 2, "stop": "context_overflow"}),
            ),
        ];
        std::fs::write(dir.path().join("records.jsonl"), lines.join("\n") + "\n").unwrap();
        let paths = [dir.path().to_path_buf()];
        let folded = closing_scores(&paths).unwrap();
        let set = load(&paths).unwrap();
        assert_eq!(folded.len(), set.arms.len());
        assert_eq!(folded.len(), 3, "react is swept over nudge; eir is not");
        for (f, arm) in folded.iter().zip(&set.arms) {
            let s = Summary::of_arm(arm);
            assert_eq!(f.key, arm.key);
            assert_eq!((f.n, f.em, f.f1), (s.n, s.em, s.f1), "{}", f.key.name());
            assert_eq!(f.support_f1, s.evidence.as_ref().map(|e| e.support_f1));
            assert_eq!(f.problems(), s.problems());
        }
        let react = folded
            .iter()
            .find(|a| a.key.name() == "react [nudge=0.5]")
            .unwrap();
        assert_eq!(react.n, 2);
        assert_eq!(react.problems(), ["1 with errors"]);
        let eir = folded.iter().find(|a| a.key.method == "eir").unwrap();
        assert_eq!(eir.support_f1, Some(25.0));
        assert_eq!(
            eir.problems(),
            [
                "1 context overflows",
                "2 calls truncated",
                "2 actions rejected"
            ]
        );
    }
}
