//! The report shaped like the papers (issue 30 items 9-10, issue 27 "Tables and figures"):
//! a recipe run with a scripted server on the fixture benchmarks, then `sleuth report`
//! on its output. The server answers by method, so every number is known in advance:
//! ReAct is right on HotpotQA only, Self-Ask never, Facts-Only everywhere but HotpotQA,
//! SLEUTH everywhere; every method searches once before it answers.

use crate::util::{ok, sleuth, stderr, stdout};
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Question text -> (dataset, gold answer) over the three fixture files.
fn fixture_gold() -> HashMap<String, (String, String)> {
    let mut gold = HashMap::new();
    for d in ["hotpotqa", "musique", "2wiki"] {
        let text = std::fs::read_to_string(crate::golden::fixture(d)).unwrap();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            gold.insert(
                v["question"].as_str().unwrap().to_string(),
                (d.to_string(), v["answer"].as_str().unwrap().to_string()),
            );
        }
    }
    gold
}

/// Which method sent a request, read off its system prompt.
fn method_of(req: &ReceivedRequest) -> &'static str {
    let system = req.body["messages"][0]["content"].as_str().unwrap_or("");
    if system.contains("Active Hypotheses") {
        "sleuth"
    } else if system.contains("structured working memory") {
        "facts-only"
    } else if system.contains("sub-questions") {
        "self-ask"
    } else {
        "react"
    }
}

pub(crate) fn scripted_server() -> MockServer {
    let gold = fixture_gold();
    MockServer::spawn(move |req: &ReceivedRequest| {
        let first_user = req.body["messages"][1]["content"].as_str().unwrap_or("");
        let q = first_user
            .strip_prefix("Question: ")
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let (dataset, answer) = gold
            .get(q)
            .cloned()
            .unwrap_or_else(|| ("?".into(), "unknown".into()));
        let answered = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant");
        if !answered {
            return Reply::text("Thought: look it up.\nAction: search[the question]");
        }
        let right = match method_of(req) {
            "sleuth" => true,
            "facts-only" => dataset != "hotpotqa",
            "react" => dataset == "hotpotqa",
            _ => false,
        };
        let said = if right { answer } else { "wrong guess".into() };
        Reply::text(format!("Thought: done.\nAction: finish[{said}]"))
    })
}

/// The Table 1 recipe in small: two baselines, one ablation and SLEUTH on HotpotQA,
/// MuSiQue 2/3/4-hop and 2Wiki, T = 3; its report shows Tables 1 and 7.
pub(crate) fn run_recipe(dir: &Path, server: &MockServer) -> PathBuf {
    let recipe = dir.join("shape.toml");
    std::fs::write(
        &recipe,
        r#"name = "shape"
tables = ["sleuth_table1", "sleuth_table7"]
[settings]
turns = 3
[[datasets]]
name = "2wiki"
[[datasets]]
name = "musique"
hops = [2, 3, 4]
[[datasets]]
name = "hotpotqa"
[[groups]]
name = "memory"
methods = ["sleuth", "facts-only"]
settings = { nudge = 0.7, tau = 2 }
[[groups]]
name = "baselines"
methods = ["react", "self-ask"]
"#,
    )
    .unwrap();
    let prices = dir.join("prices.toml");
    std::fs::write(&prices, "[m]\ninput = 1.0\noutput = 4.0\n").unwrap();
    let out = dir.join("out");
    let model = format!("openai-compat:{}#m", server.url());
    let data: Vec<String> = ["hotpotqa", "musique", "2wiki"]
        .iter()
        .map(|d| format!("{d}={}", crate::golden::fixture(d).display()))
        .collect();
    ok(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        &model,
        "--prices",
        prices.to_str().unwrap(),
        "--data",
        &data[0],
        "--data",
        &data[1],
        "--data",
        &data[2],
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

/// The rows of the Markdown table titled `title` in `text` (header first).
fn markdown_table<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    let start = text
        .find(&format!("### {title}"))
        .unwrap_or_else(|| panic!("no table {title} in {text}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect()
}

fn cells(line: &str) -> Vec<String> {
    line.trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

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
