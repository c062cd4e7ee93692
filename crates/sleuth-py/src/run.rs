//! `ask` (one method on one question) and `eval` (methods over a benchmark into a run
//! directory), through the same seams as the CLI: the registry builds the methods,
//! `run_episode` turns an episode into a record, `Runner` + `RunStore` write and
//! resume the run directory.

use crate::errors;
use crate::model::{self, ModelArgs};
use crate::question::{self, Question};
use pyo3::prelude::*;
use sleuth::env::CorpusOptions;
use sleuth::eval::{run_episode, Outcome, Quiet, RecordedRuns, RunConfig, RunStore, Runner};
use sleuth::methods::corpus::CorpusSetting;
use sleuth::methods::registry::{self, MethodConfig};
use sleuth::methods::{PromptSet, RegisteredMethod};
use sleuth::retrieval::bm25::Bm25Index;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// `--set`, `--prompts`, `--env corpus --index DIR --corpus-reads N`.
fn method_config(
    settings: BTreeMap<String, String>,
    prompts: Option<PathBuf>,
    index: Option<PathBuf>,
    corpus_reads: usize,
) -> PyResult<MethodConfig> {
    let mut config = MethodConfig::new(settings);
    config.earlier = Some(Arc::new(RecordedRuns));
    if let Some(dir) = prompts {
        config.prompts = Arc::new(PromptSet::with_overrides(&dir).map_err(errors::to_py)?);
    }
    if let Some(dir) = index {
        let index = Bm25Index::open(&dir)
            .map_err(|e| errors::DataError::new_err(format!("{}: {e}", dir.display())))?;
        config.corpus = Some(Arc::new(CorpusSetting {
            index: Arc::new(index),
            options: CorpusOptions {
                max_reads: corpus_reads.max(1),
                ..CorpusOptions::default()
            },
        }));
    }
    Ok(config)
}

/// Builds the named methods after checking every setting is read by one of them (the
/// CLI's `resolve::methods`).
fn build_methods(names: &[String], config: &MethodConfig) -> PyResult<Vec<Arc<RegisteredMethod>>> {
    let mut chosen: Vec<&str> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !chosen.contains(&name) {
            chosen.push(name);
        }
    }
    if chosen.is_empty() {
        return Err(errors::method(
            "no method given (e.g. --methods react,sleuth)",
        ));
    }
    registry::check_keys(&chosen, &config.settings).map_err(errors::method)?;
    chosen
        .into_iter()
        .map(|name| {
            registry::build(name, config)
                .map(Arc::new)
                .map_err(errors::method)
        })
        .collect()
}

/// Runs one method on one question; returns its record as JSON text (an error record
/// too: the wrapper decides how to raise it).
#[pyfunction]
#[pyo3(signature = (method, question, model, *, settings, model_name=None, cache=None, no_cache=false, max_cost=None, timeout=120, attempts=6, prompts=None))]
#[allow(clippy::too_many_arguments)]
pub fn ask(
    py: Python<'_>,
    method: String,
    question: Question,
    model: &Bound<'_, PyAny>,
    settings: BTreeMap<String, String>,
    model_name: Option<String>,
    cache: Option<String>,
    no_cache: bool,
    max_cost: Option<f64>,
    timeout: u64,
    attempts: u32,
    prompts: Option<PathBuf>,
) -> PyResult<String> {
    let config = method_config(settings, prompts, None, 6)?;
    let method = build_methods(&[method], &config)?.remove(0);
    let args = ModelArgs {
        cache,
        no_cache,
        max_cost,
        timeout,
        attempts,
        ..ModelArgs::default()
    };
    let opened = model::open(model, model_name, &args)?;
    let outcome = crate::block_on(py, || {
        run_episode(&opened.stack, &opened.name, &question.inner, &method, None)
    })?;
    match outcome {
        Outcome::Record(record) => Ok(serde_json::to_string(&record).expect("records serialize")),
        Outcome::Halted(reason) => Err(errors::BudgetExceeded::new_err(format!(
            "stopped before exceeding the cost budget ({reason})"
        ))),
        Outcome::Skipped => unreachable!("a single episode is never skipped"),
    }
}

/// Every method over the selected questions into the run directory `out`, resuming it;
/// returns the run's summary as JSON text.
#[pyfunction]
#[pyo3(signature = (dataset, path, methods, model, out, *, settings, hops=None, limit=None, sample=None, seed=0, concurrency=4, retry_errors=false, model_name=None, cache=None, no_cache=false, max_cost=None, timeout=120, attempts=6, rpm=None, tpm=None, prices=None, prompts=None, index=None, corpus_reads=6))]
#[allow(clippy::too_many_arguments)]
pub fn eval(
    py: Python<'_>,
    dataset: String,
    path: PathBuf,
    methods: Vec<String>,
    model: &Bound<'_, PyAny>,
    out: PathBuf,
    settings: BTreeMap<String, String>,
    hops: Option<u8>,
    limit: Option<usize>,
    sample: Option<usize>,
    seed: u64,
    concurrency: usize,
    retry_errors: bool,
    model_name: Option<String>,
    cache: Option<String>,
    no_cache: bool,
    max_cost: Option<f64>,
    timeout: u64,
    attempts: u32,
    rpm: Option<f64>,
    tpm: Option<f64>,
    prices: Option<PathBuf>,
    prompts: Option<PathBuf>,
    index: Option<PathBuf>,
    corpus_reads: usize,
) -> PyResult<String> {
    let (dataset, questions) =
        py.allow_threads(|| question::select(&dataset, &path, hops, limit, sample, seed))?;
    let env = if index.is_some() { "corpus" } else { "pool" };
    let config = method_config(settings, prompts, index, corpus_reads)?;
    let methods = build_methods(&methods, &config)?;
    let args = ModelArgs {
        cache,
        no_cache,
        max_cost,
        timeout,
        attempts,
        rpm,
        tpm,
        prices,
    };
    let opened = model::open(model, model_name, &args)?;
    let run_config = RunConfig {
        sleuth_version: env!("CARGO_PKG_VERSION").to_string(),
        dataset: dataset.name().to_string(),
        data: vec![path],
        model: opened.name.clone(),
        methods: methods.iter().map(|m| m.name().to_string()).collect(),
        settings: config.settings.clone(),
        method_settings: methods
            .iter()
            .map(|m| (m.name().to_string(), m.settings().clone()))
            .collect(),
        hops,
        limit,
        sample,
        seed: sample.map(|_| seed),
        sample_offset: None,
        shard: None,
        env: Some(env.to_string()),
    };
    let store = RunStore::open(&out, &run_config).map_err(errors::to_py)?;
    let mut runner = Runner::new(opened.stack, opened.name, methods);
    runner.concurrency = concurrency.max(1);
    runner.retry_errors = retry_errors;
    let summary =
        crate::block_on(py, || runner.run(&questions, &store, &Quiet))?.map_err(errors::to_py)?;
    let totals = runner.stack.totals();
    let value = serde_json::json!({
        "planned": summary.planned,
        "skipped": summary.skipped,
        "skipped_errors": summary.skipped_errors,
        "written": summary.written,
        "errors": summary.errors,
        "first_error": summary.first_error,
        "halted": summary.halted,
        "records": store.records_path(),
        "dir": store.dir(),
        "calls": totals.calls,
        "retries": totals.retries,
        "cache_hits": totals.cache_hits,
        "input_tokens": totals.usage.input_tokens,
        "output_tokens": totals.usage.output_tokens,
        "cost_usd": totals.cost_usd,
    });
    Ok(value.to_string())
}

/// The registry's rows: name, setting, summary, the keys each reads.
#[pyfunction]
pub fn methods() -> String {
    let rows: Vec<serde_json::Value> = registry::METHODS
        .iter()
        .map(|m| {
            serde_json::json!({
                "name": m.name,
                "setting": m.setting.name(),
                "corpus": m.corpus,
                "summary": m.summary,
                "reads": m.reads(),
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}
