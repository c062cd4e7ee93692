//! The report shaped like the papers (issue 30 items 9-10, issue 27 "Tables and figures"):
//! a recipe run with a scripted server on the fixture benchmarks, then `sleuth report`
//! on its output. The server answers by method, so every number is known in advance:
//! ReAct is right on HotpotQA only, Self-Ask never, Facts-Only everywhere but HotpotQA,
//! SLEUTH everywhere; every method searches once before it answers (Self-Ask's wrong
//! answers are markup, which every page must escape).

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

const HOSTILE: &str = "<b onmouseover=alert(1)>x</b>";

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
        // Self-Ask's wrong answer is markup: every page must show it, not run it.
        let said = match (right, method_of(req)) {
            (true, _) => answer,
            (false, "self-ask") => HOSTILE.into(),
            _ => "wrong guess".into(),
        };
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

/// `sleuth experiment RECIPE` against `server` on the fixture 2Wiki questions.
fn run_2wiki(dir: &Path, name: &str, recipe: &str, server: &MockServer) -> PathBuf {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, recipe).unwrap();
    let out = dir.join(name);
    let model = format!("openai-compat:{}#m", server.url());
    let data = format!("2wiki={}", crate::golden::fixture("2wiki").display());
    ok(&[
        "experiment",
        file.to_str().unwrap(),
        "--model",
        &model,
        "--data",
        &data,
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

fn last_user(req: &ReceivedRequest) -> String {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

fn prior_turns(req: &ReceivedRequest) -> usize {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

fn gold_of(req: &ReceivedRequest, gold: &HashMap<String, (String, String)>) -> String {
    let first_user = req.body["messages"][1]["content"].as_str().unwrap_or("");
    let q = first_user
        .strip_prefix("Question: ")
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("");
    gold.get(q).map_or("unknown".into(), |g| g.1.clone())
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
    let a = run_recipe(&dir_a, &one);
    let b = run_recipe(&dir_b, &two);
    let files = tmp.path().join("files");
    ok(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        files.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(files.join("figure2a_em_by_hops.svg")).unwrap();
    for server in [&one, &two] {
        for method in ["sleuth", "react"] {
            let name = format!("{method} (openai-compat:{}", server.url());
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

/// Issue 30 item 10: the index shows the recipe's tables in the paper's layout, and the
/// side-by-side page filters by "A right, B wrong", hop count and outcome, with every
/// string from the records escaped.
#[test]
fn the_html_index_shows_the_tables_and_the_questions_page_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let server = scripted_server();
    let out = run_recipe(tmp.path(), &server);
    let files = tmp.path().join("files");
    ok(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        "--out",
        files.to_str().unwrap(),
    ]);
    let index = std::fs::read_to_string(files.join("index.html")).unwrap();
    let t1 = index
        .find("<table class=\"paper\" id=\"table-sleuth_table1\">")
        .expect("Table 1 on the index");
    let t7 = index.find("id=\"table-sleuth_table7\"").unwrap();
    assert!(t1 < t7 && t7 < index.find("<h2>Trace pages</h2>").unwrap());
    assert!(index.contains("<th>HotpotQA (%)</th><th>MuSiQue 2-hop (%)</th>"));
    assert!(index.contains("<em>established baselines</em>"));
    assert!(index.contains("<td class=\"num\"><strong>100.0</strong></td>"));
    assert!(index.contains("+0.0 (react)"));
    assert!(
        index.contains("sleuth_table1.tex"),
        "the LaTeX file is linked"
    );

    let q = std::fs::read_to_string(files.join("questions.html")).unwrap();
    assert!(!q.contains(HOSTILE) && q.contains("&lt;b onmouseover=alert(1)&gt;x&lt;/b&gt;"));
    // One filter form per dataset table, naming the arms by position.
    assert_eq!(
        q.matches("<form class=\"filters qfilters\"").count(),
        3,
        "one per benchmark"
    );
    assert_eq!(q.matches("<table class=\"side\" id=\"side-").count(), 3);
    for select in ["a", "b", "hops", "outcome", "arm"] {
        assert!(
            q.contains(&format!("<select name=\"{select}\">")),
            "{select}"
        );
    }
    assert!(
        q.contains("<option value=\"0\">react</option>"),
        "arms in order"
    );
    assert!(q.contains("<option value=\"timeout\">timeout</option>"));
    let musique = &q[q.find("<h2>musique</h2>").unwrap()..];
    for hops in 2..=4 {
        assert!(musique.contains(&format!("<option value=\"{hops}\">{hops}</option>")));
    }
    // Rows carry each arm's result in the header's order (react, self-ask, sleuth,
    // facts-only) on HotpotQA: right, wrong, right, wrong.
    let hotpot = &q[q.find("<h2>hotpotqa</h2>").unwrap()..];
    assert!(hotpot.contains("<th>react</th><th>self-ask</th><th>sleuth</th><th>facts-only</th>"));
    assert!(
        hotpot.contains(
            "data-hops=\"2\" data-right=\"1 0 1 0\" data-outcome=\"correct other correct other\""
        ),
        "{hotpot}"
    );
    assert!(q.contains("<script>") && q.contains("qfilters"));
    // The script reads no record text: only data attributes and select values.
    let script = &q[q.rfind("<script>").unwrap()..];
    assert!(!script.contains("innerHTML") && !script.contains("textContent = d"));
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
