//! GBNF grammars (llama.cpp's grammar notation) for the text action protocol.
//!
//! Small local models drift off the action format within a turn or two; a grammar makes
//! the sampler emit only text the agents' parsers accept. The grammars live here, in the
//! core crate and as plain strings, so the agents can attach them to requests as an
//! [`OutputConstraint::Grammar`](super::OutputConstraint) without depending on llama.cpp;
//! a provider that cannot honour a grammar ignores it and the agents parse as usual.
//!
//! Every grammar ends in exactly one `Action: tool[argument]` line, so a constrained
//! turn is always one complete step of the protocol. The working-memory grammar follows
//! the notation of [`crate::memory`]: `- [F1] statement (source: title)`,
//! `- [H1] text | confidence: high | supports: F1, F2 | contradicts: -`,
//! `- [Q1] text | action: search terms | priority: low`.

use crate::memory::{MemorySchema, Section};

/// The tools of the ReAct protocol in the distractor setting.
pub const REACT_TOOLS: &[&str] = &["search", "lookup", "finish"];

/// The most lines a grammar allows in one memory section: enough for any real episode,
/// and a bound on the repetition loops tiny models fall into.
const MAX_SECTION_LINES: usize = 12;
/// Characters in a free-text line (a thought, a note).
const MAX_LINE: usize = 300;
/// Characters in an action argument, a memory statement or field, a source title.
const MAX_ARG: usize = 200;

/// Rules shared by the action-protocol grammars: one line of free text, an action line
/// over `tools`, and a small item number. Lengths are bounded because a tiny model
/// under a grammar that allows an endless line will sometimes write one.
fn action_rules(tools: &[&str]) -> String {
    let alternatives: Vec<String> = tools.iter().map(|t| format!("\"{t}\"")).collect();
    format!(
        "action ::= \"Action: \" tool \"[\" arg \"]\"\n\
         tool ::= {}\n\
         arg ::= [^\\]\\n]{{1,{MAX_ARG}}}\n\
         line ::= [^\\n]{{1,{MAX_LINE}}}\n\
         num ::= [1-9] [0-9]?\n",
        alternatives.join(" | ")
    )
}

/// Plain ReAct: `Thought: <text>` on one line, then `Action: tool[argument]`.
///
/// `tools` names the allowed tools, e.g. [`REACT_TOOLS`]; it must not be empty.
pub fn react(tools: &[&str]) -> String {
    assert!(!tools.is_empty(), "a ReAct grammar needs at least one tool");
    format!(
        "root ::= \"Thought: \" line \"\\n\" action\n{}",
        action_rules(tools)
    )
}

/// Free reasoning lines in any format (Self-Ask's sub-questions, IRCoT's alternating
/// steps), then `Action: tool[argument]`.
pub fn lines_then_action(tools: &[&str]) -> String {
    assert!(
        !tools.is_empty(),
        "an action grammar needs at least one tool"
    );
    format!(
        "root ::= (line \"\\n\"){{1,{MAX_SECTION_LINES}}} action\n{}",
        action_rules(tools)
    )
}

/// SLEUTH's turn: the memory sections of `schema` in order, each a header line and up to
/// a dozen item lines, then `Action: tool[argument]`.
///
/// With an unstructured schema (no sections, e.g. ReAct) this is a bare action line.
pub fn working_memory(schema: &MemorySchema, tools: &[&str]) -> String {
    assert!(
        !tools.is_empty(),
        "a memory grammar needs at least one tool"
    );
    let mut root = Vec::new();
    let mut rules = String::new();
    for section in &schema.sections {
        let (name, item) = match section {
            Section::Facts => (
                "facts",
                "fact ::= \"- [F\" num \"] \" statement \" (source: \" title \")\\n\"\n\
                 statement ::= [^\\n()\\[\\]|]{1,200}\n\
                 title ::= title-part (\" (\" title-part \")\")?\n\
                 title-part ::= [^\\n()\\[\\]]{1,100}\n",
            ),
            Section::Hypotheses => (
                "hypotheses",
                "hypothesis ::= \"- [H\" num \"] \" field \" | confidence: \" level \
                 \" | supports: \" refs \" | contradicts: \" refs \"\\n\"\n\
                 refs ::= \"-\" | fact-ref (\", \" fact-ref)*\n\
                 fact-ref ::= \"F\" num\n",
            ),
            Section::Questions => (
                "questions",
                "question ::= \"- [Q\" num \"] \" field \" | action: \" field \
                 \" | priority: \" level \"\\n\"\n",
            ),
            Section::Notes => ("notes", "note ::= \"- \" line \"\\n\"\n"),
        };
        let item_rule = item.split_whitespace().next().unwrap_or_default();
        root.push(name.to_string());
        rules.push_str(&format!(
            "{name} ::= \"{}\\n\" {item_rule}{{0,{MAX_SECTION_LINES}}}\n{item}",
            section.header()
        ));
    }
    if schema.has(Section::Hypotheses) || schema.has(Section::Questions) {
        rules.push_str(&format!(
            "field ::= [^|\\n\\[\\]]{{1,{MAX_ARG}}}\nlevel ::= \"high\" | \"medium\" | \"low\"\n"
        ));
    }
    root.push("action".into());
    format!(
        "root ::= {}\n{rules}{}",
        root.join(" "),
        action_rules(tools)
    )
}

/// Any JSON object (EIR's JSON actions): objects, arrays, strings with escapes, numbers,
/// literals; whitespace between tokens is bounded so a model cannot pad forever.
pub fn json_object() -> String {
    r#"root ::= object
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( member ("," ws member)* )? "}" ws
member ::= string ":" ws value
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" char* "\"" ws
char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
number ::= "-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? ws
ws ::= [ \t\n]{0,8}
"#
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The rule names a grammar defines and the ones it references outside quotes and
    /// character classes: a structural check that needs no llama.cpp (sleuth-local's
    /// tests load every grammar into llama.cpp and sample with it).
    fn defined_and_used(grammar: &str) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut defined = BTreeSet::new();
        let mut used = BTreeSet::new();
        for line in grammar.lines().filter(|l| !l.trim().is_empty()) {
            let (head, body) = line.split_once("::=").expect("every line is a rule");
            defined.insert(head.trim().to_string());
            let mut chars = body.chars().peekable();
            let mut word = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' | '[' => {
                        let close = if c == '"' { '"' } else { ']' };
                        while let Some(d) = chars.next() {
                            if d == '\\' {
                                chars.next();
                            } else if d == close {
                                break;
                            }
                        }
                    }
                    '{' => {
                        for d in chars.by_ref() {
                            if d == '}' {
                                break;
                            }
                        }
                    }
                    c if c.is_ascii_alphanumeric() || c == '-' => word.push(c),
                    _ => {
                        if !word.is_empty() {
                            used.insert(std::mem::take(&mut word));
                        }
                    }
                }
            }
            if !word.is_empty() {
                used.insert(word);
            }
        }
        (defined, used)
    }

    fn assert_closed(grammar: &str) {
        let (defined, used) = defined_and_used(grammar);
        assert!(defined.contains("root"), "no root rule in:\n{grammar}");
        let missing: Vec<_> = used.difference(&defined).collect();
        assert!(
            missing.is_empty(),
            "undefined rules {missing:?} in:\n{grammar}"
        );
    }

    #[test]
    fn every_grammar_references_only_defined_rules() {
        assert_closed(&react(REACT_TOOLS));
        assert_closed(&working_memory(&MemorySchema::full(), REACT_TOOLS));
        assert_closed(&working_memory(&MemorySchema::none(), REACT_TOOLS));
        assert_closed(&working_memory(
            &MemorySchema::of(&[Section::Facts, Section::Notes]),
            &["search", "read", "finish"],
        ));
        assert_closed(&working_memory(
            &MemorySchema::of(&[Section::Facts, Section::Questions]),
            REACT_TOOLS,
        ));
        assert_closed(&json_object());
    }

    #[test]
    fn tools_become_alternatives() {
        let g = react(&["search", "read", "finish"]);
        assert!(
            g.contains("tool ::= \"search\" | \"read\" | \"finish\""),
            "{g}"
        );
        assert!(
            g.starts_with("root ::= \"Thought: \" line \"\\n\" action"),
            "{g}"
        );
    }

    #[test]
    fn memory_sections_follow_the_schema_order_and_headers() {
        let g = working_memory(&MemorySchema::full(), REACT_TOOLS);
        assert!(
            g.starts_with("root ::= facts hypotheses questions action\n"),
            "{g}"
        );
        assert!(
            g.contains("facts ::= \"Confirmed Facts:\\n\" fact{0,12}"),
            "{g}"
        );
        assert!(g.contains("\"Active Hypotheses:\\n\""), "{g}");
        assert!(g.contains("\"Open Questions:\\n\""), "{g}");
        let bare = working_memory(&MemorySchema::none(), REACT_TOOLS);
        assert!(bare.starts_with("root ::= action\n"), "{bare}");
    }
}
