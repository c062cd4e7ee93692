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

/// Item 4: under the SLEUTH conventions Table 15 follows the paper's arithmetic (its
/// 4-hop rows sum to 100 with no Other column): every finished, wrong, non-verbose
/// answer is a reasoning error, and the table's note says so; ours keep App. J's
/// definitions (a partial match is Other). `--error-classes` sets the rule over either.
#[test]
fn the_sleuth_conventions_class_every_other_wrong_answer_as_reasoning() {
    use crate::sleuth_cold_read::{class_totals, scripted_errors};
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(scripted_errors);
    let model = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("musique");
    Eval::new(
        "musique",
        crate::golden::fixture("musique"),
        "react",
        &model,
        &out,
    )
    .opt("--limit", 4)
    .set("turns=2")
    .ok();
    let run = out.to_str().unwrap();
    let totals = |extra: &[&str]| class_totals(&report_json(&[&[run], extra].concat())["analysis"]);
    let sleuth = totals(&["--conventions", "sleuth"]);
    let ours = totals(&["--conventions", "ours"]);
    assert_eq!(sleuth["other"], 0, "{sleuth:?}");
    assert!(
        ours["other"] > 0,
        "the fixture has partial matches: {ours:?}"
    );
    assert_eq!(sleuth["reasoning"], ours["reasoning"] + ours["other"]);
    assert_eq!(
        ours,
        totals(&["--conventions", "sleuth", "--error-classes", "defined"])
    );
    let table = ok(&[
        "report",
        run,
        "--conventions",
        "sleuth",
        "--tables",
        "sleuth_table15",
    ]);
    assert!(
        table.contains("reasoning = every other wrong answer (no Other class"),
        "{table}"
    );
}

/// Item 9: EIR Table 19 totals calls and costs over all the questions (not per
/// question), the cost at the fixed list prices: a run answered wholly from the
/// response cache (billed 0) shows what its calls cost at list prices, summed.
#[test]
fn table_nineteen_totals_calls_and_list_costs_over_every_question() {
    use crate::eir_cold_read::{cell, table};
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "[m]\ninput = 1000.0\noutput = 3000.0\n").unwrap();
    let server = MockServer::spawn(crate::eir_cold_read3::read_once_then_submit);
    let url = format!("openai-compat:{}#m", server.url());
    let cache = dir.path().join("cache");
    let mut closing = Vec::new();
    for name in ["paid", "cached"] {
        let o = Eval::new(
            "musique",
            crate::golden::fixture("musique"),
            "eir,direct",
            &url,
            dir.path().join(name),
        )
        .opt("--prices", prices.display())
        .opt("--cache", cache.display())
        .output();
        assert!(o.status.success(), "{}", crate::util::stderr(&o));
        let err = crate::util::stderr(&o);
        closing.push(
            err.lines()
                .find(|l| l.starts_with("model calls"))
                .unwrap()
                .to_string(),
        );
    }
    // Item 2: eval's closing line says the billed cost, and the list-price cost beside
    // it where they differ (every call of the second run a cache hit, billed 0).
    assert!(!closing[0].contains("at list prices"), "{}", closing[0]);
    assert!(
        closing[1].contains("billed $0.0000 ($") && closing[1].ends_with(" at list prices)"),
        "{}",
        closing[1]
    );
    let cached = dir.path().join("cached");
    let records = crate::agents::read_records(&cached);
    let report = ok(&[
        "report",
        cached.to_str().unwrap(),
        "--conventions",
        "eir",
        "--tables",
        "eir_table19",
    ]);
    let (header, rows) = table(&report, "(EIR App. H.3, Table 19)");
    // The model's block heading is a row with only its first cell.
    let rows: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| !cell(&header, r, "benchmark").is_empty())
        .collect();
    assert_eq!(rows.len(), 2, "{report}");
    for row in rows {
        let method = cell(&header, row, "method");
        let of: Vec<&Value> = records
            .iter()
            .filter(|r| r["method"] == method.as_str())
            .collect();
        let sum = |key: &str| of.iter().map(|r| r[key].as_f64().unwrap()).sum::<f64>();
        assert_eq!(cell(&header, row, "questions"), of.len().to_string());
        assert_eq!(
            cell(&header, row, "benchmark"),
            "MuSiQue",
            "pooled under EIR's rules"
        );
        let calls: f64 = cell(&header, row, "calls")
            .trim_matches('*')
            .parse()
            .unwrap();
        let cost = cell(&header, row, "cost (USD, list prices)");
        assert_eq!(calls, sum("calls"), "{method}: total, not per question");
        assert!(
            sum("calls") > of.len() as f64,
            "more than one call a question"
        );
        assert_eq!(sum("cost_usd"), 0.0, "every call a cache hit");
        let cost: f64 = cost.parse().unwrap();
        assert!(
            cost > 0.0 && (cost - sum("list_cost_usd")).abs() < 0.006,
            "{method}: {cost}"
        );
    }
}

/// Item 11: EM and F1 count a gold answer's aliases (MuSiQue's `answer_aliases`) by
/// default, as the official scripts do; `report --aliases off` re-scores every record
/// against its first gold answer alone (the records' file untouched), and the header
/// says which was used.
#[test]
fn aliases_off_scores_against_the_first_gold_answer_alone_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("musique.jsonl");
    let fixture = std::fs::read_to_string(crate::golden::fixture("musique")).unwrap();
    let lines: Vec<String> = fixture
        .lines()
        .map(|l| {
            let mut q: Value = serde_json::from_str(l).unwrap();
            if q["answer"] == "Lana Wood" {
                q["answer_aliases"] = serde_json::json!(["Svetlana Gurdin"]);
            }
            q.to_string()
        })
        .collect();
    std::fs::write(&data, lines.join("\n") + "\n").unwrap();
    let server = MockServer::spawn(|req| {
        let user = req.body["messages"][1]["content"].as_str().unwrap_or("");
        let answer = match user.contains("Susan Walker") {
            true => "Svetlana Gurdin",
            false => "Stanley",
        };
        Reply::text(format!("Thought: done.\nAction: finish[{answer}]"))
    });
    let out = dir.path().join("run");
    let url = format!("openai-compat:{}#m", server.url());
    Eval::new("musique", &data, "react", &url, &out).ok();
    let records_file = out.join("records.jsonl");
    let before = std::fs::read(&records_file).unwrap();
    let run = out.to_str().unwrap();
    let em = |extra: &[&str]| -> f64 {
        let r = report_json(&[&[run, "--musique", "pooled"], extra].concat());
        r["analysis"]["summaries"][0]["em"].as_f64().unwrap()
    };
    // Stanley is right on its own question; the alias on Lana Wood's.
    assert_eq!(em(&[]), 50.0);
    assert_eq!(em(&["--aliases", "on"]), 50.0);
    assert_eq!(em(&["--aliases", "off"]), 25.0);
    assert_eq!(
        std::fs::read(&records_file).unwrap(),
        before,
        "records untouched"
    );
    let header = |extra: &[&str]| {
        ok(&[&["report", run], extra].concat())
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert!(
        header(&[]).contains("EM and F1 against gold answers and their aliases"),
        "{}",
        header(&[])
    );
    let off = header(&["--aliases", "off"]);
    assert!(
        off.contains("the first gold answer alone (--aliases off)"),
        "{off}"
    );
    let bad = crate::util::sleuth(&["report", run, "--aliases", "maybe"]);
    assert!(!bad.status.success());
    assert!(
        crate::util::stderr(&bad).contains("on, off"),
        "{}",
        crate::util::stderr(&bad)
    );
}

/// Item 7: a recipe's report commands are generated from its conventions, never written
/// by hand: each `[[reports]]` entry's Holm flags come from the rules of the paper tables
/// it names. EIR §4.4 applies Holm "separately to the groups defined in Appendices E, D,
/// G, and H": all 18 comparisons of Table 11, groups of four within each benchmark and
/// model (Table 13), groups of five per metric and model (Table 20), and elsewhere the
/// six comparisons of a baseline, the EIR conventions' own family (no flag). Every
/// recipe's dry run prints its commands; they agree with the ledger's Holm row and with
/// every report command experiments/README.md documents for that recipe.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn every_recipes_report_commands_follow_the_papers_holm_rules() {
    // (recipe, report) -> the Holm flags the paper's words give it; none elsewhere.
    const FLAGGED: [(&str, &str, &str); 4] = [
        ("eir-reads", "Tables 10-11, Figure 6", "--holm-family all"),
        (
            "eir-controls",
            "Table 13",
            "--holm-family dataset --holm-size 4",
        ),
        (
            "eir-corpus",
            "Tables 3, 19, 20",
            "--holm-family dataset --holm-size 5",
        ),
        (
            "cross-model",
            "Table 3: cross-model",
            "--holm-family dataset",
        ),
    ];
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let index = crate::util::musique_index(dir.path());
    let mut generated: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(repo.join("experiments"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "toml").then_some(stem)
        })
        .collect();
    names.sort();
    for name in &names {
        let recipe = repo.join(format!("experiments/{name}.toml"));
        let mut args = vec![
            "experiment".to_string(),
            recipe.display().to_string(),
            "--model".into(),
            "openai-compat:http://127.0.0.1:9#m".into(),
            "--dry-run".into(),
            "--index".into(),
            index.display().to_string(),
        ];
        args.extend(crate::util::recipe_data());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let plan = ok(&args);
        let lines: Vec<&str> = plan
            .lines()
            .filter(|l| l.starts_with("sleuth report "))
            .collect();
        assert!(
            !lines.is_empty(),
            "{name}: no report command in its dry run:\n{plan}"
        );
        for line in lines {
            let (command, about) = line.split_once("  # ").unwrap();
            let words = crate::sleuth_paper::shell_words(command);
            assert_eq!(words[2], format!("runs/{name}"), "{line}");
            let holm: Vec<&str> = words
                .iter()
                .position(|w| w == "--holm-family")
                .map_or(Vec::new(), |i| {
                    words[i..].iter().map(String::as_str).collect()
                });
            let want = FLAGGED
                .iter()
                .find(|(r, a, _)| r == name && *a == about)
                .map_or("", |f| f.2);
            assert_eq!(holm.join(" "), want, "{name}, {about}: {line}");
            generated.push((name.clone(), about.to_string(), words));
        }
    }
    for (recipe, about, _) in FLAGGED {
        assert!(
            generated.iter().any(|(r, a, _)| r == recipe && a == about),
            "{recipe} has no report `{about}`"
        );
    }
    // The ledger's Holm row states the same flags per table.
    let ledger = std::fs::read_to_string(repo.join("docs/fidelity/eir.md")).unwrap();
    let row = ledger
        .lines()
        .find(|l| l.contains("every_recipes_report_commands_follow_the_papers_holm_rules"))
        .expect("a ledger row names this test");
    for stated in [
        "Table 11: `--holm-family all`",
        "Table 13: `--holm-family dataset --holm-size 4`",
        "Table 20: `--holm-family dataset --holm-size 5`",
    ] {
        assert!(
            row.contains(stated),
            "the ledger row does not say {stated}: {row}"
        );
    }
    // experiments/README.md: a documented command with a recipe's baseline takes the
    // Holm family that recipe's generated command gives (its conventions' default when
    // it names none).
    let readme = std::fs::read_to_string(repo.join("experiments/README.md")).unwrap();
    let flag = |words: &[String], name: &str| -> Option<String> {
        let i = words.iter().position(|w| w == name)?;
        words.get(i + 1).cloned()
    };
    let mut checked = 0;
    for span in readme.split('`').skip(1).step_by(2) {
        let Some(rest) = span.strip_prefix("sleuth report runs/") else {
            continue;
        };
        let recipe = rest.split(['/', ' ']).next().unwrap();
        let words = crate::sleuth_paper::shell_words(span);
        let conventions: toml::Value = toml::from_str(
            &std::fs::read_to_string(repo.join(format!("experiments/{recipe}.toml"))).unwrap(),
        )
        .unwrap();
        let default = match conventions["conventions"].as_str().unwrap() {
            "eir" => "baseline",
            "sleuth" => "arm",
            _ => "all",
        };
        let rule = |w: &[String]| {
            (
                flag(w, "--holm-family").unwrap_or_else(|| default.to_string()),
                flag(w, "--holm-size").unwrap_or_else(|| "0".into()),
            )
        };
        let same_baseline: Vec<&Vec<String>> = generated
            .iter()
            .filter(|(r, _, w)| r == recipe && flag(w, "--baseline") == flag(&words, "--baseline"))
            .map(|(_, _, w)| w)
            .collect();
        if same_baseline.is_empty() {
            continue;
        }
        assert!(
            same_baseline.iter().any(|w| rule(w) == rule(&words)),
            "experiments/README.md: `{span}` takes {:?}; the recipe's commands: {same_baseline:?}",
            rule(&words)
        );
        checked += 1;
    }
    assert!(checked >= 10, "{checked} README commands checked");
}
