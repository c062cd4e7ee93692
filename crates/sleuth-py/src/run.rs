//! `ask` (one method on one question), `eval` (methods over a selection into a run
//! directory) and `experiment` (a recipe's jobs): the library's application layer
//! (`sleuth::study`), as `sleuth ask`, `eval` and `experiment` call it. This file only
//! converts keyword arguments into the library's types and results into JSON text.

use crate::errors;
use crate::model::{self, ModelArgs};
use crate::question::{self, Given, Question};
use pyo3::prelude::*;
use sleuth::data::Dataset;
use sleuth::eval::analysis::closing_table;
use sleuth::eval::{run_episode, Outcome, Quiet};
use sleuth::methods::registry;
use sleuth::names::Named;
use sleuth::study::{
    CorpusChoice, Experiment, ExperimentOptions, ExperimentRun, ExperimentStop, Finished, Job,
    MethodSetup, Overrides, Plan, Shard,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `--set`, `--prompts`, `--env corpus --index DIR --corpus-reads N`.
fn method_setup(
    names: Vec<String>,
    settings: BTreeMap<String, String>,
    prompts: Option<PathBuf>,
    index: Option<PathBuf>,
    corpus_reads: usize,
) -> MethodSetup {
    MethodSetup {
        names,
        settings,
        prompts,
        corpus: index.map(|index| CorpusChoice {
            index,
            reads: corpus_reads,
        }),
    }
}

/// Runs one method on one question; returns its record as JSON text (an error record
/// too: the wrapper decides how to raise it).
#[pyfunction]
#[pyo3(signature = (method, question, model, *, settings, model_name=None, model_options, prompts=None))]
#[allow(clippy::too_many_arguments)]
pub fn ask(
    py: Python<'_>,
    method: String,
    question: Question,
    model: &Bound<'_, PyAny>,
    settings: BTreeMap<String, String>,
    model_name: Option<String>,
    model_options: ModelArgs,
    prompts: Option<PathBuf>,
) -> PyResult<String> {
    let method = method_setup(vec![method], settings, prompts, None, 6)
        .build()
        .map_err(errors::to_py)?
        .built
        .remove(0);
    let opened = model::open(model, model_name, &model_options)?;
    let name = opened.setup.name().to_string();
    let outcome = crate::block_on(py, || {
        run_episode(&opened.stack, &name, &question.inner, &method, None)
    })?;
    match outcome {
        Outcome::Record(record) => Ok(serde_json::to_string(&record).expect("records serialize")),
        Outcome::Halted(reason) => Err(errors::BudgetExceeded::new_err(format!(
            "stopped before exceeding the cost budget ({reason})"
        ))),
        Outcome::Skipped => unreachable!("a single episode is never skipped"),
    }
}

/// What a finished job did, as the wrapper's `EvalSummary` reads it, with eval's
/// closing table (the library's one fold of the scores, as the CLI prints it; a note
/// instead where the records cannot be read back, so the run's verdict still decides).
fn finished_json(py: Python<'_>, done: &Finished) -> serde_json::Value {
    let (summary, totals) = (&done.summary, &done.totals);
    let mut notes = done.notes.clone();
    let arms = py
        .allow_threads(|| closing_table(&done.dir, &done.methods))
        .unwrap_or_else(|e| {
            notes.push(format!("the records could not be scored: {e}"));
            Vec::new()
        });
    let scores: Vec<serde_json::Value> = arms
        .iter()
        .map(|a| {
            serde_json::json!({
                "method": a.key.method,
                "arm": a.key.name(),
                "n": a.scores.n,
                "em": a.scores.em(),
                "f1": a.scores.f1(),
                "support_f1": a.scores.support_f1(),
                "problems": a.scores.problems.lines(),
            })
        })
        .collect();
    serde_json::json!({
        "planned": summary.planned,
        "skipped": summary.skipped,
        "skipped_errors": summary.skipped_errors,
        "written": summary.written,
        "errors": summary.errors,
        "first_error": summary.first_error,
        "halted": summary.halted,
        "records": done.records,
        "dir": done.dir,
        "calls": totals.calls,
        "retries": totals.retries,
        "cache_hits": totals.cache_hits,
        "input_tokens": totals.usage.input_tokens,
        "output_tokens": totals.usage.output_tokens,
        "cost_usd": totals.cost_usd,
        "notes": notes,
        "verdict": summary.verdict(),
        "scores": scores,
    })
}

/// A plan as JSON: questions, per-method and total estimates.
fn plan_json(plan: &Plan) -> serde_json::Value {
    serde_json::json!({
        "questions": plan.questions,
        "max_calls": plan.budget_calls(),
        "methods": plan.methods.iter().map(|m| serde_json::json!({
            "method": m.method,
            "recorded": m.recorded,
            "calls_per_question": m.usage.calls_per_question,
            "measured_records": m.usage.measured_records,
            "estimate": m.estimate,
        })).collect::<Vec<_>>(),
        "total": plan.total,
    })
}

/// Runs a job, opening its model (a spec or a callable) as the job describes it.
fn run_job(py: Python<'_>, job: &Job, model: &Bound<'_, PyAny>) -> PyResult<Finished> {
    let prepared = py.allow_threads(|| job.prepare()).map_err(errors::to_py)?;
    let opened = model::open_setup(model, job.model.clone())?;
    let done = crate::block_on(py, || prepared.run(job, opened.stack, &Quiet))?;
    done.map_err(errors::to_py)
}

/// Every method over the selected questions into the run directory `out`, resuming it;
/// returns the run's summary as JSON text. The questions come from `dataset` + `path`,
/// or are `questions` (any Python iterable of `Question`, already selected).
#[pyfunction]
#[pyo3(signature = (methods, model, out, *, settings, dataset=None, path=None, questions=None, files=Vec::new(), hops=None, limit=None, sample=None, seed=0, sample_offset=0, concurrency=4, retry_errors=false, model_name=None, model_options, prompts=None, index=None, corpus_reads=6))]
#[allow(clippy::too_many_arguments)]
pub fn eval(
    py: Python<'_>,
    methods: Vec<String>,
    model: &Bound<'_, PyAny>,
    out: PathBuf,
    settings: BTreeMap<String, String>,
    dataset: Option<String>,
    path: Option<PathBuf>,
    questions: Option<Vec<Question>>,
    files: Vec<PathBuf>,
    hops: Option<u8>,
    limit: Option<usize>,
    sample: Option<usize>,
    seed: u64,
    sample_offset: usize,
    concurrency: usize,
    retry_errors: bool,
    model_name: Option<String>,
    model_options: ModelArgs,
    prompts: Option<PathBuf>,
    index: Option<PathBuf>,
    corpus_reads: usize,
) -> PyResult<String> {
    let given = match (questions, dataset, path) {
        (Some(questions), None, None) => Given::Questions { questions, files },
        (None, Some(dataset), Some(path)) => Given::File { dataset, path },
        _ => {
            return Err(errors::DataError::new_err(
                "eval: give either questions, or a dataset with its path",
            ))
        }
    };
    let job = Job {
        selection: question::selection(given, hops, limit, sample, seed, sample_offset)?,
        methods: method_setup(methods, settings, prompts, index, corpus_reads),
        model: model_options.setup_of(model, model_name)?,
        out,
        concurrency: Some(concurrency.max(1)),
        retry_errors,
    };
    let done = run_job(py, &job, model)?;
    Ok(finished_json(py, &done).to_string())
}

/// A recipe's jobs (`sleuth experiment`): with `dry_run`, each job's plan; else each
/// job run into its directory under `out`. Returns JSON text: the recipe's name and
/// description, the output root, and per job its dataset, hops, methods, settings,
/// run directory, plan, and (when run) its summary.
#[pyfunction]
#[pyo3(signature = (file, model, *, out=None, dry_run=false, data_root=None, data=BTreeMap::new(), limit=None, sample=None, seed=None, index=None, on_setup=false, shard=None, model_name=None, model_options))]
#[allow(clippy::too_many_arguments)]
pub fn experiment(
    py: Python<'_>,
    file: PathBuf,
    model: &Bound<'_, PyAny>,
    out: Option<PathBuf>,
    dry_run: bool,
    data_root: Option<PathBuf>,
    data: BTreeMap<String, PathBuf>,
    limit: Option<usize>,
    sample: Option<usize>,
    seed: Option<u64>,
    index: Option<PathBuf>,
    on_setup: bool,
    shard: Option<String>,
    model_name: Option<String>,
    model_options: ModelArgs,
) -> PyResult<String> {
    let mut files = BTreeMap::new();
    for (name, path) in data {
        let dataset: Dataset = name.parse().map_err(errors::data)?;
        files.insert(dataset, path);
    }
    let overrides = Overrides {
        data_root,
        files,
        index,
        sample,
        seed,
    };
    let experiment = Experiment::load(&file, &overrides).map_err(errors::to_py)?;
    let shard = shard
        .as_deref()
        .map(Shard::resolve)
        .transpose()
        .map_err(errors::to_py)?;
    let setup = model_options.setup_of(model, model_name)?;
    let options = ExperimentOptions {
        out,
        shard,
        limit,
        on_setup,
        ..ExperimentOptions::default()
    };
    let run = ExperimentRun::new(experiment, &file, setup, &options).map_err(errors::to_py)?;
    let price = run.running.model.price_check().ok();
    let history = [run.running.out_root.clone()];
    let mut plans = Vec::new();
    for job in &run.jobs {
        plans.push(match &price {
            Some(price) => {
                let prepared = py.allow_threads(|| job.prepare()).map_err(errors::to_py)?;
                Some(plan_json(&prepared.plan(job, price, &history)))
            }
            None => None,
        });
    }
    let mut summaries: Vec<Option<serde_json::Value>> = vec![None; run.jobs.len()];
    if !dry_run {
        run.run(
            |_, _| {},
            |i, job| {
                let done = run_job(py, job, model)?;
                summaries[i] = Some(finished_json(py, &done));
                Ok(done.totals.cost_usd)
            },
        )
        .map_err(|stop| match stop {
            ExperimentStop::Job(e) => e,
            ExperimentStop::Refused(e) => errors::to_py(e),
        })?;
    }
    let experiment = &run.experiment;
    let mut jobs = Vec::new();
    for (((spec, job), plan), summary) in experiment
        .jobs
        .iter()
        .zip(&run.jobs)
        .zip(plans)
        .zip(summaries)
    {
        let sample = job.selection.sample;
        jobs.push(serde_json::json!({
            "dataset": spec.dataset.name(),
            "hops": spec.hops,
            "sample": sample.map(|s| s.size),
            "seed": sample.map(|s| s.seed),
            "setup": spec.setup,
            "methods": spec.methods,
            "settings": spec.settings,
            "out": job.out,
            "plan": plan,
            "summary": summary,
        }));
    }
    Ok(serde_json::json!({
        "name": experiment.name,
        "description": experiment.description,
        "out": run.running.out_root,
        "jobs": jobs,
    })
    .to_string())
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
