//! Turning parsed arguments into real objects, in one place: benchmark questions,
//! the model, the methods. Every failure here is a one-line error that says what to do.

use anyhow::{anyhow, bail, Result};
use clap::Args;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use sleuth::data::{self, Dataset, Question};
use sleuth::env::CorpusOptions;
use sleuth::llm::{
    open_stack, stack_with, CostBudget, ModelOptions, ModelSpec, ModelStack, PriceTable, RateLimit,
};
use sleuth::methods::corpus::CorpusSetting;
use sleuth::methods::registry::{self, MethodConfig};
use sleuth::methods::{Method, PromptSet};
use sleuth::retrieval::bm25::Bm25Index;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which questions to use.
#[derive(Args, Debug, Clone)]
pub struct QuestionArgs {
    /// Benchmark schema of --data: hotpotqa, musique, 2wiki or jsonl.
    #[arg(long)]
    pub dataset: String,
    /// Benchmark file (JSON array or JSON Lines).
    #[arg(long)]
    pub data: PathBuf,
    /// Keep only questions with this many hops.
    #[arg(long)]
    pub hops: Option<u8>,
    /// Keep the first N questions (after --hops).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Keep a random sample of N questions (after --hops), chosen by --seed.
    #[arg(long, conflicts_with = "limit")]
    pub sample: Option<usize>,
    /// Seed for --sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run only shard I of N (`I/N`, 1-based): questions are dealt round-robin.
    #[arg(long)]
    pub shard: Option<String>,
}

impl QuestionArgs {
    pub fn dataset(&self) -> Result<Dataset> {
        self.dataset.parse::<Dataset>().map_err(|e| anyhow!("{e}"))
    }

    pub fn load(&self) -> Result<Vec<Question>> {
        let dataset = self.dataset()?;
        if !self.data.exists() {
            bail!(
                "data file {} does not exist (pass a benchmark file with --data)",
                self.data.display()
            );
        }
        let mut questions = data::load(dataset, &self.data)?;
        if let Some(h) = self.hops {
            questions = data::filter_hops(questions, h);
        }
        if let Some(n) = self.sample {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
            let mut idx: Vec<usize> = (0..questions.len()).collect();
            idx.shuffle(&mut rng);
            idx.truncate(n);
            idx.sort_unstable();
            questions = idx.into_iter().map(|i| questions[i].clone()).collect();
        }
        if let Some(n) = self.limit {
            questions.truncate(n);
        }
        if let Some(spec) = &self.shard {
            let (i, n) = parse_shard(spec)?;
            questions = questions
                .into_iter()
                .enumerate()
                .filter(|(k, _)| k % n == i - 1)
                .map(|(_, q)| q)
                .collect();
        }
        if questions.is_empty() {
            bail!(
                "no questions selected from {} (check --hops/--limit/--shard)",
                self.data.display()
            );
        }
        Ok(questions)
    }
}

pub fn parse_shard(spec: &str) -> Result<(usize, usize)> {
    let err = || anyhow!("--shard {spec}: expected I/N with 1 <= I <= N, e.g. 2/4");
    let (i, n) = spec.split_once('/').ok_or_else(err)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| err())?,
        n.trim().parse().map_err(|_| err())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(err());
    }
    Ok((i, n))
}

/// Which model to call and how: provider spec, transport, and the middleware stack
/// (retries, response cache, rate limits, cost budget).
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model spec: openai:MODEL, anthropic:MODEL,
    /// openai-compat:BASE_URL#MODEL[?key_env=VAR&preset=NAME], local:NAME|PATH.gguf,
    /// scripted:FILE.
    ///
    /// Base URLs follow the official SDKs: BASE_URL and OPENAI_BASE_URL include the
    /// version (http://host:8000/v1; /chat/completions is appended), ANTHROPIC_BASE_URL
    /// is the host root (https://api.anthropic.com; /v1/messages is appended, and a
    /// trailing /v1 is accepted). Presets: openai, openai-reasoning, vllm, sglang,
    /// llama-cpp, llama-cpp-python, ollama, lmstudio, generic. A variable named by
    /// key_env or SLEUTH_API_KEY_ENV must be set.
    #[arg(long)]
    pub model: String,
    /// Seconds before one model request times out.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Attempts per model call, the first included (429/5xx/timeouts are retried;
    /// bad requests, unknown models and failed validation are not).
    #[arg(long, default_value_t = 6)]
    pub attempts: u32,
    /// Response cache directory (default: the user cache dir, e.g. ~/.cache/sleuth/responses).
    #[arg(long, env = "SLEUTH_CACHE")]
    pub cache: Option<PathBuf>,
    /// Do not read or write the response cache.
    #[arg(long, env = "SLEUTH_NO_CACHE")]
    pub no_cache: bool,
    /// Stop cleanly before the run's billed cost would exceed this many USD.
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// Requests per minute allowed to the provider (shared by all concurrent questions).
    #[arg(long)]
    pub rpm: Option<f64>,
    /// Tokens per minute allowed to the provider.
    #[arg(long)]
    pub tpm: Option<f64>,
    /// A TOML or JSON price table (USD per million tokens) overriding the built-in one.
    #[arg(long)]
    pub prices: Option<PathBuf>,
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
            local,
        }
    }

    fn options(&self) -> Result<ModelOptions> {
        let mut opts = ModelOptions {
            timeout: Duration::from_secs(self.timeout.max(1)),
            ..ModelOptions::default()
        };
        opts.retry.max_attempts = self.attempts.max(1);
        if !self.no_cache {
            opts.cache_dir = Some(match &self.cache {
                Some(dir) => dir.clone(),
                None => default_cache_dir()?,
            });
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
    /// A method option, `key=value` (repeatable), e.g. turns=15, nudge=none, enforce=true.
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
    #[arg(long, default_value_t = 6)]
    pub corpus_reads: usize,
}

impl MethodArgs {
    pub fn settings(&self) -> Result<BTreeMap<String, String>> {
        let mut map = BTreeMap::new();
        if self.env == "corpus" {
            // The corpus setting's budget: 12 action turns (the last accepts only an
            // answer); an explicit --set turns=N wins.
            map.insert("turns".to_string(), "12".to_string());
            map.insert("last_turn_answer_only".to_string(), "true".to_string());
        }
        for pair in &self.set {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| anyhow!("--set {pair}: expected KEY=VALUE"))?;
            map.insert(k.trim().to_string(), v.trim().to_string());
        }
        registry::check_setting_keys(&map).map_err(|e| anyhow!(e))?;
        Ok(map)
    }

    pub fn config(&self) -> Result<MethodConfig> {
        let prompts = match &self.prompts {
            Some(dir) => PromptSet::with_overrides(dir)?,
            None => PromptSet::default(),
        };
        Ok(MethodConfig {
            settings: self.settings()?,
            prompts: Arc::new(prompts),
            corpus: self.corpus()?,
        })
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

/// Builds methods from a comma-separated list of names.
pub fn methods(names: &str, config: &MethodConfig) -> Result<Vec<Arc<dyn Method>>> {
    let mut out: Vec<Arc<dyn Method>> = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if out.iter().any(|m| m.name() == name) {
            continue;
        }
        out.push(registry::build(name, config).map_err(|e| anyhow!(e))?);
    }
    if out.is_empty() {
        bail!("no method given (e.g. --methods react,sleuth)");
    }
    Ok(out)
}
