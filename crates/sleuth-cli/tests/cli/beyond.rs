//! Beyond the papers (issue 18), through the binary: the adaptive nudge's record, and
//! context compaction's input tokens on MuSiQue 4-hop pools against `sleuth`, with the
//! same scripted replies replayed so only the method differs.

use crate::util::{musique, records_under, replay_reply, replies, Eval};
use serde_json::Value;
use std::path::Path;

/// Input tokens per question of `sleuth` on MuSiQue 4-hop pools at T = 20, with
/// `extra` settings, replaying the same 20 replies.
fn input_tokens_per_question(dir: &Path, name: &str, extra: &[&str], limit: usize) -> f64 {
    per_question(dir, "sleuth", name, extra, limit).0
}

/// Input tokens and calls per question of `method` on the replay.
fn per_question(dir: &Path, method: &str, name: &str, extra: &[&str], limit: usize) -> (f64, f64) {
    let script: Vec<String> = (0..20).map(replay_reply).collect();
    let model = replies(dir, "replay.json", &script);
    let out = dir.join(name);
    let mut eval = Eval::new("musique", musique(), method, &model, &out)
        .opt("--hops", 4)
        .opt("--limit", limit)
        .set("turns=20");
    for s in extra {
        eval = eval.set(s);
    }
    eval.ok();
    let records = records_under(&out);
    assert_eq!(records.len(), limit);
    for r in &records {
        assert_eq!(
            r["trace"].as_array().unwrap().len(),
            20,
            "the full budget ran"
        );
    }
    let sum = |field: &str| -> f64 {
        records
            .iter()
            .map(|r| r[field].as_u64().unwrap() as f64)
            .sum::<f64>()
            / limit as f64
    };
    (sum("input_tokens"), sum("calls"))
}

#[test]
fn adaptive_nudge_is_recorded_with_its_condition_and_turn() {
    let dir = tempfile::tempdir().unwrap();
    let reply = "Confirmed Facts:\n- [F1] one (source: A)\n- [F2] two (source: B)\n\
                 Active Hypotheses:\n- [H1] x | confidence: medium | supports: F1 | contradicts: -\n\
                 Open Questions:\n- [Q1] more? | action: more | priority: high\n\
                 Action: search[city]";
    let model = replies(dir.path(), "r.json", &[reply.to_string()]);
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "sleuth", &model, &out)
        .opt("--limit", 1)
        .set("turns=8")
        .set("nudge=adaptive")
        .ok();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let settings = &config["method_settings"]["sleuth"];
    assert_eq!(settings["nudge"], "adaptive");
    assert_eq!(settings["adaptive_stagnation"], "3");
    assert_eq!(settings["adaptive_confident"], "true");
    let records = records_under(&out);
    let r = &records[0];
    // Two facts in turn 1 and none after: three still turns, so the nudge comes with 5.
    assert_eq!(
        r["outputs"]["commitment"],
        serde_json::json!({"turn": 5, "condition": "stagnation"})
    );
    let nudged: Vec<u64> = r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["nudged"] == true)
        .map(|t| t["number"].as_u64().unwrap())
        .collect();
    assert_eq!(nudged, vec![5]);
}

#[test]
fn compaction_sends_at_most_six_tenths_of_sleuths_input_tokens_at_t20() {
    let dir = tempfile::tempdir().unwrap();
    let full = input_tokens_per_question(dir.path(), "full", &[], 3);
    let compact = input_tokens_per_question(dir.path(), "compact", &["compact=2"], 3);
    let ratio = compact / full;
    assert!(
        ratio <= 0.6,
        "compact=2: {compact:.0} vs sleuth {full:.0} input tokens per question ({ratio:.2}x)"
    );
}

/// The figures behind the target: `cargo test -p sleuth-cli --no-default-features
/// --test cli -- beyond::compaction_figures --ignored --nocapture`.
#[test]
#[ignore]
fn compaction_figures() {
    let dir = tempfile::tempdir().unwrap();
    let n = 23; // every 4-hop question of the subset
    let full = input_tokens_per_question(dir.path(), "full", &[], n);
    println!("MuSiQue 4-hop, {n} questions, T = 20, same 20 replies replayed");
    println!("sleuth: {full:.0} input tokens per question");
    for k in [1, 2, 3, 5] {
        let c =
            input_tokens_per_question(dir.path(), &format!("k{k}"), &[&format!("compact={k}")], n);
        println!(
            "compact={k}: {c:.0} input tokens per question ({:.2}x)",
            c / full
        );
    }
    // The replay never finishes and its 21st reply is no JSON: the final call's
    // answer is unparsed, but the calls and tokens are what a run spends.
    let (_, sleuth_calls) = per_question(dir.path(), "sleuth", "calls", &[], n);
    let (eir_tokens, eir_calls) = per_question(dir.path(), "sleuth-eir", "hybrid", &[], n);
    println!(
        "sleuth-eir: {eir_calls:.1} calls per question vs sleuth {sleuth_calls:.1} ({:.2}x); {eir_tokens:.0} input tokens ({:.2}x)",
        eir_calls / sleuth_calls,
        eir_tokens / full
    );
}

#[test]
fn sleuth_eir_answers_after_a_timeout_from_its_facts_source_sentences() {
    let dir = tempfile::tempdir().unwrap();
    // MuSiQue's first question: "What is the seat of the county where Van Hook Township
    // is located?" Three loop turns that never finish, then EIR's final call.
    let memory = "Confirmed Facts:\n\
        - [F1] Van Hook Township is in Mountrail County (source: Van Hook Township, Mountrail County, North Dakota)\n\
        - [F2] The Mountrail County Courthouse is in Stanley (source: Mountrail County Courthouse)\n\
        Active Hypotheses:\n- [H1] Stanley | confidence: medium | supports: F1, F2 | contradicts: -\n\
        Open Questions:\n- [Q1] seat? | action: Mountrail seat | priority: high\n\
        Action: search[Mountrail County]";
    let last = r#"{"answer": "Stanley", "evidence": [{"title": "Van Hook Township, Mountrail County, North Dakota", "sentence": 0}, {"title": "Mountrail County Courthouse", "sentence": 0}]}"#;
    let script = vec![
        memory.to_string(),
        memory.into(),
        memory.into(),
        last.into(),
    ];
    let model = replies(dir.path(), "r.json", &script);
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "sleuth-eir", &model, &out)
        .opt("--limit", 1)
        .set("turns=3")
        .ok();
    let records = records_under(&out);
    let r = &records[0];
    assert_eq!(r["answer"], "Stanley");
    assert_eq!(r["stop"], "finished", "a timeout still yields an answer");
    assert_eq!(r["calls"], 4, "T + 1 calls: at T = 20, 1.05x sleuth's");
    assert_eq!(r["calls_by_kind"]["final"], 1);
    let fc = &r["outputs"]["final_call"];
    assert_eq!(fc["forced_end"], true);
    assert_eq!(fc["evidence_records"], 2);
    assert_eq!(
        r["outputs"]["evidence"]["cited"].as_array().unwrap().len(),
        2
    );
    assert_eq!(r["support_f1"], 1.0, "both gold sentences cited");
    assert_eq!(r["em"], 1.0);
}
