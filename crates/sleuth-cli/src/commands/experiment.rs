//! `sleuth experiment FILE --model S [--dry-run] [--out DIR]`: a recipe's jobs
//! (`sleuth::study::Experiment`, whose docs give the recipe format), each run as a
//! typed job into its own run directory under `--out`, so `sleuth report OUT` finds
//! them all and labels the arms by the options that differ between runs.

use anyhow::{bail, Context};
use sleuth::data::Dataset;
use sleuth::report::table::{Cell, Table};
use sleuth::study::{Experiment, Job, RecipeJob, Running};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The recipe (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Model spec for every job (e.g. openai:gpt-4.1-mini).
    #[arg(long, value_name = "SPEC")]
    pub model: String,
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
    #[arg(long, value_parser = crate::bounds::count(1..))]
    pub limit: Option<usize>,
    /// Run shard I of N of every job (`I/N`, or `auto` from a Slurm array or Kubernetes
    /// indexed Job); the shard writes its own tree, OUT/shard-I-of-N (docs/cluster.md).
    #[arg(long, value_name = "I/N|auto")]
    pub shard: Option<String>,
    /// Response cache of every job: a directory (SQLite) or redis://HOST:PORT/DB.
    #[arg(
        long,
        env = "SLEUTH_CACHE",
        hide_env_values = true,
        value_name = "DIR|URL"
    )]
    pub cache: Option<String>,
    /// Do not read or write the response cache in any job.
    #[arg(long, env = "SLEUTH_NO_CACHE")]
    pub no_cache: bool,
}

/// The equivalent `sleuth eval` command line of a job, for people to read and to run
/// jobs by hand (the jobs themselves run as typed jobs, never through this text).
fn eval_args(job: &RecipeJob, model: &str, out_root: &Path) -> Vec<String> {
    let mut a = vec![
        "eval".to_string(),
        "--dataset".into(),
        job.dataset.name().to_string(),
        "--data".into(),
        job.data.display().to_string(),
        "--methods".into(),
        job.methods.join(","),
        "--model".into(),
        model.to_string(),
    ];
    if let Some(h) = job.hops {
        a.extend(["--hops".into(), h.to_string()]);
    }
    if let Some(l) = job.limit {
        a.extend(["--limit".into(), l.to_string()]);
    }
    if let Some(s) = job.sample {
        a.extend(["--sample".into(), s.to_string()]);
    }
    if let Some(s) = job.seed {
        a.extend(["--seed".into(), s.to_string()]);
    }
    for (k, v) in &job.settings {
        a.extend(["--set".into(), format!("{k}={v}")]);
    }
    a.extend([
        "--out".into(),
        out_root.join(&job.out_subdir).display().to_string(),
    ]);
    a
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

pub fn run(args: Args) -> anyhow::Result<()> {
    let files = data_files(&args.data)?;
    let experiment = Experiment::load(&args.file, args.data_root.as_deref(), &files)?;
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
    let mut model = sleuth::study::ModelSetup::new(&args.model);
    model.cache = match (args.no_cache, &args.cache) {
        (true, _) => sleuth::study::CacheChoice::Off,
        (false, Some(c)) => sleuth::study::CacheChoice::At(c.clone()),
        (false, None) => sleuth::study::CacheChoice::Default,
    };
    let running = Running {
        model,
        out_root: out_root.clone(),
        shard,
        limit: args.limit,
    };
    let mut extra = Vec::new();
    if let Some(s) = shard {
        extra.extend(["--shard".to_string(), s.to_string()]);
    }
    if args.no_cache {
        extra.push("--no-cache".to_string());
    } else if let Some(c) = &args.cache {
        extra.extend(["--cache".to_string(), c.clone()]);
    }
    let jobs = experiment.jobs(&running);
    if args.dry_run {
        return print_plan(&experiment, &jobs, &running, &extra);
    }
    for (i, (spec, job)) in experiment.jobs.iter().zip(&jobs).enumerate() {
        eprintln!(
            "[{}/{}] {} -> {}",
            i + 1,
            jobs.len(),
            spec.methods.join(","),
            job.out.display()
        );
        eprintln!("sleuth {}", shown(&command(spec, &running, &extra)));
        run_job(job).with_context(|| format!("job {} ({})", i + 1, spec.out_subdir.display()))?;
    }
    match (shard, out_root.parent()) {
        (Some(s), Some(all)) => eprintln!(
            "done: shard {s}; once every shard is done, `sleuth report {}` merges them",
            all.display()
        ),
        _ => eprintln!("done: sleuth report {}", out_root.display()),
    }
    Ok(())
}

/// The job's equivalent command line with what every job shares.
fn command(spec: &RecipeJob, running: &Running, extra: &[String]) -> Vec<String> {
    let mut argv = eval_args(spec, &running.model.spec, &running.out_root);
    if let Some(l) = running.limit {
        if let Some(k) = argv.iter().position(|a| a == "--limit") {
            argv[k + 1] = l.to_string();
        } else {
            argv.extend(["--limit".into(), l.to_string()]);
        }
    }
    argv.extend(extra.iter().cloned());
    argv
}

/// Runs one job with `sleuth eval`'s printing.
fn run_job(job: &Job) -> anyhow::Result<()> {
    super::eval::run_job(job, &crate::local::LocalArgs::default(), None)
}

/// A command line for people to read: a cache URL's password is left out.
fn shown(argv: &[String]) -> String {
    let parts: Vec<String> = argv
        .iter()
        .map(|a| sleuth::llm::middleware::redact(a))
        .collect();
    parts.join(" ")
}

/// `--dry-run`: every job with its questions, episodes and estimated spend, then the
/// totals and the equivalent commands.
fn print_plan(
    experiment: &Experiment,
    jobs: &[Job],
    running: &Running,
    extra: &[String],
) -> anyhow::Result<()> {
    let title = format!("experiment {}: {}", experiment.name, experiment.description);
    let mut cols = vec![
        "#",
        "dataset",
        "hops",
        "methods",
        "settings",
        "questions",
        "episodes",
    ];
    cols.extend(crate::cost::COLUMNS);
    let mut table = Table::new("plan", &title, &cols);
    // Dollars: measured per-call means from earlier runs under the output root.
    let price = crate::cost::price_check(&running.model)?;
    let history = [running.out_root.clone()];
    let mut totals = Vec::new();
    let mut usages: Vec<(String, sleuth::eval::estimate::Usage)> = Vec::new();
    let (mut episodes, mut calls) = (0usize, 0.0f64);
    for (i, (spec, job)) in experiment.jobs.iter().zip(jobs).enumerate() {
        let plan = job.prepare()?.plan(&running.model, &price, &history);
        let q = plan.questions;
        episodes += q * spec.methods.len();
        calls += plan.budget_calls();
        for (m, usage) in plan.usages() {
            if !usages.iter().any(|(n, _)| *n == m) {
                usages.push((m, usage));
            }
        }
        totals.push(plan.total);
        let settings: Vec<String> = spec
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut row = vec![
            Cell::Int(i as u64 + 1),
            Cell::text(spec.dataset.name()),
            spec.hops.map_or(Cell::Missing, |h| Cell::Int(u64::from(h))),
            Cell::text(spec.methods.join(",")),
            Cell::text(settings.join(" ")),
            Cell::Int(q as u64),
            Cell::Int((q * spec.methods.len()) as u64),
        ];
        row.extend(crate::cost::cells(Some(&plan.total)));
        table.push(row);
    }
    print!("{}", table.to_markdown());
    println!(
        "\n{} jobs, {episodes} episodes, at most {calls:.0} model calls (every budget used up; `sleuth methods NAME` shows each method's estimate)",
        jobs.len()
    );
    let total = sleuth::eval::estimate::Estimate::total(&totals);
    print!(
        "{}",
        crate::cost::footer(&total, &running.model.spec, &usages)
    );
    println!("\nequivalent commands:");
    for spec in &experiment.jobs {
        println!("sleuth {}", shown(&command(spec, running, extra)));
    }
    Ok(())
}
