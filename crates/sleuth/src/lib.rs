//! `sleuth`: multi-hop question answering with language-model agents that track what
//! they know, and evaluation of such agents with the benchmarks' official metrics.
//!
//! The crate is organised by concept (see `ARCHITECTURE.md` at the repository root):
//!
//! - [`data`]: benchmark questions and their loaders; nothing downstream knows which
//!   benchmark a question came from.
//! - [`protocol`]: the text protocol, defined once: the action line, the tools, the
//!   working-memory notation and the output grammars built from them.
//! - [`env`]: the tool environment an agent acts in (search / lookup / read / finish).
//! - [`retrieval`]: lexical scoring used by the environments.
//! - [`llm`]: one normalized chat request/response across providers.
//! - [`memory`]: the epistemic working memory (facts, hypotheses, questions).
//! - [`methods`]: the agents, built by composing prompts and policies on one loop.
//! - [`eval`]: run records, the runner, official metrics and statistics.
//! - [`report`]: tables, plots and trace viewers built from run records alone.
//! - [`study`]: what a run is (selection, methods, model, job, experiment): the layer
//!   the CLI and the Python package both call.
//! - [`terminal`]: untrusted text made safe to print on a terminal.
//! - [`atomic`]: files rewritten in place without ever leaving a cut one.

pub mod env;
// The layers below the agents are crates of their own (ARCHITECTURE.md, "Crates"), so
// the compiler keeps them from reaching up; their paths under `sleuth::` stay the same.
pub use sleuth_common::{atomic, file_lock, knob, names};
pub use sleuth_data as data;
pub use sleuth_llm as llm;
pub use sleuth_retrieval as retrieval;
pub mod error;
pub mod eval;
pub mod memory;
pub mod methods;
pub mod protocol;
pub mod report;
pub mod study;
pub mod terminal;

#[cfg(test)]
mod front_ends;
#[cfg(test)]
mod layering;

pub use error::{Error, Result};
