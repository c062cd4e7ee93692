//! A third cold read of the SLEUTH paper against the code: the enforced prompt's own
//! delimiters (§3.4, §5.5, App. M), prose around the memory sections (§5.5, Table 4),
//! IRCoT's `[RETRIEVAL]` tag (App. K), text after an action's bracket, the rejected
//! exchanges of enforcement (App. M), a lookup of a repeated title (App. M) and 2Wiki
//! without its alias file. Each is shown through the binary against a scripted local
//! server whose replies are written the way a chat model writes them: prose, delimiter
//! lines, "none yet" placeholders.

use crate::agents::{eval_one, turn_of};
use crate::sleuth_paper::{last_message, system_prompt};
use crate::util::*;
use serde_json::Value;
use sleuth_testkit::{MockServer, Reply};

/// The enforced prompt's opening and closing delimiter lines, as `memory.txt` asks.
const OPEN: &str = "=== WORKING MEMORY (all sections required, in this notation) ===";
const CLOSE: &str = "=== END WORKING MEMORY ===";

/// SLEUTH's three turns on the first MuSiQue question (Van Hook Township → Mountrail
/// County → Stanley), as a model writes them, each `(memory, action line)`.
fn investigation(turn: usize) -> (&'static str, &'static str) {
    match turn {
        1 => (
            "Confirmed Facts:\n- None yet.\nActive Hypotheses:\n- None so far; no evidence gathered.\nOpen Questions:\n- [Q1] Which county is Van Hook Township in? | action: Van Hook Township | priority: high\n- [Q2] What is the seat of that county? | action: county seat | priority: medium",
            "Action: search[Van Hook Township]",
        ),
        2 => (
            "Confirmed Facts:\n- [F1] Van Hook Township is a township in Mountrail County, North Dakota (source: Van Hook Township, Mountrail County, North Dakota)\nActive Hypotheses:\n- [H1] Stanley | confidence: low | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] Which county is Van Hook Township in? | action: Van Hook Township | priority: high (resolved)\n- [Q2] What is the seat of Mountrail County? | action: Mountrail County seat | priority: high",
            "Action: search[Mountrail County seat]",
        ),
        _ => (
            "Confirmed Facts:\n- [F1] Van Hook Township is a township in Mountrail County, North Dakota (source: Van Hook Township, Mountrail County, North Dakota)\n- [F2] The Mountrail County Courthouse is in Stanley, the county seat (source: Mountrail County Courthouse)\nActive Hypotheses:\n- [H1] Stanley | confidence: high | supports: F1, F2 | contradicts: -\nOpen Questions:\n- None remaining; all resolved.",
            "Action: finish[Stanley]",
        ),
    }
}

/// A reply in exactly the enforced prompt's format: the delimiters around the memory,
/// then the action line.
fn delimited(turn: usize) -> String {
    let (memory, action) = investigation(turn);
    format!("{OPEN}\n{memory}\n{CLOSE}\n{action}")
}

/// A reply with a model's prose: a sentence before the memory and a reasoning
/// sentence between Open Questions and the action line.
fn with_prose(turn: usize) -> String {
    let (memory, action) = investigation(turn);
    let reasoning = match turn {
        1 => "The township's county is the first link, so I look for the township first.",
        2 => "The county is known; its seat is the last link I need.",
        _ => "Both links are confirmed, so the seat of the county is the answer.",
    };
    format!("Let me update my working memory.\n\n{memory}\n\n{reasoning}\n{action}")
}

/// The reminder's words (`reminder.txt`).
const REMINDER: &str = "did not follow the working-memory protocol";

/// The turn a request asks for: its assistant messages less the rejected ones (each
/// followed by a reminder), plus one.
fn turn_of_episode(req: &sleuth_testkit::ReceivedRequest) -> usize {
    let reminders = req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" && m["content"].as_str().unwrap_or("").contains(REMINDER))
        .count();
    turn_of(req) - reminders
}

fn adherent_turns(r: &Value) -> Vec<bool> {
    r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["adherent"].as_bool().unwrap())
        .collect()
}

/// §3.4, §5.5, App. M: under `enforce=true` the prompt asks for the memory between
/// `=== WORKING MEMORY … ===` and `=== END WORKING MEMORY ===`; a reply in exactly that
/// format is in the notation (the END line closes Open Questions, it is no malformed
/// question): no reminder, adherence 1.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_reply_in_the_enforced_prompts_own_format_passes_with_no_reminder() {
    let server = MockServer::spawn(|req| Reply::text(delimited(turn_of(req))));
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "sleuth", dir.path(), &["--set", "enforce=true"])[0];
    let system = system_prompt(&server.requests()[0]);
    assert!(system.contains(OPEN) && system.contains(CLOSE), "{system}");
    assert_eq!(r["reminders"], 0);
    assert_eq!(r["adherence"], 1.0);
    assert_eq!(adherent_turns(r), [true, true, true]);
    assert_eq!(
        (r["turns"].clone(), r["calls"].clone()),
        (3.into(), 3.into())
    );
    assert_eq!(r["answer"], "Stanley");
    // The delimiters are no part of the memory: the facts are the two written.
    let facts = r["trace"][2]["state"]["facts"].as_array().unwrap().len();
    assert_eq!(facts, 2);
}

/// §3.2, §5.5, Table 4: a turn is in the notation when its typed sections hold entries
/// in the notation. Prose around them (a sentence before the memory, reasoning between
/// Open Questions and the action line) and `none`-style placeholders (`- None so far;
/// no evidence gathered.`, `- None remaining; all resolved.`) do not make it drift; a
/// fact without its source still does, and so does a missing section.
/// `section_prose=judged` (the earlier reading) judges the reasoning line as a question.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn prose_after_the_sections_and_none_placeholders_are_adherent_and_a_sourceless_fact_is_not() {
    let run = |script: fn(usize) -> String, set: &[&str]| {
        let server = MockServer::spawn(move |req| Reply::text(script(turn_of_episode(req))));
        let dir = tempfile::tempdir().unwrap();
        let mut extra = Vec::new();
        for s in set {
            extra.extend(["--set", s]);
        }
        let r = eval_one(&server, "sleuth", dir.path(), &extra).remove(0);
        (r, server.requests().len())
    };
    let (r, _) = run(with_prose, &[]);
    assert_eq!(r["settings"]["section_prose"], "ends");
    assert_eq!(adherent_turns(&r), [true, true, true]);
    assert_eq!(r["adherence"], 1.0);
    assert_eq!(r["answer"], "Stanley");
    let (r, calls) = run(with_prose, &["enforce=true"]);
    assert_eq!((r["reminders"].clone(), calls), (0.into(), 3));

    // The earlier reading: the reasoning sentence is judged as an Open Questions entry.
    let (r, _) = run(with_prose, &["section_prose=judged"]);
    assert_eq!(adherent_turns(&r), [false, false, false]);

    // Turn 2's fact loses its source: that turn drifts, and enforcement re-prompts it
    // (the same reply every time, so all five reminders go to turn 2).
    fn sourceless(turn: usize) -> String {
        let reply = with_prose(turn);
        match turn {
            2 => reply.replace(
                " (source: Van Hook Township, Mountrail County, North Dakota)",
                "",
            ),
            _ => reply,
        }
    }
    let (r, _) = run(sourceless, &[]);
    assert_eq!(adherent_turns(&r), [true, false, true]);
    let (r, calls) = run(sourceless, &["enforce=true", "turns=3"]);
    assert_eq!(r["reminders"], 5);
    assert_eq!(r["trace"][1]["rejected"].as_array().unwrap().len(), 5);
    assert_eq!(calls, 3 + 5);

    // No Active Hypotheses section at all: not adherent, however tidy the rest.
    fn no_hypotheses(turn: usize) -> String {
        let reply = with_prose(turn);
        let start = reply.find("Active Hypotheses:").unwrap();
        let end = reply.find("Open Questions:").unwrap();
        format!("{}{}", &reply[..start], &reply[end..])
    }
    let (r, _) = run(no_hypotheses, &[]);
    assert_eq!(adherent_turns(&r), [false, false, false]);
}

/// App. K: IRCoT alternates `[REASONING]` and `[RETRIEVAL]` steps, the latter holding the
/// action line on the same line (`[RETRIEVAL] Action: search[...]`), its finish too. A
/// scripted model writing exactly that searches, looks up and answers.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn ircot_actions_written_after_the_retrieval_tag_run_and_finish() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "[REASONING] What I know: nothing yet. What I still need: the county Van Hook Township is in. What I will look for: the township's paragraph.\n[RETRIEVAL] Action: search[Van Hook Township county]",
            2 => "[REASONING] The retrieval showed: Van Hook Township is in Mountrail County, North Dakota. Together with what I knew: the county is Mountrail County. Still needed: its county seat.\n[RETRIEVAL] lookup[Mountrail County Courthouse]",
            _ => "[REASONING] The retrieval showed: the courthouse is in Stanley, the county seat. Together with what I knew: Stanley is the seat of Mountrail County. Still needed: nothing, I can answer.\n[RETRIEVAL] Action: finish[Stanley]",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "ircot", dir.path(), &[])[0];
    assert!(system_prompt(&server.requests()[0]).contains("[RETRIEVAL] Action: <tool>[<argument>]"));
    let actions: Vec<&Value> = r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["actions"][0])
        .collect();
    assert_eq!(actions[0]["tool"], "search");
    assert_eq!(actions[0]["arg"], "Van Hook Township county");
    assert_eq!(actions[1]["tool"], "lookup");
    assert_eq!(actions[1]["arg"], "Mountrail County Courthouse");
    let looked = r["trace"][1]["observations"][0]["text"].as_str().unwrap();
    assert!(
        looked.starts_with("[Mountrail County Courthouse]"),
        "{looked}"
    );
    assert_eq!(r["answer"], "Stanley");
    assert_eq!(r["turns"], 3);
}

/// The action line's bracket holds the argument; a full stop or a few words after it
/// (`finish[Stanley].`, `search[Van Hook Township] to find its county`) do not drop
/// the action.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn text_after_the_closing_bracket_keeps_the_action() {
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "Thought: I need the county of Van Hook Township first.\nAction: search[Van Hook Township] to find its county",
            _ => "Thought: The township is in Mountrail County, whose seat is Stanley.\nAction: finish[Stanley].",
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let r = &eval_one(&server, "react", dir.path(), &[])[0];
    let first = &r["trace"][0]["actions"][0];
    assert_eq!(
        (first["tool"].as_str(), first["arg"].as_str()),
        (Some("search"), Some("Van Hook Township"))
    );
    assert!(!r["trace"][0]["observations"][0]["shown"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(r["answer"], "Stanley");
    assert_eq!(r["turns"], 2);
}

/// The reply enforcement rejects on turn 1: the model's prose, no memory sections.
const DRIFTED: &str = "I should first find which county Van Hook Township belongs to, then look up that county's seat.\nAction: search[Van Hook Township]";

/// App. M: a re-prompt costs about 50 tokens per occurrence. The reminder request
/// carries the rejected reply and the reminder; once a reply is accepted they leave the
/// conversation, so the next request has one assistant message per turn and neither
/// the rejected text nor the reminder. `keep_rejected=true` (the earlier reading) keeps
/// both for the rest of the episode.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_rejected_reply_and_its_reminder_leave_the_context_once_a_reply_is_accepted() {
    let script = |req: &sleuth_testkit::ReceivedRequest| {
        let assistants = turn_of(req) - 1;
        Reply::text(if last_message(req).contains(REMINDER) {
            delimited(1)
        } else if assistants == 0 {
            DRIFTED.to_string()
        } else {
            delimited(3)
        })
    };
    let assistants = |req: &sleuth_testkit::ReceivedRequest| turn_of(req) - 1;
    for (set, kept) in [(None, false), (Some("keep_rejected=true"), true)] {
        let server = MockServer::spawn(script);
        let dir = tempfile::tempdir().unwrap();
        let mut extra = vec!["--set", "enforce=true"];
        if let Some(s) = set {
            extra.extend(["--set", s]);
        }
        let r = &eval_one(&server, "sleuth", dir.path(), &extra)[0];
        assert_eq!(r["settings"]["keep_rejected"], kept.to_string());
        assert_eq!(r["reminders"], 1);
        assert_eq!(r["trace"][0]["rejected"][0], DRIFTED);
        assert_eq!(r["answer"], "Stanley");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3, "turn 1, its reminder, turn 2");
        // The reminder request: the rejected reply, then the reminder.
        assert!(reqs[1]
            .raw_body
            .contains("I should first find which county"));
        assert!(last_message(&reqs[1]).contains(REMINDER));
        // Turn 2's request.
        let next = &reqs[2];
        assert_eq!(
            next.raw_body.contains("I should first find which county"),
            kept
        );
        assert_eq!(next.raw_body.contains(REMINDER), kept);
        assert_eq!(assistants(next), if kept { 2 } else { 1 });
        assert!(next
            .raw_body
            .contains("[Q2] What is the seat of that county?"));
    }
}

/// The fifth MuSiQue question of `../shared/data`, whose pool holds two paragraphs
/// titled "Liberal Party of Australia", written alone to `dir`.
fn repeated_title_question(dir: &std::path::Path) -> std::path::PathBuf {
    let line = std::fs::read_to_string(musique())
        .unwrap()
        .lines()
        .nth(4)
        .unwrap()
        .to_string();
    let q: Value = serde_json::from_str(&line).unwrap();
    let titled = q["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["title"] == "Liberal Party of Australia")
        .count();
    assert_eq!(titled, 2, "the case needs a repeated title");
    let path = dir.join("repeated.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

/// App. M: lookup returns the paragraph a title names. MuSiQue pools repeat titles:
/// each paragraph is shown under its pool name (the second `T` as `[T (2)]`, issue 43
/// item 2), `lookup[T (2)]` returns the second paragraph titled T and `lookup[T]` the
/// first; `lookup_repeats=all` (the other reading) gives every paragraph titled T, in
/// pool order; the record names the paragraph read.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_lookup_reaches_the_second_paragraph_of_a_repeated_title() {
    const FIRST: &str = "The contemporary Liberal Party generally advocates";
    const SECOND: &str = "The UAP had been formed as a new conservative alliance";
    let dir = tempfile::tempdir().unwrap();
    let data = repeated_title_question(dir.path());
    let run = |set: &[&str]| {
        let server = MockServer::spawn(|req| {
            Reply::text(match turn_of(req) {
                1 => "Thought: The party's history paragraph should name its longest-serving leader.\nAction: lookup[Liberal Party of Australia (2)]",
                2 => "Thought: Let me read every paragraph under that title.\nAction: lookup[Liberal Party of Australia]",
                _ => "Thought: Lyons became Prime Minister after the 1931 split.\nAction: finish[Lyons' death in 1939]",
            })
        });
        let out = tempfile::tempdir().unwrap();
        let url = format!("openai-compat:{}#test-model", server.url());
        let mut eval = Eval::new("musique", data.clone(), "react", &url, out.path());
        for s in set {
            eval = eval.set(s);
        }
        eval.ok();
        crate::agents::read_records(out.path()).remove(0)
    };
    let observed = |r: &Value, turn: usize| {
        r["trace"][turn]["observations"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let r = run(&[]);
    assert_eq!(r["settings"]["lookup_repeats"], "first");
    let second = observed(&r, 0);
    assert!(
        second.starts_with(&format!("[Liberal Party of Australia (2)] {SECOND}")),
        "{second}"
    );
    assert_eq!(r["retrieved"][0], "Liberal Party of Australia (2)");
    assert!(!second.contains(FIRST), "{second}");
    let first = observed(&r, 1);
    assert!(first.contains(FIRST) && !first.contains(SECOND), "{first}");
    let r = run(&["lookup_repeats=all"]);
    assert!(observed(&r, 0).starts_with(&format!("[Liberal Party of Australia (2)] {SECOND}")));
    let both = observed(&r, 1);
    let (a, b) = (both.find(FIRST).unwrap(), both.find(SECOND).unwrap());
    assert!(a < b, "pool order: {both}");
}

/// App. M with pool names (issue 43 item 2, a cold read's case): a paragraph whose own
/// title looks like a pool name (`T (2)`, after two paragraphs titled T) neither hides
/// the second `T`, shown as `[T (2)]`, nor is lost: it is shown as `[T (2) (2)]`, and a
/// lookup of each name returns the paragraph that heading names.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_title_that_looks_like_a_pool_name_hides_no_paragraph() {
    const SECOND: &str = "The UAP had been formed as a new conservative alliance";
    const TITLE: &str = "Liberal Party of Australia";
    let dir = tempfile::tempdir().unwrap();
    let data = repeated_title_question(dir.path());
    let mut q: Value =
        serde_json::from_str(std::fs::read_to_string(&data).unwrap().trim()).unwrap();
    let paragraphs = q["paragraphs"].as_array_mut().unwrap();
    let second = paragraphs
        .iter()
        .enumerate()
        .filter(|(_, p)| p["title"] == TITLE)
        .map(|(i, _)| i)
        .nth(1)
        .unwrap();
    let renamed = paragraphs.len() - 1;
    assert!(
        renamed > second,
        "the renamed paragraph must come after the second {TITLE}"
    );
    paragraphs[renamed]["title"] = Value::from(format!("{TITLE} (2)"));
    let text = paragraphs[renamed]["paragraph_text"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(&data, format!("{q}\n")).unwrap();
    let server = MockServer::spawn(|req| {
        Reply::text(match turn_of(req) {
            1 => "Thought: The second paragraph under that title.\nAction: lookup[Liberal Party of Australia (2)]",
            2 => "Thought: And the one titled so itself.\nAction: lookup[Liberal Party of Australia (2) (2)]",
            _ => "Thought: Enough.\nAction: finish[Lyons' death in 1939]",
        })
    });
    let out = tempfile::tempdir().unwrap();
    let url = format!("openai-compat:{}#test-model", server.url());
    Eval::new("musique", data.clone(), "react", &url, out.path()).ok();
    let r = crate::agents::read_records(out.path()).remove(0);
    let observed = |turn: usize| {
        r["trace"][turn]["observations"][0]["text"]
            .as_str()
            .unwrap()
    };
    assert!(
        observed(0).starts_with(&format!("[{TITLE} (2)] {SECOND}")),
        "{}",
        observed(0)
    );
    let head: String = text.chars().take(40).collect();
    assert!(
        observed(1).starts_with(&format!("[{TITLE} (2) (2)] {head}")),
        "{}",
        observed(1)
    );
    assert_eq!(
        r["retrieved"],
        serde_json::json!([format!("{TITLE} (2)"), format!("{TITLE} (2) (2)")])
    );
}

/// §4: EM is the best over the gold answer and its aliases, which 2Wiki keeps in
/// `id_aliases.json` beside its data. Without that file the answers are scored against
/// the gold alone: the run says so once (however many questions), naming the file and
/// `sleuth data fetch 2wiki`; with the file beside the data it says nothing.
#[test]
fn twowiki_without_its_alias_file_warns_once_naming_the_file_and_the_fetch() {
    const WARNING: &str = "answers are scored without their aliases";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("dev.jsonl");
    std::fs::copy(crate::golden::fixture("2wiki"), &data).unwrap();
    let server =
        MockServer::spawn(|_| Reply::text("Thought: I cannot find more.\nAction: finish[unknown]"));
    let model = format!("openai-compat:{}#m", server.url());
    let run = |out: &str| {
        let out = dir.path().join(out);
        let o = Eval::new("2wiki", &data, "react", &model, &out)
            .opt("--limit", 2)
            .output();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = run("without");
    assert_eq!(err.matches(WARNING).count(), 1, "{err}");
    let line = err.lines().find(|l| l.contains(WARNING)).unwrap();
    let aliases = dir.path().join("id_aliases.json");
    assert!(line.contains(&aliases.display().to_string()), "{line}");
    assert!(line.contains("sleuth data fetch 2wiki"), "{line}");
    std::fs::write(
        &aliases,
        "{\"Q_id\": \"Q1\", \"aliases\": [\"an alias\"], \"demonyms\": []}\n",
    )
    .unwrap();
    let err = run("with");
    assert!(!err.contains(WARNING), "{err}");
}

/// The action line a method's own prompt shows: IRCoT's `[RETRIEVAL]` step, else the
/// shared tools paragraph's form (in backticks); `None` when the prompt shows none.
fn example_line(system: &str) -> Option<String> {
    if let Some(step) = system
        .lines()
        .find(|l| l.starts_with("[RETRIEVAL]") && l.contains("<tool>"))
    {
        return Some(step.split(", or ").next()?.to_string());
    }
    let tools = system.lines().find(|l| l.contains("<tool>["))?;
    Some(tools.split('`').nth(1)?.to_string())
}

/// The format is declared once (issue 43 item 1): each method's prompt shows its action
/// lines in a form the parser reads. A scripted model copying the very line its prompt
/// shows, placeholders filled, searches on turn 1 and answers on turn 2, for every
/// method with an action protocol; IRCoT's prompt shows the line inside its
/// `[RETRIEVAL]` step (main's read `[RETRIEVAL] <the action line>`, no form at all).
#[test]
fn every_methods_own_example_action_line_runs_as_written() {
    for method in [
        "react",
        "react-cot",
        "ircot",
        "self-ask",
        "notes",
        "reflexion",
    ] {
        let server = MockServer::spawn(|req| {
            let system = system_prompt(req);
            let Some(line) = example_line(&system) else {
                return Reply::text("no example line in the prompt");
            };
            let filled =
                |tool: &str, arg: &str| line.replace("<tool>", tool).replace("<argument>", arg);
            Reply::text(match turn_of(req) {
                1 => filled("search", "Van Hook Township"),
                _ => filled("finish", "Stanley"),
            })
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let url = format!("openai-compat:{}#m", server.url());
        Eval::new(
            "musique",
            crate::golden::fixture("musique"),
            method,
            &url,
            &out,
        )
        .opt("--limit", 1)
        .ok();
        let system = system_prompt(&server.requests()[0]);
        if method == "ircot" {
            assert!(
                system.contains("[RETRIEVAL] Action: <tool>[<argument>]"),
                "IRCoT's step shows no action line: {system}"
            );
        }
        let r = &crate::agents::read_records(&out)[0];
        assert_eq!(
            (
                r["tool_calls"].as_u64(),
                r["answer"].as_str(),
                r["turns"].as_u64()
            ),
            (Some(1), Some("Stanley"), Some(2)),
            "{method}: the prompt's own line did not run as written"
        );
    }
}

/// §4's Reflexion (2 episodes) as one record (issue 43 item 8): the second episode's
/// turns continue the first's numbering (1..3, then 4.., at most 2 × T = 40 under the
/// paper's T = 20) and carry their trial; the reflection is shown the first episode
/// with each observation cut to 600 characters (neither paper gives a length: ours).
#[test]
fn reflexion_numbers_turns_across_episodes_and_cuts_observations_for_reflection() {
    let server = MockServer::spawn(|req| {
        let first = req.body["messages"][0]["content"].as_str().unwrap_or("");
        if first.starts_with("You tried to answer") {
            return Reply::text("I searched the same words three times; look up the county next.");
        }
        let reflected = req.body["messages"].as_array().unwrap().iter().any(|m| {
            m["content"]
                .as_str()
                .unwrap_or("")
                .contains("look up the county next")
        });
        Reply::text(if reflected {
            "Thought: answer now.\nAction: finish[Minot]"
        } else {
            "Thought: search.\nAction: search[Van Hook Township Mountrail County]"
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = format!("openai-compat:{}#m", server.url());
    Eval::new(
        "musique",
        crate::golden::fixture("musique"),
        "reflexion",
        &url,
        &out,
    )
    .opt("--limit", 1)
    .set("turns=3")
    .ok();
    let r = &crate::agents::read_records(&out)[0];
    let trace = r["trace"].as_array().unwrap();
    let numbers: Vec<u64> = trace
        .iter()
        .map(|t| t["number"].as_u64().unwrap())
        .collect();
    let trials: Vec<u64> = trace.iter().map(|t| t["trial"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4], "one numbering across both episodes");
    assert_eq!(trials, [1, 1, 1, 2]);
    let longest = trace[0]["observations"][0]["text"]
        .as_str()
        .unwrap()
        .chars()
        .count();
    assert!(
        longest > 600,
        "the search shows more than 600 characters ({longest})"
    );
    let reflection = server
        .requests()
        .into_iter()
        .find(|q| {
            q.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .starts_with("You tried to answer")
        })
        .expect("a reflection call");
    let shown = reflection.body["messages"][0]["content"].as_str().unwrap();
    let observations: Vec<String> = trace[..3]
        .iter()
        .map(|t| t["observations"][0]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(observations.len(), 3);
    for (k, o) in observations.iter().enumerate() {
        let cut: String = o.chars().take(600).collect();
        let longer: String = o.chars().take(601).collect();
        assert!(
            shown.contains(&format!("Observation: {cut}\n")) && !shown.contains(&longer),
            "turn {}: not cut at 600 characters",
            k + 1
        );
    }
}

/// §4 "greedy decoding": every request of every pool-setting method carries temperature
/// 0. App. K's commit condition: SLEUTH's prompt says to finish once a hypothesis
/// reaches high confidence (not §3.1–3.2's "and no open question remains"), and a finish
/// written beside open questions is taken.
#[test]
fn every_request_is_greedy_and_sleuth_commits_with_questions_still_open() {
    for method in [
        "react",
        "react-cot",
        "self-ask",
        "ircot",
        "notes",
        "reflexion",
        "sleuth",
    ] {
        let server = MockServer::spawn(|_| {
            Reply::text(
                "Confirmed Facts:\n- [F1] Van Hook Township is in Mountrail County (source: Van Hook Township, Mountrail County, North Dakota)\nActive Hypotheses:\n- [H1] Stanley | confidence: high | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] Is Stanley the county seat? | action: Mountrail County seat | priority: low\nAction: finish[Stanley]",
            )
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let url = format!("openai-compat:{}#m", server.url());
        Eval::new(
            "musique",
            crate::golden::fixture("musique"),
            method,
            &url,
            &out,
        )
        .opt("--limit", 1)
        .ok();
        for req in server.requests() {
            assert_eq!(req.body["temperature"], 0.0, "{method}: not greedy");
        }
        let r = &crate::agents::read_records(&out)[0];
        assert_eq!(r["answer"], "Stanley", "{method}");
        assert_eq!(r["turns"], 1, "{method}: the finish is taken with Q1 open");
        if method == "sleuth" {
            let system = system_prompt(&server.requests()[0]);
            assert!(
                system.contains(
                    "When a hypothesis reaches high confidence, call finish[answer] IMMEDIATELY."
                ),
                "{system}"
            );
        }
    }
}

/// D.2 and App. M give α's range two ways ([0.2, 0.8]; [0.2, 1.0]): the HotpotQA sweep
/// recipe runs 0.2 to 1.0 by 0.1 and no nudge, which holds both. Table 1's questions are
/// every question of each benchmark's dev split (no sample), MuSiQue as its 2/3/4-hop
/// splits (N = 1,252/760/405 on the full dev set).
#[test]
fn the_sweep_covers_both_alpha_ranges_and_table_one_takes_every_dev_question() {
    let pair = |name: &str| format!("{name}={}", crate::golden::fixture(name).display());
    let plan = |recipe: &str| {
        ok(&[
            "experiment",
            &format!("{}/../../experiments/{recipe}", env!("CARGO_MANIFEST_DIR")),
            "--dry-run",
            "--model",
            "openai:gpt-4o-mini",
            "--data",
            &pair("hotpotqa"),
            "--data",
            &pair("musique"),
            "--data",
            &pair("2wiki"),
        ])
    };
    let sweep = plan("nudge-sweep-hotpotqa.toml");
    for alpha in [
        "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0", "none",
    ] {
        assert!(
            sweep.contains(&format!("nudge={alpha} ")),
            "α = {alpha}: {sweep}"
        );
    }
    let table1 = plan("sleuth-table1.toml");
    for name in [
        "hotpotqa",
        "musique-2hop",
        "musique-3hop",
        "musique-4hop",
        "2wiki",
    ] {
        let line = table1
            .lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no questions line for {name}: {table1}"));
        assert!(
            line.contains("every question of") && line.ends_with("(no sample)"),
            "{line}"
        );
    }
}
