//! Beyond the papers (issue 18), through the binary: the adaptive nudge's record,
//! context compaction's input tokens on MuSiQue 4-hop pools against `sleuth` (the same
//! replies replayed by a local server so only the method differs), contradiction detection, and
//! `experiments/beyond.toml` run end to end against a local server.

use crate::agents::turn_of;
use crate::util::{musique, ok, recipe_data, records_under, replay_answer, replies, Eval};
use serde_json::Value;
use sleuth_testkit::{MockServer, PromptCache, ReceivedRequest, Reply};
use std::collections::BTreeMap;
use std::path::Path;

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn adaptive_nudge_is_recorded_with_its_condition_and_turn() {
    let dir = tempfile::tempdir().unwrap();
    let reply = "Confirmed Facts:\n- [F1] one (source: A)\n- [F2] two (source: B)\n\
                 Active Hypotheses:\n- [H1] x | confidence: medium | supports: F1 | contradicts: -\n\
                 Open Questions:\n- [Q1] more? | action: more | priority: high\n\
                 Action: search[city]";
    let model = replies(dir.path(), "r.json", &[reply.to_string()]);
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "sleuth", &model, &out)
        .opt("--limit", 1)
        .set("turns=8")
        .set("nudge=adaptive")
        .ok();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let settings = &config["method_settings"]["sleuth"];
    assert_eq!(settings["nudge"], "adaptive");
    assert_eq!(settings["adaptive_stagnation"], "3");
    assert_eq!(settings["adaptive_confident"], "true");
    let records = records_under(&out);
    let r = &records[0];
    // Two facts in turn 1 and none after: three still turns, so the nudge comes with 5.
    assert_eq!(
        r["outputs"]["commitment"],
        serde_json::json!({"turn": 5, "condition": "stagnation"})
    );
    let nudged: Vec<u64> = r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["nudged"] == true)
        .map(|t| t["number"].as_u64().unwrap())
        .collect();
    assert_eq!(nudged, vec![5]);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn compaction_sends_at_most_six_tenths_of_sleuths_input_tokens_at_t20() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(replay_answer);
    let model = "anthropic:claude-sonnet-4-5?prompt_cache=off";
    let full = priced_replay(dir.path(), &server, model, "sleuth", &[], 3);
    let compact = priced_replay(dir.path(), &server, model, "sleuth", &["compact=2"], 3);
    assert_eq!(
        (full.calls, compact.calls),
        (20.0, 20.0),
        "the full budget ran"
    );
    let (full, compact) = (full.input, compact.input);
    let ratio = compact / full;
    assert!(
        ratio <= 0.6,
        "compact=2: {compact:.0} vs sleuth {full:.0} input tokens per question ({ratio:.2}x)"
    );
}

/// Per question, on the priced replay: input, cached and output tokens, calls, dollars.
struct Spend {
    input: f64,
    cached: f64,
    output: f64,
    calls: f64,
    usd: f64,
}

/// `method` with `extra` settings on MuSiQue 4-hop pools at T = 20, one question at a
/// time, against a local server speaking Anthropic's API that replays the same 20
/// replies and emulates its prompt cache; `model` is `anthropic:claude-sonnet-4-5`, with
/// or without `?prompt_cache=off`, priced by the built-in table.
fn priced_replay(
    dir: &Path,
    server: &MockServer,
    model: &str,
    method: &str,
    extra: &[&str],
    limit: usize,
) -> Spend {
    let out = dir.join(format!("{method}-{}-{}", extra.join("-"), model.len()));
    let mut eval = Eval::new("musique", musique(), method, model, &out)
        .opt("--hops", 4)
        .opt("--limit", limit)
        .opt("--concurrency", 1)
        .set("turns=20")
        .env("ANTHROPIC_BASE_URL", server.origin())
        .env("ANTHROPIC_API_KEY", "sk-ant-test");
    for s in extra {
        eval = eval.set(s);
    }
    eval.ok();
    let records = records_under(&out);
    assert_eq!(records.len(), limit);
    let mean = |field: &str| {
        records
            .iter()
            .map(|r| r[field].as_f64().unwrap())
            .sum::<f64>()
            / limit as f64
    };
    Spend {
        input: mean("input_tokens"),
        cached: mean("cached_input_tokens"),
        output: mean("output_tokens"),
        calls: mean("calls"),
        usd: mean("cost_usd"),
    }
}

/// The figures behind the targets, per question on every MuSiQue 4-hop question of the
/// subset at T = 20, each new method against `sleuth` on the same replayed replies,
/// priced as Claude Sonnet 4.5 ($3 / $15 per million input / output tokens; cache reads
/// $0.30, writes $3.75), without and with prompt caching:
/// `cargo test -p sleuth-cli --no-default-features --test cli -- beyond::beyond_figures --ignored --nocapture`.
#[test]
#[ignore]
fn beyond_figures() {
    let dir = tempfile::tempdir().unwrap();
    let n = 23; // every 4-hop question of the subset
    let arms: [(&str, &str, &[&str]); 9] = [
        ("sleuth", "sleuth", &[]),
        ("sleuth [compact=1]", "sleuth", &["compact=1"]),
        ("sleuth [compact=2]", "sleuth", &["compact=2"]),
        ("sleuth [compact=5]", "sleuth", &["compact=5"]),
        (
            "sleuth [compact=2,compact_slack=4]",
            "sleuth",
            &["compact=2", "compact_slack=4"],
        ),
        (
            "sleuth [compact=2,compact_slack=8]",
            "sleuth",
            &["compact=2", "compact_slack=8"],
        ),
        ("sleuth [nudge=adaptive]", "sleuth", &["nudge=adaptive"]),
        (
            "sleuth [contradictions=true]",
            "sleuth",
            &["contradictions=true"],
        ),
        ("sleuth-eir", "sleuth-eir", &[]),
    ];
    println!("MuSiQue 4-hop, {n} questions, T = 20, the same 20 replies replayed; Claude Sonnet 4.5 prices");
    println!("| arm | input tok/q | output tok/q | calls/q | $/q | input vs sleuth | calls vs sleuth | $ vs sleuth | cached % | $/q cached | $ cached vs sleuth cached |");
    println!("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |");
    let mut base = None;
    for (arm, method, extra) in arms {
        let off = "anthropic:claude-sonnet-4-5?prompt_cache=off";
        // A fresh server (a cold cache) per run: arms must not read each other's writes.
        let server = || MockServer::spawn_with_cache(PromptCache::providers(), replay_answer);
        let s = priced_replay(dir.path(), &server(), off, method, extra, n);
        assert_eq!(s.cached, 0.0, "nothing cached without breakpoints");
        let c = priced_replay(
            dir.path(),
            &server(),
            "anthropic:claude-sonnet-4-5",
            method,
            extra,
            n,
        );
        let b = *base.get_or_insert((s.input, s.calls, s.usd, c.usd));
        println!(
            "| {arm} | {:.0} | {:.0} | {:.1} | {:.4} | {:.2}x | {:.2}x | {:.2}x | {:.1} | {:.4} | {:.2}x |",
            s.input,
            s.output,
            s.calls,
            s.usd,
            s.input / b.0,
            s.calls / b.1,
            s.usd / b.2,
            100.0 * c.cached / c.input,
            c.usd,
            c.usd / b.3
        );
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn sleuth_eir_answers_after_a_timeout_from_its_facts_source_sentences() {
    let dir = tempfile::tempdir().unwrap();
    // MuSiQue's first question: "What is the seat of the county where Van Hook Township
    // is located?" Three loop turns that never finish, then EIR's final call.
    let memory = "Confirmed Facts:\n\
        - [F1] Van Hook Township is in Mountrail County (source: Van Hook Township, Mountrail County, North Dakota)\n\
        - [F2] The Mountrail County Courthouse is in Stanley (source: Mountrail County Courthouse)\n\
        Active Hypotheses:\n- [H1] Stanley | confidence: medium | supports: F1, F2 | contradicts: -\n\
        Open Questions:\n- [Q1] seat? | action: Mountrail seat | priority: high\n\
        Action: search[Mountrail County]";
    let last = r#"{"answer": "Stanley", "evidence": [{"title": "Van Hook Township, Mountrail County, North Dakota", "sentence": 0}, {"title": "Mountrail County Courthouse", "sentence": 0}]}"#;
    let script = vec![
        memory.to_string(),
        memory.into(),
        memory.into(),
        last.into(),
    ];
    let model = replies(dir.path(), "r.json", &script);
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "sleuth-eir", &model, &out)
        .opt("--limit", 1)
        .set("turns=3")
        .ok();
    let records = records_under(&out);
    let r = &records[0];
    assert_eq!(r["answer"], "Stanley");
    assert_eq!(r["stop"], "finished", "a timeout still yields an answer");
    assert_eq!(r["calls"], 4, "T + 1 calls: at T = 20, 1.05x sleuth's");
    assert_eq!(r["calls_by_kind"]["final"], 1);
    let fc = &r["outputs"]["final_call"];
    assert_eq!(fc["forced_end"], true);
    assert_eq!(fc["evidence_records"], 2);
    assert_eq!(
        r["outputs"]["evidence"]["cited"].as_array().unwrap().len(),
        2
    );
    assert_eq!(r["support_f1"], 1.0, "both gold sentences cited");
    assert_eq!(r["em"], 1.0);
}

/// A loop reply in the rated-fact notation: the county seat, a contradicting seat from
/// turn 2 on, an answer at turn 3.
fn beyond_loop_reply(turn: usize) -> String {
    let mut s = String::from(
        "Confirmed Facts:\n- [F1] The county seat of Mountrail County is Stanley (source: Mountrail County) | confidence: high | triple: Mountrail County ; county seat ; Stanley\n",
    );
    if turn >= 2 {
        s.push_str("- [F2] The county seat of Mountrail County is Williston (source: Williston) | confidence: low | triple: Mountrail County ; county seat ; Williston\n");
    }
    s.push_str(
        "Active Hypotheses:\n- [H1] Stanley | confidence: high | supports: F1 | contradicts: -\n",
    );
    s.push_str("Open Questions:\n- [Q1] Where is the township? | action: township county | priority: high\n");
    s.push_str(if turn >= 3 {
        "Action: finish[Stanley]"
    } else {
        "Action: search[county seat]"
    });
    s
}

/// The local server's answer: EIR-setting calls as the EIR tests answer them, loop calls
/// by their turn.
fn beyond_reply(req: &ReceivedRequest) -> Reply {
    let last = req.last_message().unwrap_or("");
    if last.contains("You are collecting evidence")
        || last.contains("Answer the question from the evidence below")
    {
        return crate::eir::reply(req);
    }
    Reply::text(beyond_loop_reply(turn_of(req)))
}

/// Plain SLEUTH's arm label in the beyond recipe's report.
const BEYOND_BASELINE: &str = "sleuth [compact=none,contradictions=false,nudge=0.7]";

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn the_beyond_recipe_runs_end_to_end_against_a_local_server() {
    let server = MockServer::spawn(beyond_reply);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("beyond");
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/beyond.toml");
    let data = recipe_data();
    // A priced model name: the records carry dollars.
    let model = format!("openai-compat:{}#gpt-4o-mini", server.url());
    ok(&[
        "experiment",
        recipe.to_str().unwrap(),
        "--model",
        &model,
        "--data",
        &data[3],
        "--limit",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let records = records_under(&out);
    // 7 arms (react, sleuth, sleuth-eir, eir, and sleuth with each option) x 3 hop
    // splits x 2 questions.
    assert_eq!(records.len(), 42);
    let mut arms: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in &records {
        assert!(r["error"].is_null(), "{}", r["error"]);
        assert!(
            r["cost_usd"].as_f64().unwrap() > 0.0,
            "priced: {}",
            r["cost_usd"]
        );
        let s = &r["settings"];
        let option = ["nudge", "compact", "contradictions"]
            .iter()
            .find(|k| {
                s[**k].is_string() && !matches!(s[**k].as_str(), Some("0.7" | "none" | "false"))
            })
            .map(|k| format!(" [{k}={}]", s[*k].as_str().unwrap()))
            .unwrap_or_default();
        let arm = format!("{}{option}", r["method"].as_str().unwrap());
        arms.entry(arm).or_default().push(r);
    }
    let names: Vec<&str> = arms.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "eir",
            "react",
            "sleuth",
            "sleuth [compact=2]",
            "sleuth [contradictions=true]",
            "sleuth [nudge=adaptive]",
            "sleuth-eir"
        ]
    );
    for (arm, rs) in &arms {
        assert_eq!(rs.len(), 6, "{arm}");
    }
    // Each addition did its job on these replies.
    for r in &arms["sleuth [contradictions=true]"] {
        let c = &r["outputs"]["contradictions"][0];
        assert_eq!(
            (c["question"].as_str(), c["raised"].as_u64()),
            (Some("Q2"), Some(2))
        );
        assert_eq!(r["answer"], "Stanley");
    }
    for r in &arms["sleuth"] {
        assert!(r["outputs"].get("contradictions").is_none());
    }
    for r in &arms["sleuth-eir"] {
        assert_eq!(r["calls_by_kind"]["final"], 1);
    }
    for r in &arms["eir"] {
        assert_eq!(r["calls_by_kind"]["final"], 1);
    }
    // The report reads the whole tree: one summary row per arm, with dollars.
    let report = ok(&[
        "report",
        out.to_str().unwrap(),
        "--baseline",
        BEYOND_BASELINE,
    ]);
    for arm in [
        "eir",
        "react",
        "sleuth-eir",
        BEYOND_BASELINE,
        "sleuth [compact=2,contradictions=false,nudge=0.7]",
        "sleuth [compact=none,contradictions=true,nudge=0.7]",
        "sleuth [compact=none,contradictions=false,nudge=adaptive]",
    ] {
        assert!(report.contains(arm), "{arm} missing from:\n{report}");
    }
    // Each option is swept with the other two at their defaults: three sweeps of two
    // points, no point mixing two settings, on each MuSiQue split (a dataset of its own
    // in the report, SLEUTH Table 1).
    let sweeps = report.split("### Option sweeps").nth(1).unwrap();
    let rows: Vec<&str> = sweeps
        .split("###")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| musique"))
        .collect();
    let splits: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|l| l.split('|').nth(1).unwrap().trim())
        .collect();
    assert!(splits.iter().all(|d| d.starts_with("musique_")), "{sweeps}");
    for d in &splits {
        let here = rows
            .iter()
            .filter(|l| l.split('|').nth(1).unwrap().trim() == *d);
        assert_eq!(here.count(), 6, "{d}: {sweeps}");
    }
    let recipe_text = std::fs::read_to_string(&recipe).unwrap();
    assert!(
        recipe_text.contains(&format!("baseline = '{BEYOND_BASELINE}'")),
        "the recipe's report names the baseline arm it needs"
    );
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn compaction_slack_lets_a_prompt_cache_read_what_compaction_every_turn_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let server = || MockServer::spawn_with_cache(PromptCache::providers(), replay_answer);
    let model = "anthropic:claude-sonnet-4-5";
    let every_turn = priced_replay(dir.path(), &server(), model, "sleuth", &["compact=2"], 2);
    let slack = priced_replay(
        dir.path(),
        &server(),
        model,
        "sleuth",
        &["compact=2", "compact_slack=8"],
        2,
    );
    let share = |s: &Spend| s.cached / s.input;
    assert!(share(&every_turn) < 0.05, "{}", share(&every_turn));
    assert!(share(&slack) > 0.5, "{}", share(&slack));
    assert!(slack.usd < every_turn.usd * 1.1);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn a_contradiction_settled_by_the_newer_value_retracts_the_old_fact() {
    let dir = tempfile::tempdir().unwrap();
    let fact = |n: u32, seat: &str| {
        format!("- [F{n}] The county seat of Mountrail County is {seat} (source: Mountrail County) | confidence: high | triple: Mountrail County ; county seat ; {seat}\n")
    };
    let reply = |facts: &str, questions: &str, action: &str| {
        format!("Confirmed Facts:\n{facts}Active Hypotheses:\n- [H1] Stanley | confidence: medium | supports: F1 | contradicts: -\nOpen Questions:\n- [Q1] Where is the township? | action: township | priority: high\n{questions}Action: {action}")
    };
    let script = vec![
        reply(&fact(1, "Williston"), "", "search[Mountrail County]"),
        reply(
            &format!("{}{}", fact(1, "Williston"), fact(2, "Stanley")),
            "",
            "search[Mountrail County seat]",
        ),
        reply(
            &fact(2, "Stanley"),
            "- [Q2] which seat? (resolved)\n",
            "finish[Stanley]",
        ),
    ];
    let model = replies(dir.path(), "r.json", &script);
    let out = dir.path().join("run");
    Eval::new("musique", musique(), "sleuth", &model, &out)
        .opt("--limit", 1)
        .set("contradictions=true")
        .ok();
    let r = &records_under(&out)[0];
    let c = &r["outputs"]["contradictions"][0];
    assert_eq!(c["resolution"], "replaced");
    assert_eq!(
        (c["raised"].as_u64(), c["settled"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(c["claim"]["triple"]["value"], "Stanley");
    let last = &r["trace"][2]["state"];
    assert_eq!(
        last["retracted"][0]["statement"],
        "The county seat of Mountrail County is Williston"
    );
    let facts: Vec<&str> = last["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["statement"].as_str().unwrap())
        .collect();
    assert_eq!(facts, ["The county seat of Mountrail County is Stanley"]);
    assert_eq!(r["answer"], "Stanley");
}
