//! The action line of the text protocol: the verbs an agent can name ([`ToolKind`]), an
//! [`Action`] (one verb with its argument), the `Action: tool[argument]` syntax and its
//! tolerant parse, and the rule that a memory section ends at a protocol line.
//!
//! Parsing is in two steps. The syntax is the same for every environment and knows the
//! whole vocabulary, so a verb the environment does not offer is still seen; acceptance
//! is the catalogue's ([`super::ToolCatalogue::refusal`]), applied by the environment
//! before anything runs. A response naming an unoffered tool therefore gets an
//! observation saying which tools exist, instead of running as some other tool or
//! disappearing. Only the model's own response is ever parsed; observations are never
//! fed to [`parse_actions`], so a paragraph that contains `Action: finish[...]` cannot
//! act.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::fmt;
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "tool", content = "arg")]
pub enum Action {
    Search(String),
    Lookup(String),
    Read(String),
    Finish(String),
}

impl Action {
    pub fn kind(&self) -> ToolKind {
        match self {
            Action::Search(_) => ToolKind::Search,
            Action::Lookup(_) => ToolKind::Lookup,
            Action::Read(_) => ToolKind::Read,
            Action::Finish(_) => ToolKind::Finish,
        }
    }

    pub fn tool(&self) -> &'static str {
        self.kind().name()
    }

    pub fn argument(&self) -> &str {
        match self {
            Action::Search(a) | Action::Lookup(a) | Action::Read(a) | Action::Finish(a) => a,
        }
    }

    pub fn is_finish(&self) -> bool {
        matches!(self, Action::Finish(_))
    }

    /// Parses every action line of a model response, in order (see
    /// [`parse_actions`] for the syntax and the drift it tolerates). Whether
    /// the environment offers each tool is decided when it is stepped.
    pub fn parse_all(response: &str) -> Vec<Action> {
        parse_actions(response)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&call(self.tool(), self.argument()))
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
/// A step tag before the action, such as IRCoT's `[RETRIEVAL]` (SLEUTH App. K: IRCoT
/// alternates `[REASONING]` and `[RETRIEVAL]` steps, the latter holding the action line).
const TAG: &str = r"\[[A-Za-z][A-Za-z _-]*\]\s*[*_`]*\s*";

/// The tolerant action-line pattern; group 1 is the verb, 2 the opening bracket or
/// parenthesis, 3 the rest of the line after it.
fn action_regex() -> &'static Regex {
    static LINE: OnceLock<Regex> = OnceLock::new();
    LINE.get_or_init(|| {
        let verbs: Vec<&str> = ToolKind::ALL.iter().map(|k| k.name()).collect();
        Regex::new(&format!(
            r"(?im){LEAD}(?:(?:{TAG})?{ACTION}{NUMBERED}\s*:?\s*[*_`]*|{TAG})\s*({})\s*([\[(])(.*)$",
            verbs.join("|")
        ))
        .expect("valid action regex")
    })
}

/// The argument inside a call whose opening `open` came just before `rest`: up to the
/// matching close (brackets inside the argument kept), or, when it never closes
/// evenly, up to the last close on the line. Whatever follows the close (a full stop,
/// a few words of explanation) is not part of the argument. `None` without a close.
fn argument(open: char, rest: &str) -> Option<&str> {
    let close = if open == OPEN { CLOSE } else { ')' };
    let mut depth = 1usize;
    for (i, c) in rest.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(&rest[..i]);
            }
        }
    }
    rest.rfind(close).map(|i| &rest[..i])
}

/// Parses every action line of a model response, in order.
///
/// The canonical line is `Action: tool[argument]`; the usual drift of chat models is
/// tolerated: markdown bold around `Action`, a step number, a missing colon,
/// `tool(argument)` with parentheses, surrounding quotes, brackets inside the argument,
/// a step tag before the line (`[RETRIEVAL] Action: search[...]`, or the tag in place of
/// the label, `[RETRIEVAL] search[...]`: IRCoT's prompt, SLEUTH App. K), and text after
/// the closing bracket (`finish[Mario Andretti].`, `search[Tenement] to find its
/// founder`: the bracket's content is the argument). A tool word outside the
/// vocabulary makes the line prose, not an action.
pub fn parse_actions(response: &str) -> Vec<Action> {
    action_regex()
        .captures_iter(response)
        .filter_map(|c| {
            let kind = ToolKind::from_name(&c[1])?;
            let open = c[2].chars().next()?;
            let arg = argument(open, c.get(3)?.as_str())?;
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
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_drifted_lines() {
        let text = "Thought: go\nAction: search[Charles Mingus birthplace]\n**Action:** lookup(\"Tucson, Arizona\")\naction finish[Mario Andretti]";
        assert_eq!(
            Action::parse_all(text),
            vec![
                Action::Search("Charles Mingus birthplace".into()),
                Action::Lookup("Tucson, Arizona".into()),
                Action::Finish("Mario Andretti".into()),
            ]
        );
    }

    #[test]
    fn ignores_mentions_inside_prose() {
        assert!(Action::parse_all("I will call search[x] next time.").is_empty());
    }

    #[test]
    fn reads_a_step_tag_before_the_line_and_ignores_text_after_the_bracket() {
        let text = "[RETRIEVAL] Action: search[Tenement founder]\n[RETRIEVAL] lookup[Tenement (band)]\nAction: finish[Mario Andretti].\nAction: search[Tenement] to find the founder\nAction: finish(Paris (France)) now";
        assert_eq!(
            Action::parse_all(text),
            vec![
                Action::Search("Tenement founder".into()),
                Action::Lookup("Tenement (band)".into()),
                Action::Finish("Mario Andretti".into()),
                Action::Search("Tenement".into()),
                Action::Finish("Paris (France)".into()),
            ]
        );
        assert!(Action::parse_all("[REASONING] I will search[x] later.").is_empty());
    }

    #[test]
    fn keeps_brackets_inside_argument() {
        assert_eq!(
            Action::parse_all("Action: search[Gold Rush [California]]"),
            vec![Action::Search("Gold Rush [California]".into())]
        );
    }
}
