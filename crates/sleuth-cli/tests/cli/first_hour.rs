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
