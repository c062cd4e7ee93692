//! `local:` model specs, served by the embedded llama.cpp backend (`sleuth-local`) when
//! this binary is built with the `local` feature (the default).

use anyhow::Result;
use sleuth::llm::{ChatModel, ModelSpec};
use std::sync::Arc;

/// Options of the embedded backend, from the command line.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LocalArgs {
    /// Inference threads for local: models (default: all cores but one).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Context window in tokens for local: models (default: the model's, at most 8192).
    #[arg(long, value_parser = clap::value_parser!(u32).range(128..=1_048_576))]
    pub ctx_size: Option<u32>,
    /// Let local: models write freely instead of under the protocol's grammar.
    #[arg(long)]
    pub no_grammar: bool,
    /// Repetition penalty for local: models over the last 64 generated tokens (1.0 = off;
    /// 1.1-1.3 keeps tiny models out of loops, still deterministic).
    #[arg(long, value_parser = crate::bounds::positive_f32)]
    pub repeat_penalty: Option<f32>,
}

#[cfg(feature = "local")]
mod backend {
    use super::*;
    use anyhow::{anyhow, bail};
    use sleuth_local::LocalOptions;
    use std::num::NonZeroU32;

    pub fn open(spec: &ModelSpec, args: &LocalArgs) -> Result<Arc<dyn ChatModel>> {
        let ModelSpec::Local { name } = spec else {
            bail!("`{spec}` is not a local model spec");
        };
        let mut opts = LocalOptions::default().grammar(!args.no_grammar);
        opts.threads = args.threads.and_then(NonZeroU32::new);
        opts.ctx_size = args.ctx_size.and_then(NonZeroU32::new);
        if let Some(penalty) = args.repeat_penalty {
            if !(penalty.is_finite() && penalty > 0.0) {
                bail!("--repeat-penalty must be a positive number, got {penalty}");
            }
            opts.repeat_penalty = penalty;
        }
        sleuth_local::open(name, opts).map_err(|e| anyhow!("{e}"))
    }

    pub fn ensure_pulled(spec: &str) -> Result<()> {
        if let ModelSpec::Local { name } = ModelSpec::parse(spec)? {
            if sleuth_local::store::known(&name).is_some() {
                let path = sleuth_local::ensure_model(&name).map_err(|e| anyhow!("{e}"))?;
                eprintln!("model: {}", path.display());
            }
        }
        Ok(())
    }
}

#[cfg(not(feature = "local"))]
mod backend {
    use super::*;
    use anyhow::bail;

    const MISSING: &str = "this build of sleuth has no embedded model backend; rebuild with the `local` feature (cargo install --path crates/sleuth-cli)";

    pub fn open(spec: &ModelSpec, _args: &LocalArgs) -> Result<Arc<dyn ChatModel>> {
        bail!("`{spec}`: {MISSING}")
    }

    pub fn ensure_pulled(spec: &str) -> Result<()> {
        match ModelSpec::parse(spec)? {
            ModelSpec::Local { .. } => bail!("`{spec}`: {MISSING}"),
            _ => Ok(()),
        }
    }
}

pub use backend::{ensure_pulled, open};
