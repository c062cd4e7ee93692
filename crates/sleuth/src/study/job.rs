//! A job: methods × a question selection × a model, written into one run directory.
//!
//! [`Job::prepare`] selects the questions and builds the methods (every mistake in the
//! job is reported here, before a model is opened); the prepared job gives its plan
//! ([`Prepared::plan`]) or runs into its directory ([`Prepared::run`]), resuming what an
//! earlier run of the directory recorded. `sleuth eval`, each job of `sleuth
//! experiment`, and Python's `sleuth.eval` are this, with their own printing.

use super::methods::{MethodSetup, Methods};
use super::model::{ModelSetup, PriceCheck};
use super::plan::{history, Plan};
use super::selection::{Selected, Selection};
use crate::eval::conditions::IndexIdentity;
use crate::eval::{Progress, RunConditions, RunConfig, RunStore, RunSummary, Runner};
use crate::llm::middleware::StatsSnapshot;
use crate::llm::ModelStack;
use crate::Result;
use std::path::PathBuf;

/// Everything one run directory needs.
#[derive(Debug, Clone)]
pub struct Job {
    pub selection: Selection,
    pub methods: MethodSetup,
    pub model: ModelSetup,
    /// The run directory (`records.jsonl`, `run.json`).
    pub out: PathBuf,
    /// Questions in flight; `None`: the model's default.
    pub concurrency: Option<usize>,
    /// Run again the questions whose earlier record ended in an error.
    pub retry_errors: bool,
}

/// A job with its questions selected and its methods built.
pub struct Prepared {
    pub selected: Selected,
    pub methods: Methods,
}

/// What running a job did.
pub struct Finished {
    pub summary: RunSummary,
    /// The model stack's counts (calls, retries, cache hits, tokens, dollars).
    pub totals: StatsSnapshot,
    pub dir: PathBuf,
    pub records: PathBuf,
    /// The methods of the run, in order.
    pub methods: Vec<String>,
    /// The selection's notes (see [`Selected::notes`]).
    pub notes: Vec<String>,
}

impl Job {
    /// Selects the questions and builds the methods.
    pub fn prepare(&self) -> Result<Prepared> {
        let selected = self.selection.select()?;
        let methods = self.methods.build()?;
        Ok(Prepared { selected, methods })
    }

    /// What `run.json` records of this job: the selection, the settings, and the
    /// conditions that shaped its records (the data files' digests — read once each —,
    /// the index, the prompts, the endpoint).
    pub fn run_config(&self, prepared: &Prepared) -> Result<RunConfig> {
        let methods = &prepared.methods.built;
        let sample = self.selection.sample;
        let config = &prepared.methods.config;
        let data_sha256 = prepared
            .selected
            .files
            .iter()
            .map(|f| {
                crate::data::fetch::file_sha256(f)
                    .map(|(hex, _)| hex)
                    .map_err(|e| crate::Error::io(f, e))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let conditions = RunConditions {
            data_sha256,
            index: config.corpus.as_ref().map(|c| IndexIdentity {
                dir: c.index.dir().to_path_buf(),
                fingerprint: c.index.fingerprint(),
                reads: c.options.max_reads,
            }),
            prompts: Some(config.prompts.identity().clone()),
            prompts_dir: self.methods.prompts.clone(),
            endpoint: self.model.served_at(),
        };
        Ok(RunConfig {
            sleuth_version: env!("CARGO_PKG_VERSION").to_string(),
            dataset: prepared.selected.dataset.name().to_string(),
            data: prepared.selected.files.clone(),
            model: self.model.name().to_string(),
            methods: methods.iter().map(|m| m.name().to_string()).collect(),
            settings: prepared.methods.config.settings.clone(),
            method_settings: methods
                .iter()
                .map(|m| (m.name().to_string(), m.settings().clone()))
                .collect(),
            hops: self.selection.hops,
            limit: self.selection.limit,
            sample: sample.map(|s| s.size),
            seed: sample.map(|s| s.seed),
            sample_offset: sample.map(|s| s.offset).filter(|o| *o > 0),
            shard: self.selection.shard.map(|s| s.to_string()),
            env: Some(self.methods.env().to_string()),
            conditions,
        })
    }
}

impl Prepared {
    /// The estimated spend of what is left to run in the job's directory (its earlier
    /// records are done; error records too, unless the job retries them), with means
    /// measured in earlier records under `history_in` (the job's own directory, or an
    /// experiment's root).
    pub fn plan(&self, job: &Job, price: &PriceCheck, history_in: &[PathBuf]) -> Plan {
        Plan::remaining(
            &self.methods.built,
            self.selected.questions.len(),
            &self.recorded(job),
            &job.model.name(),
            &history(history_in),
            price.pricing,
        )
    }

    /// Per method, the selected questions already recorded in the job's directory
    /// (read a record at a time; only the matching keys are held).
    fn recorded(&self, job: &Job) -> Vec<usize> {
        use std::collections::HashSet;
        let file = job.out.join(crate::eval::store::RECORDS);
        let Ok(ids) = self.selected.questions.ids() else {
            return Vec::new();
        };
        let ids: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let methods = &self.methods.built;
        let mut done: Vec<HashSet<String>> = vec![HashSet::new(); methods.len()];
        let read = crate::eval::store::each_record_line(&file, |_, r| {
            let counted = ids.contains(r.id.as_str()) && !(job.retry_errors && r.error.is_some());
            if let Some(m) = methods.iter().position(|m| m.name() == r.method) {
                if counted {
                    done[m].insert(r.id);
                }
            }
            Ok(())
        });
        if read.is_err() {
            return Vec::new();
        }
        done.iter().map(HashSet::len).collect()
    }

    /// Runs every method on every selected question not yet recorded in the job's
    /// directory.
    pub async fn run(
        &self,
        job: &Job,
        stack: ModelStack,
        progress: &dyn Progress,
    ) -> Result<Finished> {
        let config = job.run_config(self)?;
        let store = RunStore::open(&job.out, &config)?;
        let mut runner = Runner::new(stack, job.model.name(), self.methods.built.clone());
        // A batched run keeps as many episodes in flight as one batch holds: each round
        // is then one batch of every question's next call.
        let batch_slots = runner.stack.batch_rounds().map(|r| r.max_requests());
        runner.concurrency = job
            .concurrency
            .or(batch_slots)
            .unwrap_or_else(|| job.model.default_concurrency())
            .max(1);
        runner.retry_errors = job.retry_errors;
        let summary = runner
            .run(&self.selected.questions, &store, progress)
            .await?;
        Ok(Finished {
            summary,
            totals: runner.stack.totals(),
            dir: store.dir().to_path_buf(),
            records: store.records_path(),
            methods: store.config().methods.clone(),
            notes: self.selected.notes.clone(),
        })
    }
}
