//! Turning parsed arguments into real objects, in one place: benchmark questions,
//! the model, the methods. Every failure here is a one-line error that says what to do.

use anyhow::{anyhow, bail, Result};
use clap::Args;
use sleuth::llm::middleware::CacheScope;
use sleuth::llm::{CacheSpec, ModelSpec, ModelStack};
use sleuth::study::{
    CacheChoice, CorpusChoice, MethodSetup, ModelSetup, Sample, Selection, Shard, Source,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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
    /// Keep the first N questions: of the file (after --hops), or, with --sample, the
    /// first N of the sample's seeded order.
    #[arg(long, value_parser = crate::bounds::count(1..))]
    pub limit: Option<usize>,
    /// Keep a random sample of N questions (after --hops), chosen by --seed.
    #[arg(long, value_parser = crate::bounds::count(1..))]
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
    /// The shard this process runs (`auto` resolved from the scheduler's environment).
    pub fn shard(&self) -> Result<Option<Shard>> {
        Ok(self.shard.as_deref().map(Shard::resolve).transpose()?)
    }

    /// The selection these flags describe.
    pub fn selection(&self) -> Result<Selection> {
        Ok(Selection {
            source: source(self.dataset.as_deref(), self.data.as_deref())?,
            hops: self.hops,
            limit: self.limit,
            sample: self.sample.map(|size| Sample {
                size,
                seed: self.seed,
                offset: self.sample_offset.unwrap_or(0),
            }),
            shard: self.shard()?,
            ids: None,
        })
    }
}

/// `--dataset` and `--data` as a question source: a file (its schema named or
/// detected), or the fetched dev set of a named benchmark.
pub fn source(dataset: Option<&str>, data: Option<&Path>) -> Result<Source> {
    let named = dataset.map(crate::commands::data::dataset).transpose()?;
    match Source::of(named, data.map(Path::to_path_buf)) {
        Some(source) => Ok(source),
        None => bail!(
            "give --data FILE (its schema is detected), or --dataset NAME to read the \
             fetched dev set (`sleuth data fetch --list`)"
        ),
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
    /// Seconds before one model request times out (1 to 86400; default 120, or 600 for a
    /// model on this machine: the embedded one, a loopback address, or the llama-cpp,
    /// llama-cpp-python, ollama and lmstudio presets, where a call on a few CPU cores can
    /// take minutes).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
    /// Attempts per model call, the first included (429/5xx/timeouts are retried;
    /// bad requests, unknown models and failed validation are not; 1 to 100).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub attempts: u32,
    /// Response cache: a directory (SQLite; default $SLEUTH_HOME/responses, else
    /// ~/.cache/sleuth/responses) or a
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
    /// Whose cached responses a request may reuse: shared (default; any method's
    /// byte-identical request) or method (only the same method's, so arms with
    /// identical requests, such as Reflexion's first trial and Direct, sample on their
    /// own as separate runs do; overrides a recipe's `cache_scope`).
    #[arg(long, value_name = "SCOPE", value_parser = parse_cache_scope)]
    pub cache_scope: Option<CacheScope>,
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
            timeout: Some(600),
            attempts: 1,
            cache: None,
            no_cache: true,
            cache_scope: None,
            max_cost: None,
            rpm: None,
            tpm: None,
            prices: None,
            max_reply_bytes: sleuth::llm::DEFAULT_MAX_REPLY_BYTES,
            local,
        }
    }

    /// The model and its middleware options.
    pub fn setup(&self) -> ModelSetup {
        ModelSetup {
            spec: self.model.clone(),
            name: None,
            timeout: self.timeout.map_or_else(
                || sleuth::study::default_timeout(&self.model),
                |secs| Duration::from_secs(secs.max(1)),
            ),
            attempts: self.attempts,
            cache: match (self.no_cache, &self.cache) {
                (true, _) => CacheChoice::Off,
                (false, Some(at)) => CacheChoice::At(at.clone()),
                (false, None) => CacheChoice::Default,
            },
            max_cost: self.max_cost,
            rpm: self.rpm,
            tpm: self.tpm,
            prices: self.prices.clone(),
            max_reply_bytes: self.max_reply_bytes,
            batch: false,
            batch_poll: None,
            cache_scope: self.cache_scope.unwrap_or_default(),
        }
    }

    /// The model with its middleware stack (the embedded model opened here, every
    /// other provider by the library).
    pub fn open_stack(&self) -> Result<ModelStack> {
        open_stack(&self.setup(), &self.local)
    }
}

/// Opens `setup`'s model: the embedded one through this binary's backend.
pub fn open_stack(setup: &ModelSetup, local: &crate::local::LocalArgs) -> Result<ModelStack> {
    let spec = ModelSpec::parse(&setup.spec)?;
    if spec.is_core() {
        return Ok(setup.open()?);
    }
    Ok(setup.open_with(crate::local::open(&spec, local)?)?)
}

fn parse_cache_scope(value: &str) -> std::result::Result<CacheScope, String> {
    CacheScope::parse(value)
        .ok_or_else(|| format!("expected one of {}", CacheScope::NAMES.join(", ")))
}

/// `--cache` resolved: a Redis URL or a directory, else the default directory.
pub fn cache_spec(cache: Option<&str>) -> Result<CacheSpec> {
    match cache {
        Some(text) => Ok(CacheSpec::parse(text)?),
        None => Ok(CacheSpec::Sqlite(sleuth::study::default_cache_dir()?)),
    }
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

    /// The methods named by `names` (comma-separated) with these options.
    pub fn setup(&self, names: &str) -> Result<MethodSetup> {
        Ok(MethodSetup {
            names: names.split(',').map(str::to_string).collect(),
            settings: self.settings()?,
            prompts: self.prompts.clone(),
            corpus: self.corpus()?,
        })
    }

    fn corpus(&self) -> Result<Option<CorpusChoice>> {
        match (self.env.as_str(), &self.index) {
            ("corpus", None) => {
                bail!("--env corpus needs --index DIR (build one with `sleuth index build`)")
            }
            ("corpus", Some(dir)) => Ok(Some(CorpusChoice {
                index: dir.clone(),
                reads: self.corpus_reads,
            })),
            (_, Some(_)) => bail!("--index is only used with --env corpus"),
            _ => Ok(None),
        }
    }
}
