//! The EIR setting (Evidence-Inference Reconstruction paper): the agent starts from the
//! question and the pool's titles, reads paragraphs into immutable evidence records, and
//! is compared against the paper's baselines on the same environment.
//!
//! Methods by command-line name:
//! - `eir`: Requirements/Conclusions-guided retrieval, then a separate final call that
//!   sees only the question and the evidence ([`eir`]); its controls are settings
//!   (`list_feedback=false`, `dependency_repair=true`, `extra_reads=2`).
//! - `direct`: interleaved reasoning and reading, scored on its first valid submission.
//! - `full-pool`: one call with every paragraph, EIR's final prompt.
//! - `ssr`: Agentic SSR, decomposition + three verifier votes per part + at most one
//!   refinement per action.
//! - `eir-recover`: EIR's final call alone, on an earlier run's evidence with the missed
//!   support added, unchanged, or model-selected reads (App. F.2, F.3; `sleuth recover`).
//! - `eir-reflexion`: up to five Direct trials with written reflections (the shared
//!   `retry` wrapper over [`EirAttempt`]), reported as first trial and oracle-stopped.
//!
//! The environment is an [`EvidenceEnvFactory`] (the question's pool by default), so a
//! corpus environment can take its place.

mod direct;
#[allow(clippy::module_inception)]
mod eir;
mod final_call;
mod full_pool;
pub mod json;
pub mod lists;
mod recover;
pub mod schema;
pub mod ssr;
mod trajectory;
pub mod verification;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod toy_policy;

pub use direct::{Check, Direct, EirAttempt};
pub use eir::Eir;
pub use final_call::{final_call, final_prompt, parse_final, FinalAnswer};
pub use full_pool::FullPool;
pub use json::{Citation, Move, RejectCause, Rejection};
pub use lists::{Conclusion, ConclusionStatus, Lists, Requirement, RequirementStatus};
pub use recover::{EarlierRuns, Prior, Recover};
pub use ssr::Ssr;
pub use trajectory::Budget;
pub use verification::Verification;

use super::settings::EirSettings;
use super::PromptSet;
use crate::env::{EvidenceEnvFactory, TitlesEnvFactory};
use std::sync::Arc;

/// What every method of the setting shares.
#[derive(Clone)]
pub struct Shared {
    pub settings: EirSettings,
    pub prompts: Arc<PromptSet>,
    pub env: Arc<dyn EvidenceEnvFactory>,
}

impl Shared {
    pub fn new(settings: EirSettings, prompts: Arc<PromptSet>) -> Self {
        Shared {
            settings,
            prompts,
            env: Arc::new(TitlesEnvFactory),
        }
    }

    /// Replaces the question's pool with another environment (e.g. a corpus).
    pub fn with_env(mut self, env: Arc<dyn EvidenceEnvFactory>) -> Self {
        self.env = env;
        self
    }
}
