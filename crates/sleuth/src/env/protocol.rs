//! The text action protocol, defined once: the verbs an agent can name, the tools an
//! environment offers ([`ToolCatalogue`]), the action-line syntax and its tolerant
//! parse, and the rule that a memory section ends at a protocol line.
//!
//! Everything that speaks the protocol reads it from here, so the prompt, the parser and
//! the output grammar cannot disagree: the system prompt's tool list is
//! [`ToolCatalogue::prompt`], the GBNF grammars in [`crate::llm::grammar`] take the
//! catalogue and emit [`ACTION`] lines, [`parse_actions`] reads those lines back, and
//! [`crate::memory`] ends a section at [`ends_section`].
//!
//! Parsing is in two steps. The syntax is the same for every environment and knows the
//! whole vocabulary ([`ToolKind`]), so a verb the environment does not offer is still
//! seen; acceptance is the catalogue's ([`ToolCatalogue::refusal`]), applied by
//! [`Environment::step`](super::Environment::step) before anything runs. A response
//! naming an unoffered tool therefore gets an observation saying which tools exist,
//! instead of running as some other tool or disappearing. Only the model's own response
//! is ever parsed; observations are never fed to [`parse_actions`].

use super::{Action, Observation};
use regex::Regex;
use std::sync::OnceLock;

/// The label of an action line (`Action: search[...]`).
pub const ACTION: &str = "Action";
/// The label of a reasoning line in ReAct (`Thought: ...`).
pub const THOUGHT: &str = "Thought";
/// What surrounds the argument in the canonical form.
pub const OPEN: char = '[';
pub const CLOSE: char = ']';

/// Every verb the protocol knows. An environment offers some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    Search,
    Lookup,
    Read,
    Finish,
}

impl ToolKind {
    pub const ALL: [ToolKind; 4] = [
        ToolKind::Search,
        ToolKind::Lookup,
        ToolKind::Read,
        ToolKind::Finish,
    ];

    /// The name the model writes.
    pub fn name(self) -> &'static str {
        match self {
            ToolKind::Search => "search",
            ToolKind::Lookup => "lookup",
            ToolKind::Read => "read",
            ToolKind::Finish => "finish",
        }
    }

    /// The verb with this name, ignoring case.
    pub fn from_name(name: &str) -> Option<ToolKind> {
        ToolKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// An action of this kind.
    pub fn action(self, arg: String) -> Action {
        match self {
            ToolKind::Search => Action::Search(arg),
            ToolKind::Lookup => Action::Lookup(arg),
            ToolKind::Read => Action::Read(arg),
            ToolKind::Finish => Action::Finish(arg),
        }
    }
}

/// One tool as an environment offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub kind: ToolKind,
    /// What the argument is, shown as `<arg>` in the prompt (`query`, `title`, `id`).
    pub arg: &'static str,
    /// One line for the prompt, after `tool[<arg>]: `.
    pub description: String,
}

impl Tool {
    pub fn new(kind: ToolKind, arg: &'static str, description: impl Into<String>) -> Self {
        Tool {
            kind,
            arg,
            description: description.into(),
        }
    }

    /// `finish[<answer>]`, the same in every environment.
    pub fn finish() -> Self {
        Tool::new(
            ToolKind::Finish,
            "answer",
            "ends the investigation with your final answer.",
        )
    }

    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// `search[<query>]`.
    pub fn usage(&self) -> String {
        call(self.name(), &format!("<{}>", self.arg))
    }
}

/// The tools one environment offers, in the order the prompt lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCatalogue {
    tools: Vec<Tool>,
}

impl ToolCatalogue {
    /// A catalogue of `tools`. Panics when it names a verb twice or lacks `finish`:
    /// those are programming errors, and every episode must be able to end.
    pub fn new(tools: Vec<Tool>) -> Self {
        for (i, t) in tools.iter().enumerate() {
            assert!(
                !tools[..i].iter().any(|u| u.kind == t.kind),
                "tool {} offered twice",
                t.name()
            );
        }
        assert!(
            tools.iter().any(|t| t.kind == ToolKind::Finish),
            "a tool catalogue must offer finish"
        );
        ToolCatalogue { tools }
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool names, in order (the grammars' alternatives).
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(Tool::name).collect()
    }

    pub fn offers(&self, kind: ToolKind) -> bool {
        self.tools.iter().any(|t| t.kind == kind)
    }

    /// The tool list of the system prompt: one `- tool[<arg>]: description` line each.
    pub fn prompt(&self) -> String {
        self.tools
            .iter()
            .map(|t| format!("- {}: {}", t.usage(), t.description))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The observation for an action this environment does not offer; `None` when it
    /// does. The action is not run, and the observation names the tools that exist.
    pub fn refusal(&self, action: &Action) -> Option<Observation> {
        (!self.offers(action.kind())).then(|| self.refuse(action))
    }

    /// The refusal observation for `action`, whether or not it is offered (for an
    /// environment's unreachable arms).
    pub fn refuse(&self, action: &Action) -> Observation {
        let usages: Vec<String> = self.tools.iter().map(Tool::usage).collect();
        let list = match usages.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => usages.concat(),
        };
        Observation::new(format!(
            "{action} was not run: {} is not available here. The tools are {list}.",
            action.tool()
        ))
    }
}

/// `tool[arg]`, the call form inside an action line (and an [`Action`]'s display).
pub fn call(tool: &str, arg: &str) -> String {
    format!("{tool}{OPEN}{arg}{CLOSE}")
}

/// The canonical action line: `Action: tool[arg]`, as the grammars emit it.
pub fn action_line(tool: &str, arg: &str) -> String {
    format!("{ACTION}: {}", call(tool, arg))
}

/// What may precede a label at the start of a line: indentation, quote marks, bullets,
/// markdown emphasis.
const LEAD: &str = r"^[\s>*_`\-]*";
/// What may follow a label before its colon: a step number, closing emphasis.
const NUMBERED: &str = r"\s*(?:\d+\s*)?[*_`]*";

/// The tolerant action-line pattern; group 1 is the verb, 2 or 3 the argument.
fn action_regex() -> &'static Regex {
    static LINE: OnceLock<Regex> = OnceLock::new();
    LINE.get_or_init(|| {
        let verbs: Vec<&str> = ToolKind::ALL.iter().map(|k| k.name()).collect();
        Regex::new(&format!(
            r"(?im){LEAD}{ACTION}{NUMBERED}\s*:?\s*[*_`]*\s*({})\s*(?:\[(.*)\]|\((.*)\))\s*[*_`]*\s*$",
            verbs.join("|")
        ))
        .expect("valid action regex")
    })
}

/// Parses every action line of a model response, in order.
///
/// The canonical line is `Action: tool[argument]`; the usual drift of chat models is
/// tolerated: markdown bold around `Action`, a step number, a missing colon,
/// `tool(argument)` with parentheses, surrounding quotes, brackets inside the argument.
/// A tool word outside the vocabulary makes the line prose, not an action.
pub fn parse_actions(response: &str) -> Vec<Action> {
    action_regex()
        .captures_iter(response)
        .filter_map(|c| {
            let kind = ToolKind::from_name(&c[1])?;
            let arg = c.get(2).or_else(|| c.get(3))?.as_str();
            Some(kind.action(strip_quotes(arg.trim()).to_string()))
        })
        .collect()
}

/// Whether `line` ends a working-memory section written before it: a line that starts
/// a protocol field (`Action:`, `Thought:`, `Answer:`, `Final Answer:`, with the same
/// drift as action lines and a colon), or any line [`parse_actions`] reads as an action.
pub fn ends_section(line: &str) -> bool {
    static END: OnceLock<Regex> = OnceLock::new();
    END.get_or_init(|| {
        Regex::new(&format!(
            r"(?i){LEAD}(?:{ACTION}|{THOUGHT}|final answer|answer){NUMBERED}\s*:"
        ))
        .expect("valid section-end regex")
    })
    .is_match(line)
        || action_regex().is_match(line)
}

fn strip_quotes(s: &str) -> &str {
    for (open, close) in [('"', '"'), ('\'', '\''), ('“', '”'), ('`', '`')] {
        if s.len() >= 2 && s.starts_with(open) && s.ends_with(close) {
            return &s[open.len_utf8()..s.len() - close.len_utf8()];
        }
    }
    s
}

#[cfg(test)]
mod tests;
