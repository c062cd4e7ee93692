//! The SLEUTH paper to the letter (issue 27): each rule where the harness used to
//! deviate, shown through the binary against a scripted local server, from the requests
//! the server logged and the records written.

use crate::agents::{eval_one, memory, turn_of};
use crate::sleuth_paper::{last_message, system_prompt};
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

const F1: &str =
    "- [F1] Mingus Plays Piano is an album by Charles Mingus (source: Mingus Plays Piano)";
const F1_REWORDED: &str =
    "- [F1] The album Mingus Plays Piano was recorded by Charles Mingus (source: Mingus Plays Piano)";

fn one_fact(fact: &str) -> String {
    format!("Confirmed Facts:\n{fact}\nActive Hypotheses:\n- [H1] Arizona | confidence: low | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] Where was he born? | action: Mingus birthplace | priority: high\nAction: search[Mingus birthplace]")
}

/// §3.1: facts are identified by id. Rewording F1 updates F1: the state holds one
/// fact, none is dropped, and the τ = 2 nudge never fires on a single fact.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_reworded_fact_keeps_its_id_and_is_not_a_second_fact() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => one_fact(F1),
            _ => one_fact(F1_REWORDED),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "sleuth", dir.path(), &[])[0];
    let facts = r["trace"][1]["state"]["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(facts[0]["id"], "F1");
    assert!(facts[0]["statement"]
        .as_str()
        .unwrap()
        .starts_with("The album Mingus Plays Piano"));
    let dropped = r["trace"][1]["dropped"].as_array().map_or(0, Vec::len);
    assert_eq!(dropped, 0, "a rewording drops nothing");
    assert_eq!(r["nudge_turn"], Value::Null);
    assert!(server
        .requests()
        .iter()
        .all(|q| !q.raw_body.contains("Stop searching now")));
    let counts = r["outputs"]["memory_counts"].as_array().unwrap();
    assert!(counts.iter().all(|c| c["facts"] == 1), "{counts:?}");
}

/// The nudge's sentence in the message answered at turn `turn` (1-based).
fn nudge_sentence(server: &MockServer, turn: usize) -> String {
    let text = last_message(&server.requests()[turn - 1]);
    text.lines()
        .find(|l| l.contains("Stop searching now"))
        .unwrap_or_else(|| panic!("no nudge at turn {turn}: {text}"))
        .to_string()
}

/// App. D.4: ReAct + nudge is the causal control, so it reads the identical message;
/// Notes, sharing SLEUTH's commitment rule, reads it too.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn the_nudge_is_one_message_word_for_word_for_every_method() {
    let runs: [(&str, &[&str], String); 3] = [
        ("sleuth", &[], memory(2, "search[more]")),
        (
            "notes",
            &[],
            "Notes:\nMingus Plays Piano is by Charles Mingus.\nThought: more\nAction: search[more]"
                .into(),
        ),
        (
            "react",
            &["--set", "nudge_all=true"],
            "Thought: more\nAction: search[more]".into(),
        ),
    ];
    let mut sentences = Vec::new();
    for (method, extra, reply) in runs {
        let server = MockServer::spawn(move |_| Reply::text(reply.clone()));
        let dir = tempfile::tempdir().unwrap();
        let r = &eval_one(&server, method, dir.path(), extra)[0];
        assert_eq!(r["nudge_turn"], 14, "{method}");
        sentences.push(nudge_sentence(&server, 14));
    }
    assert!(
        sentences.iter().all(|s| *s == sentences[0]),
        "{sentences:#?}"
    );
    assert!(sentences[0]
        .contains("build your answer from the confirmed facts and hypotheses you already have"));
}

/// The pool's titles, read off the first MuSiQue question of the shared file.
fn pool_titles() -> Vec<String> {
    let text = std::fs::read_to_string(musique()).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_string())
        .collect()
}

/// §3.4, App. M: lookup returns a paragraph "if it exists", the same tools for every
/// method. A failed lookup says it failed and an empty search says nothing matched;
/// neither lists the pool (gold titles among it). A failed lookup may name the nearest
/// titles already shown, and only those.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_failed_lookup_and_an_empty_search_list_no_pool_title() {
    let titles = pool_titles();
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "Thought: guess\nAction: lookup[Qqxy Zzwv]\nAction: search[qqxy zzwv]",
            _ => "Thought: done\nAction: finish[unknown]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    eval_one(&server, "react", dir.path(), &[]);
    let feedback = last_message(&server.requests()[1]);
    assert!(feedback.contains("Lookup failed"), "{feedback}");
    assert!(feedback.contains("No paragraph matches"), "{feedback}");
    for t in &titles {
        assert!(!feedback.contains(t.as_str()), "{t} listed: {feedback}");
    }

    // A near miss after a search: only titles the search showed are suggested.
    assert!(titles.iter().any(|t| t == "Port Blair"), "{titles:?}");
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "Thought: look\nAction: search[Port Blair capital Andaman]",
            2 => "Thought: again\nAction: lookup[Port Blair city]",
            _ => "Thought: done\nAction: finish[unknown]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "react", dir.path(), &[])[0];
    let shown: Vec<String> = r["trace"][0]["observations"][0]["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let miss = r["trace"][1]["observations"][0]["text"].as_str().unwrap();
    assert!(miss.starts_with("Lookup failed"), "{miss}");
    assert!(shown.iter().any(|t| t == "Port Blair"), "{shown:?}");
    assert!(miss.contains("close: Port Blair"), "{miss}");
    for t in titles.iter().filter(|t| !shown.contains(t)) {
        assert!(!miss.contains(t.as_str()), "unseen {t} suggested: {miss}");
    }
}

/// App. D.5: late verification checks a finish while a turn remains; a finish on the
/// last turn is taken, as the same replies answer under ReAct. The search phase keeps
/// the source-faithful answer rule.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn late_verification_takes_a_last_turn_finish_and_keeps_the_source_faithful_rule() {
    let reply = |req: &ReceivedRequest| {
        Reply::text(match turn_of(req) {
            1 | 2 => "Thought: look\nAction: search[Mingus]",
            _ => "Thought: it is him\nAction: finish[Charles Mingus]",
        })
    };
    for method in ["react", "sleuth"] {
        let server = MockServer::spawn(reply);
        let dir = tempfile::tempdir().unwrap();
        let mut extra = vec!["--set", "turns=3"];
        if method == "sleuth" {
            extra.extend(["--set", "stopping=late-verification"]);
        }
        let r = &eval_one(&server, method, dir.path(), &extra)[0];
        assert_eq!(r["answer"], "Charles Mingus", "{method}");
        assert_eq!(r["timed_out"], false, "{method}");
        assert_eq!(r["turns"], 3, "{method}");
        if method == "sleuth" {
            let system = system_prompt(&server.requests()[0]);
            assert!(system.contains("Source-faithful answers"), "{system}");
            assert!(system.contains("late verification"), "{system}");
        }
    }

    // With turns left, the first finish is checked and the next one taken.
    let server = MockServer::spawn(|req| {
        Reply::text(if turn_of(req) <= 2 {
            "Thought: it is him\nAction: finish[Charles Mingus]"
        } else {
            "Thought: unexpected\nAction: search[more]"
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "turns=3", "--set", "stopping=late-verification"],
    )[0];
    assert!(last_message(&server.requests()[1]).contains("verify the chain"));
    assert_eq!(r["answer"], "Charles Mingus");
    assert_eq!(r["turns"], 2);
}

/// Runs `method` on the first MuSiQue question against `server` under `preset`.
fn eval_preset(server: &MockServer, preset: &str, method: &str, extra: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("openai-compat:{}#test-model?preset={preset}", server.url());
    Eval::new("musique", musique(), method, &url, dir.path())
        .opt("--limit", 1)
        .extra(extra)
        .ok();
    crate::agents::read_records(dir.path())
}

/// §3.4: the method is prompting alone. No grammar-honouring server gets a grammar by
/// default; `grammar=true` sends one that keeps the method: free reasoning and several
/// action lines (App. L), no section forced and no cap the prompt does not state.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn no_server_gets_a_grammar_by_default_and_the_opt_in_one_keeps_the_method() {
    let reply = |req: &ReceivedRequest| {
        Reply::text(if turn_of(req) == 1 {
            "Let me think this through at length before acting.\nAction: search[Port Blair]\nAction: search[Andaman]\nAction: lookup[Port Blair]"
        } else {
            "Thought: done\nAction: finish[Port Blair]"
        })
    };
    for preset in ["llama-cpp", "llama-cpp-python", "sglang"] {
        for method in ["react", "sleuth"] {
            let server = MockServer::spawn(reply);
            let r = &eval_preset(&server, preset, method, &[])[0];
            assert_eq!(r["settings"]["grammar"], "auto", "{preset} {method}");
            assert_eq!(r["tool_calls"], 3, "{preset} {method}");
            for req in server.requests() {
                let body = req.body.as_object().unwrap();
                assert!(
                    !body.contains_key("grammar") && !body.contains_key("ebnf"),
                    "{preset} {method}: {body:?}"
                );
            }
        }
    }
    let server = MockServer::spawn(reply);
    let r = &eval_preset(&server, "llama-cpp", "sleuth", &["--set", "grammar=true"])[0];
    assert_eq!(r["settings"]["grammar"], "true");
    assert_eq!(r["tool_calls"], 3);
    let grammar = server.requests()[0].body["grammar"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        grammar.contains("action (\"\\n\" action){0,7}"),
        "{grammar}"
    );
    assert!(grammar.contains("free ::= [^\\n]* \"\\n\""), "{grammar}");
    for forced in ["Confirmed Facts", "Thought", "{1,"] {
        assert!(!grammar.contains(forced), "{forced} in {grammar}");
    }
}

/// §4 "Datasets", Tables 1, 13 and 14, App. G: MuSiQue's 2/3/4-hop splits are
/// benchmarks of their own. Records say `dataset: "musique"` for every split; the
/// report gives each split its own summary, comparison (with its own bootstrap CI and
/// head-to-head), error, accuracy-at-turn and memory rows, and no pooled MuSiQue row;
/// EM by hop count (Figure 2a) lays the splits side by side.
#[test]
fn musique_hop_splits_are_reported_as_datasets_of_their_own() {
    let tmp = crate::report::single_run();
    let run = tmp.path().join("run");
    let records = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    assert!(records.contains("\"dataset\":\"jsonl\""));
    std::fs::write(
        run.join("records.jsonl"),
        records.replace("\"dataset\":\"jsonl\"", "\"dataset\":\"musique\""),
    )
    .unwrap();
    let out = ok(&[
        "report",
        run.to_str().unwrap(),
        "--baseline",
        "react",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let a = &v["analysis"];
    let arms = |list: &Value| -> Vec<(String, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["arm"]["dataset"].as_str().unwrap().to_string(),
                    x["arm"]["method"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let splits = ["musique_2hop", "musique_3hop", "musique_4hop"];
    let both: Vec<(String, String)> = splits
        .iter()
        .flat_map(|d| {
            [
                (d.to_string(), "react".into()),
                (d.to_string(), "sleuth".into()),
            ]
        })
        .collect();
    assert_eq!(arms(&a["summaries"]), both);
    assert!(a["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["n"] == 2));
    assert_eq!(arms(&a["errors"]), both);
    assert_eq!(arms(&a["accuracy_at_turn"]), both);
    let sleuth_only: Vec<(String, String)> = arms(&a["memory"]);
    assert!(
        sleuth_only
            .iter()
            .all(|(d, m)| splits.contains(&d.as_str()) && m == "sleuth"),
        "{sleuth_only:?}"
    );
    // One comparison per split (Table 13's CIs, Table 14's wins/losses/ties).
    let cmp = a["comparisons"].as_array().unwrap();
    let per: Vec<(&str, u64, Value, Value)> = cmp
        .iter()
        .map(|c| {
            (
                c["arm"]["dataset"].as_str().unwrap(),
                c["n"].as_u64().unwrap(),
                c["head_to_head"].clone(),
                c["em"]["diff"].clone(),
            )
        })
        .collect();
    let h2h = |wins, both_right, both_wrong| serde_json::json!({"wins": wins, "losses": 0, "both_right": both_right, "both_wrong": both_wrong});
    assert_eq!(
        per,
        [
            ("musique_2hop", 2, h2h(1, 1, 0), 50.0.into()),
            ("musique_3hop", 2, h2h(1, 1, 0), 50.0.into()),
            ("musique_4hop", 2, h2h(0, 0, 2), 0.0.into())
        ]
    );
    // EM by hop count keeps the pooled arm, one slice per split.
    let hops: Vec<&str> = a["by_hops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["summary"]["arm"]["method"] == "sleuth")
        .map(|s| s["value"].as_str().unwrap())
        .collect();
    assert_eq!(hops, ["2", "3", "4"]);

    let md = ok(&["report", run.to_str().unwrap(), "--baseline", "react"]);
    assert!(
        md.contains("| MuSiQue 2-hop EM/F1 | MuSiQue 3-hop EM/F1 | MuSiQue 4-hop EM/F1 |"),
        "{md}"
    );
    assert!(!md.contains("MuSiQue EM/F1"), "no pooled column: {md}");
}

/// What a prompt may say only when its memory has the section: candidate answers and
/// their ranking belong to Active Hypotheses, what is still to be found to Open
/// Questions (cold read: the ablations' free text used to ask for both in prose).
const LACKED_WORDS: [(&str, &[&str]); 3] = [
    ("Confirmed Facts", &["confirmed", "fact"]),
    (
        "Active Hypotheses",
        &[
            "hypothes",
            "candidate",
            "rank",
            "possible answer",
            "answer your facts point to",
            "weigh",
        ],
    ),
    (
        "Open Questions",
        &[
            "open question",
            "missing",
            "unknown",
            "still need",
            "priority",
            "most change",
        ],
    ),
];

/// App. K: the ablations' prompts are "of comparable length" to SLEUTH's and differ
/// only in the components kept: the same five numbered steps, and no word of a
/// component the variant lacks ([`LACKED_WORDS`]; Facts+Q has no ranking to change,
/// Facts-Only neither candidates to weigh nor missing pieces to name). Notes, the
/// unstructured scratchpad (§4), is held to the same length and loop (App. K names it
/// among the ablations of comparable length) and, having none of the typed sections,
/// names none of them either: it asks for notes, not for hypotheses or open questions
/// in free text (issue 43 item 3).
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn ablation_prompts_are_of_comparable_length_with_the_same_numbered_loop() {
    let mut lengths = Vec::new();
    for method in ["sleuth", "facts-only", "facts-hyp", "facts-q", "notes"] {
        let server = MockServer::spawn(|_| Reply::text("Thought: done\nAction: finish[x]"));
        let dir = tempfile::tempdir().unwrap();
        eval_one(&server, method, dir.path(), &[]);
        let system = system_prompt(&server.requests()[0]);
        let loop_steps: Vec<&str> = system
            .split("Investigation loop:\n")
            .nth(1)
            .unwrap()
            .lines()
            .take_while(|l| !l.is_empty())
            .map(|l| &l[..2])
            .collect();
        assert_eq!(
            loop_steps,
            ["1.", "2.", "3.", "4.", "5."],
            "{method}: {system}"
        );
        for (section, words) in LACKED_WORDS {
            if system.contains(section) {
                continue;
            }
            let lower = system.to_lowercase();
            for word in words {
                assert!(
                    !lower.contains(word),
                    "{method} has no {section} but its prompt says `{word}`: {system}"
                );
            }
        }
        lengths.push((method, system.chars().count()));
    }
    println!("prompt lengths: {lengths:?}");
    let sleuth = lengths[0].1 as f64;
    for (method, n) in &lengths {
        assert!(
            (0.9 * sleuth..1.1 * sleuth).contains(&(*n as f64)),
            "{method}: {n} characters against SLEUTH's {sleuth}"
        );
    }
}

/// App. K's prompts invite no number of action lines; App. L's several calls a turn
/// still run, up to the cap, when a model writes them.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn the_prompt_invites_no_number_of_action_lines_and_several_still_run() {
    let server = MockServer::spawn(|req| {
        Reply::text(if turn_of(req) == 1 {
            "Thought: both\nAction: search[Port Blair]\nAction: search[Andaman]"
        } else {
            "Thought: done\nAction: finish[Port Blair]"
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "react", dir.path(), &[])[0];
    let system = system_prompt(&server.requests()[0]);
    assert!(
        !system.contains("up to 8") && !system.contains("several such lines"),
        "{system}"
    );
    assert!(system.contains("End every response with an action line"));
    assert_eq!(r["tool_calls"], 2);
    assert_eq!(r["settings"]["actions_per_turn"], "8");
}

/// App. M: enforcement is the delimited prompt plus a check that re-prompts a response
/// without the notation; a rejected response uses no turn, at most 5 reminders an
/// episode, and their calls are counted.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn enforcement_reprompts_at_most_five_times_without_using_a_turn() {
    let server =
        MockServer::spawn(|_| Reply::text("Thought: no memory\nAction: search[Port Blair]"));
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "enforce=true", "--set", "turns=3"],
    )[0];
    assert_eq!(r["reminders"], 5);
    assert_eq!(r["turns"], 3, "reminders use no turn");
    assert_eq!(r["calls"], 8, "3 turns and 5 reminders");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 8);
    assert!(system_prompt(&reqs[0]).contains("=== WORKING MEMORY"));
    assert!(last_message(&reqs[1]).contains("did not follow the working-memory protocol"));
    // Without enforcement (Table 1): no delimiters, no reminder.
    let server =
        MockServer::spawn(|_| Reply::text("Thought: no memory\nAction: search[Port Blair]"));
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "sleuth", dir.path(), &["--set", "turns=3"])[0];
    assert_eq!(
        (r["reminders"].clone(), r["calls"].clone()),
        (0.into(), 3.into())
    );
    assert!(!system_prompt(&server.requests()[0]).contains("=== WORKING MEMORY"));
}

/// §3.4, §4, App. M: search returns the top k = 3 paragraphs of the question's pool by
/// word overlap, verbatim with their titles; lookup returns the paragraph of a title.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn search_shows_the_top_three_pool_paragraphs_and_lookup_one_by_title() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "Thought: look\nAction: search[Port Blair capital of the Andaman and Nicobar Islands]\nAction: lookup[Port Blair]",
            _ => "Thought: done\nAction: finish[Port Blair]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "react", dir.path(), &[])[0];
    assert_eq!(r["settings"]["top_k"], "3");
    assert_eq!(r["settings"]["turns"], "20");
    let obs = &r["trace"][0]["observations"];
    assert_eq!(obs[0]["shown"].as_array().unwrap().len(), 3);
    let first = obs[0]["text"].as_str().unwrap();
    assert!(
        first.starts_with("(1) [Port Blair] Port Blair (pronunciation"),
        "{first}"
    );
    assert!(first.contains("\n(3) ["), "{first}");
    let looked = obs[1]["text"].as_str().unwrap();
    assert!(looked.starts_with("[Port Blair] Port Blair"), "{looked}");
}

/// App. D.5, forward-only commitment: a retrieval already made is refused with an
/// observation, not run again; contrastive elimination is the prompt's rule alone.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn forward_only_refuses_a_repeat_and_contrastive_is_its_prompt() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 | 2 => memory(1, "search[Port Blair]"),
            _ => memory(1, "finish[Port Blair]"),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=forward-only"],
    )[0];
    let second = r["trace"][1]["observations"][0]["text"].as_str().unwrap();
    assert!(second.starts_with("You already retrieved this"), "{second}");
    assert_eq!(r["answer"], "Port Blair");

    let server = MockServer::spawn(|_| Reply::text(memory(1, "finish[Port Blair]")));
    let dir = tempfile::tempdir().unwrap();
    eval_one(
        &server,
        "sleuth",
        dir.path(),
        &["--set", "stopping=contrastive"],
    );
    let system = system_prompt(&server.requests()[0]);
    assert!(
        system.contains("Commitment rule (contrastive elimination)"),
        "{system}"
    );
}

/// Self-Ask's prompt sets no pace of its own (issue 43 item 4): App. K's Self-Ask
/// protocol asks for sub-questions and intermediate answers until the question can be
/// answered and says nothing of one step per turn, so neither does ours; a reply that
/// writes two sub-questions and calls finish in one turn is taken as it is.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn self_asks_prompt_sets_no_pace_and_a_reply_of_several_steps_is_taken() {
    let server = MockServer::spawn(|_| {
        Reply::text(
            "Sub-question 1: Where is Port Blair?\nIntermediate answer 1: the Andaman Islands\nSub-question 2: What is its county seat?\nIntermediate answer 2: Stanley\nAction: finish[Stanley]",
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "self-ask", dir.path(), &[])[0];
    let system = system_prompt(&server.requests()[0]);
    assert!(system.contains("Sub-question 1:"), "{system}");
    assert!(
        !system.contains("per turn") && !system.contains("one step"),
        "{system}"
    );
    assert_eq!(r["turns"], 1, "{r}");
    assert_eq!(r["answer"], "Stanley", "{r}");
}

/// Failed-lookup hints are ours and can be turned off (issue 43 item 5): by default a
/// lookup of a title the pool lacks names close titles the agent was already shown;
/// `--set lookup_hints=off` gives App. M's bare tools, where it only says it failed.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn failed_lookup_hints_are_on_by_default_and_off_on_request() {
    for (hints, extra) in [(true, &[][..]), (false, &["--set", "lookup_hints=off"][..])] {
        let server = MockServer::spawn(|req| {
            Reply::text(match turn_of(req) {
                1 => "Thought: find it\nAction: search[Mountrail County Courthouse]",
                2 => "Thought: look closer\nAction: lookup[Mountrail County]",
                _ => "Thought: done\nAction: finish[Stanley]",
            })
        });
        let dir = tempfile::tempdir().unwrap();
        let r = &eval_one(&server, "react", dir.path(), extra)[0];
        let requests = server.requests();
        let observation = last_message(&requests[2]);
        assert!(
            observation
                .contains("Lookup failed: there is no paragraph titled \"Mountrail County\"."),
            "{observation}"
        );
        assert_eq!(
            observation.contains("Titles you have already seen that are close: "),
            hints,
            "lookup_hints on={hints}: {observation}"
        );
        let shown = if hints { "on" } else { "off" };
        assert_eq!(r["settings"]["lookup_hints"], shown, "{r}");
    }
}
