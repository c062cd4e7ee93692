//! Runs methods over questions with bounded concurrency and writes one record per
//! finished question × method, resuming where an earlier run of the same directory
//! stopped.
//!
//! Each episode gets its own metered session of the model stack, so its record carries
//! exactly its own retries and billed cost. A call refused by the run's cost budget
//! halts the run cleanly: that question is not recorded (a resumed run with a larger
//! budget answers it) and no new question starts.

use super::record::RecordContext;
use super::store::{RecordKey, RunStore};
use super::RunRecord;
use crate::data::Question;
use crate::llm::{ChatModel, LlmError, ModelStack};
use crate::methods::{AgentError, Method, RunContext};
use crate::Result;
use futures::StreamExt;
use std::collections::HashSet;
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
    pub methods: Vec<Arc<dyn Method>>,
    pub concurrency: usize,
    pub retry_errors: bool,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub planned: usize,
    pub skipped: usize,
    pub written: usize,
    pub errors: usize,
    /// The first error message of this run, for a summary line.
    pub first_error: Option<String>,
    /// Set when the cost budget stopped the run early.
    pub halted: Option<String>,
}

impl Runner {
    pub fn new(
        stack: ModelStack,
        model_name: impl Into<String>,
        methods: Vec<Arc<dyn Method>>,
    ) -> Self {
        Runner {
            stack: Arc::new(stack),
            model_name: model_name.into(),
            methods,
            concurrency: 4,
            retry_errors: false,
        }
    }

    /// Runs every method on every question not yet recorded in `store`.
    pub async fn run(
        &self,
        questions: &[Question],
        store: &RunStore,
        progress: &dyn Progress,
    ) -> Result<RunSummary> {
        let done: HashSet<RecordKey> = store.prepare_resume(self.retry_errors)?;
        let mut jobs = Vec::new();
        for q in questions {
            for m in &self.methods {
                if !done.contains(&(q.id.clone(), m.name().to_string())) {
                    jobs.push((q, m.clone()));
                }
            }
        }
        let planned = questions.len() * self.methods.len();
        let mut summary = RunSummary {
            planned,
            skipped: planned - jobs.len(),
            ..RunSummary::default()
        };
        progress.start(planned, summary.skipped);
        let halt = AtomicBool::new(false);
        let mut writer = store.writer()?;
        let mut results = futures::stream::iter(jobs)
            .map(|(question, method)| self.run_one(question, method, &halt))
            .buffer_unordered(self.concurrency.max(1));
        while let Some(outcome) = results.next().await {
            match outcome {
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
        Ok(summary)
    }

    async fn run_one(
        &self,
        question: &Question,
        method: Arc<dyn Method>,
        halt: &AtomicBool,
    ) -> Outcome {
        if halt.load(Ordering::SeqCst) {
            return Outcome::Skipped;
        }
        let session = self.stack.session();
        let context = RunContext {
            model: session.clone() as Arc<dyn ChatModel>,
            observer: None,
        };
        let outcome = method.run(question, &context).await;
        let stats = session.stats().snapshot();
        let ctx = RecordContext {
            method: method.name(),
            model: &self.model_name,
            retries: stats.retries as u32,
            cost_usd: stats.cost_usd,
        };
        match outcome {
            Ok(episode) => {
                let mut record = RunRecord::from_episode(question, episode, &ctx);
                note_dropped_constraints(&mut record, stats.constraints_dropped);
                Outcome::Record(Box::new(record))
            }
            Err(AgentError::Llm {
                source: LlmError::Refused(reason),
                ..
            }) => {
                halt.store(true, Ordering::SeqCst);
                Outcome::Halted(reason)
            }
            Err(err) => {
                let message = err.to_string();
                let partial = err.partial().cloned().unwrap_or_default();
                let mut record = RunRecord::from_episode(question, partial, &ctx);
                record.error = Some(message);
                note_dropped_constraints(&mut record, stats.constraints_dropped);
                Outcome::Record(Box::new(record))
            }
        }
    }
}

/// Marks a record whose calls ran without the output constraint the method asked for
/// (the server refused it), so a report can tell constrained from unconstrained runs.
fn note_dropped_constraints(record: &mut RunRecord, dropped: u64) {
    if dropped > 0 {
        record
            .extra
            .insert("constraints_dropped".into(), dropped.into());
    }
}

enum Outcome {
    Record(Box<RunRecord>),
    Halted(String),
    Skipped,
}
