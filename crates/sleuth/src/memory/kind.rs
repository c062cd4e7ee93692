//! Which memory a method keeps: SLEUTH keeps all three sections; the ablations keep
//! subsets; ReAct keeps none; Notes keeps an unstructured scratchpad (SLEUTH paper §3.1,
//! §4 "Working-memory ablations", App. K). [`MemoryKind`] is that choice as a type, so
//! the loop matches on it once instead of asking a schema which sections it holds. The
//! sections themselves are the notation's ([`crate::protocol::notation`]).

use crate::protocol::notation::{MemorySchema, Section};

/// The memory a method keeps between turns: the axis the SLEUTH paper's ablations vary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryKind {
    /// No memory: the conversation is the only state (ReAct, its variants, Self-Ask,
    /// IRCoT, Reflexion).
    None,
    /// The Notes baseline's unstructured scratchpad: written and carried over, but with
    /// no typed entries to count or merge.
    Notes,
    /// Typed sections merged monotonically: SLEUTH's three, or an ablation's subset
    /// (Facts-Only, Facts + Hypotheses, Facts + Questions). Confirmed Facts is always
    /// among them: it is what makes the memory typed (τ counts facts).
    Sections(MemorySchema),
}

impl MemoryKind {
    /// The kind keeping `sections`: none for no section, Notes for the scratchpad alone,
    /// typed sections otherwise.
    pub fn of(sections: &[Section]) -> MemoryKind {
        match sections {
            [] => MemoryKind::None,
            [Section::Notes] => MemoryKind::Notes,
            _ => {
                debug_assert!(
                    sections.contains(&Section::Facts) && !sections.contains(&Section::Notes),
                    "typed sections keep Confirmed Facts and no scratchpad: {sections:?}"
                );
                MemoryKind::Sections(MemorySchema::of(sections))
            }
        }
    }

    /// The sections the model writes (what the parser, the grammar and the renderer read).
    pub fn schema(&self) -> MemorySchema {
        match self {
            MemoryKind::None => MemorySchema::none(),
            MemoryKind::Notes => MemorySchema::of(&[Section::Notes]),
            MemoryKind::Sections(schema) => schema.clone(),
        }
    }

    /// Whether the model writes `section`.
    pub fn has(&self, section: Section) -> bool {
        match self {
            MemoryKind::None => false,
            MemoryKind::Notes => section == Section::Notes,
            MemoryKind::Sections(schema) => schema.has(section),
        }
    }

    /// The typed sections, when the memory has them (SLEUTH and its ablations).
    pub fn typed(&self) -> Option<&MemorySchema> {
        match self {
            MemoryKind::Sections(schema) => Some(schema),
            _ => None,
        }
    }
}
