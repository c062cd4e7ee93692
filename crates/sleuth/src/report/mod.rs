//! Tables, figures and trace viewers, computed from run records alone.
//!
//! An [`Analysis`] is rendered four ways that always agree: Markdown tables for the
//! terminal, tidy CSV, JSON and JSON Lines files per table, SVG figures, and one JSON
//! object with everything. The HTML trace viewer works from the records themselves.

pub mod escape;
mod figures;
pub mod html;
pub mod index;
pub mod paper;
mod pivot;
pub mod site;
pub mod svg;
pub mod table;
mod table_forms;
pub mod tables;

pub use figures::{slug, Figure};
pub use paper::Selection;

use crate::eval::analysis::{Analysis, ArmKey, Conventions, RecordDigest, RecordSet};
use crate::knob::Knob;
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The terminal report: the default tables as Markdown, separated by blank lines.
pub fn markdown(a: &Analysis) -> String {
    let tables = tables::terminal(a);
    let mut out = tables
        .iter()
        .map(|t| t.to_markdown())
        .collect::<Vec<_>>()
        .join("\n");
    if a.max_turn > 0 {
        out.push_str(&more_in_files());
    }
    out
}

/// The tables of `selection` as Markdown, separated by blank lines, and the names
/// that had nothing to show.
pub fn markdown_of(a: &Analysis, selection: &Selection) -> (String, Vec<String>) {
    let (tables, empty) = paper::select(a, selection);
    let body = tables
        .iter()
        .map(|(t, _)| t.to_markdown())
        .collect::<Vec<_>>()
        .join("\n");
    // Whose rules made these numbers, before them (issue 42).
    let mut out = match body.is_empty() {
        true => body,
        false => format!("_{}_\n\n{body}", Conventions::describe(a)),
    };
    if a.max_turn > 0 && *selection == Selection::Terminal {
        out.push_str(&more_in_files());
    }
    (out, empty)
}

/// Everything as one JSON object: the analysis itself and every table.
pub fn json(a: &Analysis) -> serde_json::Value {
    serde_json::json!({
        "analysis": a,
        "tables": tables::tidy(a).iter().map(|t| t.to_json()).collect::<Vec<_>>(),
    })
}

/// Writes the tidy `<table>.csv`, `<table>.json` and `<table>.jsonl` for every table,
/// `report.json` and `report.md` with everything, and the SVG figures into `dir`;
/// returns the paths.
pub fn write_outputs(a: &Analysis, dir: &Path) -> Result<Vec<PathBuf>> {
    write_outputs_with(a, dir, &Selection::Terminal)
}

/// [`write_outputs`], and each table of `selection` also as `<table>.md`, `<table>.tex`
/// (booktabs) and, for the paper tables, `<table>.csv` and `<table>.json`.
pub fn write_outputs_with(a: &Analysis, dir: &Path, selection: &Selection) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let own: Vec<&str> = tables::NAMES.to_vec();
    for (shown, tidy) in paper::select(a, selection).0 {
        files.push((dir.join(format!("{}.md", shown.name)), shown.to_markdown()));
        files.push((dir.join(format!("{}.tex", shown.name)), shown.to_latex()));
        if !own.contains(&shown.name.as_str()) {
            files.push((dir.join(format!("{}.csv", tidy.name)), tidy.to_csv()));
            let json = serde_json::to_string_pretty(&tidy.to_json()).expect("tables serialize");
            files.push((dir.join(format!("{}.json", tidy.name)), json + "\n"));
        }
    }
    for t in tables::tidy(a) {
        files.push((dir.join(format!("{}.csv", t.name)), t.to_csv()));
        let json = serde_json::to_string_pretty(&t.to_json()).expect("tables serialize");
        files.push((dir.join(format!("{}.json", t.name)), json + "\n"));
        files.push((dir.join(format!("{}.jsonl", t.name)), t.to_jsonl()));
    }
    let all_md = tables::all(a)
        .iter()
        .map(|t| t.to_markdown())
        .collect::<Vec<_>>()
        .join("\n");
    files.push((dir.join("report.md"), all_md));
    let json = serde_json::to_string_pretty(&json(a)).expect("analysis serializes");
    files.push((dir.join("report.json"), json + "\n"));
    for f in figures::all(a) {
        files.push((dir.join(f.file), f.svg));
    }
    for (path, text) in &files {
        crate::atomic::write(path, text.as_bytes()).map_err(|e| Error::io(path, e))?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// One run's trace page, rendered when written ([`TracePage::write_to`]): it holds the
/// digests of the run's records and reads each record again from its file as the page
/// reaches it, so no more than one record is held at a time (issue 32).
pub struct TracePage<'a> {
    /// The run directory.
    pub dir: PathBuf,
    title: String,
    config: Vec<(String, String)>,
    set: &'a RecordSet,
    /// (method, source, digest) of each record, in page order.
    records: Vec<(&'a str, usize, &'a RecordDigest)>,
}

impl TracePage<'_> {
    /// Writes the page one question at a time.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let methods: BTreeSet<&str> = self.records.iter().map(|(m, _, _)| *m).collect();
        let mut reader = self.set.reader();
        let records = self.records.iter().map(|(_, origin, d)| {
            reader
                .read(*origin, d)
                .map_err(|e| std::io::Error::other(e.to_string()))
        });
        html::render_each(out, &self.title, &self.config, &methods, records)
    }

    /// The whole page as text.
    pub fn render(&self) -> std::io::Result<String> {
        let mut page = Vec::new();
        self.write_to(&mut page)?;
        Ok(String::from_utf8(page).expect("the page is text"))
    }
}

/// One trace page per run directory.
pub fn trace_pages(set: &RecordSet) -> Vec<TracePage<'_>> {
    type Entry<'a> = (&'a ArmKey, usize, &'a RecordDigest);
    let mut by_dir: BTreeMap<&Path, Vec<Entry<'_>>> = BTreeMap::new();
    for arm in &set.arms {
        for (r, &s) in arm.records.iter().zip(&arm.origins) {
            by_dir
                .entry(set.sources[s].dir.as_path())
                .or_default()
                .push((&arm.key, s, &**r));
        }
    }
    by_dir
        .into_iter()
        .map(|(dir, mut records)| {
            records.sort_by(|(a, _, x), (b, _, y)| {
                (&a.method, &a.model, &x.id).cmp(&(&b.method, &b.model, &y.id))
            });
            let source = set
                .sources
                .iter()
                .find(|s| s.dir == dir)
                .expect("dir comes from a source");
            let c = &source.config;
            let mut config: Vec<(String, String)> = Vec::new();
            if let Some(d) = &c.dataset {
                config.push(("dataset".into(), d.clone()));
            }
            if let Some(m) = &c.model {
                config.push(("model".into(), m.clone()));
            }
            if !c.methods.is_empty() {
                config.push(("methods".into(), c.methods.join(", ")));
            }
            config.extend(c.settings.iter().map(|(k, v)| (k.clone(), v.clone())));
            config.push(("records".into(), records.len().to_string()));
            TracePage {
                dir: dir.to_path_buf(),
                title: dir.display().to_string(),
                config,
                set,
                records: records
                    .into_iter()
                    .map(|(key, s, d)| (key.method.as_str(), s, d))
                    .collect(),
            }
        })
        .collect()
}

/// Where the tables a terminal leaves out are: a report is a document in the CLI's
/// words, whoever wrote it.
fn more_in_files() -> String {
    let (out, json) = (Knob::Out.flag(), Knob::Json.flag());
    format!("\n(Accuracy at turn t and working-memory dynamics: see {out} or {json}.)\n")
}
