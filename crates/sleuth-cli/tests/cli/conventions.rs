//! Each paper's numbers computed each paper's way (issue 42): a report follows the
//! conventions its recipe names, or `--conventions`, and says which in its header.

use crate::util::{ok, Eval};
use serde_json::Value;
use sleuth_testkit::{MockServer, Reply};

/// Two methods on the four MuSiQue fixture questions (2, 2, 3 and 4 hops): SLEUTH
/// answers every gold, ReAct none, so their comparison is as lopsided as four questions
/// allow.
fn two_arms(dir: &std::path::Path) -> std::path::PathBuf {
    const GOLD: [(&str, &str); 4] = [
        ("Van Hook Township", "Stanley"),
        ("Susan Walker", "Lana Wood"),
        ("average yearly income", "$72,641"),
        ("sharing a border", "Green Bay"),
    ];
    let server = MockServer::spawn(move |req| {
        let system = req.body["messages"][0]["content"].as_str().unwrap_or("");
        let user = req.body["messages"][1]["content"].as_str().unwrap_or("");
        let gold = GOLD
            .iter()
            .find(|(q, _)| user.contains(q))
            .map_or("none", |g| g.1);
        let answer = match system.contains("Confirmed Facts") {
            true => gold,
            false => "a wrong guess",
        };
        Reply::text(format!("Thought: done.\nAction: finish[{answer}]"))
    });
    let out = dir.join("runs");
    let url = format!("openai-compat:{}#m", server.url());
    Eval::new(
        "musique",
        crate::golden::fixture("musique"),
        "react,sleuth",
        &url,
        &out,
    )
    .ok();
    out
}

fn report_json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(&[&["report", "--json"], args].concat())).unwrap()
}

fn datasets(report: &Value, key: &str) -> Vec<String> {
    let mut seen: Vec<String> = report["analysis"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["arm"]["dataset"].as_str().unwrap().to_string())
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

/// Item 1: under the EIR conventions MuSiQue is one benchmark (one summary row, one
/// comparison over every hop count); under SLEUTH's and ours, one per hop split. The
/// header says which rules made the numbers.
#[test]
fn the_eir_conventions_pool_musique_and_the_sleuth_ones_split_it() {
    let dir = tempfile::tempdir().unwrap();
    let runs = two_arms(dir.path());
    let runs = runs.to_str().unwrap();
    let eir = report_json(&[runs, "--baseline", "react", "--conventions", "eir"]);
    assert_eq!(datasets(&eir, "summaries"), ["musique"]);
    assert_eq!(datasets(&eir, "comparisons"), ["musique"]);
    assert_eq!(
        eir["analysis"]["comparisons"][0]["n"], 4,
        "all four hop counts"
    );
    for conventions in ["sleuth", "ours"] {
        let split = report_json(&[runs, "--baseline", "react", "--conventions", conventions]);
        assert_eq!(
            datasets(&split, "summaries"),
            ["musique_2hop", "musique_3hop", "musique_4hop"],
            "{conventions}"
        );
    }
    let printed = ok(&[
        "report",
        runs,
        "--baseline",
        "react",
        "--conventions",
        "eir",
    ]);
    assert!(
        printed.starts_with("_conventions: eir (the EIR paper's): MuSiQue pooled; Holm families: baseline; bootstrap p: add-one"),
        "{printed}"
    );
    // A flag sets one rule over the conventions.
    let split = report_json(&[
        runs,
        "--baseline",
        "react",
        "--conventions",
        "eir",
        "--musique",
        "splits",
    ]);
    assert_eq!(datasets(&split, "summaries").len(), 3);
}

/// Item 6: under the EIR conventions a bootstrap p is the add-one form 2(k+1)/(R+1), so
/// a comparison no resample crosses is never p = 0; ours keeps 2k/R.
#[test]
fn the_eir_conventions_never_print_a_bootstrap_p_of_zero() {
    let dir = tempfile::tempdir().unwrap();
    let runs = two_arms(dir.path());
    let runs = runs.to_str().unwrap();
    let p = |conventions: &str| -> f64 {
        let r = report_json(&[
            runs,
            "--baseline",
            "react",
            "--conventions",
            conventions,
            "--resamples",
            "999",
        ]);
        r["analysis"]["comparisons"][0]["em"]["p"]
            .as_f64()
            .unwrap_or_else(|| panic!("{}", r["analysis"]["comparisons"][0]))
    };
    let (eir, ours) = (p("eir"), p("ours"));
    assert!(eir > 0.0, "add-one p is never 0");
    assert_eq!(ours, 0.0, "every resample favours one side: 2k/R = 0");
    assert!((eir - 2.0 / 1000.0).abs() < 1e-12, "2(0+1)/(999+1): {eir}");
}

/// Every recipe names its paper's conventions: the EIR recipes `eir`, the SLEUTH ones
/// `sleuth`, ours (`beyond`) `ours` (an experiment's `experiment.json` carries them to
/// `sleuth report`).
#[test]
fn every_recipe_names_its_conventions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let recipe: toml::Value = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let expected = match name.as_str() {
            n if n.starts_with("eir-") => "eir",
            "beyond" => "ours",
            _ => "sleuth",
        };
        assert_eq!(recipe["conventions"].as_str(), Some(expected), "{name}");
        seen += 1;
    }
    assert!(seen >= 14, "{seen} recipes");
}
