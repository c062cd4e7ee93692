//! Issue 27's smaller items and the ledger's cold read: each rule through the binary
//! against the testkit's server, from the requests it logged and the records written.

use crate::agents::eval_one;
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, Reply};

/// SLEUTH's loop default (`methods/settings/agent.rs::MAX_TOKENS`).
const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The longest SLEUTH memory the MuSiQue 4-hop questions give when the model writes
/// everything down: one fact per sentence of every supporting paragraph, three
/// hypotheses, four open questions, an 800-character thought and an action line.
fn longest_four_hop_reply() -> String {
    let text = std::fs::read_to_string(musique()).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|q| q["id"].as_str().unwrap().starts_with("4hop"))
        .map(|q| full_memory(&q))
        .max_by_key(String::len)
        .expect("4-hop questions")
}

fn full_memory(q: &Value) -> String {
    let mut s = format!("Thought: {}\nConfirmed Facts:\n", "x".repeat(800));
    let supporting = q["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["is_supporting"] == true);
    let mut n = 0;
    for p in supporting {
        let title = p["title"].as_str().unwrap();
        for sentence in p["paragraph_text"].as_str().unwrap().split(". ") {
            n += 1;
            s += &format!("- [F{n}] {sentence} (source: {title})\n");
        }
    }
    s += "Active Hypotheses:\n";
    for j in 1..=3 {
        s += &format!("- [H{j}] a candidate answer that fits the chain | confidence: medium | supports: F1, F2, F3 | contradicts: -\n");
    }
    s += "Open Questions:\n";
    for j in 1..=4 {
        s += &format!("- [Q{j}] which entity is the next link of the chain | action: search terms for it | priority: high\n");
    }
    s + "Action: search[the next link]"
}

/// Issue 27 (max_tokens): the longest memory is about 1,400 tokens (3.5 characters a
/// token), more than the old 1,024; the default sends 4,096 and it arrives whole. A
/// reply that stops at the limit is marked on its turn and counted in the record.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_long_memory_fits_the_default_max_tokens_and_a_cut_reply_is_marked_and_counted() {
    let reply = longest_four_hop_reply();
    let tokens = reply.len() as f64 / 3.5;
    assert!(tokens > 1024.0, "the old default held it: {tokens}");
    assert!(2.0 * tokens < DEFAULT_MAX_TOKENS as f64, "{tokens}");

    let whole = reply.clone();
    let server = MockServer::spawn(move |_| Reply::text(whole.clone()));
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "sleuth", dir.path(), &["--set", "turns=2"])[0];
    assert_eq!(r["settings"]["max_tokens"], DEFAULT_MAX_TOKENS.to_string());
    for req in server.requests() {
        assert_eq!(req.body["max_tokens"], DEFAULT_MAX_TOKENS);
    }
    assert_eq!(r["trace"][0]["response"], reply.as_str());
    assert!(
        r["trace"][0].get("truncated").is_none(),
        "{}",
        r["trace"][0]
    );
    assert!(r.get("truncated_calls").is_none());

    // The testkit cuts a reply at the limit (in its token unit, words) and says so.
    let server = MockServer::spawn(move |_| Reply::text(reply.clone()));
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--set", "turns=2", "--set", "max_tokens=100"];
    let r = &eval_one(&server, "sleuth", dir.path(), &extra)[0];
    let trace = r["trace"].as_array().unwrap();
    assert_eq!(trace.len(), 2);
    for turn in trace {
        assert_eq!(turn["truncated"], true, "{turn}");
        let words = turn["response"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count();
        assert_eq!(words, 100);
        assert_eq!(
            turn["actions"],
            Value::Array(Vec::new()),
            "the action line was cut"
        );
    }
    assert_eq!(r["truncated_calls"], 2);
    let stops: Vec<&str> = r["call_stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stop"].as_str().unwrap())
        .collect();
    assert_eq!(stops, ["length", "length"]);
}

/// What the scripted model does on each fixture question: (a words of the question,
/// the reply of turn 1, the reply of turn 2). `OVERFLOW` answers with the server's
/// context-length error.
const OVERFLOW: &str = "overflow";
const ERROR_SCRIPT: [(&str, &str, &str); 6] = [
    // Stanley: the gold inside a longer answer.
    ("Van Hook", "Action: finish[Stanley, North Dakota]", ""),
    // Lana Wood: shares a word, does not contain it.
    ("Susan Walker", "Action: finish[Natalie Wood]", ""),
    // $72,641: one gold paragraph read, no word in common.
    (
        "Feminine Mystique",
        "Action: lookup[Betty Friedan]",
        "Action: finish[$50,000]",
    ),
    // Green Bay: the conversation no longer fits.
    ("Tenement", OVERFLOW, ""),
    // yes: never answers in two turns.
    (
        "Scott Derrickson",
        "Action: search[Ed Wood]",
        "Action: search[Scott Derrickson]",
    ),
    // Chief of Protocol: a wrong answer with nothing retrieved.
    ("Corliss Archer", "Action: finish[Ambassador]", ""),
];

pub(crate) fn scripted_errors(req: &sleuth_testkit::ReceivedRequest) -> Reply {
    let question = req.body["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    let (_, first, second) = ERROR_SCRIPT
        .iter()
        .find(|(words, _, _)| question.contains(words))
        .unwrap_or_else(|| panic!("no script for {question}"));
    match (crate::agents::turn_of(req), *first) {
        (_, OVERFLOW) => Reply::openai_error(
            400,
            "context_length_exceeded",
            "This model's maximum context length is 4096 tokens.",
        ),
        (1, reply) => Reply::text(format!("Thought: go\n{reply}")),
        _ => Reply::text(format!("Thought: go\n{second}")),
    }
}

/// Sums every arm's count of each error class in `report --json`.
pub(crate) fn class_totals(report: &Value) -> std::collections::BTreeMap<String, u64> {
    let mut totals = std::collections::BTreeMap::new();
    for arm in report["errors"].as_array().unwrap() {
        for (class, n) in arm["counts"].as_object().unwrap() {
            *totals.entry(class.clone()).or_insert(0) += n.as_u64().unwrap();
        }
    }
    totals
}

/// App. J's classes (timeouts, verbose answers, reasoning errors, Other's partial
/// matches) through the binary, and the cold read's finding (e): an episode that ended
/// on a context overflow is neither finished nor timed out, so it has a class of its
/// own (`unfinished`) in the decomposition and a count in every summary.
#[test]
fn error_classes_are_the_papers_and_an_overflow_is_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(scripted_errors);
    let model = format!("openai-compat:{}#m", server.url());
    let runs = [("musique", 4), ("hotpotqa", 2)].map(|(dataset, n)| {
        let out = dir.path().join(dataset);
        let fixture = crate::golden::fixture(dataset);
        Eval::new(dataset, fixture, "react", &model, &out)
            .opt("--limit", n)
            .set("turns=2")
            .ok();
        out.display().to_string()
    });
    let report = |extra: &[&str]| -> Value {
        let mut args = vec!["report", &runs[0], &runs[1], "--json"];
        args.extend(extra);
        let v: Value = serde_json::from_str(&ok(&args)).unwrap();
        v["analysis"].clone()
    };
    let totals = class_totals(&report(&[]));
    let want: std::collections::BTreeMap<String, u64> = [
        ("correct", 0),
        ("timeout", 1),
        ("unfinished", 1),
        ("verbose", 1),
        ("reasoning", 1),
        ("other", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(totals, want);

    // Every summary adds up: finished + timeouts + unfinished = questions.
    let json = report(&[]);
    for s in json["summaries"].as_array().unwrap() {
        let n = s["n"].as_u64().unwrap();
        let timeouts = (s["timeout_rate"].as_f64().unwrap() * n as f64 / 100.0).round() as u64;
        let (finished, unfinished) = (
            s["finished"].as_u64().unwrap(),
            s["unfinished"].as_u64().unwrap(),
        );
        assert_eq!(finished + timeouts + unfinished, n, "{s}");
        if s["arm"]["dataset"] == "musique-4hop" {
            assert_eq!(
                (unfinished, s["context_overflows"].as_u64()),
                (1, Some(1)),
                "{s}"
            );
        }
    }

    // The stricter reading: one gold paragraph of three is not the evidence.
    let strict = class_totals(&report(&["--reasoning-evidence", "all"]));
    assert_eq!((strict["reasoning"], strict["other"]), (0, 3));
}

/// §3.3 and Table 2 (cold read c): α = 0.7 of T = 20 is turn 14 (Nudge@14, Figure 4's
/// dotted line), the nudge given with that turn; `nudge_count=consumed` reads "consumed
/// at least α of its budget" as turn 15.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn alpha_names_turn_14_of_20_and_the_consumed_reading_turn_15() {
    for (extra, turn) in [(None, 14), (Some("nudge_count=consumed"), 15)] {
        let server =
            MockServer::spawn(|_| Reply::text(crate::agents::memory(2, "search[more evidence]")));
        let dir = tempfile::tempdir().unwrap();
        let set: Vec<&str> = extra.iter().flat_map(|e| ["--set", *e]).collect();
        let r = &eval_one(&server, "sleuth", dir.path(), &set)[0];
        assert_eq!(r["nudge_turn"], turn, "{extra:?}");
        let nudged: Vec<usize> = server
            .requests()
            .iter()
            .enumerate()
            .filter(|(_, q)| crate::sleuth_paper::last_message(q).contains("Stop searching now"))
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(nudged.first(), Some(&turn), "{extra:?}");
        assert!(r["trace"][turn - 1]["nudged"] == true);
        let want = extra.map_or("turn", |_| "consumed");
        assert_eq!(r["settings"]["nudge_count"], want);
    }
}

/// Cold read h: `stopping` and `nudge` give the same settings in either order; an
/// alternative strategy or `stopping=none` replaces the nudge.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn stopping_and_nudge_settle_the_same_in_either_order() {
    let settings = |sets: &[&str]| -> Value {
        let server = MockServer::spawn(|_| Reply::text(crate::agents::memory(2, "finish[x]")));
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<&str> = sets.iter().flat_map(|s| ["--set", *s]).collect();
        eval_one(&server, "sleuth", dir.path(), &args)[0]["settings"].clone()
    };
    for (a, b, nudge) in [
        ("stopping=structural", "nudge=0.5", "none"),
        ("stopping=none", "nudge=0.5", "none"),
        ("stopping=nudge", "nudge=0.5", "0.5"),
    ] {
        let forward = settings(&[a, b]);
        assert_eq!(forward, settings(&[b, a]), "{a} {b}");
        assert_eq!(forward["nudge"], nudge, "{a} {b}: {forward}");
    }
}

/// §5.5 and Table 4 (cold read d): adherence is a share of turns, pooled over the arm's
/// turns; the per-episode mean is reported beside it.
#[test]
fn adherence_is_pooled_over_turns() {
    // One question answered in one turn in the notation, one that drifts for three.
    let server = MockServer::spawn(|req| {
        let question = req.body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default();
        Reply::text(match question.contains("Van Hook") {
            true => crate::agents::memory(1, "finish[Stanley]"),
            false => "Thought: keep looking\nAction: search[Susan Walker]".into(),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let model = format!("openai-compat:{}#m", server.url());
    Eval::new(
        "musique",
        crate::golden::fixture("musique"),
        "sleuth",
        &model,
        &out,
    )
    .opt("--limit", 2)
    .set("turns=3")
    .ok();
    let records = crate::agents::read_records(&out);
    let adherent: Vec<Vec<bool>> = records
        .iter()
        .map(|r| {
            let trace = r["trace"].as_array().unwrap();
            trace.iter().map(|t| t["adherent"] == true).collect()
        })
        .collect();
    assert!(adherent.contains(&vec![true]) && adherent.contains(&vec![false; 3]));
    let json: Value =
        serde_json::from_str(&ok(&["report", out.to_str().unwrap(), "--json"])).unwrap();
    let s = &json["analysis"]["summaries"][0];
    assert_eq!(s["n"], 2);
    assert_eq!(s["adherence"], 25.0, "1 of 4 turns: {s}");
    assert_eq!(s["adherence_per_episode"], 50.0, "(100 + 0) / 2: {s}");
}

/// §4's EM through the binary's own scoring (cold read f): each question's gold
/// answers (aliases included) against a scripted finish, scored by `sleuth eval`.
/// (question, gold answers, the model's answer, EM.)
const EM_CASES: [(&str, &[&str], &str, u8); 5] = [
    // Case, articles and punctuation go.
    ("Which tower?", &["The Eiffel Tower"], "eiffel tower.", 1),
    // An alias counts: the best of the gold answers.
    ("Which city?", &["New York City", "NYC"], "N.Y.C.", 1),
    ("Which suffix?", &["Sammy Davis Jr."], "sammy davis jr", 1),
    // A longer answer is not an exact match (a verbose answer).
    ("Which capital?", &["Paris"], "Paris, France", 0),
    // No number-word equivalence: the official script has none.
    ("How often?", &["twice"], "2", 0),
];

#[test]
fn exact_match_is_scored_by_the_binary_after_normalization_and_over_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("em.jsonl");
    let lines: Vec<String> = EM_CASES
        .iter()
        .enumerate()
        .map(|(i, (q, golds, _, _))| {
            serde_json::json!({"id": format!("em{i}"), "question": q, "answers": golds,
                "paragraphs": [{"title": "T", "text": "Nothing to read."}]})
            .to_string()
        })
        .collect();
    std::fs::write(&data, lines.join("\n")).unwrap();
    let server = MockServer::spawn(|req| {
        let question = req.body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default();
        let (_, _, answer, _) = EM_CASES.iter().find(|c| question.contains(c.0)).unwrap();
        Reply::text(format!("Thought: sure\nAction: finish[{answer}]"))
    });
    let out = dir.path().join("run");
    let model = format!("openai-compat:{}#m", server.url());
    Eval::new("jsonl", &data, "react", &model, &out).ok();
    let records = crate::agents::read_records(&out);
    assert_eq!(records.len(), EM_CASES.len());
    for r in &records {
        let i: usize = r["id"].as_str().unwrap()[2..].parse().unwrap();
        let (q, _, answer, em) = EM_CASES[i];
        assert_eq!(r["answer"], answer, "{q}");
        assert_eq!(r["em"], f64::from(em), "{q}: {answer}");
    }
    let json: Value =
        serde_json::from_str(&ok(&["report", out.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(json["analysis"]["summaries"][0]["em"], 60.0);
}

const REFLECTION: &str = "I answered from the wrong paragraph; read the courthouse's page.";

/// §4's Reflexion (cold read g): after a wrong first episode the model writes a
/// reflection, and a second episode starts from the question with that reflection; a
/// right first episode is final (two episodes at most).
#[test]
fn reflexion_reflects_after_a_wrong_episode_and_retries_guided_by_it() {
    let server = MockServer::spawn(|req| {
        let messages = req.body["messages"].as_array().unwrap();
        let first = messages[0]["content"].as_str().unwrap_or_default();
        if first.starts_with("You tried to answer a question") {
            return Reply::text(REFLECTION);
        }
        let question = messages[1]["content"].as_str().unwrap_or_default();
        Reply::text(
            match (question.contains("Van Hook"), question.contains(REFLECTION)) {
                (true, false) => "Thought: guess\nAction: finish[Bismarck]",
                (true, true) => "Thought: again\nAction: finish[Stanley]",
                // The other question is answered right at once.
                (false, _) => "Thought: known\nAction: finish[Lana Wood]",
            },
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let model = format!("openai-compat:{}#m", server.url());
    Eval::new(
        "musique",
        crate::golden::fixture("musique"),
        "reflexion",
        &model,
        &out,
    )
    .opt("--limit", 2)
    .opt("--concurrency", 1)
    .ok();
    let records = crate::agents::read_records(&out);
    let by_answer = |a: &str| records.iter().find(|r| r["answer"] == a).unwrap();
    let retried = by_answer("Stanley");
    assert_eq!(retried["em"], 1.0);
    assert_eq!(retried["first_attempt"]["answer"], "Bismarck");
    assert_eq!(retried["first_attempt"]["em"], 0.0);
    assert_eq!(retried["calls_by_kind"]["reflection"], 1, "{retried}");
    assert_eq!(
        retried["trace"].as_array().unwrap().len(),
        2,
        "one turn per episode"
    );
    let once = by_answer("Lana Wood");
    assert!(once["calls_by_kind"].get("reflection").is_none(), "{once}");
    assert_eq!(once["trace"].as_array().unwrap().len(), 1);
    // The second episode's question carries the reflection; the first episode's not.
    let carrying: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|q| {
            q.body["messages"][1]["content"]
                .as_str()
                .map(str::to_string)
        })
        .filter(|c| c.contains("Van Hook"))
        .collect();
    assert_eq!(carrying.len(), 2);
    assert!(!carrying[0].contains(REFLECTION) && carrying[1].contains(REFLECTION));
    // The reflection was asked on the first episode's answer.
    let asked = server
        .requests()
        .into_iter()
        .find(|q| q.raw_body.contains("You tried to answer a question"))
        .unwrap();
    assert!(asked.raw_body.contains("Your answer: Bismarck"));
}

/// The titles of the first shared MuSiQue question's pool.
fn first_pool_titles() -> Vec<String> {
    let text = std::fs::read_to_string(musique()).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let paragraphs = first["paragraphs"].as_array().unwrap();
    paragraphs
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_string())
        .collect()
}

/// §3.4, App. M (cold read i, issue 27 item 5 for every tool): nothing the pool's tools
/// answer with names a pool title the model did not write itself, before anything was
/// shown: an empty search, a search that matches nothing, a failed lookup, a tool the
/// pool does not offer, on either channel.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn no_tool_names_a_pool_title_before_it_was_shown() {
    const TURN: &str = "Thought: try everything\nAction: search[]\nAction: search[qqxy zzwv]\nAction: lookup[Port Blair city]\nAction: read[Port Blair]";
    let titles = first_pool_titles();
    assert!(titles.iter().any(|t| t == "Port Blair"), "{titles:?}");
    let unwritten: Vec<&String> = titles
        .iter()
        .filter(|t| !TURN.contains(t.as_str()))
        .collect();
    let check = |feedback: &str| {
        for t in &unwritten {
            assert!(!feedback.contains(t.as_str()), "{t} named: {feedback}");
        }
    };
    let server = MockServer::spawn(|req| {
        Reply::text(match crate::agents::turn_of(req) {
            1 => TURN,
            _ => "Thought: done\nAction: finish[unknown]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "react", dir.path(), &[])[0];
    let texts: Vec<&str> = r["trace"][0]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(texts[0].contains("query was empty"), "{}", texts[0]);
    assert!(texts[1].starts_with("No paragraph matches"), "{}", texts[1]);
    assert!(texts[2].starts_with("Lookup failed") && !texts[2].contains("close"));
    assert!(texts[3].contains("was not run"), "{}", texts[3]);
    check(&crate::sleuth_paper::last_message(&server.requests()[1]));

    // The native channel: the same results, one per call, and a call of a tool no
    // environment has.
    let server = MockServer::spawn(|req| {
        let call = |id: &str, name: &str, arg: &str| {
            serde_json::json!({"id": id, "type": "function", "function": {"name": name,
                "arguments": serde_json::json!({"x": arg}).to_string()}})
        };
        let calls = match crate::agents::turn_of(req) {
            1 => vec![
                call("a", "lookup", "Port Blair city"),
                call("b", "list_titles", ""),
            ],
            _ => vec![call("c", "finish", "unknown")],
        };
        Reply::Json(
            serde_json::json!({"choices": [{"message": {"role": "assistant",
            "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}]}),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    eval_one(
        &server,
        "react",
        dir.path(),
        &["--set", "tool_channel=native"],
    );
    let sent = server.requests()[1].body["messages"].clone();
    let results: Vec<&Value> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results[1]["content"]
        .as_str()
        .unwrap()
        .contains("list_titles is not one of the tools"));
    check(&Value::Array(sent.as_array().unwrap()[2..].to_vec()).to_string());
}

/// Two confirmed facts, a hypothesis, and no open question left.
fn memory_without_questions() -> String {
    "Confirmed Facts:\n- [F1] established point 1 (source: Some Title)\n- [F2] established point 2 (source: Some Title)\nActive Hypotheses:\n- [H1] a candidate | confidence: medium | supports: F1, F2 | contradicts: -\nOpen Questions:\nAction: search[more evidence]".into()
}

/// §3.3's options through the binary (cold read j: the ledger's nudge options had unit
/// tests only): `nudge=turn:N` (Table 11), `tau`, the weaker `nudge_gate=empty-questions`
/// variant and `nudge=none` (Table 2's no-nudge row). (settings, reply, nudge turn.)
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn the_nudge_options_move_or_gate_the_trigger() {
    let two = crate::agents::memory(2, "search[more evidence]");
    let three = crate::agents::memory(3, "search[more evidence]");
    let cases: [(&[&str], String, Option<u64>); 6] = [
        (&["nudge=turn:6"], two.clone(), Some(6)),
        (&["tau=3"], two.clone(), None),
        (&["tau=3"], three, Some(14)),
        (&["nudge_gate=empty-questions"], two.clone(), None),
        (
            &["nudge_gate=empty-questions"],
            memory_without_questions(),
            Some(14),
        ),
        (&["nudge=none"], two, None),
    ];
    for (sets, reply, turn) in cases {
        let server = MockServer::spawn(move |_| Reply::text(reply.clone()));
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<&str> = sets.iter().flat_map(|s| ["--set", *s]).collect();
        let r = &eval_one(&server, "sleuth", dir.path(), &args)[0];
        assert_eq!(r["nudge_turn"].as_u64(), turn, "{sets:?}");
        let nudged = server
            .requests()
            .iter()
            .position(|q| crate::sleuth_paper::last_message(q).contains("Stop searching now"))
            .map(|i| i as u64 + 1);
        assert_eq!(nudged, turn, "{sets:?}: the message given with that turn");
    }
}
