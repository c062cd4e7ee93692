//! Runs methods over questions with bounded concurrency and writes one record per
//! finished question × method, resuming where an earlier run of the same directory
//! stopped.
//!
//! Each episode gets its own metered session of the model stack, so its record carries
//! exactly its own retries and billed cost. A call refused by the run's cost budget
//! halts the run cleanly: that question is not recorded (a resumed run with a larger
//! budget answers it) and no new question starts.
//!
//! Memory follows what is in flight, not the run's size (issue 32): questions come
//! from a compact index ([`Questions`]: offsets, no ids) and are read when their episode
//! starts, episodes are created as slots free up, each record is written and dropped,
//! and the resume check holds only the earlier records' keys. `run-bench`
//! (crates/sleuth-bench) measures it; the README's run-bench section has the figures.
//!
//! A batched stack (`--batch`) runs the same episodes in lock-step rounds: the stack's
//! [`BatchRounds`] parks each call, and its round driver, polled here beside the
//! episodes, submits a round once every episode in flight waits on a call. Episodes do
//! not know; each still ends in its own record, the resume check is the same, and the
//! batches a killed run had paid for are read back from the run directory's journal.
//! Measured with `batch-bench` (crates/sleuth-bench; 1,000 episodes, ReAct, 10 turns,
//! a batch API answering from memory): a round costs the runner 46-66 ms of CPU on top
//! of the episodes' own 46-47 ms (the README's table, 2026-12-07).

use super::record::RecordContext;
use super::store::{Recorded, RunStore};
use super::RunRecord;
use crate::data::{Question, Questions};
use crate::llm::batch::{BatchRounds, RoundReport};
use crate::llm::{ChatModel, LlmError, ModelStack};
use crate::methods::{AgentError, ErrorKind, RegisteredMethod, RunContext, TurnObserver};
use crate::Result;
use futures::future::Either;
use futures::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Told about progress as the run goes (a progress bar, plain lines, or nothing).
pub trait Progress: Send + Sync {
    fn start(&self, _total: usize, _already_done: usize) {}
    fn record(&self, _record: &RunRecord) {}
    /// A batched run's batch changed status or counts (`--batch`).
    fn batch(&self, _report: &RoundReport) {}
    fn finish(&self) {}
}

/// No progress output.
pub struct Quiet;
impl Progress for Quiet {}

pub struct Runner {
    pub stack: Arc<ModelStack>,
    pub model_name: String,
    pub methods: Vec<Arc<RegisteredMethod>>,
    pub concurrency: usize,
    pub retry_errors: bool,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub planned: usize,
    /// Planned episodes already recorded by an earlier run of the directory.
    pub skipped: usize,
    /// Of those, how many ended in an error (kept until `retry_errors`).
    pub skipped_errors: usize,
    pub written: usize,
    pub errors: usize,
    /// The first error message of this run (else of a skipped record), for a summary
    /// line.
    pub first_error: Option<String>,
    /// The kind of this run's first error (`None` when it wrote none).
    pub first_error_kind: Option<ErrorKind>,
    /// Set when the cost budget stopped the run early.
    pub halted: Option<String>,
}

impl Runner {
    pub fn new(
        stack: ModelStack,
        model_name: impl Into<String>,
        methods: Vec<Arc<RegisteredMethod>>,
    ) -> Self {
        Runner {
            stack: Arc::new(stack),
            model_name: model_name.into(),
            methods,
            concurrency: 4,
            retry_errors: false,
        }
    }

    /// Runs every method on every question not yet recorded in `store`. Episodes start
    /// as slots free up, each reading its question then ([`Questions::get`]) and
    /// dropping it with its record, so what the run holds is what is in flight.
    pub async fn run(
        &self,
        questions: &Questions,
        store: &RunStore,
        progress: &dyn Progress,
    ) -> Result<RunSummary> {
        let done: Recorded = store.prepare_resume(self.retry_errors)?;
        let planned = questions.len() * self.methods.len();
        let mut summary = RunSummary {
            planned,
            ..RunSummary::default()
        };
        let mut first_skipped_error = None;
        // (question, method) pairs already recorded, by position; the ids are read from
        // the questions' file once each, and only when resuming.
        let methods = self.methods.len();
        let mut skip = vec![false; if done.is_empty() { 0 } else { planned }];
        if !done.is_empty() {
            for i in 0..questions.len() {
                let id = questions.id(i)?;
                for (k, m) in self.methods.iter().enumerate() {
                    let Some(error) = done.get(&(id.to_string(), m.name().to_string())) else {
                        continue;
                    };
                    skip[i * methods + k] = true;
                    summary.skipped += 1;
                    if let Some(e) = error {
                        summary.skipped_errors += 1;
                        first_skipped_error.get_or_insert_with(|| e.clone());
                    }
                }
            }
        }
        let skip = &skip;
        let jobs = (0..questions.len())
            .flat_map(|i| self.methods.iter().enumerate().map(move |(k, m)| (i, k, m)))
            .filter(|(i, k, _)| skip.is_empty() || !skip[i * methods + k])
            .map(|(i, _, m)| (i, m));
        progress.start(planned, summary.skipped);
        let halt = AtomicBool::new(false);
        let mut writer = store.writer()?;
        let rounds = self.stack.batch_rounds().map(Arc::as_ref);
        let seen = |r: &RoundReport| progress.batch(r);
        if let Some(rounds) = rounds {
            let to_run = planned - summary.skipped;
            let cached = self.stack.has_cache();
            rounds
                .start(store.dir(), to_run, self.concurrency, cached, &seen)
                .await?;
        }
        {
            let results = futures::stream::iter(jobs)
                .map(|(i, method)| self.run_one(questions, i, method.clone(), &halt, rounds))
                .buffer_unordered(self.concurrency.max(1));
            let drain = drain(results, store, &mut writer, &mut summary, progress);
            match rounds {
                None => drain.await?,
                Some(rounds) => beside(drain, rounds.drive(&seen)).await?,
            }
        }
        progress.finish();
        if summary.first_error.is_none() {
            summary.first_error = first_skipped_error;
        }
        Ok(summary)
    }

    async fn run_one(
        &self,
        questions: &Questions,
        i: usize,
        method: Arc<RegisteredMethod>,
        halt: &AtomicBool,
        rounds: Option<&BatchRounds>,
    ) -> Result<Outcome> {
        let _ended = EpisodeEnd(rounds);
        if halt.load(Ordering::SeqCst) {
            return Ok(Outcome::Skipped);
        }
        let question = questions.get(i)?;
        let outcome = run_episode(&self.stack, &self.model_name, &question, &method, None).await;
        if matches!(outcome, Outcome::Halted(_)) {
            halt.store(true, Ordering::SeqCst);
        }
        Ok(outcome)
    }
}

/// Runs the episodes' `drain` with a batched run's round `drive` beside it: either
/// failing stops both, and the driver ends once every episode has.
async fn beside(
    drain: impl std::future::Future<Output = Result<()>>,
    drive: impl std::future::Future<Output = std::result::Result<(), LlmError>>,
) -> Result<()> {
    futures::pin_mut!(drain, drive);
    match futures::future::select(drain, drive).await {
        Either::Left((drained, drive)) => {
            drained?;
            drive.await?;
        }
        Either::Right((driven, drain)) => {
            driven?;
            drain.await?;
        }
    }
    Ok(())
}

/// Writes each episode's record as it comes.
async fn drain(
    mut results: impl futures::Stream<Item = Result<Outcome>> + Unpin,
    store: &RunStore,
    writer: &mut super::store::RecordWriter,
    summary: &mut RunSummary,
    progress: &dyn Progress,
) -> Result<()> {
    while let Some(outcome) = results.next().await {
        match outcome? {
            Outcome::Record(mut record) => {
                record.conditions = Some(store.config().digest_for(&record.method));
                writer.append(&record)?;
                summary.written += 1;
                if let Some(e) = &record.error {
                    summary.errors += 1;
                    if summary.first_error.is_none() {
                        summary.first_error = Some(e.clone());
                        summary.first_error_kind = record.error_kind;
                    }
                }
                progress.record(&record);
            }
            Outcome::Halted(reason) => {
                summary.halted.get_or_insert(reason);
            }
            Outcome::Skipped => {}
        }
    }
    Ok(())
}

/// Tells a batched run's rounds that an episode has ended, however it ended (a
/// dropped episode included), so no round waits for it.
struct EpisodeEnd<'a>(Option<&'a BatchRounds>);

impl Drop for EpisodeEnd<'_> {
    fn drop(&mut self) {
        if let Some(rounds) = self.0 {
            rounds.finished();
        }
    }
}

/// Runs one method on one question on its own metered session of `stack` and turns the
/// episode (or the error, with its partial episode) into a record. `eval`, `ask` and
/// `demo` all run episodes through here.
pub async fn run_episode(
    stack: &ModelStack,
    model_name: &str,
    question: &Question,
    method: &RegisteredMethod,
    observer: Option<Arc<dyn TurnObserver>>,
) -> Outcome {
    let session = stack.session_for(method.name());
    let context = RunContext {
        model: session.clone() as Arc<dyn ChatModel>,
        observer,
    };
    let outcome = method.run(question, &context).await;
    let stats = session.stats().snapshot();
    let ctx = RecordContext {
        method: method.name(),
        settings: method.settings(),
        model: model_name,
        retries: stats.retries as u32,
        cost_usd: stats.cost_usd,
        constraints_dropped: stats.constraints_dropped,
        batched_calls: stats.batched,
    };
    // The first attempt's cost at the prices the session bills by (the same per-call
    // sum: cost is linear in the billed tokens).
    let price = |e: &crate::methods::Episode| {
        e.outputs.attempts.first().map(|a| {
            let id = crate::llm::middleware::price_id(session.name());
            stack.cost_usd(id, &a.billed_usage)
        })
    };
    // EIR App. D.5: the recorded tokens at the fixed list prices, beside the billed cost.
    let list = |input: u64, output: u64| {
        let id = crate::llm::middleware::price_id(session.name());
        stack.price_table().list_cost_usd(id, input, output)
    };
    let priced = |mut record: RunRecord, first: Option<f64>| {
        record.list_cost_usd = list(record.input_tokens, record.output_tokens);
        if let (Some(f), Some(cost)) = (record.first_attempt.as_mut(), first) {
            f.cost_usd = cost;
        }
        if let Some(f) = record.first_attempt.as_mut() {
            f.list_cost_usd = list(f.input_tokens, f.output_tokens);
        }
        Box::new(record)
    };
    match outcome {
        Ok(episode) => {
            let first = price(&episode);
            Outcome::Record(priced(
                RunRecord::from_episode(question, episode, &ctx),
                first,
            ))
        }
        Err(AgentError::Llm {
            source: LlmError::Refused(reason),
            ..
        }) => Outcome::Halted(reason),
        Err(err) => {
            let message = err.to_string();
            let partial = err.partial().cloned().unwrap_or_default();
            let first = price(&partial);
            let mut record = RunRecord::from_episode(question, partial, &ctx);
            record.error = Some(message);
            record.error_kind = Some(err.kind());
            Outcome::Record(priced(record, first))
        }
    }
}

/// What one episode left.
pub enum Outcome {
    Record(Box<RunRecord>),
    /// The cost budget refused a call: nothing is recorded for this question.
    Halted(String),
    /// Not started (the run had already halted).
    Skipped,
}
