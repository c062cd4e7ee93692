//! Duplicate records inside one records file.
//!
//! A run writes each (question, method) once: resuming skips what is recorded and the
//! run directory is locked against a second writer. Two records with the same id and
//! method in one file (one run.json, so one model and one set of settings) therefore
//! mean the file was written by two runs at once (before the lock existed) or pasted
//! together. The report keeps the first of each, as for duplicates across files, but
//! always says so, so that n is never silently different from what was run.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::Path;

/// How many examples a warning names.
const EXAMPLES: usize = 3;

/// A warning for `file` when it holds more than one record of a (question, method,
/// model, settings); None when every record is unique. Records carry their method's
/// resolved settings, so a file of concatenated sweep points is not a duplicate.
/// `records` gives each record's (id, method, model, settings) in file order; the
/// settings may be given by anything equal exactly when they are (an index).
pub fn within_file<'a, S: Hash + Eq>(
    file: &Path,
    records: impl IntoIterator<Item = (&'a str, &'a str, &'a str, S)>,
) -> Option<String> {
    let mut seen: HashMap<(&str, &str, &str, S), usize> = HashMap::new();
    let mut extra = 0usize;
    let mut examples = Vec::new();
    for (id, method, model, settings) in records {
        let count = seen.entry((id, method, model, settings)).or_insert(0);
        *count += 1;
        if *count == 2 && examples.len() < EXAMPLES {
            examples.push(format!("{id} ({method})"));
        }
        if *count > 1 {
            extra += 1;
        }
    }
    if extra == 0 {
        return None;
    }
    let keys = seen.values().filter(|&&c| c > 1).count();
    Some(format!(
        "{}: {extra} duplicate records ({keys} questions recorded more than once for the same method, model and settings, e.g. {}); two runs wrote this directory at once? Counting the first of each",
        file.display(),
        examples.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::RunRecord;
    use std::collections::BTreeMap;

    type Key<'a> = (&'a str, &'a str, &'a str, &'a BTreeMap<String, String>);

    fn keys(records: &[RunRecord]) -> Vec<Key<'_>> {
        records
            .iter()
            .map(|r| {
                (
                    r.id.as_str(),
                    r.method.as_str(),
                    r.model.as_str(),
                    &r.settings,
                )
            })
            .collect()
    }

    fn record(id: &str, method: &str) -> RunRecord {
        serde_json::from_value(serde_json::json!({
            "id": id, "dataset": "hotpotqa", "hops": null, "method": method,
            "model": "m", "answer": "a", "gold": ["a"], "em": 1.0, "f1": 1.0,
            "finished": true, "timed_out": false, "stop": "finished", "turns": 1,
            "calls": 1, "input_tokens": 1, "output_tokens": 1, "cost_usd": 0.0,
            "nudge_turn": null, "reminders": 0, "retrieved": [], "error": null,
            "trace": []
        }))
        .unwrap()
    }

    #[test]
    fn unique_records_give_no_warning_and_duplicates_are_counted() {
        let file = Path::new("run/records.jsonl");
        let unique = [
            record("q1", "react"),
            record("q1", "sleuth"),
            record("q2", "react"),
        ];
        assert_eq!(within_file(file, keys(&unique)), None);

        let twice = [
            record("q1", "react"),
            record("q2", "react"),
            record("q1", "react"),
            record("q2", "react"),
            record("q1", "react"),
        ];
        let w = within_file(file, keys(&twice)).unwrap();
        assert!(
            w.starts_with("run/records.jsonl: 3 duplicate records (2 questions"),
            "{w}"
        );
        assert!(w.contains("q1 (react), q2 (react)"), "{w}");
    }
}
