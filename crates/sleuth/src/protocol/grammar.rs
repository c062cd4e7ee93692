//! GBNF grammars (llama.cpp's grammar notation) for the text action protocol.
//!
//! Small local models drift off the action format within a turn or two; a grammar makes
//! the sampler emit only text the agents' parsers accept. The grammars live here, beside
//! the protocol they constrain, as plain strings: the agents attach them to requests as
//! an [`OutputConstraint::Grammar`](crate::llm::OutputConstraint), so the provider layer
//! takes grammar text and never knows the protocol, and nothing depends on llama.cpp; a
//! provider that cannot honour a grammar ignores it and the agents parse as usual.
//!
//! Two families. The tight grammars (ReAct's, the reasoning lines', the working
//! memory's) end in exactly one `Action: tool[argument]` line and bound every section;
//! they are the embedded 135M model's default only (`grammar=auto`), a deviation made
//! for its size, and no server is sent one. [`open_turn`] is what `grammar=true` sends:
//! it keeps the method as prompted (SLEUTH §3.4: prompting alone). Both write their
//! action lines over the tools of the environment's [`ToolCatalogue`] with the labels
//! of [`super::action`], so constrained output is always what the protocol's parser
//! accepts and the environment offers. The working-memory grammar follows
//! the notation of [`super::notation`]: `- [F1] statement (source: title)`,
//! `- [H1] text | confidence: high | supports: F1, F2 | contradicts: -`,
//! `- [Q1] text | action: search terms | priority: low`.

use super::action::{ACTION, CLOSE, OPEN, THOUGHT};
use super::notation::{MemorySchema, Section};
use super::tools::ToolCatalogue;

/// The most lines a grammar allows in one memory section: enough for any real episode,
/// and a bound on the repetition loops tiny models fall into.
const MAX_SECTION_LINES: usize = 12;
/// Characters in a free-text line (a thought, a note).
const MAX_LINE: usize = 300;
/// Characters in an action argument.
const MAX_ARG: usize = 200;
/// Characters in a fact's statement: a sentence or two of the source.
const MAX_STATEMENT: usize = 200;
/// Characters in an open question.
const MAX_FIELD: usize = 100;
/// Characters in the search terms of an open question.
const MAX_TERMS: usize = 60;
/// Characters in a hypothesis: a candidate answer, which is a short span.
const MAX_CANDIDATE: usize = 80;

/// Rules shared by the action-protocol grammars: one line of free text, an action line
/// over the catalogue's tools, and a small item number. Lengths are bounded because a
/// tiny model under a grammar that allows an endless line will sometimes write one.
fn action_rules(tools: &ToolCatalogue) -> String {
    let alternatives: Vec<String> = tools.names().iter().map(|t| gbnf_literal(t)).collect();
    format!(
        "action ::= {} tool {} arg {}\n\
         tool ::= {}\n\
         arg ::= [^\\{CLOSE}\\n<>]{{1,{MAX_ARG}}}\n\
         line ::= [^\\n<>]{{1,{MAX_LINE}}}\n\
         num ::= [1-9] [0-9]?\n",
        gbnf_literal(&format!("{ACTION}: ")),
        gbnf_literal(&OPEN.to_string()),
        gbnf_literal(&CLOSE.to_string()),
        alternatives.join(" | ")
    )
}

/// The grammar `grammar=true` sends to servers (SLEUTH §3.4: the method is prompting
/// alone, so a grammar may only keep the output parseable, never change the method):
/// any lines of free reasoning, memory included (no section forced, no length or entry
/// cap the prompt does not state), ending in one to `actions` action lines over the
/// catalogue's tools (App. L's several calls per turn). A free line may itself be an
/// action line, so the grammar bounds nothing the loop's cap does not already bound.
pub fn open_turn(tools: &ToolCatalogue, actions: usize) -> String {
    let alternatives: Vec<String> = tools.names().iter().map(|t| gbnf_literal(t)).collect();
    format!(
        "root ::= free* action (\"\\n\" action){{0,{more}}}\n\
         free ::= [^\\n]* \"\\n\"\n\
         action ::= {} tool {} open-arg {}\n\
         tool ::= {}\n\
         open-arg ::= [^\\{CLOSE}\\n]+\n",
        gbnf_literal(&format!("{ACTION}: ")),
        gbnf_literal(&OPEN.to_string()),
        gbnf_literal(&CLOSE.to_string()),
        alternatives.join(" | "),
        more = actions.max(1) - 1,
    )
}

/// Plain ReAct: `Thought: <text>` on one line, then `Action: tool[argument]`.
pub fn react(tools: &ToolCatalogue) -> String {
    format!(
        "root ::= {} line \"\\n\" action\n{}",
        gbnf_literal(&format!("{THOUGHT}: ")),
        action_rules(tools)
    )
}

/// Free reasoning lines in any format (Self-Ask's sub-questions, IRCoT's alternating
/// steps), then `Action: tool[argument]`.
pub fn lines_then_action(tools: &ToolCatalogue) -> String {
    format!(
        "root ::= (line \"\\n\"){{1,{MAX_SECTION_LINES}}} action\n{}",
        action_rules(tools)
    )
}

/// SLEUTH's turn: the memory sections of `schema` in order, each a header line and up to
/// a dozen item lines, then `Action: tool[argument]`.
///
/// With an unstructured schema (no sections, e.g. ReAct) this is a bare action line.
/// [`MemoryGrammar`] builds the tighter per-turn form the agent loop uses.
pub fn working_memory(schema: &MemorySchema, tools: &ToolCatalogue) -> String {
    MemoryGrammar::new(schema, tools).build()
}

/// The working-memory grammar of one turn, shaped by what the episode has seen so far.
///
/// Two limits matter for a tiny model. A fact may cite only a paragraph the agent has
/// actually been shown ([`sources`](Self::sources)): before the first observation the
/// Confirmed Facts section must stay empty, which stops the model from "confirming" what
/// it merely believes. And the whole turn must fit the token budget, so the number of
/// fact lines grows with the facts already confirmed ([`max_facts`](Self::max_facts))
/// instead of allowing a dozen rambling lines from the start.
#[derive(Debug, Clone)]
pub struct MemoryGrammar<'a> {
    schema: &'a MemorySchema,
    tools: &'a ToolCatalogue,
    sources: Option<&'a [String]>,
    max_facts: usize,
    max_entries: usize,
    fact_fields: bool,
}

impl<'a> MemoryGrammar<'a> {
    /// Any source title, up to a dozen lines per section.
    pub fn new(schema: &'a MemorySchema, tools: &'a ToolCatalogue) -> Self {
        MemoryGrammar {
            schema,
            tools,
            sources: None,
            max_facts: MAX_SECTION_LINES,
            max_entries: MAX_SECTION_LINES,
            fact_fields: false,
        }
    }

    /// Fact lines end in `| confidence: <level> | triple: <s> ; <r> ; <v>` (contradiction
    /// detection, ours).
    pub fn fact_fields(mut self, on: bool) -> Self {
        self.fact_fields = on;
        self
    }

    /// Facts may cite only these titles (none at all when the slice is empty).
    pub fn sources(mut self, titles: &'a [String]) -> Self {
        self.sources = Some(titles);
        self
    }

    /// At most `n` fact lines (capped at a dozen).
    pub fn max_facts(mut self, n: usize) -> Self {
        self.max_facts = n.min(MAX_SECTION_LINES);
        self
    }

    /// At most `n` hypothesis, question or note lines (capped at a dozen).
    pub fn max_entries(mut self, n: usize) -> Self {
        self.max_entries = n.clamp(1, MAX_SECTION_LINES);
        self
    }

    /// The GBNF text.
    pub fn build(&self) -> String {
        let mut root = Vec::new();
        let mut rules = String::new();
        for section in &self.schema.sections {
            let (name, item, bound) = match section {
                Section::Facts => ("facts", self.fact_rules(), self.fact_bound()),
                Section::Hypotheses => (
                    "hypotheses",
                    self.hypothesis_rules(),
                    if self.fact_bound() == 0 {
                        0
                    } else {
                        self.max_entries
                    },
                ),
                Section::Questions => (
                    "questions",
                    "question ::= \"- [Q\" num \"] \" field \" | action: \" terms \
                     \" | priority: \" level \"\\n\"\n"
                        .to_string(),
                    self.max_entries,
                ),
                Section::Notes => (
                    "notes",
                    "note ::= \"- \" line \"\\n\"\n".to_string(),
                    self.max_entries,
                ),
            };
            let item_rule = item
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            root.push(name.to_string());
            let items = if bound == 0 {
                String::new()
            } else {
                format!(" {item_rule}{{0,{bound}}}")
            };
            rules.push_str(&format!("{name} ::= \"{}\\n\"{items}\n", section.header()));
            if bound > 0 {
                rules.push_str(&item);
            }
        }
        if self.schema.has(Section::Hypotheses) || self.schema.has(Section::Questions) {
            rules.push_str(&format!(
                "field ::= [^|\\n\\[\\]<>]{{1,{MAX_FIELD}}}\n\
                 candidate ::= [^|\\n\\[\\]<>]{{1,{MAX_CANDIDATE}}}\n\
                 terms ::= [^|\\n\\[\\]<>]{{1,{MAX_TERMS}}}\n"
            ));
        }
        let facts_rated = self.fact_fields && self.fact_bound() > 0;
        if self.schema.has(Section::Hypotheses)
            || self.schema.has(Section::Questions)
            || facts_rated
        {
            rules.push_str("level ::= \"high\" | \"medium\" | \"low\"\n");
        }
        root.push("action".into());
        format!(
            "root ::= {}\n{rules}{}",
            root.join(" "),
            action_rules(self.tools)
        )
    }

    /// How many fact lines the grammar allows: none while no paragraph has been seen.
    fn fact_bound(&self) -> usize {
        match self.sources {
            Some([]) => 0,
            _ => self.max_facts,
        }
    }

    /// A hypothesis is a candidate answer that cites at least one fact the turn can hold
    /// (in the tight form; with no fact limit, any fact number and `-` are allowed).
    fn hypothesis_rules(&self) -> String {
        let head = "hypothesis ::= \"- [H\" num \"] \" candidate \" | confidence: \" level \
                    \" | supports: \" ";
        if self.sources.is_none() {
            return format!(
                "{head}refs \" | contradicts: \" refs \"\\n\"\n\
                 refs ::= \"-\" | fact-ref (\", \" fact-ref)*\n\
                 fact-ref ::= \"F\" num\n"
            );
        }
        let ids: Vec<String> = (1..=self.fact_bound().max(1))
            .rev()
            .map(|n| format!("\"F{n}\""))
            .collect();
        format!(
            "{head}fact-refs \" | contradicts: \" (\"-\" | fact-refs) \"\\n\"\n\
             fact-refs ::= fact-ref (\", \" fact-ref){{0,5}}\n\
             fact-ref ::= {}\n",
            ids.join(" | ")
        )
    }

    fn fact_rules(&self) -> String {
        let title = match self.sources {
            Some(titles) if !titles.is_empty() => {
                let mut unique: Vec<&String> = titles.iter().collect();
                unique.sort();
                unique.dedup();
                let alternatives: Vec<String> = unique.iter().map(|t| gbnf_literal(t)).collect();
                format!("title ::= {}\n", alternatives.join(" | "))
            }
            _ => "title ::= title-part (\" (\" title-part \")\")?\n\
                  title-part ::= [^\\n()\\[\\]]{1,100}\n"
                .to_string(),
        };
        let (fields, field_rules) = if self.fact_fields {
            (
                " \" | confidence: \" level \" | triple: \" part \" ; \" part \" ; \" part",
                format!("part ::= [^\\n|;()\\[\\]<>]{{1,{MAX_FIELD}}}\n"),
            )
        } else {
            ("", String::new())
        };
        format!(
            "fact ::= \"- [F\" num \"] \" statement \" (source: \" title \")\"{fields} \"\\n\"\n\
             statement ::= [^\\n()\\[\\]|<>]{{1,{MAX_STATEMENT}}}\n{title}{field_rules}"
        )
    }
}

/// `text` as a GBNF string literal.
fn gbnf_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
    use crate::env::{CorpusEnv, CorpusOptions, PoolEnv};
    use std::collections::BTreeSet;

    /// The pool setting's tools (search, lookup, finish).
    fn pool() -> ToolCatalogue {
        PoolEnv::catalogue(5)
    }

    /// The corpus setting's tools (search, read, finish).
    fn corpus() -> ToolCatalogue {
        CorpusEnv::catalogue(&CorpusOptions::default())
    }

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
        assert_closed(&react(&pool()));
        assert_closed(&working_memory(&MemorySchema::full(), &pool()));
        assert_closed(&working_memory(&MemorySchema::none(), &pool()));
        assert_closed(&working_memory(
            &MemorySchema::of(&[Section::Facts, Section::Notes]),
            &corpus(),
        ));
        assert_closed(&working_memory(
            &MemorySchema::of(&[Section::Facts, Section::Questions]),
            &pool(),
        ));
        assert_closed(&json_object());
    }

    #[test]
    fn tools_become_alternatives() {
        let g = react(&corpus());
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
    fn the_open_grammar_allows_free_reasoning_and_several_action_lines() {
        let g = open_turn(&pool(), 8);
        assert_closed(&g);
        assert!(
            g.starts_with("root ::= free* action (\"\\n\" action){0,7}\n"),
            "{g}"
        );
        assert!(g.contains("free ::= [^\\n]* \"\\n\"\n"), "{g}");
        assert!(
            !g.contains("Thought") && !g.contains("Confirmed Facts"),
            "{g}"
        );
        assert!(!g.contains("{1,"), "no length cap: {g}");
    }

    #[test]
    fn memory_sections_follow_the_schema_order_and_headers() {
        let g = working_memory(&MemorySchema::full(), &pool());
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
        let bare = working_memory(&MemorySchema::none(), &pool());
        assert!(bare.starts_with("root ::= action\n"), "{bare}");
    }

    #[test]
    fn rated_facts_end_in_confidence_and_triple_with_each_rule_defined_once() {
        let seen = vec!["Mountrail County".to_string()];
        for schema in [MemorySchema::full(), MemorySchema::of(&[Section::Facts])] {
            let g = MemoryGrammar::new(&schema, &pool())
                .sources(&seen)
                .fact_fields(true)
                .build();
            assert_closed(&g);
            assert!(
                g.contains("\" | confidence: \" level \" | triple: \" part \" ; \" part \" ; \" part \"\\n\""),
                "{g}"
            );
            assert_eq!(g.matches("level ::=").count(), 1, "{g}");
        }
        let plain = MemoryGrammar::new(&MemorySchema::full(), &pool())
            .sources(&seen)
            .build();
        assert!(!plain.contains("triple"), "{plain}");
    }

    #[test]
    fn before_any_paragraph_no_fact_and_no_hypothesis_can_be_written() {
        let schema = MemorySchema::full();
        let g = MemoryGrammar::new(&schema, &pool())
            .sources(&[])
            .max_facts(3)
            .build();
        assert_closed(&g);
        assert!(g.contains("facts ::= \"Confirmed Facts:\\n\"\n"), "{g}");
        assert!(
            g.contains("hypotheses ::= \"Active Hypotheses:\\n\"\n"),
            "{g}"
        );
        assert!(!g.contains("fact ::="), "{g}");
        assert!(!g.contains("hypothesis ::="), "{g}");
        assert!(g.contains("question{0,12}"), "{g}");
    }

    #[test]
    fn facts_cite_only_seen_titles_and_hypotheses_only_facts_the_turn_holds() {
        let schema = MemorySchema::full();
        let seen = vec![
            "Charles Mingus".to_string(),
            "Say \"When\" (song)".to_string(),
            "Charles Mingus".to_string(),
        ];
        let g = MemoryGrammar::new(&schema, &pool())
            .sources(&seen)
            .max_facts(2)
            .max_entries(3)
            .build();
        assert_closed(&g);
        assert!(
            g.contains("title ::= \"Charles Mingus\" | \"Say \\\"When\\\" (song)\"\n"),
            "{g}"
        );
        assert!(g.contains("fact{0,2}"), "{g}");
        assert!(
            g.contains("hypothesis{0,3}") && g.contains("question{0,3}"),
            "{g}"
        );
        assert!(g.contains("fact-ref ::= \"F2\" | \"F1\"\n"), "{g}");
        assert!(
            g.contains("supports: \" fact-refs"),
            "a hypothesis cites a fact: {g}"
        );
    }

    #[test]
    fn placeholders_in_angle_brackets_cannot_be_written() {
        let g = react(&pool());
        assert!(g.contains("arg ::= [^\\]\\n<>]"), "{g}");
        assert!(g.contains("line ::= [^\\n<>]"), "{g}");
    }
}
