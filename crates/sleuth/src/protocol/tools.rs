//! The tools an environment offers: a typed [`Tool`] (verb, argument, one-line
//! description) and the [`ToolCatalogue`] each environment owns.
//!
//! The catalogue is the one source of three faces of the protocol, so they cannot
//! disagree: the system prompt's tool list ([`ToolCatalogue::prompt`]), what an
//! environment accepts ([`ToolCatalogue::refusal`]: a tool it does not offer is refused
//! with a text naming the tools it does) and the output grammars' tool alternatives
//! ([`super::grammar`]).

use super::action::{call, Action, ToolKind};

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

    /// The refusal of an action this environment does not offer; `None` when it does.
    /// The action is not run, and the text (the observation the model gets) names the
    /// tools that exist.
    pub fn refusal(&self, action: &Action) -> Option<String> {
        (!self.offers(action.kind())).then(|| self.refuse(action))
    }

    /// The refusal text for `action`, whether or not it is offered (for an
    /// environment's unreachable arms).
    pub fn refuse(&self, action: &Action) -> String {
        let usages: Vec<String> = self.tools.iter().map(Tool::usage).collect();
        let list = match usages.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => usages.concat(),
        };
        format!(
            "{action} was not run: {} is not available here. The tools are {list}.",
            action.tool()
        )
    }
}
