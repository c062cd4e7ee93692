//! Reading run directories (and shard files) into arms of paired records.
//!
//! A run directory holds `run.json` (the run's config) and `records.jsonl`; a sharded or
//! resumed run may leave several `records*.jsonl` files, and an experiment leaves a tree
//! of run directories. All of them are read here, duplicates (same question, method,
//! model and settings) are dropped with a warning when they disagree, and records are
//! grouped into arms: one (dataset, method, model, settings label) each.
//!
//! Records are read a line at a time and each is held as its [`RecordDigest`] (scores,
//! usage, outcome inputs, a few numbers per turn), never its trace text; arms derived
//! from an arm share its digests. Pages that show the text read each record again from
//! its file, one at a time ([`RecordReader`]). Issue 32: before digests, a report held
//! every parsed record (2.4 GB for 100,000 ReAct records of 10 turns).

use super::digest::RecordDigest;
use crate::eval::RunRecord;
use crate::{Error, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How deep `load` looks below a directory for run directories.
const MAX_DEPTH: usize = 4;

/// The parts of `run.json` reports use. Unknown fields are kept in `raw`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunConfig {
    pub methods: Vec<String>,
    pub model: Option<String>,
    pub dataset: Option<String>,
    /// Option key -> value, as strings (numbers and booleans are stringified).
    pub settings: BTreeMap<String, String>,
    #[serde(skip)]
    pub raw: serde_json::Value,
}

impl RunConfig {
    /// Reads `run.json` leniently: only its JSON syntax is required.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let raw: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::Invalid(format!("{}: invalid JSON: {e}", path.display())))?;
        let str_of = |key: &str| raw.get(key).and_then(|v| v.as_str()).map(str::to_string);
        let methods = match raw.get("methods") {
            Some(serde_json::Value::Array(items)) => items.iter().map(value_string).collect(),
            Some(serde_json::Value::String(s)) => {
                s.split(',').map(|m| m.trim().to_string()).collect()
            }
            _ => Vec::new(),
        };
        let settings = match raw.get("settings") {
            Some(serde_json::Value::Object(map)) => map
                .iter()
                .map(|(k, v)| (k.clone(), value_string(v)))
                .collect(),
            _ => BTreeMap::new(),
        };
        Ok(RunConfig {
            methods,
            model: str_of("model"),
            dataset: str_of("dataset"),
            settings,
            raw,
        })
    }
}

fn value_string(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "none".to_string(),
        other => other.to_string(),
    }
}

/// One records file and the config of the run that wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub records_file: PathBuf,
    /// The run directory (the records file's parent).
    pub dir: PathBuf,
    pub config: RunConfig,
}

/// What identifies an arm: records in one arm are paired with another arm's by id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ArmKey {
    pub dataset: String,
    pub method: String,
    pub model: String,
    /// The settings that distinguish this arm from other runs of the same method and
    /// model on the same dataset (`nudge=0.5,turns=20`), or empty.
    pub label: String,
}

impl ArmKey {
    /// `method` or `method [label]`.
    pub fn name(&self) -> String {
        if self.label.is_empty() {
            self.method.clone()
        } else {
            format!("{} [{}]", self.method, self.label)
        }
    }
}

/// The records of one arm, sorted by question id, one per id.
#[derive(Debug, Clone)]
pub struct Arm {
    pub key: ArmKey,
    /// The run settings shared by this arm's records.
    pub settings: BTreeMap<String, String>,
    /// Each record's digest, shared, not copied, by the arms derived from this one (the
    /// hop splits, the retry wrappers' pooled arms); [`RecordSet::reader`] reads the
    /// whole record again.
    pub records: Vec<Arc<RecordDigest>>,
    /// For each record, the index in [`RecordSet::sources`] it was read from.
    pub origins: Vec<usize>,
}

/// Everything loaded from the paths given to `sleuth report`.
#[derive(Debug, Clone)]
pub struct RecordSet {
    pub sources: Vec<Source>,
    pub arms: Vec<Arm>,
    /// Conflicting duplicates, skipped partial lines: shown to the user, never fatal.
    pub warnings: Vec<String>,
}

/// Loads run directories, records files, or trees of run directories.
pub fn load(paths: &[PathBuf]) -> Result<RecordSet> {
    load_with(paths, Aliases::On)
}

/// Whether a record's EM and F1 count its gold answer's aliases (MuSiQue's
/// `answer_aliases`, 2Wiki's `id_aliases.json`), as both papers and the official
/// scripts do, or its first gold answer alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Aliases {
    #[default]
    On,
    Off,
}

impl Aliases {
    pub const NAMES: [&'static str; 2] = ["on", "off"];

    pub fn parse(name: &str) -> Option<Aliases> {
        match name {
            "on" => Some(Aliases::On),
            "off" => Some(Aliases::Off),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Aliases::On => Self::NAMES[0],
            Aliases::Off => Self::NAMES[1],
        }
    }
}

/// [`load`], with every record scored as `aliases` says (re-scored against its first
/// gold answer under [`Aliases::Off`]; the records' files are not touched).
pub fn load_with(paths: &[PathBuf], aliases: Aliases) -> Result<RecordSet> {
    let sources = sources(paths)?;
    let mut warnings = Vec::new();
    let mut tables = Tables::default();
    let mut per_source: Vec<Vec<Loaded>> = Vec::new();
    for source in &sources {
        let records = read_records(source, aliases, &mut tables, &mut warnings)?;
        let groups = &tables.groups;
        warnings.extend(super::duplicates::within_file(
            &source.records_file,
            records.iter().map(|l| {
                let (_, method, model) = &groups[l.group];
                (l.digest.id.as_str(), method.as_str(), model.as_str(), l.own)
            }),
        ));
        per_source.push(records);
    }
    if per_source.iter().all(Vec::is_empty) {
        let files: Vec<String> = sources
            .iter()
            .map(|s| s.records_file.display().to_string())
            .collect();
        return Err(Error::Invalid(format!(
            "no records in {}: the run has not written any yet (a file of blank lines holds none)",
            files.join(", ")
        )));
    }
    let arms = group(&sources, per_source, &tables, &mut warnings);
    Ok(RecordSet {
        sources,
        arms,
        warnings,
    })
}

impl RecordSet {
    /// Reads whole records again from their files, one at a time.
    pub fn reader(&self) -> RecordReader<'_> {
        RecordReader {
            sources: &self.sources,
            open: HashMap::new(),
        }
    }
}

/// Reads records again by where they start in their files (an [`Arm`]'s origin and
/// its digest's offset), keeping each file open.
pub struct RecordReader<'a> {
    sources: &'a [Source],
    open: HashMap<usize, BufReader<File>>,
}

impl RecordReader<'_> {
    /// The record of `digest`, read from source `origin`.
    pub fn read(&mut self, origin: usize, digest: &RecordDigest) -> Result<RunRecord> {
        let path = &self.sources[origin].records_file;
        let reader = match self.open.entry(origin) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let file = File::open(path).map_err(|err| Error::io(path, err))?;
                e.insert(BufReader::with_capacity(1 << 16, file))
            }
        };
        crate::eval::store::read_record_at(reader, digest.offset, path)
    }

    /// Every record of `arm`, in its order (for the commands that need whole records of
    /// one arm, such as `export`).
    pub fn arm(&mut self, arm: &Arm) -> Result<Vec<RunRecord>> {
        arm.records
            .iter()
            .zip(&arm.origins)
            .map(|(d, &o)| self.read(o, d))
            .collect()
    }
}

/// The records files under `paths` (each named once) with their runs' configs.
pub(super) fn sources(paths: &[PathBuf]) -> Result<Vec<Source>> {
    let mut files = Vec::new();
    for p in paths {
        let before = files.len();
        discover(p, 0, &mut files)?;
        if files.len() == before {
            return Err(Error::Invalid(format!(
                "{}: no records.jsonl found (expected a run directory or a records file)",
                p.display()
            )));
        }
    }
    let mut sources = Vec::new();
    let mut seen = BTreeSet::new();
    for file in files {
        let canonical = file.canonicalize().unwrap_or_else(|_| file.clone());
        if !seen.insert(canonical) {
            continue; // the same file named twice (a dir and its parent)
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let run_json = dir.join("run.json");
        let config = if run_json.is_file() {
            RunConfig::read(&run_json)?
        } else {
            RunConfig::default()
        };
        sources.push(Source {
            records_file: file,
            dir,
            config,
        });
    }
    Ok(sources)
}

/// Collects records files under `path` (itself, its `records*.jsonl`, or run
/// directories below it), in a stable order.
fn discover(path: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<()> {
    if path.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    if !path.is_dir() {
        return Err(Error::Invalid(format!(
            "{}: no such file or directory",
            path.display()
        )));
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| Error::io(path, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let records: Vec<&PathBuf> = entries.iter().filter(|p| is_records_file(p)).collect();
    if !records.is_empty() {
        out.extend(records.into_iter().cloned());
        return Ok(());
    }
    if depth < MAX_DEPTH {
        for sub in entries.iter().filter(|p| p.is_dir()) {
            discover(sub, depth + 1, out)?;
        }
    }
    Ok(())
}

fn is_records_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    p.is_file() && name.starts_with("records") && name.ends_with(".jsonl")
}

/// One record as the loader holds it: its digest, and its (dataset, method, model),
/// own settings and arm settings as indices into the load's [`Tables`].
struct Loaded {
    /// Shared from the start, so grouping moves pointers, not digests.
    digest: Arc<RecordDigest>,
    group: usize,
    /// The record's own settings (duplicates within a file are told apart by them).
    own: usize,
    /// Its own settings, or its run's when it carries none.
    settings: usize,
}

/// The distinct (dataset, method, model) and settings of the records, each held once.
#[derive(Default)]
struct Tables {
    groups: Vec<GroupKey>,
    settings: Vec<BTreeMap<String, String>>,
    settings_index: HashMap<BTreeMap<String, String>, usize>,
}

impl Tables {
    fn group(&mut self, r: &RunRecord) -> usize {
        let found = self
            .groups
            .iter()
            .position(|(d, m, o)| *d == r.dataset && *m == r.method && *o == r.model);
        found.unwrap_or_else(|| {
            self.groups
                .push((r.dataset.clone(), r.method.clone(), r.model.clone()));
            self.groups.len() - 1
        })
    }

    fn settings(&mut self, settings: &BTreeMap<String, String>) -> usize {
        if let Some(&i) = self.settings_index.get(settings) {
            return i;
        }
        self.settings.push(settings.clone());
        self.settings_index
            .insert(settings.clone(), self.settings.len() - 1);
        self.settings.len() - 1
    }
}

/// Reads one JSON Lines file of records (`store::each_record_at`) into digests. A
/// malformed line is an error naming the file and line, except a final line without a
/// newline: that is a write the runner did not finish (it was interrupted), so it is
/// skipped with a warning, whatever byte it stops on.
///
/// Read a line at a time: only the digests are held, never a record or the file's text.
fn read_records(
    source: &Source,
    aliases: Aliases,
    tables: &mut Tables,
    warnings: &mut Vec<String>,
) -> Result<Vec<Loaded>> {
    let path = &source.records_file;
    let mut records = Vec::new();
    let torn = crate::eval::store::each_record_at(path, |offset, _, mut r| {
        if aliases == Aliases::Off {
            r.without_aliases();
        }
        let group = tables.group(&r);
        let own = tables.settings(&r.settings);
        // A record carries its method's resolved settings; records written before they
        // did fall back to their run's `run.json`.
        let settings = if r.settings.is_empty() {
            tables.settings(&source.config.settings)
        } else {
            own
        };
        records.push(Loaded {
            digest: Arc::new(RecordDigest::of(&r, offset)),
            group,
            own,
            settings,
        });
        Ok(())
    })?;
    if let Some((line, why)) = torn {
        warnings.push(format!(
            "{}:{line}: skipped an unfinished last line ({why})",
            path.display()
        ));
    }
    Ok(records)
}

/// The group of runs a settings label distinguishes within.
type GroupKey = (String, String, String);

/// An arm's records by question id, with the index of the source each came from.
type ById = BTreeMap<String, (Arc<RecordDigest>, usize)>;

/// Groups records into arms. Within one (dataset, method, model), the settings keys
/// whose values differ between records become the arm label, so a nudge sweep gives
/// `sleuth [nudge=0.5]` while a method run once keeps its plain name.
fn group(
    sources: &[Source],
    per_source: Vec<Vec<Loaded>>,
    tables: &Tables,
    warnings: &mut Vec<String>,
) -> Vec<Arm> {
    let mut members: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for l in per_source.iter().flatten() {
        members.entry(l.group).or_default().insert(l.settings);
    }
    let swept: BTreeMap<usize, Vec<String>> = members
        .iter()
        .map(|(g, variants)| {
            let keys = swept_keys(variants.iter().map(|&i| &tables.settings[i]));
            (*g, keys)
        })
        .collect();

    let mut keys: HashMap<(usize, usize), ArmKey> = HashMap::new();
    let mut arms: BTreeMap<ArmKey, (BTreeMap<String, String>, ById)> = BTreeMap::new();
    for (s, records) in per_source.into_iter().enumerate() {
        for l in records {
            let settings = &tables.settings[l.settings];
            let key = keys.entry((l.group, l.settings)).or_insert_with(|| {
                let (dataset, method, model) = tables.groups[l.group].clone();
                ArmKey {
                    dataset,
                    method,
                    model,
                    label: label_of(&swept[&l.group], settings),
                }
            });
            if !arms.contains_key(key) {
                arms.insert(key.clone(), (settings.clone(), BTreeMap::new()));
            }
            let (_, by_id) = arms.get_mut(key).expect("inserted above");
            let r = l.digest;
            match by_id.get(&r.id) {
                None => {
                    by_id.insert(r.id.clone(), (r, s));
                }
                Some((kept, from)) => {
                    if !same_outcome(kept, &r) {
                        warnings.push(format!(
                            "conflicting duplicate record for question {} ({}, {}): {} answered {:?}, {} answered {:?}; keeping the first",
                            r.id,
                            key.name(),
                            key.model,
                            sources[*from].records_file.display(),
                            kept.answer.as_deref(),
                            sources[s].records_file.display(),
                            r.answer.as_deref()
                        ));
                    }
                }
            }
        }
    }
    arms.into_iter()
        .map(|(key, (settings, by_id))| {
            let (records, origins) = by_id.into_values().unzip();
            Arm {
                key,
                settings,
                records,
                origins,
            }
        })
        .collect()
}

/// An arm's label: the swept keys with its values (`nudge=0.5,turns=20`).
pub(super) fn label_of(swept: &[String], settings: &BTreeMap<String, String>) -> String {
    swept
        .iter()
        .map(|k| {
            format!(
                "{k}={}",
                settings.get(k).map(String::as_str).unwrap_or("default")
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Keys present with different values (or present in some runs only).
pub(super) fn swept_keys<'a>(
    settings: impl Iterator<Item = &'a BTreeMap<String, String>>,
) -> Vec<String> {
    let all: Vec<&BTreeMap<String, String>> = settings.collect();
    let keys: BTreeSet<&String> = all.iter().flat_map(|s| s.keys()).collect();
    keys.into_iter()
        .filter(|k| {
            let values: BTreeSet<Option<&String>> = all.iter().map(|s| s.get(*k)).collect();
            values.len() > 1
        })
        .cloned()
        .collect()
}

/// Two records of the same question agree when their scored outcome does; usage can
/// legitimately differ between a run and its resumed copy.
fn same_outcome(a: &RecordDigest, b: &RecordDigest) -> bool {
    a.answer == b.answer && a.em == b.em && a.f1 == b.f1 && a.timed_out == b.timed_out
}
