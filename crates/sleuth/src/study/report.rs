//! `sleuth report` as one entry point: a [`ReportJob`] (run directories and typed
//! options) becomes a [`Report`] (records loaded, the baseline checked, the tables
//! chosen, the analyses built), which renders its tables and writes its files and
//! pages. The CLI and the Python package only convert their arguments into a job and
//! show what comes back, so both choose the same tables, refuse the same baselines and
//! write the same files and pages in the same places.

use super::MANIFEST;
use crate::eval::analysis::{load_with, Analysis, Conventions, Options, Overrides, RecordSet};
use crate::knob::Knob;
use crate::report::site::{self, IndexPages, PageError, TraceWritten};
use crate::report::{self, table::Table, Selection};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a report reads and how it analyses it.
#[derive(Debug, Clone, Default)]
pub struct ReportJob {
    /// Run directories, records files (shards) or directories holding run directories.
    pub dirs: Vec<PathBuf>,
    /// Baseline, cohort, bootstrap seed and resamples; the rules a paper's conventions
    /// decide are set from `conventions` and `overrides` when the job opens.
    pub options: Options,
    /// Whose rules to follow; `None`: the conventions the recipes under `dirs` name
    /// (their `experiment.json`), else ours.
    pub conventions: Option<Conventions>,
    /// The rules set one by one (a flag each), over the conventions' choice.
    pub overrides: Overrides,
    /// The tables to show and write, in order (`all`, or names from
    /// [`report::paper::known`]); empty: the tables the recipes under `dirs` name
    /// (their `experiment.json`), else the report's own.
    pub tables: Vec<String>,
}

/// Why a report could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no run directory given")]
    NoRuns,
    /// A table name no report knows (from the job, or from a recipe's manifest).
    #[error("{0}")]
    Tables(String),
    #[error("reading {}", .path.display())]
    Manifest {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{} has no records (present: {})", Knob::Baseline.subject(baseline), .present.join(", "))]
    UnknownBaseline {
        baseline: String,
        present: Vec<String>,
    },
    /// A method with several arms (a sweep) named as the baseline: which arm is meant?
    #[error("{} has {} arms; name one: {}", Knob::Baseline.subject(baseline), .arms.len(), name_one(.arms))]
    AmbiguousBaseline { baseline: String, arms: Vec<String> },
    /// An option out of its range (the CLI's parser already refuses these).
    #[error("{0}")]
    Invalid(String),
    /// Records that could not be read, or table and figure files not written.
    #[error(transparent)]
    Records(#[from] crate::Error),
    #[error(transparent)]
    Page(#[from] PageError),
}

fn name_one(arms: &[String]) -> String {
    arms.iter()
        .map(|a| Knob::Baseline.with(format!("'{a}'")).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The records of a job, analysed: what every front end renders and writes.
pub struct Report {
    dirs: Vec<PathBuf>,
    set: RecordSet,
    analysis: Analysis,
    selection: Selection,
}

/// Something written, as it is written (a front end may say so at once).
#[derive(Debug, Clone, Copy)]
pub enum Wrote<'a> {
    /// The table, Markdown, LaTeX, JSON and figure files, `count` of them, in `dir`.
    Outputs { dir: &'a Path, count: usize },
    /// One HTML page.
    Page(&'a Path),
}

/// Everything [`Report::write`] wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Written {
    /// Tables (CSV, JSON, JSON Lines, Markdown, LaTeX), report.md, report.json and SVG
    /// figures, in the output directory.
    pub files: Vec<PathBuf>,
    /// One trace page per run.
    pub traces: Vec<TraceWritten>,
    /// `index.html` and `questions.html`, when the pages have a directory to go to.
    pub index: Option<IndexPages>,
}

/// The shown tables as Markdown, and the names that had nothing to show.
pub struct Markdown {
    pub text: String,
    pub empty: Vec<String>,
}

impl ReportJob {
    /// Loads the records, checks the baseline against them, chooses the tables and
    /// builds the analyses. A bad table name is refused before any record is read.
    pub fn open(&self) -> Result<Report, ReportError> {
        if self.dirs.is_empty() {
            return Err(ReportError::NoRuns);
        }
        let manifests = self.manifests()?;
        let conventions = match self.conventions {
            Some(c) => c,
            None => recipes_conventions(&manifests)?,
        };
        let options = conventions.apply(self.options.clone(), &self.overrides);
        check_ranges(&options)?;
        let selection = self.selection(&manifests)?;
        let set = load_with(&self.dirs, options.aliases)?;
        if let Some(b) = &options.baseline {
            check_baseline(&set, b)?;
        }
        let analysis = Analysis::build(&set, &options);
        Ok(Report {
            dirs: self.dirs.clone(),
            set,
            analysis,
            selection,
        })
    }

    /// The recipes' manifests (`experiment.json`) in the job's directories, or, for a
    /// directory without one, in its subdirectories: a recipe run once per model into
    /// folders below one root (`--out runs/NAME/M`) is reported from that root.
    fn manifests(&self) -> Result<Vec<(PathBuf, serde_json::Value)>, ReportError> {
        let mut paths = Vec::new();
        for dir in &self.dirs {
            let own = dir.join(MANIFEST);
            if own.is_file() {
                paths.push(own);
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut below: Vec<PathBuf> = entries
                .filter_map(|e| Some(e.ok()?.path().join(MANIFEST)))
                .filter(|p| p.is_file())
                .collect();
            below.sort();
            paths.extend(below);
        }
        let mut out = Vec::new();
        for path in paths {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let manifest = serde_json::from_str(&text).map_err(|source| ReportError::Manifest {
                path: path.clone(),
                source,
            })?;
            out.push((path, manifest));
        }
        Ok(out)
    }

    /// The job's tables, else the recipes', else the report's own tables.
    fn selection(
        &self,
        manifests: &[(PathBuf, serde_json::Value)],
    ) -> Result<Selection, ReportError> {
        if !self.tables.is_empty() {
            return Selection::parse(&self.tables).map_err(ReportError::Tables);
        }
        let mut names: Vec<String> = Vec::new();
        for (_, manifest) in manifests {
            for t in manifest["tables"].as_array().into_iter().flatten() {
                if let Some(t) = t.as_str().filter(|t| !names.iter().any(|n| n == t)) {
                    names.push(t.to_string());
                }
            }
        }
        if names.is_empty() {
            return Ok(Selection::Terminal);
        }
        Selection::parse(&names).map_err(|e| ReportError::Tables(format!("{e} (in {MANIFEST})")))
    }
}

/// The conventions the recipes name: one for all of them (ours when none names any); two
/// recipes naming different ones must be told apart by `--conventions`.
fn recipes_conventions(
    manifests: &[(PathBuf, serde_json::Value)],
) -> Result<Conventions, ReportError> {
    let mut named: Vec<(Conventions, &PathBuf)> = Vec::new();
    for (path, manifest) in manifests {
        let Some(name) = manifest["conventions"].as_str() else {
            continue;
        };
        let c = Conventions::parse(name).ok_or_else(|| {
            ReportError::Invalid(format!(
                "{}: conventions `{name}` (expected one of {})",
                path.display(),
                Conventions::NAMES.join(", ")
            ))
        })?;
        if let Some((other, at)) = named.iter().find(|(o, _)| *o != c) {
            return Err(ReportError::Invalid(format!(
                "the recipes name different conventions ({} in {}, {} in {}); choose one with {}",
                other.name(),
                at.display(),
                c.name(),
                path.display(),
                Knob::Conventions
            )));
        }
        named.push((c, path));
    }
    Ok(named.first().map_or(Conventions::Ours, |(c, _)| *c))
}

/// The most bootstrap resamples a report takes (the CLI's `--resamples` bound).
pub const MAX_RESAMPLES: usize = 10_000_000;

/// What the CLI's argument parser checks, checked again for front ends without one
/// (each front end words the knob).
fn check_ranges(options: &Options) -> Result<(), ReportError> {
    if !(1..=MAX_RESAMPLES).contains(&options.resamples) {
        return Err(ReportError::Invalid(format!(
            "{} must be 1 to {MAX_RESAMPLES} (got {})",
            Knob::Resamples,
            options.resamples
        )));
    }
    if options.cohort_turns == Some(0) {
        return Err(ReportError::Invalid(format!(
            "{} must be at least 1 turn",
            Knob::Cohort
        )));
    }
    Ok(())
}

/// A baseline names a method with records, or one labelled arm; a method with several
/// arms (a sweep) is ambiguous, so one of them must be named.
fn check_baseline(set: &RecordSet, baseline: &str) -> Result<(), ReportError> {
    let arms = || set.arms.iter().map(|a| &a.key);
    if !arms().any(|k| k.method == baseline || k.name() == baseline) {
        let present: BTreeSet<String> = arms().map(|k| k.name()).collect();
        return Err(ReportError::UnknownBaseline {
            baseline: baseline.to_string(),
            present: present.into_iter().collect(),
        });
    }
    if arms().any(|k| k.name() == baseline) {
        return Ok(());
    }
    let named: BTreeSet<String> = arms()
        .filter(|k| k.method == baseline)
        .map(|k| k.name())
        .collect();
    if named.len() > 1 {
        return Err(ReportError::AmbiguousBaseline {
            baseline: baseline.to_string(),
            arms: named.into_iter().collect(),
        });
    }
    Ok(())
}

impl Report {
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    pub fn records(&self) -> &RecordSet {
        &self.set
    }

    /// Conflicting duplicates, skipped lines, arms the analyses could not compare.
    pub fn warnings(&self) -> &[String] {
        &self.analysis.warnings
    }

    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// The shown tables, each in display form and in tidy form (one value per cell,
    /// with every identifying column: dataset, model, method, label).
    pub fn tables(&self) -> Vec<(Table, Table)> {
        report::paper::select(&self.analysis, &self.selection).0
    }

    /// The shown tables as Markdown, as the terminal shows them.
    pub fn markdown(&self) -> Markdown {
        let (text, empty) = report::markdown_of(&self.analysis, &self.selection);
        Markdown { text, empty }
    }

    /// Everything as one JSON object: the analyses and every table in tidy form.
    pub fn json(&self) -> serde_json::Value {
        report::json(&self.analysis)
    }

    /// The tables the index page shows: the shown tables, or for runs no recipe names
    /// tables for, the accuracy and comparison tables.
    fn index_tables(&self) -> Vec<Table> {
        let shown = match &self.selection {
            Selection::Terminal => Selection::Named(
                ["pivot", "summary", "comparison"]
                    .map(String::from)
                    .to_vec(),
            ),
            other => other.clone(),
        };
        report::paper::select(&self.analysis, &shown)
            .0
            .into_iter()
            .map(|(display, _)| display)
            .collect()
    }

    /// Writes the files into `out` (when given) and with `html` a trace page per run
    /// (into `out`, else each run's directory) and the index and side-by-side
    /// questions pages (into `out`, else the one directory the job named; with neither
    /// they are not written: [`Written::index`] is `None`). `wrote` hears of each step.
    pub fn write(
        &self,
        out: Option<&Path>,
        html: bool,
        wrote: &mut dyn FnMut(Wrote<'_>),
    ) -> Result<Written, ReportError> {
        let mut written = Written::default();
        if let Some(dir) = out {
            written.files = report::write_outputs_with(&self.analysis, dir, &self.selection)?;
            wrote(Wrote::Outputs {
                dir,
                count: written.files.len(),
            });
        }
        if !html {
            return Ok(written);
        }
        let mut page = |p: &Path| wrote(Wrote::Page(p));
        written.traces = site::write_traces(&self.set, out, &mut page)?;
        let index_dir = match (out, self.dirs.as_slice()) {
            (Some(o), _) => Some(o),
            (None, [one]) if one.is_dir() => Some(one.as_path()),
            _ => None,
        };
        if let Some(dir) = index_dir {
            let tables = self.index_tables();
            written.index = Some(site::write_index(
                &self.set,
                &written.traces,
                &written.files,
                &tables,
                dir,
                &mut page,
            )?);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A run directory holding react swept over two nudges and one eir arm.
    fn sweep_run(dir: &Path) {
        let record = |id: &str, method: &str, nudge: &str| {
            json!({
                "id": id, "dataset": "hotpotqa", "hops": 2, "method": method, "model": "m",
                "settings": {"nudge": nudge, "turns": "10"},
                "answer": "a", "gold": ["a"], "em": 1.0, "f1": 1.0,
                "finished": true, "timed_out": false, "stop": "finished", "turns": 1,
                "calls": 1, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                "nudge_turn": null, "reminders": 0, "retrieved": [], "gold_titles": [],
                "error": null, "trace": []
            })
            .to_string()
        };
        let lines = [
            record("q1", "react", "0.5"),
            record("q1", "react", "0.7"),
            record("q1", "eir", "0.5"),
            record("q2", "eir", "0.5"),
        ];
        std::fs::write(dir.join("records.jsonl"), lines.join("\n") + "\n").unwrap();
    }

    fn job(dir: &Path, baseline: Option<&str>, tables: &[&str]) -> ReportJob {
        ReportJob {
            dirs: vec![dir.to_path_buf()],
            options: Options {
                baseline: baseline.map(String::from),
                resamples: 50,
                ..Options::default()
            },
            conventions: None,
            overrides: Overrides::default(),
            tables: tables.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn a_table_no_report_knows_is_refused_before_any_record_is_read() {
        let missing = Path::new("/nonexistent/runs");
        let err = job(missing, None, &["summary", "nope"])
            .open()
            .err()
            .unwrap();
        assert!(matches!(err, ReportError::Tables(ref m) if m.contains("unknown table `nope`")));
        let err = ReportJob::default().open().err().unwrap();
        assert!(matches!(err, ReportError::NoRuns));
        let mut zero = job(missing, None, &[]);
        zero.options.resamples = 0;
        let err = zero.open().err().unwrap();
        assert_eq!(err.to_string(), "resamples must be 1 to 10000000 (got 0)");
    }

    #[test]
    fn a_baseline_is_a_method_with_one_arm_or_a_named_arm() {
        let dir = tempfile::tempdir().unwrap();
        sweep_run(dir.path());
        match job(dir.path(), Some("ircot"), &[]).open().err().unwrap() {
            ReportError::UnknownBaseline { present, .. } => {
                assert_eq!(present, ["eir", "react [nudge=0.5]", "react [nudge=0.7]"],)
            }
            other => panic!("{other}"),
        }
        let err = job(dir.path(), Some("react"), &[]).open().err().unwrap();
        assert_eq!(
            err.to_string(),
            "baseline `react` has 2 arms; name one: baseline='react [nudge=0.5]', \
             baseline='react [nudge=0.7]'"
        );
        for ok in ["eir", "react [nudge=0.7]"] {
            let report = job(dir.path(), Some(ok), &[]).open().unwrap();
            assert_eq!(report.analysis().comparisons.len(), 2, "{ok}");
        }
    }

    #[test]
    fn a_recipes_tables_are_the_default_and_html_writes_the_index_beside_the_files() {
        let dir = tempfile::tempdir().unwrap();
        sweep_run(dir.path());
        let manifest = json!({"tables": ["by_hops", "comparison", "summary"]}).to_string();
        std::fs::write(dir.path().join(MANIFEST), manifest).unwrap();
        let report = job(dir.path(), Some("eir"), &[]).open().unwrap();
        let names: Vec<String> = report.tables().into_iter().map(|(d, _)| d.name).collect();
        assert_eq!(names, ["comparison", "summary"]);
        // One hop count: nothing to show by hops, which the Markdown's caller is told.
        assert_eq!(report.markdown().empty, ["by_hops"]);
        // The tidy form carries every identifying column.
        let (_, tidy) = &report.tables()[1];
        assert_eq!(
            tidy.tidy_keys()[..4],
            ["dataset", "model", "method", "label"]
        );

        let out = dir.path().join("report");
        let mut heard = Vec::new();
        let written = report
            .write(Some(&out), true, &mut |w| {
                heard.push(match w {
                    Wrote::Outputs { count, .. } => format!("{count} files"),
                    Wrote::Page(p) => p.file_name().unwrap().to_string_lossy().into_owned(),
                })
            })
            .unwrap();
        let pages = written.index.expect("an output directory holds the index");
        assert_eq!(pages.index, out.join("index.html"));
        let index = std::fs::read_to_string(&pages.index).unwrap();
        assert!(index.contains("id=\"table-summary\""), "{index}");
        assert!(index.contains("href=\"trace.html\""), "{index}");
        assert!(index.contains("href=\"questions.html\""), "{index}");
        assert!(pages.questions.is_file());
        assert_eq!(written.traces.len(), 1);
        assert_eq!(written.traces[0].records, 4);
        let files = format!("{} files", written.files.len());
        assert_eq!(
            heard,
            [files.as_str(), "trace.html", "index.html", "questions.html"]
        );
        // Without --out the index goes into the one run directory given.
        let written = report.write(None, true, &mut |_| {}).unwrap();
        assert_eq!(written.index.unwrap().index, dir.path().join("index.html"));
    }
}
