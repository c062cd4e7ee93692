//! Turning parsed arguments into real objects, in one place: benchmark questions,
//! the model, the methods. Every failure here is a one-line error that says what to do.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use sleuth::data::{self, Dataset, Question};
use sleuth::llm::ChatModel;
use sleuth::methods::registry::{self, MethodConfig};
use sleuth::methods::{Method, PromptSet};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

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

/// Which model to call and how.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model spec: openai:MODEL, anthropic:MODEL, openai-compat:BASE_URL#MODEL,
    /// local:NAME|PATH.gguf, scripted:FILE.
    #[arg(long)]
    pub model: String,
    /// Seconds before a model request times out.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

impl ModelArgs {
    pub fn open(&self) -> Result<Arc<dyn ChatModel>> {
        open_model(&self.model, self)
    }
}

fn open_model(spec: &str, args: &ModelArgs) -> Result<Arc<dyn ChatModel>> {
    use sleuth::llm::{ApiKey, OpenAiClient, OpenAiConfig, Quirks, ScriptedModel};
    let key = || {
        std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
            .map(ApiKey::new)
    };
    let timeout = std::time::Duration::from_secs(args.timeout);
    if let Some(rest) = spec.strip_prefix("openai-compat:") {
        let (base, model) = rest
            .split_once('#')
            .ok_or_else(|| anyhow!("model spec `{spec}`: expected openai-compat:BASE_URL#MODEL"))?;
        let config = OpenAiConfig::new(base, model)
            .api_key(key())
            .timeout(timeout);
        return Ok(Arc::new(OpenAiClient::new(config)?));
    }
    if let Some(model) = spec.strip_prefix("openai:") {
        let key = key()
            .ok_or_else(|| anyhow!("OPENAI_API_KEY is not set (export it to use `{spec}`)"))?;
        let config = OpenAiConfig::new("https://api.openai.com/v1", model)
            .api_key(Some(key))
            .timeout(timeout)
            .quirks(Quirks::for_openai_model(model))
            .name(spec);
        return Ok(Arc::new(OpenAiClient::new(config)?));
    }
    if let Some(file) = spec.strip_prefix("scripted:") {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading scripted replies {file}"))?;
        let replies: Vec<String> = serde_json::from_str(&text)
            .or_else(|_| {
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(serde_json::from_str)
                    .collect()
            })
            .map_err(|e| {
                anyhow!("{file}: expected a JSON array of strings or JSON Lines of strings: {e}")
            })?;
        if replies.is_empty() {
            bail!("{file}: no scripted replies");
        }
        return Ok(Arc::new(ScriptedModel::new(replies).named(spec)));
    }
    bail!("unknown model spec `{spec}` (expected openai:MODEL, anthropic:MODEL, openai-compat:BASE_URL#MODEL, local:NAME|PATH.gguf or scripted:FILE)")
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
}

impl MethodArgs {
    pub fn settings(&self) -> Result<BTreeMap<String, String>> {
        let mut map = BTreeMap::new();
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
        })
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
