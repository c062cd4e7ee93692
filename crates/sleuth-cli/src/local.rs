//! `local:` model specs, served by the embedded llama.cpp backend when this binary is
//! built with the `local` feature.

use anyhow::{bail, Result};
use sleuth::llm::{ChatModel, ModelSpec};
use std::sync::Arc;

/// Makes sure a `local:` spec's model file is present (pulling the default model on
/// first use); other specs need nothing.
pub fn ensure_pulled(spec: &str) -> Result<()> {
    match ModelSpec::parse(spec)? {
        ModelSpec::Local { .. } => bail!("`{spec}` needs the embedded model backend, which this build of sleuth does not include"),
        _ => Ok(()),
    }
}

/// Opens a `local:NAME|PATH.gguf` spec.
pub fn open(spec: &ModelSpec) -> Result<Arc<dyn ChatModel>> {
    let ModelSpec::Local { name } = spec else {
        bail!("`{spec}` is not a local model spec");
    };
    bail!("`local:{name}` needs the embedded model backend, which this build of sleuth does not include")
}
