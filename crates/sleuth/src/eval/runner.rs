//! Runs methods over questions with bounded concurrency and writes one record per
//! finished question × method, resuming where an earlier run of the same directory
//! stopped.

use super::record::RecordContext;
use super::store::{RecordKey, RunStore};
use super::RunRecord;
use crate::data::Question;
use crate::llm::attribution::with_counters;
use crate::methods::{Method, RunContext};
use crate::Result;
use futures::StreamExt;
use std::collections::HashSet;
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

/// Prices a record's billed usage (provided by the model layer's price table).
pub type Pricer = Arc<dyn Fn(&crate::llm::Usage) -> f64 + Send + Sync>;

pub struct Runner {
    pub context: RunContext,
    pub model_name: String,
    pub methods: Vec<Arc<dyn Method>>,
    pub concurrency: usize,
    pub retry_errors: bool,
    pub pricer: Option<Pricer>,
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
}

impl Runner {
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
        let mut writer = store.writer()?;
        let mut results = futures::stream::iter(jobs)
            .map(|(question, method)| self.run_one(question, method))
            .buffer_unordered(self.concurrency.max(1));
        while let Some(record) = results.next().await {
            writer.append(&record)?;
            summary.written += 1;
            if let Some(e) = &record.error {
                summary.errors += 1;
                summary.first_error.get_or_insert_with(|| e.clone());
            }
            progress.record(&record);
        }
        progress.finish();
        Ok(summary)
    }

    async fn run_one(&self, question: &Question, method: Arc<dyn Method>) -> RunRecord {
        let (outcome, counters) = with_counters(method.run(question, &self.context)).await;
        let ctx = RecordContext {
            method: method.name(),
            model: &self.model_name,
            retries: counters.retries(),
            pricer: self.pricer.as_deref(),
        };
        match outcome {
            Ok(episode) => RunRecord::from_episode(question, episode, &ctx),
            Err(err) => {
                let message = err.to_string();
                let partial = err.partial().cloned().unwrap_or_default();
                let mut record = RunRecord::from_episode(question, partial, &ctx);
                record.error = Some(message);
                record
            }
        }
    }
}
