//! The paper tables of a recipe's report: which, in what order and layout, and in
//! which files (Markdown, CSV, booktabs LaTeX).

use super::*;
use crate::util::{ok, sleuth, stderr, stdout};
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

#[test]
fn a_recipes_report_shows_its_tables_in_the_papers_order_and_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let server = scripted_server();
    let out = run_recipe(tmp.path(), &server);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("experiment.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["tables"],
        serde_json::json!(["sleuth_table1", "sleuth_table7"])
    );
    let text = ok(&["report", out.to_str().unwrap()]);
    // Only the recipe's tables, Table 1 before Table 7.
    let t1 = text
        .find("Exact match per benchmark (SLEUTH §5.1, Table 1)")
        .unwrap();
    let t7 = text.find("(SLEUTH App. C, Table 7)").unwrap();
    assert!(t1 < t7, "{text}");
    assert!(!text.contains("Agent behaviour"), "not every table: {text}");
    assert!(text.matches("### ").count() == 2, "{text}");

    let rows = markdown_table(&text, "Exact match per benchmark (SLEUTH §5.1, Table 1)");
    // Datasets in the paper's column order, whatever order the recipe gave, with units.
    assert_eq!(
        cells(rows[0]),
        [
            "method",
            "HotpotQA (%)",
            "MuSiQue 2-hop (%)",
            "MuSiQue 3-hop (%)",
            "MuSiQue 4-hop (%)",
            "2Wiki (%)"
        ]
    );
    let body: Vec<Vec<String>> = rows[2..].iter().map(|l| cells(l)).collect();
    let first: Vec<&str> = body.iter().map(|r| r[0].as_str()).collect();
    // Blocks in the paper's order: external baselines, ablations, SLEUTH, then Δ.
    assert_eq!(
        first,
        [
            "*established baselines*",
            "react",
            "self-ask",
            "*working-memory ablations*",
            "facts-only",
            "*SLEUTH*",
            "sleuth",
            "*Δ over the strongest external baseline*",
            "Δ sleuth − best external",
        ],
        "{text}"
    );
    let row = |name: &str| body.iter().find(|r| r[0] == name).unwrap().clone();
    // Best per column in bold: ReAct ties SLEUTH on HotpotQA only.
    assert_eq!(row("react")[1..], ["**100.0**", "0.0", "0.0", "0.0", "0.0"]);
    assert_eq!(row("self-ask")[1..], ["0.0"; 5]);
    assert_eq!(
        row("facts-only")[1..],
        ["0.0", "**100.0**", "**100.0**", "**100.0**", "**100.0**"]
    );
    assert_eq!(row("sleuth")[1..], ["**100.0**"; 5]);
    // Δ against the strongest external baseline per benchmark, which it names.
    let delta = row("Δ sleuth − best external");
    assert_eq!(delta[1], "+0.0 (react)");
    assert_eq!(
        delta[2..],
        ["+100.0 (react)"; 4],
        "ties name the first baseline"
    );

    // Table 7: tool calls per question, cost relative to ReAct, per benchmark block.
    let rows = markdown_table(
        &text,
        "Tokens and tool calls per question, cost relative to ReAct (SLEUTH App. C, Table 7)",
    );
    assert_eq!(
        cells(rows[0]),
        [
            "method",
            "tokens/q",
            "tool calls/q",
            "model calls/q",
            "cost/q (USD)",
            "cost vs ReAct (×)"
        ]
    );
    let body: Vec<Vec<String>> = rows[2..].iter().map(|l| cells(l)).collect();
    assert_eq!(body[0][0], "*HotpotQA*");
    assert_eq!(body.iter().filter(|r| r[0].starts_with('*')).count(), 5);
    let react = &body[1];
    assert_eq!(react[0], "react");
    assert_eq!(react[2], "1.00", "one search per question");
    assert_eq!(react[3], "2.00", "a search turn and an answer turn");
    assert_eq!(react[5], "1.00×");
    let sleuth_row = body.iter().find(|r| r[0] == "sleuth").unwrap();
    let ratio: f64 = sleuth_row[5].trim_end_matches('×').parse().unwrap();
    assert!(
        ratio > 1.0,
        "SLEUTH's longer prompt costs more: {sleuth_row:?}"
    );
}

#[test]
fn tables_chooses_what_the_report_shows_and_all_shows_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let server = scripted_server();
    let out = run_recipe(tmp.path(), &server);
    let dir = out.to_str().unwrap();
    let only7 = ok(&["report", dir, "--tables", "sleuth_table7"]);
    assert_eq!(only7.matches("### ").count(), 1, "{only7}");
    assert!(only7.contains("Table 7)"));
    let two = ok(&["report", dir, "--tables", "summary,sleuth_table8"]);
    let (s, t8) = (
        two.find("### Accuracy and cost per method").unwrap(),
        two.find("### Timeout decomposition").unwrap(),
    );
    assert!(s < t8, "in the order asked: {two}");
    let all = ok(&["report", dir, "--tables", "all"]);
    for title in [
        "Agent behaviour",
        "Exact match per benchmark",
        "Error decomposition",
    ] {
        assert!(all.contains(title), "{title}: {all}");
    }
    let bad = sleuth(&["report", dir, "--tables", "table99"]);
    assert!(!bad.status.success());
    let err = stderr(&bad);
    assert!(
        err.contains("unknown table `table99`") && err.contains("sleuth_table1"),
        "{err}"
    );
    assert!(stdout(&bad).is_empty());
}

#[test]
fn each_shown_table_is_written_as_markdown_csv_and_booktabs_latex() {
    let tmp = tempfile::tempdir().unwrap();
    let server = scripted_server();
    let out = run_recipe(tmp.path(), &server);
    let files = tmp.path().join("files");
    ok(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        files.to_str().unwrap(),
    ]);
    let read = |name: &str| std::fs::read_to_string(files.join(name)).unwrap();
    let md = read("sleuth_table1.md");
    assert!(md.starts_with("### Exact match per benchmark"), "{md}");
    let tex = read("sleuth_table1.tex");
    // Well-formed: environments balanced, booktabs rules in order, one midrule after
    // the header and one between each pair of the four blocks.
    for env in ["table", "tabular"] {
        assert_eq!(
            tex.matches(&format!("\\begin{{{env}}}")).count(),
            1,
            "{tex}"
        );
        assert_eq!(tex.matches(&format!("\\end{{{env}}}")).count(), 1, "{tex}");
    }
    let (top, bottom) = (
        tex.find("\\toprule").unwrap(),
        tex.find("\\bottomrule").unwrap(),
    );
    assert!(top < bottom);
    assert_eq!(tex.matches("\\midrule").count(), 4, "{tex}");
    assert!(tex.contains("\\begin{tabular}{lrrrrr}"), "{tex}");
    // Every row has the header's six cells; text is escaped.
    let rows: Vec<&str> = tex.lines().filter(|l| l.ends_with("\\\\")).collect();
    assert_eq!(rows.len(), 1 + 5, "header and five rows: {tex}");
    assert!(rows.iter().all(|r| r.matches(" & ").count() == 5), "{tex}");
    assert!(rows[0].contains("HotpotQA (\\%)"), "{tex}");
    assert!(
        tex.contains("sleuth & \\textbf{100.0} & \\textbf{100.0}"),
        "{tex}"
    );
    assert!(tex.contains("$\\Delta$ sleuth"), "{tex}");
    assert!(
        tex.contains("\\label{tab:sleuth-table1}") && tex.contains("(SLEUTH \\S{}5.1, Table 1)"),
        "{tex}"
    );
    assert!(
        !tex.contains("(%)"),
        "an unescaped % would comment out the rest: {tex}"
    );
    // The tidy CSV: a block column, one key per benchmark, full-precision numbers.
    let csv = read("sleuth_table1.csv");
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "block,method,hotpotqa,musique_2hop,musique_3hop,musique_4hop,2wiki"
    );
    assert!(
        csv.contains("established baselines,react,100,0,0,0,0"),
        "{csv}"
    );
    assert!(read("sleuth_table7.tex").contains("\\toprule"));
    assert!(read("sleuth_table7.csv")
        .lines()
        .next()
        .unwrap()
        .contains("cost_vs_react"));
}

/// SLEUTH Table 11: the report picks, per turn budget, SLEUTH's best nudge from the
/// sweep. The server's SLEUTH is right only when nudged at its second turn, so at T = 2
/// α = 0.7 (⌈1.4⌉ = 2) wins and at T = 4 α = 0.5 (⌈2⌉ = 2) does; α = 0.5 at T = 2
/// nudges at turn 1 and α = 0.7 at T = 4 at turn 3, both wrong. ReAct is always wrong.
#[test]
fn table_11_chooses_the_best_nudge_per_budget_from_the_sweep() {
    let gold = fixture_gold();
    let server = MockServer::spawn(move |req: &ReceivedRequest| {
        let said = if method_of(req) == "sleuth" && last_user(req).contains("Stop searching now") {
            if prior_turns(req) == 1 {
                gold_of(req, &gold)
            } else {
                "too early or too late".into()
            }
        } else if method_of(req) == "react" && prior_turns(req) > 0 {
            "wrong guess".into()
        } else {
            return Reply::text("Thought: look.\nAction: search[the question]");
        };
        Reply::text(format!("Thought: done.\nAction: finish[{said}]"))
    });
    let tmp = tempfile::tempdir().unwrap();
    let out = run_2wiki(
        tmp.path(),
        "budget",
        r#"name = "budget"
tables = ["sleuth_table11"]
[[datasets]]
name = "2wiki"
[[groups]]
name = "react"
methods = ["react"]
grid = { turns = [2, 4] }
[[groups]]
name = "sleuth"
methods = ["sleuth"]
settings = { tau = 0 }
grid = { turns = [2, 4], nudge = [0.5, 0.7] }
"#,
        &server,
    );
    let text = ok(&["report", out.to_str().unwrap()]);
    let rows = markdown_table(
        &text,
        "Effect of the turn budget, best nudge turn per budget (SLEUTH App. F, Table 11)",
    );
    assert_eq!(
        cells(rows[0]),
        [
            "turns",
            "ReAct EM (%)",
            "SLEUTH EM (%)",
            "SLEUTH's best arm",
            "nudge turn",
            "Δ (points)"
        ]
    );
    let body: Vec<Vec<String>> = rows[3..].iter().map(|l| cells(l)).collect();
    assert_eq!(body.len(), 2, "{text}");
    assert_eq!(body[0][0], "2");
    assert_eq!(body[0][1..3], ["0.0", "**100.0**"]);
    assert!(body[0][3].contains("nudge=0.7"), "{text}");
    assert_eq!(body[0][4..], ["2", "+100.0"]);
    assert_eq!(body[1][0], "4");
    assert!(body[1][3].contains("nudge=0.5"), "{text}");
    assert_eq!(body[1][4..], ["2", "+100.0"]);
}

/// SLEUTH App. A, Table 5: `data stats` gives question and answer lengths.
#[test]
fn data_stats_gives_question_and_answer_lengths() {
    let path = crate::golden::fixture("hotpotqa");
    let text = ok(&[
        "data",
        "stats",
        "--dataset",
        "hotpotqa",
        "--data",
        path.to_str().unwrap(),
    ]);
    // "Were Scott Derrickson and Ed Wood of the same nationality?" (9 words) and the
    // second fixture question; answers "yes" (1) and "Chief of Protocol" (3).
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .to_string()
    };
    assert!(
        line("answer tokens").contains("mean 2.00  min 1  max 3"),
        "{text}"
    );
    assert!(line("question tokens").contains("min 10  max 18"), "{text}");
    let json = ok(&[
        "data",
        "stats",
        "--dataset",
        "hotpotqa",
        "--data",
        path.to_str().unwrap(),
        "--json",
    ]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["answer_tokens"]["total"], 4);
}

/// SLEUTH Tables 13 and 14 read SLEUTH minus ReAct whichever of the two is the
/// baseline: with `--baseline sleuth` (the Table 1 report's) the comparison rows are
/// ReAct minus SLEUTH, and the tables turn them around.
#[test]
fn tables_13_and_14_read_sleuth_against_react_from_either_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let server = scripted_server();
    let out = run_recipe(tmp.path(), &server);
    for baseline in ["sleuth", "react"] {
        let text = ok(&[
            "report",
            out.to_str().unwrap(),
            "--baseline",
            baseline,
            "--tables",
            "sleuth_table13,sleuth_table14",
        ]);
        let t13 = markdown_table(
            &text,
            "Bootstrap 95% intervals, SLEUTH − ReAct EM (SLEUTH App. G, Table 13)",
        );
        let rows: Vec<Vec<String>> = t13[2..].iter().map(|l| cells(l)).collect();
        assert_eq!(rows.len(), 5, "{text}");
        assert_eq!(
            rows[0][..3],
            ["HotpotQA", "2", "+0.0"],
            "{baseline}: {text}"
        );
        assert_eq!(
            rows[1][..4],
            ["MuSiQue 2-hop", "2", "+100.0", "[+100.0, +100.0]"],
            "{baseline}: {text}"
        );
        let t14 = markdown_table(
            &text,
            "Per-question outcomes, SLEUTH vs ReAct (SLEUTH App. H, Table 14)",
        );
        let rows: Vec<Vec<String>> = t14[2..].iter().map(|l| cells(l)).collect();
        assert_eq!(
            rows[0],
            ["HotpotQA", "2", "0", "0", "2", "0"],
            "{baseline}: {text}"
        );
        assert_eq!(
            rows[1],
            ["MuSiQue 2-hop", "2", "2", "0", "0", "0"],
            "{baseline}: {text}"
        );
    }
}
