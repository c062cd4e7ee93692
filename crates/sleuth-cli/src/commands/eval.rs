//! `sleuth eval`: every method on every selected question, one record per line.

use crate::progress::EvalProgress;
use crate::resolve::{self, MethodArgs, ModelArgs, QuestionArgs};
use anyhow::Result;
use sleuth::eval::{RunConfig, RunStore, Runner};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub questions: QuestionArgs,
    /// Comma-separated method names, e.g. react,sleuth.
    #[arg(long)]
    pub methods: String,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub method: MethodArgs,
    /// Questions answered at the same time (default 4; 1 for local: models, whose one
    /// inference thread would otherwise thrash its prefix cache between questions).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Run again the questions whose earlier record ended in an error.
    #[arg(long)]
    pub retry_errors: bool,
    /// Run directory: records.jsonl and run.json (resumed when it exists).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let questions = args.questions.load()?;
    let config = args.method.config()?;
    let methods = resolve::methods(&args.methods, &config)?;
    let stack = args.model.open_stack()?;
    let run_config = RunConfig {
        sleuth_version: env!("CARGO_PKG_VERSION").to_string(),
        dataset: args.questions.dataset()?.name().to_string(),
        data: vec![args.questions.data.clone()],
        model: args.model.model.clone(),
        methods: methods.iter().map(|m| m.name().to_string()).collect(),
        settings: config.settings.clone(),
        hops: args.questions.hops,
        limit: args.questions.limit,
        sample: args.questions.sample,
        seed: args.questions.sample.map(|_| args.questions.seed),
        shard: args.questions.shard.clone(),
        env: Some(args.method.env.clone()),
    };
    let store = RunStore::open(&args.out, &run_config)?;
    let mut runner = Runner::new(stack, args.model.model.clone(), methods);
    runner.concurrency = args
        .concurrency
        .unwrap_or_else(|| default_concurrency(&args.model.model));
    runner.retry_errors = args.retry_errors;
    let progress = EvalProgress::new();
    let summary =
        tokio::runtime::Runtime::new()?.block_on(runner.run(&questions, &store, &progress))?;
    eprintln!(
        "{} records written to {} ({} already there, {} with errors)",
        summary.written,
        store.records_path().display(),
        summary.skipped,
        summary.errors
    );
    let totals = runner.stack.totals();
    eprintln!(
        "model calls {} (retries {}, cache hits {}), tokens {} in / {} out, billed ${:.4}",
        totals.calls,
        totals.retries,
        totals.cache_hits,
        totals.usage.input_tokens,
        totals.usage.output_tokens,
        totals.cost_usd
    );
    if totals.constraints_dropped > 0 {
        eprintln!(
            "{} calls ran without their output constraint: the server refused it (records say so in extra.constraints_dropped; see the server preset)",
            totals.constraints_dropped
        );
    }
    if let Some(reason) = &summary.halted {
        anyhow::bail!("stopped before exceeding the cost budget ({reason}); rerun with a larger --max-cost to continue");
    }
    if summary.written > 0 && summary.errors == summary.written {
        let first = summary.first_error.unwrap_or_default();
        anyhow::bail!("every question failed (first error: {first}); check the model endpoint and key, then rerun with --retry-errors");
    }
    Ok(())
}

/// Questions in flight by default: a provider serves requests in parallel, the embedded
/// model serves one at a time and reuses the KV cache only within a question's sequence.
fn default_concurrency(model: &str) -> usize {
    match sleuth::llm::ModelSpec::parse(model) {
        Ok(sleuth::llm::ModelSpec::Local { .. }) => 1,
        _ => 4,
    }
}
