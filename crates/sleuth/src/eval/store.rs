//! The run directory on disk: `run.json` (the configuration) and `records.jsonl`
//! (append-only, one line per finished question × method).
//!
//! A line is written in one `write` and flushed before the next, so a kill leaves at
//! most one partial last line; opening the store cuts such a tail off, which is why a
//! resumed run never loses a finished record nor duplicates one. One process at a time
//! writes a directory: the store holds its lock ([`super::lock`]) while open. Records
//! are read a line at a time ([`each_record_line`]): resuming keeps only each record's
//! key, so a large directory costs its keys, not its records (issue 32).

use super::conditions::RunConfig;
use super::lock::RunLock;
use super::RunRecord;
use crate::methods::eir::{EarlierRuns, Prior};
use crate::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub const RECORDS: &str = "records.jsonl";
pub const RUN_CONFIG: &str = "run.json";

/// Key of a record: which (question, method) it answers.
pub type RecordKey = (String, String);

/// The records a resumed run keeps: each key with the error its record ended in, if any.
pub type Recorded = HashMap<RecordKey, Option<String>>;

pub struct RunStore {
    dir: PathBuf,
    config: RunConfig,
    _lock: RunLock,
}

impl RunStore {
    /// Opens (creating) a run directory for `config`, refusing it while another process
    /// has it open. An existing directory must hold a run made under the same conditions
    /// ([`RunConfig::difference`]); methods may be added and the selection grown, and
    /// `run.json` then describes the whole run ([`RunConfig::extending`]).
    pub fn open(dir: &Path, config: &RunConfig) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // Before run.json is read: the check and the write below must not interleave
        // with another writer's.
        let lock = RunLock::acquire(dir)?;
        let path = dir.join(RUN_CONFIG);
        let mut config = config.clone();
        if path.exists() {
            let existing = read_config(dir)?;
            if let Some(difference) = existing.difference(&config) {
                return Err(Error::RunDiffers {
                    dir: dir.to_path_buf(),
                    difference,
                });
            }
            config = config.extending(&existing);
        }
        let text = serde_json::to_string_pretty(&config).expect("config serializes");
        // Never in place: a full disk must not leave a cut run.json behind.
        crate::atomic::write(&path, (text + "\n").as_bytes()).map_err(|e| Error::io(&path, e))?;
        Ok(RunStore {
            dir: dir.to_path_buf(),
            config,
            _lock: lock,
        })
    }

    /// The run as `run.json` now describes it.
    pub fn config(&self) -> &RunConfig {
        &self.config
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
        let dropped = |r: &RunRecord| drop_errors && r.error.is_some();
        let mut kept = Recorded::new();
        let mut any_dropped = false;
        each_record_line(&path, |_, r| {
            if dropped(&r) {
                any_dropped = true;
            } else {
                kept.insert((r.id, r.method), r.error);
            }
            Ok(())
        })?;
        if any_dropped || needs_rewrite(&path)? {
            let tmp = path.with_extension("jsonl.tmp");
            let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
            let mut out = std::io::BufWriter::new(file);
            each_record_line(&path, |line, r| {
                if !dropped(&r) {
                    writeln!(out, "{line}").map_err(|e| Error::io(&tmp, e))?;
                }
                Ok(())
            })?;
            let out = out
                .into_inner()
                .map_err(|e| Error::io(&tmp, e.into_error()))?;
            out.sync_all().map_err(|e| Error::io(&tmp, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
            crate::atomic::sync_parent(&path);
        }
        Ok(kept)
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
                    cited: r.outputs.evidence.map(|e| e.cited).unwrap_or_default(),
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

/// Reads a records file into memory ([`each_record_line`]'s lines and records).
pub fn read_record_lines(path: &Path) -> Result<RecordLines> {
    let mut out = RecordLines::default();
    out.torn = each_record_line(path, |line, r| {
        out.records.push((line.to_string(), r));
        Ok(())
    })?;
    Ok(out)
}

/// Reads a records file one line at a time, handing `each` every record with its line
/// as written; returns the unfinished last line, if any. A last line without its
/// newline that is not a record is what a killed write leaves, whatever byte it stops
/// on (inside a multi-byte character too): it is returned (its number and why it is not
/// a record), never an error. Any other line that is not valid UTF-8 or not a record is
/// an error naming the file and line.
pub fn each_record_line(
    path: &Path,
    mut each: impl FnMut(&str, RunRecord) -> Result<()>,
) -> Result<Option<(usize, String)>> {
    each_record_at(path, |_, line, r| each(line, r))
}

/// [`each_record_line`], also giving the byte offset at which each line starts (where
/// [`read_record_at`] finds the record again).
pub fn each_record_at(
    path: &Path,
    mut each: impl FnMut(u64, &str, RunRecord) -> Result<()>,
) -> Result<Option<(usize, String)>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut buf = Vec::new();
    let mut number = 0;
    let mut next: u64 = 0;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if read == 0 {
            return Ok(None);
        }
        let offset = next;
        next += read as u64;
        number += 1;
        // Only the text after the last newline can lack one: a write a kill cut.
        let unfinished = !buf.ends_with(b"\n");
        let raw = buf.strip_suffix(b"\n").unwrap_or(&buf);
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
                    .map(|r| Some((line, r)))
                    .map_err(|e| format!("not a run record: {e}"))
            });
        match parsed {
            Ok(Some((line, record))) => {
                if let Some(why) = record.out_of_range() {
                    return Err(Error::Invalid(format!(
                        "{}:{number}: {why}; the record was edited or damaged: repair or remove the line",
                        path.display()
                    )));
                }
                each(offset, line, record)?
            }
            Ok(None) => {}
            Err(why) if unfinished => return Ok(Some((number, why))),
            Err(why) => {
                return Err(Error::Invalid(format!(
                    "{}:{number}: {why}",
                    path.display()
                )))
            }
        }
    }
}

/// The record whose line starts at byte `offset` of the file `reader` reads (an offset
/// [`each_record_at`] gave).
pub fn read_record_at<R: BufRead + Seek>(
    reader: &mut R,
    offset: u64,
    path: &Path,
) -> Result<RunRecord> {
    let mut buf = Vec::new();
    reader
        .seek(SeekFrom::Start(offset))
        .and_then(|_| reader.read_until(b'\n', &mut buf))
        .map_err(|e| Error::io(path, e))?;
    serde_json::from_slice(&buf).map_err(|e| {
        Error::Invalid(format!(
            "{}: byte {offset}: not a run record: {e}",
            path.display()
        ))
    })
}

/// Whether the file's last byte is not a newline (a cut last line to remove).
fn needs_rewrite(path: &Path) -> Result<bool> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1))
        .and_then(|_| file.read_exact(&mut last))
        .map_err(|e| Error::io(path, e))?;
    Ok(last[0] != b'\n')
}
