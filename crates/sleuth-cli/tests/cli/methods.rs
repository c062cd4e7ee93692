//! Methods as data, through the binary: the registry drives `sleuth methods`, the key
//! check, the README table and the planner's estimates, and those estimates are what a
//! run spends; records have exactly the documented fields.

use crate::util::{musique, ok, records_under, replies, sleuth, stderr, Eval};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn methods_lists_every_method_and_shows_one_with_resolved_settings() {
    let list = ok(&["methods"]);
    for name in [
        "react",
        "react-cot",
        "self-ask",
        "ircot",
        "reflexion",
        "notes",
        "facts-only",
        "facts-hyp",
        "facts-q",
        "sleuth",
        "eir",
        "direct",
        "full-pool",
        "ssr",
        "eir-reflexion",
    ] {
        assert!(
            list.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} missing:\n{list}"
        );
    }
    let sleuth_m = ok(&["methods", "sleuth"]);
    assert!(
        sleuth_m.contains("nudge") && sleuth_m.contains("= 0.7"),
        "{sleuth_m}"
    );
    assert!(sleuth_m.contains("at most 20 "), "{sleuth_m}");
    let eir = ok(&[
        "methods",
        "eir",
        "--set",
        "reads=4",
        "--set",
        "extra_reads=2",
    ]);
    assert!(eir.contains("reads ") && eir.contains("= 4"), "{eir}");
    assert!(
        eir.contains("at most 8 "),
        "4 + 1 action turns, final, more, final: {eir}"
    );
    assert!(
        !eir.lines().any(|l| l.trim_start().starts_with("turns ")),
        "EIR does not read the loop's turns: {eir}"
    );
    assert!(eir.contains("action_turns      = auto"), "{eir}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_key_no_chosen_method_reads_is_refused_with_the_methods_that_read_it() {
    let out = tempfile::tempdir().unwrap();
    let o = Eval::new(
        "musique",
        musique(),
        "eir,direct",
        "scripted:unused",
        out.path(),
    )
    .set("turns=10")
    .output();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("setting `turns` is read by none of eir, direct; it is read by react"),
        "{e}"
    );
    assert!(!out.path().join("records.jsonl").exists(), "nothing ran");
    // A value never changes meaning with a decimal point: turns are written turn:N.
    let o = Eval::new(
        "musique",
        musique(),
        "sleuth",
        "scripted:unused",
        out.path(),
    )
    .set("nudge=14")
    .output();
    assert!(stderr(&o).contains("nudge=turn:14"), "{}", stderr(&o));
}

#[test]
fn the_readme_method_table_is_the_registry() {
    let table = ok(&["methods", "--markdown"]);
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.contains(&table),
        "README.md's method table is out of date; paste `sleuth methods --markdown`:\n{table}"
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn every_record_and_run_file_carries_resolved_settings_and_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let pool = replies(dir.path(), "pool.json", &["Action: search[x]".into()]);
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "sleuth,reflexion", &pool, &out)
        .opt("--limit", 1)
        .set("turns=2")
        .ok();
    let eir_reply = r#"{"reasoning": "r", "action": {"type": "read", "title": "zzz"}}"#;
    let eir = replies(dir.path(), "eir.json", &[eir_reply.into()]);
    let out_eir = dir.path().join("run-eir");
    Eval::new(
        "musique",
        musique(),
        "eir,eir-reflexion,full-pool",
        &eir,
        &out_eir,
    )
    .opt("--limit", 1)
    .set("reads=1")
    .ok();

    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        config["settings"],
        serde_json::json!({"turns": "2"}),
        "as given"
    );
    let sleuth_settings = &config["method_settings"]["sleuth"];
    assert_eq!(sleuth_settings["turns"], "2");
    assert_eq!(sleuth_settings["nudge"], "0.7", "defaults are recorded");
    assert_eq!(sleuth_settings["max_tokens"], "4096");
    assert_eq!(config["method_settings"]["reflexion"]["episodes"], "2");

    let doc = std::fs::read_to_string(repo().join("docs/records.md")).unwrap();
    let (top, outputs) = documented_fields(&doc);
    let mut records = records_under(&out);
    records.extend(records_under(&out_eir));
    assert_eq!(records.len(), 5);
    let mut seen_outputs = BTreeSet::new();
    for r in &records {
        let mut keys: BTreeSet<String> = r.as_object().unwrap().keys().cloned().collect();
        // `error_kind` is written beside an error only (docs/records.md).
        assert_eq!(keys.contains("error_kind"), !r["error"].is_null(), "{r}");
        keys.insert("error_kind".into());
        assert_eq!(keys, top, "record fields differ from docs/records.md");
        let method = r["method"].as_str().unwrap();
        assert_eq!(
            r["settings"],
            config_settings(&out, &out_eir, method),
            "{method}: the record carries its arm's settings"
        );
        for k in r["outputs"].as_object().unwrap().keys() {
            assert!(outputs.contains(k), "outputs.{k} is not documented");
            seen_outputs.insert(k.clone());
        }
    }
    assert_eq!(records_under(&out_eir)[0]["settings"]["max_tokens"], "2048");
    for k in [
        "memory_counts",
        "attempts",
        "reflections",
        "evidence",
        "final_call",
    ] {
        assert!(seen_outputs.contains(k), "no record showed outputs.{k}");
    }
}

fn config_settings(out: &Path, out_eir: &Path, method: &str) -> Value {
    for dir in [out, out_eir] {
        let config: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        if let Some(s) = config["method_settings"].get(method) {
            return s.clone();
        }
    }
    panic!("{method} in no run.json");
}

/// The backquoted first-column names of the two field tables of docs/records.md.
fn documented_fields(doc: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let section = |start: &str, end: &str| -> BTreeSet<String> {
        let body = doc.split(start).nth(1).unwrap().split(end).next().unwrap();
        body.lines()
            .filter_map(|l| l.strip_prefix("| `"))
            // Fields left out of a record when they are zero or empty (the calls that
            // did not end normally) are checked by the traffic suite instead.
            .filter(|l| !l.contains("absent when"))
            .flat_map(|l| {
                let cell = l.split(" |").next().unwrap();
                cell.split(", ")
                    .map(|n| n.trim_matches('`').to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    (
        section("## Top-level fields", "## `outputs`"),
        section("## `outputs`", "## `run.json`"),
    )
}

/// Sums `calls` over every record an experiment wrote, and reads its dry-run estimate.
fn planned_and_spent(recipe: &Path, model: &str, out: &Path) -> (f64, f64) {
    let recipe = recipe.to_str().unwrap();
    let root = crate::util::shared_data("").display().to_string();
    let plan = ok(&[
        "experiment",
        recipe,
        "--model",
        model,
        "--data-root",
        &root,
        "--dry-run",
    ]);
    let planned: f64 = plan
        .split("upper bound: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no estimate in:\n{plan}"));
    let o = sleuth(&[
        "experiment",
        recipe,
        "--model",
        model,
        "--data-root",
        &root,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let spent: f64 = records_under(out)
        .iter()
        .map(|r| r["calls"].as_f64().unwrap())
        .sum();
    (planned, spent)
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_recipes_estimate_is_what_a_run_that_uses_every_budget_spends() {
    let dir = tempfile::tempdir().unwrap();
    // Pool family: a model that never answers uses every turn; Reflexion retries.
    let recipe = dir.path().join("pool.toml");
    std::fs::write(
        &recipe,
        r#"name = "pool"
limit = 2
methods = ["react", "self-ask", "sleuth", "reflexion"]
[settings]
turns = 3
[[datasets]]
name = "musique"
data = "musique/musique_ans_dev_subset200_with_paragraphs.jsonl"
"#,
    )
    .unwrap();
    let model = replies(dir.path(), "search.json", &["Action: search[x]".into()]);
    let (planned, spent) = planned_and_spent(&recipe, &model, &dir.path().join("pool"));
    assert_eq!((planned, spent), (2.0 * (3.0 + 3.0 + 3.0 + 7.0), 32.0));

    // EIR family: a model that only ever asks to read uses every read and turn.
    let recipe = dir.path().join("eir.toml");
    std::fs::write(
        &recipe,
        r#"name = "eir"
limit = 2
methods = ["direct", "eir", "eir-reflexion", "full-pool"]
[settings]
reads = 2
trials = 2
[[datasets]]
name = "hotpotqa"
data = "hotpotqa/hotpot_dev_distractor_subset.jsonl"
"#,
    )
    .unwrap();
    let read = r#"{"reasoning": "r", "action": {"type": "read", "title": "zzz"}}"#;
    let model = replies(dir.path(), "read.json", &[read.into()]);
    let (planned, spent) = planned_and_spent(&recipe, &model, &dir.path().join("eir"));
    // direct 2, eir 2 + 1 + final, eir-reflexion 2 x 2 + 1, full-pool 1.
    assert_eq!((planned, spent), (2.0 * (2.0 + 4.0 + 5.0 + 1.0), 24.0));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn agentic_ssr_spends_its_estimate_when_every_check_refines() {
    let dir = tempfile::tempdir().unwrap();
    let action = r#"{"reasoning": "r", "action": {"type": "read", "title": "zzz"}}"#;
    let decompose = r#"{"facts": "f", "justification": "j", "action": "read zzz"}"#;
    let reject = r#"{"verdict": "reject", "correction": "read zzz"}"#;
    // Per turn: the proposal, one decomposition, 3 x 3 verdicts, one refinement.
    let mut turn = vec![action.to_string(), decompose.to_string()];
    turn.extend(std::iter::repeat_n(reject.to_string(), 9));
    turn.push(action.to_string());
    let model = replies(dir.path(), "ssr.json", &[turn.clone(), turn].concat());
    let out = dir.path().join("ssr");
    Eval::new("hotpotqa", crate::util::hotpot(), "ssr", &model, &out)
        .opt("--limit", 1)
        .set("reads=2")
        .ok();
    let shown = ok(&["methods", "ssr", "--set", "reads=2"]);
    assert!(shown.contains("at most 24 "), "{shown}");
    let r = &records_under(&out)[0];
    assert_eq!(r["calls"], 24, "{}", r["calls_by_kind"]);
    assert_eq!(r["calls_by_kind"]["refinement"], 2);
}
