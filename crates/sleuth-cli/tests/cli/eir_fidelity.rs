//! Integration tests: the EIR paper's rules that issue 28 found bent, one test per rule,
//! through `sleuth eval` and `sleuth report` against a local scripted server. Each test
//! prints the numbers it checks (`cargo test ... -- --nocapture` shows them); the
//! fidelity ledger (`docs/fidelity/eir.md`) names these tests.

use crate::agents::read_records;
use crate::util::*;
use serde_json::{json, Value};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::path::{Path, PathBuf};

/// MuSiQue's `2hop__92051_827343`: its pool holds four paragraphs titled "Miracle on 34th
/// Street" (positions 3, 9, 14, 19); the gold one is the fourth, shown as
/// "Miracle on 34th Street (4)". The other gold paragraph is "Five Finger Exercise".
pub(crate) const HOMONYMS: &str = "2hop__92051_827343";
pub(crate) const GOLD_REPEAT: &str = "Miracle on 34th Street (4)";
pub(crate) const WRONG_REPEAT: &str = "Miracle on 34th Street";
pub(crate) const GOLD_OTHER: &str = "Five Finger Exercise";
/// A sentence of the gold homonym only.
pub(crate) const GOLD_REPEAT_TEXT: &str = "Maureen O'Hara as Doris Walker";

/// One MuSiQue question, copied from the shared subset into its own file.
pub(crate) fn musique_question(dir: &Path, id: &str) -> PathBuf {
    let line = std::fs::read_to_string(musique())
        .unwrap()
        .lines()
        .find(|l| serde_json::from_str::<Value>(l).unwrap()["id"] == id)
        .unwrap_or_else(|| panic!("{id} is in the subset"))
        .to_string();
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, line + "\n").unwrap();
    path
}

pub(crate) fn prompt(req: &ReceivedRequest) -> String {
    req.last_message().unwrap_or("").to_string()
}

/// The prompt's `Turn N of M` (paragraph text may say "Turn" too).
pub(crate) fn turn(prompt: &str) -> u32 {
    prompt
        .split("Turn ")
        .skip(1)
        .find_map(|s| {
            let (n, rest) = s.split_once(' ')?;
            rest.starts_with("of ").then(|| n.parse().ok())?
        })
        .unwrap_or(0)
}

pub(crate) fn is_final(p: &str) -> bool {
    p.contains("Answer the question from the evidence below")
}

pub(crate) fn is_eir_action(p: &str) -> bool {
    p.contains("You are collecting evidence")
}

pub(crate) fn is_direct_action(p: &str) -> bool {
    p.contains("You are answering a multi-hop")
}

pub(crate) fn eir_action(mv: Value) -> Reply {
    Reply::text(
        json!({"reasoning": "r", "requirements": [], "conclusions": [], "action": mv}).to_string(),
    )
}

pub(crate) fn direct_action(mv: Value) -> Reply {
    Reply::text(json!({"reasoning": "r", "action": mv}).to_string())
}

/// The titles of the paragraphs a final prompt's evidence lists (`[Title]` headers).
pub(crate) fn evidence_titles(p: &str) -> Vec<String> {
    let evidence = p.split("Evidence:\n").nth(1).unwrap_or("");
    evidence
        .lines()
        .filter_map(|l| l.strip_prefix('[')?.strip_suffix(']'))
        .map(str::to_string)
        .collect()
}

/// A row of a report table, found under the table's title by its first cell.
pub(crate) fn report_row(report: &str, title: &str, first: &str) -> Option<Vec<String>> {
    report
        .lines()
        .skip_while(|l| !l.contains(title))
        .take_while(|l| !l.starts_with("### ") || l.contains(title))
        .find(|l| l.starts_with(&format!("| {first} ")))
        .map(|row| row.split('|').map(|c| c.trim().to_string()).collect())
}

// ---------------------------------------------------------------- item 2: Support F1

/// Corpus setting: search with the question, read every result (up to six), submit;
/// the final answer cites sentence 0 of every paragraph it was shown.
fn corpus_reads_and_cites_everything(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if is_final(&p) {
        let cited: Vec<Value> = evidence_titles(&p)
            .iter()
            .map(|t| json!({"title": t, "sentence": 0}))
            .collect();
        return Reply::text(json!({"answer": "A", "evidence": cited}).to_string());
    }
    if !is_eir_action(&p) {
        return Reply::text("nothing");
    }
    let list = p
        .split("Search results so far (read one by its id):\n")
        .nth(1)
        .unwrap_or("");
    let unread = list
        .lines()
        .map_while(|l| l.strip_prefix("- [id "))
        .filter(|l| !l.ends_with("(read)"))
        .find_map(|l| l.split_once(']').map(|(id, _)| id.to_string()));
    let reads = list.lines().filter(|l| l.ends_with("(read)")).count();
    let question = p
        .lines()
        .find_map(|l| l.strip_prefix("Question: "))
        .unwrap_or("q")
        .to_string();
    let mv = match unread {
        _ if !list.starts_with("- [id ") => json!({"type": "search", "query": question}),
        Some(id) if reads < 6 => json!({"type": "read", "id": id}),
        _ => json!({"type": "submit", "answer": "A"}),
    };
    eir_action(mv)
}

/// The official paragraph-level support F1 of `cited` titles against the question's pool
/// (MuSiQue): a title matched to a pool paragraph is its position, any other title a
/// false positive of its own.
fn musique_support_f1(question: &Value, cited: &[String]) -> (f64, usize) {
    let mut shown: Vec<String> = Vec::new();
    for p in question["paragraphs"].as_array().unwrap() {
        let base = p["title"].as_str().unwrap();
        let mut t = base.to_string();
        let mut n = 1;
        while shown.contains(&t) {
            n += 1;
            t = format!("{base} ({n})");
        }
        shown.push(t);
    }
    let gold: Vec<usize> = question["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, p)| p["is_supporting"] == true)
        .map(|(i, _)| i)
        .collect();
    let mut predicted: Vec<String> = cited.to_vec();
    predicted.sort();
    predicted.dedup();
    let outside = predicted.iter().filter(|t| !shown.contains(t)).count();
    let tp = predicted
        .iter()
        .filter(|t| gold.iter().any(|&g| shown[g] == **t))
        .count() as f64;
    let (p, r) = (tp / predicted.len() as f64, tp / gold.len() as f64);
    let f1 = if tp == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    };
    (f1, outside)
}

/// Issue 28 item 2 (EIR §4.4, App. H.3): every citation the answer makes counts; one
/// naming a paragraph outside the question's pool is a false positive.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn corpus_support_f1_counts_citations_outside_the_pool_as_false_positives() {
    let dir = tempfile::tempdir().unwrap();
    let index = musique_index(dir.path());
    let server = MockServer::spawn(corpus_reads_and_cites_everything);
    let url = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "eir", &url, &out)
        .opt("--limit", 3)
        .opt("--env", "corpus")
        .opt("--index", index.display())
        .ok();
    let questions: Vec<Value> = std::fs::read_to_string(musique())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut exercised = 0;
    for r in read_records(&out) {
        let q = questions.iter().find(|q| q["id"] == r["id"]).unwrap();
        let cited: Vec<String> = r["outputs"]["evidence"]["cited"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["title"].as_str().unwrap().to_string())
            .collect();
        let (expected, outside) = musique_support_f1(q, &cited);
        let got = r["support_f1"].as_f64().unwrap();

        println!(
            "{}: {} cited, {outside} outside the pool, support F1 {got:.4} (expected {expected:.4})",
            r["id"],
            cited.len()
        );
        assert!(
            (got - expected).abs() < 1e-9,
            "{}: {got} vs {expected}",
            r["id"]
        );
        if outside > 0 && expected > 0.0 {
            exercised += 1;
        }
    }
    assert!(
        exercised > 0,
        "some answer cited gold and out-of-pool paragraphs"
    );
}

// ------------------------------------------------------- item 3: repeated titles

/// EIR reads the titles in `reads` in turn, then submits; the final answer is wrong.
fn reads_then_wrong(reads: &'static [&'static str]) -> impl Fn(&ReceivedRequest) -> Reply {
    move |req| {
        let p = prompt(req);
        if is_final(&p) {
            return Reply::text(json!({"answer": "NOT-THE-ANSWER", "evidence": []}).to_string());
        }
        if !is_eir_action(&p) {
            return Reply::text(json!({"read": []}).to_string());
        }
        match reads.get(turn(&p) as usize - 1) {
            Some(t) => eir_action(json!({"type": "read", "title": t})),
            None => eir_action(json!({"type": "submit", "answer": "RETRIEVAL"})),
        }
    }
}

/// Issue 28 item 3 (EIR App. F.2): the "added" recovery supplies the gold paragraph
/// itself, not a homonym the agent already read.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn added_recovery_supplies_the_gold_homonym_not_the_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = musique_question(dir.path(), HOMONYMS);
    let server = MockServer::spawn(reads_then_wrong(&[WRONG_REPEAT]));
    let url = format!("openai-compat:{}#m", server.url());
    let first = dir.path().join("eir");
    Eval::new("musique", &data, "eir", &url, &first).ok();
    let prior = &read_records(&first)[0];
    assert_eq!(prior["retrieved"], json!([WRONG_REPEAT]));
    assert_eq!(prior["gold_titles"], json!([GOLD_OTHER, GOLD_REPEAT]));
    assert_eq!(prior["gold_recall"], 0.0, "the homonym read is not gold");
    let before = server.request_count();
    let out = dir.path().join("added");
    Eval::new("musique", &data, "eir-recover", &url, &out)
        .opt("--failures-of", first.display())
        .set(&format!("from={}", first.display()))
        .set("recover=added")
        .ok();
    let r = &read_records(&out)[0];
    let final_prompt = prompt(&server.requests()[before]);
    println!(
        "recovered: retrieved {}, gold recall {}; final prompt titles {:?}",
        r["retrieved"],
        r["gold_recall"],
        evidence_titles(&final_prompt)
    );
    assert_eq!(
        r["retrieved"],
        json!([WRONG_REPEAT, GOLD_OTHER, GOLD_REPEAT])
    );
    assert_eq!(r["gold_recall"], 1.0);
    assert!(final_prompt.contains(GOLD_REPEAT_TEXT), "{final_prompt}");
}

/// Issue 28 item 3 (EIR App. H.4, Table 21): a run that read every gold paragraph is
/// counted, one that read a gold paragraph's homonym instead is not.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn support_is_acquired_by_reading_the_gold_paragraph_not_its_homonym() {
    let dir = tempfile::tempdir().unwrap();
    let data = musique_question(dir.path(), HOMONYMS);
    let table = "(EIR App. H.4, Table 21)";
    let run = |name: &str, reads: &'static [&'static str]| {
        let server = MockServer::spawn(reads_then_wrong(reads));
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(name);
        Eval::new("musique", &data, "eir", &url, &out).ok();
        let r = read_records(&out).remove(0);
        let report = ok(&["report", out.to_str().unwrap()]);
        (r, report_row(&report, table, "eir"))
    };
    let (r, row) = run("gold", &[GOLD_OTHER, GOLD_REPEAT]);
    println!(
        "gold read: recall {}, Table 21 row {row:?}",
        r["gold_recall"]
    );
    assert_eq!(r["gold_recall"], 1.0);
    let row = row.expect("the run that read both gold paragraphs is counted");
    // One question; after the completing read: the submission and the final call.
    assert_eq!(row[2..6], ["1", "1", "0", "1"], "{row:?}");
    let (r, row) = run("homonym", &[GOLD_OTHER, WRONG_REPEAT]);
    println!(
        "homonym read: recall {}, Table 21 row {row:?}",
        r["gold_recall"]
    );
    assert_eq!(r["gold_recall"], 0.5);
    assert!(
        row.is_none(),
        "a homonym does not complete support: {row:?}"
    );
}

// --------------------------------------------------- item 8: invalid citations

/// Direct: reads the first unread title, submits citing an unread paragraph, then
/// submits citing the sentence it read.
fn direct_cites_unread_then_read(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if !is_direct_action(&p) {
        return Reply::text("nothing");
    }
    let unread: Vec<String> = p
        .split("Unread titles:\n")
        .nth(1)
        .unwrap_or("")
        .lines()
        .map_while(|l| l.strip_prefix("- "))
        .map(str::to_string)
        .collect();
    match turn(&p) {
        1 => direct_action(json!({"type": "read", "title": GOLD_OTHER})),
        2 => direct_action(json!({"type": "submit", "answer": "Lana Wood",
            "evidence": [{"title": unread[0], "sentence": 0}]})),
        _ => direct_action(json!({"type": "submit", "answer": "Lana Wood",
            "evidence": [{"title": GOLD_OTHER, "sentence": 0}]})),
    }
}

/// Issue 28 item 8 (EIR App. H.4, Table 22): a Direct submission citing an unread
/// sentence is rejected with its cause; it is never accepted with the citation dropped.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn direct_submission_citing_an_unread_sentence_is_rejected_as_invalid_citation() {
    let dir = tempfile::tempdir().unwrap();
    let data = musique_question(dir.path(), HOMONYMS);
    let server = MockServer::spawn(direct_cites_unread_then_read);
    let url = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("run");
    Eval::new("musique", &data, "direct", &url, &out).ok();
    let r = &read_records(&out)[0];
    let trace = r["trace"].as_array().unwrap();
    println!(
        "turns {}, rejection {}, rejected {}, answer {}, support F1 {}",
        trace.len(),
        trace[1]["rejection"],
        r["outputs"]["evidence"]["rejected"],
        r["answer"],
        r["support_f1"]
    );
    assert_eq!(trace.len(), 3, "the refused submission used its turn");
    assert_eq!(trace[1]["rejection"]["cause"], "invalid_citation");
    assert!(trace[1]["rejection"]["message"]
        .as_str()
        .unwrap()
        .contains("not read"));
    assert_eq!(
        r["outputs"]["evidence"]["rejected"],
        json!({"invalid_citation": 1})
    );
    assert_eq!(r["answer"], "Lana Wood");
    assert_eq!(
        r["outputs"]["evidence"]["cited"],
        json!([{"title": GOLD_OTHER, "sentence": 0}])
    );
    // The refusal's feedback reached the next prompt.
    let third = server
        .requests()
        .iter()
        .map(prompt)
        .find(|p| turn(p) == 3)
        .unwrap();
    assert!(third.contains("not read"), "{third}");
    let report = ok(&["report", out.to_str().unwrap()]);
    let row = report_row(&report, "(EIR App. H.4, Table 22)", "direct").unwrap();
    println!("Table 22 row {row:?}");
    assert_eq!(row[2..4], ["3", "1"], "{row:?}");
    assert!(
        row.iter().any(|c| c.contains("invalid_citation")),
        "{row:?}"
    );
}

// ---------------------------------------------------- item 9: Reflexion's trials

/// Reflexion: trial 1 reads both gold paragraphs and submits a wrong answer; trial 2
/// (its prompt carries the reflection) reads one and submits a wrong answer again.
fn two_wrong_trials(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if !is_direct_action(&p) {
        return Reply::text("Read the other paragraph next time.");
    }
    let second = p.contains("Attempt 1:");
    let mv = match (second, turn(&p)) {
        (false, 1) | (true, 1) => json!({"type": "read", "title": GOLD_OTHER}),
        (false, 2) => json!({"type": "read", "title": GOLD_REPEAT}),
        _ => json!({"type": "submit", "answer": "WRONG"}),
    };
    direct_action(mv)
}

/// Issue 28 items 9 and 10 (EIR App. D.1, H.4, Tables 21-22): every turn records its
/// trial; the first-trial arm counts only the first trial's actions and calls, and its
/// tokens; the whole run counts the reflection made after support was read.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn reflexion_records_each_turns_trial_and_the_report_tells_trials_apart() {
    let dir = tempfile::tempdir().unwrap();
    let data = musique_question(dir.path(), HOMONYMS);
    let server = MockServer::spawn(two_wrong_trials);
    // A priced model id, so both arms' costs are more than zero.
    let url = format!("openai-compat:{}#gpt-4.1-mini", server.url());
    let out = dir.path().join("run");
    Eval::new("musique", &data, "eir-reflexion", &url, &out)
        .set("trials=2")
        .ok();
    let r = &read_records(&out)[0];
    let trials: Vec<Value> = r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trial"].clone())
        .collect();
    println!(
        "trials of the turns: {trials:?}; calls {}",
        r["calls_by_kind"]
    );
    assert_eq!(trials, [json!(1), json!(1), json!(1), json!(2), json!(2)]);
    assert_eq!(r["calls_by_kind"], json!({"action": 5, "reflection": 1}));
    // Item 10: the first trial's own tokens and cost, less than the whole run's.
    let first = &r["first_attempt"];
    println!(
        "first trial: {} input / {} output tokens, ${}; whole run: {} / {}, ${}",
        first["input_tokens"],
        first["output_tokens"],
        first["cost_usd"],
        r["input_tokens"],
        r["output_tokens"],
        r["cost_usd"]
    );
    for key in ["input_tokens", "output_tokens", "cost_usd"] {
        let (part, whole) = (first[key].as_f64().unwrap(), r[key].as_f64().unwrap());
        assert!(part > 0.0 && part < whole, "{key}: {part} of {whole}");
    }
    let report = ok(&["report", out.to_str().unwrap()]);
    let rejected = "(EIR App. H.4, Table 22)";
    let after = "(EIR App. H.4, Table 21)";
    let first = "eir-reflexion/first-attempt";
    let whole = report_row(&report, rejected, "eir-reflexion").unwrap();
    let first_22 = report_row(&report, rejected, first).unwrap();
    let whole_21 = report_row(&report, after, "eir-reflexion").unwrap();
    let first_21 = report_row(&report, after, first).unwrap();
    println!("Table 22: whole {whole:?}, first trial {first_22:?}");
    println!("Table 21: whole {whole_21:?}, first trial {first_21:?}");
    assert_eq!(whole[2], "5");
    assert_eq!(first_22[2], "3", "the first trial's three actions");
    // Support completes at trial 1's second turn: then trial 1's submission, the
    // reflection, and trial 2's two actions follow.
    assert_eq!(whole_21[2..6], ["1", "3", "1", "0"], "{whole_21:?}");
    assert_eq!(first_21[2..6], ["1", "1", "0", "0"], "{first_21:?}");
}

// ------------------------------------------------------- item 6: extra reads

/// EIR reads one gold paragraph and submits; asked whether to read more, it names
/// `wanted`; the final answer says whether the gold homonym's text was in its evidence.
fn more_reads_naming(wanted: &'static str) -> impl Fn(&ReceivedRequest) -> Reply {
    move |req| {
        let p = prompt(req);
        if is_final(&p) {
            let answer = if p.contains(GOLD_REPEAT_TEXT) {
                "AFTER"
            } else {
                "BEFORE"
            };
            return Reply::text(json!({"answer": answer, "evidence": []}).to_string());
        }
        if p.contains("Decide whether reading more paragraphs") {
            return Reply::text(json!({"read": [wanted]}).to_string());
        }
        match turn(&p) {
            1 => eir_action(json!({"type": "read", "title": GOLD_OTHER})),
            _ => eir_action(json!({"type": "submit", "answer": "RETRIEVAL"})),
        }
    }
}

/// Issue 28 item 6 (EIR App. F.3, F.4): an extra read naming no unread title fails and
/// the first answer stands (no second final call); one naming a title reads it and the
/// final call runs again.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn an_extra_read_naming_nothing_real_fails_and_calls_no_second_final_answer() {
    let dir = tempfile::tempdir().unwrap();
    let data = musique_question(dir.path(), HOMONYMS);
    let run = |name: &str, wanted: &'static str| {
        let server = MockServer::spawn(more_reads_naming(wanted));
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(name);
        Eval::new("musique", &data, "eir", &url, &out)
            .set("extra_reads=2")
            .ok();
        read_records(&out).remove(0)
    };
    let failed = run("failed", "a paragraph that is not in the pool");
    let extra = &failed["outputs"]["final_call"]["extra_reads"];
    println!(
        "failed read: read {}, calls {}, answer {}",
        extra["read"], failed["calls_by_kind"], failed["answer"]
    );
    assert_eq!(extra["read"], json!([]));
    assert_eq!(failed["calls_by_kind"], json!({"action": 3, "final": 1}));
    assert_eq!(failed["answer"], "BEFORE");
    assert_eq!(failed["retrieved"], json!([GOLD_OTHER]));
    let read = run("read", GOLD_REPEAT);
    let extra = &read["outputs"]["final_call"]["extra_reads"];
    println!(
        "successful read: read {}, calls {}, answer {}",
        extra["read"], read["calls_by_kind"], read["answer"]
    );
    assert_eq!(extra["read"], json!([GOLD_REPEAT]));
    assert_eq!(read["calls_by_kind"], json!({"action": 3, "final": 2}));
    assert_eq!(read["answer"], "AFTER");
}

// ------------------------------------------- item 4 and 10: Figure 3, Figure 6

/// EIR reads the first unread title every turn (its last turn's read is refused); the
/// final answer is right for questions whose text has an even length, wrong otherwise,
/// so a run holds correct answers and errors with complete and incomplete evidence.
fn reads_in_order_some_right() -> impl Fn(&ReceivedRequest) -> Reply {
    let answers: Vec<(String, String)> = std::fs::read_to_string(musique())
        .unwrap()
        .lines()
        .map(|l| {
            let q: Value = serde_json::from_str(l).unwrap();
            (
                q["question"].as_str().unwrap().to_string(),
                q["answer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    move |req| {
        let p = prompt(req);
        if is_final(&p) {
            let q = p
                .lines()
                .find_map(|l| l.strip_prefix("Question: "))
                .unwrap_or("");
            let answer = match answers.iter().find(|(text, _)| text == q) {
                Some((text, gold)) if text.len() % 2 == 0 => gold.clone(),
                _ => "NOT-THE-ANSWER".to_string(),
            };
            return Reply::text(json!({"answer": answer, "evidence": []}).to_string());
        }
        let first = p
            .split("Unread titles:\n")
            .nth(1)
            .and_then(|l| l.lines().next())
            .and_then(|l| l.strip_prefix("- "))
            .unwrap_or("x")
            .to_string();
        eir_action(json!({"type": "read", "title": first}))
    }
}

/// Issue 28 items 4 and 10 (EIR §5 "Evidence Availability", App. F.1, Figure 3; App.
/// E.1, Figure 6): both of Figure 3's shares divide EM errors by all n answers, and the
/// report draws them; the read-budget sweep plots Answer F1 and EM.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn figure_three_divides_both_kinds_of_error_by_all_answers_and_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(reads_in_order_some_right());
    let url = format!("openai-compat:{}#m", server.url());
    let mut dirs = Vec::new();
    for h in [6, 12] {
        let out = dir.path().join(format!("h{h}"));
        Eval::new("musique", musique(), "eir", &url, &out)
            .opt("--limit", 12)
            .set(&format!("reads={h}"))
            .ok();
        dirs.push(out);
    }
    let figures = dir.path().join("report");
    let mut args: Vec<&str> = vec!["report"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    // The EIR paper's conventions: MuSiQue pooled, as its tables are.
    args.extend(["--out", figures.to_str().unwrap(), "--conventions", "eir"]);
    let report = ok(&args);
    let title = "(EIR App. F.1, Table 15, Figure 3)";
    for (h, out) in [6, 12].iter().zip(&dirs) {
        let records = read_records(out);
        let n = records.len() as f64;
        let errors = |complete: bool| {
            records
                .iter()
                .filter(|r| r["em"] == 0.0 && (r["gold_recall"] == 1.0) == complete)
                .count() as f64
        };
        let (incomplete, complete) = (errors(false), errors(true));
        let row = report
            .lines()
            .skip_while(|l| !l.contains(title))
            .find(|l| l.starts_with("| eir") && l.contains(&format!("reads={h}")))
            .unwrap_or_else(|| panic!("{report}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (inc, comp): (f64, f64) = (cells[3].parse().unwrap(), cells[8].parse().unwrap());
        println!("H={h}: n {n}, errors {incomplete} incomplete + {complete} complete; Figure 3 shares {inc}% + {comp}% of n");
        assert!((inc - 100.0 * incomplete / n).abs() < 0.051, "{row}");
        assert!((comp - 100.0 * complete / n).abs() < 0.051, "{row}");
        let wrong: f64 = cells[4].parse().unwrap();
        assert!(
            (inc + comp - 100.0 * wrong / n).abs() < 0.11,
            "the shares sum to errors / n: {row}"
        );
    }
    // Item 10, Table 10: calls per question at H = 6 and 12 and the increase.
    let calls: Vec<f64> = dirs
        .iter()
        .map(|d| {
            let r = read_records(d);
            r.iter().map(|r| r["calls"].as_f64().unwrap()).sum::<f64>() / r.len() as f64
        })
        .collect();
    let row = report_row(&report, "(EIR App. E.1, Table 10)", "musique").unwrap();
    println!("Table 10: {row:?} (calls/q {calls:?})");
    assert_eq!(
        row[4],
        format!("6: {:.2}, 12: {:.2}", calls[0], calls[1]),
        "{row:?}"
    );
    assert_eq!(row[5], "12");
    assert_eq!(
        row[6],
        format!("{:.1}", 100.0 * (calls[1] / calls[0] - 1.0))
    );
    for (file, text) in [
        ("evidence_errors_incomplete.svg", "incomplete evidence"),
        ("evidence_errors_complete.svg", "complete evidence"),
        // Pooled under the EIR conventions: one sweep figure for MuSiQue.
        ("sweep_reads_musique", "Answer F1 and EM across reads"),
    ] {
        let path = std::fs::read_dir(&figures)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(file))
            .unwrap_or_else(|| panic!("{file} was drawn"));
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains(text), "{file}");
    }
}

// ---------------------------------------------------- item 5: Holm families

/// EIR answers every question right (its final call gives the gold answer); Direct reads
/// one paragraph and submits a wrong answer on MuSiQue, the gold one on HotpotQA: every
/// MuSiQue pair is an EIR-only exact match, every HotpotQA pair a tie.
fn eir_right_direct_wrong() -> impl Fn(&ReceivedRequest) -> Reply {
    let mut answers: Vec<(String, String, bool)> = Vec::new();
    for (file, hotpot) in [(musique(), false), (hotpot(), true)] {
        let text = std::fs::read_to_string(file).unwrap();
        let values: Vec<Value> = match text.trim_start().starts_with('[') {
            true => serde_json::from_str(&text).unwrap(),
            false => text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        };
        for q in values {
            answers.push((
                q["question"].as_str().unwrap().to_string(),
                q["answer"].as_str().unwrap().to_string(),
                hotpot,
            ));
        }
    }
    move |req| {
        let p = prompt(req);
        let q = p
            .lines()
            .find_map(|l| l.strip_prefix("Question: "))
            .unwrap_or("");
        let (gold, hotpot) = answers
            .iter()
            .find(|(text, _, _)| text == q)
            .map_or(("?", false), |(_, a, h)| (a.as_str(), *h));
        if is_final(&p) {
            return Reply::text(json!({"answer": gold, "evidence": []}).to_string());
        }
        let first = p
            .split("Unread titles:\n")
            .nth(1)
            .and_then(|l| l.lines().next())
            .and_then(|l| l.strip_prefix("- "))
            .unwrap_or("x")
            .to_string();
        let submitted = if hotpot { gold } else { "WRONG-ANSWER" };
        let mv = match turn(&p) {
            1 => json!({"type": "read", "title": first}),
            _ => json!({"type": "submit", "answer": submitted}),
        };
        if is_eir_action(&p) {
            eir_action(mv)
        } else {
            direct_action(mv)
        }
    }
}

/// Issue 28 item 5 (EIR Table 1, App. D.2 Table 6): `--holm-family baseline` adjusts
/// each compared method over all its benchmark x model rows (the paper's six), where
/// `arm` keeps one family per model. MuSiQue holds questions of every hop count (2, 2,
/// 3, 4), pooled under the EIR conventions into one benchmark (issue 42): each
/// compared method has four rows (2 benchmarks x 2 models), not eight. Table 9 averages
/// each method's cells equally, and the cells differ in size (four MuSiQue questions,
/// two HotpotQA ones), so its mean differs from the pooled one.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn holm_family_baseline_spans_every_benchmark_and_model_of_a_compared_method() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(eir_right_direct_wrong());
    let mut dirs = Vec::new();
    for model in ["m1", "m2"] {
        let url = format!("openai-compat:{}#{model}", server.url());
        for (hops, limit) in [(2, 2), (3, 1), (4, 1)] {
            let out = dir.path().join(format!("musique-{hops}-{model}"));
            Eval::new("musique", musique(), "eir,direct", &url, &out)
                .opt("--hops", hops)
                .opt("--limit", limit)
                .ok();
            dirs.push(out.to_str().unwrap().to_string());
        }
        let out = dir.path().join(format!("hotpotqa-{model}"));
        Eval::new("hotpotqa", hotpot(), "eir,direct", &url, &out)
            .opt("--limit", 2)
            .ok();
        dirs.push(out.to_str().unwrap().to_string());
    }
    let report = |extra: &[&str]| -> String {
        let mut args = vec!["report"];
        args.extend(dirs.iter().map(String::as_str));
        args.extend(["--conventions", "eir"]);
        args.extend(extra);
        ok(&args)
    };
    let holm = |family: &str| -> Vec<String> {
        let report = report(&["--baseline", "eir", "--holm-family", family]);
        let rows: Vec<String> = report
            .lines()
            .skip_while(|l| !l.contains("### Paired comparison"))
            .skip(1)
            .take_while(|l| !l.starts_with("### "))
            .filter(|l| l.contains("| direct ") && l.contains("| eir "))
            .map(str::to_string)
            .collect();
        assert_eq!(rows.len(), 4, "2 benchmarks x 2 models: {report}");
        rows
    };
    // Item 10, Table 9: each method over its four cells, calls and cost against EIR's.
    let report9 = report(&[]);
    let table9 = "(EIR App. D.5, Table 9)";
    let eir = report_row(&report9, table9, "eir").unwrap();
    let direct = report_row(&report9, table9, "direct").unwrap();
    println!("Table 9: {eir:?} / {direct:?}");
    // EIR: a read, a submission and the final call; Direct: a read and a submission.
    assert_eq!(eir[2..6], ["4", "100.00", "100.00", "3.00"], "{eir:?}");
    // Direct: 0 on both MuSiQue cells, 100 on both HotpotQA cells: 50 averaged over the
    // cells (pooled over its 12 questions it would be 33.33).
    assert_eq!(direct[2..6], ["4", "50.00", "50.00", "2.00"], "{direct:?}");
    assert_eq!((eir[7].as_str(), direct[7].as_str()), ("1.00", "0.67"));
    for (family, expected) in [("baseline", "0.5000"), ("arm", "0.2500")] {
        let rows = holm(family);
        println!("--holm-family {family}:");
        for row in rows
            .iter()
            .filter(|r| r.contains("MuSiQue") || r.contains("musique"))
        {
            println!("  {row}");
            // b/c = 4/0 on MuSiQue (every hop count): McNemar p = 2 * 0.5^4 = 0.125;
            // Holm over the family, whose HotpotQA rows (ties) have p = 1.
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let p = cells
                .iter()
                .position(|c| *c == "0.1250")
                .unwrap_or_else(|| panic!("McNemar p 0.1250 in {row}"));
            assert_eq!(cells[p + 1], expected, "{family}: {row}");
        }
        assert_eq!(
            rows.iter()
                .filter(|r| r.contains("MuSiQue") || r.contains("musique"))
                .count(),
            2,
            "one pooled MuSiQue row per model: {rows:?}"
        );
    }
}

// ------------------------------------------- item 7: the list-feedback control

/// EIR with its lists hidden: every action turn adds requirement R1 again (the model
/// cannot see that it exists) and reads the first unread title; turn 3 submits.
fn re_adds_what_it_cannot_see(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if is_final(&p) {
        return Reply::text(json!({"answer": "A", "evidence": []}).to_string());
    }
    let first = p
        .split("Unread titles:\n")
        .nth(1)
        .and_then(|l| l.lines().next())
        .and_then(|l| l.strip_prefix("- "))
        .unwrap_or("x")
        .to_string();
    let mv = match turn(&p) {
        1 | 2 => json!({"type": "read", "title": first}),
        _ => json!({"type": "submit", "answer": "A"}),
    };
    Reply::text(
        json!({"reasoning": "r", "conclusions": [],
            "requirements": [{"op": "add", "id": "R1", "text": "who played Susan Walker"}],
            "action": mv})
        .to_string(),
    )
}

/// Issue 28 item 7 (EIR App. E.2, Table 12): the corrected control discards a list
/// change naming ids the model cannot see and still runs the action;
/// `hidden_lists=refuse` is the uncorrected reading (the whole turn refused).
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn list_feedback_control_discards_unseeable_list_changes_and_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = musique_question(dir.path(), HOMONYMS);
    let run = |name: &str, extra: &[&str]| {
        let server = MockServer::spawn(re_adds_what_it_cannot_see);
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(name);
        let mut e = Eval::new("musique", &data, "eir", &url, &out).set("list_feedback=false");
        for s in extra {
            e = e.set(s);
        }
        e.ok();
        read_records(&out).remove(0)
    };
    let corrected = run("corrected", &[]);
    let trace = corrected["trace"].as_array().unwrap();
    println!(
        "discard: retrieved {}, turn 2 rejection {}, discarded {}, setting {}",
        corrected["retrieved"],
        trace[1]["rejection"],
        trace[1]["discarded_lists"]["cause"],
        corrected["settings"]["hidden_lists"]
    );
    assert_eq!(corrected["settings"]["hidden_lists"], "discard");
    assert_eq!(corrected["retrieved"].as_array().unwrap().len(), 2);
    assert!(trace[1]["rejection"].is_null());
    assert_eq!(trace[1]["discarded_lists"]["cause"], "duplicate_entry");
    assert_eq!(
        trace[1]["lists"]["requirements"].as_array().unwrap().len(),
        1,
        "R1 kept once"
    );
    let refused = run("refused", &["hidden_lists=refuse"]);
    let trace = refused["trace"].as_array().unwrap();
    println!(
        "refuse: retrieved {}, turn 2 rejection {}",
        refused["retrieved"], trace[1]["rejection"]["cause"]
    );
    assert_eq!(refused["retrieved"].as_array().unwrap().len(), 1);
    assert_eq!(trace[1]["rejection"]["cause"], "duplicate_entry");
}

/// EIR reads the first two unread titles and its final answer cites sentence 0 of
/// every paragraph read; Direct reads one and submits citing nothing.
fn eir_cites_what_it_read(req: &ReceivedRequest) -> Reply {
    let p = prompt(req);
    if is_final(&p) {
        let cited: Vec<Value> = evidence_titles(&p)
            .iter()
            .map(|t| json!({"title": t, "sentence": 0}))
            .collect();
        return Reply::text(json!({"answer": "A", "evidence": cited}).to_string());
    }
    let first = p
        .split("Unread titles:\n")
        .nth(1)
        .and_then(|l| l.lines().next())
        .and_then(|l| l.strip_prefix("- "))
        .unwrap_or("x")
        .to_string();
    let eir = is_eir_action(&p);
    let mv = match (eir, turn(&p)) {
        (true, 1 | 2) | (false, 1) => json!({"type": "read", "title": first}),
        _ => json!({"type": "submit", "answer": "A"}),
    };
    if eir {
        eir_action(mv)
    } else {
        direct_action(mv)
    }
}

/// Holm-adjusted p-values of one family (step-down, monotone).
pub(crate) fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; p.len()];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((p.len() - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// EIR Table 8 ("Holm adjustment across those six comparisons"): the Support F1
/// comparisons follow `--holm-family` too.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn support_f1_comparisons_follow_the_holm_family() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(eir_cites_what_it_read);
    let mut dirs = Vec::new();
    for (dataset, data) in [("musique", musique()), ("hotpotqa", hotpot())] {
        for model in ["m1", "m2"] {
            let url = format!("openai-compat:{}#{model}", server.url());
            let out = dir.path().join(format!("{dataset}-{model}"));
            Eval::new(dataset, &data, "eir,direct", &url, &out)
                .opt("--limit", 10)
                .ok();
            dirs.push(out.to_str().unwrap().to_string());
        }
    }
    // (raw p, Holm p) of the four `direct` rows of the Support F1 table.
    let rows = |family: &str| -> Vec<(String, f64, f64)> {
        let mut args = vec!["report"];
        args.extend(dirs.iter().map(String::as_str));
        args.extend(["--baseline", "eir", "--holm-family", family]);
        let report = ok(&args);
        report
            .lines()
            .skip_while(|l| !l.contains("Support F1, paired (EIR Tables 5 and 8)"))
            .skip(1)
            .take_while(|l| !l.starts_with("### "))
            .filter(|l| l.contains("| direct "))
            .map(|l| {
                let c: Vec<&str> = l.split('|').map(str::trim).collect();
                let n = c.len();
                (
                    c[2].to_string(),
                    c[n - 3].parse().unwrap(),
                    c[n - 2].parse().unwrap(),
                )
            })
            .collect()
    };
    for family in ["baseline", "arm"] {
        let got = rows(family);
        println!("--holm-family {family}: {got:?}");
        assert_eq!(got.len(), 4);
        let groups: Vec<Vec<usize>> = match family {
            "baseline" => vec![vec![0, 1, 2, 3]],
            // One family per model: rows alternate m1, m2 within each dataset.
            _ => ["#m1", "#m2"]
                .iter()
                .map(|m| (0..4).filter(|&i| got[i].0.ends_with(m)).collect())
                .collect(),
        };
        for g in groups {
            let raw: Vec<f64> = g.iter().map(|&i| got[i].1).collect();
            for (&i, want) in g.iter().zip(holm(&raw)) {
                assert!(
                    (got[i].2 - want).abs() < 6e-4,
                    "{family}: {:?} vs {want}",
                    got[i]
                );
            }
        }
    }
}

/// EIR App. B.1: "Their text, sentence boundaries, and order are preserved." On a
/// HotpotQA question (its sentences as the benchmark splits them), EIR's first prompt
/// lists the unread titles in the benchmark's paragraph order; reading the fourth
/// shows each of its sentences, numbered as the benchmark numbers them, word for word;
/// and the final call receives them as stored, in that order.
#[test]
fn eir_keeps_the_benchmarks_paragraph_order_sentence_boundaries_and_text() {
    let line = std::fs::read_to_string(crate::golden::fixture("hotpotqa")).unwrap();
    let q: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let context = q["context"].as_array().unwrap();
    let titles: Vec<String> = context
        .iter()
        .map(|p| p[0].as_str().unwrap().to_string())
        .collect();
    let fourth = titles[3].clone();
    let sentences: Vec<String> = context[3][1]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().trim().to_string())
        .collect();
    assert!(sentences.len() >= 2, "a paragraph of several sentences");
    let target = fourth.clone();
    let server = MockServer::spawn(move |req| {
        let p = prompt(req);
        if is_final(&p) {
            return Reply::text(json!({"answer": "yes", "evidence": []}).to_string());
        }
        let mv = match turn(&p) {
            1 => json!({"type": "read", "title": target}),
            _ => json!({"type": "submit", "answer": "yes"}),
        };
        eir_action(mv)
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("openai-compat:{}#m", server.url());
    Eval::new(
        "hotpotqa",
        crate::golden::fixture("hotpotqa"),
        "eir",
        &url,
        dir.path(),
    )
    .opt("--limit", 1)
    .ok();
    let prompts: Vec<String> = server.requests().iter().map(prompt).collect::<Vec<_>>();
    let listed: Vec<&str> = prompts[0]
        .split("Unread titles:\n")
        .nth(1)
        .unwrap()
        .lines()
        .map_while(|l| l.strip_prefix("- "))
        .collect();
    assert_eq!(listed, titles, "the benchmark's paragraph order");
    let numbered: Vec<String> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| format!("({i}) {s}"))
        .collect();
    let shown = format!("[{fourth}]\n{}", numbered.join("\n"));
    assert!(
        prompts[1].contains(&shown),
        "expected\n{shown}\nin\n{}",
        prompts[1]
    );
    let last = prompts.last().unwrap();
    assert!(is_final(last));
    let mut at = 0;
    for s in &sentences {
        let found = last[at..]
            .find(s.as_str())
            .unwrap_or_else(|| panic!("`{s}` in order in\n{last}"));
        at += found + s.len();
    }
}
