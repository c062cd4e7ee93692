//! The catalogue drives all three faces of the protocol — the prompt's tool list, what
//! the parser and `step` accept, and the output grammar — for the pool and the corpus.

use super::action::ends_section;
use super::*;
use crate::data::Paragraph;
use crate::env::{CorpusEnv, CorpusOptions, Environment, PoolEnv};
use crate::memory::{check_adherence, parse_memory, MemorySchema, Section};
use crate::methods::PromptSet;
use crate::retrieval::bm25::{Bm25Index, Bm25Params, CorpusDoc, IndexBuilder};
use minijinja::context;
use std::sync::Arc;

fn pool_env() -> PoolEnv {
    PoolEnv::new(
        vec![
            Paragraph::new(
                "Charles Mingus",
                vec!["Charles Mingus was born in Nogales, Arizona.".into()],
            ),
            Paragraph::new(
                "Nogales, Arizona",
                vec!["Nogales is a city in Santa Cruz County.".into()],
            ),
        ],
        4,
    )
}

fn corpus_env(dir: &std::path::Path) -> CorpusEnv {
    let mut b = IndexBuilder::new(dir, Bm25Params::default()).unwrap();
    b.add(&CorpusDoc::new(
        "500",
        "Charles Mingus",
        vec!["Charles Mingus was a jazz bassist.".into()],
    ))
    .unwrap();
    b.finish().unwrap();
    CorpusEnv::new(
        Arc::new(Bm25Index::open(dir).unwrap()),
        CorpusOptions {
            top_k: 7,
            max_reads: 3,
        },
    )
}

/// The system prompt's tool section, rendered by the real template.
fn system_prompt(tools: &ToolCatalogue) -> String {
    PromptSet::default()
        .render(
            "system.txt",
            context! { protocol => "", tools => tools.prompt(), structured => false,
            stopping => "", actions_per_turn => 1,
            action_form => super::action_line("<tool>", "<argument>") },
        )
        .unwrap()
}

/// Every grammar the agents attach, over `tools`.
fn grammars(tools: &ToolCatalogue) -> Vec<String> {
    vec![
        grammar::react(tools),
        grammar::lines_then_action(tools),
        grammar::working_memory(&MemorySchema::full(), tools),
        grammar::working_memory(&MemorySchema::of(&[Section::Notes]), tools),
        grammar::MemoryGrammar::new(&MemorySchema::full(), tools)
            .sources(&[])
            .build(),
    ]
}

#[test]
fn pool_catalogue_drives_prompt_parser_and_grammar() {
    let mut env = pool_env();
    assert_eq!(env.tools().names(), ["search", "lookup", "finish"]);

    // Prompt: the same text the pool has always shown.
    let list = "- search[<query>]: returns the 4 paragraphs that best match the query words.\n\
                - lookup[<title>]: returns the paragraph with exactly this title.\n\
                - finish[<answer>]: ends the investigation with your final answer.";
    assert_eq!(env.tools().prompt(), list);
    assert!(system_prompt(env.tools()).contains(&format!(":\n{list}\n")));

    // Parser and step: offered tools run, `read` is refused with the tool list.
    let actions =
        parse_actions("Thought: x\nAction: read[Charles Mingus]\nAction: lookup[charles mingus]");
    assert_eq!(actions[0], Action::Read("Charles Mingus".into()));
    let refused = env.step(&actions[0]);
    assert_eq!(
        refused.text,
        "read[Charles Mingus] was not run: read is not available here. \
         The tools are search[<query>], lookup[<title>] and finish[<answer>]."
    );
    assert!(refused.shown.is_empty() && env.retrieved().is_empty());
    assert!(env.step(&actions[1]).text.starts_with("[Charles Mingus]"));
    assert_eq!(env.retrieved(), ["Charles Mingus"]);

    // Grammar: exactly the catalogue's tools, in an action line the parser reads.
    for g in grammars(env.tools()) {
        assert!(
            g.contains("action ::= \"Action: \" tool \"[\" arg \"]\"\ntool ::= \"search\" | \"lookup\" | \"finish\"\n"),
            "{g}"
        );
    }
}

#[test]
fn corpus_catalogue_drives_prompt_parser_and_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = corpus_env(dir.path());
    assert_eq!(env.tools().names(), ["search", "read", "finish"]);

    let list = "- search[<query>]: searches the whole collection and lists up to 7 paragraph titles with their ids (no text).\n\
                - read[<id>]: shows the paragraph with this id, one numbered sentence per line. Only ids listed by your searches can be read; you have 3 read attempts, and a failed or repeated read uses one.\n\
                - finish[<answer>]: ends the investigation with your final answer.";
    assert_eq!(env.tools().prompt(), list);
    assert_eq!(
        env.tools(),
        &CorpusEnv::catalogue(&CorpusOptions {
            top_k: 7,
            max_reads: 3
        })
    );
    assert!(system_prompt(env.tools()).contains(&format!(":\n{list}\n")));

    let actions = parse_actions(
        "**Action:** lookup(\"Charles Mingus\")\nAction: search[jazz bassist]\nAction: read[500]",
    );
    let refused = env.step(&actions[0]);
    assert_eq!(
        refused.text,
        "lookup[Charles Mingus] was not run: lookup is not available here. \
         The tools are search[<query>], read[<id>] and finish[<answer>]."
    );
    assert_eq!(env.reads_used(), 0, "a refused tool spends nothing");
    assert!(env
        .step(&actions[1])
        .text
        .contains("[id 500] Charles Mingus"));
    assert!(env
        .step(&actions[2])
        .text
        .contains("(0) Charles Mingus was a jazz bassist."));
    assert_eq!(env.retrieved(), ["500"]);

    for g in grammars(env.tools()) {
        assert!(
            g.contains("tool ::= \"search\" | \"read\" | \"finish\"\n"),
            "{g}"
        );
        assert!(!g.contains("lookup"), "{g}");
    }
}

#[test]
fn canonical_lines_parse_back_and_end_sections() {
    for tools in [
        PoolEnv::catalogue(5),
        CorpusEnv::catalogue(&CorpusOptions::default()),
    ] {
        for tool in tools.tools() {
            let line = action_line(tool.name(), "Gold Rush [1848]");
            assert_eq!(
                parse_actions(&line),
                [tool.kind.action("Gold Rush [1848]".into())],
                "{line}"
            );
            assert!(ends_section(&line), "{line}");
            assert!(tools.refusal(&tool.kind.action(String::new())).is_none());
        }
    }
    for kind in ToolKind::ALL {
        assert_eq!(ToolKind::from_name(&kind.name().to_uppercase()), Some(kind));
        assert_eq!(kind.action("x".into()).kind(), kind);
    }
    assert_eq!(ToolKind::from_name("answer"), None);
}

#[test]
fn only_protocol_lines_end_a_section() {
    for line in [
        "Action: search[x]",
        "**Action 2:** finish[x]",
        "Thought: next",
        "Final Answer: x",
        "Action search[x]",
        "- action lookup(\"x\")",
        "Action: answer[x]",
    ] {
        assert!(ends_section(line), "{line}");
    }
    for line in [
        "- [F1] The action took place in 1848 (source: Gold Rush)",
        "Actions speak louder",
        "I will search[x] next",
    ] {
        assert!(!ends_section(line), "{line}");
    }
}

#[test]
fn an_action_line_without_a_colon_is_not_memory() {
    let schema = MemorySchema::of(&[Section::Facts, Section::Notes]);
    let text = "Confirmed Facts:\n- [F1] Mingus was born in Nogales (source: Charles Mingus)\n\
                Notes:\n- find the county\nAction search[Nogales county]";
    assert!(check_adherence(text, &schema));
    let memory = parse_memory(text, &schema);
    assert_eq!(memory.notes.as_deref(), Some("- find the county"));
    assert_eq!(
        parse_actions(text),
        [Action::Search("Nogales county".into())]
    );
}

#[test]
#[should_panic(expected = "must offer finish")]
fn a_catalogue_without_finish_is_a_bug() {
    ToolCatalogue::new(vec![Tool::new(ToolKind::Search, "query", "searches.")]);
}
