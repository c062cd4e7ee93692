//! The core crate's protocol grammars (`sleuth::protocol::grammar`), judged by llama.cpp
//! itself: they load, they accept well-formed turns and reject malformed ones, and
//! sampling under them yields text the agents' parsers accept.

mod common;

use common::{check_grammar, complete, load, opts};
use regex::Regex;
use sleuth::env::{Action, CorpusEnv, CorpusOptions, PoolEnv, ToolCatalogue};
use sleuth::llm::{ChatRequest, LlmError, Message, OutputConstraint};
use sleuth::memory::{MemorySchema, Section};
use sleuth::protocol::grammar;

const MEMORY_TURN: &str = "Confirmed Facts:
- [F1] The bridge opened in 1881 (source: Velmora Bridge)
- [F2] Ada Kestrel was an engineer (source: Ada Kestrel (engineer))
Active Hypotheses:
- [H1] Kestrel designed the bridge | confidence: medium | supports: F1, F2 | contradicts: -
Open Questions:
- [Q1] Who designed the bridge? | action: Velmora bridge designer | priority: high
Action: search[Velmora bridge designer]";

/// The pool setting's tools (search, lookup, finish).
fn pool_tools() -> ToolCatalogue {
    PoolEnv::catalogue(5)
}

/// The corpus setting's tools (search, read, finish).
fn corpus_tools() -> ToolCatalogue {
    CorpusEnv::catalogue(&CorpusOptions::default())
}

#[test]
fn every_protocol_grammar_loads_and_judges_samples_correctly() {
    let Some(model) = load(opts()) else { return };
    let react = grammar::react(&pool_tools());
    let memory = grammar::working_memory(&MemorySchema::full(), &pool_tools());
    let notes = grammar::working_memory(
        &MemorySchema::of(&[Section::Facts, Section::Notes]),
        &corpus_tools(),
    );
    let json = grammar::json_object();
    // What `grammar=true` sends to servers (SLEUTH §3.4): free reasoning, then one to
    // `actions_per_turn` action lines.
    let open = grammar::open_turn(&pool_tools(), 3);
    for g in [&react, &memory, &notes, &json, &open] {
        assert!(check_grammar(&model, g, None), "llama.cpp rejects:\n{g}");
    }
    let cases: &[(&str, &str, bool)] = &[
        (
            &react,
            "Thought: I need the birthplace.\nAction: search[Ada Kestrel]",
            true,
        ),
        (&react, "Thought: done\nAction: finish[Paris]", true),
        (&react, "Thought: x\nAction: read[Paris]", false),
        (&react, "Action: search[Ada Kestrel]", false),
        (&react, "Thought: x\nAction: search[Ada", false),
        (&memory, MEMORY_TURN, true),
        (
            &memory,
            "Confirmed Facts:\nActive Hypotheses:\nOpen Questions:\nAction: finish[yes]",
            true,
        ),
        (
            &memory,
            &MEMORY_TURN.replace("confidence: medium", "confidence: sure"),
            false,
        ),
        (
            &memory,
            &MEMORY_TURN.replace(" (source: Velmora Bridge)", ""),
            false,
        ),
        (
            &memory,
            &MEMORY_TURN.replace("Open Questions:\n", ""),
            false,
        ),
        (
            &notes,
            "Confirmed Facts:\n- [F1] a (source: b)\nNotes:\n- check dates\nAction: read[B]",
            true,
        ),
        (
            &json,
            r#"{"action": "search", "args": {"query": "Ada \"K\"", "k": [1, 2.5e3, true, null]}}"#,
            true,
        ),
        (&json, r#"{"action": search}"#, false),
        (&open, MEMORY_TURN, true),
        (
            &open,
            "Let me reason freely first.\n\nAction: search[a]\nAction: lookup[B]",
            true,
        ),
        (&open, "Action: finish[Paris]", true),
        (&open, "No action at all", false),
        (&open, "Action: search[a]\nand then some text", false),
        (&json, r#"["not", "an", "object"]"#, false),
    ];
    for (g, sample, expected) in cases {
        assert_eq!(
            check_grammar(&model, g, Some(sample)),
            *expected,
            "sample {sample:?} under grammar:\n{g}"
        );
    }
}

fn constrained(constraint: String, user: &str) -> ChatRequest {
    ChatRequest::new(vec![
        Message::system(
            "You answer questions with a short thought and one action: search[query], \
             lookup[term] or finish[answer].",
        ),
        Message::user(user),
    ])
    .max_tokens(160)
    .constraint(OutputConstraint::Grammar(constraint))
}

#[test]
fn sampling_under_the_react_grammar_yields_one_parseable_action() {
    let Some(model) = load(opts()) else { return };
    let request = constrained(
        grammar::react(&pool_tools()),
        "Question: In which country was the director of the film Jaws born?",
    );
    let r = complete(&model, &request).unwrap();
    let shape =
        Regex::new(r"^Thought: [^\n]+\nAction: (search|lookup|finish)\[[^\]\n]+\]$").unwrap();
    assert!(shape.is_match(&r.text), "off-protocol output: {:?}", r.text);
    assert_eq!(Action::parse_all(&r.text).len(), 1, "{:?}", r.text);
}

#[test]
fn sampling_under_the_memory_grammar_yields_the_notation() {
    let Some(model) = load(opts()) else { return };
    let request = constrained(
        grammar::working_memory(&MemorySchema::full(), &pool_tools()),
        "Question: Which river flows through the birthplace of Ada Kestrel?\n\
         Observation: Ada Kestrel was born in Velmora, a harbour town on the Corran.\n\
         Update your memory (Confirmed Facts, Active Hypotheses, Open Questions), then act.",
    )
    .max_tokens(250);
    let r = complete(&model, &request).unwrap();
    let line = Regex::new(concat!(
        r"^(Confirmed Facts:|Active Hypotheses:|Open Questions:",
        r"|- \[F\d+\] .+ \(source: .+\)",
        r"|- \[H\d+\] [^|]+ \| confidence: (high|medium|low) \| supports: (-|F\d+(, F\d+)*) \| contradicts: (-|F\d+(, F\d+)*)",
        r"|- \[Q\d+\] [^|]+ \| action: [^|]+ \| priority: (high|medium|low)",
        r"|Action: (search|lookup|finish)\[[^\]]+\])$"
    ))
    .unwrap();
    if r.finish_reason == sleuth::llm::FinishReason::Stop {
        for l in r.text.lines() {
            assert!(line.is_match(l), "line {l:?} of {:?}", r.text);
        }
        assert_eq!(Action::parse_all(&r.text).len(), 1, "{:?}", r.text);
    } else {
        // A long memory can hit max_tokens; every complete line must still conform.
        let complete_lines = r.text.lines().count().saturating_sub(1);
        for l in r.text.lines().take(complete_lines) {
            assert!(line.is_match(l), "line {l:?} of {:?}", r.text);
        }
    }
    assert!(r.text.starts_with("Confirmed Facts:\n"), "{:?}", r.text);
}

#[test]
fn sampling_under_the_json_grammar_yields_a_json_object() {
    let Some(model) = load(opts()) else { return };
    let request = constrained(
        grammar::json_object(),
        "Reply with a JSON object with keys \"action\" and \"query\" to search for the \
         director of Jaws.",
    );
    let r = complete(&model, &request).unwrap();
    let value: serde_json::Value =
        serde_json::from_str(&r.text).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", r.text));
    assert!(value.is_object(), "{value}");
}

#[test]
fn constraints_are_ignored_when_grammar_is_off_and_checked_when_on() {
    let Some(off) = load(opts().grammar(false)) else {
        return;
    };
    let broken = constrained("root ::= undefined-rule".into(), "Say hi.").max_tokens(4);
    assert!(
        complete(&off, &broken).is_ok(),
        "grammar off: the constraint is not used"
    );
    let on = load(opts()).unwrap();
    match complete(&on, &broken) {
        Err(LlmError::Config(m)) => assert!(m.contains("grammar"), "{m}"),
        other => panic!("expected a grammar error, got {other:?}"),
    }
    // A JSON schema constraint becomes a grammar too.
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"]
    });
    let request = ChatRequest::new(vec![Message::user("What is the capital of France?")])
        .max_tokens(40)
        .constraint(OutputConstraint::JsonSchema(schema));
    let r = complete(&on, &request).unwrap();
    let value: serde_json::Value = serde_json::from_str(&r.text).unwrap();
    assert!(value["answer"].is_string(), "{value}");
}

#[test]
fn the_per_turn_memory_grammar_admits_only_seen_sources_in_llama_cpp() {
    let Some(model) = load(opts()) else { return };
    let schema = MemorySchema::full();
    let seen = vec![
        "Velmora Bridge".to_string(),
        "Ada Kestrel (engineer)".to_string(),
    ];
    let turn = grammar::MemoryGrammar::new(&schema, &pool_tools())
        .sources(&seen)
        .max_facts(3)
        .max_entries(3)
        .build();
    let first = grammar::MemoryGrammar::new(&schema, &pool_tools())
        .sources(&[])
        .build();
    let cases: &[(&str, &str, bool)] = &[
        (&turn, MEMORY_TURN, true),
        (
            &turn,
            &MEMORY_TURN.replace("(source: Velmora Bridge)", "(source: Some Other Page)"),
            false,
        ),
        (
            &turn,
            &MEMORY_TURN.replace("supports: F1, F2", "supports: F7"),
            false,
        ),
        (
            &turn,
            &MEMORY_TURN.replace("Velmora bridge designer]", "<query>]"),
            false,
        ),
        (
            &first,
            "Confirmed Facts:\nActive Hypotheses:\nOpen Questions:\n\
             - [Q1] Who designed it? | action: Velmora Bridge | priority: high\n\
             Action: search[Velmora Bridge]",
            true,
        ),
        (&first, MEMORY_TURN, false),
    ];
    for (g, sample, expected) in cases {
        assert_eq!(
            check_grammar(&model, g, Some(sample)),
            *expected,
            "sample {sample:?} under grammar:\n{g}"
        );
    }
}

#[test]
fn every_eir_schema_becomes_a_grammar_llama_cpp_loads() {
    use sleuth::methods::eir::schema;
    let Some(model) = load(opts()) else { return };
    let schemas = [
        ("eir_action", schema::eir_action(false, false)),
        ("eir_action+repair", schema::eir_action(true, false)),
        ("eir_action+search", schema::eir_action(false, true)),
        ("repair_conclusions", schema::repair_conclusions()),
        ("refresh_requirements", schema::refresh_requirements()),
        ("direct_action", schema::direct_action(false)),
        ("direct_action+search", schema::direct_action(true)),
        ("final_answer", schema::final_answer()),
        ("more_reads", schema::more_reads()),
        ("decomposition", schema::decomposition()),
        ("verdict", schema::verdict()),
    ];
    for (name, s) in schemas {
        let g = llama_cpp_2::json_schema_to_grammar(&s.to_string())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            check_grammar(&model, &g, None),
            "{name}: llama.cpp rejects:\n{g}"
        );
    }
    let answer = llama_cpp_2::json_schema_to_grammar(&schema::final_answer().to_string()).unwrap();
    let ok = r#"{"answer": "Tarvik", "evidence": [{"title": "Mirela Ondrasko", "sentence": 1}]}"#;
    assert!(
        check_grammar(&model, &answer, Some(ok)),
        "{ok} under:\n{answer}"
    );
    let long = format!(r#"{{"answer": "{}", "evidence": []}}"#, "x".repeat(500));
    assert!(
        !check_grammar(&model, &answer, Some(&long)),
        "an answer longer than its bound is refused"
    );
}
