//! Model specs (the `--model` strings) and opening them into a ready model stack.
//!
//! | spec | provider | key |
//! |---|---|---|
//! | `openai:MODEL` | api.openai.com (`OPENAI_BASE_URL` overrides, version included: `https://host/v1`); the server preset by model family ([`super::families`], `SLEUTH_OPENAI_FAMILIES` adds rows) | `OPENAI_API_KEY`, required |
//! | `openai-compat:BASE_URL#MODEL[?key_env=VAR&preset=NAME]` | any OpenAI-compatible server (`BASE_URL` as for the OpenAI SDK, e.g. `http://host:8000/v1`) | `VAR`, else `SLEUTH_API_KEY_ENV`'s variable (either must then be set), else `OPENAI_API_KEY` if set |
//! | `anthropic:MODEL[?prompt_cache=off]` | api.anthropic.com, with prompt-cache breakpoints unless switched off (`ANTHROPIC_BASE_URL` overrides: the host root as for the Anthropic SDK; a trailing `/v1` is accepted) | `ANTHROPIC_API_KEY`, required |
//! | `scripted:FILE` | replies from a JSON array or JSON Lines of strings, in order, repeating the last | none |
//! | `local:NAME\|PATH.gguf` | the embedded model (crate `sleuth-local`, opened by the CLI) | none |
//!
//! Specs and their options are parsed in [`parse`], and nowhere else.
//!
//! `local:` parses to [`ModelSpec::Local`] but is not opened here: the core crate does
//! not depend on llama.cpp. The CLI opens the local model itself and wraps it with
//! [`ModelStack::builder`] like any other provider.

use super::anthropic::{AnthropicClient, AnthropicConfig, ANTHROPIC_BASE_URL};
use super::batch::{AnthropicBatches, Backoff, BatchApi, BatchRounds, OpenAiBatches};
use super::middleware::{
    CacheError, CacheSpec, CostBudget, ModelStack, PriceTable, RateLimit, RateLimiter,
    ResponseCache, RetryPolicy,
};
use super::openai::{OpenAiClient, OpenAiConfig};
use super::quirks::Quirks;
use super::secret::ApiKey;
use super::{ChatModel, LlmError, ScriptedModel};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    OpenAi {
        model: String,
    },
    OpenAiCompat {
        base_url: String,
        model: String,
        /// Variable holding the key (`?key_env=`).
        key_env: Option<String>,
        /// Server quirks preset (`?preset=`), see [`Quirks::PRESETS`].
        preset: Option<String>,
    },
    Anthropic {
        model: String,
        /// Send `cache_control` breakpoints on the stable prefix (`?prompt_cache=off`
        /// switches them off); see [`super::anthropic`].
        prompt_cache: bool,
    },
    Scripted {
        path: PathBuf,
    },
    /// Not a core spec: the CLI opens it with the embedded-model crate.
    Local {
        name: String,
    },
}

mod parse;

impl ModelSpec {
    pub fn parse(s: &str) -> Result<ModelSpec, LlmError> {
        s.parse()
    }

    /// The model's identity in records, `run.json` and reports: the spec without where
    /// the model is served. One model behind two endpoints (a local vLLM and a
    /// cluster's) is one model in a report; the base URL and key variable stay in the
    /// spec, which the response cache keys on. What changes the requests or their cost
    /// (a quirks preset, Anthropic's `prompt_cache=off`) stays in the id: such runs are
    /// arms of their own.
    pub fn model_id(&self) -> String {
        match self {
            ModelSpec::OpenAiCompat { model, preset, .. } => match preset {
                Some(p) => format!("openai-compat:{model}?preset={p}"),
                None => format!("openai-compat:{model}"),
            },
            _ => self.to_string(),
        }
    }

    /// The server this spec's requests go to, as a run directory records it: the base
    /// URL with any credentials and query values redacted; `None` for the scripted and
    /// embedded models. Two servers under one model name are two conditions (issue 48).
    pub fn served_at(&self, env: &EnvSource) -> Option<String> {
        let base = match self {
            ModelSpec::OpenAi { .. } => env
                .get("OPENAI_BASE_URL")
                .unwrap_or_else(|| OPENAI_BASE_URL.into()),
            ModelSpec::OpenAiCompat { base_url, .. } => base_url.clone(),
            ModelSpec::Anthropic { .. } => env
                .get("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| ANTHROPIC_BASE_URL.into()),
            ModelSpec::Scripted { .. } | ModelSpec::Local { .. } => return None,
        };
        Some(super::endpoint::redact_query(&super::middleware::redact(
            &base,
        )))
    }

    /// Whether [`open_model`] can open this spec (everything but `local:`).
    pub fn is_core(&self) -> bool {
        !matches!(self, ModelSpec::Local { .. })
    }
}

/// Where keys and base-URL overrides come from: the process environment, optionally
/// overlaid with explicit values (tests, config files). Debug shows names only.
#[derive(Clone, Default)]
pub struct EnvSource {
    overrides: BTreeMap<String, String>,
    isolated: bool,
}

impl EnvSource {
    /// The process environment.
    pub fn process() -> EnvSource {
        EnvSource::default()
    }
    /// Only explicitly set values; the process environment is ignored.
    pub fn isolated() -> EnvSource {
        EnvSource {
            overrides: BTreeMap::new(),
            isolated: true,
        }
    }
    pub fn set(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.overrides.insert(name.into(), value.into());
        self
    }
    /// A variable's non-empty value.
    pub fn get(&self, name: &str) -> Option<String> {
        let v = match self.overrides.get(name) {
            Some(v) => Some(v.clone()),
            None if !self.isolated => std::env::var(name).ok(),
            None => None,
        };
        v.filter(|v| !v.trim().is_empty())
    }
}

impl fmt::Debug for EnvSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvSource")
            .field("overrides", &self.overrides.keys().collect::<Vec<_>>())
            .field("isolated", &self.isolated)
            .finish()
    }
}

/// How to open a model: transport settings and middleware.
#[derive(Debug, Clone)]
pub struct ModelOptions {
    /// Per-request timeout (one attempt).
    pub timeout: Duration,
    pub retry: RetryPolicy,
    /// Where the response cache lives (a SQLite directory or Redis); `None` disables it.
    pub cache: Option<CacheSpec>,
    pub rate_limit: Option<RateLimit>,
    pub prices: Arc<PriceTable>,
    /// The run's spending cap (`--max-cost`), shared across models of one run.
    pub budget: Option<Arc<CostBudget>>,
    /// `max_tokens` sent to Anthropic when a request has none.
    pub anthropic_max_tokens: u32,
    /// The longest reply body read from a server; a longer one is that call's error.
    pub max_reply_bytes: usize,
    pub env: EnvSource,
    /// Send every call through the provider's batch API, in lock-step rounds.
    pub batch: bool,
    /// The first wait between polls of a batch; `None`: [`Backoff::default`]'s.
    pub batch_poll: Option<Duration>,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            cache: None,
            rate_limit: None,
            prices: Arc::new(PriceTable::defaults()),
            budget: None,
            anthropic_max_tokens: 1024,
            max_reply_bytes: super::DEFAULT_MAX_REPLY_BYTES,
            env: EnvSource::process(),
            batch: false,
            batch_poll: None,
        }
    }
}

/// The model-family table, with the user's rows from `SLEUTH_OPENAI_FAMILIES` first.
fn openai_families(env: &EnvSource) -> Result<super::families::ModelFamilies, LlmError> {
    let rows = env.get(super::families::FAMILIES_ENV).unwrap_or_default();
    super::families::ModelFamilies::with_rows(&rows)
}

fn required_key(env: &EnvSource, var: &str, spec: &ModelSpec) -> Result<ApiKey, LlmError> {
    env.get(var).map(ApiKey::new).ok_or_else(|| {
        LlmError::Config(format!(
            "model `{spec}` needs an API key: set the environment variable {var}"
        ))
    })
}

/// The key for an `openai-compat:` server. A variable named by the spec (`?key_env=`)
/// or by `SLEUTH_API_KEY_ENV` must be set: failing here, before any request, beats a
/// 401 later or a request without the key the user meant. Unnamed, `OPENAI_API_KEY` is
/// sent when set (as the OpenAI SDKs do for any base URL); local servers need none.
fn compat_key(
    env: &EnvSource,
    key_env: Option<&str>,
    spec: &ModelSpec,
) -> Result<Option<ApiKey>, LlmError> {
    let named = match key_env {
        Some(var) => Some((var.to_string(), "?key_env=")),
        None => env
            .get("SLEUTH_API_KEY_ENV")
            .map(|var| (var, "SLEUTH_API_KEY_ENV")),
    };
    match named {
        Some((var, by)) => env.get(&var).map(|k| Some(ApiKey::new(k))).ok_or_else(|| {
            LlmError::Config(format!(
                "model `{spec}` takes its key from {var} (named by {by}), but {var} is not set"
            ))
        }),
        None => Ok(env.get("OPENAI_API_KEY").map(ApiKey::new)),
    }
}

/// The configuration of the HTTP client a spec is served by.
enum Endpoint {
    OpenAi(OpenAiConfig),
    Anthropic(AnthropicConfig),
}

/// The HTTP endpoint of `spec`; `None` for the scripted and embedded models.
fn endpoint(spec: &ModelSpec, opts: &ModelOptions) -> Result<Option<Endpoint>, LlmError> {
    Ok(Some(match spec {
        ModelSpec::OpenAi { model } => {
            let key = required_key(&opts.env, "OPENAI_API_KEY", spec)?;
            let base = opts
                .env
                .get("OPENAI_BASE_URL")
                .unwrap_or_else(|| OPENAI_BASE_URL.into());
            super::endpoint::refuse_credentials(&base, "OPENAI_BASE_URL", "OPENAI_API_KEY")?;
            Endpoint::OpenAi(
                OpenAiConfig::new(base, model)
                    .api_key(Some(key))
                    .timeout(opts.timeout)
                    .quirks(openai_families(&opts.env)?.quirks_for(model))
                    .max_reply_bytes(opts.max_reply_bytes)
                    .name(spec.to_string()),
            )
        }
        ModelSpec::OpenAiCompat {
            base_url,
            model,
            key_env,
            preset,
        } => {
            let quirks = match preset {
                Some(p) => Quirks::preset(p)?,
                None => Quirks::generic(),
            };
            Endpoint::OpenAi(
                OpenAiConfig::new(base_url, model)
                    .api_key(compat_key(&opts.env, key_env.as_deref(), spec)?)
                    .timeout(opts.timeout)
                    .quirks(quirks)
                    .max_reply_bytes(opts.max_reply_bytes)
                    .name(format!("openai-compat:{base_url}#{model}")),
            )
        }
        ModelSpec::Anthropic {
            model,
            prompt_cache,
        } => {
            let key = required_key(&opts.env, "ANTHROPIC_API_KEY", spec)?;
            let base = opts
                .env
                .get("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| ANTHROPIC_BASE_URL.into());
            super::endpoint::refuse_credentials(&base, "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")?;
            Endpoint::Anthropic(
                AnthropicConfig::new(model)
                    .base_url(base)
                    .api_key(Some(key))
                    .timeout(opts.timeout)
                    .default_max_tokens(opts.anthropic_max_tokens)
                    .max_reply_bytes(opts.max_reply_bytes)
                    .prompt_cache(*prompt_cache),
            )
        }
        ModelSpec::Scripted { .. } | ModelSpec::Local { .. } => return Ok(None),
    }))
}

/// Opens the bare provider for `spec`, without middleware.
pub fn open_provider(
    spec: &ModelSpec,
    opts: &ModelOptions,
) -> Result<Arc<dyn ChatModel>, LlmError> {
    Ok(match (endpoint(spec, opts)?, spec) {
        (Some(Endpoint::OpenAi(config)), _) => Arc::new(OpenAiClient::new(config)?),
        (Some(Endpoint::Anthropic(config)), _) => Arc::new(AnthropicClient::new(config)?),
        (None, ModelSpec::Scripted { path }) => {
            let model = ScriptedModel::new(load_script(path)?).named(spec.to_string());
            Arc::new(model.forgetful())
        }
        (None, ModelSpec::Local { name }) => {
            return Err(LlmError::Config(format!(
                "`local:{name}` is served by the embedded-model crate (sleuth-local), not by sleuth::llm::open_model"
            )))
        }
        (None, _) => unreachable!("every HTTP spec has an endpoint"),
    })
}

/// The batch API of `spec`'s endpoint (`--batch`): OpenAI's Batch API for `openai:`
/// and `openai-compat:` (a server that offers `/v1/batches`), Anthropic's Message
/// Batches for `anthropic:`.
pub fn open_batches(spec: &ModelSpec, opts: &ModelOptions) -> Result<Arc<dyn BatchApi>, LlmError> {
    match endpoint(spec, opts)? {
        Some(Endpoint::OpenAi(config)) => Ok(Arc::new(OpenAiBatches::new(config)?)),
        Some(Endpoint::Anthropic(config)) => Ok(Arc::new(AnthropicBatches::new(config)?)),
        None => Err(no_batches(spec)),
    }
}

fn no_batches(spec: &dyn fmt::Display) -> LlmError {
    LlmError::Config(format!(
        "{}: `{spec}` has no batch API; batches go to openai:, openai-compat: (a server with /v1/batches) or anthropic: models",
        crate::knob::Knob::Batch
    ))
}

/// Wraps an already-open provider (e.g. the embedded local model) with the middleware
/// that `opts` asks for.
pub fn stack_with(
    provider: Arc<dyn ChatModel>,
    opts: &ModelOptions,
) -> Result<ModelStack, LlmError> {
    if opts.batch {
        return Err(no_batches(&provider.name()));
    }
    let cacheable = provider.cache_identity().is_some();
    let mut stack = ModelStack::builder(provider)
        .retry(opts.retry.clone())
        .prices(opts.prices.clone());
    match &opts.cache {
        Some(spec) if cacheable => match ResponseCache::open(spec) {
            Ok(cache) => stack = stack.cache(cache),
            // A SQLite cache that cannot be opened (a damaged file, a read-only
            // directory) costs money, never the run; a Redis URL that does not answer
            // is refused at the start (see `RedisCache::open`).
            Err(e @ CacheError::Unavailable { .. }) if matches!(spec, CacheSpec::Sqlite(_)) => {
                warn_once(
                    &spec.to_string(),
                    &format!("{e}; continuing without the response cache"),
                );
            }
            Err(e) => return Err(e.into()),
        },
        _ => {}
    }
    if let Some(budget) = &opts.budget {
        stack = stack.budget(budget.clone());
    }
    if let Some(limit) = opts.rate_limit {
        stack = stack.rate_limiter(RateLimiter::new(limit)?);
    }
    Ok(stack)
}

/// Logs `message` unless a warning about `location` was logged before in this process
/// (an experiment opens one stack per run, and one damaged cache needs one warning).
fn warn_once(location: &str, message: &str) {
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if !warned.iter().any(|l| l == location) {
        warned.push(location.to_string());
        tracing::warn!("{message}");
    }
}

/// Opens `spec` with its full middleware stack; use [`ModelStack::session`] for
/// per-record accounting.
pub fn open_stack(spec: &ModelSpec, opts: &ModelOptions) -> Result<ModelStack, LlmError> {
    let provider = open_provider(spec, opts)?;
    if !opts.batch {
        return stack_with(provider, opts);
    }
    let api = open_batches(spec, opts)?;
    let identity = provider
        .cache_identity()
        .unwrap_or_else(|| spec.to_string());
    let plain = ModelOptions {
        batch: false,
        ..opts.clone()
    };
    let rounds = match opts.batch_poll {
        None => BatchRounds::new(api, identity),
        Some(first) => {
            let backoff = Backoff {
                first,
                ..Backoff::default()
            };
            BatchRounds::with_timing(api, identity, backoff, Duration::from_secs(2))
        }
    };
    Ok(stack_with(provider, &plain)?.batch(rounds))
}

/// Opens `spec` as one shared model with its middleware.
pub fn open_model(spec: &ModelSpec, opts: &ModelOptions) -> Result<Arc<dyn ChatModel>, LlmError> {
    Ok(open_stack(spec, opts)?.model())
}

/// Reads a scripted model's replies: a JSON array of strings, or JSON Lines with one
/// string per line (blank lines skipped).
pub fn load_script(path: &Path) -> Result<Vec<String>, LlmError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| LlmError::Config(format!("{shown}: cannot read scripted replies: {e}")))?;
    let replies: Vec<String> = if text.trim_start().starts_with('[') {
        serde_json::from_str(&text).map_err(|e| {
            LlmError::Config(format!(
                "{shown}:{}: expected a JSON array of strings: {e}",
                e.line()
            ))
        })?
    } else {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let reply: String = serde_json::from_str(line).map_err(|e| {
                LlmError::Config(format!(
                    "{shown}:{}: expected a JSON string per line: {e}",
                    i + 1
                ))
            })?;
            out.push(reply);
        }
        out
    };
    if replies.is_empty() {
        return Err(LlmError::Config(format!("{shown}: no scripted replies")));
    }
    Ok(replies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_key_variable_must_be_set_before_any_request() {
        let env = EnvSource::isolated().set("OPENAI_API_KEY", "sk-default");
        let opts = ModelOptions {
            env: env.clone(),
            ..ModelOptions::default()
        };
        let spec =
            ModelSpec::parse("openai-compat:http://127.0.0.1:9/v1#m?key_env=UNSET_VAR").unwrap();
        let e = open_model(&spec, &opts).err().unwrap().to_string();
        assert!(
            e.contains("UNSET_VAR") && e.contains("?key_env=") && e.contains("not set"),
            "{e}"
        );
        let opts = ModelOptions {
            env: env.set("SLEUTH_API_KEY_ENV", "ALSO_UNSET"),
            ..ModelOptions::default()
        };
        let spec = ModelSpec::parse("openai-compat:http://127.0.0.1:9/v1#m").unwrap();
        let e = open_model(&spec, &opts).err().unwrap().to_string();
        assert!(
            e.contains("ALSO_UNSET") && e.contains("SLEUTH_API_KEY_ENV"),
            "{e}"
        );
    }

    #[test]
    fn missing_keys_name_the_variable() {
        let opts = ModelOptions {
            env: EnvSource::isolated(),
            ..ModelOptions::default()
        };
        let e = open_model(&ModelSpec::parse("openai:gpt-4o").unwrap(), &opts)
            .err()
            .unwrap();
        assert!(e.to_string().contains("OPENAI_API_KEY"), "{e}");
        let e = open_model(
            &ModelSpec::parse("anthropic:claude-haiku-4-5").unwrap(),
            &opts,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("ANTHROPIC_API_KEY"), "{e}");
        let e = open_model(&ModelSpec::parse("local:smollm2").unwrap(), &opts)
            .err()
            .unwrap();
        assert!(e.to_string().contains("sleuth-local"), "{e}");
        // openai-compat works without a key.
        assert!(open_model(
            &ModelSpec::parse("openai-compat:http://h/v1#m").unwrap(),
            &opts
        )
        .is_ok());
    }

    #[test]
    fn scripts_load_from_arrays_and_json_lines_with_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let arr = dir.path().join("a.json");
        std::fs::write(&arr, r#"["one", "two"]"#).unwrap();
        assert_eq!(load_script(&arr).unwrap(), vec!["one", "two"]);
        let lines = dir.path().join("b.jsonl");
        std::fs::write(&lines, "\"one\"\n\n\"two\\nlines\"\n").unwrap();
        assert_eq!(load_script(&lines).unwrap(), vec!["one", "two\nlines"]);
        std::fs::write(&lines, "\"ok\"\nnot json\n").unwrap();
        let e = load_script(&lines).unwrap_err().to_string();
        assert!(e.contains("b.jsonl:2:"), "{e}");
        std::fs::write(&arr, "[1, 2]").unwrap();
        assert!(load_script(&arr)
            .unwrap_err()
            .to_string()
            .contains("a.json:1:"));
        std::fs::write(&arr, "[]").unwrap();
        assert!(load_script(&arr)
            .unwrap_err()
            .to_string()
            .contains("no scripted replies"));
        assert!(load_script(&dir.path().join("missing")).is_err());
    }
}
