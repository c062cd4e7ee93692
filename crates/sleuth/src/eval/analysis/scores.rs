//! The closing scores `eval` prints (EM, F1, Support F1 and the problems per arm),
//! folded from the records one line at a time by [`ClosingCollector`] (the tally that
//! folds the report's summary, fed the first record of each question): the run
//! directory is read twice (the arms' settings labels first, then the sums), holding
//! per arm running totals and one 8-byte hash per question id, never a record (issue
//! 32). The figures are the ones [`Summary::of_arm`](super::Summary::of_arm) gives on
//! the loaded arms: the same arms and labels ([`super::load`]'s grouping), the first
//! record of a question kept; the sums run in file order rather than id order, which
//! changes no printed digit (EM sums whole numbers exactly in any order).

use super::collect::{ClosingCollector, Collector, ScoreTally};
use super::load::{label_of, sources, swept_keys, ArmKey, Source};
use crate::eval::store::each_record_line;
use crate::Result;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One arm's closing scores.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmScores {
    pub key: ArmKey,
    pub scores: ScoreTally,
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
    let mut arms: BTreeMap<ArmKey, ClosingCollector> = BTreeMap::new();
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
            arms.entry(key).or_default().collect(&r);
            Ok(())
        })?;
    }
    Ok(arms
        .into_iter()
        .map(|(key, collector)| ArmScores {
            key,
            scores: collector.harvest(),
        })
        .collect())
}

/// Eval's closing table: the scores of `methods`' arms in the run directory `dir`
/// (every record there, earlier runs' too), in the order `methods` lists them (arms of
/// one method in arm order).
pub fn closing_table(dir: &Path, methods: &[String]) -> Result<Vec<ArmScores>> {
    let mut arms: Vec<ArmScores> = closing_scores(&[dir.to_path_buf()])?
        .into_iter()
        .filter(|a| methods.contains(&a.key.method))
        .collect();
    arms.sort_by_key(|a| methods.iter().position(|m| m == &a.key.method));
    Ok(arms)
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
            let scores = &f.scores;
            assert_eq!(f.key, arm.key);
            assert_eq!(
                (scores.n, scores.em(), scores.f1()),
                (s.n, s.em, s.f1),
                "{}",
                f.key.name()
            );
            assert_eq!(
                scores.support_f1(),
                s.evidence.as_ref().map(|e| e.support_f1)
            );
            assert_eq!(scores.problems, s.problems);
        }
        let react = folded
            .iter()
            .find(|a| a.key.name() == "react [nudge=0.5]")
            .unwrap();
        assert_eq!(react.scores.n, 2);
        assert_eq!(react.scores.problems.lines(), ["1 with errors"]);
        let eir = folded.iter().find(|a| a.key.method == "eir").unwrap();
        assert_eq!(eir.scores.support_f1(), Some(25.0));
        assert_eq!(
            eir.scores.problems.lines(),
            [
                "1 context overflows",
                "2 calls truncated",
                "2 actions rejected"
            ]
        );
    }
}
