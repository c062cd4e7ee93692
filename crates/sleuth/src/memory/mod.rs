//! The epistemic working memory of SLEUTH and its ablations.
//!
//! The model writes its memory in the paper's notation on every turn; this module parses
//! that text tolerantly (raw text is kept when parsing fails), checks adherence to the
//! notation, merges facts monotonically (a fact the model drops stays in the state), and
//! renders the state back for prompts and traces.

pub mod conflict;
mod parse;
mod schema;
mod state;

pub use conflict::{Conflict, Resolution, Triple};
pub use parse::{check_adherence, parse_memory, writes_section};
pub use schema::{MemoryKind, MemorySchema, Section};
pub use state::{
    Confidence, Fact, Hypothesis, MergeRules, Merged, OpenQuestion, Priority, WorkingMemory,
};

#[cfg(test)]
mod tests;
