//! Reading runs back: `records` (the records of a run directory, docs/records.md) and
//! `report` (the tables of `sleuth report`, with its CSV/JSON/SVG files and trace
//! viewers), both from records alone.

use crate::errors;
use pyo3::prelude::*;
use sleuth::data::{self, Dataset};
use sleuth::eval::analysis::{load, Analysis, Options};
use sleuth::eval::stats::{DEFAULT_RESAMPLES, DEFAULT_SEED};
use sleuth::eval::store::{read_records, RECORDS};
use sleuth::eval::{RecordContext, RunRecord};
use sleuth::methods::Episode;
use sleuth::report as render;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every record of a run directory (or of a records file) as one JSON array.
#[pyfunction]
pub fn records(py: Python<'_>, run: PathBuf) -> PyResult<String> {
    let file = if run.is_dir() { run.join(RECORDS) } else { run };
    let records = py
        .allow_threads(|| read_records(&file))
        .map_err(errors::to_py)?;
    Ok(serde_json::to_string(&records).expect("records serialize"))
}

/// The top-level fields of a record, in the order records are written.
#[pyfunction]
pub fn record_fields() -> Vec<String> {
    let question = data::Question {
        id: String::new(),
        dataset: Dataset::Jsonl,
        text: String::new(),
        answers: vec![],
        paragraphs: vec![],
        supporting_facts: vec![],
        supporting_paragraphs: vec![],
        hops: None,
        kind: None,
    };
    let settings = BTreeMap::new();
    let ctx = RecordContext {
        method: "",
        settings: &settings,
        model: "",
        retries: 0,
        cost_usd: 0.0,
        constraints_dropped: 0,
    };
    let mut record = RunRecord::from_episode(&question, Episode::default(), &ctx);
    // Fields a record leaves out when they are zero or empty are columns all the same
    // (docs/records.md lists them): give them a value so they serialize, in order.
    record.truncated_calls = 1;
    record.refusals = 1;
    record.cache_marks_dropped = 1;
    record.call_stops = vec![sleuth::methods::CallStop {
        call: 1,
        kind: sleuth::methods::CallKind::Action,
        stop: sleuth::llm::FinishReason::Length,
    }];
    match serde_json::to_value(&record).expect("records serialize") {
        serde_json::Value::Object(map) => map.keys().cloned().collect(),
        _ => unreachable!("a record is an object"),
    }
}

/// `sleuth report`: returns `{"tables": [...], "markdown", "warnings", "files",
/// "html"}` as JSON text; files are written only when `out` or `html` ask for them.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (runs, *, baseline=None, out=None, html=false, cohort=None, seed=DEFAULT_SEED, resamples=DEFAULT_RESAMPLES))]
pub fn report(
    py: Python<'_>,
    runs: Vec<PathBuf>,
    baseline: Option<String>,
    out: Option<PathBuf>,
    html: bool,
    cohort: Option<u32>,
    seed: u64,
    resamples: usize,
) -> PyResult<String> {
    py.allow_threads(|| build(runs, baseline, out, html, cohort, seed, resamples))
}

fn build(
    runs: Vec<PathBuf>,
    baseline: Option<String>,
    out: Option<PathBuf>,
    html: bool,
    cohort: Option<u32>,
    seed: u64,
    resamples: usize,
) -> PyResult<String> {
    if runs.is_empty() {
        return Err(errors::SleuthError::new_err(
            "report: no run directory given",
        ));
    }
    let set = load(&runs).map_err(errors::to_py)?;
    if let Some(b) = &baseline {
        if !set
            .arms
            .iter()
            .any(|a| &a.key.method == b || &a.key.name() == b)
        {
            let methods: BTreeSet<String> = set.arms.iter().map(|a| a.key.name()).collect();
            return Err(errors::method(format!(
                "baseline `{b}` has no records (present: {})",
                methods.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let options = Options {
        baseline,
        cohort_turns: cohort,
        resamples: resamples.max(1),
        seed,
        ..Options::default()
    };
    let analysis = Analysis::build(&set, &options);
    let tables: Vec<serde_json::Value> = render::tables::all(&analysis)
        .iter()
        .map(|t| t.to_json())
        .collect();
    let files = match &out {
        Some(dir) => render::write_outputs(&analysis, dir).map_err(errors::to_py)?,
        None => vec![],
    };
    let pages = if html {
        write_traces(&set, out.as_deref())?
    } else {
        vec![]
    };
    let value = serde_json::json!({
        "tables": tables,
        "markdown": render::markdown(&analysis),
        "warnings": analysis.warnings,
        "files": files,
        "html": pages,
    });
    Ok(value.to_string())
}

/// One `trace.html` per run, where `sleuth report --html` puts it.
fn write_traces(
    set: &sleuth::eval::analysis::RecordSet,
    out: Option<&Path>,
) -> PyResult<Vec<PathBuf>> {
    let pages = render::trace_pages(set);
    let single = pages.len() == 1;
    let mut written = Vec::new();
    for page in pages {
        let (dir, page) = (page.dir.clone(), page.render());
        let target = match out {
            None => dir.join("trace.html"),
            Some(o) if single => o.join("trace.html"),
            Some(o) => {
                let name = render::slug(&dir.display().to_string());
                o.join(if name.is_empty() { "run".into() } else { name })
                    .join("trace.html")
            }
        };
        let io = |e: std::io::Error, p: &Path| errors::to_py(sleuth::Error::io(p, e));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(e, parent))?;
        }
        std::fs::write(&target, page).map_err(|e| io(e, &target))?;
        written.push(target);
    }
    Ok(written)
}
