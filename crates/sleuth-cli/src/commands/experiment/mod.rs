//! `sleuth experiment FILE --model S [--dry-run] [--out DIR]`: a recipe's jobs
//! (`sleuth::study::Experiment`, whose docs give the recipe format), each run as a
//! typed job into its own run directory under `--out`, so `sleuth report OUT` finds
//! them all and labels the arms by the options that differ between runs.

mod plan;

use anyhow::{bail, Context};
use plan::{eval_command, print_plan, shown};
use sleuth::data::Dataset;
use sleuth::study::{
    Experiment, ExperimentOptions, ExperimentRun, ExperimentStop, NextStep, Overrides,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The recipe (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The model of every job and its options, as `sleuth eval` takes them; `--max-cost`
    /// bounds the whole experiment (each job gets what the earlier ones left).
    #[command(flatten)]
    pub model: crate::resolve::ModelArgs,
    /// Questions answered at the same time in each job (default 4; 1 for local: models;
    /// with --batch, as many as one batch holds).
    #[arg(long, value_parser = crate::bounds::count(1..=4096))]
    pub concurrency: Option<usize>,
    /// Run again the questions whose earlier record ended in an error.
    #[arg(long)]
    pub retry_errors: bool,
    /// Send every model call through the provider's batch API (OpenAI Batch API,
    /// Anthropic Message Batches) at half price, as `sleuth eval --batch` does; a
    /// recipe can ask the same with `batch = true`.
    #[arg(long)]
    pub batch: bool,
    /// With --batch, or a recipe's `batch = true`: seconds before a batch's first
    /// status poll; each later poll waits twice as long, up to 5 minutes (default 5).
    #[arg(long, value_name = "SECS", value_parser = crate::bounds::positive)]
    pub batch_poll: Option<f64>,
    /// List the jobs, episode counts, and estimated model calls, tokens and dollars per
    /// job and in total (measured in earlier records under --out when present); run
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Output root; each job writes a run directory below it (default: runs/NAME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where the recipe's data paths start (default: the data directory that `sleuth data
    /// fetch` fills, $SLEUTH_DATA_DIR or $SLEUTH_HOME/data); never the recipe's own folder.
    #[arg(long, value_name = "DIR")]
    pub data_root: Option<PathBuf>,
    /// Use FILE for every split of DATASET instead of the recipe's (repeatable), e.g.
    /// `--data musique=subset.jsonl` for a smoke run on your own file.
    #[arg(long = "data", value_name = "DATASET=FILE")]
    pub data: Vec<String>,
    /// Override the recipe's per-split question limit (e.g. a 5-question smoke run).
    /// Under a recipe's seeded sample it keeps the first N of the sample's order (after
    /// the setup questions), so a smoke run is a small sample of the same questions.
    #[arg(long, value_parser = crate::bounds::count(1..))]
    pub limit: Option<usize>,
    /// Run shard I of N of every job (`I/N`, or `auto` from a Slurm array or Kubernetes
    /// indexed Job); the shard writes its own tree, OUT/shard-I-of-N (docs/cluster.md).
    #[arg(long, value_name = "I/N|auto")]
    pub shard: Option<String>,
    /// Draw every split's seeded sample of N questions instead of the recipe's.
    #[arg(long, value_parser = crate::bounds::count(1..))]
    pub sample: Option<usize>,
    /// The seed of every split's sample instead of the recipe's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The BM25 index (`sleuth index build`) of every `env = "corpus"` group.
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// Run the jobs on the setup questions the recipe holds out (`setup = N`: prompt
    /// development, never scored), into OUT/setup.
    #[arg(long)]
    pub on_setup: bool,
}

/// `--data DATASET=FILE` pairs. A known dataset the recipe does not use is ignored, so
/// one set of pairs serves every recipe; an unknown name is a typo.
fn data_files(pairs: &[String]) -> anyhow::Result<BTreeMap<Dataset, PathBuf>> {
    let mut files = BTreeMap::new();
    for pair in pairs {
        let (name, path) = pair
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--data {pair}: expected DATASET=FILE"))?;
        let dataset: Dataset = name
            .trim()
            .parse()
            .map_err(|e| anyhow::anyhow!("--data {pair}: {e}"))?;
        files.insert(dataset, PathBuf::from(path.trim()));
    }
    Ok(files)
}

/// The recipe's report commands, one line each with what it gives.
pub(super) fn report_lines(run: &ExperimentRun) -> Vec<String> {
    run.report_commands()
        .into_iter()
        .map(|(command, about)| format!("{command}  # {about}"))
        .collect()
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let overrides = Overrides {
        data_root: args.data_root.clone(),
        files: data_files(&args.data)?,
        index: args.index.clone(),
        sample: args.sample,
        seed: args.seed,
    };
    let experiment = Experiment::load(&args.file, &overrides)?;
    let shard = args
        .shard
        .as_deref()
        .map(sleuth::study::Shard::resolve)
        .transpose()?;
    if args.batch_poll.is_some() && !args.batch && !experiment.batch {
        bail!(
            "--batch-poll applies to batched runs only: pass --batch, or set `batch = true` in {}",
            args.file.display()
        );
    }
    let mut model = args.model.setup();
    model.batch = args.batch;
    model.batch_poll = args
        .batch_poll
        .map(|s| std::time::Duration::from_secs_f64(s.min(86_400.0)));
    let options = ExperimentOptions {
        out: args.out.clone(),
        shard,
        limit: args.limit,
        on_setup: args.on_setup,
        concurrency: args.concurrency,
        retry_errors: args.retry_errors,
        cache_scope: args.model.cache_scope,
    };
    let run = ExperimentRun::new(experiment, &args.file, model, &options)?;
    if args.dry_run {
        return print_plan(&run);
    }
    let count = run.jobs.len();
    let out_root = &run.running.out_root;
    let starting = |i: usize, job: &sleuth::study::Job| {
        eprintln!(
            "[{}/{}] {} -> {}",
            i + 1,
            count,
            job.methods.names.join(","),
            job.out.display()
        );
        eprintln!("sleuth {}", shown(&eval_command(job)));
    };
    run.run(starting, |i, job| {
        let name = job.out.strip_prefix(out_root).unwrap_or(&job.out);
        super::eval::run_job(job, &args.model.local, None)
            .with_context(|| format!("job {} ({})", i + 1, name.display()))
    })
    .map_err(|stop| match stop {
        ExperimentStop::Job(e) => e,
        ExperimentStop::Refused(e) => e.into(),
    })?;
    match run.next_step() {
        NextStep::MergeShards { shard, all } => eprintln!(
            "done: shard {shard}; once every shard is done, `sleuth report {}` merges them",
            all.display()
        ),
        NextStep::Report { root } => eprintln!("done: sleuth report {}", root.display()),
        NextStep::RecipeReports { .. } => {
            eprintln!("done; the recipe's reports:");
            for line in report_lines(&run) {
                eprintln!("  {line}");
            }
        }
    }
    Ok(())
}
