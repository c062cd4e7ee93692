//! Integration tests: `sleuth score` on predictions generated from the real gold files,
//! right for some ids and wrong for others, with the expected numbers worked out here.

use crate::util::{self, ok, sleuth, stderr};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn score(dataset: &str, data: &Path, predictions: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "score",
        "--dataset",
        dataset,
        "--data",
        data.to_str().unwrap(),
        "--predictions",
        predictions.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&args)).expect("score --json prints JSON")
}

fn write(dir: &Path, name: &str, text: String) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn assert_close(got: &Value, want: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {got}"));
    assert!((got - want).abs() < 1e-9, "got {got}, want {want}");
}

/// A plain answer: ASCII words only, no article, not yes/no, so its token count is
/// simply its number of words.
fn plain(answer: &str) -> bool {
    answer
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == ' ')
        && !answer.is_empty()
        && !answer
            .to_lowercase()
            .split_whitespace()
            .any(|w| matches!(w, "a" | "an" | "the" | "yes" | "no" | "noanswer"))
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn hotpot_right_wrong_partial_and_missing() {
    let gold = rows(&util::hotpot());
    let dir = tempfile::tempdir().unwrap();
    let (mut answers, mut sp) = (serde_json::Map::new(), serde_json::Map::new());
    // 10 exactly right (answer and support).
    for row in &gold[..10] {
        let id = row["_id"].as_str().unwrap();
        answers.insert(id.into(), row["answer"].clone());
        sp.insert(id.into(), row["supporting_facts"].clone());
    }
    // 10 wrong: no shared token, and an empty support list.
    for row in &gold[10..20] {
        let id = row["_id"].as_str().unwrap();
        answers.insert(id.into(), json!("qzxv wqpt"));
        sp.insert(id.into(), json!([]));
    }
    // 5 partial: a plain gold answer of k words plus one extra word -> F1 = 2k / (2k + 1);
    // support: only the first gold fact -> precision 1, recall 1/m.
    let mut partial_f1 = 0.0;
    let mut partial_sp_f1 = 0.0;
    let partial: Vec<&Value> = gold[20..]
        .iter()
        .filter(|r| plain(r["answer"].as_str().unwrap()))
        .take(5)
        .collect();
    for row in &partial {
        let id = row["_id"].as_str().unwrap();
        let answer = row["answer"].as_str().unwrap();
        let k = answer.split_whitespace().count() as f64;
        partial_f1 += 2.0 * k / (2.0 * k + 1.0);
        answers.insert(id.into(), json!(format!("{answer} qzxv")));
        let facts = row["supporting_facts"].as_array().unwrap();
        let distinct: std::collections::HashSet<String> =
            facts.iter().map(|f| f.to_string()).collect();
        let m = distinct.len() as f64;
        partial_sp_f1 += 2.0 * (1.0 / m) / (1.0 + 1.0 / m);
        sp.insert(id.into(), json!([facts[0]]));
    }
    // The remaining 371 questions have no prediction at all; one prediction names no
    // gold id.
    answers.insert("not-a-gold-id".into(), json!("x"));
    let preds = write(
        dir.path(),
        "pred.json",
        json!({"answer": answers, "sp": sp}).to_string(),
    );

    let s = score("hotpotqa", &util::hotpot(), &preds, &[]);
    assert_eq!(s["n"], 396);
    assert_eq!(s["answered"], 25);
    assert_eq!(s["missing"], 371);
    assert_eq!(s["unmatched"], 1);
    // hotpot_evaluate_v1.py's keys and scale (fractions).
    assert_eq!(s["scale"], "0-1");
    assert_close(&s["em"], 10.0 / 396.0);
    assert_close(&s["f1"], (10.0 + partial_f1) / 396.0);
    assert_close(&s["sp_em"], 10.0 / 396.0);
    assert_close(&s["sp_f1"], (10.0 + partial_sp_f1) / 396.0);
    assert_close(&s["joint_em"], 10.0 / 396.0);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn hotpot_without_sp_reports_no_support() {
    let gold = rows(&util::hotpot());
    let dir = tempfile::tempdir().unwrap();
    let answers: serde_json::Map<String, Value> = gold
        .iter()
        .map(|r| (r["_id"].as_str().unwrap().to_string(), r["answer"].clone()))
        .collect();
    let preds = write(
        dir.path(),
        "pred.json",
        json!({ "answer": answers }).to_string(),
    );
    let s = score("hotpotqa", &util::hotpot(), &preds, &[]);
    assert_close(&s["em"], 1.0);
    assert_close(&s["f1"], 1.0);
    assert!(s["sp_em"].is_null() && s["sp_f1"].is_null());

    let table = ok(&[
        "score",
        "--dataset",
        "hotpotqa",
        "--data",
        util::hotpot().to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
    ]);
    assert!(table.contains("EM                 100.00"), "{table}");
    assert!(table.contains("support not scored"), "{table}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn yes_no_rule_changes_f1_only_where_the_dataset_has_it() {
    // Answer every yes/no comparison question with "yes of course": HotpotQA gives F1 0
    // even when the gold is "yes".
    let gold = rows(&util::hotpot());
    let dir = tempfile::tempdir().unwrap();
    let yes: Vec<&Value> = gold.iter().filter(|r| r["answer"] == "yes").collect();
    assert!(!yes.is_empty());
    let answers: serde_json::Map<String, Value> = yes
        .iter()
        .map(|r| {
            (
                r["_id"].as_str().unwrap().to_string(),
                json!("yes of course"),
            )
        })
        .collect();
    let preds = write(
        dir.path(),
        "pred.json",
        json!({ "answer": answers }).to_string(),
    );
    let s = score("hotpotqa", &util::hotpot(), &preds, &[]);
    assert_close(&s["f1"], 0.0);
    assert_eq!(s["answered"], yes.len());
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn musique_aliases_support_and_hop_filter() {
    let gold = rows(&util::musique());
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    let mut expected_em = 0.0;
    let mut expected_sp_f1 = 0.0;
    let mut expected_sp_em = 0.0;
    for (i, row) in gold.iter().enumerate() {
        let id = row["id"].as_str().unwrap();
        let aliases = row["answer_aliases"].as_array().unwrap();
        let supporting: Vec<u64> = row["paragraphs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["is_supporting"] == true)
            .map(|p| p["idx"].as_u64().unwrap())
            .collect();
        let distractor = row["paragraphs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["is_supporting"] == false)
            .unwrap()["idx"]
            .clone();
        let (answer, support) = match i % 4 {
            // Right via an alias when there is one, with the gold support.
            0 => {
                expected_em += 1.0;
                expected_sp_em += 1.0;
                expected_sp_f1 += 1.0;
                let answer = aliases.first().unwrap_or(&row["answer"]).clone();
                (answer, json!(supporting))
            }
            // Empty answer (MuSiQue: F1 0 against a non-empty gold); one gold paragraph
            // plus one distractor -> P 1/2, R 1/g.
            1 => {
                let g = supporting.len() as f64;
                let (p, r) = (0.5, 1.0 / g);
                expected_sp_f1 += 2.0 * p * r / (p + r);
                (json!(""), json!([supporting[0], distractor]))
            }
            // Wrong answer, no support list.
            2 => (json!("qzxv"), Value::Null),
            // Missing entirely.
            _ => continue,
        };
        let mut line = json!({"id": id, "predicted_answer": answer, "predicted_answerable": true});
        if !support.is_null() {
            line["predicted_support_idxs"] = support;
        }
        lines.push(line.to_string());
    }
    let preds = write(dir.path(), "pred.jsonl", lines.join("\n"));
    let s = score("musique", &util::musique(), &preds, &[]);
    assert_eq!(s["n"], 200);
    assert_eq!(s["answered"], 150);
    assert_eq!(s["missing"], 50);
    // evaluate_v1.0.py's keys and scale (fractions).
    assert_eq!(s["scale"], "0-1");
    assert_close(&s["answer_em"], expected_em / 200.0);
    assert_close(&s["answer_f1"], expected_em / 200.0);
    assert_close(&s["support_em"], expected_sp_em / 200.0);
    assert_close(&s["support_f1"], expected_sp_f1 / 200.0);
    assert!(s["em"].is_null() && s["joint_em"].is_null());

    // With --hops 4 only the 4-hop questions count, and the other predictions are unmatched.
    let four = score("musique", &util::musique(), &preds, &["--hops", "4"]);
    assert_eq!(four["n"], 23);
    assert_eq!(
        four["unmatched"].as_u64().unwrap() as usize,
        150 - four["answered"].as_u64().unwrap() as usize
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn twowiki_support_titles_are_case_insensitive() {
    let gold = rows(&util::twowiki());
    let dir = tempfile::tempdir().unwrap();
    let (mut answers, mut sp) = (serde_json::Map::new(), serde_json::Map::new());
    for row in &gold {
        let id = row["_id"].as_str().unwrap();
        answers.insert(id.into(), row["answer"].clone());
        let lowered: Vec<Value> = row["supporting_facts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| json!([f[0].as_str().unwrap().to_lowercase(), f[1]]))
            .collect();
        sp.insert(id.into(), json!(lowered));
    }
    let preds = write(
        dir.path(),
        "pred.json",
        json!({"answer": answers, "sp": sp}).to_string(),
    );
    let s = score("2wiki", &util::twowiki(), &preds, &[]);
    // 2wikimultihop_evaluate_v1.1.py's scale: percentages.
    assert_eq!(s["scale"], "0-100");
    assert_close(&s["em"], 100.0);
    assert_close(&s["sp_em"], 100.0);
    // The same lowercased titles are wrong under HotpotQA's rules wherever case changed.
    let hotpot_style = score("jsonl", &jsonl_from_twowiki(dir.path(), &gold), &preds, &[]);
    assert!(hotpot_style["sp_em"].as_f64().unwrap() < 1.0);
}

/// The 2Wiki file rewritten in our own jsonl schema (titles and sentences kept).
fn jsonl_from_twowiki(dir: &Path, gold: &[Value]) -> PathBuf {
    let lines: Vec<String> = gold
        .iter()
        .map(|r| {
            let paragraphs: Vec<Value> = r["context"].as_array().unwrap().iter().map(|p| json!({"title": p[0], "sentences": p[1]})).collect();
            json!({"id": r["_id"], "question": r["question"], "answer": r["answer"], "paragraphs": paragraphs, "supporting_facts": r["supporting_facts"]}).to_string()
        })
        .collect();
    write(dir, "2wiki-as-jsonl.jsonl", lines.join("\n"))
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn explain_shows_normalization() {
    let gold = rows(&util::hotpot());
    let dir = tempfile::tempdir().unwrap();
    let id = gold[0]["_id"].as_str().unwrap();
    let preds = write(
        dir.path(),
        "pred.json",
        json!({"answer": {id: "The  Answer!"}}).to_string(),
    );
    let o = sleuth(&[
        "score",
        "--dataset",
        "hotpotqa",
        "--data",
        util::hotpot().to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
        "--explain",
        id,
    ]);
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(err.contains("normalized: \"answer\""), "{err}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn malformed_predictions_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let preds = write(dir.path(), "pred.jsonl", "{\"id\": \"a\", \"predicted_answer\": \"x\"}\n{\"id\": \"b\", \"predicted_answer\": \"y\"}\n{\"id\": \"c\", \"predicted_answer\": 5}\n".into());
    let o = sleuth(&[
        "score",
        "--dataset",
        "musique",
        "--data",
        util::musique().to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains(&format!("{}:3:", preds.display())), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn unknown_dataset_fails_in_one_line() {
    let o = sleuth(&[
        "score",
        "--dataset",
        "nq",
        "--data",
        "x",
        "--predictions",
        "y",
    ]);
    assert!(!o.status.success());
    assert_eq!(stderr(&o).trim_end().lines().count(), 1);
}

/// A 2-question run scored against a 4-question gold file: the official rule (every
/// gold question, a missing one 0) halves it; `--only-predicted` and `--run` score the
/// run's questions; the first line always says which set was scored.
#[test]
fn a_subset_run_is_scored_on_its_own_questions_when_asked_and_the_set_is_named() {
    use crate::golden::{fixture, script::Script};
    let dir = tempfile::tempdir().unwrap();
    let script = Script::new(&[fixture("musique")]);
    let server = sleuth_testkit::MockServer::spawn(move |req| script.reply(req));
    let model = format!("openai-compat:{}#m", server.url());
    let run = dir.path().join("run");
    crate::util::Eval::new("musique", fixture("musique"), "eir", &model, &run)
        .opt("--limit", 2)
        .ok();
    let predictions = dir.path().join("p.jsonl");
    ok(&[
        "export",
        run.to_str().unwrap(),
        "--out",
        predictions.to_str().unwrap(),
    ]);
    let gold = fixture("musique");
    let base = [
        "score",
        "--dataset",
        "musique",
        "--data",
        gold.to_str().unwrap(),
        "--predictions",
        predictions.to_str().unwrap(),
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        crate::util::sleuth(&a)
    };
    let all = with(&[]);
    let text = crate::util::stdout(&all);
    assert!(
        text.starts_with("scored: all 4 gold questions of "),
        "{text}"
    );
    assert!(text.contains("EM                  25.00"), "{text}");
    assert!(
        crate::util::stderr(&all).contains("2 gold questions have no prediction and score 0; to score only the predicted ones, pass --only-predicted"),
        "{}",
        crate::util::stderr(&all)
    );
    let predicted = crate::util::stdout(&with(&["--only-predicted"]));
    assert!(
        predicted.starts_with("scored: the 2 predicted questions (of 4 in "),
        "{predicted}"
    );
    assert!(
        predicted.contains("EM                  50.00"),
        "{predicted}"
    );
    let by_run: serde_json::Value = serde_json::from_str(&crate::util::stdout(&with(&[
        "--run",
        run.to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    assert_eq!(by_run["scored"], "run");
    assert_eq!(by_run["gold_questions"], 4);
    assert_eq!(by_run["n"], 2);
    assert_eq!(by_run["answer_em"], 0.5);
}

/// Answer F1 follows each benchmark's official script (EIR §4.1; SLEUTH Table 6): the
/// same answer to a gold "yes" scores 0 under HotpotQA's rule (a yes/no/noanswer side
/// that differs from the other gives 0) and its token overlap under MuSiQue's SQuAD 2.0
/// rule, which has no yes/no case: "yes of course" shares one of three tokens, F1 50%.
#[test]
fn the_yes_no_rule_is_hotpotqas_and_not_musiques() {
    let dir = tempfile::tempdir().unwrap();
    let line = std::fs::read_to_string(crate::golden::fixture("musique")).unwrap();
    let mut q: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    q["answer"] = json!("yes");
    q["answer_aliases"] = json!([]);
    let id = q["id"].as_str().unwrap().to_string();
    let data = write(dir.path(), "musique.jsonl", format!("{q}\n"));
    let preds = write(
        dir.path(),
        "pred.jsonl",
        format!(
            "{}\n",
            json!({"id": id, "predicted_answer": "yes of course"})
        ),
    );
    let s = score("musique", &data, &preds, &[]);
    assert_close(&s["answer_f1"], 0.5);
    let hotpot = crate::golden::fixture("hotpotqa");
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&hotpot)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["answer"], "yes");
    let preds = write(
        dir.path(),
        "pred.json",
        json!({"answer": {first["_id"].as_str().unwrap(): "yes of course"}}).to_string(),
    );
    let s = score("hotpotqa", &hotpot, &preds, &[]);
    assert_eq!(s["answered"], 1);
    // Without the rule the one answer would score 50, and the mean more than 0.
    assert_close(&s["f1"], 0.0);
}
