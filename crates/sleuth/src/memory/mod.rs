//! The epistemic working memory of SLEUTH and its ablations.
//!
//! The model writes its memory in the paper's notation on every turn; the notation itself
//! (headers, entry lines, the tolerant parse, the adherence check) is
//! [`crate::protocol::notation`]. This module is what the memory does with it: it merges
//! facts monotonically (a fact the model drops stays in the state), resolves questions,
//! holds contradicting facts out (`contradictions=true`) and renders the state back for
//! prompts and traces.

pub mod conflict;
mod kind;
pub mod rewording;
mod state;

pub use conflict::{Conflict, Resolution};
pub use kind::MemoryKind;
pub use rewording::FactIdReuse;
pub use state::{parse_memory, MergeRules, Merged, WorkingMemory};

// The notation's types, which the memory is made of (defined in `protocol::notation`).
pub use crate::protocol::notation::{
    check_adherence, check_adherence_under, check_adherence_with, writes_section, AdherenceRules,
    Confidence, Fact, Hypothesis, HypothesisFields, MemorySchema, OpenQuestion, Priority, Section,
    SectionProse, Triple,
};

#[cfg(test)]
mod tests;
