//! Issue 47, "a researcher's first hour, round two": what a new user met that cost
//! wrong numbers or an hour, each item proven through the binary. Runs on the fixtures
//! in `fixtures/benchmarks`, so a clone without `../shared` runs them too.

use crate::golden::fixture;
use crate::util::*;

/// Item 5: an experiment root spanning several datasets, asked for one method, names
/// the real cause (the datasets) and what to pass; `--dataset` then picks one.
#[test]
fn export_of_a_root_spanning_datasets_says_so_and_dataset_picks_one() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "r.json", &["Action: finish[yes]".to_string()]);
    let root = dir.path().join("runs");
    for dataset in ["hotpotqa", "musique"] {
        Eval::new(
            dataset,
            fixture(dataset),
            "react",
            &model,
            root.join(dataset),
        )
        .set("turns=1")
        .ok();
    }
    let o = sleuth(&["export", root.to_str().unwrap(), "--method", "react"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("`react` has records on 2 datasets")
            && err.contains("hotpotqa, musique")
            && err.contains("--dataset hotpotqa|musique"),
        "{err}"
    );
    assert!(!err.contains("choose one with --method"), "{err}");
    let out = dir.path().join("m.jsonl");
    ok(&[
        "export",
        root.to_str().unwrap(),
        "--method",
        "react",
        "--dataset",
        "musique",
        "--out",
        out.to_str().unwrap(),
    ]);
    let lines = std::fs::read_to_string(&out).unwrap().lines().count();
    let gold = std::fs::read_to_string(dir.path().join("m.gold.jsonl")).unwrap();
    assert_eq!(lines, gold.lines().count());
    assert_eq!(lines, 4, "the musique fixture's four questions");
}

/// Item 4: a run whose every EIR action is rejected shows it in eval's problems column
/// (and the report's): the rejected actions, and the trajectories that ended without a
/// submission, per method.
#[test]
fn rejected_actions_and_forced_endings_are_problems() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "r.json", &["{}".to_string()]);
    let out = dir.path().join("run");
    let o = sleuth(&[
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        fixture("hotpotqa").to_str().unwrap(),
        "--methods",
        "eir,direct",
        "--model",
        &model,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let closing = stderr(&o);
    let eir = closing
        .lines()
        .find(|l| l.starts_with("eir "))
        .unwrap_or_else(|| panic!("{closing}"));
    assert!(
        eir.contains("actions rejected") && eir.contains("2 ended without a submission"),
        "{closing}"
    );
    let records = records_under(&out);
    let rejected: u64 = records
        .iter()
        .filter(|r| r["method"] == "eir")
        .flat_map(|r| {
            let causes = r["outputs"]["evidence"]["rejected"].as_object().unwrap();
            causes
                .values()
                .map(|n| n.as_u64().unwrap())
                .collect::<Vec<_>>()
        })
        .sum();
    assert!(rejected > 0);
    assert!(
        eir.contains(&format!("{rejected} actions rejected")),
        "{eir}"
    );
    let report = ok(&["report", out.to_str().unwrap()]);
    assert!(
        report.contains(&format!("{rejected} actions rejected")),
        "{report}"
    );
}

/// Item 6: the dry run names its two call counts for what they are: the bound if every
/// budget were spent, and the estimate the dollars come from.
#[test]
fn the_dry_run_names_the_bound_and_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = dir.path().join("r.toml");
    std::fs::write(
        &recipe,
        "name = \"r\"\nmethods = [\"react\", \"sleuth\"]\n[settings]\nturns = 5\n\
         [[datasets]]\nname = \"musique\"\n",
    )
    .unwrap();
    let data = format!("musique={}", fixture("musique").display());
    let plan = ok(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        "openai:gpt-4o-mini",
        "--data",
        &data,
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--dry-run",
    ]);
    let bound = plan
        .lines()
        .find(|l| l.contains("upper bound:"))
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(
        bound.contains("model calls if every episode used its whole budget"),
        "{bound}"
    );
    let estimate = plan
        .lines()
        .find(|l| l.starts_with("estimate: "))
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(
        estimate.contains("calls per question measured"),
        "{estimate}"
    );
    assert!(
        !plan.contains("at most") && !plan.contains("\ntotal: "),
        "{plan}"
    );
}

/// The cells of every table's `dataset` column in a markdown report, but for the hop
/// breakdown's (the pool, with its `hops` column beside).
fn dataset_cells(report: &str) -> std::collections::BTreeSet<String> {
    let mut cells = std::collections::BTreeSet::new();
    let mut column = None;
    for line in report.lines() {
        if !line.starts_with('|') {
            column = None;
            continue;
        }
        let row: Vec<&str> = line.split('|').map(str::trim).collect();
        match column {
            None if row.contains(&"hops") => column = Some(usize::MAX),
            None => column = row.iter().position(|c| *c == "dataset"),
            Some(usize::MAX) => {}
            Some(i) if !row[i].starts_with("---") && !row[i].is_empty() => {
                cells.insert(row[i].to_string());
            }
            Some(_) => {}
        }
    }
    cells
}

/// Item 7: one report names MuSiQue one way in every table: its hop splits under our
/// conventions (the EIR tables included), pooled under the EIR paper's; and the Support
/// F1 caption names the Holm family the table used, not a flag.
#[test]
fn every_table_of_a_report_names_datasets_alike() {
    let dir = tempfile::tempdir().unwrap();
    let model = replies(dir.path(), "r.json", &["{}".to_string()]);
    let out = dir.path().join("run");
    Eval::new("musique", fixture("musique"), "eir,direct", &model, &out).ok();
    let split = ok(&["report", out.to_str().unwrap(), "--baseline", "eir"]);
    let cells = dataset_cells(&split);
    assert!(
        cells.len() > 1 && cells.iter().all(|c| c.starts_with("musique_")),
        "{cells:?}"
    );
    assert!(split.contains("Support F1, paired"), "{split}");
    let pooled = ok(&[
        "report",
        out.to_str().unwrap(),
        "--baseline",
        "eir",
        "--conventions",
        "eir",
    ]);
    // One dataset left: the tables drop the column, or show `musique` alone.
    assert!(
        dataset_cells(&pooled).iter().all(|c| c == "musique"),
        "{pooled}"
    );
    assert!(!pooled.contains("musique_"), "{pooled}");
    let caption = pooled
        .lines()
        .skip_while(|l| !l.contains("Support F1, paired"))
        .find(|l| l.contains("paired bootstrap; Holm"))
        .unwrap_or_else(|| panic!("{pooled}"));
    assert!(
        caption.contains("Holm within each compared method across datasets and models")
            && !caption.contains("--holm"),
        "{caption}"
    );
}

/// Item 8: a confirmed fact citing a source is flagged on the trace page when no
/// earlier observation showed that source, also when every search came back empty.
#[test]
fn a_source_cited_after_empty_searches_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let memory = |fact: &str, action: &str| {
        format!(
            "Confirmed Facts:\n{fact}\nActive Hypotheses:\n- [H1] yes | confidence: low | supports: - | contradicts: -\n\
             Open Questions:\n- [Q1] anything | action: search | priority: high\nAction: {action}"
        )
    };
    let model = replies(
        dir.path(),
        "r.json",
        &[
            memory("- none", "search[qqxqzv wwvvkkj]"),
            memory(
                "- [F1] the answer is settled (source: Somewhere Unseen)",
                "finish[yes]",
            ),
        ],
    );
    let out = dir.path().join("run");
    Eval::new("hotpotqa", fixture("hotpotqa"), "sleuth", &model, &out)
        .opt("--limit", 1)
        .ok();
    let records = records_under(&out);
    let observations: Vec<&serde_json::Value> = records[0]["trace"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["observations"].as_array().into_iter().flatten())
        .collect();
    assert!(!observations.is_empty(), "the search ran");
    assert!(
        observations
            .iter()
            .all(|o| o["shown"].as_array().is_none_or(|s| s.is_empty())),
        "the search showed nothing: {observations:?}"
    );
    let html = dir.path().join("html");
    ok(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        "--out",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(html.join("trace.html")).unwrap();
    assert!(
        page.contains("(source: Somewhere Unseen)</span> <span class=\"badge unseen\""),
        "{page}"
    );
}

/// Smaller: a call that failed (timed out on every attempt) is one of the record's
/// calls, as it is one of the run's "model calls" in the closing summary.
#[test]
fn a_failed_call_is_counted_in_the_record() {
    use sleuth_testkit::{MockServer, Reply};
    let server = MockServer::spawn(|_| Reply::Hang(std::time::Duration::from_secs(5)));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = Eval::new(
        "hotpotqa",
        fixture("hotpotqa"),
        "react",
        &format!("openai-compat:{}#m", server.url()),
        &out,
    )
    .opt("--limit", 1)
    .opt("--timeout", 1)
    .opt("--attempts", 2)
    .output();
    let err = stderr(&o);
    let records = records_under(&out);
    let r = &records[0];
    assert!(r["error"].as_str().unwrap().contains("timed out"), "{r}");
    assert_eq!(
        (r["calls"].as_u64(), r["retries"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    assert!(err.contains("model calls 1 (retries 1"), "{err}");
}

/// Smaller: under `tool_channel=native`, replies that never carry a tool call (a
/// server whose template drops `tools`) are said once in the run's warnings.
#[test]
fn native_replies_without_calls_are_said_once() {
    use crate::agents::memory;
    use sleuth_testkit::{MockServer, Reply};
    let server = MockServer::spawn(|_| Reply::text(memory(1, "search[anything at all]")));
    let dir = tempfile::tempdir().unwrap();
    let o = Eval::new(
        "hotpotqa",
        fixture("hotpotqa"),
        "sleuth",
        &format!("openai-compat:{}#m", server.url()),
        dir.path().join("run"),
    )
    .set("tool_channel=native")
    .set("turns=3")
    .output();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("tool_channel=native: 3 replies came back without a tool call")
            .count(),
        1,
        "{err}"
    );
    // A server that does pass the tools gets no such warning (native_channel.rs runs
    // them); nor does the text channel, which sends no tools.
    let o = Eval::new(
        "hotpotqa",
        fixture("hotpotqa"),
        "sleuth",
        &format!("openai-compat:{}#m", server.url()),
        dir.path().join("text"),
    )
    .set("turns=3")
    .output();
    assert!(
        !stderr(&o).contains("without a tool call"),
        "{}",
        stderr(&o)
    );
}
