//! Experiment recipes: the grid behind a paper table, expanded into jobs.
//!
//! An experiment recipe (`experiments/*.toml`) describes the grid behind a paper table:
//! datasets (with hop splits) × groups of methods × a grid of option values. It
//! expands into typed jobs ([`super::Job`]), each written into its own run directory
//! under the output root, so `sleuth report OUT` finds them all and labels the arms
//! by the options that differ between runs.
//!
//! Recipe format:
//!
//! ```toml
//! name = "nudge-sweep"
//! description = "..."
//! limit = 100                       # optional: first N questions of each split
//! # sample = 1000 and seed = 1      # optional: a seeded random sample instead; a
//! #                                 # limit then keeps the first N of its seeded order
//! # setup = 20                      # optional: hold out the first 20 of the seeded
//! #                                 # order as setup questions, never scored
//! #                                 # (EIR App. B.1); the sample is drawn after them
//! methods = ["react", "sleuth"]     # methods of groups that name none
//! # batch = true                    # optional: every call through the provider's
//! #                                 # batch API, at half price (as `--batch`)
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
//! # env = "corpus"                  # optional: the open-corpus setting (EIR App. H),
//! # index = "indexes/hotpot"        # with a `sleuth index build` directory, relative
//! # corpus_reads = 6                # to the data root, and its read attempts
//! ```
//!
//! Every job of one split selects the same questions (same file, hops, sample, seed
//! and setup), so the methods of a table are compared on the same ids.
//!
//! Option keys are passed through to eval unchanged and checked against the methods of
//! each job before anything runs (`sleuth methods NAME` lists what a method reads).

use super::methods::{CorpusChoice, MethodSetup};
use super::model::ModelSetup;
use super::report_command::{ReportCommand, ReportSpec};
use super::selection::{Sample, Selection, Source};
use super::{Job, Shard};
use crate::data::Dataset;
use crate::eval::analysis::Conventions;
use crate::knob::Knob;
use crate::llm::middleware::CacheScope;
use crate::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// Setup questions held out of each split's seeded order.
    setup: Option<usize>,
    #[serde(default)]
    methods: Vec<String>,
    #[serde(default)]
    settings: BTreeMap<String, Scalar>,
    datasets: Vec<DatasetSpec>,
    #[serde(default)]
    groups: Vec<Group>,
    /// The tables its report shows, in print order (`sleuth report --tables` names).
    #[serde(default)]
    tables: Vec<String>,
    /// Every call through the provider's batch API (`--batch`).
    #[serde(default)]
    batch: bool,
    /// Whose rules its report follows: `sleuth`, `eir` or `ours` (default).
    conventions: Option<String>,
    /// The report commands its output gives (their Holm flags generated from the
    /// conventions).
    #[serde(default)]
    reports: Vec<ReportSpec>,
    /// `shared` (default) or `method`: whose cached responses a method may reuse
    /// ([`CacheScope`]; EIR Table 1's arms sample on their own under `method`).
    cache_scope: Option<String>,
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
    /// `pool` (default) or `corpus`.
    env: Option<String>,
    /// The BM25 index of `env = "corpus"`, relative to the data root.
    index: Option<PathBuf>,
    corpus_reads: Option<usize>,
}

/// One job of an experiment, as the recipe gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeJob {
    pub dataset: Dataset,
    pub data: PathBuf,
    /// Restrict to questions with this many hops (MuSiQue splits).
    pub hops: Option<u8>,
    pub methods: Vec<String>,
    /// Option key -> value, as `--set key=value`.
    pub settings: BTreeMap<String, String>,
    pub limit: Option<usize>,
    pub sample: Option<usize>,
    pub seed: Option<u64>,
    /// Setup questions held out of the seeded order before the sample (0: none).
    pub setup: usize,
    /// The open-corpus setting; `None`: each question's own pool.
    pub corpus: Option<CorpusChoice>,
    /// The job's run directory, relative to the experiment's output root.
    pub out_subdir: PathBuf,
}

/// What a command line changes in a recipe before it expands.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Where data paths start (default: the data directory `sleuth data fetch` fills).
    pub data_root: Option<PathBuf>,
    /// A dataset's file in place of the recipe's.
    pub files: BTreeMap<Dataset, PathBuf>,
    /// The index of every corpus group.
    pub index: Option<PathBuf>,
    /// The sample size and seed of every split.
    pub sample: Option<usize>,
    pub seed: Option<u64>,
}

/// A parsed recipe: its name, what it is for, and its jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub jobs: Vec<RecipeJob>,
    /// The tables its report shows (paper tables first, as the recipe lists them).
    pub tables: Vec<String>,
    /// The recipe's `batch = true`: its jobs send every call through the provider's
    /// batch API (a command line's `--batch` asks the same of any recipe).
    pub batch: bool,
    /// The recipe's `cache_scope`, when it gives one (`--cache-scope` overrides it).
    pub cache_scope: Option<CacheScope>,
    /// Whose rules its report follows (issue 42); `sleuth report --conventions`
    /// overrides it.
    pub conventions: Conventions,
    /// The report commands its output gives, resolved against its conventions.
    pub reports: Vec<ReportCommand>,
}

/// The file an experiment leaves at its output root, so `sleuth report OUT` shows the
/// recipe's tables and conventions: `{"name", "description", "tables", "conventions"}`.
pub const MANIFEST: &str = "experiment.json";

/// How a recipe's jobs are run: the model, the output root, and what every job shares.
#[derive(Debug, Clone)]
pub struct Running {
    pub model: ModelSetup,
    pub out_root: PathBuf,
    pub shard: Option<Shard>,
    /// Overrides the recipe's per-split question limit (a smoke run).
    pub limit: Option<usize>,
}

impl Experiment {
    /// Parses a recipe file. Data paths start at the overrides' `data_root`, else the
    /// data directory `sleuth data fetch` fills (never the recipe's own folder, so a
    /// recipe runs the same from anywhere); a dataset without `data` reads its fetched
    /// file, and `files` (dataset -> file) replaces a dataset's file outright.
    pub fn load(file: &Path, overrides: &Overrides) -> Result<Experiment> {
        let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
        Experiment::parse(&text, file, overrides)
    }

    /// [`Experiment::load`] on a recipe's text; `file` names it in messages.
    pub fn parse(text: &str, file: &Path, overrides: &Overrides) -> Result<Experiment> {
        let shown = file.display();
        let mut recipe: Recipe =
            toml::from_str(text).map_err(|e| Error::Invalid(format!("{shown}: {e}")))?;
        if overrides.sample.is_some() {
            recipe.sample = overrides.sample;
        }
        if overrides.seed.is_some() {
            recipe.seed = overrides.seed;
        }
        if recipe.data_root.is_some() {
            return Err(Error::Invalid(format!(
                "{shown}: `data_root` is no longer read: data paths start at the data directory (`sleuth data fetch`), or pass {}",
                Knob::DataRoot.with("DIR")
            )));
        }
        if recipe.setup.is_some_and(|n| n > 0) && recipe.sample.is_none() {
            return Err(Error::Invalid(format!(
                "{shown}: `setup` holds questions out of a seeded sample: set `sample` (and `seed`) too"
            )));
        }
        let root = overrides
            .data_root
            .clone()
            .unwrap_or_else(crate::data::fetch::data_dir);
        let jobs = expand(&recipe, &root, overrides)
            .map_err(|e| Error::Invalid(format!("in {shown}: {e}")))?;
        let known = crate::report::paper::known();
        if let Some(bad) = recipe.tables.iter().find(|t| !known.contains(&t.as_str())) {
            return Err(Error::Invalid(format!(
                "{shown}: unknown table `{bad}` in `tables` (known: {})",
                known.join(", ")
            )));
        }
        let cache_scope = match &recipe.cache_scope {
            None => None,
            Some(v) => Some(CacheScope::parse(v).ok_or_else(|| {
                Error::Invalid(format!(
                    "in {shown}: cache_scope = \"{v}\": expected one of {}",
                    CacheScope::NAMES.join(", ")
                ))
            })?),
        };
        let conventions = match &recipe.conventions {
            None => Conventions::Ours,
            Some(v) => Conventions::parse(v).ok_or_else(|| {
                Error::Invalid(format!(
                    "in {shown}: conventions = \"{v}\": expected one of {}",
                    Conventions::NAMES.join(", ")
                ))
            })?,
        };
        let reports = ReportCommand::resolve(&recipe.reports, conventions)
            .map_err(|e| Error::Invalid(format!("in {shown}: {e}")))?;
        let experiment = Experiment {
            conventions,
            reports,
            name: recipe.name,
            description: recipe.description,
            jobs,
            tables: recipe.tables,
            batch: recipe.batch,
            cache_scope,
        };
        for job in &experiment.jobs {
            job.method_setup().check().map_err(|e| {
                Error::Invalid(format!("{shown}: job {}: {e}", job.out_subdir.display()))
            })?;
        }
        Ok(experiment)
    }

    /// What [`MANIFEST`] holds at `out_root`: the report commands read it.
    pub fn manifest(&self, out_root: &Path) -> serde_json::Value {
        let reports: Vec<serde_json::Value> = self
            .reports
            .iter()
            .map(|r| {
                serde_json::json!({
                    "about": r.about,
                    "command": r.shell_line(out_root),
                    "argv": r.argv(out_root),
                })
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "tables": self.tables,
            "conventions": self.conventions.name(),
            "reports": reports,
        })
    }

    /// Every job as a [`Job`] writing below `running.out_root`.
    pub fn jobs(&self, running: &Running) -> Vec<Job> {
        self.jobs.iter().map(|j| self.job(j, running)).collect()
    }

    /// One recipe job as a [`Job`], batched when the recipe says so.
    fn job(&self, j: &RecipeJob, running: &Running) -> Job {
        let mut job = j.job(running);
        job.model.batch |= self.batch;
        job
    }

    /// Every job run on its split's held-out setup questions instead (prompt
    /// development), writing below `running.out_root/setup`; empty when the recipe
    /// holds none out.
    pub fn setup_jobs(&self, running: &Running) -> Vec<Job> {
        self.jobs
            .iter()
            .filter_map(|j| {
                let mut job = self.job(j, running);
                job.selection = job.selection.held_out()?;
                job.out = running.out_root.join("setup").join(&j.out_subdir);
                Some(job)
            })
            .collect()
    }
}

impl RecipeJob {
    /// The methods and options of this job (prompts and index are the defaults).
    pub fn method_setup(&self) -> MethodSetup {
        MethodSetup {
            names: self.methods.clone(),
            settings: self.settings.clone(),
            prompts: None,
            corpus: self.corpus.clone(),
        }
    }

    /// The questions of this job.
    pub fn selection(&self, shard: Option<Shard>, limit: Option<usize>) -> Selection {
        Selection {
            source: Source::File {
                dataset: Some(self.dataset),
                path: self.data.clone(),
            },
            hops: self.hops,
            limit: limit.or(self.limit),
            sample: self.sample_rule(),
            shard,
            ids: None,
        }
    }

    /// The seeded sample: `sample` questions after the `setup` held out.
    fn sample_rule(&self) -> Option<Sample> {
        self.sample.map(|size| Sample {
            size,
            seed: self.seed.unwrap_or(0),
            offset: self.setup,
        })
    }

    /// The typed job writing `running.out_root/out_subdir`.
    pub fn job(&self, running: &Running) -> Job {
        Job {
            selection: self.selection(running.shard, running.limit),
            methods: self.method_setup(),
            model: running.model.clone(),
            out: running.out_root.join(&self.out_subdir),
            concurrency: None,
            retry_errors: false,
        }
    }
}

/// The file a dataset of the recipe reads.
fn data_file(
    ds: &DatasetSpec,
    dataset: Dataset,
    root: &Path,
    files: &BTreeMap<Dataset, PathBuf>,
) -> Result<PathBuf> {
    if let Some(file) = files.get(&dataset) {
        return Ok(file.clone());
    }
    match &ds.data {
        Some(rel) => Ok(lexical_normalize(&root.join(rel))),
        None => Ok(crate::data::fetch::default_file(dataset, root)?),
    }
}

/// A group's open-corpus setting, its index relative to the data root (the command
/// line's index wins).
fn corpus_of(g: &Group, root: &Path, overrides: &Overrides) -> Result<Option<CorpusChoice>> {
    match g.env.as_deref().unwrap_or("pool") {
        "pool" => {
            if g.index.is_some() || g.corpus_reads.is_some() {
                return Err(Error::Invalid(
                    "`index` and `corpus_reads` need env = \"corpus\"".into(),
                ));
            }
            Ok(None)
        }
        "corpus" => {
            let index = match (&overrides.index, &g.index) {
                (Some(dir), _) => dir.clone(),
                (None, Some(rel)) => lexical_normalize(&root.join(rel)),
                (None, None) => {
                    return Err(Error::Invalid(format!(
                        "env = \"corpus\" needs `index` (a `sleuth index build` directory, relative to the data root) or {}",
                        Knob::Index.with("DIR")
                    )))
                }
            };
            Ok(Some(CorpusChoice {
                index,
                reads: g.corpus_reads.unwrap_or(6),
            }))
        }
        other => Err(Error::Invalid(format!(
            "env = \"{other}\": expected pool or corpus"
        ))),
    }
}

fn expand(recipe: &Recipe, root: &Path, overrides: &Overrides) -> Result<Vec<RecipeJob>> {
    let files = &overrides.files;
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
            return Err(Error::Invalid(format!(
                "group {} names no methods (and the recipe has no `methods`)",
                gi + 1
            )));
        }
        for d in &g.datasets {
            if !recipe.datasets.iter().any(|s| &s.name == d) {
                return Err(Error::Invalid(format!(
                    "group {} names dataset `{d}`, which the recipe does not define",
                    gi + 1
                )));
            }
        }
        let points = grid_points(&g.grid);
        let corpus = corpus_of(g, root, overrides)
            .map_err(|e| Error::Invalid(format!("group {}: {e}", gi + 1)))?;
        for ds in recipe
            .datasets
            .iter()
            .filter(|d| g.datasets.is_empty() || g.datasets.contains(&d.name))
        {
            let dataset: Dataset = ds.name.parse()?;
            let data = data_file(ds, dataset, root, files)?;
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
                        sub = sub.join(crate::report::slug(&tag.join("_")));
                    }
                    jobs.push(RecipeJob {
                        dataset,
                        data: data.clone(),
                        hops,
                        methods: methods.clone(),
                        settings,
                        limit: recipe.limit,
                        sample: recipe.sample,
                        seed: recipe.seed,
                        setup: recipe.setup.unwrap_or(0),
                        corpus: corpus.clone(),
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
    fn a_recipe_expands_into_typed_jobs_per_split_and_grid_point() {
        let recipe = r#"
name = "t"
methods = ["react"]
limit = 3
[settings]
turns = 5
[[datasets]]
name = "musique"
data = "m.jsonl"
hops = [2, 3]
[[groups]]
methods = ["sleuth"]
grid = { nudge = [0.5, "none"] }
"#;
        let root = Path::new("/data");
        let overrides = Overrides {
            data_root: Some(root.to_path_buf()),
            ..Overrides::default()
        };
        let e = Experiment::parse(recipe, Path::new("r.toml"), &overrides).unwrap();
        assert_eq!(e.jobs.len(), 4);
        let j = &e.jobs[1];
        assert_eq!(j.dataset, Dataset::Musique);
        assert_eq!(j.data, Path::new("/data/m.jsonl"));
        assert_eq!(j.hops, Some(2));
        assert_eq!(j.settings["nudge"], "none");
        assert_eq!(j.settings["turns"], "5");
        assert_eq!(j.out_subdir, Path::new("musique-2hop/sleuth/nudge-none"));
        let running = Running {
            model: ModelSetup::new("scripted:x.json"),
            out_root: PathBuf::from("out"),
            shard: None,
            limit: Some(1),
        };
        let job = j.job(&running);
        assert_eq!(job.selection.limit, Some(1));
        assert_eq!(job.out, Path::new("out/musique-2hop/sleuth/nudge-none"));
        assert!(e.jobs(&running).iter().all(|j| !j.model.batch));
        // `batch = true` batches every job of the recipe.
        let batched = recipe.replace("limit = 3", "limit = 3\nbatch = true");
        let e = Experiment::parse(&batched, Path::new("r.toml"), &overrides).unwrap();
        assert!(e.batch);
        assert!(e.jobs(&running).iter().all(|j| j.model.batch));
        // A key no method of the job reads fails before anything runs.
        let bad = recipe
            .replace("turns = 5", "tau = 2\nturns = 5")
            .replace("\"sleuth\"]", "\"react\"]");
        let err = Experiment::parse(&bad, Path::new("r.toml"), &overrides)
            .unwrap_err()
            .to_string();
        assert!(err.contains("r.toml: job musique-2hop/react"), "{err}");
    }

    #[test]
    fn setup_needs_a_sample_and_a_corpus_group_needs_an_index() {
        let base = "name = \"t\"\nmethods = [\"eir\"]\n[[datasets]]\nname = \"hotpotqa\"\ndata = \"h.jsonl\"\n";
        let overrides = Overrides {
            data_root: Some(PathBuf::from("/data")),
            ..Overrides::default()
        };
        let parse = |text: &str, o: &Overrides| Experiment::parse(text, Path::new("r.toml"), o);
        let err = parse(&format!("setup = 20\n{base}"), &overrides).unwrap_err();
        assert!(err.to_string().contains("set `sample`"), "{err}");
        let e = parse(
            &format!("sample = 5\nseed = 2\nsetup = 3\n{base}"),
            &overrides,
        )
        .unwrap();
        let sample = e.jobs[0].selection(None, None).sample.unwrap();
        assert_eq!((sample.size, sample.seed, sample.offset), (5, 2, 3));
        let corpus = format!("{base}[[groups]]\nenv = \"corpus\"\n");
        let err = parse(&corpus, &overrides).unwrap_err();
        assert!(err.to_string().contains("needs `index`"), "{err}");
        let with_index = Overrides {
            index: Some(PathBuf::from("/idx")),
            ..overrides.clone()
        };
        let e = parse(&corpus, &with_index).unwrap();
        assert_eq!(e.jobs[0].corpus.as_ref().unwrap().index, Path::new("/idx"));
        // A method without an open-corpus setting is refused before anything runs.
        let err = parse(&corpus.replace("[\"eir\"]", "[\"full-pool\"]"), &with_index).unwrap_err();
        assert!(err.to_string().contains("no open-corpus setting"), "{err}");
    }
}
