//! The text protocol an agent and the loop speak, defined once and below everything
//! that speaks it: the action line (`Action: tool[argument]`, [`action`]), the tools an
//! environment offers ([`tools`]), the working-memory notation ([`notation`]), the
//! reasoning-step formats of Self-Ask and IRCoT ([`formats`]) and the GBNF grammars
//! built from them ([`grammar`]).
//!
//! Everything that speaks the protocol reads it from here, so the prompt, the parsers and
//! the output grammars cannot disagree: the system prompt's tool list is
//! [`ToolCatalogue::prompt`], the grammars take the catalogue and the memory schema and
//! emit the lines [`action::parse_actions`] and [`notation::parse`] read back, and a
//! memory section ends at [`action::ends_section`].
//!
//! Layering: this module imports nothing of the crate. Environments ([`crate::env`])
//! own a catalogue and execute [`Action`]s; the memory ([`crate::memory`]) merges what
//! the notation reads; the methods attach the grammars' text to requests. The provider
//! layer ([`crate::llm`]) never sees the protocol: it takes a grammar as text
//! (`OutputConstraint::Grammar`).

pub mod action;
pub mod formats;
pub mod grammar;
pub mod notation;
pub mod tools;

pub use action::{action_line, call, parse_actions, Action, ToolKind};
pub use tools::{Tool, ToolCatalogue};

#[cfg(test)]
mod tests;
