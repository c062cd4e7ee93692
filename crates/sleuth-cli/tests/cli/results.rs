//! Integration tests: results for analysis (issue 17): tidy report files, the papers'
//! methods x dataset pivot, `--baseline` on a swept method, `eval`'s closing scores,
//! and `export` writing official prediction files that `score` reads back to the
//! records' own numbers. Records come from real `eval` runs of the EIR-setting methods
//! on real benchmark questions against a local server that answers some questions with
//! their gold answer and cites the first paragraphs it was shown.

use crate::util::{hotpot, musique, ok, sleuth, stderr, stdout, twowiki, Eval};
use serde_json::{json, Value};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Question text -> gold answer, over the three benchmark files.
fn gold_answers() -> HashMap<String, String> {
    let mut out = HashMap::new();
    for file in [hotpot(), musique(), twowiki()] {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if let (Some(q), Some(a)) = (v["question"].as_str(), v["answer"].as_str()) {
                out.insert(q.to_string(), a.to_string());
            }
        }
    }
    out
}

fn after<'a>(text: &'a str, marker: &str) -> &'a str {
    text.split(marker).nth(1).unwrap_or("")
}

/// EIR: read the first unread title, then submit. Final call: the gold answer for
/// questions of even length (and for EIR, of length divisible by 3), a wrong one
/// otherwise; cite sentence 0 of the first two
/// paragraphs shown and sentence 1 of the first.
fn reply(gold: &HashMap<String, String>, req: &ReceivedRequest) -> Reply {
    let p = req.last_message().unwrap_or("").to_string();
    if p.contains("You are collecting evidence") {
        let first = after(&p, "Unread titles:\n")
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("- "))
            .unwrap_or("x")
            .to_string();
        let action = if p.contains("Turn 1") {
            json!({"type": "read", "title": first})
        } else {
            json!({"type": "submit", "answer": "retrieval"})
        };
        let body =
            json!({"reasoning": "r", "requirements": [], "conclusions": [], "action": action});
        return Reply::text(body.to_string());
    }
    if !p.contains("Answer the question from the evidence below") {
        return memory_reply(gold, req);
    }
    let question = after(&p, "Question: ").lines().next().unwrap_or("").trim();
    let all_titles: Vec<&str> = after(&p, "Evidence:")
        .lines()
        .filter_map(|l| l.strip_prefix('[').and_then(|l| l.strip_suffix(']')))
        .collect();
    // EIR (few paragraphs read) also gets every third question right, so the methods
    // differ.
    let right = question.len().is_multiple_of(2)
        || (all_titles.len() < 3 && question.len().is_multiple_of(3));
    let answer = match gold.get(question) {
        Some(a) if right => a.clone(),
        _ => "certainly not this".to_string(),
    };
    let titles: Vec<&str> = all_titles.iter().copied().take(2).collect();
    let mut evidence: Vec<Value> = titles
        .iter()
        .map(|t| json!({"title": t, "sentence": 0}))
        .collect();
    if let Some(t) = titles.first() {
        evidence.push(json!({"title": t, "sentence": 1}));
    }
    Reply::text(json!({"answer": answer, "evidence": evidence}).to_string())
}

/// Working-memory methods: search, then finish with two facts: one citing the first
/// title the search showed, one citing a source no observation showed.
fn memory_reply(gold: &HashMap<String, String>, req: &ReceivedRequest) -> Reply {
    let messages = req.body["messages"].as_array().unwrap();
    let first_user = messages[1]["content"].as_str().unwrap_or("");
    let question = after(first_user, "Question: ").lines().next().unwrap_or("");
    let answer = gold.get(question).cloned().unwrap_or_default();
    if !messages.iter().any(|m| m["role"] == "assistant") {
        return Reply::text("Confirmed Facts:\n- none\nActive Hypotheses:\n- none\nOpen Questions:\n- [Q1] who? | action: search | priority: high\nAction: search[the question words]");
    }
    let last = req.last_message().unwrap_or("");
    let shown = after(last, "(1) [").split(']').next().unwrap_or("");
    Reply::text(format!(
        "Confirmed Facts:\n- [F1] seen fact (source: {shown})\n- [F2] {answer} (source: Invented Source)\nActive Hypotheses:\n- [H1] {answer} | confidence: high | supports: F1, F2 | contradicts: -\nOpen Questions:\n- none\nAction: finish[{answer}]"
    ))
}

fn server() -> MockServer {
    let gold = gold_answers();
    MockServer::spawn(move |req: &ReceivedRequest| reply(&gold, req))
}

/// A gold file of the given lines of `file` (so scoring covers exactly the run).
fn subset(dir: &Path, name: &str, file: &Path, pick: impl Fn(&Value) -> bool, n: usize) -> PathBuf {
    let lines: Vec<String> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| pick(&serde_json::from_str(l).unwrap()))
        .take(n)
        .map(str::to_string)
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// MuSiQue questions of 2, 3 and 4 hops (the file is sorted by hops).
fn musique_mix(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(musique()).unwrap();
    let mut lines = Vec::new();
    for (hops, n) in [("2hop", 3), ("3hop", 3), ("4hop", 2)] {
        lines.extend(
            text.lines()
                .filter(|l| {
                    l.contains(&format!("\"id\": \"{hops}"))
                        || l.contains(&format!("\"id\":\"{hops}"))
                })
                .take(n),
        );
    }
    assert_eq!(lines.len(), 8, "2/3/4-hop MuSiQue questions");
    let path = dir.join("musique.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

struct Runs {
    _server: MockServer,
    tmp: tempfile::TempDir,
    /// (dataset, gold file, run dir)
    runs: Vec<(&'static str, PathBuf, PathBuf)>,
    eval_stderr: Vec<String>,
}

/// `full-pool,eir` (recipe order, not alphabetical) on HotpotQA, 2Wiki and MuSiQue.
fn runs() -> Runs {
    let server = server();
    let model = format!("openai-compat:{}#m", server.url());
    let tmp = tempfile::tempdir().unwrap();
    let data = [
        (
            "hotpotqa",
            subset(tmp.path(), "hotpot.jsonl", &hotpot(), |_| true, 4),
        ),
        (
            "2wiki",
            subset(tmp.path(), "2wiki.jsonl", &twowiki(), |_| true, 4),
        ),
        ("musique", musique_mix(tmp.path())),
    ];
    let mut runs = Vec::new();
    let mut eval_stderr = Vec::new();
    for (dataset, gold) in data {
        let dir = tmp.path().join("runs").join(dataset);
        let o = Eval::new(dataset, &gold, "full-pool,eir", &model, &dir).output();
        assert!(o.status.success(), "{}", stderr(&o));
        eval_stderr.push(stderr(&o));
        runs.push((dataset, gold, dir));
    }
    Runs {
        _server: server,
        tmp,
        runs,
        eval_stderr,
    }
}

fn records(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Mean of a record field over one method's records, in %.
fn mean(records: &[Value], method: &str, field: &str) -> f64 {
    let v: Vec<f64> = records
        .iter()
        .filter(|r| r["method"] == method)
        .map(|r| r[field].as_f64().unwrap())
        .collect();
    100.0 * v.iter().sum::<f64>() / v.len() as f64
}

fn close(got: &Value, want: f64, what: &str) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    assert!((got - want).abs() < 1e-6, "{what}: got {got}, want {want}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn export_then_score_gives_the_records_numbers_and_eval_prints_them() {
    let r = runs();
    for ((dataset, gold, dir), eval_err) in r.runs.iter().zip(&r.eval_stderr) {
        let recs = records(dir);
        let some_right = recs.iter().any(|x| x["em"] == 1.0);
        let some_wrong = recs.iter().any(|x| x["em"] == 0.0);
        assert!(
            some_right && some_wrong,
            "{dataset}: a mix of right and wrong"
        );
        let mut supports = Vec::new();
        for method in ["full-pool", "eir"] {
            let em = mean(&recs, method, "em");
            let f1 = mean(&recs, method, "f1");
            let support = mean(&recs, method, "support_f1");
            // eval's closing table: method, n, EM, F1, support F1.
            let n = recs.iter().filter(|x| x["method"] == method).count();
            let line = format!("{method:<9} {n:>5} {em:>6.1} {f1:>6.1} {support:>11.1}");
            assert!(
                eval_err.contains(&line),
                "{dataset}: no `{line}` in:\n{eval_err}"
            );
            let ext = if *dataset == "musique" {
                "jsonl"
            } else {
                "json"
            };
            let file = r.tmp.path().join(format!("{dataset}-{method}.{ext}"));
            ok(&[
                "export",
                dir.to_str().unwrap(),
                "--format",
                dataset,
                "--method",
                method,
                "--out",
                file.to_str().unwrap(),
            ]);
            let scored: Value = serde_json::from_str(&ok(&[
                "score",
                "--dataset",
                dataset,
                "--data",
                gold.to_str().unwrap(),
                "--predictions",
                file.to_str().unwrap(),
                "--json",
            ]))
            .unwrap();
            assert_eq!(scored["missing"], 0, "{dataset} {method}: {scored}");
            // Each official script's keys on its scale: 2Wiki's in percent, the others
            // as fractions.
            let (em_key, f1_key, sp_key, scale) = match *dataset {
                "musique" => ("answer_em", "answer_f1", "support_f1", 0.01),
                "2wiki" => ("em", "f1", "sp_f1", 1.0),
                _ => ("em", "f1", "sp_f1", 0.01),
            };
            close(
                &scored[em_key],
                em * scale,
                &format!("{dataset} {method} EM"),
            );
            close(
                &scored[f1_key],
                f1 * scale,
                &format!("{dataset} {method} F1"),
            );
            close(
                &scored[sp_key],
                support * scale,
                &format!("{dataset} {method} support F1"),
            );
            supports.push(support);
        }
        assert!(
            supports.iter().any(|s| *s > 0.0),
            "{dataset}: some citations scored"
        );
    }
    // The official formats: HotpotQA/2Wiki one object with answer and sp maps; MuSiQue
    // JSON Lines with the four official keys.
    let hp = ok(&["export", r.runs[0].2.to_str().unwrap(), "--method", "eir"]);
    let hp: Value = serde_json::from_str(&hp).unwrap();
    let (id, facts) = hp["sp"].as_object().unwrap().iter().next().unwrap();
    assert!(hp["answer"][id].is_string() && facts[0][1].is_u64(), "{hp}");
    let mq = ok(&["export", r.runs[2].2.to_str().unwrap(), "--method", "eir"]);
    let row: Value = serde_json::from_str(mq.lines().next().unwrap()).unwrap();
    let mut keys: Vec<&str> = row
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "id",
            "predicted_answer",
            "predicted_answerable",
            "predicted_support_idxs"
        ]
    );
    // Records given to score as predictions: the error says how to export them.
    let o = sleuth(&[
        "score",
        "--dataset",
        "musique",
        "--data",
        r.runs[2].1.to_str().unwrap(),
        "--predictions",
        r.runs[2].2.join("records.jsonl").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .contains("holds run records, not predictions: `sleuth export RUN --format musique"),
        "{}",
        stderr(&o)
    );
    // Two methods in the run: export must be told which.
    let o = sleuth(&["export", r.runs[0].2.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("choose one with --method: 'eir', 'full-pool'"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn report_pivots_methods_by_dataset_and_hops_and_writes_tidy_files() {
    let r = runs();
    let out = r.tmp.path().join("out");
    let o = sleuth(&[
        "report",
        r.tmp.path().join("runs").to_str().unwrap(),
        "--baseline",
        "full-pool",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    let pivot = after(&md, "### EM / F1 per dataset");
    let header = pivot.lines().nth(2).unwrap();
    let cols: Vec<&str> = header
        .split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cols,
        [
            "method",
            "HotpotQA EM/F1",
            "2Wiki EM/F1",
            "MuSiQue 2-hop EM/F1",
            "MuSiQue 3-hop EM/F1",
            "MuSiQue 4-hop EM/F1"
        ],
        "{pivot}"
    );
    // Recipe order: full-pool was listed first.
    let rows: Vec<&str> = pivot.lines().skip(4).take(2).collect();
    assert!(
        rows[0].starts_with("| full-pool") && rows[1].starts_with("| eir"),
        "{pivot}"
    );
    // MuSiQue's splits are datasets of their own (SLEUTH Table 1): no pooled column.
    let mq: Vec<Value> = records(&r.runs[2].2)
        .into_iter()
        .filter(|r| r["hops"] == 2)
        .collect();
    let want = format!(
        "{:.1} / {:.1}",
        mean(&mq, "eir", "em"),
        mean(&mq, "eir", "f1")
    );
    assert!(rows[1].contains(&want), "{} lacks {want}", rows[1]);

    // Tidy files: snake_case keys, one value per cell.
    let csv = std::fs::read_to_string(out.join("pivot.csv")).unwrap();
    assert!(
        csv.starts_with("model,method,label,hotpotqa_em,hotpotqa_f1,hotpotqa_n,2wiki_em,"),
        "{csv}"
    );
    assert!(
        csv.contains(",musique_4hop_em,musique_4hop_f1,musique_4hop_n\n"),
        "{csv}"
    );
    let cmp = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    let head = cmp.lines().next().unwrap();
    assert_eq!(
        head,
        "dataset,model,method,label,baseline,n,em_diff,em_ci_lo,em_ci_hi,f1_diff,f1_ci_lo,f1_ci_hi,p_f1,p_f1_holm,b,c,p,p_holm,wins,losses,ties"
    );
    for line in cmp.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 21, "{line}");
        for c in &cells[5..] {
            c.parse::<f64>()
                .unwrap_or_else(|_| panic!("`{c}` is not a number in {line}"));
        }
        let (w, l, t): (u64, u64, u64) = (
            cells[18].parse().unwrap(),
            cells[19].parse().unwrap(),
            cells[20].parse().unwrap(),
        );
        assert_eq!(w + l + t, cells[5].parse::<u64>().unwrap(), "{line}");
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.starts_with("dataset,model,method,label,n,em,f1,cond_acc,timeout_pct,turns,calls_per_q,tokens_per_q,cached_pct,cost_per_q\n"),
        "{summary}"
    );
    let jsonl = std::fs::read_to_string(out.join("summary.jsonl")).unwrap();
    assert_eq!(
        jsonl.lines().count(),
        10,
        "2 methods x 5 datasets (MuSiQue's three splits apart)"
    );
    let first: Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert!(first["em"].is_number() && first["label"] == "", "{first}");
    // Figures per dataset; the difference from the baseline with its intervals as
    // error bars (eir's ΔEM and ΔF1); n and model in every caption.
    let all = records(&r.runs[2].2);
    let split_n = |h: u64| {
        all.iter()
            .filter(|r| r["method"] == "eir" && r["hops"] == h)
            .count()
    };
    for (d, n) in [
        ("hotpotqa", 4),
        ("2wiki", 4),
        ("musique_2hop", split_n(2)),
        ("musique_3hop", split_n(3)),
        ("musique_4hop", split_n(4)),
    ] {
        let svg = std::fs::read_to_string(out.join(format!("comparison_{d}.svg"))).unwrap();
        assert_eq!(svg.matches("class=\"error-bar\"").count(), 2, "{d}: {svg}");
        assert!(
            svg.contains(&format!("n = {n} questions per arm · model openai-compat:")),
            "{svg}"
        );
        assert!(out.join(format!("accuracy_at_turn_{d}.svg")).is_file());
    }
    assert!(
        !out.join("comparison_musique.svg").exists(),
        "no pooled MuSiQue"
    );
    // EM by hop count (Figure 2a) lays the splits side by side.
    let hops = std::fs::read_to_string(out.join("em_by_hops_musique.svg")).unwrap();
    assert!(
        hops.contains("n = 8 questions per arm · model openai-compat:"),
        "{hops}"
    );
    assert!(
        !out.join("em_by_hops_hotpotqa.svg").exists(),
        "one hop count: no figure"
    );
    // The Markdown keeps the pretty, packed form.
    assert!(md.contains("| ΔEM [95% CI]"), "{md}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_baseline_with_several_arms_is_an_error_listing_them() {
    let server = server();
    let model = format!("openai-compat:{}#m", server.url());
    let tmp = tempfile::tempdir().unwrap();
    let gold = subset(tmp.path(), "hotpot.jsonl", &hotpot(), |_| true, 2);
    for reads in ["3", "10"] {
        Eval::new(
            "hotpotqa",
            &gold,
            "eir",
            &model,
            tmp.path().join(format!("r{reads}")),
        )
        .set(&format!("reads={reads}"))
        .ok();
    }
    let o = sleuth(&["report", tmp.path().to_str().unwrap(), "--baseline", "eir"]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("baseline `eir` has 2 arms; name one: --baseline 'eir [reads=10]', --baseline 'eir [reads=3]'"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn html_index_links_every_trace_and_a_side_by_side_view() {
    let r = runs();
    // A working-memory run beside them: its facts cite one shown and one unseen source.
    let model = format!("openai-compat:{}#m", r._server.url());
    let sleuth_dir = r.tmp.path().join("runs").join("hotpotqa-sleuth");
    Eval::new("hotpotqa", &r.runs[0].1, "sleuth", &model, &sleuth_dir).ok();
    let out = r.tmp.path().join("html");
    let o = sleuth(&[
        "report",
        r.tmp.path().join("runs").to_str().unwrap(),
        "--html",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let pages: Vec<&str> = index
        .split("href=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .filter(|h| h.ends_with("trace.html"))
        .collect();
    assert_eq!(pages.len(), 4, "one trace page per run: {index}");
    for p in &pages {
        assert!(out.join(p).is_file(), "{p} is linked and exists");
    }
    assert!(index.contains("href=\"questions.html\""));
    assert!(
        index.contains("<img src=\"comparison_hotpotqa.svg\"")
            || index.contains("<img src=\"accuracy_at_turn_hotpotqa.svg\""),
        "{index}"
    );
    // Side by side: every question once per dataset, every arm a column, each answer a
    // link to its entry in a trace page.
    let q = std::fs::read_to_string(out.join("questions.html")).unwrap();
    let hotpot = after(&q, "<h2>hotpotqa</h2>")
        .split("</table>")
        .next()
        .unwrap();
    assert_eq!(hotpot.matches("\"><td><code>").count(), 4, "{hotpot}");
    assert!(
        hotpot.contains("<th>full-pool</th><th>eir</th><th>sleuth</th>"),
        "{hotpot}"
    );
    let link = after(hotpot, "<a href=\"").split('"').next().unwrap();
    let (page, anchor) = link.split_once('#').unwrap();
    let trace = std::fs::read_to_string(out.join(page)).unwrap();
    assert!(trace.contains(&format!("id=\"{anchor}\"")), "{link}");
    // EIR's final call is a step of its own.
    let eir_page = std::fs::read_to_string(out.join("hotpotqa/trace.html")).unwrap();
    assert!(
        eir_page.contains("<section class=\"turn final-call\"><h3>Final call"),
        "final call step"
    );
    // The invented source is flagged in every sleuth record, the shown one never.
    assert!(pages.contains(&"hotpotqa-sleuth/trace.html"), "{pages:?}");
    let sleuth_page = "hotpotqa-sleuth/trace.html";
    let sleuth_page = std::fs::read_to_string(out.join(sleuth_page)).unwrap();
    assert_eq!(
        sleuth_page.matches("source never shown").count(),
        4,
        "one per question"
    );
    assert_eq!(
        sleuth_page
            .matches("(source: Invented Source)</span> <span class=\"badge unseen\"")
            .count(),
        4
    );
}

/// Splits a Markdown table row into trimmed cells.
fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn dry_runs_estimate_tokens_and_dollars_and_unpriced_models_are_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let gold = subset(tmp.path(), "hotpot.jsonl", &hotpot(), |_| true, 4);
    let dry = |model: &str, out: &Path, extra: &[&str]| {
        Eval::new("hotpotqa", &gold, "eir,react", model, out)
            .extra(&["--dry-run"])
            .extra(extra)
            .output()
    };
    // No earlier records: every budget used up (eir 8 calls, react 20 per question),
    // 2500 input and 200 output tokens per call, gpt-4o-mini at $0.15 / $0.60 per M.
    let o = dry("openai:gpt-4o-mini", &tmp.path().join("none"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let row = |name: &str| {
        cells(
            out.lines()
                .find(|l| l.starts_with(&format!("| {name} ")))
                .unwrap_or_else(|| panic!("no {name} row in {out}")),
        )
    };
    assert_eq!(
        row("eir")[1..],
        ["4", "32", "80000", "6400", "0.02"],
        "{out}"
    );
    assert_eq!(
        row("react")[1..],
        ["4", "80", "200000", "16000", "0.04"],
        "{out}"
    );
    assert!(
        out.contains("estimate: 112 calls, 280000 input + 22400 output tokens, $0.06"),
        "{out}"
    );
    assert!(out.contains("built-in prices checked 20"), "{out}");
    assert!(
        !tmp.path().join("none").exists(),
        "a dry run writes nothing"
    );

    // Measured: a real run's records give calls per question and tokens per call; a
    // price file prices the server's model.
    let server = server();
    let model = format!("openai-compat:{}#m", server.url());
    let run = tmp.path().join("run");
    let o = Eval::new("hotpotqa", &gold, "eir", &model, &run).output();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("warning: no price for `m`").count(),
        1,
        "an unpriced model warns once: {}",
        stderr(&o)
    );
    let recs = records(&run);
    let calls: u64 = recs.iter().map(|r| r["calls"].as_u64().unwrap()).sum();
    let input: u64 = recs
        .iter()
        .map(|r| r["input_tokens"].as_u64().unwrap())
        .sum();
    let prices = tmp.path().join("prices.toml");
    std::fs::write(&prices, "[m]\ninput = 1.0\noutput = 2.0\n").unwrap();
    let o = dry(&model, &run, &["--prices", prices.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The run directory's four eir records are done: what is left is react's four.
    let eir = cells(out.lines().find(|l| l.starts_with("| eir ")).unwrap());
    assert_eq!((eir[1].as_str(), eir[2].as_str()), ("0", "0"), "{out}");
    assert!(
        out.contains("4 episodes already recorded in the run directory are not counted"),
        "{out}"
    );
    let _ = input;
    assert!(
        out.contains(&format!(
            "measured in earlier records: eir {:.1} calls/q",
            calls as f64 / 4.0
        )),
        "{out}"
    );
    assert!(out.contains("no earlier records of react"), "{out}");

    // Unpriced: dollars unknown; under --max-cost an error unless --prices covers it.
    let o = dry(&model, &run, &[]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains("unknown (no price for the model)"),
        "{}",
        stdout(&o)
    );
    let o = dry(&model, &run, &["--max-cost", "1"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--max-cost: the price table has no entry for `m`"),
        "{}",
        stderr(&o)
    );
    let o = dry(
        &model,
        &run,
        &["--max-cost", "1", "--prices", prices.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn ask_marks_what_changed_since_the_previous_turn_and_fits_the_width() {
    let server = MockServer::spawn(|req: &ReceivedRequest| {
        let turn = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        Reply::text(if turn == 0 {
            "Confirmed Facts:\n- [F1] the courthouse is in Stanley (source: Mountrail County Courthouse)\nActive Hypotheses:\n- [H1] Stanley | confidence: low | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] which county? | action: search | priority: high\nAction: search[Mountrail County Courthouse]"
        } else {
            "Confirmed Facts:\n- [F1] the courthouse is in Stanley (source: Mountrail County Courthouse)\n- [F2] Stanley is the county seat (source: Stanley, North Dakota)\nActive Hypotheses:\n- [H1] Stanley | confidence: high | supports: F1, F2 | contradicts: -\nOpen Questions:\n- none\nAction: finish[Stanley]"
        })
    });
    let url = format!("openai-compat:{}#m", server.url());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sleuth"))
        .args([
            "ask",
            "--model",
            &url,
            "--dataset",
            "musique",
            "--data",
            musique().to_str().unwrap(),
            "--id",
            "2hop__574419_270105",
        ])
        .env("SLEUTH_NO_CACHE", "true")
        .env("COLUMNS", "60")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let turn2 = after(&out, "── Turn 2");
    for header in ["   Confirmed Facts", "   Active Hypotheses", "   Actions"] {
        assert!(out.contains(&format!("{header}\n")), "{header} in:\n{out}");
    }
    assert!(
        turn2.contains("\n     [F1] the courthouse"),
        "unchanged: {turn2}"
    );
    assert!(
        turn2.contains("\n   + [F2] Stanley is the county"),
        "new: {turn2}"
    );
    assert!(
        turn2.contains("\n   ~ [H1] Stanley | confidence: high"),
        "changed: {turn2}"
    );
    assert!(
        turn2.contains("\n   - [Q1] which county?"),
        "dropped: {turn2}"
    );
    let turn1 = after(&out, "── Turn 1").split("── Turn 2").next().unwrap();
    assert!(
        !turn1.contains("   + "),
        "nothing to compare turn 1 with: {turn1}"
    );
    for line in out.lines().filter(|l| l.starts_with("   │ ")) {
        assert!(line.chars().count() <= 60, "cut to COLUMNS=60: {line}");
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("   │ ") && l.ends_with('…')),
        "{out}"
    );
    // stderr is not a terminal here: no spinner frames in it.
    assert!(
        !stderr(&o).contains("waiting for the model"),
        "{}",
        stderr(&o)
    );
}

/// Subcommand names listed under `Commands:` in a help text (`help` left out).
fn subcommands(help: &str) -> Vec<String> {
    after(help, "Commands:\n")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_help_has_examples() {
    let mut stack: Vec<Vec<String>> = subcommands(&ok(&["--help"]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    let mut checked = 0;
    while let Some(path) = stack.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = ok(&args);
        assert!(
            help.contains("Examples:\n  sleuth "),
            "`sleuth {}` has no examples:\n{help}",
            path.join(" ")
        );
        for sub in subcommands(&help) {
            let mut p = path.clone();
            p.push(sub);
            stack.push(p);
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked} subcommands");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn completions_and_the_user_config_file() {
    let bash = ok(&["completions", "bash"]);
    assert!(
        bash.contains("_sleuth()") && bash.contains("export"),
        "{bash}"
    );
    assert!(ok(&["completions", "zsh"]).contains("#compdef sleuth"));
    assert!(ok(&["completions", "fish"]).contains("complete -c sleuth"));

    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sleuth"))
            .args(args)
            .env("SLEUTH_HOME", home.path())
            .env_remove("SLEUTH_CACHE")
            .output()
            .unwrap()
    };
    std::fs::write(
        home.path().join("config.toml"),
        "model = \"openai:gpt-4o-mini\"\ncache = \"/srv/sleuth-cache\"\ndata_dir = \"/srv/benchmarks\"\n",
    )
    .unwrap();
    // --help shows the config's values as the defaults.
    let help = stdout(&run(&["eval", "--help"]));
    assert!(help.contains("[default: openai:gpt-4o-mini]"), "{help}");
    assert!(help.contains("[default: /srv/sleuth-cache]"), "{help}");
    let help = stdout(&run(&["experiment", "--help"]));
    assert!(help.contains("[default: /srv/benchmarks]"), "{help}");
    // ... and they are used: eval needs no --model now.
    let tmp = tempfile::tempdir().unwrap();
    let gold = subset(tmp.path(), "h.jsonl", &hotpot(), |_| true, 2);
    let o = run(&[
        "eval",
        "--dataset",
        "hotpotqa",
        "--data",
        gold.to_str().unwrap(),
        "--methods",
        "eir",
        "--out",
        tmp.path().join("r").to_str().unwrap(),
        "--dry-run",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("with openai:gpt-4o-mini"),
        "{}",
        stdout(&o)
    );
    // A bad file is an error naming it and the line.
    std::fs::write(
        home.path().join("config.toml"),
        "model = \"m\"\nmodle = 1\n",
    )
    .unwrap();
    let o = run(&["methods"]);
    assert!(!o.status.success());
    let want = format!(
        "{}:2: unknown field `modle`",
        home.path().join("config.toml").display()
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
}
