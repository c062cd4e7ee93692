//! `sleuth score` on 2WikiMultiHopQA as `2wikimultihop_evaluate_v1.1.py` scores it: the
//! answer against its `id_aliases.json` names, the evidence triples against every alias
//! spelling, and the joint metric of answer x support x evidence. Gold rows are real
//! (from the shared subset), the aliases and predictions are written here.

use crate::util::{self, ok};
use serde_json::{json, Value};
use std::path::Path;

fn score(data: &Path, predictions: &Path) -> Value {
    serde_json::from_str(&ok(&[
        "score",
        "--data",
        data.to_str().unwrap(),
        "--predictions",
        predictions.to_str().unwrap(),
        "--json",
    ]))
    .unwrap()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn answers_and_evidence_are_scored_through_id_aliases() {
    let all: Vec<Value> = std::fs::read_to_string(util::twowiki())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // A: any row; B: a row whose evidence names entity ids; C, D: two more.
    let b = all
        .iter()
        .find(|r| !r["evidences_id"].as_array().unwrap().is_empty())
        .unwrap()
        .clone();
    let others: Vec<Value> = all
        .iter()
        .filter(|r| r["_id"] != b["_id"])
        .take(3)
        .cloned()
        .collect();
    let (a, c, d) = (&others[0], &others[1], &others[2]);
    let rows = vec![a.clone(), b.clone(), c.clone(), d.clone()];
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("dev.json");
    std::fs::write(&data, serde_json::to_vec(&rows).unwrap()).unwrap();

    let subject_id = b["evidences_id"][0][0].as_str().unwrap();
    let id = |r: &Value| r["_id"].as_str().unwrap().to_string();
    let mut b_evidence = b["evidences"].clone();
    b_evidence[0][0] = json!("Another Name, Of The Subject");
    let predictions = dir.path().join("pred.json");
    std::fs::write(
        &predictions,
        json!({
            "answer": {id(a): "An Alias Of A's Answer", id(&b): b["answer"], id(c): "certainly wrong"},
            "sp": {id(a): a["supporting_facts"], id(&b): b["supporting_facts"], id(c): c["supporting_facts"]},
            "evidence": {id(a): a["evidences"], id(&b): b_evidence, id(c): []},
        })
        .to_string(),
    )
    .unwrap();

    // Without id_aliases.json: A's answer and B's first triple do not match.
    let s = score(&data, &predictions);
    assert_eq!(s["dataset"], "2wiki");
    assert_eq!(s["em"], 25.0);
    assert_eq!(s["evi_em"], 25.0);
    assert_eq!(s["joint_em"], 0.0);

    let aliases = format!(
        "{}\n{}\n",
        json!({"Q_id": a["answer_id"], "aliases": ["An Alias Of A's Answer"], "demonyms": []}),
        json!({"Q_id": subject_id, "aliases": ["another name of the subject"], "demonyms": []})
    );
    std::fs::write(dir.path().join("id_aliases.json"), aliases).unwrap();
    let s = score(&data, &predictions);
    // A (by alias) and B right, C wrong, D missing.
    assert_eq!(s["em"], 50.0);
    assert_eq!(s["sp_em"], 75.0);
    // A exact, B through the subject's alias (punctuation and case normalized), C none.
    assert_eq!(s["evi_em"], 50.0);
    assert_eq!(s["joint_em"], 50.0);
    assert_eq!(s["n"], 4);

    // The table shows the same rows.
    let table = ok(&[
        "score",
        "--data",
        data.to_str().unwrap(),
        "--predictions",
        predictions.to_str().unwrap(),
    ]);
    assert!(table.contains("Evidence EM         50.00"), "{table}");
    assert!(table.contains("Joint EM            50.00"), "{table}");
}
