//! `sleuth eval`: every method on every selected question, one record per line.

use crate::local::LocalArgs;
use crate::progress::EvalProgress;
use crate::resolve::{MethodArgs, ModelArgs, QuestionArgs};
use anyhow::Result;
use sleuth::eval::Progress;
use sleuth::eval::Verdict;
use sleuth::methods::ErrorKind;
use sleuth::study::{Job, Plan, Prepared};
use std::path::{Path, PathBuf};

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
    /// inference thread would otherwise thrash its prefix cache between questions;
    /// with --batch, as many as one batch holds, so a round is every question's call).
    #[arg(long, value_parser = crate::bounds::count(1..=4096))]
    pub concurrency: Option<usize>,
    /// Run again the questions whose earlier record ended in an error.
    #[arg(long)]
    pub retry_errors: bool,
    /// Send every model call through the provider's batch API (OpenAI Batch API,
    /// Anthropic Message Batches) at half price: the questions advance in lock-step
    /// rounds, one batch per round, answered within the provider's window (up to 24
    /// hours) instead of seconds. Cached responses never enter a batch; the batches
    /// submitted are kept in OUT/batches.jsonl, so a killed run resumes without paying
    /// twice. openai:, openai-compat: (a server with /v1/batches) and anthropic: only.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: seconds before a batch's first status poll; each later poll
    /// waits twice as long, up to 5 minutes (default 5).
    #[arg(long, value_name = "SECS", value_parser = crate::bounds::positive, requires = "batch")]
    pub batch_poll: Option<f64>,
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

impl Args {
    /// The job these flags describe.
    pub fn job(&self) -> Result<Job> {
        let mut selection = self.questions.selection()?;
        if let Some(run) = &self.failures_of {
            selection.ids = Some(sleuth::study::known_failures(run)?);
        }
        let mut model = self.model.setup();
        model.batch = self.batch;
        model.batch_poll = self
            .batch_poll
            .map(|s| std::time::Duration::from_secs_f64(s.min(86_400.0)));
        Ok(Job {
            selection,
            methods: self.method.setup(&self.methods)?,
            model,
            out: self.out.clone(),
            concurrency: self.concurrency,
            retry_errors: self.retry_errors,
        })
    }
}

pub fn run(args: Args) -> Result<()> {
    let job = args.job()?;
    if args.dry_run {
        let prepared = prepare(&job, args.failures_of.as_deref())?;
        if prepared.selected.questions.is_empty() {
            return Ok(());
        }
        let price = crate::cost::price_check(&job.model)?;
        let plan = prepared.plan(&job, &price, std::slice::from_ref(&job.out));
        let batch = job.model.batch.then_some(price.pricing);
        return dry_run(&plan, &job.model.spec, batch);
    }
    run_job(&job, &args.model.local, args.failures_of.as_deref()).map(|_| ())
}

/// The job prepared; nothing selected is an error when an earlier run's failures were
/// asked for, and a note for an empty shard.
fn prepare(job: &Job, failures_of: Option<&Path>) -> Result<Prepared> {
    let prepared = job.prepare()?;
    for note in &prepared.selected.notes {
        eprintln!("warning: {note}");
    }
    if prepared.selected.questions.is_empty() {
        if let Some(run) = failures_of {
            anyhow::bail!(
                "{} has no known failures among the selected questions",
                run.display()
            );
        }
        // Only a shard can be empty (selection refuses an empty filter).
        if let Some(shard) = job.selection.shard {
            eprintln!("shard {shard} has no questions of this selection: nothing to do");
        }
    }
    Ok(prepared)
}

/// Runs a job into its directory with `eval`'s progress and closing summary (each job
/// of `sleuth experiment` too); returns the dollars it billed.
pub fn run_job(job: &Job, local: &LocalArgs, failures_of: Option<&Path>) -> Result<f64> {
    let prepared = prepare(job, failures_of)?;
    if prepared.selected.questions.is_empty() {
        return Ok(0.0);
    }
    // The model first: a spec that cannot be opened (an unset key variable) is the
    // one error to show, before any price warning.
    let stack = crate::resolve::open_stack(&job.model, local)?;
    crate::cost::price_check(&job.model)?;
    let progress = EvalProgress::new();
    let before = recorded(&job.out);
    let run = tokio::runtime::Runtime::new()?.block_on(async {
        tokio::select! {
            done = prepared.run(job, stack, &progress) => Ok(done),
            signal = crate::Interrupted::wait() => Err(signal),
        }
    });
    let done = match run {
        Ok(done) => done,
        Err(signal) => {
            progress.finish();
            return Err(interrupted(job, before, signal));
        }
    };
    let done = done?;
    let summary = &done.summary;
    eprintln!(
        "{} records written to {} ({} with errors); {} already there ({} with errors)",
        summary.written,
        done.records.display(),
        summary.errors,
        summary.skipped,
        summary.skipped_errors
    );
    let totals = &done.totals;
    // EIR App. D.5: the papers' tables price tokens at fixed list prices; what was
    // billed (cache hits free, cached input cheaper) is said beside it when it differs.
    let list = if (totals.list_cost_usd - totals.cost_usd).abs() > 5e-5 {
        format!(" (${:.4} at list prices)", totals.list_cost_usd)
    } else {
        String::new()
    };
    eprintln!(
        "model calls {} (retries {}, cache hits {}), tokens {} in / {} out, billed ${:.4}{list}",
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
    if totals.usage_unknown > 0 {
        eprintln!(
            "warning: {} replies reported token usage no call has (negative, fractional or above {} tokens); they were kept and their tokens counted as 0, so the totals above are lower bounds (records say so in usage_unknown)",
            totals.usage_unknown,
            sleuth::llm::MAX_TOKENS_PER_CALL
        );
    }
    if totals.constraints_dropped > 0 {
        eprintln!(
            "{} calls ran without their output constraint: the server refused it (records say so in constraints_dropped; see the server preset)",
            totals.constraints_dropped
        );
    }
    print_scores(&done.dir, &done.methods)?;
    verdict(summary.verdict(), &done.dir)?;
    Ok(totals.cost_usd)
}

/// Records in a run directory (0 before its first), counted a line at a time.
fn recorded(dir: &Path) -> usize {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(dir.join(sleuth::eval::store::RECORDS)) else {
        return 0;
    };
    let mut reader = std::io::BufReader::new(file);
    let (mut count, mut line) = (0, Vec::new());
    // Lines as `str::lines` counts them: a last line without its newline counts; a
    // line of blanks does not.
    while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if !line.iter().all(u8::is_ascii_whitespace) {
            count += 1;
        }
        line.clear();
    }
    count
}

/// Ctrl-C: the records appended so far stay (each is one whole line, and a resumed run
/// repairs a cut last line); say how many, how to resume, and what they score so far.
fn interrupted(job: &Job, before: usize, signal: crate::Interrupted) -> anyhow::Error {
    let kept = recorded(&job.out);
    let again: Vec<String> = std::env::args()
        .map(|a| sleuth::llm::middleware::redact(&a))
        .collect();
    eprintln!(
        "{signal}: {kept} records kept in {} ({} written by this run); resume with:\n  {}",
        job.out.display(),
        kept.saturating_sub(before),
        sleuth::terminal::terminal_safe(&again.join(" "))
    );
    if kept > 0 {
        if let Err(e) = print_scores(&job.out, &job.methods.names) {
            eprintln!("(the records could not be scored: {e})");
        }
    }
    signal.into()
}

/// The run's verdict in the CLI's words: a failure is an error (a non-zero exit),
/// leftover errors a hint.
fn verdict(verdict: Verdict, dir: &Path) -> Result<()> {
    match verdict {
        Verdict::Done { errors: 0 } => {}
        Verdict::Done { errors } => {
            eprintln!("{errors} records ended in errors; rerun with --retry-errors to run them again")
        }
        Verdict::Halted { reason } => anyhow::bail!(
            "stopped before exceeding the cost budget ({reason}); rerun with a larger --max-cost to continue"
        ),
        Verdict::AllFailed { first_error, cause } => {
            let check = match cause {
                ErrorKind::Template => "fix the prompt template (--prompts)",
                ErrorKind::Model => "check the model endpoint and key",
                ErrorKind::Method => "check the method's settings (--set)",
            };
            anyhow::bail!(
                "every question failed (first error: {first_error}); {check}, then rerun with --retry-errors"
            );
        }
        Verdict::NothingRan { skipped, first_error } => anyhow::bail!(
            "nothing ran: all {skipped} selected records in {} ended in errors (first error: {first_error}); rerun with --retry-errors to run them again",
            dir.display()
        ),
    }
    Ok(())
}

/// `--dry-run`: one row per method, then the total (at batch prices too, with the
/// pricing of a batched run).
fn dry_run(plan: &Plan, model: &str, batch: Option<sleuth::eval::estimate::Pricing>) -> Result<()> {
    use sleuth::report::table::Cell;
    let rows = plan
        .methods
        .iter()
        .map(|m| crate::cost::Row {
            label: vec![
                Cell::text(&m.method),
                Cell::Int((plan.questions - m.recorded) as u64),
            ],
            estimate: Some(m.estimate),
        })
        .collect();
    let title = format!("Estimated cost with {model}");
    let table = crate::cost::table(&title, &["method", "questions to run"], rows);
    print!("{}", table.to_markdown());
    print!(
        "\n{}",
        crate::cost::footer(&plan.total, model, &plan.usages())
    );
    if let Some(pricing) = batch {
        print!(
            "{}",
            crate::cost::batch_footer(&plan.total, pricing, plan.rounds())
        );
    }
    let (_, recorded) = plan.episodes();
    if recorded > 0 {
        println!("{recorded} episodes already recorded in the run directory are not counted (they are skipped when it resumes)");
    }
    Ok(())
}

/// The run directory's scores per method (every record there, earlier runs' too):
/// EM, F1 and, for methods that cite, Support F1, as `report` computes them, folded a
/// record at a time (the library's closing table).
fn print_scores(dir: &Path, methods: &[String]) -> Result<()> {
    let arms = sleuth::eval::analysis::closing_table(dir, methods)?;
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
        "{:<width$} {:>5} {:>6} {:>6} {:>11}  problems",
        "method", "n", "EM", "F1", "support F1"
    );
    for arm in arms {
        let s = &arm.scores;
        let support = s
            .support_f1()
            .map_or_else(|| "-".to_string(), |f| format!("{f:.1}"));
        let problems = s.problems.lines();
        eprintln!(
            "{:<width$} {:>5} {:>6.1} {:>6.1} {:>11}  {}",
            sleuth::terminal::terminal_safe(&arm.key.name()),
            s.n,
            s.em(),
            s.f1(),
            support,
            if problems.is_empty() {
                "-".to_string()
            } else {
                problems.join(", ")
            }
        );
    }
    Ok(())
}
