//! The run directory on disk: `run.json` (the configuration) and `records.jsonl`
//! (append-only, one line per finished question × method).
//!
//! A line is written in one `write` and flushed before the next, so a kill leaves at
//! most one partial last line; opening the store cuts such a tail off, which is why a
//! resumed run never loses a finished record nor duplicates one. One process at a time
//! writes a directory: the store holds its lock ([`super::lock`]) while open.

use super::lock::RunLock;
use super::RunRecord;
use crate::methods::eir::{EarlierRuns, Prior};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RECORDS: &str = "records.jsonl";
pub const RUN_CONFIG: &str = "run.json";

/// What `run.json` holds: enough to reproduce and to refuse mixing runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub sleuth_version: String,
    pub dataset: String,
    pub data: Vec<PathBuf>,
    pub model: String,
    pub methods: Vec<String>,
    /// The `--set` pairs as given on the command line.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// Per method, every setting it reads, resolved (defaults included).
    #[serde(default)]
    pub method_settings: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    pub hops: Option<u8>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub sample: Option<usize>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Questions of the seeded order skipped before the sample (`--sample-offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_offset: Option<usize>,
    #[serde(default)]
    pub shard: Option<String>,
    #[serde(default)]
    pub env: Option<String>,
}

impl RunConfig {
    /// Fields that must match for a resumed run to extend this one.
    fn identity(
        &self,
    ) -> (
        &str,
        &str,
        &BTreeMap<String, String>,
        Option<u8>,
        Option<&str>,
    ) {
        (
            &self.dataset,
            &self.model,
            &self.settings,
            self.hops,
            self.shard.as_deref(),
        )
    }
}

/// Key of a record: which (question, method) it answers.
pub type RecordKey = (String, String);

/// The records a resumed run keeps: each key with the error its record ended in, if any.
pub type Recorded = HashMap<RecordKey, Option<String>>;

pub struct RunStore {
    dir: PathBuf,
    _lock: RunLock,
}

impl RunStore {
    /// Opens (creating) a run directory for `config`, refusing it while another process
    /// has it open. An existing directory must hold a run with the same dataset, model,
    /// settings, hops and shard; methods may be added.
    pub fn open(dir: &Path, config: &RunConfig) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // Before run.json is read: the check and the write below must not interleave
        // with another writer's.
        let lock = RunLock::acquire(dir)?;
        let path = dir.join(RUN_CONFIG);
        let mut config = config.clone();
        if path.exists() {
            let existing = read_config(dir)?;
            if existing.identity() != config.identity() {
                return Err(Error::Invalid(format!(
                    "{} holds a different run (dataset {}, model {}, settings {:?}); use another --out directory",
                    dir.display(),
                    existing.dataset,
                    existing.model,
                    existing.settings
                )));
            }
            for m in existing.methods.iter().rev() {
                if !config.methods.contains(m) {
                    config.methods.insert(0, m.clone());
                }
            }
        }
        let text = serde_json::to_string_pretty(&config).expect("config serializes");
        // Never in place: a full disk must not leave a cut run.json behind.
        crate::atomic::write(&path, (text + "\n").as_bytes()).map_err(|e| Error::io(&path, e))?;
        Ok(RunStore {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    pub fn records_path(&self) -> PathBuf {
        self.dir.join(RECORDS)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keys already recorded (with their error, if any), after cutting off a partial
    /// last line. With `drop_errors`, records that ended in an error are removed so they
    /// run again.
    pub fn prepare_resume(&self, drop_errors: bool) -> Result<Recorded> {
        let path = self.records_path();
        if !path.exists() {
            return Ok(Recorded::new());
        }
        let records = read_record_lines(&path)?.records;
        let kept: Vec<&(String, RunRecord)> = records
            .iter()
            .filter(|(_, r)| !(drop_errors && r.error.is_some()))
            .collect();
        if kept.len() != records.len() || needs_rewrite(&path)? {
            let tmp = path.with_extension("jsonl.tmp");
            let mut out = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
            for (line, _) in &kept {
                writeln!(out, "{line}").map_err(|e| Error::io(&tmp, e))?;
            }
            out.sync_all().map_err(|e| Error::io(&tmp, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
            crate::atomic::sync_parent(&path);
        }
        Ok(kept
            .iter()
            .map(|(_, r)| ((r.id.clone(), r.method.clone()), r.error.clone()))
            .collect())
    }

    /// An appender for new records.
    pub fn writer(&self) -> Result<RecordWriter> {
        let path = self.records_path();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        Ok(RecordWriter { file, path })
    }
}

/// Appends one record per line, flushed immediately.
pub struct RecordWriter {
    file: File,
    path: PathBuf,
}

impl RecordWriter {
    pub fn append(&mut self, record: &RunRecord) -> Result<()> {
        let mut line = serde_json::to_string(record).expect("record serializes");
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| Error::io(&self.path, e))
    }
}

/// Earlier runs as `eir-recover` reads them: each question's retrieved paragraphs and
/// answer, through the typed records (the method cannot import this layer; the run's
/// assembly hands it this reader, `MethodConfig::earlier`).
pub struct RecordedRuns;

impl EarlierRuns for RecordedRuns {
    fn priors(
        &self,
        from: &Path,
        method: &str,
    ) -> std::result::Result<BTreeMap<String, Prior>, Box<dyn std::error::Error + Send + Sync>>
    {
        let file = if from.is_dir() {
            from.join(RECORDS)
        } else {
            from.to_path_buf()
        };
        Ok(read_records(&file)?
            .into_iter()
            .filter(|r| r.method == method)
            .map(|r| {
                let prior = Prior {
                    retrieved: r.retrieved,
                    answer: r.answer,
                };
                (r.id, prior)
            })
            .collect())
    }
}

pub fn read_config(dir: &Path) -> Result<RunConfig> {
    let path = dir.join(RUN_CONFIG);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))
}

/// Reads every record of a records file; a malformed line other than a partial last
/// line is an error naming the file and line.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>> {
    Ok(read_record_lines(path)?
        .records
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// A records file as [`read_record_lines`] reads it.
#[derive(Debug, Default)]
pub struct RecordLines {
    /// Every record, with its line as written.
    pub records: Vec<(String, RunRecord)>,
    /// The unfinished last line a kill left (no newline, not a record): its number and
    /// why it is not one. Resuming cuts it; reports skip it with a warning.
    pub torn: Option<(usize, String)>,
}

/// Reads a records file line by line. A last line without its newline that is not a
/// record is what a killed write leaves, whatever byte it stops on (inside a multi-byte
/// character too): it is returned as [`RecordLines::torn`], never an error. Any other
/// line that is not valid UTF-8 or not a record is an error naming the file and line.
pub fn read_record_lines(path: &Path) -> Result<RecordLines> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut out = RecordLines::default();
    let mut lines = bytes.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((i, raw)) = lines.next() {
        // `split` yields the text after the last newline last: empty when the file ends
        // with one, the unfinished line otherwise.
        let unfinished = lines.peek().is_none();
        let number = i + 1;
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| {
                format!(
                    "not valid UTF-8 (byte {} of the line); the line is damaged: repair or remove it",
                    e.valid_up_to() + 1
                )
            })
            .and_then(|line| {
                if line.trim().is_empty() {
                    return Ok(None);
                }
                serde_json::from_str::<RunRecord>(line)
                    .map(|r| Some((line.to_string(), r)))
                    .map_err(|e| format!("not a run record: {e}"))
            });
        match parsed {
            Ok(Some(record)) => out.records.push(record),
            Ok(None) => {}
            Err(why) if unfinished => out.torn = Some((number, why)),
            Err(why) => {
                return Err(Error::Invalid(format!(
                    "{}:{number}: {why}",
                    path.display()
                )))
            }
        }
    }
    Ok(out)
}

fn needs_rewrite(path: &Path) -> Result<bool> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Ok(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}
