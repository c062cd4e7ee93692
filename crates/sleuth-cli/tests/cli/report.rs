//! Integration tests: `sleuth report` on run directories we write here: two methods on
//! six questions of our own JSONL format (2-4 hops, one dataset: MuSiQue's hop splits
//! would be datasets apart, `sleuth_letter.rs`) with timeouts, verbose and reasoning errors,
//! traces with working memory, a second SLEUTH run without the nudge (a sweep), and a
//! shard with duplicates. Expected numbers are worked out by hand in the comments.

use crate::util::{ok, sleuth, stderr, stdout};
use ::sleuth::eval::RunRecord;
use serde_json::{json, Value};
use std::path::Path;

/// How an episode ends.
#[derive(Clone, Copy)]
enum End {
    /// finish[answer] at the last turn.
    Answer(&'static str),
    /// Budget exhausted without an answer.
    Timeout,
}

struct Ep {
    id: &'static str,
    hops: u8,
    gold: &'static str,
    end: End,
    turns: u32,
    /// Gold titles retrieved (of two).
    retrieved_gold: usize,
    /// Whether an observation shows the gold answer.
    saw_gold: bool,
}

const GOLD_TITLES: [&str; 2] = ["Green (album)", "Steve Hillage"];

fn turn(n: u32, last: bool, ep: &Ep, memory: bool, hostile: bool) -> Value {
    let action = match (last, ep.end) {
        (true, End::Answer(a)) => json!({"tool": "finish", "arg": a}),
        _ => json!({"tool": "search", "arg": format!("query {n}")}),
    };
    let shown = GOLD_TITLES
        .get(n as usize - 1)
        .filter(|_| (n as usize) <= ep.retrieved_gold);
    let mut text = format!("Paragraph for turn {n}.");
    if ep.saw_gold && n == 1 {
        text = format!("{text} The answer might be {}.", ep.gold);
    }
    if hostile {
        text = format!("{text} <script>alert(1)</script>");
    }
    let mut t = json!({
        "number": n,
        "response": format!("Thought {n}\nAction: {}", if last { "finish" } else { "search" }),
        "actions": [action],
        "observations": if last && matches!(ep.end, End::Answer(_)) { json!([]) } else {
            json!([{"text": text, "shown": shown.map(|s| vec![*s]).unwrap_or_default()}])
        },
        "nudged": false,
    });
    if memory {
        let facts: Vec<Value> = (1..=n.min(4))
            .map(|i| json!({"id": format!("F{i}"), "statement": format!("fact {i}"), "source": "Green (album)"}))
            .collect();
        let questions: Vec<Value> = (0..(3u32.saturating_sub(n / 2)))
            .map(|i| json!({"id": format!("Q{i}"), "text": "who?", "action": "search x", "priority": "high"}))
            .collect();
        let state = json!({
            "facts": facts,
            "hypotheses": [{"id": "H1", "text": "maybe", "confidence": "medium", "supports": ["F1"], "contradicts": []}],
            "questions": questions,
        });
        t["memory"] = state.clone();
        t["state"] = state;
        t["adherent"] = json!(true);
    }
    t
}

fn record(method: &str, ep: &Ep, memory: bool) -> String {
    let answer = match ep.end {
        End::Answer(a) => Some(a),
        End::Timeout => None,
    };
    let em = answer.is_some_and(|a| a.eq_ignore_ascii_case(ep.gold));
    let hostile = ep.id == "q6";
    let trace: Vec<Value> = (1..=ep.turns)
        .map(|n| turn(n, n == ep.turns, ep, memory, hostile))
        .collect();
    let r = json!({
        "id": ep.id, "dataset": "jsonl", "hops": ep.hops, "kind": null,
        "method": method, "model": "scripted:fixture",
        "answer": answer, "gold": [ep.gold],
        "em": if em { 1.0 } else { 0.0 }, "f1": if em { 1.0 } else if answer.is_some() { 0.5 } else { 0.0 },
        "finished": answer.is_some(), "timed_out": answer.is_none(),
        "stop": if answer.is_some() { "finished" } else { "timeout" },
        "turns": ep.turns, "calls": ep.turns,
        "calls_by_kind": {"action": ep.turns},
        "input_tokens": 1000 * ep.turns as u64, "output_tokens": 100 * ep.turns as u64,
        "cached_input_tokens": if method == "react" { 0 } else { 400 * ep.turns as u64 },
        "cost_usd": 0.001 * ep.turns as f64,
        "nudge_turn": null, "reminders": 0,
        "adherence": if memory { json!(1.0) } else { Value::Null },
        "retrieved": GOLD_TITLES[..ep.retrieved_gold].iter().chain(["Other"].iter()).collect::<Vec<_>>(),
        "gold_titles": GOLD_TITLES,
        "error": null,
        "trace": trace,
    });
    // Through the real type, so the fixture is a valid record.
    let parsed: RunRecord = serde_json::from_value(r).expect("fixture is a RunRecord");
    serde_json::to_string(&parsed).unwrap()
}

fn ep(
    id: &'static str,
    hops: u8,
    end: End,
    turns: u32,
    retrieved_gold: usize,
    saw_gold: bool,
) -> Ep {
    Ep {
        id,
        hops,
        gold: "Paris",
        end,
        turns,
        retrieved_gold,
        saw_gold,
    }
}

/// react: q1 right; q2 verbose ("Paris, France"); q3 right; q4 timeout (gold seen);
/// q5 reasoning error (both gold titles read); q6 timeout (gold never seen).
fn react() -> Vec<Ep> {
    vec![
        ep("q1", 2, End::Answer("Paris"), 3, 2, true),
        ep("q2", 2, End::Answer("Paris, France"), 4, 2, true),
        ep("q3", 3, End::Answer("paris"), 5, 2, true),
        ep("q4", 3, End::Timeout, 20, 2, true),
        ep("q5", 4, End::Answer("Lyon"), 6, 2, false),
        ep("q6", 4, End::Timeout, 20, 1, false),
    ]
}

/// sleuth (nudge 0.7): right on q1-q4 (q4 at turn 15); q5 wrong with one gold title
/// missing (a reasoning error: a gold paragraph was read); q6 timeout.
fn sleuth_nudge() -> Vec<Ep> {
    vec![
        ep("q1", 2, End::Answer("Paris"), 2, 2, true),
        ep("q2", 2, End::Answer("Paris"), 3, 2, true),
        ep("q3", 3, End::Answer("Paris"), 4, 2, true),
        ep("q4", 3, End::Answer("Paris"), 15, 2, true),
        ep("q5", 4, End::Answer("Lyon"), 16, 1, false),
        ep("q6", 4, End::Timeout, 20, 1, false),
    ]
}

/// sleuth without the nudge: q4 and q5 time out instead.
fn sleuth_none() -> Vec<Ep> {
    vec![
        ep("q1", 2, End::Answer("Paris"), 2, 2, true),
        ep("q2", 2, End::Answer("Paris"), 3, 2, true),
        ep("q3", 3, End::Answer("Paris"), 4, 2, true),
        ep("q4", 3, End::Timeout, 20, 2, true),
        ep("q5", 4, End::Timeout, 20, 1, false),
        ep("q6", 4, End::Timeout, 20, 1, false),
    ]
}

fn write_run(dir: &Path, nudge: &str, methods: &[(&str, Vec<Ep>)]) {
    std::fs::create_dir_all(dir).unwrap();
    let names: Vec<&str> = methods.iter().map(|(m, _)| *m).collect();
    let config = json!({
        "methods": names, "model": "scripted:fixture", "dataset": "jsonl",
        "settings": {"nudge": nudge, "turns": 20}, "started": "2025-01-01T00:00:00Z",
    });
    std::fs::write(dir.join("run.json"), config.to_string()).unwrap();
    let mut lines = String::new();
    for (m, eps) in methods {
        for e in eps {
            lines += &record(m, e, *m == "sleuth");
            lines.push('\n');
        }
    }
    std::fs::write(dir.join("records.jsonl"), lines).unwrap();
}

pub(crate) fn single_run() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write_run(
        &tmp.path().join("run"),
        "0.7",
        &[("react", react()), ("sleuth", sleuth_nudge())],
    );
    tmp
}

#[test]
fn single_run_prints_the_basic_table() {
    let tmp = single_run();
    let out = ok(&["report", tmp.path().join("run").to_str().unwrap()]);
    // react: EM 2/6; F1 (1 + .5 + 1 + 0 + .5 + 0)/6 = 50; cond. acc 2/4; 2 timeouts;
    // turns (3+4+5+20+6+20)/6 = 9.67; tokens 1100 * turns; cost 0.001 * turns.
    // sleuth: EM 4/6; F1 (4 + .5)/6 = 75; cond. acc 4/5; turns 60/6 = 10; 400 of
    // every 1000 input tokens read from the prompt cache: 40%.
    let want = "\
_conventions: ours (sleuth's own): MuSiQue by hop split; Holm families: all; bootstrap p: twice-tail; error classes: defined; differences: method minus baseline; EM and F1 against gold answers and their aliases_

### Accuracy and cost per method

| method |   n | EM % | F1 % | cond. acc % | timeout % | turns | calls/q | tokens/q | cached % | cost/q |
| ------ | --: | ---: | ---: | ----------: | --------: | ----: | ------: | -------: | -------: | -----: |
| react  |   6 | 33.3 | 50.0 |        50.0 |      33.3 |   9.7 |    9.67 |    10633 |      0.0 | 0.0097 |
| sleuth |   6 | 66.7 | 75.0 |        80.0 |      16.7 |  10.0 |   10.00 |    11000 |     40.0 | 0.0100 |
";
    assert!(out.starts_with(want), "got:\n{out}");
    // Errors: react q2 verbose, q5 reasoning, q4/q6 timeouts, q4 saw the gold (1 of 2);
    // sleuth's q5 is a reasoning error too: one of its two gold paragraphs was read.
    let errors = "\
| method |   n | correct | timeout | unfinished | verbose | reasoning | other | timed out | gold in history % |
| ------ | --: | ------: | ------: | ---------: | ------: | --------: | ----: | --------: | ----------------: |
| react  |   6 |    33.3 |    33.3 |        0.0 |    16.7 |      16.7 |   0.0 |         2 |              50.0 |
| sleuth |   6 |    66.7 |    16.7 |        0.0 |     0.0 |      16.7 |   0.0 |         1 |               0.0 |
";
    assert!(out.contains(errors), "got:\n{out}");
    // Support recall: react misses one of two gold titles on q6 only: 5.5 / 6.
    assert!(
        out.contains("| react  |           91.7 |           - |"),
        "got:\n{out}"
    );
    // By hops: react 2-hop 1 of 2 right (F1 (1 + .5) / 2); 4-hop none.
    assert!(
        out.contains("| react  | 2    |   2 |  50.0 |  75.0 |        50.0 |       0.0 |"),
        "got:\n{out}"
    );
    assert!(
        out.contains("| react  | 4    |   2 |   0.0 |  25.0 |         0.0 |      50.0 |"),
        "got:\n{out}"
    );
    assert!(out.contains("(Pass --baseline METHOD for paired comparisons.)"));
}

#[test]
fn baseline_comparison_has_mcnemar_holm_and_head_to_head() {
    let tmp = single_run();
    let out = ok(&[
        "report",
        tmp.path().join("run").to_str().unwrap(),
        "--baseline",
        "react",
    ]);
    // sleuth vs react: sleuth-only right on q2 and q4 (c = 2), react-only none (b = 0):
    // McNemar p = 2 * 0.5^2 = 0.5; one comparison, so Holm p = 0.5; W/L/T = 2/0/4.
    let row = out
        .lines()
        .find(|l| l.starts_with("| sleuth") && l.contains("react"))
        .unwrap_or_else(|| panic!("no comparison row in:\n{out}"));
    assert!(row.contains("| +33.3 ["), "{row}");
    assert!(
        row.contains("| 0/2 |    0.5000 |    0.5000 | 2/0/4 |"),
        "{row}"
    );
    // The F1 bootstrap p and its Holm p (one comparison: equal) follow ΔF1.
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let f1 = cells.iter().position(|c| c.starts_with("+25.0 [")).unwrap();
    assert_eq!(cells[f1 + 1], cells[f1 + 2], "{row}");
    let header: Vec<&str> = out
        .lines()
        .find(|l| l.contains("ΔF1 [95% CI]") && l.contains("b/c"))
        .unwrap()
        .split('|')
        .map(str::trim)
        .collect();
    let want = [
        "ΔF1 [95% CI]",
        "F1 p",
        "F1 Holm p",
        "b/c",
        "McNemar p",
        "EM Holm p",
    ];
    assert!(header.windows(6).any(|w| w == want), "{header:?}");
}

#[test]
fn json_output_is_one_object_with_every_analysis() {
    let tmp = single_run();
    let out = ok(&[
        "report",
        tmp.path().join("run").to_str().unwrap(),
        "--json",
        "--baseline",
        "react",
    ]);
    let v: Value = serde_json::from_str(&out).expect("one JSON object");
    let a = &v["analysis"];
    assert_eq!(a["summaries"][0]["arm"]["method"], "react");
    assert_eq!(a["summaries"][1]["em"].as_f64().unwrap().round(), 67.0);
    assert_eq!(a["comparisons"][0]["p_mcnemar"], 0.5);
    // Accuracy at turn: sleuth right at turns 2, 3, 4 and 15 -> 50% by turn 4, 66.7% by 15.
    let curve = &a["accuracy_at_turn"][1]["accuracy"];
    assert_eq!(curve.as_array().unwrap().len(), 20);
    assert_eq!(curve[3].as_f64().unwrap(), 50.0);
    assert!((curve[14].as_f64().unwrap() - 200.0 / 3.0).abs() < 1e-9);
    // Memory cohort: default 14 turns (70% of 20); sleuth episodes >= 14 turns: q4, q5, q6.
    let mem = &a["memory"][0];
    assert_eq!(mem["min_turns"], 14);
    assert_eq!(mem["cohort"], 3);
    assert_eq!(mem["turns"][0]["facts"], 1.0);
    assert_eq!(mem["turns"][13]["facts"], 4.0);
    assert!(v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "comparison"));
}

#[test]
fn the_memory_cohort_is_sized_from_the_arms_that_keep_a_memory() {
    // A Reflexion-like arm whose chained episodes last 40 turns keeps no memory: the
    // cohort stays at 70% of the longest SLEUTH episode (14 of 20), not 28 of 40.
    let tmp = tempfile::tempdir().unwrap();
    let long: Vec<Ep> = react()
        .into_iter()
        .map(|mut e| {
            e.turns = 40;
            e
        })
        .collect();
    write_run(
        &tmp.path().join("run"),
        "0.7",
        &[("reflexion", long), ("sleuth", sleuth_nudge())],
    );
    let out = ok(&["report", tmp.path().join("run").to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let mem = &v["analysis"]["memory"];
    assert_eq!(mem.as_array().unwrap().len(), 1, "{mem}");
    assert_eq!(mem[0]["min_turns"], 14);
    assert_eq!(mem[0]["cohort"], 3);
}

#[test]
fn sweep_across_run_dirs_labels_arms_and_writes_files() {
    let tmp = tempfile::tempdir().unwrap();
    write_run(
        &tmp.path().join("nudge-0.7"),
        "0.7",
        &[("react", react()), ("sleuth", sleuth_nudge())],
    );
    write_run(
        &tmp.path().join("nudge-none"),
        "none",
        &[("sleuth", sleuth_none())],
    );
    let out_dir = tmp.path().join("out");
    let o = sleuth(&[
        "report",
        tmp.path().to_str().unwrap(), // the parent: run directories are found below it
        "--baseline",
        "react",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("| sleuth [nudge=0.7]  |"), "got:\n{out}");
    assert!(out.contains("| sleuth [nudge=none] |"), "got:\n{out}");
    // Sweep table: EM 66.7 with the nudge, 50.0 without; timeouts 16.7 vs 50.0.
    assert!(
        out.contains(
            "| jsonl   | scripted:fixture | sleuth | nudge  |      | 0.7   |   6 | 66.7 |      16.7 |"
        ),
        "got:\n{out}"
    );
    assert!(
        out.contains(
            "| jsonl   | scripted:fixture | sleuth | nudge  |      | none  |   6 | 50.0 |      50.0 |"
        ),
        "got:\n{out}"
    );
    // Two comparisons with react form one Holm family: p = 0.5 and 1.0 -> Holm 1.0 both.
    assert!(
        out.contains(
            "| sleuth [nudge=0.7]  | react    |   6 | +33.3 [+0.0, +66.7] | +25.0 [+0.0, +58.3] |"
        ),
        "got:\n{out}"
    );
    assert!(
        out.contains("| 0/2 |    0.5000 |    1.0000 | 2/0/4 |"),
        "got:\n{out}"
    );
    assert!(
        out.contains(
            "| sleuth [nudge=none] | react    |   6 | +16.7 [+0.0, +50.0] | +0.0 [-25.0, +25.0] |"
        ),
        "got:\n{out}"
    );
    assert!(
        out.contains("| 0/1 |    1.0000 |    1.0000 | 1/0/5 |"),
        "got:\n{out}"
    );
    // The F1 bootstrap p's Holm over the same two: the smaller doubled, the larger kept
    // at least as large (capped at 1).
    let f1_p = |label: &str| -> (f64, f64) {
        let row = out
            .lines()
            .find(|l| l.starts_with(label) && l.contains("| react "))
            .unwrap();
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        (cells[6].parse().unwrap(), cells[7].parse().unwrap())
    };
    let (with, without) = (f1_p("| sleuth [nudge=0.7]"), f1_p("| sleuth [nudge=none]"));
    let (small, large) = if with.0 <= without.0 {
        (with, without)
    } else {
        (without, with)
    };
    assert!(
        (small.1 - (2.0 * small.0).min(1.0)).abs() < 1e-4,
        "{small:?}"
    );
    assert!((large.1 - large.0.max(small.1)).abs() < 1e-4, "{large:?}");
    for f in [
        "summary.csv",
        "summary.json",
        "comparison.csv",
        "errors.csv",
        "by_hops.csv",
        "sweeps.csv",
        "accuracy_at_turn.csv",
        "memory.csv",
        "report.json",
        "report.md",
        "em_by_hops_jsonl.svg",
        "sweep_nudge_jsonl.svg",
        "accuracy_at_turn_jsonl.svg",
    ] {
        assert!(out_dir.join(f).is_file(), "missing {f}");
    }
    let csv = std::fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    assert!(
        csv.starts_with(
            "dataset,model,method,label,n,em,f1,cond_acc,timeout_pct,turns,calls_per_q,tokens_per_q,cached_pct,cost_per_q\njsonl,scripted:fixture,react,,6,33.33"
        ),
        "{csv}"
    );
    let svg = std::fs::read_to_string(out_dir.join("sweep_nudge_jsonl.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("sleuth EM") && svg.contains("sleuth timeout"));
    // SLEUTH Figure 3: ReAct (no nudge) as a dashed reference line at its EM (33.3).
    assert!(
        svg.contains(r#"class="reference""#) && svg.contains("react EM 33.3"),
        "{svg}"
    );
    // Figure 4: the nudge turn marked on accuracy at turn t.
    let turns = std::fs::read_to_string(out_dir.join("accuracy_at_turn_jsonl.svg")).unwrap();
    assert!(
        turns.contains(r#"class="mark""#) && turns.contains("nudge (turn "),
        "{turns}"
    );
    let memory_svgs = std::fs::read_dir(&out_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("memory_sleuth")
        })
        .count();
    assert_eq!(memory_svgs, 2, "one memory figure per sleuth arm");
}

#[test]
fn shards_are_merged_and_conflicting_duplicates_warned() {
    let tmp = single_run();
    let run = tmp.path().join("run");
    let text = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Split into two shard files with q1 of react in both, identical: no warning.
    std::fs::write(run.join("records.jsonl"), lines[..4].join("\n") + "\n").unwrap();
    std::fs::write(
        run.join("records.shard-2.jsonl"),
        lines[3..].join("\n") + "\n",
    )
    .unwrap();
    let o = sleuth(&["report", run.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("| react  |   6 | 33.3 |"),
        "{}",
        stdout(&o)
    );
    // A third file disagreeing about q1 of react: kept once, with a warning.
    let mut changed: Value = serde_json::from_str(lines[0]).unwrap();
    changed["answer"] = json!("Berlin");
    changed["em"] = json!(0.0);
    std::fs::write(
        run.join("records.shard-3.jsonl"),
        changed.to_string() + "\n",
    )
    .unwrap();
    let o = sleuth(&["report", run.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("conflicting duplicate record for question q1"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("| react  |   6 | 33.3 |"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_input_names_file_and_line() {
    let tmp = single_run();
    let run = tmp.path().join("run");
    let mut text = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    text.push_str("{\"id\": 3}\n");
    std::fs::write(run.join("records.jsonl"), &text).unwrap();
    let o = sleuth(&["report", run.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("records.jsonl:13: not a run record"), "{err}");
    // An unfinished last line (interrupted write) is skipped with a warning instead.
    text.truncate(text.len() - "{\"id\": 3}\n".len());
    text.push_str("{\"id\": \"q9\", \"dat");
    std::fs::write(run.join("records.jsonl"), &text).unwrap();
    let o = sleuth(&["report", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped an unfinished last line"));
    let o = sleuth(&["report", tmp.path().join("nope").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no such file or directory"),
        "{}",
        stderr(&o)
    );
    let o = sleuth(&["report", run.to_str().unwrap(), "--baseline", "ircot"]);
    assert!(
        stderr(&o).contains("baseline `ircot` has no records (present: react, sleuth)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn html_trace_viewer_escapes_hostile_text() {
    let tmp = single_run();
    let run = tmp.path().join("run");
    // A model answer with markup, in addition to q6's paragraph with a script tag.
    let text = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    let text = text.replace("\"Lyon\"", "\"<img src=x onerror=alert(2)>Lyon\"");
    std::fs::write(run.join("records.jsonl"), text).unwrap();
    let o = sleuth(&["report", run.to_str().unwrap(), "--html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(run.join("trace.html")).unwrap();
    assert!(
        !html.contains("<script>alert"),
        "raw script from a paragraph"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<img"), "raw markup from a model answer");
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;Lyon"));
    // Self-contained: no external resources of any kind.
    for needle in ["http://", "https://", "src=\"", "href=\"", "@import"] {
        assert!(!html.contains(needle), "page references {needle}");
    }
    // Every question is listed with its filter attributes, turns and memory.
    assert_eq!(html.matches("<details class=\"q ").count(), 12);
    assert!(html.contains("data-method=\"sleuth\" data-correct=\"1\" data-timeout=\"0\""));
    assert!(html.contains("<h4>Confirmed facts</h4>"));
    assert!(html.contains("<b>search</b>[query 1]"));
    assert!(html.contains("id=\"f-method\"") && html.contains("id=\"f-timeout\""));
}

/// The repository's `experiments/` folder.
fn recipes() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn nudge_sweep_plan_counts_real_musique_splits() {
    let data = crate::util::recipe_data();
    let recipe = recipes().join("nudge-sweep.toml");
    let out = ok(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        "scripted:x",
        "--data",
        &data[1],
        "--data",
        &data[3],
        "--data",
        &data[5],
        "--dry-run",
    ]);
    // 9 SLEUTH nudge values + ReAct with and without the nudge; the shared MuSiQue
    // subset has 23 4-hop questions (ids starting `4hop`); 20 calls per episode at T = 20.
    assert!(
        out.contains("11 jobs, 253 episodes; upper bound: 5060 model calls if every episode used its whole budget"),
        "{out}"
    );
    let none_row = out
        .lines()
        .find(|l| l.contains("| sleuth ") && l.contains("nudge=none tau=2"))
        .expect("a sleuth nudge=none row");
    let cells: Vec<&str> = none_row.split('|').map(str::trim).collect();
    assert_eq!(
        &cells[cells.len() - 7..cells.len() - 4],
        ["23", "23", "460"],
        "{none_row}"
    );
    assert!(out.contains("--hops 4 --set nudge=0.7 --set nudge_all=true --set top_k=3 --set turns=20 --out runs/nudge-sweep/musique-4hop/react/nudge-0.7"), "{out}");
    // --limit overrides the recipe for a smoke run.
    let out = ok(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        "scripted:x",
        "--data",
        &data[1],
        "--data",
        &data[3],
        "--data",
        &data[5],
        "--dry-run",
        "--limit",
        "5",
    ]);
    assert!(out.contains("11 jobs, 55 episodes"), "{out}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn experiment_errors_are_clear() {
    let data = crate::util::recipe_data();
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\nmethods = [\"react\"]\nbogus = 1\n[[datasets]]\nname = \"hotpotqa\"\ndata = \"h.jsonl\"\n").unwrap();
    let o = sleuth(&[
        "experiment",
        bad.to_str().unwrap(),
        "--model",
        "scripted:x",
        "--dry-run",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bad.toml") && stderr(&o).contains("bogus"),
        "{}",
        stderr(&o)
    );
    // Data paths never start at the recipe's own folder: the old key says so.
    std::fs::write(&bad, "name = \"x\"\nmethods = [\"react\"]\ndata_root = \"../data\"\n[[datasets]]\nname = \"hotpotqa\"\n").unwrap();
    let o = sleuth(&[
        "experiment",
        bad.to_str().unwrap(),
        "--model",
        "scripted:x",
        "--dry-run",
    ]);
    assert!(
        stderr(&o).contains("`data_root` is no longer read"),
        "{}",
        stderr(&o)
    );
    // Running (not a dry run) goes through eval's job runner, job by job, and a failure
    // names the job.
    let recipe = recipes().join("topk-sweep.toml");
    let o = sleuth(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        "scripted:x",
        "--data",
        &data[1],
        "--data",
        &data[3],
        "--data",
        &data[5],
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("job 1 (musique-4hop/react/top_k-1)"),
        "{}",
        stderr(&o)
    );
}

/// What `sleuth report` says on stderr as it writes, now that the writing is the
/// library's `study::Report` (shared with Python): the file count, then each page as
/// it is written, the index and side-by-side pages last; with several runs and no
/// `--out`, the trace pages go beside the runs and a hint replaces the index.
#[test]
fn report_says_what_it_writes_and_where_the_pages_go() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("nudge-0.7"), tmp.path().join("nudge-none"));
    write_run(&a, "0.7", &[("react", react()), ("sleuth", sleuth_nudge())]);
    write_run(&b, "none", &[("sleuth", sleuth_none())]);
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());

    let o = sleuth(&["report", a_s, b_s, "--html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = format!(
        "wrote {}\nwrote {}\n(pass --out DIR for index.html and the side-by-side questions page)\n",
        a.join("trace.html").display(),
        b.join("trace.html").display()
    );
    assert_eq!(stderr(&o), want);
    assert!(!a.join("index.html").exists() && !tmp.path().join("index.html").exists());

    let out = tmp.path().join("out");
    let o = sleuth(&["report", a_s, b_s, "--html", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    let files = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "html"))
        .count();
    assert_eq!(
        lines[0],
        format!("wrote {files} files to {}", out.display())
    );
    assert_eq!(lines.len(), 5, "{err}");
    for page in &lines[1..3] {
        let path = Path::new(page.strip_prefix("wrote ").unwrap());
        assert!(path.starts_with(&out) && path.ends_with("trace.html") && path.is_file());
    }
    assert_eq!(
        lines[3],
        format!("wrote {}", out.join("index.html").display())
    );
    assert_eq!(
        lines[4],
        format!("wrote {}", out.join("questions.html").display())
    );

    // A table no report knows is refused before the runs are read.
    let o = sleuth(&["report", "/nonexistent/runs", "--tables", "summary,nope"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown table `nope` (known: all, "),
        "{}",
        stderr(&o)
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
