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
//! - `eir-reflexion`: up to five Direct trials with written reflections, reported as
//!   first trial and oracle-stopped.
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
mod reflexion;
pub mod schema;
pub mod settings;
pub mod ssr;
mod support;
mod trajectory;

#[cfg(test)]
mod tests;

pub use direct::Direct;
pub use eir::Eir;
pub use final_call::{final_prompt, parse_final, FinalAnswer};
pub use full_pool::FullPool;
pub use json::{Citation, Move, RejectCause, Rejection};
pub use lists::{Conclusion, ConclusionStatus, Lists, Requirement, RequirementStatus};
pub use reflexion::EirReflexion;
pub use settings::{EirSettings, EIR_KEYS};
pub use ssr::Ssr;
pub use support::{gold_recall, support_f1};

use super::registry::MethodConfig;
use super::{Method, PromptSet};
use crate::env::{EvidenceEnvFactory, TitlesEnvFactory};
use std::sync::Arc;

/// Method names of the EIR setting (described in `registry::METHODS`).
pub const NAMES: &[&str] = &["eir", "direct", "full-pool", "ssr", "eir-reflexion"];

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

/// Builds an EIR-setting method by name; `Ok(None)` for names of other settings.
pub fn build(name: &str, config: &MethodConfig) -> Result<Option<Arc<dyn Method>>, String> {
    if !NAMES.contains(&name) {
        return Ok(None);
    }
    let mut shared = Shared::new(
        EirSettings::from_map(&config.settings)?,
        config.prompts.clone(),
    );
    if let Some(corpus) = &config.corpus {
        if name == "full-pool" {
            return Err(
                "full-pool answers from a question's whole pool; it has no corpus setting".into(),
            );
        }
        shared = shared.with_env(corpus.clone());
    }
    Ok(Some(build_with(name, shared)))
}

/// Builds a method of this setting from its shared parts (name checked by the caller).
pub fn build_with(name: &str, shared: Shared) -> Arc<dyn Method> {
    match name {
        "direct" => Arc::new(Direct::new(shared)),
        "full-pool" => Arc::new(FullPool::new(shared)),
        "ssr" => Arc::new(Ssr::new(shared)),
        "eir-reflexion" => Arc::new(EirReflexion::new(shared)),
        _ => Arc::new(Eir::new(shared)),
    }
}
