//! Integration tests: the open-corpus setting end to end — a corpus built from the
//! benchmark files, a BM25 index, and agents of both families searching it.

use crate::agents::read_records;
use crate::util::*;
use sleuth_testkit::{MockServer, Reply};

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn both_method_families_search_a_bm25_index_built_from_real_paragraphs() {
    let dir = tempfile::tempdir().unwrap();
    let index = crate::util::musique_index(dir.path());
    let data = musique();

    // Search, then read the first listed id, then answer.
    let server = MockServer::spawn(|req| {
        let last = req.last_message().unwrap_or("");
        let turn = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        let first_id = last
            .split("[id ")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .map(str::to_string);
        Reply::text(match (turn, first_id) {
            (0, _) => "Thought: search first.\nAction: search[Mountrail County Courthouse Stanley]"
                .to_string(),
            (1, Some(id)) => format!("Thought: read it.\nAction: read[{id}]"),
            _ => "Thought: done.\nAction: finish[Stanley]".to_string(),
        })
    });
    let url = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("run");
    Eval::new("musique", &data, "react,sleuth,eir,direct", &url, &out)
        .opt("--limit", 2)
        .opt("--env", "corpus")
        .opt("--index", index.display())
        .ok();
    let records = read_records(&out);
    assert_eq!(records.len(), 8);
    assert!(records.iter().all(|r| r["error"].is_null()), "{records:?}");
    let react = records.iter().find(|r| r["method"] == "react").unwrap();
    assert_eq!(react["answer"], "Stanley");
    assert_eq!(
        react["retrieved"].as_array().unwrap().len(),
        1,
        "one paragraph read by id"
    );
    let first_obs = react["trace"][0]["observations"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        first_obs.contains("[id ") && !first_obs.contains("served Mountrail County"),
        "titles and ids only: {first_obs}"
    );
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(config["env"], "corpus");
    // The corpus budget is the default there, recorded with every resolved setting.
    assert_eq!(config["method_settings"]["react"]["turns"], "12");
    assert_eq!(
        config["method_settings"]["react"]["last_turn_answer_only"],
        "true"
    );
    assert_eq!(react["settings"]["turns"], "12");

    let o = Eval::new("musique", &data, "react", &url, &out)
        .opt("--env", "corpus")
        .output();
    assert!(
        stderr(&o).contains("--env corpus needs --index"),
        "{}",
        stderr(&o)
    );
}
