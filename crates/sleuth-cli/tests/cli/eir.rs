//! Integration tests: the EIR-setting methods through `sleuth eval`, on real MuSiQue
//! questions, against a local OpenAI-compatible server that answers each kind of call
//! (EIR action, final answer, Direct action, SSR decomposition and verification,
//! Reflexion's reflection) by recognising its prompt.

use crate::util::{musique, Eval};
use serde_json::{json, Value};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

/// The first unread title listed in an action prompt.
fn first_unread(prompt: &str) -> String {
    let after = prompt.split("Unread titles:\n").nth(1).unwrap_or("");
    after
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("- "))
        .unwrap_or("anything")
        .to_string()
}

fn turn(prompt: &str) -> u32 {
    prompt
        .split("Turn ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

pub(crate) fn reply(req: &ReceivedRequest) -> Reply {
    let p = req.last_message().unwrap_or("").to_string();
    let text = if p.contains("You are collecting evidence") {
        if turn(&p) == 1 {
            json!({"reasoning": "CANARY-REASONING", "requirements": [], "conclusions": [],
                "action": {"type": "read", "title": first_unread(&p)}})
        } else {
            json!({"reasoning": "enough", "requirements": [], "conclusions": [],
                "action": {"type": "submit", "answer": "RETRIEVAL-ANSWER"}})
        }
        .to_string()
    } else if p.contains("Answer the question from the evidence below") {
        // Retrieval-time reasoning or answers reaching the final call show in the answer.
        let leaked = p.contains("CANARY-REASONING") || p.contains("RETRIEVAL-ANSWER");
        let answer = if leaked { "LEAKED" } else { "FINAL-ANSWER" };
        json!({"answer": answer, "evidence": []}).to_string()
    } else if p.contains("Split the proposal into three parts") {
        json!({"facts": "f", "justification": "j", "action": "a"}).to_string()
    } else if p.contains("Check one part") {
        json!({"verdict": "accept", "correction": ""}).to_string()
    } else if p.contains("and it did not succeed") {
        "Read a different paragraph next time.".to_string()
    } else if turn(&p) == 1 {
        json!({"reasoning": "r", "action": {"type": "read", "title": first_unread(&p)}}).to_string()
    } else {
        json!({"reasoning": "r", "action": {"type": "submit", "answer": "DIRECT-ANSWER"}})
            .to_string()
    };
    Reply::text(text)
}

fn records(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("records.jsonl"))
        .expect("records.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn eval_runs_every_eir_setting_method_and_records_calls_by_kind() {
    let server = MockServer::spawn(reply);
    let out = tempfile::tempdir().unwrap();
    let model = format!("openai-compat:{}#m", server.url());
    let methods = "eir,direct,full-pool,ssr,eir-reflexion";
    Eval::new("musique", musique(), methods, &model, out.path())
        .opt("--limit", 2)
        .ok();
    let records = records(out.path());
    assert_eq!(records.len(), 10, "5 methods x 2 questions");
    // The report's EIR table: one row per method, means of what the records carry.
    let report = crate::util::ok(&["report", out.path().to_str().unwrap()]);
    let table = report
        .split("### Evidence and rejected actions (EIR setting)")
        .nth(1)
        .unwrap_or_else(|| panic!("no evidence table in:\n{report}"));
    let full_pool = table
        .lines()
        .find(|l| l.starts_with("| full-pool"))
        .unwrap_or_else(|| panic!("no full-pool row in:\n{table}"));
    let mean_read: f64 = records
        .iter()
        .filter(|r| r["method"] == "full-pool")
        .map(|r| r["retrieved"].as_array().unwrap().len() as f64)
        .sum::<f64>()
        / 2.0;
    assert!(
        full_pool.contains(&format!(" {mean_read:.2} |")) && !full_pool.contains("-0.00"),
        "{full_pool}"
    );
    for r in &records {
        let kinds = &r["calls_by_kind"];
        match r["method"].as_str().unwrap() {
            "eir" => {
                assert_eq!(kinds, &json!({"action": 2, "final": 1}));
                assert_eq!(r["answer"], "FINAL-ANSWER");
                assert_eq!(
                    r["outputs"]["final_call"]["retrieval_answer"],
                    "RETRIEVAL-ANSWER"
                );
                assert_eq!(r["retrieved"].as_array().unwrap().len(), 1);
            }
            "direct" => {
                assert_eq!(kinds, &json!({"action": 2}));
                assert_eq!(r["answer"], "DIRECT-ANSWER");
            }
            "full-pool" => {
                assert_eq!(kinds, &json!({"final": 1}));
                assert_eq!(
                    r["retrieved"].as_array().unwrap().len(),
                    20,
                    "MuSiQue pools hold 20"
                );
            }
            "ssr" => assert_eq!(
                kinds,
                &json!({"action": 2, "decomposition": 2, "verification": 18})
            ),
            "eir-reflexion" => {
                assert_eq!(kinds, &json!({"action": 10, "reflection": 4}));
                assert_eq!(r["outputs"]["attempts"].as_array().unwrap().len(), 5);
                assert_eq!(r["first_attempt"]["answer"], "DIRECT-ANSWER");
            }
            other => panic!("unexpected method {other}"),
        }
        assert!(r["support_f1"].is_number(), "{r}");
    }
}
