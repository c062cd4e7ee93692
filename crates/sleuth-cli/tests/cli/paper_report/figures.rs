//! The papers' figures: SLEUTH Figure 2(a) and Figure 5 (App. E).

use super::*;
use crate::util::ok;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

/// SLEUTH App. E, Figure 5: the cohort is the episodes lasting at least the arm's
/// nudge turn ⌈α·T⌉ (⌈0.5·4⌉ = 2), its means carry 95% intervals, and panel (b) is
/// the cumulative share of episodes that called finish. The server's SLEUTH writes one
/// fact per turn on the first question and two on the second; it answers the first
/// when nudged (turn 2) and the second only at its last turn (turn 4).
#[test]
fn figure_5_has_intervals_the_nudge_cohort_and_cumulative_termination() {
    let gold = fixture_gold();
    let server = MockServer::spawn(move |req: &ReceivedRequest| {
        let answer = gold_of(req, &gold);
        let first = answer == "Giuseppe Cesari";
        let turn = prior_turns(req) + 1;
        let per_turn = if first { 1 } else { 2 };
        let facts: String = (1..=turn * per_turn)
            .map(|i| format!("- [F{i}] fact {i} (source: Giuseppe Cesari)\n"))
            .collect();
        let memory = format!(
            "Confirmed Facts:\n{facts}Active Hypotheses:\n- [H1] {answer} | confidence: medium | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] which? | action: search | priority: high\n"
        );
        let user = last_user(req);
        let done = (first && user.contains("Stop searching now")) || turn == 4;
        let action = if done {
            format!("Action: finish[{answer}]")
        } else {
            "Action: search[the question]".to_string()
        };
        Reply::text(format!("{memory}{action}"))
    });
    let tmp = tempfile::tempdir().unwrap();
    let out = run_2wiki(
        tmp.path(),
        "dynamics",
        r#"name = "dynamics"
methods = ["sleuth"]
[settings]
turns = 4
nudge = 0.5
tau = 0
[[datasets]]
name = "2wiki"
"#,
        &server,
    );
    let files = tmp.path().join("files");
    let json = ok(&[
        "report",
        out.to_str().unwrap(),
        "--json",
        "--out",
        files.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let m = &v["analysis"]["memory"][0];
    assert_eq!(m["min_turns"], 2, "the cohort starts at ⌈α·T⌉: {m}");
    assert_eq!(m["nudge_turn"], 2);
    assert_eq!(m["cohort"], 2);
    assert_eq!(
        m["finished_by_turn"],
        serde_json::json!([0.0, 50.0, 50.0, 100.0])
    );
    // Turn 1: one fact and two facts, mean 1.5, sd 0.71, interval 1.5 ± 1.96·0.5.
    let t1 = &m["turns"][0];
    assert_eq!(t1["facts"], 1.5);
    let (lo, hi) = (
        t1["facts_ci"][0].as_f64().unwrap(),
        t1["facts_ci"][1].as_f64().unwrap(),
    );
    assert!((lo - 0.52).abs() < 0.01 && (hi - 2.48).abs() < 0.01, "{t1}");
    let svg = |stem: &str| {
        let found: Vec<_> = std::fs::read_dir(&files)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(stem))
            .collect();
        assert_eq!(found.len(), 1, "{stem}: {found:?}");
        std::fs::read_to_string(&found[0]).unwrap()
    };
    let panel_a = svg("memory_");
    assert_eq!(
        panel_a.matches("class=\"error-bar\"").count(),
        3 * 2,
        "{panel_a}"
    );
    assert!(panel_a.contains("nudge (turn 2)"));
    let panel_b = svg("termination_");
    assert!(panel_b.contains("Cumulative termination"), "{panel_b}");
    assert!(panel_b.contains("class=\"mark\"") && panel_b.contains("nudge (turn 2)"));
    assert!(panel_b.contains("% of all 2 episodes"), "{panel_b}");
}

/// SLEUTH Figure 2(a): a report over two models' runs draws SLEUTH and ReAct of both on
/// one EM-by-hops plot, each bar with its n and its 95% interval.
#[test]
fn figure_2a_puts_both_models_on_one_plot_with_n_and_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (scripted_server(), scripted_server());
    let (dir_a, dir_b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&dir_a).unwrap();
    std::fs::create_dir_all(&dir_b).unwrap();
    let a = run_recipe_as(&dir_a, &one, "model-a");
    let b = run_recipe_as(&dir_b, &two, "model-b");
    let files = tmp.path().join("files");
    ok(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        files.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(files.join("figure2a_em_by_hops.svg")).unwrap();
    for model in ["model-a", "model-b"] {
        for method in ["sleuth", "react"] {
            let name = format!("{method} (openai-compat:{model}");
            assert!(svg.contains(&name), "{name}: {svg}");
        }
    }
    assert!(!svg.contains("facts-only"), "SLEUTH and ReAct only");
    // Four series x three hop counts (2, 3, 4), each bar with its n and interval.
    assert_eq!(svg.matches("class=\"error-bar\"").count(), 12, "{svg}");
    assert_eq!(svg.matches(">n=2<").count(), 4, "2-hop bars: {svg}");
    assert_eq!(svg.matches(">n=1<").count(), 8, "3- and 4-hop bars: {svg}");
    assert!(svg.contains("Wilson 95% intervals"));
    // The per-dataset EM-by-hops figure carries them too.
    let all = std::fs::read_to_string(files.join("em_by_hops_musique.svg")).unwrap();
    assert!(all.contains(">n=2<") && all.contains("class=\"error-bar\""));
}
