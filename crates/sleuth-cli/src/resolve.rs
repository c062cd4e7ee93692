//! Turning parsed arguments into real objects, in one place: benchmark questions,
//! the model, the methods. Every failure here is a one-line error that says what to do.

use crate::shard::Shard;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use sleuth::data::{self, Dataset, Question};
use sleuth::env::CorpusOptions;
use sleuth::eval::RecordedRuns;
use sleuth::llm::{
    open_stack, stack_with, CacheSpec, CostBudget, ModelOptions, ModelSpec, ModelStack, PriceTable,
    RateLimit,
};
use sleuth::methods::corpus::CorpusSetting;
use sleuth::methods::registry::{self, MethodConfig};
use sleuth::methods::{PromptSet, RegisteredMethod};
use sleuth::retrieval::bm25::Bm25Index;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which questions to use.
#[derive(Args, Debug, Clone)]
pub struct QuestionArgs {
    /// Benchmark schema of --data: hotpotqa, musique, 2wiki or jsonl (default: detected
    /// from the file).
    #[arg(long)]
    pub dataset: Option<String>,
    /// Benchmark file, JSON array or JSON Lines (default: the dev set of --dataset
    /// installed by `sleuth data fetch`).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Keep only questions with this many hops.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
    pub hops: Option<u8>,
    /// Keep the first N questions (after --hops).
    #[arg(long, value_parser = crate::bounds::count(1..))]
    pub limit: Option<usize>,
    /// Keep a random sample of N questions (after --hops), chosen by --seed.
    #[arg(long, conflicts_with = "limit", value_parser = crate::bounds::count(1..))]
    pub sample: Option<usize>,
    /// Seed for --sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Skip the first K questions of --sample's seeded order before taking N: with the
    /// same seed, `--sample 1000` and `--sample 20 --sample-offset 1000` are disjoint
    /// (the EIR paper's 1,000 scored and 20 setup questions, Table 4).
    #[arg(long, requires = "sample", value_parser = crate::bounds::count(0..))]
    pub sample_offset: Option<usize>,
    /// Run only shard I of N (`I/N`, 1-based): questions are dealt round-robin. `auto`
    /// reads I and N from a Slurm job array or a Kubernetes indexed Job (docs/cluster.md).
    #[arg(long, value_name = "I/N|auto")]
    pub shard: Option<String>,
}

impl QuestionArgs {
    /// The schema and the file, resolved as every data-reading command does.
    pub fn resolved(&self) -> Result<(Dataset, PathBuf)> {
        crate::commands::data::resolve(self.dataset.as_deref(), self.data.as_deref())
    }

    /// The shard this process runs (`auto` resolved from the scheduler's environment).
    pub fn shard(&self) -> Result<Option<Shard>> {
        self.shard.as_deref().map(Shard::resolve).transpose()
    }

    pub fn load(&self) -> Result<Vec<Question>> {
        let (dataset, path) = self.resolved()?;
        let mut questions = data::load(dataset, &path)?;
        if let Some(h) = self.hops {
            questions = data::filter_hops(questions, h);
        }
        if let Some(n) = self.sample {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
            let mut idx: Vec<usize> = (0..questions.len()).collect();
            idx.shuffle(&mut rng);
            idx.drain(..self.sample_offset.unwrap_or(0).min(idx.len()));
            idx.truncate(n);
            idx.sort_unstable();
            questions = idx.into_iter().map(|i| questions[i].clone()).collect();
        }
        if let Some(n) = self.limit {
            questions.truncate(n);
        }
        if questions.is_empty() {
            bail!(
                "no questions selected from {} (check --hops/--limit)",
                path.display()
            );
        }
        if let Some(shard) = self.shard()? {
            // May leave none: an array with more tasks than a split has questions is
            // fine, the extra tasks have nothing to do (see `commands::eval`).
            questions = questions
                .into_iter()
                .enumerate()
                .filter(|(k, _)| shard.owns(*k))
                .map(|(_, q)| q)
                .collect();
        }
        Ok(questions)
    }
}

/// Which model to call and how: provider spec, transport, and the middleware stack
/// (retries, response cache, rate limits, cost budget).
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model spec: openai:MODEL, anthropic:MODEL[?prompt_cache=off],
    /// openai-compat:BASE_URL#MODEL[?key_env=VAR&preset=NAME], local:NAME|PATH.gguf,
    /// scripted:FILE.
    ///
    /// Base URLs follow the official SDKs: BASE_URL and OPENAI_BASE_URL include the
    /// version (http://host:8000/v1; /chat/completions is appended), ANTHROPIC_BASE_URL
    /// is the host root (https://api.anthropic.com; /v1/messages is appended, and a
    /// trailing /v1 is accepted). Presets: openai, openai-reasoning, vllm, sglang,
    /// llama-cpp, llama-cpp-python, ollama, lmstudio, generic. A variable named by
    /// key_env or SLEUTH_API_KEY_ENV must be set. Anthropic requests mark their stable
    /// prefix for the provider's prompt cache unless ?prompt_cache=off.
    #[arg(long)]
    pub model: String,
    /// Seconds before one model request times out (1 to 86400).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Attempts per model call, the first included (429/5xx/timeouts are retried;
    /// bad requests, unknown models and failed validation are not; 1 to 100).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub attempts: u32,
    /// Response cache: a directory (SQLite; default ~/.cache/sleuth/responses) or a
    /// shared Redis, redis://HOST:PORT/DB (docs/cluster.md).
    #[arg(
        long,
        env = "SLEUTH_CACHE",
        hide_env_values = true,
        value_name = "DIR|URL"
    )]
    pub cache: Option<String>,
    /// Do not read or write the response cache.
    #[arg(long, env = "SLEUTH_NO_CACHE")]
    pub no_cache: bool,
    /// Stop cleanly before the run's billed cost would exceed this many USD.
    #[arg(long, value_parser = crate::bounds::positive)]
    pub max_cost: Option<f64>,
    /// Requests per minute allowed to the provider (shared by all concurrent questions).
    #[arg(long, value_parser = crate::bounds::positive)]
    pub rpm: Option<f64>,
    /// Tokens per minute allowed to the provider.
    #[arg(long, value_parser = crate::bounds::positive)]
    pub tpm: Option<f64>,
    /// A TOML or JSON price table (USD per million tokens) overriding the built-in one.
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// The longest reply read from a model server, in bytes; a longer one is that
    /// call's error (default 4 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = sleuth::llm::DEFAULT_MAX_REPLY_BYTES, value_parser = crate::bounds::count(1024..=1 << 30))]
    pub max_reply_bytes: usize,
    #[command(flatten)]
    pub local: crate::local::LocalArgs,
}

impl ModelArgs {
    /// Defaults for the offline demo: no response cache (the embedded model is free).
    pub fn for_demo(model: &str, local: crate::local::LocalArgs) -> Self {
        ModelArgs {
            model: model.to_string(),
            timeout: 600,
            attempts: 1,
            cache: None,
            no_cache: true,
            max_cost: None,
            rpm: None,
            tpm: None,
            prices: None,
            max_reply_bytes: sleuth::llm::DEFAULT_MAX_REPLY_BYTES,
            local,
        }
    }

    fn options(&self) -> Result<ModelOptions> {
        let mut opts = ModelOptions {
            timeout: Duration::from_secs(self.timeout.max(1)),
            max_reply_bytes: self.max_reply_bytes,
            ..ModelOptions::default()
        };
        opts.retry.max_attempts = self.attempts.max(1);
        if !self.no_cache {
            opts.cache = Some(cache_spec(self.cache.as_deref())?);
        }
        if let Some(path) = &self.prices {
            opts.prices = Arc::new(PriceTable::defaults_with_file(path)?);
        }
        if let Some(limit) = self.max_cost {
            if limit <= 0.0 {
                bail!("--max-cost must be positive (USD)");
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

    /// The model with its middleware stack.
    pub fn open_stack(&self) -> Result<ModelStack> {
        let spec = ModelSpec::parse(&self.model)?;
        let opts = self.options()?;
        if spec.is_core() {
            return Ok(open_stack(&spec, &opts)?);
        }
        Ok(stack_with(crate::local::open(&spec, &self.local)?, &opts)?)
    }
}

/// `--cache` resolved: a Redis URL or a directory, else the default directory.
pub fn cache_spec(cache: Option<&str>) -> Result<CacheSpec> {
    match cache {
        Some(text) => Ok(CacheSpec::parse(text)?),
        None => Ok(CacheSpec::Sqlite(default_cache_dir()?)),
    }
}

/// `$XDG_CACHE_HOME/sleuth/responses`, else `~/.cache/sleuth/responses`.
fn default_cache_dir() -> Result<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or_else(|| anyhow!("no cache directory: set --cache DIR or --no-cache"))?;
    Ok(base.join("sleuth").join("responses"))
}

/// Method options shared by `ask`, `eval` and `experiment`.
#[derive(Args, Debug, Clone, Default)]
pub struct MethodArgs {
    /// A method option, `key=value` (repeatable), e.g. turns=15, nudge=turn:14, enforce=true;
    /// `sleuth methods NAME` lists the keys a method reads and their defaults.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A directory of prompt templates that replace the built-in ones by file name.
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// Where agents search: `pool` (each question's own paragraphs) or `corpus` (a BM25
    /// index built with `sleuth index build`, given by --index).
    #[arg(long, default_value = "pool", value_parser = ["pool", "corpus"])]
    pub env: String,
    /// The BM25 index directory of `--env corpus`.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Read attempts per episode in the corpus setting.
    #[arg(long, default_value_t = 6, value_parser = crate::bounds::count(1..))]
    pub corpus_reads: usize,
}

impl MethodArgs {
    /// The `--set` pairs as given (checked against the chosen methods in [`methods`]).
    pub fn settings(&self) -> Result<BTreeMap<String, String>> {
        let mut map = BTreeMap::new();
        for pair in &self.set {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| anyhow!("--set {pair}: expected KEY=VALUE"))?;
            map.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(map)
    }

    pub fn config(&self) -> Result<MethodConfig> {
        let prompts = match &self.prompts {
            Some(dir) => PromptSet::with_overrides(dir)?,
            None => PromptSet::default(),
        };
        let mut config = MethodConfig::new(self.settings()?);
        config.prompts = Arc::new(prompts);
        config.corpus = self.corpus()?;
        config.earlier = Some(Arc::new(RecordedRuns));
        Ok(config)
    }
}

impl MethodArgs {
    fn corpus(&self) -> Result<Option<Arc<CorpusSetting>>> {
        match (self.env.as_str(), &self.index) {
            ("corpus", None) => {
                bail!("--env corpus needs --index DIR (build one with `sleuth index build`)")
            }
            ("corpus", Some(dir)) => {
                let index = Bm25Index::open(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
                let options = CorpusOptions {
                    max_reads: self.corpus_reads,
                    ..CorpusOptions::default()
                };
                Ok(Some(Arc::new(CorpusSetting {
                    index: Arc::new(index),
                    options,
                })))
            }
            (_, Some(_)) => bail!("--index is only used with --env corpus"),
            _ => Ok(None),
        }
    }
}

/// Builds methods from a comma-separated list of names, after checking that every
/// `--set` key is read by at least one of them.
pub fn methods(names: &str, config: &MethodConfig) -> Result<Vec<Arc<RegisteredMethod>>> {
    let mut chosen: Vec<&str> = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !chosen.contains(&name) {
            chosen.push(name);
        }
    }
    if chosen.is_empty() {
        bail!("no method given (e.g. --methods react,sleuth)");
    }
    registry::check_keys(&chosen, &config.settings).map_err(|e| anyhow!(e))?;
    chosen
        .into_iter()
        .map(|name| {
            registry::build(name, config)
                .map(Arc::new)
                .map_err(|e| anyhow!(e))
        })
        .collect()
}
