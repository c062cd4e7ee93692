//! `export` and `score`: one arm of a run as the benchmark's official files (with the
//! gold subset of its questions), and a prediction file scored as the official scripts
//! score it, by the library's entry points the CLI also calls
//! (`sleuth::eval::export`, `sleuth::eval::scoring`). Their refusals are worded here
//! with the keywords a Python user passes.

use crate::errors;
use pyo3::prelude::*;
use sleuth::data::Dataset;
use sleuth::eval::export::{official_script, ExportError, ExportRequest};
use sleuth::eval::scoring::{score_file, Scope, ScoreError, ScoreRequest};
use sleuth::study::{Selection, Source};
use std::path::PathBuf;

/// `sleuth export`: returns `{"arm", "format", "count", "predictions", "written",
/// "official_command", "script"}` as JSON text; `written` names the files (`out`, the gold
/// subset and 2Wiki's aliases beside it) when `out` is given, else it is null.
#[pyfunction]
#[pyo3(signature = (run, *, out=None, format=None, method=None, dataset=None, data=None))]
pub fn export(
    py: Python<'_>,
    run: PathBuf,
    out: Option<PathBuf>,
    format: Option<&str>,
    method: Option<String>,
    dataset: Option<String>,
    data: Option<PathBuf>,
) -> PyResult<String> {
    let format: Option<Dataset> = format.map(str::parse).transpose().map_err(errors::data)?;
    let request = ExportRequest {
        run,
        format,
        method,
        dataset,
        data,
    };
    let (exported, written) = py
        .allow_threads(|| {
            let exported = sleuth::eval::export::export(&request)?;
            let written = out.as_deref().map(|o| exported.write(o)).transpose()?;
            Ok::<_, sleuth::Error>((exported, written))
        })
        .map_err(worded)?;
    let script = official_script(exported.format);
    let command = written
        .as_ref()
        .and_then(|w| w.official_command(exported.format));
    let value = serde_json::json!({
        "arm": exported.arm,
        "format": exported.format.name(),
        "count": exported.count,
        "predictions": exported.predictions,
        "data": exported.data,
        "written": written.as_ref().map(|w| serde_json::json!({
            "predictions": w.predictions,
            "gold": w.gold,
            "aliases": w.aliases,
        })),
        "official_command": command,
        "script": script.map(|s| serde_json::json!({"repository": s.repository, "file": s.file})),
    });
    Ok(value.to_string())
}

/// An export's refusal in Python's words (its keywords), else as [`errors::to_py`].
fn worded(e: sleuth::Error) -> PyErr {
    let sleuth::Error::Export(e) = e else {
        return errors::to_py(e);
    };
    match &e {
        ExportError::SeveralArms { choices, .. } => match e.datasets() {
            Some(datasets) => errors::method(format!(
                "`{}` has records on {} datasets ({}); pass dataset= one of them",
                choices[0].name,
                datasets.len(),
                datasets.join(", ")
            )),
            None => {
                let names: Vec<String> = choices
                    .iter()
                    .map(|c| format!("'{}' ({})", c.name, c.dataset))
                    .collect();
                errors::method(format!(
                    "the run holds {} arms; choose one with method= (and dataset=): {}",
                    choices.len(),
                    names.join(", ")
                ))
            }
        },
        ExportError::NoSuchArm { .. } => errors::method(e.to_string()),
        ExportError::NoDataFile { dir } => errors::data(sleuth::data::DataError::Invalid(format!(
            "{}: run.json names no data file; pass data=",
            dir.display()
        ))),
        ExportError::NoOfficialFormat => errors::data(sleuth::data::DataError::Invalid(
            "format='jsonl': export writes hotpotqa, musique or 2wiki files".into(),
        )),
    }
}

/// `sleuth score --json`: the official script's keys on its scale (`scale` says which),
/// with the counts of what was scored, as JSON text. `only_predicted` or `run` narrow
/// the gold questions as the CLI's flags do.
#[pyfunction]
#[pyo3(signature = (predictions, *, dataset=None, data=None, hops=None, only_predicted=false, run=None))]
pub fn score(
    py: Python<'_>,
    predictions: PathBuf,
    dataset: Option<&str>,
    data: Option<PathBuf>,
    hops: Option<u8>,
    only_predicted: bool,
    run: Option<PathBuf>,
) -> PyResult<String> {
    let named: Option<Dataset> = dataset.map(str::parse).transpose().map_err(errors::data)?;
    let Some(source) = Source::of(named, data) else {
        return Err(errors::DataError::new_err(
            "give data= (a gold file; its schema is detected), or dataset= to score against the fetched dev set",
        ));
    };
    let scope = match (run, only_predicted) {
        (Some(_), true) => {
            return Err(errors::SleuthError::new_err(
                "only_predicted and run both narrow the gold questions; pass one",
            ))
        }
        (Some(run), false) => Scope::Run(run),
        (None, true) => Scope::Predicted,
        (None, false) => Scope::All,
    };
    let scored = py
        .allow_threads(|| {
            let (dataset, data) = Selection::all(source)
                .resolve_file()?
                .expect("a file source");
            score_file(&ScoreRequest {
                dataset,
                data,
                predictions,
                hops,
                scope,
            })
        })
        .map_err(|e| match e {
            sleuth::Error::Score(ScoreError::RunRecords { path, dataset }) => {
                errors::DataError::new_err(format!(
                    "{} holds run records, not predictions: sleuth.export(run, format='{}', out=FILE) writes them in the official format",
                    path.display(),
                    dataset.name()
                ))
            }
            e => errors::to_py(e),
        })?;
    if let Some(missing) = scored.unpredicted_scored_zero() {
        let warning = py.get_type::<pyo3::exceptions::PyUserWarning>();
        let text = format!(
            "{missing} gold questions have no prediction and score 0; to score only the predicted ones, pass only_predicted=True (or run=RUN)"
        );
        PyErr::warn(py, &warning, &std::ffi::CString::new(text).unwrap(), 1)?;
    }
    Ok(scored.to_json().to_string())
}
