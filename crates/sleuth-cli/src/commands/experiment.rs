//! `sleuth experiment FILE --model S [--dry-run] [--out DIR]`
//!
//! An experiment recipe (`experiments/*.toml`) describes the grid behind a paper table:
//! datasets (with hop splits) × groups of methods × a grid of option values. It
//! expands into concrete eval jobs, each written by `sleuth eval` into its own run
//! directory under `--out`, so `sleuth report OUT` finds them all and labels the arms
//! by the options that differ between runs.
//!
//! Recipe format:
//!
//! ```toml
//! name = "nudge-sweep"
//! description = "..."
//! limit = 100                       # optional: first N questions of each split
//! # sample = 200 and seed = 1       # optional: a seeded random sample instead
//! methods = ["react", "sleuth"]     # methods of groups that name none
//! [settings]                        # options of every job (eval's --set key=value)
//! turns = 20
//! [[datasets]]
//! name = "musique"
//! # data = "musique/my_subset.jsonl"  # optional, relative to the data root; absent:
//! #                                   # the file `sleuth data fetch musique` installed
//! hops = [2, 3, 4]                  # optional: one job per hop split
//! [[groups]]                        # optional; default: one group, no grid
//! name = "sleuth"                   # optional; names the output folder
//! methods = ["sleuth"]
//! datasets = ["musique"]            # optional filter
//! settings = { tau = 2 }            # optional, over the recipe's settings
//! grid = { nudge = [0.3, 0.5, 0.7, 1.0, "none"] }   # cartesian product
//! ```
//!
//! Option keys are passed through to eval unchanged and checked against the methods of
//! each job before anything runs (`sleuth methods NAME` lists what a method reads).

use anyhow::{bail, Context};
use serde::Deserialize;
use sleuth::methods::registry;
use sleuth::methods::settings::Settings;
use sleuth::report::table::{Cell, Table};
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
}

/// A scalar recipe value (numbers and booleans are passed to eval as strings).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Str(s) => s.clone(),
            Scalar::Int(i) => i.to_string(),
            // `{:?}` keeps `1.0` a float (`1.0`, not `1`), as written in the recipe.
            Scalar::Float(f) => format!("{f:?}"),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recipe {
    name: String,
    #[serde(default)]
    description: String,
    /// No longer read (data paths start at the data directory); kept to say so.
    data_root: Option<toml::Value>,
    limit: Option<usize>,
    sample: Option<usize>,
    seed: Option<u64>,
    #[serde(default)]
    methods: Vec<String>,
    #[serde(default)]
    settings: BTreeMap<String, Scalar>,
    datasets: Vec<DatasetSpec>,
    #[serde(default)]
    groups: Vec<Group>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DatasetSpec {
    name: String,
    /// Relative to the data root; absent: the file `sleuth data fetch NAME` installs.
    data: Option<PathBuf>,
    #[serde(default)]
    hops: Vec<u8>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Group {
    name: Option<String>,
    #[serde(default)]
    methods: Vec<String>,
    #[serde(default)]
    datasets: Vec<String>,
    #[serde(default)]
    settings: BTreeMap<String, Scalar>,
    #[serde(default)]
    grid: BTreeMap<String, Vec<Scalar>>,
}

/// One `sleuth eval` run of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentJob {
    pub dataset: String,
    pub data: PathBuf,
    /// Restrict to questions with this many hops (MuSiQue splits).
    pub hops: Option<u8>,
    pub methods: Vec<String>,
    /// Option key -> value, as `--set key=value`.
    pub settings: BTreeMap<String, String>,
    pub limit: Option<usize>,
    pub sample: Option<usize>,
    pub seed: Option<u64>,
    /// The job's run directory, relative to the experiment's output root.
    pub out_subdir: PathBuf,
}

impl ExperimentJob {
    /// The equivalent command line, for `--dry-run` and for running jobs by hand.
    pub fn eval_args(&self, model: &str, out_root: &Path) -> Vec<String> {
        let mut a = vec![
            "eval".to_string(),
            "--dataset".into(),
            self.dataset.clone(),
            "--data".into(),
            self.data.display().to_string(),
            "--methods".into(),
            self.methods.join(","),
            "--model".into(),
            model.to_string(),
        ];
        if let Some(h) = self.hops {
            a.extend(["--hops".into(), h.to_string()]);
        }
        if let Some(l) = self.limit {
            a.extend(["--limit".into(), l.to_string()]);
        }
        if let Some(s) = self.sample {
            a.extend(["--sample".into(), s.to_string()]);
        }
        if let Some(s) = self.seed {
            a.extend(["--seed".into(), s.to_string()]);
        }
        for (k, v) in &self.settings {
            a.extend(["--set".into(), format!("{k}={v}")]);
        }
        a.extend([
            "--out".into(),
            out_root.join(&self.out_subdir).display().to_string(),
        ]);
        a
    }
}

/// Parses a recipe and expands it into jobs. Data paths start at `data_root`, else the
/// data directory `sleuth data fetch` fills (never the recipe's own folder, so a recipe
/// runs the same from anywhere); a dataset without `data` reads its fetched file, and
/// `data` (`DATASET=FILE` pairs) replaces a dataset's file outright.
pub fn load_jobs(
    file: &Path,
    data_root: Option<&Path>,
    data: &[String],
) -> anyhow::Result<(String, String, Vec<ExperimentJob>)> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let recipe: Recipe =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    if recipe.data_root.is_some() {
        bail!(
            "{}: `data_root` is no longer read: data paths start at the data directory (`sleuth data fetch`), or pass --data-root DIR",
            file.display()
        );
    }
    let root = data_root.map_or_else(sleuth::data::fetch::data_dir, Path::to_path_buf);
    let mut files = BTreeMap::new();
    for pair in data {
        let (name, path) = pair
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--data {pair}: expected DATASET=FILE"))?;
        // A known dataset the recipe does not use is ignored, so one set of `--data`
        // pairs serves every recipe; an unknown name is a typo.
        name.trim()
            .parse::<sleuth::data::Dataset>()
            .map_err(|e| anyhow::anyhow!("--data {pair}: {e}"))?;
        files.insert(name.trim().to_string(), PathBuf::from(path.trim()));
    }
    let jobs = expand(&recipe, &root, &files).with_context(|| format!("in {}", file.display()))?;
    Ok((recipe.name, recipe.description, jobs))
}

/// The file a dataset of the recipe reads.
fn data_file(
    ds: &DatasetSpec,
    root: &Path,
    files: &BTreeMap<String, PathBuf>,
) -> anyhow::Result<PathBuf> {
    if let Some(file) = files.get(&ds.name) {
        return Ok(file.clone());
    }
    match &ds.data {
        Some(rel) => Ok(lexical_normalize(&root.join(rel))),
        None => {
            let dataset: sleuth::data::Dataset =
                ds.name.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(sleuth::data::fetch::default_file(dataset, root)?)
        }
    }
}

fn expand(
    recipe: &Recipe,
    root: &Path,
    files: &BTreeMap<String, PathBuf>,
) -> anyhow::Result<Vec<ExperimentJob>> {
    let default_group = [Group::default()];
    let groups: &[Group] = if recipe.groups.is_empty() {
        &default_group
    } else {
        &recipe.groups
    };
    let mut jobs = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let methods = if g.methods.is_empty() {
            &recipe.methods
        } else {
            &g.methods
        };
        if methods.is_empty() {
            bail!(
                "group {} names no methods (and the recipe has no `methods`)",
                gi + 1
            );
        }
        for d in &g.datasets {
            if !recipe.datasets.iter().any(|s| &s.name == d) {
                bail!(
                    "group {} names dataset `{d}`, which the recipe does not define",
                    gi + 1
                );
            }
        }
        let points = grid_points(&g.grid);
        for ds in recipe
            .datasets
            .iter()
            .filter(|d| g.datasets.is_empty() || g.datasets.contains(&d.name))
        {
            let splits: Vec<Option<u8>> = if ds.hops.is_empty() {
                vec![None]
            } else {
                ds.hops.iter().map(|h| Some(*h)).collect()
            };
            for hops in splits {
                for point in &points {
                    let mut settings: BTreeMap<String, String> = recipe
                        .settings
                        .iter()
                        .map(|(k, v)| (k.clone(), v.text()))
                        .collect();
                    settings.extend(g.settings.iter().map(|(k, v)| (k.clone(), v.text())));
                    settings.extend(point.iter().cloned());
                    let split = hops.map_or(ds.name.clone(), |h| format!("{}-{h}hop", ds.name));
                    let mut sub = PathBuf::from(split)
                        .join(g.name.clone().unwrap_or_else(|| methods.join("+")));
                    if !point.is_empty() {
                        let tag: Vec<String> =
                            point.iter().map(|(k, v)| format!("{k}-{v}")).collect();
                        sub = sub.join(sleuth::report::slug(&tag.join("_")));
                    }
                    jobs.push(ExperimentJob {
                        dataset: ds.name.clone(),
                        data: data_file(ds, root, files)?,
                        hops,
                        methods: methods.clone(),
                        settings,
                        limit: recipe.limit,
                        sample: recipe.sample,
                        seed: recipe.seed,
                        out_subdir: sub,
                    });
                }
            }
        }
    }
    Ok(jobs)
}

/// Removes `dir/..` pairs without touching the file system, so printed commands read
/// `../shared/data/...` rather than `experiments/../../shared/data/...`.
fn lexical_normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    }
}

/// The cartesian product of a grid, as lists of (key, value); one empty point for no grid.
fn grid_points(grid: &BTreeMap<String, Vec<Scalar>>) -> Vec<Vec<(String, String)>> {
    let mut points = vec![Vec::new()];
    for (key, values) in grid {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push((key.clone(), v.text()));
                    q
                })
            })
            .collect();
    }
    points
}

/// Model calls one episode of `method` spends at most under the job's settings: its
/// registry row's estimate (the budgets; exactly what a run spends when every budget is
/// used up).
pub fn calls_per_episode(method: &str, settings: &BTreeMap<String, String>) -> anyhow::Result<f64> {
    let spec = registry::spec(method).map_err(|e| anyhow::anyhow!(e))?;
    let typed = Settings::parse(settings, false).map_err(|e| anyhow::anyhow!(e))?;
    Ok((spec.estimate)(&typed))
}

/// Questions a job will run: the split's size (MuSiQue hop splits counted from the
/// `Nhop` id prefix), capped by limit/sample. None when the data file is missing.
fn question_count(job: &ExperimentJob) -> Option<usize> {
    let text = std::fs::read_to_string(&job.data).ok()?;
    let lines = text.lines().filter(|l| !l.trim().is_empty());
    let available = match job.hops {
        None => lines.count(),
        Some(h) => {
            let prefix = format!("{h}hop");
            lines
                .filter(|l| {
                    serde_json::from_str::<serde_json::Value>(l)
                        .ok()
                        .is_some_and(|v| {
                            let id = v
                                .get("id")
                                .or_else(|| v.get("_id"))
                                .and_then(|i| i.as_str())
                                .unwrap_or("");
                            id.starts_with(&prefix)
                        })
                })
                .count()
        }
    };
    let cap = job.sample.or(job.limit).unwrap_or(usize::MAX);
    Some(available.min(cap))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (name, description, mut jobs) =
        load_jobs(&args.file, args.data_root.as_deref(), &args.data)?;
    if let Some(l) = args.limit {
        jobs.iter_mut().for_each(|j| j.limit = Some(l));
    }
    let shard = args
        .shard
        .as_deref()
        .map(crate::shard::Shard::resolve)
        .transpose()?;
    let mut out_root = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(&name));
    if let Some(s) = shard {
        // Shards of one job may not share a run directory (run.json names its shard).
        out_root = out_root.join(format!("shard-{}-of-{}", s.index, s.count));
    }
    let mut extra = Vec::new();
    if let Some(s) = shard {
        extra.extend(["--shard".to_string(), s.to_string()]);
    }
    if let Some(c) = &args.cache {
        extra.extend(["--cache".to_string(), c.clone()]);
    }
    for job in &jobs {
        validate(job).with_context(|| {
            format!("{}: job {}", args.file.display(), job.out_subdir.display())
        })?;
    }
    // Checked before a dry run too: a plan of "0 episodes" over missing files is no plan.
    for j in &jobs {
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
    if args.dry_run {
        return print_plan(&name, &description, &jobs, &args.model, &out_root, &extra);
    }
    for (i, job) in jobs.iter().enumerate() {
        let dir = out_root.join(&job.out_subdir);
        eprintln!(
            "[{}/{}] {} -> {}",
            i + 1,
            jobs.len(),
            job.methods.join(","),
            dir.display()
        );
        run_job(job, &args.model, &out_root, &extra)
            .with_context(|| format!("job {} ({})", i + 1, job.out_subdir.display()))?;
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

/// Checks a job's method names and settings before anything runs, so a typo in a
/// recipe fails at once rather than hours into a grid.
fn validate(job: &ExperimentJob) -> anyhow::Result<()> {
    let config = registry::MethodConfig::new(job.settings.clone());
    crate::resolve::methods(&job.methods.join(","), &config).map(|_| ())
}

/// Runs one job exactly as its `sleuth eval` command line would, writing its run
/// directory at `out_root/job.out_subdir`.
fn run_job(
    job: &ExperimentJob,
    model: &str,
    out_root: &Path,
    extra: &[String],
) -> anyhow::Result<()> {
    use clap::Parser;
    #[derive(Parser)]
    struct EvalLine {
        #[command(flatten)]
        args: crate::commands::eval::Args,
    }
    let mut argv = job.eval_args(model, out_root);
    argv.extend(extra.iter().cloned());
    eprintln!("sleuth {}", shown(&argv));
    let line = EvalLine::try_parse_from(argv)?;
    crate::commands::eval::run(line.args)
}

/// A command line for people to read: a cache URL's password is left out.
fn shown(argv: &[String]) -> String {
    let parts: Vec<String> = argv
        .iter()
        .map(|a| sleuth::llm::middleware::redact(a))
        .collect();
    parts.join(" ")
}

fn print_plan(
    name: &str,
    description: &str,
    jobs: &[ExperimentJob],
    model: &str,
    out_root: &Path,
    extra: &[String],
) -> anyhow::Result<()> {
    let title = format!("experiment {name}: {description}");
    let cols = [
        "#",
        "dataset",
        "hops",
        "methods",
        "settings",
        "questions",
        "episodes",
        "calls (est.)",
        "input tok",
        "output tok",
        "USD (est.)",
    ];
    let mut table = Table::new("plan", &title, &cols);
    // Dollars: measured per-call means from earlier runs under the output root.
    let (_, pricing) = crate::cost::pricing(model, None, None)?;
    let history = crate::cost::history(&[out_root.to_path_buf()]);
    let mut estimates = Vec::new();
    let mut usages: Vec<(String, sleuth::eval::estimate::Usage)> = Vec::new();
    let (mut episodes, mut calls, mut unknown) = (0usize, 0.0f64, 0usize);
    for (i, j) in jobs.iter().enumerate() {
        let per_q: f64 = j
            .methods
            .iter()
            .map(|m| calls_per_episode(m, &j.settings))
            .sum::<anyhow::Result<f64>>()?;
        let settings: Vec<String> = j.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row = vec![
            Cell::Int(i as u64 + 1),
            Cell::text(&j.dataset),
            j.hops.map_or(Cell::Missing, |h| Cell::Int(u64::from(h))),
            Cell::text(j.methods.join(",")),
            Cell::text(settings.join(" ")),
        ];
        match question_count(j) {
            Some(q) => {
                episodes += q * j.methods.len();
                calls += q as f64 * per_q;
                let mut parts = Vec::new();
                for m in &j.methods {
                    let budget = calls_per_episode(m, &j.settings)?;
                    let usage = sleuth::eval::estimate::Usage::of(m, model, &history, budget);
                    parts.push(sleuth::eval::estimate::Estimate::new(q, &usage, pricing));
                    if !usages.iter().any(|(n, _)| n == m) {
                        usages.push((m.clone(), usage));
                    }
                }
                let e = sleuth::eval::estimate::Estimate::total(&parts);
                estimates.push(e);
                row.extend([Cell::Int(q as u64), Cell::Int((q * j.methods.len()) as u64)]);
                row.extend(crate::cost::cells(Some(&e)));
            }
            None => {
                unknown += 1;
                row.extend([Cell::Missing, Cell::Missing]);
                row.extend(crate::cost::cells(None));
            }
        }
        table.push(row);
    }
    print!("{}", table.to_markdown());
    println!(
        "\n{} jobs, {episodes} episodes, at most {calls:.0} model calls (every budget used up; `sleuth methods NAME` shows each method's estimate)",
        jobs.len()
    );
    print!(
        "{}",
        crate::cost::footer(
            &sleuth::eval::estimate::Estimate::total(&estimates),
            model,
            &usages
        )
    );
    if unknown > 0 {
        println!(
            "{unknown} jobs have no data file at the given path (set --data-root); not counted"
        );
    }
    println!("\nequivalent commands:");
    for j in jobs {
        let mut argv = j.eval_args(model, out_root);
        argv.extend(extra.iter().cloned());
        println!("sleuth {}", shown(&argv));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_a_cartesian_product() {
        let mut g = BTreeMap::new();
        g.insert("a".to_string(), vec![Scalar::Int(1), Scalar::Int(2)]);
        g.insert(
            "b".to_string(),
            vec![
                Scalar::Str("x".into()),
                Scalar::Bool(true),
                Scalar::Float(0.5),
            ],
        );
        let p = grid_points(&g);
        assert_eq!(p.len(), 6);
        assert_eq!(
            p[5],
            vec![("a".into(), "2".into()), ("b".into(), "0.5".into())]
        );
        assert_eq!(grid_points(&BTreeMap::new()), vec![Vec::new()]);
    }

    #[test]
    fn estimates_come_from_the_registry_with_the_jobs_settings() {
        let mut s = BTreeMap::new();
        assert_eq!(calls_per_episode("react", &s).unwrap(), 20.0);
        assert_eq!(calls_per_episode("reflexion", &s).unwrap(), 41.0);
        assert_eq!(calls_per_episode("eir-reflexion", &s).unwrap(), 34.0);
        s.insert("reads".into(), "10".into());
        assert_eq!(calls_per_episode("eir", &s).unwrap(), 12.0);
        s.insert("extra_reads".into(), "2".into());
        assert_eq!(calls_per_episode("eir", &s).unwrap(), 14.0);
        assert!(calls_per_episode("rekt", &s).is_err());
    }
}
