//! One arm of a run as the benchmark's official files: the prediction file its official
//! script reads, and the gold subset of exactly the questions the run answered.
//!
//! The official scripts average over every question of the gold file they are given
//! (HotpotQA and 2Wiki score a missing prediction 0), and MuSiQue's pairs gold and
//! prediction lines one to one and stops when their counts differ. Against the whole dev
//! file a limited run is therefore diluted (HotpotQA, 2Wiki) or refused (MuSiQue); the
//! gold subset, cut from the run's own benchmark file in the official format (a JSON
//! array for HotpotQA and 2Wiki, JSON Lines for MuSiQue, in the predictions' order), lets
//! the unmodified scripts check our numbers on any run.
//!
//! Support comes from what the records say the method used: the EIR setting's cited
//! sentences (HotpotQA/2Wiki sentence facts; MuSiQue the cited paragraphs), and for
//! MuSiQue only, other methods' retrieved paragraphs. Citations name paragraphs as the
//! agent saw them (`A (2)` for a second `A`), so the benchmark file is read to map them
//! back to titles and pool positions, exactly as the records' `support_f1` was scored.
//!
//! The CLI's `sleuth export` and Python's `sleuth.export` both call [`export`].

use super::analysis::{self, Arm};
pub use super::refusals::{ArmChoice, ExportError};
use super::RunRecord;
use crate::data::{self, Dataset, Question};
use crate::env::titles::display_titles;
use crate::{Error, Result};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    /// A run directory, a records file, or an experiment's root.
    pub run: PathBuf,
    /// The official format (default: the records' dataset; `jsonl` records export in
    /// the HotpotQA format).
    pub format: Option<Dataset>,
    /// The method, or one labelled arm (`sleuth [nudge=none]`); needed when the run holds
    /// several.
    pub method: Option<String>,
    /// Only the arms of this dataset (an experiment root spanning several).
    pub dataset: Option<String>,
    /// The benchmark file the run answered (default: the first `data` of its run.json).
    pub data: Option<PathBuf>,
}

/// An exported arm: the official prediction file and gold subset, as text.
#[derive(Debug, Clone)]
pub struct Export {
    /// The arm's name (`method` or `method [label]`).
    pub arm: String,
    pub format: Dataset,
    /// Questions exported (one per record of the arm).
    pub count: usize,
    pub predictions: String,
    /// The gold questions of the records, in the official file's format and in the
    /// predictions' order; `None` when the run's file is not in that format (our own
    /// `jsonl` schema exported as HotpotQA).
    pub gold: Option<String>,
    /// 2Wiki only: the alias lines of the gold answers (`id_aliases.json`'s format), from
    /// the `id_aliases.json` beside the benchmark file; empty when there is none, which
    /// the script reads as "no aliases" (as `sleuth score` does).
    pub aliases: Option<String>,
    /// The benchmark file the gold was cut from.
    pub data: PathBuf,
}

/// The files [`Export::write`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub predictions: PathBuf,
    pub gold: Option<PathBuf>,
    pub aliases: Option<PathBuf>,
}

/// The benchmark's official evaluation script: its repository and file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfficialScript {
    pub repository: &'static str,
    pub file: &'static str,
}

/// The official script of a format (`None` for our own schema).
pub fn official_script(format: Dataset) -> Option<OfficialScript> {
    let (repository, file) = match format {
        Dataset::HotpotQa => (
            "https://github.com/hotpotqa/hotpot",
            "hotpot_evaluate_v1.py",
        ),
        Dataset::TwoWiki => (
            "https://github.com/Alab-NII/2wikimultihop",
            "2wikimultihop_evaluate_v1.1.py",
        ),
        Dataset::Musique => (
            "https://github.com/StonyBrookNLP/musique",
            "evaluate_v1.0.py",
        ),
        Dataset::Jsonl => return None,
    };
    Some(OfficialScript { repository, file })
}

impl Export {
    /// Writes the predictions to `out`, and beside them the gold subset
    /// (`STEM.gold.json`, or `.gold.jsonl` for MuSiQue) and 2Wiki's aliases
    /// (`STEM.id_aliases.json`), each atomically.
    pub fn write(&self, out: &Path) -> Result<Written> {
        let put = |path: &Path, text: &str| {
            crate::atomic::write(path, text.as_bytes()).map_err(|e| Error::io(path, e))
        };
        put(out, &self.predictions)?;
        let sibling = |suffix: &str| {
            let stem = out
                .file_stem()
                .map_or_else(|| "export".into(), |s| s.to_string_lossy().into_owned());
            out.with_file_name(format!("{stem}.{suffix}"))
        };
        let gold = match &self.gold {
            Some(text) => {
                let ext = if self.format == Dataset::Musique {
                    "jsonl"
                } else {
                    "json"
                };
                let path = sibling(&format!("gold.{ext}"));
                put(&path, text)?;
                Some(path)
            }
            None => None,
        };
        let aliases = match &self.aliases {
            Some(text) => {
                let path = sibling("id_aliases.json");
                put(&path, text)?;
                Some(path)
            }
            None => None,
        };
        Ok(Written {
            predictions: out.to_path_buf(),
            gold,
            aliases,
        })
    }
}

impl Written {
    /// The official script's command line on these files (`SCRIPT` standing for the
    /// script's path), or `None` without a gold subset.
    pub fn official_command(&self, format: Dataset) -> Option<Vec<String>> {
        let script = official_script(format)?;
        let mut argv = vec![
            "python".to_string(),
            script.file.to_string(),
            self.predictions.display().to_string(),
            self.gold.as_ref()?.display().to_string(),
        ];
        if let Some(a) = &self.aliases {
            argv.push(a.display().to_string());
        }
        Some(argv)
    }
}

/// Exports one arm of a run.
pub fn export(request: &ExportRequest) -> Result<Export> {
    let set = analysis::load(std::slice::from_ref(&request.run))?;
    let arm = pick(&set, request.method.as_deref(), request.dataset.as_deref())?;
    let source = &set.sources[arm.origins[0]];
    let recorded: Dataset = arm.key.dataset.parse()?;
    let format = match request.format {
        Some(f) => f,
        None if recorded == Dataset::Jsonl => Dataset::HotpotQa,
        None => recorded,
    };
    if format == Dataset::Jsonl {
        return Err(Error::Export(ExportError::NoOfficialFormat));
    }
    let data = match &request.data {
        Some(d) => d.clone(),
        None => source
            .config
            .raw
            .get("data")
            .and_then(|d| d.get(0).or(Some(d)))
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .ok_or_else(|| {
                Error::Export(ExportError::NoDataFile {
                    dir: source.dir.clone(),
                })
            })?,
    };
    let questions = data::load(recorded, &data)?;
    let by_id: HashMap<&str, &Question> = questions.iter().map(|q| (q.id.as_str(), q)).collect();
    // In the benchmark file's order: MuSiQue's script pairs predictions with gold lines.
    let position: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    // The whole records of the one arm exported (the analyses hold digests only).
    let full = set.reader().arm(arm)?;
    let mut records: Vec<&RunRecord> = full.iter().collect();
    records.sort_by_key(|r| position.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
    let predictions = match format {
        Dataset::Musique => musique(&records, &by_id),
        Dataset::TwoWiki => hotpot(&records, &by_id, true),
        _ => hotpot(&records, &by_id, false),
    };
    let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    let (gold, aliases) = if format == recorded {
        let objects = gold_objects(&data, &ids)?;
        let aliases = (format == Dataset::TwoWiki).then(|| aliases_of(&data, &objects));
        (Some(official_text(format, &objects)), aliases.transpose()?)
    } else {
        (None, None)
    };
    Ok(Export {
        arm: arm.key.name(),
        format,
        count: records.len(),
        predictions,
        gold,
        aliases,
        data,
    })
}

/// The one arm to export: named by `method` (and `dataset`), or the only one.
fn pick<'a>(
    set: &'a analysis::RecordSet,
    method: Option<&str>,
    dataset: Option<&str>,
) -> Result<&'a Arm> {
    let arms: Vec<&Arm> = set
        .arms
        .iter()
        .filter(|a| dataset.is_none_or(|d| a.key.dataset == d))
        .collect();
    let chosen: Vec<&Arm> = match method {
        None => arms.clone(),
        Some(m) => {
            let exact: Vec<&Arm> = arms.iter().copied().filter(|a| a.key.name() == m).collect();
            if exact.is_empty() {
                arms.iter().copied().filter(|a| a.key.method == m).collect()
            } else {
                exact
            }
        }
    };
    match chosen.as_slice() {
        [one] => Ok(one),
        [] => {
            let present: BTreeSet<String> = set
                .arms
                .iter()
                .filter(|a| dataset.is_none_or(|d| a.key.dataset == d))
                .map(|a| a.key.name())
                .collect();
            let wanted = match (method, dataset) {
                (Some(m), Some(d)) => format!("{m}` on `{d}"),
                (Some(m), None) => m.to_string(),
                (None, d) => d.unwrap_or_default().to_string(),
            };
            Err(Error::Export(ExportError::NoSuchArm {
                wanted,
                present: present.into_iter().collect(),
            }))
        }
        several => Err(Error::Export(ExportError::SeveralArms {
            wanted: method.map(str::to_string),
            choices: several
                .iter()
                .map(|a| {
                    let dirs: BTreeSet<&PathBuf> =
                        a.origins.iter().map(|&o| &set.sources[o].dir).collect();
                    ArmChoice {
                        name: a.key.name(),
                        dataset: a.key.dataset.clone(),
                        dirs: dirs.into_iter().cloned().collect(),
                    }
                })
                .collect(),
        })),
    }
}

/// The benchmark file's own objects of `ids`, in that order (read as a JSON array or as
/// JSON Lines, as the file is).
fn gold_objects(data: &Path, ids: &[&str]) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(data).map_err(|e| Error::io(data, e))?;
    let wanted: HashSet<&str> = ids.iter().copied().collect();
    let invalid = |line: Option<usize>, e: serde_json::Error| {
        let at = line.map_or_else(String::new, |n| format!(" line {n}"));
        Error::Invalid(format!("{}{at}: invalid JSON: {e}", data.display()))
    };
    let objects: Vec<Value> = if text.trim_start().starts_with('[') {
        serde_json::from_str(&text).map_err(|e| invalid(None, e))?
    } else {
        let mut v = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line).map_err(|e| invalid(Some(i + 1), e))?;
            v.push(value);
        }
        v
    };
    let mut by_id: HashMap<String, Value> = HashMap::new();
    for object in objects {
        let id = object
            .get("_id")
            .or_else(|| object.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(id) = id.filter(|id| wanted.contains(id.as_str())) {
            by_id.entry(id).or_insert(object);
        }
    }
    Ok(ids.iter().filter_map(|id| by_id.remove(*id)).collect())
}

/// The gold file's text in the official format: a JSON array (HotpotQA, 2Wiki) or JSON
/// Lines (MuSiQue).
fn official_text(format: Dataset, objects: &[Value]) -> String {
    if format == Dataset::Musique {
        objects.iter().map(|o| format!("{o}\n")).collect()
    } else {
        serde_json::to_string(objects).expect("JSON values serialize") + "\n"
    }
}

/// The lines of the `id_aliases.json` beside `data` that the 2Wiki script looks up for
/// `objects`: their gold answers' and their evidence triples' subjects and objects
/// (empty without such a file).
fn aliases_of(data: &Path, objects: &[Value]) -> Result<String> {
    let path = crate::data::aliases_file(data);
    if !path.is_file() {
        return Ok(String::new());
    }
    let mut wanted: HashSet<&str> = HashSet::new();
    for o in objects {
        wanted.extend(o.get("answer_id").and_then(Value::as_str));
        let triples = o.get("evidences_id").and_then(Value::as_array);
        for triple in triples.into_iter().flatten() {
            let ids = triple.as_array().into_iter().flatten();
            wanted.extend(ids.filter_map(Value::as_str));
        }
    }
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let mut kept = String::new();
    for line in text.lines() {
        let named = serde_json::from_str::<Value>(line).ok().and_then(|v| {
            v.get("Q_id")
                .and_then(Value::as_str)
                .map(|s| wanted.contains(s))
        });
        if named == Some(true) {
            kept += line;
            kept.push('\n');
        }
    }
    Ok(kept)
}

/// Pool positions of the titles an agent saw, per question.
fn positions(q: &Question, shown_titles: &[String]) -> Vec<usize> {
    let shown = display_titles(&q.paragraphs);
    let mut out: Vec<usize> = shown_titles
        .iter()
        .filter_map(|t| shown.iter().position(|s| s == t))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn answer(r: &RunRecord) -> String {
    r.answer.clone().unwrap_or_default()
}

/// `{"answer": {id: text}, "sp": {id: [[title, sentence]]}}`, and for 2Wiki also
/// `"evidence": {id: []}`: every key the official script reads, for every question.
/// Sentence facts come only from cited evidence (they cannot be made up from retrieved
/// titles), so a method that cites nothing predicts no supporting facts; nor does any
/// method predict 2Wiki's evidence triples.
fn hotpot(records: &[&RunRecord], by_id: &HashMap<&str, &Question>, triples: bool) -> String {
    let answers: Map<String, Value> = records
        .iter()
        .map(|r| (r.id.clone(), Value::String(answer(r))))
        .collect();
    let sp: Map<String, Value> = records
        .iter()
        .map(|r| {
            let facts: Vec<Value> = match (by_id.get(r.id.as_str()), &r.outputs.evidence) {
                (Some(q), Some(e)) => {
                    let shown = display_titles(&q.paragraphs);
                    e.cited
                        .iter()
                        .filter_map(|c| {
                            let i = shown.iter().position(|s| s == &c.title)?;
                            Some(json!([q.paragraphs[i].title, c.sentence]))
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            (r.id.clone(), Value::Array(facts))
        })
        .collect();
    let mut file = json!({ "answer": answers, "sp": sp });
    if triples {
        let none: Map<String, Value> = records
            .iter()
            .map(|r| (r.id.clone(), Value::Array(Vec::new())))
            .collect();
        file["evidence"] = Value::Object(none);
    }
    serde_json::to_string(&file).expect("predictions serialize") + "\n"
}

/// JSON Lines of `{id, predicted_answer, predicted_support_idxs, predicted_answerable}`:
/// support is the cited paragraphs where the method cites, else those it retrieved.
fn musique(records: &[&RunRecord], by_id: &HashMap<&str, &Question>) -> String {
    records
        .iter()
        .map(|r| {
            let support = by_id.get(r.id.as_str()).map_or_else(Vec::new, |q| {
                let titles: Vec<String> = match &r.outputs.evidence {
                    Some(e) => e.cited.iter().map(|c| c.title.clone()).collect(),
                    None => r.retrieved.clone(),
                };
                positions(q, &titles)
            });
            let row = json!({
                "id": r.id,
                "predicted_answer": answer(r),
                "predicted_support_idxs": support,
                "predicted_answerable": true,
            });
            format!("{row}\n")
        })
        .collect()
}
