//! Agent actions: what a parsed action line asks an environment to do.
//!
//! The line syntax, the vocabulary and which tools an environment offers live in
//! [`super::protocol`]; an [`Action`] is one verb of that vocabulary with its argument.
//! Only the model's own response is parsed; observations are never fed to the parser,
//! so a paragraph that contains `Action: finish[...]` cannot act.

use super::protocol::{self, ToolKind};
use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// [`protocol::parse_actions`] for the syntax and the drift it tolerates). Whether
    /// the environment offers each tool is decided when it is stepped.
    pub fn parse_all(response: &str) -> Vec<Action> {
        protocol::parse_actions(response)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&protocol::call(self.tool(), self.argument()))
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
