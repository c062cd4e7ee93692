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
//! from a compact index ([`Questions`]) and are read when their episode starts,
//! episodes are created as slots free up, each record is written and dropped, and the
//! resume check holds only the earlier records' keys. Measured with `run-bench`
//! (crates/sleuth-bench; ReAct, 10 turns, scripted model, concurrency 4, on the shared
//! 2-core machine): peak RSS 14 MiB at 1,000 questions, 14 MiB at 10,000 and 20-21 MiB
//! at 100,000 (1.48x the 1,000-question run, short of the 1.2x: the index's ~50
//! bytes a question and the duplicate-id check's hashes are what still grows), where it
//! was 101 MiB and 869 MiB at 1,000 and 10,000 before; 62-148 µs a model call, process
//! start and record writing included (167-409 µs before, rising with the run).

use super::record::RecordContext;
use super::store::{Recorded, RunStore};
use super::RunRecord;
use crate::data::{Question, Questions};
use crate::llm::{ChatModel, LlmError, ModelStack};
use crate::methods::{AgentError, RegisteredMethod, RunContext, TurnObserver};
use crate::Result;
use futures::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Told about progress as the run goes (a progress bar, plain lines, or nothing).
pub trait Progress: Send + Sync {
    fn start(&self, _total: usize, _already_done: usize) {}
    fn record(&self, _record: &RunRecord) {}
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
        let recorded = |i: usize, m: &RegisteredMethod| {
            if done.is_empty() {
                return None;
            }
            done.get(&(questions.id(i).to_string(), m.name().to_string()))
        };
        let planned = questions.len() * self.methods.len();
        let mut summary = RunSummary {
            planned,
            ..RunSummary::default()
        };
        let mut first_skipped_error = None;
        for i in 0..questions.len() {
            for m in &self.methods {
                match recorded(i, m) {
                    None => {}
                    Some(error) => {
                        summary.skipped += 1;
                        if let Some(e) = error {
                            summary.skipped_errors += 1;
                            first_skipped_error.get_or_insert_with(|| e.clone());
                        }
                    }
                }
            }
        }
        let jobs = (0..questions.len())
            .flat_map(|i| self.methods.iter().map(move |m| (i, m)))
            .filter(|(i, m)| recorded(*i, m).is_none());
        progress.start(planned, summary.skipped);
        let halt = AtomicBool::new(false);
        let mut writer = store.writer()?;
        let mut results = futures::stream::iter(jobs)
            .map(|(i, method)| self.run_one(questions, i, method.clone(), &halt))
            .buffer_unordered(self.concurrency.max(1));
        while let Some(outcome) = results.next().await {
            match outcome? {
                Outcome::Record(record) => {
                    writer.append(&record)?;
                    summary.written += 1;
                    if let Some(e) = &record.error {
                        summary.errors += 1;
                        summary.first_error.get_or_insert_with(|| e.clone());
                    }
                    progress.record(&record);
                }
                Outcome::Halted(reason) => {
                    summary.halted.get_or_insert(reason);
                }
                Outcome::Skipped => {}
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
    ) -> Result<Outcome> {
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
    let session = stack.session();
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
    };
    // The first attempt's cost at the prices the session bills by (the same per-call
    // sum: cost is linear in the billed tokens).
    let price = |e: &crate::methods::Episode| {
        e.outputs.attempts.first().map(|a| {
            let id = crate::llm::middleware::price_id(session.name());
            stack.price_table().cost_usd(id, &a.billed_usage, false)
        })
    };
    let priced = |mut record: RunRecord, first: Option<f64>| {
        if let (Some(f), Some(cost)) = (record.first_attempt.as_mut(), first) {
            f.cost_usd = cost;
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
