//! `sleuth eval`: every method on every selected question, one record per line.

use crate::progress::EvalProgress;
use crate::resolve::{self, MethodArgs, ModelArgs, QuestionArgs};
use anyhow::Result;
use sleuth::eval::{RunConfig, RunStore, RunSummary, Runner};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub questions: QuestionArgs,
    /// Comma-separated method names, e.g. react,sleuth (`sleuth methods` lists them).
    #[arg(long)]
    pub methods: String,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub method: MethodArgs,
    /// Questions answered at the same time (default 4; 1 for local: models, whose one
    /// inference thread would otherwise thrash its prefix cache between questions).
    #[arg(long, value_parser = crate::bounds::count(1..=4096))]
    pub concurrency: Option<usize>,
    /// Run again the questions whose earlier record ended in an error.
    #[arg(long)]
    pub retry_errors: bool,
    /// Keep only the known failures of an earlier EIR run (its directory or records
    /// file): questions its `eir` records got wrong (EM) without reading every
    /// annotated paragraph (EIR paper App. F.2, F.3; run them with eir-recover).
    #[arg(long, value_name = "RUN")]
    pub failures_of: Option<PathBuf>,
    /// Run directory: records.jsonl and run.json (resumed when it exists).
    #[arg(long)]
    pub out: PathBuf,
    /// Print the estimated model calls, tokens and dollars per method and in total
    /// (from earlier records in --out when present, else the methods' budgets and
    /// default token counts); run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The ids of `run`'s EIR EM errors that missed annotated support.
fn known_failures(run: &std::path::Path) -> Result<std::collections::BTreeSet<String>> {
    let file = if run.is_dir() {
        run.join("records.jsonl")
    } else {
        run.to_path_buf()
    };
    let records = sleuth::eval::store::read_records(&file)?;
    Ok(records
        .into_iter()
        .filter(|r| r.method == "eir" && r.em < 1.0)
        .filter(|r| sleuth::eval::analysis::missing_gold(r).is_some_and(|m| m > 0))
        .map(|r| r.id)
        .collect())
}

pub fn run(args: Args) -> Result<()> {
    let mut questions = args.questions.load()?;
    let (dataset, data) = args.questions.resolved()?;
    if let Some(run) = &args.failures_of {
        let failures = known_failures(run)?;
        questions.retain(|q| failures.contains(&q.id));
        if questions.is_empty() {
            anyhow::bail!(
                "{} has no known failures among the selected questions",
                run.display()
            );
        }
    }
    if questions.is_empty() {
        // Only a shard can be empty (load refuses an empty selection).
        if let Some(shard) = args.questions.shard()? {
            eprintln!("shard {shard} has no questions of this selection: nothing to do");
        }
        return Ok(());
    }
    let config = args.method.config()?;
    let methods = resolve::methods(&args.methods, &config)?;
    let pricing = || {
        crate::cost::pricing(
            &args.model.model,
            args.model.prices.as_deref(),
            args.model.max_cost,
        )
    };
    if args.dry_run {
        let (_, pricing) = pricing()?;
        return dry_run(&args, questions.len(), &methods, pricing);
    }
    // The model first: a spec that cannot be opened (an unset key variable) is the
    // one error to show, before any price warning.
    let stack = args.model.open_stack()?;
    pricing()?;
    let run_config = RunConfig {
        sleuth_version: env!("CARGO_PKG_VERSION").to_string(),
        dataset: dataset.name().to_string(),
        data: vec![data],
        model: args.model.model.clone(),
        methods: methods.iter().map(|m| m.name().to_string()).collect(),
        settings: config.settings.clone(),
        method_settings: methods
            .iter()
            .map(|m| (m.name().to_string(), m.settings().clone()))
            .collect(),
        hops: args.questions.hops,
        limit: args.questions.limit,
        sample: args.questions.sample,
        seed: args.questions.sample.map(|_| args.questions.seed),
        sample_offset: args.questions.sample_offset,
        shard: args.questions.shard()?.map(|s| s.to_string()),
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
        "{} records written to {} ({} with errors); {} already there ({} with errors)",
        summary.written,
        store.records_path().display(),
        summary.errors,
        summary.skipped,
        summary.skipped_errors
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
    if totals.truncated + totals.refusals > 0 {
        eprintln!("{} calls truncated by the output-token limit, {} refused (records list them in call_stops)", totals.truncated, totals.refusals);
    }
    if totals.constraints_dropped > 0 {
        eprintln!(
            "{} calls ran without their output constraint: the server refused it (records say so in constraints_dropped; see the server preset)",
            totals.constraints_dropped
        );
    }
    print_scores(&store, &run_config.methods)?;
    if let Some(reason) = &summary.halted {
        anyhow::bail!("stopped before exceeding the cost budget ({reason}); rerun with a larger --max-cost to continue");
    }
    failures(&summary, &store)
}

/// A run whose selected questions all ended in errors is a failure, whether they
/// failed now or in an earlier run of the directory (a re-run skips error records
/// unless told to retry them); leftover errors in a run that otherwise worked are a
/// hint, not a failure.
fn failures(summary: &RunSummary, store: &RunStore) -> Result<()> {
    let errors = summary.errors + summary.skipped_errors;
    let first = summary.first_error.as_deref().unwrap_or_default();
    let all_failed = summary.errors == summary.written && summary.skipped_errors == summary.skipped;
    if summary.written > 0 && all_failed {
        let check = if sleuth::methods::PromptSet::is_template_error(first) {
            "fix the prompt template (--prompts)"
        } else {
            "check the model endpoint and key"
        };
        anyhow::bail!(
            "every question failed (first error: {first}); {check}, then rerun with --retry-errors"
        );
    }
    if summary.written == 0 && summary.skipped > 0 && all_failed {
        anyhow::bail!(
            "nothing ran: all {} selected records in {} ended in errors (first error: {first}); rerun with --retry-errors to run them again",
            summary.skipped,
            store.dir().display()
        );
    }
    if errors > 0 {
        eprintln!("{errors} records ended in errors; rerun with --retry-errors to run them again");
    }
    Ok(())
}

/// `--dry-run`: one row per method, then the total.
fn dry_run(
    args: &Args,
    questions: usize,
    methods: &[std::sync::Arc<sleuth::methods::RegisteredMethod>],
    pricing: sleuth::eval::estimate::Pricing,
) -> Result<()> {
    use sleuth::eval::estimate::{Estimate, Usage};
    use sleuth::report::table::Cell;
    let history = crate::cost::history(std::slice::from_ref(&args.out));
    let mut rows = Vec::new();
    let mut usages = Vec::new();
    let mut estimates = Vec::new();
    for m in methods {
        let budget = crate::commands::experiment::calls_per_episode(m.name(), m.settings())?;
        let usage = Usage::of(m.name(), &args.model.model, &history, budget);
        let e = Estimate::new(questions, &usage, pricing);
        rows.push(crate::cost::Row {
            label: vec![Cell::text(m.name()), Cell::Int(questions as u64)],
            estimate: Some(e),
        });
        usages.push((m.name().to_string(), usage));
        estimates.push(e);
    }
    let title = format!("Estimated cost with {}", args.model.model);
    let table = crate::cost::table(&title, &["method", "questions"], rows);
    print!("{}", table.to_markdown());
    print!(
        "\n{}",
        crate::cost::footer(&Estimate::total(&estimates), &args.model.model, &usages)
    );
    Ok(())
}

/// The run directory's scores per method (every record there, earlier runs' too):
/// EM, F1 and, for methods that cite, Support F1, as `report` computes them.
fn print_scores(store: &RunStore, methods: &[String]) -> Result<()> {
    let set = sleuth::eval::analysis::load(&[store.dir().to_path_buf()])?;
    let mut arms: Vec<&sleuth::eval::analysis::Arm> = set
        .arms
        .iter()
        .filter(|a| methods.contains(&a.key.method))
        .collect();
    arms.sort_by_key(|a| methods.iter().position(|m| m == &a.key.method));
    if arms.is_empty() {
        return Ok(());
    }
    let width = arms
        .iter()
        .map(|a| a.key.name().len())
        .max()
        .unwrap_or(6)
        .max(6);
    eprintln!(
        "{:<width$} {:>5} {:>6} {:>6} {:>11}",
        "method", "n", "EM", "F1", "support F1"
    );
    for arm in arms {
        let s = sleuth::eval::analysis::Summary::of_arm(arm);
        let support = s
            .evidence
            .as_ref()
            .map_or_else(|| "-".to_string(), |e| format!("{:.1}", e.support_f1));
        eprintln!(
            "{:<width$} {:>5} {:>6.1} {:>6.1} {:>11}",
            sleuth::terminal::terminal_safe(&s.arm.name()),
            s.n,
            s.em,
            s.f1,
            support
        );
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
