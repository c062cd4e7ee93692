//! An experiment run end to end (issue 45): a recipe's jobs under one output root, the
//! manifest `sleuth report` reads, one cost budget shared by the jobs, and every data
//! file checked before anything runs.
//!
//! Why in the library: these rules were written twice, once per front end, and the
//! copies drifted in ways a user paid for (Python gave every job the whole budget,
//! wrote no manifest and checked no file). Now the CLI's `experiment` and Python's
//! `sleuth.experiment` build an [`ExperimentRun`] and call [`ExperimentRun::run`]; each
//! front end only runs one job its own way (a model spec with the CLI's local options,
//! or a Python callable) and prints what it is told.

use super::experiment::{Experiment, Running, MANIFEST};
use super::model::ModelSetup;
use super::refusals::ExperimentError;
use super::{Job, Shard};
use crate::llm::middleware::CacheScope;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What a front end chooses about an experiment beyond its recipe and model.
#[derive(Debug, Clone, Default)]
pub struct ExperimentOptions {
    /// The output root; `None`: `runs/NAME`.
    pub out: Option<PathBuf>,
    /// Run this shard of every job, into `OUT/shard-I-of-N`.
    pub shard: Option<Shard>,
    /// Overrides the recipe's per-split question limit (a smoke run).
    pub limit: Option<usize>,
    /// Run the jobs on the setup questions the recipe holds out, into `OUT/setup`.
    pub on_setup: bool,
    /// Questions in flight in each job; `None`: the model's default.
    pub concurrency: Option<usize>,
    /// Run again the questions whose earlier record ended in an error.
    pub retry_errors: bool,
    /// The response cache's scope; `None`: the recipe's, else the default.
    pub cache_scope: Option<CacheScope>,
}

/// One experiment, ready to plan or run: its jobs resolved under their output root.
#[derive(Debug, Clone)]
pub struct ExperimentRun {
    pub experiment: Experiment,
    /// The model of every job (its `max_cost` is the whole experiment's), the output
    /// root (a shard's own tree when sharded), the shard and the limit.
    pub running: Running,
    /// The output root above any shard's tree: where the manifest goes and what
    /// `sleuth report` reads.
    pub report_root: PathBuf,
    /// The jobs, in the recipe's order.
    pub jobs: Vec<Job>,
}

/// Why [`ExperimentRun::run`] stopped before its last job: a job failed (the front
/// end's own error, as its job runner returned it), or the library refused to go on
/// (the budget is spent, the manifest could not be written).
#[derive(Debug)]
pub enum ExperimentStop<E> {
    Job(E),
    Refused(Error),
}

/// What the run tells its user to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// A shard is done; once every shard is, a report on `all` merges them.
    MergeShards { shard: Shard, all: PathBuf },
    /// Report on the output root.
    Report { root: PathBuf },
    /// The recipe's own report commands, each with what it gives.
    RecipeReports { commands: Vec<(String, String)> },
}

impl ExperimentRun {
    /// Resolves the recipe's jobs for `model` under `options`: the output root (a
    /// shard's own tree: shards of one job may not share a run directory, as run.json
    /// names its shard), the data files checked, the setup jobs when asked for.
    pub fn new(
        experiment: Experiment,
        recipe: &Path,
        model: ModelSetup,
        options: &ExperimentOptions,
    ) -> Result<ExperimentRun> {
        let root = options
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("runs").join(&experiment.name));
        let out_root = match options.shard {
            Some(s) => root.join(format!("shard-{}-of-{}", s.index, s.count)),
            None => root.clone(),
        };
        if let Some(j) = experiment.jobs.iter().find(|j| !j.data.is_file()) {
            return Err(ExperimentError::DataMissing {
                file: j.data.clone(),
                dataset: j.dataset,
            }
            .into());
        }
        let mut model = model;
        model.cache_scope = options
            .cache_scope
            .or(experiment.cache_scope)
            .unwrap_or_default();
        let running = Running {
            model,
            out_root,
            shard: options.shard,
            limit: options.limit,
        };
        let mut jobs = match options.on_setup {
            true => experiment.setup_jobs(&running),
            false => experiment.jobs(&running),
        };
        if options.on_setup && jobs.is_empty() {
            return Err(ExperimentError::NoSetupQuestions {
                recipe: recipe.to_path_buf(),
            }
            .into());
        }
        for job in &mut jobs {
            job.concurrency = options.concurrency;
            job.retry_errors = options.retry_errors;
        }
        Ok(ExperimentRun {
            experiment,
            running,
            report_root: root,
            jobs,
        })
    }

    /// Writes the manifest, then runs every job in order through `run_job` (which gets
    /// the job's index and returns the dollars it spent). The experiment's budget
    /// (`max_cost` of the model) is shared: each job may spend what the earlier ones
    /// left, and once it is spent no further job starts. `starting` is told of each job
    /// before it runs. Returns the dollars spent in all.
    pub fn run<E>(
        &self,
        mut starting: impl FnMut(usize, &Job),
        mut run_job: impl FnMut(usize, &Job) -> std::result::Result<f64, E>,
    ) -> std::result::Result<f64, ExperimentStop<E>> {
        self.write_manifest().map_err(ExperimentStop::Refused)?;
        let budget = self.running.model.max_cost;
        let mut spent = 0.0;
        for (i, job) in self.jobs.iter().enumerate() {
            let mut job = job.clone();
            if let Some(limit) = budget {
                let left = limit - spent;
                if left <= 0.0 {
                    let jobs = self.jobs.len();
                    let spent = ExperimentError::BudgetSpent {
                        limit,
                        done: i,
                        jobs,
                    };
                    return Err(ExperimentStop::Refused(spent.into()));
                }
                job.model.max_cost = Some(left);
            }
            starting(i, &job);
            spent += run_job(i, &job).map_err(ExperimentStop::Job)?;
        }
        Ok(spent)
    }

    /// `experiment.json` at the report root (above any shard's tree), naming the
    /// recipe, the tables its report shows and its report commands.
    pub fn write_manifest(&self) -> Result<()> {
        let root = &self.report_root;
        std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        let path = root.join(MANIFEST);
        let manifest = self.experiment.manifest(root);
        let text = serde_json::to_string_pretty(&manifest).expect("a manifest is JSON") + "\n";
        crate::atomic::write(&path, text.as_bytes()).map_err(|e| Error::io(&path, e))
    }

    /// The recipe's report commands on the report root, each with what it gives.
    pub fn report_commands(&self) -> Vec<(String, String)> {
        self.experiment
            .reports
            .iter()
            .map(|r| (r.shell_line(&self.report_root), r.about.clone()))
            .collect()
    }

    /// What to do once the run is done.
    pub fn next_step(&self) -> NextStep {
        match (self.running.shard, self.running.out_root.parent()) {
            (Some(shard), Some(all)) => NextStep::MergeShards {
                shard,
                all: all.to_path_buf(),
            },
            _ if self.experiment.reports.is_empty() => NextStep::Report {
                root: self.running.out_root.clone(),
            },
            _ => NextStep::RecipeReports {
                commands: self.report_commands(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::Overrides;

    /// A recipe of three jobs on one data file in `dir`.
    fn three_jobs(dir: &Path, data_exists: bool) -> Experiment {
        let data = dir.join("m.jsonl");
        if data_exists {
            std::fs::write(&data, "").unwrap();
        }
        let recipe = "name = \"t\"\nmethods = [\"react\"]\n[[datasets]]\nname = \"musique\"\n\
                      data = \"m.jsonl\"\nhops = [2, 3, 4]\n";
        let overrides = Overrides {
            data_root: Some(dir.to_path_buf()),
            ..Overrides::default()
        };
        Experiment::parse(recipe, Path::new("r.toml"), &overrides).unwrap()
    }

    fn model(max_cost: Option<f64>) -> ModelSetup {
        let mut m = ModelSetup::new("scripted:x.json");
        m.max_cost = max_cost;
        m
    }

    #[test]
    fn the_jobs_share_one_budget_and_stop_once_it_is_spent() {
        let tmp = tempfile::tempdir().unwrap();
        let options = ExperimentOptions {
            out: Some(tmp.path().join("out")),
            ..ExperimentOptions::default()
        };
        let run = ExperimentRun::new(
            three_jobs(tmp.path(), true),
            Path::new("r.toml"),
            model(Some(1.0)),
            &options,
        )
        .unwrap();
        assert_eq!(run.jobs.len(), 3);
        let (mut started, mut budgets) = (Vec::new(), Vec::new());
        let stop = run
            .run(
                |i, _| started.push(i),
                |_, job| {
                    budgets.push(job.model.max_cost.unwrap());
                    Ok::<f64, ()>(0.6)
                },
            )
            .unwrap_err();
        // The second job gets what the first left; none starts once it is spent.
        assert_eq!(started, [0, 1]);
        assert_eq!(budgets.len(), 2);
        assert!((budgets[0] - 1.0).abs() < 1e-12 && (budgets[1] - 0.4).abs() < 1e-12);
        match stop {
            ExperimentStop::Refused(Error::Experiment(ExperimentError::BudgetSpent {
                limit,
                done,
                jobs,
            })) => assert_eq!((limit, done, jobs), (1.0, 2, 3)),
            other => panic!("{other:?}"),
        }
        // The manifest is written before the first job.
        let manifest = std::fs::read_to_string(tmp.path().join("out").join(MANIFEST)).unwrap();
        assert!(manifest.contains("\"name\": \"t\""), "{manifest}");
        // A job's own failure comes back as the job's.
        let stop = run.run(|_, _| {}, |_, _| Err::<f64, &str>("boom"));
        assert!(matches!(stop, Err(ExperimentStop::Job("boom"))));
    }

    #[test]
    fn a_missing_data_file_refuses_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let options = ExperimentOptions {
            out: Some(tmp.path().join("out")),
            ..ExperimentOptions::default()
        };
        let e = three_jobs(tmp.path(), false);
        let err = ExperimentRun::new(e, Path::new("r.toml"), model(None), &options).unwrap_err();
        match err {
            Error::Experiment(ExperimentError::DataMissing { file, dataset }) => {
                assert_eq!(file, tmp.path().join("m.jsonl"));
                assert_eq!(dataset, crate::data::Dataset::Musique);
            }
            other => panic!("{other:?}"),
        }
        assert!(!tmp.path().join("out").exists());
        // Setup jobs of a recipe that holds none out.
        let options = ExperimentOptions {
            on_setup: true,
            ..options
        };
        let e = three_jobs(tmp.path(), true);
        let err = ExperimentRun::new(e, Path::new("r.toml"), model(None), &options).unwrap_err();
        assert!(matches!(
            err,
            Error::Experiment(ExperimentError::NoSetupQuestions { .. })
        ));
    }

    #[test]
    fn a_shard_runs_in_its_own_tree_and_the_report_reads_the_root_above() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out");
        let shard = Shard::resolve("2/3").unwrap();
        let options = ExperimentOptions {
            out: Some(root.clone()),
            shard: Some(shard),
            ..ExperimentOptions::default()
        };
        let e = three_jobs(tmp.path(), true);
        let run = ExperimentRun::new(e, Path::new("r.toml"), model(None), &options).unwrap();
        assert_eq!(run.report_root, root);
        assert_eq!(run.running.out_root, root.join("shard-2-of-3"));
        assert!(run
            .jobs
            .iter()
            .all(|j| j.out.starts_with(root.join("shard-2-of-3"))));
        assert_eq!(
            run.next_step(),
            NextStep::MergeShards {
                shard,
                all: root.clone()
            }
        );
        let mut unsharded = run.clone();
        unsharded.running.shard = None;
        unsharded.running.out_root = root.clone();
        assert_eq!(unsharded.next_step(), NextStep::Report { root });
    }
}
