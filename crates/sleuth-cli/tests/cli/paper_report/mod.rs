//! The report shaped like the papers (issue 30 items 9-10, issue 27 "Tables and figures"):
//! a recipe run with a scripted server on the fixture benchmarks, then `sleuth report`
//! on its output. The server answers by method, so every number is known in advance:
//! ReAct is right on HotpotQA only, Self-Ask never, Facts-Only everywhere but HotpotQA,
//! SLEUTH everywhere; every method searches once before it answers (Self-Ask's wrong
//! answers are markup, which every page must escape).

use crate::util::ok;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod adherence;
mod figures;
mod html;
mod tables;

/// Question text -> (dataset, gold answer) over the three fixture files.
pub(crate) fn fixture_gold() -> HashMap<String, (String, String)> {
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
pub(crate) fn method_of(req: &ReceivedRequest) -> &'static str {
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

pub(crate) const HOSTILE: &str = "<b onmouseover=alert(1)>x</b>";

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
    run_recipe_as(dir, server, "m")
}

/// [`run_recipe`] with the server's model called `model` (two names are two models in
/// a report; one model on two servers is one).
pub(crate) fn run_recipe_as(dir: &Path, server: &MockServer, model: &str) -> PathBuf {
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
    std::fs::write(&prices, format!("[{model}]\ninput = 1.0\noutput = 4.0\n")).unwrap();
    let out = dir.join("out");
    let model = format!("openai-compat:{}#{model}", server.url());
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
pub(crate) fn markdown_table<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    let start = text
        .find(&format!("### {title}"))
        .unwrap_or_else(|| panic!("no table {title} in {text}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect()
}

pub(crate) fn cells(line: &str) -> Vec<String> {
    line.trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// `sleuth experiment RECIPE` against `server` on the fixture 2Wiki questions.
pub(crate) fn run_2wiki(dir: &Path, name: &str, recipe: &str, server: &MockServer) -> PathBuf {
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

pub(crate) fn last_user(req: &ReceivedRequest) -> String {
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

pub(crate) fn prior_turns(req: &ReceivedRequest) -> usize {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

pub(crate) fn gold_of(req: &ReceivedRequest, gold: &HashMap<String, (String, String)>) -> String {
    let first_user = req.body["messages"][1]["content"].as_str().unwrap_or("");
    let q = first_user
        .strip_prefix("Question: ")
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("");
    gold.get(q).map_or("unknown".into(), |g| g.1.clone())
}
