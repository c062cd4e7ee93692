//! `sleuth experiment FILE --model S [--dry-run] [--out DIR]`: a recipe's jobs
//! (`sleuth::study::Experiment`, whose docs give the recipe format), each run as a
//! typed job into its own run directory under `--out`, so `sleuth report OUT` finds
//! them all and labels the arms by the options that differ between runs.

mod plan;

use anyhow::{bail, Context};
use plan::{eval_command, print_plan, shown};
use sleuth::data::Dataset;
use sleuth::study::{Experiment, Overrides, Running};
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

/// The output root above any shard's tree: what `sleuth report` reads.
fn report_root(
    experiment: &Experiment,
    out: Option<&PathBuf>,
    out_root: &std::path::Path,
) -> PathBuf {
    let root = out
        .cloned()
        .unwrap_or_else(|| PathBuf::from("runs").join(&experiment.name));
    if out_root.starts_with(&root) {
        root
    } else {
        out_root.to_path_buf()
    }
}

/// The recipe's report commands on `root`, one line each with what it gives.
pub(super) fn report_lines(experiment: &Experiment, root: &std::path::Path) -> Vec<String> {
    experiment
        .reports
        .iter()
        .map(|r| format!("{}  # {}", r.shell_line(root), r.about))
        .collect()
}

/// `experiment.json` at the output root (above any shard's tree), naming the recipe,
/// the tables its report shows and its report commands (`sleuth report OUT` reads it).
fn write_manifest(experiment: &Experiment, root: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let path = root.join(sleuth::study::MANIFEST);
    let text = serde_json::to_string_pretty(&experiment.manifest(root))? + "\n";
    sleuth::atomic::write(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
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
    let mut out_root = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(&experiment.name));
    if let Some(s) = shard {
        // Shards of one job may not share a run directory (run.json names its shard).
        out_root = out_root.join(format!("shard-{}-of-{}", s.index, s.count));
    }
    // Checked before a dry run too: a plan of "0 episodes" over missing files is no plan.
    for j in &experiment.jobs {
        if !j.data.is_file() {
            bail!(
                "{}: data file not found for dataset {} (install it with `sleuth data fetch {}`, \
                 or point --data-root at the folder holding it)",
                j.data.display(),
                j.dataset,
                j.dataset
            );
        }
    }
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
    model.cache_scope = args
        .model
        .cache_scope
        .or(experiment.cache_scope)
        .unwrap_or_default();
    let running = Running {
        model,
        out_root: out_root.clone(),
        shard,
        limit: args.limit,
    };
    let mut jobs = if args.on_setup {
        let jobs = experiment.setup_jobs(&running);
        if jobs.is_empty() {
            bail!(
                "{} holds no setup questions out (`setup = N` with `sample`)",
                args.file.display()
            );
        }
        jobs
    } else {
        experiment.jobs(&running)
    };
    for job in &mut jobs {
        job.concurrency = args.concurrency;
        job.retry_errors = args.retry_errors;
    }
    let root = report_root(&experiment, args.out.as_ref(), &out_root);
    if args.dry_run {
        return print_plan(&experiment, &jobs, &running, &root);
    }
    write_manifest(&experiment, &root)?;
    let budget = args.model.max_cost;
    let mut spent = 0.0;
    let count = jobs.len();
    for (i, job) in jobs.iter_mut().enumerate() {
        if let Some(limit) = budget {
            let left = limit - spent;
            if left <= 0.0 {
                bail!(
                    "the experiment's cost budget (${limit:.2}) is spent after {i} of {} jobs; rerun with a larger --max-cost to continue",
                    experiment.jobs.len()
                );
            }
            job.model.max_cost = Some(left);
        }
        eprintln!(
            "[{}/{}] {} -> {}",
            i + 1,
            count,
            job.methods.names.join(","),
            job.out.display()
        );
        eprintln!("sleuth {}", shown(&eval_command(job)));
        let name = job.out.strip_prefix(&out_root).unwrap_or(&job.out);
        spent += super::eval::run_job(job, &args.model.local, None)
            .with_context(|| format!("job {} ({})", i + 1, name.display()))?;
    }
    match (shard, out_root.parent()) {
        (Some(s), Some(all)) => eprintln!(
            "done: shard {s}; once every shard is done, `sleuth report {}` merges them",
            all.display()
        ),
        _ if experiment.reports.is_empty() => {
            eprintln!("done: sleuth report {}", out_root.display())
        }
        _ => {
            eprintln!("done; the recipe's reports:");
            for line in report_lines(&experiment, &root) {
                eprintln!("  {line}");
            }
        }
    }
    Ok(())
}
