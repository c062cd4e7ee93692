//! Agent actions and the text action protocol (`Action: search[...]`).
//!
//! Only the model's own response is parsed here; observations are never fed to this
//! parser, so a paragraph that contains `Action: finish[...]` cannot act.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "tool", content = "arg")]
pub enum Action {
    Search(String),
    Lookup(String),
    Read(String),
    Finish(String),
}

impl Action {
    pub fn tool(&self) -> &'static str {
        match self {
            Action::Search(_) => "search",
            Action::Lookup(_) => "lookup",
            Action::Read(_) => "read",
            Action::Finish(_) => "finish",
        }
    }

    pub fn argument(&self) -> &str {
        match self {
            Action::Search(a) | Action::Lookup(a) | Action::Read(a) | Action::Finish(a) => a,
        }
    }

    pub fn is_finish(&self) -> bool {
        matches!(self, Action::Finish(_))
    }

    /// Parses every `Action: tool[argument]` line of a model response, in order.
    ///
    /// Tolerates the usual drift of chat models: markdown bold around `Action`, a
    /// missing colon, `tool(argument)` with parentheses, surrounding quotes.
    pub fn parse_all(response: &str) -> Vec<Action> {
        static LINE: OnceLock<Regex> = OnceLock::new();
        let re = LINE.get_or_init(|| {
            Regex::new(
                r"(?im)^[\s>*_`\-]*action\s*(?:\d+\s*)?[*_`]*\s*:?\s*[*_`]*\s*(search|lookup|read|finish)\s*(?:\[(.*)\]|\((.*)\))\s*[*_`]*\s*$",
            )
            .expect("valid action regex")
        });
        re.captures_iter(response)
            .filter_map(|c| {
                let arg = c.get(2).or_else(|| c.get(3))?.as_str();
                Some(Action::from_parts(&c[1], arg))
            })
            .collect()
    }

    fn from_parts(tool: &str, arg: &str) -> Action {
        let arg = strip_quotes(arg.trim()).to_string();
        match tool.to_ascii_lowercase().as_str() {
            "search" => Action::Search(arg),
            "lookup" => Action::Lookup(arg),
            "read" => Action::Read(arg),
            _ => Action::Finish(arg),
        }
    }
}

fn strip_quotes(s: &str) -> &str {
    for (open, close) in [('"', '"'), ('\'', '\''), ('“', '”'), ('`', '`')] {
        if s.len() >= 2 && s.starts_with(open) && s.ends_with(close) {
            return &s[open.len_utf8()..s.len() - close.len_utf8()];
        }
    }
    s
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.tool(), self.argument())
    }
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
    fn keeps_brackets_inside_argument() {
        assert_eq!(
            Action::parse_all("Action: search[Gold Rush [California]]"),
            vec![Action::Search("Gold Rush [California]".into())]
        );
    }
}
