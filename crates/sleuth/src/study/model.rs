//! Which model a run calls and how: the spec and the middleware options (timeout,
//! attempts, response cache, cost budget, rate limits, prices). The CLI's `--model`,
//! `--cache`, `--max-cost` … and the Python keyword arguments become one
//! [`ModelSetup`]; the embedded model and a Python callable are providers the front end
//! opens itself and hands to [`ModelSetup::open_with`].

use crate::eval::estimate::Pricing;
use crate::knob::Knob;
use crate::llm::middleware::{price_id, CacheScope};
use crate::llm::{
    open_stack, stack_with, CacheSpec, ChatModel, CostBudget, LlmError, ModelOptions, ModelSpec,
    ModelStack, PriceTable, RateLimit,
};
use crate::{Error, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where responses are cached.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CacheChoice {
    /// `$XDG_CACHE_HOME/sleuth/responses`, else `~/.cache/sleuth/responses`.
    #[default]
    Default,
    /// A directory (SQLite) or `redis://HOST:PORT/DB`.
    At(String),
    /// Neither read nor written.
    Off,
}

/// A model and its middleware options.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSetup {
    /// The spec (`openai:gpt-4.1-mini`, `scripted:FILE`, …).
    pub spec: String,
    /// The name records carry when it is not the spec (a Python callable's).
    pub name: Option<String>,
    /// One request's timeout.
    pub timeout: Duration,
    /// Attempts per call, the first included.
    pub attempts: u32,
    pub cache: CacheChoice,
    /// Stop cleanly before the billed cost would exceed this many USD.
    pub max_cost: Option<f64>,
    pub rpm: Option<f64>,
    pub tpm: Option<f64>,
    /// A price table (TOML or JSON) over the built-in one.
    pub prices: Option<PathBuf>,
    /// The longest reply read from a server, in bytes.
    pub max_reply_bytes: usize,
    /// Send every call through the provider's batch API (`--batch`, `batch = true`):
    /// half price, answered in lock-step rounds (see `llm::batch::rounds`).
    pub batch: bool,
    /// The first wait between polls of a running batch (it doubles up to 5 minutes);
    /// `None`: 5 s.
    pub batch_poll: Option<Duration>,
    /// Whose cached responses a method's requests may reuse ([`CacheScope`]).
    pub cache_scope: CacheScope,
}

/// How a run's model is priced, checked before anything is spent.
pub struct PriceCheck {
    pub table: PriceTable,
    pub pricing: Pricing,
    /// Set when the table has no price for the model (a warning to show once).
    pub unpriced: Option<String>,
}

/// A request's timeout unless one is given: 120 s, or 600 s for a model served on this
/// machine (the embedded model, a loopback address, or a local server's preset:
/// llama-cpp, llama-cpp-python, ollama, lmstudio), where a call on a few CPU cores can
/// take minutes and a shorter limit only causes retries that start over.
pub fn default_timeout(spec: &str) -> Duration {
    const LOCAL_PRESETS: [&str; 4] = ["llama-cpp", "llama-cpp-python", "ollama", "lmstudio"];
    let local = match crate::llm::ModelSpec::parse(spec) {
        Ok(crate::llm::ModelSpec::Local { .. }) => true,
        Ok(crate::llm::ModelSpec::OpenAiCompat {
            base_url, preset, ..
        }) => {
            preset
                .as_deref()
                .is_some_and(|p| LOCAL_PRESETS.contains(&p))
                || is_loopback(host_of(&base_url))
        }
        _ => false,
    };
    Duration::from_secs(if local { 600 } else { 120 })
}

/// The host of `scheme://host[:port]/path` (an IPv6 address keeps its brackets).
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority.split(':').next().unwrap_or(authority),
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl ModelSetup {
    /// The CLI's defaults: [`default_timeout`], 6 attempts, the default cache.
    pub fn new(spec: impl Into<String>) -> ModelSetup {
        let spec = spec.into();
        ModelSetup {
            timeout: default_timeout(&spec),
            spec,
            name: None,
            attempts: 6,
            cache: CacheChoice::Default,
            max_cost: None,
            rpm: None,
            tpm: None,
            prices: None,
            max_reply_bytes: crate::llm::DEFAULT_MAX_REPLY_BYTES,
            batch: false,
            batch_poll: None,
            cache_scope: CacheScope::Shared,
        }
    }

    /// The name records and `run.json` carry: the one given (a Python callable's),
    /// else the spec's [`ModelSpec::model_id`] (no base URL), else the spec as written.
    pub fn name(&self) -> String {
        match (&self.name, ModelSpec::parse(&self.spec)) {
            (Some(name), _) => name.clone(),
            (None, Ok(spec)) => spec.model_id(),
            (None, Err(_)) => self.spec.clone(),
        }
    }

    /// Where the model is served, as `run.json` records it ([`ModelSpec::served_at`]).
    pub fn served_at(&self) -> Option<String> {
        ModelSpec::parse(&self.spec)
            .ok()?
            .served_at(&crate::llm::EnvSource::process())
    }

    /// The middleware options.
    pub fn options(&self) -> Result<ModelOptions> {
        let mut opts = ModelOptions {
            timeout: self.timeout.max(Duration::from_secs(1)),
            max_reply_bytes: self.max_reply_bytes,
            batch: self.batch,
            batch_poll: self.batch_poll,
            ..ModelOptions::default()
        };
        opts.retry.max_attempts = self.attempts.max(1);
        opts.cache = match &self.cache {
            CacheChoice::Off => None,
            CacheChoice::At(text) => {
                Some(CacheSpec::parse(text).map_err(|e| LlmError::Config(e.to_string()))?)
            }
            CacheChoice::Default => Some(CacheSpec::Sqlite(default_cache_dir()?)),
        };
        if let Some(path) = &self.prices {
            opts.prices = Arc::new(PriceTable::defaults_with_file(path)?);
        }
        if let Some(limit) = self.max_cost {
            if limit.is_nan() || limit <= 0.0 {
                return Err(LlmError::Config(format!(
                    "the cost budget ({}) must be positive (USD)",
                    Knob::MaxCost
                ))
                .into());
            }
            opts.budget = Some(CostBudget::new(limit));
        }
        if self.rpm.is_some() || self.tpm.is_some() {
            opts.rate_limit = Some(RateLimit {
                requests_per_minute: self.rpm,
                tokens_per_minute: self.tpm,
            });
        }
        Ok(opts)
    }

    /// The parsed spec (a malformed one is reported as such).
    pub fn parsed(&self) -> Result<ModelSpec> {
        Ok(ModelSpec::parse(&self.spec)?)
    }

    /// Opens a spec the library serves itself (every provider but the embedded model).
    pub fn open(&self) -> Result<ModelStack> {
        let spec = self.parsed()?;
        if !spec.is_core() {
            return Err(LlmError::Config(format!(
                "`{spec}` is the embedded llama.cpp model, which this build does not include; serve it with llama.cpp's server and use openai-compat:"
            ))
            .into());
        }
        Ok(open_stack(&spec, &self.options()?)?.cache_scope(self.cache_scope))
    }

    /// Wraps a provider the front end opened (the embedded model, a Python callable)
    /// in the middleware.
    pub fn open_with(&self, provider: Arc<dyn ChatModel>) -> Result<ModelStack> {
        Ok(stack_with(provider, &self.options()?)?.cache_scope(self.cache_scope))
    }

    /// The price table in force and how it prices the model. No price is an error
    /// under a cost budget (it could not be enforced), else a warning to show.
    pub fn price_check(&self) -> Result<PriceCheck> {
        self.parsed()?;
        let table = match &self.prices {
            Some(p) => PriceTable::defaults_with_file(p)?,
            None => PriceTable::defaults(),
        };
        let pricing = Pricing::of(&self.spec, &table);
        let mut unpriced = None;
        if pricing == Pricing::Unknown {
            let id = price_id(&self.spec);
            if self.max_cost.is_some() {
                return Err(Error::Invalid(format!(
                    "{}: the price table has no entry for `{id}`, so the budget cannot be enforced; pass {} with an `[{id}]` entry (docs/prices.md)",
                    Knob::MaxCost,
                    Knob::Prices.with("FILE")
                )));
            }
            unpriced = Some(id.to_string());
        }
        Ok(PriceCheck {
            table,
            pricing,
            unpriced,
        })
    }

    /// Questions in flight by default: a provider serves requests in parallel, the
    /// embedded model one at a time (it reuses its KV cache only within a question).
    pub fn default_concurrency(&self) -> usize {
        match ModelSpec::parse(&self.spec) {
            Ok(ModelSpec::Local { .. }) => 1,
            _ => 4,
        }
    }
}

/// `$SLEUTH_HOME/responses` (beside the models, data and config a `SLEUTH_HOME` holds),
/// else `$XDG_CACHE_HOME/sleuth/responses`, else `~/.cache/sleuth/responses`.
pub fn default_cache_dir() -> Result<PathBuf> {
    if let Some(home) = std::env::var_os("SLEUTH_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home).join("responses"));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or_else(|| {
            Error::Invalid(format!(
                "no cache directory: set {} or {}",
                Knob::Cache.with("DIR"),
                Knob::NoCache
            ))
        })?;
    Ok(base.join("sleuth").join("responses"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_on_this_machine_gets_the_longer_default_timeout() {
        let secs = |spec: &str| default_timeout(spec).as_secs();
        assert_eq!(secs("openai:gpt-4o-mini"), 120);
        assert_eq!(secs("openai-compat:https://api.example.com/v1#m"), 120);
        assert_eq!(secs("openai-compat:http://127.0.0.1:8080/v1#m"), 600);
        assert_eq!(secs("openai-compat:http://localhost:11434/v1#m"), 600);
        assert_eq!(secs("openai-compat:http://[::1]:8000/v1#m"), 600);
        assert_eq!(
            secs("openai-compat:http://gpu-box:8080/v1#m?preset=llama-cpp"),
            600
        );
        assert_eq!(
            secs("openai-compat:http://gpu-box:8000/v1#m?preset=vllm"),
            120
        );
        assert_eq!(secs("local:smollm2"), 600);
        assert_eq!(secs("not a spec"), 120);
    }
}
