//! Reading runs back: `records` (the records of a run directory, docs/records.md) and
//! `report` (`sleuth report`'s tables, files and pages, by the library's one report
//! entry point), both from records alone.

use crate::errors;
use pyo3::prelude::*;
use sleuth::data::{self, Dataset};
use sleuth::eval::analysis::{
    Aliases, Conventions, Direction, ErrorClasses, HolmFamily, MusiqueGroups, Options, Overrides,
    ReasoningEvidence,
};
use sleuth::eval::stats::BootstrapP;
use sleuth::eval::stats::{DEFAULT_RESAMPLES, DEFAULT_SEED};
use sleuth::eval::store::{read_records, RECORDS};
use sleuth::eval::{RecordContext, RunRecord};
use sleuth::methods::Episode;
use sleuth::study::{ReportError, ReportJob};
use std::collections::BTreeMap;
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
        batched_calls: 0,
    };
    let mut record = RunRecord::from_episode(&question, Episode::default(), &ctx);
    // Fields a record leaves out when they are zero or empty are columns all the same
    // (docs/records.md lists them): give them a value so they serialize, in order.
    record.truncated_calls = 1;
    record.batched_calls = 1;
    record.list_cost_usd = 1.0;
    record.refusals = 1;
    record.conditions = Some(String::new());
    record.error_kind = Some(sleuth::methods::ErrorKind::Model);
    record.usage_unknown = 1;
    record.cache_marks_dropped = 1;
    record.before_extra_reads = Some(sleuth::eval::SupportScores {
        support_f1: None,
        gold_recall: None,
        calls: 0,
    });
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

/// `sleuth report` through the same entry point (`sleuth::study::ReportJob`): returns
/// `{"tables": [...], "markdown", "warnings", "empty", "written"}` as JSON text, the
/// tables in tidy form (every identifying column); files are written only when `out`
/// or `html` ask for them, where the CLI writes them.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (runs, *, baseline=None, tables=vec![], out=None, html=false, cohort=None,
    seed=DEFAULT_SEED, resamples=DEFAULT_RESAMPLES, conventions=None, musique=None,
    aliases="on", holm_family=None, holm_size=None, reasoning_evidence=None, error_classes=None,
    bootstrap_p=None, direction=None))]
pub fn report(
    py: Python<'_>,
    runs: Vec<PathBuf>,
    baseline: Option<String>,
    tables: Vec<String>,
    out: Option<PathBuf>,
    html: bool,
    cohort: Option<u32>,
    seed: u64,
    resamples: usize,
    conventions: Option<&str>,
    musique: Option<&str>,
    aliases: &str,
    holm_family: Option<&str>,
    holm_size: Option<usize>,
    reasoning_evidence: Option<&str>,
    error_classes: Option<&str>,
    bootstrap_p: Option<&str>,
    direction: Option<&str>,
) -> PyResult<String> {
    /// A keyword's value parsed, or an error naming the keyword and its choices.
    fn rule<T>(
        key: &str,
        value: Option<&str>,
        parse: impl Fn(&str) -> Option<T>,
        names: &[&str],
    ) -> PyResult<Option<T>> {
        value
            .map(|v| {
                parse(v).ok_or_else(|| {
                    errors::SleuthError::new_err(format!(
                        "{key}={v:?}: expected one of {}",
                        names.join(", ")
                    ))
                })
            })
            .transpose()
    }
    let musique_groups = |v: &str| match v {
        "splits" => Some(MusiqueGroups::Splits),
        "pooled" => Some(MusiqueGroups::Pooled),
        _ => None,
    };
    let overrides = Overrides {
        musique: rule("musique", musique, musique_groups, &["splits", "pooled"])?,
        holm_family: rule(
            "holm_family",
            holm_family,
            HolmFamily::parse,
            &HolmFamily::NAMES,
        )?,
        holm_size,
        bootstrap_p: rule(
            "bootstrap_p",
            bootstrap_p,
            BootstrapP::parse,
            &BootstrapP::NAMES,
        )?,
        error_classes: rule(
            "error_classes",
            error_classes,
            |v| v.parse::<ErrorClasses>().ok(),
            ErrorClasses::NAMES,
        )?,
        reasoning_evidence: rule(
            "reasoning_evidence",
            reasoning_evidence,
            |v| v.parse::<ReasoningEvidence>().ok(),
            ReasoningEvidence::NAMES,
        )?,
        direction: rule("direction", direction, Direction::parse, &Direction::NAMES)?,
    };
    let job = ReportJob {
        dirs: runs,
        options: Options {
            baseline,
            cohort_turns: cohort,
            resamples,
            seed,
            aliases: rule("aliases", Some(aliases), Aliases::parse, &Aliases::NAMES)?
                .unwrap_or_default(),
            ..Options::default()
        },
        conventions: rule(
            "conventions",
            conventions,
            Conventions::parse,
            &Conventions::NAMES,
        )?,
        overrides,
        tables,
    };
    py.allow_threads(|| build(&job, out.as_deref(), html))
        .map_err(errors::report)
}

fn build(job: &ReportJob, out: Option<&Path>, html: bool) -> Result<String, ReportError> {
    let report = job.open()?;
    let written = report.write(out, html, &mut |_| {})?;
    let tables: Vec<serde_json::Value> = report
        .tables()
        .iter()
        .map(|(_, tidy)| tidy.to_json())
        .collect();
    let markdown = report.markdown();
    let value = serde_json::json!({
        "tables": tables,
        "markdown": markdown.text,
        "warnings": report.warnings(),
        "empty": markdown.empty,
        "written": written,
    });
    Ok(value.to_string())
}
