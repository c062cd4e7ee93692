//! The SLEUTH paper's rules, one scripted test each, through the binary against a local
//! OpenAI-compatible server: what the harness hands back, when the commitment triggers
//! fire, how late verification searches, how many tool calls a turn runs, and what the
//! prompts carry (App. K, L, M, D.5).

use crate::agents::{eval_one, memory, turn_of};
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

/// The text of the last message of a request (the observation the model answers).
pub(crate) fn last_message(req: &ReceivedRequest) -> String {
    req.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The system prompt of a request.
pub(crate) fn system_prompt(req: &ReceivedRequest) -> String {
    req.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

const NONE_BUT_FACT_2: &str = "Confirmed Facts:\n- [F2] established point 2 (source: Some Title)\nActive Hypotheses:\n- none\nOpen Questions:\n- none\nAction: search[second]";
const HAND_BACK: &str = "left out facts you had already confirmed";

fn dropping_server() -> MockServer {
    MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => memory(2, "search[first]"),
            2 => NONE_BUT_FACT_2.into(),
            _ => "Confirmed Facts:\n- none\nActive Hypotheses:\n- none\nOpen Questions:\n- none\nAction: finish[done]".into(),
        })
    })
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn dropped_facts_stay_in_the_record_and_are_handed_back_only_when_asked() {
    // Default (Table 1's setting, App. M): no runtime help.
    let server = dropping_server();
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "sleuth", dir.path(), &[])[0];
    assert_eq!(r["settings"]["restore_facts"], "false");
    let facts = |t: usize| r["trace"][t]["state"]["facts"].as_array().unwrap().len();
    assert_eq!(
        (facts(0), facts(1), facts(2)),
        (2, 2, 2),
        "state is monotonic"
    );
    assert_eq!(r["trace"][1]["dropped"], serde_json::json!(["F1"]));
    assert!(server
        .requests()
        .iter()
        .all(|q| !last_message(q).contains(HAND_BACK)));

    // The named option alone hands them back; enforcement (App. M: delimiters and the
    // notation check) does not.
    for (set, handed) in [("restore_facts=true", true), ("enforce=true", false)] {
        let server = dropping_server();
        let dir = tempfile::tempdir().unwrap();
        let r = &eval_one(&server, "sleuth", dir.path(), &["--set", set])[0];
        assert_eq!(r["trace"][1]["dropped"], serde_json::json!(["F1"]), "{set}");
        let third = last_message(&server.requests()[2]);
        assert_eq!(
            third.contains(HAND_BACK) && third.contains("[F1] established point 1"),
            handed,
            "{set}: {third}"
        );
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn every_action_of_a_turn_runs_and_one_beyond_the_cap_is_answered() {
    let reply = |req: &ReceivedRequest| {
        Reply::text(if turn_of(req) == 1 {
            "Thought: both at once\nAction: search[Mingus]\nAction: search[Arizona]\nAction: search[IndyCar]"
        } else {
            "Thought: done\nAction: finish[Mario Andretti]"
        })
    };
    let server = MockServer::spawn(reply);
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "react", dir.path(), &[])[0];
    assert_eq!(
        (r["turns"].clone(), r["tool_calls"].clone()),
        (2.into(), 3.into())
    );
    assert_eq!(r["trace"][0]["observations"].as_array().unwrap().len(), 3);
    assert_eq!(r["settings"]["actions_per_turn"], "8");

    let server = MockServer::spawn(reply);
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "react",
        dir.path(),
        &["--set", "actions_per_turn=2"],
    )[0];
    assert_eq!(r["tool_calls"], 2);
    // What ran stays in the trace; the note names the rest (hardening III, item 7).
    assert_eq!(r["trace"][0]["actions"].as_array().unwrap().len(), 2);
    let third = r["trace"][0]["observations"][2]["text"].as_str().unwrap();
    assert!(third.contains("search[IndyCar] was not run"), "{third}");
    assert!(last_message(&server.requests()[1]).contains("search[IndyCar] was not run"));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn notes_gets_the_commitment_nudge_and_the_verbatim_rule() {
    let server = MockServer::spawn(|_| {
        Reply::text(
            "Notes:\nMingus Plays Piano is by Charles Mingus.\nThought: more\nAction: search[more]",
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "notes", dir.path(), &[])[0];
    assert_eq!(r["nudge_turn"], 14);
    assert_eq!(r["settings"]["nudge"], "0.7");
    let reqs = server.requests();
    assert!(last_message(&reqs[13])
        .contains("build your answer from the confirmed facts and hypotheses you already have"));
    assert!(!last_message(&reqs[12]).contains("Stop searching now"));
    let system = system_prompt(&reqs[0]);
    assert!(
        system.contains("as you recorded it in your notes"),
        "{system}"
    );
    assert!(system.contains("\"1964 to 1974\""));

    // An empty scratchpad has nothing to synthesize from: no nudge.
    let server = MockServer::spawn(|_| Reply::text("Thought: more\nAction: search[more]"));
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "notes", dir.path(), &[])[0];
    assert_eq!(r["nudge_turn"], Value::Null);
}

const DECOMPOSED: &str = "Confirmed Facts:\n- none\nActive Hypotheses:\n- none\nOpen Questions:\n- [Q1] Who performed the album? | action: album performer | priority: high\n- [Q2] Where was the performer born? | action: performer birthplace | priority: medium\nAction: search[album performer]";
const Q1_RESOLVED: &str = "Confirmed Facts:\n- [F1] The album is by Charles Mingus (source: Mingus Plays Piano)\nActive Hypotheses:\n- [H1] Arizona | confidence: low | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] Who performed the album? (resolved)\n- [Q2] Where was the performer born? | action: performer birthplace | priority: high\nAction: search[performer birthplace]";
const ALL_RESOLVED: &str = "Confirmed Facts:\n- [F1] The album is by Charles Mingus (source: Mingus Plays Piano)\n- [F2] Charles Mingus was born in Nogales, Arizona (source: Charles Mingus)\nActive Hypotheses:\n- [H1] Arizona | confidence: high | supports: F1, F2 | contradicts: -\nOpen Questions:\n- none\nAction: search[Nogales]";

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn structural_completion_triggers_on_the_memory_state() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => DECOMPOSED.into(),
            2 => Q1_RESOLVED.into(),
            3 => ALL_RESOLVED.into(),
            _ => ALL_RESOLVED.replace("search[Nogales]", "finish[Arizona]"),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=structural"],
    )[0];
    assert_eq!(r["trace"][1]["resolved"], serde_json::json!(["Q1"]));
    assert_eq!(r["trace"][2]["resolved"], serde_json::json!(["Q2"]));
    assert_eq!(
        r["trace"][2]["state"]["resolved"].as_array().unwrap().len(),
        2
    );
    assert_eq!(r["nudge_turn"], 4, "the trigger comes with turn 4's prompt");
    assert_eq!(r["trace"][3]["nudged"], true);
    let reqs = server.requests();
    assert!(last_message(&reqs[3])
        .contains("Every sub-question in your Open Questions is now resolved (2 in all)"));
    assert!(reqs[..3]
        .iter()
        .all(|q| !last_message(q).contains("now resolved")));
    assert_eq!(r["answer"], "Arizona");

    // A turn that drifts out of the notation (no memory written) resolves nothing.
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => DECOMPOSED,
            _ => "Thought: just searching\nAction: search[anything]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=structural", "--set", "turns=4"],
    )[0];
    assert_eq!(r["nudge_turn"], Value::Null);
    assert_eq!(
        r["trace"][3]["state"]["questions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The nudge does not stand in for it: a memory that keeps questions open never
    // gets the commit message.
    let server = MockServer::spawn(|_| Reply::text(memory(2, "search[more]")));
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=structural"],
    )[0];
    assert_eq!(r["nudge_turn"], Value::Null);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn late_verification_searches_without_memory_then_checks_the_chain() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "Thought: find the album\nAction: search[Mingus Plays Piano]",
            _ => "Thought: I can answer\nAction: finish[Arizona]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=late-verification"],
    )[0];
    let reqs = server.requests();
    let system = system_prompt(&reqs[0]);
    assert!(
        !system.contains("Confirmed Facts:"),
        "no state tracking: {system}"
    );
    assert!(system.contains("late verification"));
    assert!(last_message(&reqs[2]).contains("verify the chain"));
    assert_eq!(r["turns"], 3, "the first finish is answered with the check");
    assert_eq!(r["answer"], "Arizona");
    assert!(r["trace"][0].get("state").is_none());

    // The memory-keeping variant stays as an option.
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => memory(1, "search[Mingus]"),
            _ => memory(2, "finish[Arizona]"),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=late-verification-memory"],
    )[0];
    assert!(system_prompt(&server.requests()[0]).contains("Confirmed Facts:"));
    assert!(last_message(&server.requests()[2]).contains("verify the chain"));
    assert_eq!(r["trace"][2]["state"]["facts"].as_array().unwrap().len(), 2);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn prompts_carry_the_shared_answer_format_and_sleuths_extraction_rule() {
    let prompt = |method: &str| {
        let server = MockServer::spawn(|_| Reply::text("Action: finish[x]"));
        let dir = tempfile::tempdir().unwrap();
        eval_one(&server, method, dir.path(), &[]);
        system_prompt(&server.requests()[0])
    };
    for method in [
        "react",
        "react-cot",
        "self-ask",
        "ircot",
        "reflexion",
        "notes",
        "sleuth",
    ] {
        let p = prompt(method);
        for rule in [
            "a short entity name, a number, a date, yes / no, or a brief phrase",
            "no explanation and no reasoning",
            "answer \"twice\", not \"2\"",
        ] {
            assert!(p.contains(rule), "{method}: {rule}");
        }
    }
    let s = prompt("sleuth");
    for rule in [
        "as you recorded it in your Confirmed Facts",
        "do not paraphrase, abbreviate, expand or reformat",
        "answered with \"yes\" or \"no\" alone",
        "the answer is \"1964 to 1974\", not \"1964-1974\"",
        "Mark the questions the result answered",
        "call finish[answer] IMMEDIATELY",
    ] {
        assert!(s.contains(rule), "sleuth: {rule}");
    }
    assert!(!prompt("react").contains("1964 to 1974"));
}

/// Splits a documented command line on spaces, keeping '...' quoted parts whole.
pub(crate) fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn every_sleuth_recipe_runs_two_questions_and_its_report_command_works() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let recipes = [
        "sleuth-table1",
        "nudge-sweep",
        "nudge-sweep-hotpotqa",
        "budget-sweep",
        "budget-best",
        "topk-sweep",
        "stopping",
        "adherence",
        "cross-model",
    ];
    // experiments/README.md maps every table and figure to these recipes.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let sleuth_part = &readme[readme.find("## SLEUTH paper").expect("SLEUTH section")..];
    for n in 1..=15 {
        assert!(sleuth_part.contains(&format!("| Table {n} |")), "Table {n}");
    }
    for n in 2..=5 {
        assert!(sleuth_part.contains(&format!("| Figure {n}")), "Figure {n}");
    }
    for name in recipes {
        assert!(sleuth_part.contains(&format!("`{name}.toml`")), "{name}");
    }
    let server = MockServer::spawn(|_| Reply::text("Thought: enough\nAction: finish[yes]"));
    let url = format!("openai-compat:{}#m", server.url());
    let data = crate::util::recipe_data();
    let dir = tempfile::tempdir().unwrap();
    for name in recipes {
        let recipe = root.join(format!("{name}.toml"));
        let out = dir.path().join(name);
        ok(&[
            "experiment",
            recipe.to_str().unwrap(),
            "--model",
            &url,
            "--limit",
            "2",
            "--data",
            &data[1],
            "--data",
            &data[3],
            "--data",
            &data[5],
            "--out",
            out.to_str().unwrap(),
        ]);
        // The recipe's first report command, generated for this run's output.
        let reports = crate::util::recipe_reports(&out);
        let (_, words) = reports
            .first()
            .unwrap_or_else(|| panic!("{name}: no [[reports]] entry"));
        assert_eq!(
            words[..2],
            ["report".to_string(), out.to_string_lossy().into_owned()],
            "{name}"
        );
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let report = ok(&args);
        assert!(report.contains("EM"), "{name}: {report}");
        if name == "sleuth-table1" {
            assert!(report.contains("reflexion/first-attempt"), "{report}");
            assert!(report.contains("within each method row across datasets"));
        }
    }
}

/// App. L's question: MuSiQue `4hop1__802394_153080_33897_81096`.
const APP_L_ID: &str = "4hop1__802394_153080_33897_81096";
const GOLD: [&str; 4] = [
    "Mingus Plays Piano",
    "Charles Mingus",
    "Tucson, Arizona",
    "Desert Diamond West Valley Phoenix Grand Prix",
];

/// The question from the real MuSiQue file, with a pool we wrote around the paper's
/// four gold titles (plus distractors), in sleuth's own JSONL schema.
fn app_l_question(dir: &std::path::Path) -> std::path::PathBuf {
    let all = shared_data("musique/musique_ans_dev_all_questions_no_paragraphs.jsonl");
    let line = std::fs::read_to_string(all)
        .unwrap()
        .lines()
        .find(|l| l.contains(APP_L_ID))
        .expect("App. L question in the MuSiQue dev file")
        .to_string();
    let q: Value = serde_json::from_str(&line).unwrap();
    let paragraphs = [
        (GOLD[0], "Mingus Plays Piano is a solo piano record that the jazz bassist and composer Charles Mingus made for Impulse! Records."),
        (GOLD[1], "Charles Mingus was an American jazz double bassist, pianist and bandleader. He was born in Nogales, Arizona, and raised in Los Angeles."),
        (GOLD[2], "Tucson is the seat of Pima County. It is the second-largest city in Arizona; the largest city in Arizona is Phoenix."),
        (GOLD[3], "The Desert Diamond West Valley Phoenix Grand Prix was an IndyCar race at the oval west of Phoenix. Mario Andretti won the race."),
        ("Mingus Ah Um", "Mingus Ah Um is a studio album by Charles Mingus with his band."),
        ("Nogales, Sonora", "Nogales is a city in the Mexican state of Sonora, across the border from Nogales, Arizona."),
        ("Phoenix Mercury", "The Phoenix Mercury is a basketball team based in Phoenix."),
        ("Long Beach Grand Prix", "The Long Beach Grand Prix is an IndyCar street race in California."),
    ];
    let record = serde_json::json!({
        "id": q["id"],
        "question": q["question"],
        "answers": [q["answer"]],
        "paragraphs": paragraphs.iter().map(|(t, x)| serde_json::json!({"title": t, "text": x})).collect::<Vec<_>>(),
        "supporting": GOLD,
    });
    let path = dir.join("app_l.jsonl");
    std::fs::write(&path, format!("{record}\n")).unwrap();
    path
}

const F1: &str = "- [F1] Mingus Plays Piano is by Charles Mingus (source: Mingus Plays Piano)\n";
const F2: &str = "- [F2] Charles Mingus was born in Nogales, Arizona (source: Charles Mingus)\n";
const F3: &str = "- [F3] the largest city in Arizona is Phoenix (source: Tucson, Arizona)\n";
const F4: &str =
    "- [F4] Mario Andretti won the race (source: Desert Diamond West Valley Phoenix Grand Prix)\n";
const QS: [&str; 4] = [
    "[Q1] Who performed Mingus Plays Piano? | action: Mingus Plays Piano | priority: high",
    "[Q2] What state is the performer from? | action: Charles Mingus born | priority: high",
    "[Q3] What is the largest city in that state? | action: largest city Arizona | priority: medium",
    "[Q4] Who won the IndyCar race in that city? | action: IndyCar race Phoenix | priority: medium",
];

/// One SLEUTH turn of the worked example: the facts so far, a hypothesis, the four
/// sub-questions with the first `resolved` of them marked, and the actions.
fn app_l_turn(facts: &[&str], hypothesis: &str, resolved: usize, actions: &[&str]) -> String {
    let mut s = String::from("Confirmed Facts:\n");
    if facts.is_empty() {
        s.push_str("- none\n");
    }
    facts.iter().for_each(|f| s.push_str(f));
    s.push_str("Active Hypotheses:\n");
    s.push_str(&format!("- {hypothesis}\n"));
    s.push_str("Open Questions:\n");
    for (i, q) in QS.iter().enumerate() {
        if i < resolved {
            let text = q.split(" | ").next().unwrap();
            s.push_str(&format!("- {text} (resolved)\n"));
        } else {
            s.push_str(&format!("- {q}\n"));
        }
    }
    for a in actions {
        s.push_str(&format!("Action: {a}\n"));
    }
    s
}

fn app_l_script(turn: usize) -> String {
    let h0 = "[H1] unknown winner | confidence: low | supports: - | contradicts: -";
    let h1 = "[H1] a race in Arizona | confidence: low | supports: F1, F2 | contradicts: -";
    let h2 = "[H1] the Phoenix IndyCar race winner | confidence: medium | supports: F2, F3 | contradicts: -";
    let h3 = "[H1] Mario Andretti | confidence: high | supports: F3, F4 | contradicts: -";
    match turn {
        1 => app_l_turn(
            &[],
            h0,
            0,
            &["search[Mingus Plays Piano]", "lookup[Mingus Plays Piano]"],
        ),
        2 => app_l_turn(&[F1], h0, 1, &["lookup[Charles Mingus]"]),
        3 => app_l_turn(
            &[F1],
            h0,
            1,
            &[
                "search[Charles Mingus born]",
                "search[Mingus birthplace state]",
            ],
        ),
        4 => app_l_turn(&[F1, F2], h1, 2, &["search[largest city Arizona]"]),
        5 => app_l_turn(
            &[F1, F2],
            h1,
            2,
            &["search[largest city in Arizona]", "lookup[Tucson, Arizona]"],
        ),
        6 => app_l_turn(&[F1, F2, F3], h2, 3, &["search[IndyCar race Phoenix]"]),
        7 => app_l_turn(&[F1, F2, F3], h2, 3, &["search[Phoenix Grand Prix]"]),
        8 => app_l_turn(&[F1, F2, F3], h2, 3, &["search[IndyCar race Phoenix]"]),
        9 => app_l_turn(
            &[F1, F2, F3],
            h2,
            3,
            &[
                "search[Desert Diamond winner]",
                "search[Phoenix IndyCar results]",
            ],
        ),
        10 => app_l_turn(
            &[F1, F2, F3],
            h2,
            3,
            &[
                "lookup[Desert Diamond West Valley Phoenix Grand Prix]",
                "search[Mario Andretti Phoenix]",
            ],
        ),
        _ => app_l_turn(&[F1, F2, F3, F4], h3, 4, &["finish[Mario Andretti]"]),
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn app_l_worked_example_replays_with_its_memory_states_turns_and_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let data = app_l_question(dir.path());
    let server = MockServer::spawn(|req| Reply::text(app_l_script(turn_of(req))));
    let url = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("run");
    Eval::new("jsonl", &data, "sleuth", &url, &out).ok();
    let r = &crate::agents::read_records(&out)[0];
    assert_eq!(r["id"], APP_L_ID);
    assert_eq!(r["answer"], "Mario Andretti");
    assert_eq!(r["em"], 1.0);
    // "SLEUTH (succeeds in 11 turns, 15 tool calls)", before the nudge (turn 14).
    assert_eq!(
        (r["turns"].clone(), r["tool_calls"].clone()),
        (11.into(), 15.into())
    );
    assert_eq!(r["nudge_turn"], Value::Null);
    let trace = r["trace"].as_array().unwrap();
    let calls: u64 = trace
        .iter()
        .map(|t| t["observations"].as_array().unwrap().len() as u64)
        .sum();
    assert_eq!(calls, 15, "one observation per tool call in the trace");
    // Memory states: the facts of turns 2, 4, 6 and 11, kept monotonically.
    let facts: Vec<usize> = trace
        .iter()
        .map(|t| t["state"]["facts"].as_array().unwrap().len())
        .collect();
    assert_eq!(facts, [0, 1, 1, 2, 2, 3, 3, 3, 3, 3, 4]);
    assert_eq!(
        trace[5]["state"]["facts"][2]["statement"],
        "the largest city in Arizona is Phoenix"
    );
    // Resolved questions: Q1 at turn 2, Q2 at 4, Q3 at 6, Q4 at 11.
    let resolved_at: Vec<(usize, String)> = trace
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t["resolved"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |q| (i + 1, q.as_str().unwrap().to_string()))
        })
        .collect();
    assert_eq!(
        resolved_at,
        [
            (2, "Q1".into()),
            (4, "Q2".into()),
            (6, "Q3".into()),
            (11, "Q4".into())
        ]
    );
    assert_eq!(trace[10]["state"]["questions"], serde_json::json!([]));
    assert_eq!(trace[10]["state"]["resolved"].as_array().unwrap().len(), 4);
    // Supporting-paragraph recall 1.0: all four gold titles retrieved.
    let retrieved: Vec<&str> = r["retrieved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(GOLD.iter().all(|g| retrieved.contains(g)), "{retrieved:?}");
    // The trace viewer shows the same run.
    let html_dir = dir.path().join("report");
    ok(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        html_dir.to_str().unwrap(),
        "--html",
    ]);
    let html = walk_find(&html_dir, "trace.html");
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("Mario Andretti won the race"));
}

fn walk_find(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    find_below(dir, name).unwrap_or_else(|| panic!("{name} not under {}", dir.display()))
}

fn find_below(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let p = entry.path();
        if p.file_name().is_some_and(|n| n == name) {
            Some(p)
        } else if p.is_dir() {
            find_below(&p, name)
        } else {
            None
        }
    })
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn native_tool_calls_run_like_action_lines_and_give_the_same_trace() {
    // An OpenAI-compatible server answering with parallel native tool calls.
    let native = |req: &ReceivedRequest| {
        if turn_of(req) == 1 {
            Reply::Json(serde_json::json!({"choices": [{"message": {
                "role": "assistant", "content": "Thought: both at once",
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"Mingus\"}"}},
                    {"id": "b", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"Arizona\"}"}}
                ]}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}}))
        } else {
            Reply::Json(serde_json::json!({"choices": [{"message": {
                "role": "assistant", "content": "Thought: done",
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "finish", "arguments": "{\"answer\": \"Mario Andretti\"}"}}]
                }, "finish_reason": "tool_calls"}]}))
        }
    };
    let server = MockServer::spawn(native);
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "react",
        dir.path(),
        &["--set", "tool_channel=native"],
    )[0];
    assert_eq!(r["settings"]["tool_channel"], "native");
    let first = &server.requests()[0].body;
    assert_eq!(first["parallel_tool_calls"], true);
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"search") && names.contains(&"finish"),
        "{names:?}"
    );

    // The same episode through the text protocol.
    let text = |req: &ReceivedRequest| {
        Reply::text(if turn_of(req) == 1 {
            "Thought: both at once\nAction: search[Mingus]\nAction: search[Arizona]"
        } else {
            "Thought: done\nAction: finish[Mario Andretti]"
        })
    };
    let server = MockServer::spawn(text);
    let dir = tempfile::tempdir().unwrap();
    let t = &eval_one(&server, "react", dir.path(), &[])[0];
    assert!(server.requests()[0].body.get("tools").is_none());
    for field in ["answer", "turns", "tool_calls", "retrieved"] {
        assert_eq!(r[field], t[field], "{field}");
    }
    assert_eq!(r["trace"][0]["actions"], t["trace"][0]["actions"]);
    assert_eq!(r["trace"][0]["response"], t["trace"][0]["response"]);
    assert_eq!(r["tool_calls"], 2);
    assert_eq!(r["answer"], "Mario Andretti");
}
