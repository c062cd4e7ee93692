//! SLEUTH Table 4 (§5.5) through the binary: the adherence recipe's two SLEUTH arms
//! (enforcement off and on) beside ReAct, with a server that writes the notation only
//! when the prompt carries the enforced delimiters, and answers right only then.

use super::{cells, fixture_gold, markdown_table};
use crate::util::ok;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

const ENFORCED_MEMORY: &str = "=== WORKING MEMORY ===\nConfirmed Facts:\n- None yet.\nActive Hypotheses:\n- None yet.\nOpen Questions:\n- [Q1] Who is it? | action: the question | priority: high\n=== END WORKING MEMORY ===";

fn server() -> MockServer {
    let gold = fixture_gold();
    MockServer::spawn(move |req: &ReceivedRequest| {
        let system = req.body["messages"][0]["content"].as_str().unwrap_or("");
        let first_user = req.body["messages"][1]["content"].as_str().unwrap_or("");
        let q = first_user
            .strip_prefix("Question: ")
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let answer = gold.get(q).map_or("unknown".to_string(), |g| g.1.clone());
        let answered = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant");
        let enforced = system.contains("=== WORKING MEMORY");
        let memory = if enforced {
            ENFORCED_MEMORY
        } else {
            "Thought: go on."
        };
        let action = match (answered, enforced) {
            (false, _) => "search[the question]".to_string(),
            (true, true) => format!("finish[{answer}]"),
            (true, false) => "finish[wrong guess]".to_string(),
        };
        Reply::text(format!("{memory}\nAction: {action}"))
    })
}

/// Table 4 shows each arm's EM and share of adherent turns per MuSiQue split, and the
/// enforced-minus-unenforced difference; it is not Table 1's layout.
#[test]
fn table_4_sets_the_enforced_arm_against_the_unenforced_one_per_split() {
    let tmp = tempfile::tempdir().unwrap();
    let server = server();
    let recipe = tmp.path().join("adherence.toml");
    std::fs::write(
        &recipe,
        r#"name = "adherence-small"
tables = ["sleuth_table4"]
[settings]
turns = 3
[[datasets]]
name = "musique"
hops = [2, 3, 4]
[[groups]]
name = "react"
methods = ["react"]
[[groups]]
name = "sleuth"
methods = ["sleuth"]
settings = { nudge = 0.7, tau = 2 }
grid = { enforce = [false, true] }
"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let model = format!("openai-compat:{}#m", server.url());
    let data = format!("musique={}", crate::golden::fixture("musique").display());
    ok(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        &model,
        "--data",
        &data,
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = ok(&["report", out.to_str().unwrap()]);
    let t4 = markdown_table(
        &text,
        "Effect of protocol adherence, EM and adherent turns (SLEUTH §5.5, Table 4)",
    );
    let header = cells(t4[0]);
    assert_eq!(
        header[..4],
        [
            "method",
            "enforcement",
            "MuSiQue 2-hop EM (%)",
            "MuSiQue 2-hop adherent turns (%)"
        ],
        "{text}"
    );
    assert_eq!(header.len(), 2 + 2 * 3, "{text}");
    let rows: Vec<Vec<String>> = t4[2..].iter().map(|l| cells(l)).collect();
    let row = |enforcement: &str, method: &str| {
        rows.iter()
            .find(|r| r[1] == enforcement && r[0].contains(method))
            .unwrap_or_else(|| panic!("no {method} row with enforcement {enforcement}: {text}"))
            .clone()
    };
    let three = |v: &str| vec![v.to_string(); 3];
    let off = row("off", "sleuth");
    let on = row("on", "sleuth");
    let react = row("-", "react");
    let em = |r: &[String]| vec![r[2].clone(), r[4].clone(), r[6].clone()];
    let adherent = |r: &[String]| vec![r[3].clone(), r[5].clone(), r[7].clone()];
    assert_eq!(em(&off), three("0.0"), "{text}");
    assert_eq!(adherent(&off), three("0.0"), "{text}");
    assert_eq!(em(&on), three("100.0"), "{text}");
    assert_eq!(adherent(&on), three("100.0"), "{text}");
    assert_eq!(em(&react), three("0.0"), "{text}");
    assert_eq!(adherent(&react), three("-"), "{text}");
    let delta = row("on − off", "Δ");
    assert_eq!(em(&delta), three("+100.0"), "{text}");
    assert_eq!(adherent(&delta), three("+100.0"), "{text}");
}
