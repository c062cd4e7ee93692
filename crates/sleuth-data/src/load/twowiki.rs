//! The parts of the 2WikiMultiHopQA release beyond the HotpotQA-shaped rows:
//! `id_aliases.json` (other names of each Wikidata entity) and the gold evidence triples.
//!
//! The official `2wikimultihop_evaluate_v1.1.py` scores an answer against the set
//! {answer} ∪ aliases ∪ demonyms of the row's `answer_id`, and an evidence triple
//! against every (subject alias, relation, object alias) combination of each gold triple,
//! the aliases found through `evidences_id`. We load both the same way.

use super::read_text;
use super::records::{self, Problem};
use crate::DataError;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Other names of Wikidata entities, by id (`Q…`).
#[derive(Debug, Clone, Default)]
pub struct Aliases {
    by_id: HashMap<String, Vec<String>>,
}

impl Aliases {
    /// The aliases and demonyms of `id` (empty when it has none).
    pub fn of(&self, id: &str) -> &[String] {
        self.by_id.get(id).map_or(&[], Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

#[derive(Deserialize)]
struct AliasRow {
    #[serde(rename = "Q_id")]
    id: String,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    demonyms: Vec<String>,
}

/// Reads `id_aliases.json` (JSON Lines of `{Q_id, aliases, demonyms}`).
pub fn read_aliases(path: &Path) -> Result<Aliases, DataError> {
    let text = read_text(path)?;
    let mut by_id = HashMap::new();
    for record in records::split(path, &text)? {
        let row: AliasRow = record.decode().map_err(|p| record.error(path, p))?;
        let mut names = row.aliases;
        names.extend(row.demonyms);
        by_id.insert(row.id, names);
    }
    Ok(Aliases { by_id })
}

/// Where a 2Wiki file's aliases are: `X.id_aliases.json` beside a gold subset
/// `X.gold.json` (what `sleuth export` writes, for the official script), else the
/// benchmark's own `id_aliases.json` beside the file.
pub fn aliases_file(data: &Path) -> PathBuf {
    let name = data
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if let Some(stem) = name.strip_suffix(".gold.json") {
        let own = data.with_file_name(format!("{stem}.id_aliases.json"));
        if own.is_file() {
            return own;
        }
    }
    data.with_file_name("id_aliases.json")
}

/// The aliases of a 2Wiki file ([`aliases_file`]), when there are any.
pub(super) fn aliases_beside(data: &Path) -> Result<Option<Aliases>, DataError> {
    let path = aliases_file(data);
    if path.is_file() {
        read_aliases(&path).map(Some)
    } else {
        Ok(None)
    }
}

/// Called once a 2Wiki file has loaded: without `id_aliases.json` beside it answers are
/// scored against the gold alone (SLEUTH §4: EM is the best over the gold answer and
/// its aliases), so the first such load warns, once a process, naming the file and
/// `sleuth data fetch 2wiki`, which fetches it. A file that failed to load says only
/// why it failed.
pub(super) fn warn_without_aliases(data: &Path, aliases: Option<&Aliases>) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if aliases.is_some() {
        return;
    }
    WARNED.call_once(|| {
        tracing::warn!(
            "{} not found beside the 2Wiki file: answers are scored without their aliases (`sleuth data fetch 2wiki` fetches it)",
            aliases_file(data).display()
        );
    });
}

/// One gold evidence triple, as every accepted (subject, relation, object) spelling.
pub type GoldEvidence = Vec<(String, String, String)>;

#[derive(Deserialize)]
struct EvidenceRow {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    evidences: Vec<(String, String, String)>,
    #[serde(default)]
    evidences_id: Vec<(String, String, String)>,
}

/// The gold evidence of every question of a 2Wiki file, by `_id`, expanded through
/// `aliases` (the row's `evidences_id` gives each subject's and object's entity id).
pub fn read_evidence(
    path: &Path,
    aliases: Option<&Aliases>,
) -> Result<HashMap<String, Vec<GoldEvidence>>, DataError> {
    let text = read_text(path)?;
    let mut out = HashMap::new();
    for record in records::split(path, &text)? {
        let row: EvidenceRow = record.decode().map_err(|p| record.error(path, p))?;
        if !row.evidences_id.is_empty() && row.evidences_id.len() != row.evidences.len() {
            let problem = Problem::from(format!(
                "`evidences_id` has {} entries for {} `evidences`",
                row.evidences_id.len(),
                row.evidences.len()
            ));
            return Err(record.error(path, problem));
        }
        let mut gold = Vec::with_capacity(row.evidences.len());
        for (i, (subject, relation, object)) in row.evidences.into_iter().enumerate() {
            let mut subjects = vec![subject];
            let mut objects = vec![object];
            if let (Some(aliases), Some((sid, _, oid))) = (aliases, row.evidences_id.get(i)) {
                subjects.extend(aliases.of(sid).iter().cloned());
                objects.extend(aliases.of(oid).iter().cloned());
            }
            let mut spellings = Vec::with_capacity(subjects.len() * objects.len());
            for s in &subjects {
                for o in &objects {
                    spellings.push((s.clone(), relation.clone(), o.clone()));
                }
            }
            gold.push(spellings);
        }
        out.insert(row.id, gold);
    }
    Ok(out)
}
