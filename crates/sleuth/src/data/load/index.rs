//! A benchmark file read once into a compact index, so a run holds one small entry per
//! question (its id, hop count and where its record lies) instead of every question's
//! paragraphs, and reads each question again when its episode starts (issue 32).
//!
//! Indexing checks the whole file exactly as [`load`](super::load) does (every record
//! parsed with its schema, duplicate ids refused, errors at `file:line`), and keeps
//! only the questions `load` keeps. JSON Lines files are read a line at a time; a JSON
//! array (the official HotpotQA and 2Wiki releases, a fixed size) is split in memory
//! once, as `load` splits it.

use super::records::{self, Problem, Record};
use super::{detect, parse_record, Aliases};
use crate::data::{DataError, Dataset, Question};
use std::collections::HashSet;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where one question's record lies in its file.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// Byte offset of the record in the file.
    offset: u64,
    /// Length of the record in bytes.
    len: u32,
    /// 1-based line the record starts on (for errors).
    line: u32,
}

/// The questions of an indexed file in file order, about 50 bytes each: their ids (in
/// one string), hop counts and spans.
#[derive(Debug, Clone, Default)]
pub struct Index {
    ids: String,
    /// Where each id ends in `ids` (it starts where the previous one ends).
    id_ends: Vec<u32>,
    hops: Vec<Option<u8>>,
    spans: Vec<Span>,
}

impl Index {
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn id(&self, i: usize) -> &str {
        let start = if i == 0 {
            0
        } else {
            self.id_ends[i - 1] as usize
        };
        &self.ids[start..self.id_ends[i] as usize]
    }

    pub fn hops(&self, i: usize) -> Option<u8> {
        self.hops[i]
    }

    /// False when the ids would pass what the index addresses (4 GiB).
    fn push(&mut self, id: &str, hops: Option<u8>, span: Span) -> bool {
        let Ok(end) = u32::try_from(self.ids.len() + id.len()) else {
            return false;
        };
        self.ids.push_str(id);
        self.id_ends.push(end);
        self.hops.push(hops);
        self.spans.push(span);
        true
    }

    /// The entries at `positions`, in that order; all of them, in order, costs nothing.
    pub fn keep(self, positions: &[usize]) -> Index {
        if positions.len() == self.len() && positions.iter().enumerate().all(|(k, &i)| k == i) {
            return self;
        }
        let mut kept = Index::default();
        for &i in positions {
            kept.push(self.id(i), self.hops[i], self.spans[i]);
        }
        kept.shrink_to_fit();
        kept
    }

    fn shrink_to_fit(&mut self) {
        self.ids.shrink_to_fit();
        self.id_ends.shrink_to_fit();
        self.hops.shrink_to_fit();
        self.spans.shrink_to_fit();
    }
}

/// An indexed benchmark file: what reading one of its records again needs.
#[derive(Debug)]
pub struct QuestionFile {
    pub dataset: Dataset,
    pub path: PathBuf,
    aliases: Option<Aliases>,
}

impl QuestionFile {
    /// Reads and parses question `i` of `index`.
    pub fn read(&self, index: &Index, i: usize) -> Result<Question, DataError> {
        let (id, span) = (index.id(i), index.spans[i]);
        let io = |cause| DataError::Io {
            path: self.path.clone(),
            cause,
        };
        let mut file = File::open(&self.path).map_err(io)?;
        file.seek(SeekFrom::Start(span.offset)).map_err(io)?;
        let mut bytes = vec![0; span.len as usize];
        file.read_exact(&mut bytes).map_err(io)?;
        let changed = || DataError::Parse {
            path: self.path.clone(),
            line: span.line as usize,
            message: "the file changed while the run was reading it".into(),
        };
        let text = String::from_utf8(bytes).map_err(|_| changed())?;
        let record = Record {
            line: span.line as usize,
            text: &text,
        };
        match parse_record(self.dataset, &record, self.aliases.as_ref()) {
            Ok(Some(q)) if q.id == id => Ok(q),
            Ok(_) => Err(changed()),
            Err(problem) => Err(record.error(&self.path, problem)),
        }
    }
}

/// Indexes `path` in `dataset`'s schema, in file order (what [`super::load`] reads, with
/// the same errors). A 2Wiki file takes its aliases from `id_aliases.json` beside it.
pub fn index(dataset: Dataset, path: &Path) -> Result<(QuestionFile, Index), DataError> {
    let aliases = match dataset {
        Dataset::TwoWiki => super::twowiki::aliases_beside(path)?,
        _ => None,
    };
    let file = QuestionFile {
        dataset,
        path: path.to_path_buf(),
        aliases,
    };
    let mut entries = Indexer::new(&file);
    if is_array(path)? {
        let text = super::read_text(path)?;
        // Records are slices of `text`, so their offsets are the file's.
        let base = text.as_ptr() as usize;
        for record in records::split(path, &text)? {
            let offset = (record.text.as_ptr() as usize - base) as u64;
            entries.add(&record, offset)?;
        }
    } else {
        each_line(path, |record, offset| {
            entries.add(record, offset)?;
            Ok(true)
        })?;
    }
    let entries = entries.finish()?;
    Ok((file, entries))
}

/// The schema of the file at `path`, as [`detect`] reads it off the first record; a
/// JSON Lines file is read only up to that record.
pub fn detect_file(path: &Path) -> Result<Dataset, DataError> {
    if is_array(path)? {
        return detect(path, &super::read_text(path)?);
    }
    let mut found = None;
    each_line(path, |record, _| {
        // Blank lines before the record keep its line number in errors.
        let text = "\n".repeat(record.line - 1) + record.text;
        found = Some(detect(path, &text));
        Ok(false)
    })?;
    found.unwrap_or_else(|| detect(path, ""))
}

/// Whether the file's first non-blank character (after a byte-order mark) opens a JSON
/// array, as [`records::split`] decides.
fn is_array(path: &Path) -> Result<bool, DataError> {
    let io = |cause| DataError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut first = true;
    loop {
        let buf = reader.fill_buf().map_err(io)?;
        if buf.is_empty() {
            return Ok(false);
        }
        let mut skip = 0;
        if first && buf.starts_with("\u{feff}".as_bytes()) {
            skip = 3;
        }
        first = false;
        for &b in &buf[skip..] {
            if !b.is_ascii_whitespace() {
                return Ok(b == b'[');
            }
        }
        let n = buf.len();
        reader.consume(n);
    }
}

/// Calls `each` with every non-blank line of a JSON Lines file as a record (its line
/// number, its text without the line end) and its byte offset, until it returns false;
/// invalid UTF-8 is the error [`super::read_text`] gives, at its line.
fn each_line(
    path: &Path,
    mut each: impl FnMut(&Record<'_>, u64) -> Result<bool, DataError>,
) -> Result<(), DataError> {
    let io = |cause| DataError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut buf = Vec::new();
    let (mut offset, mut number) = (0u64, 0usize);
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf).map_err(io)?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        let start = offset;
        offset += read as u64;
        let mut raw = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let mut skipped = 0;
        if number == 1 {
            if let Some(rest) = raw.strip_prefix("\u{feff}".as_bytes()) {
                raw = rest;
                skipped = 3;
            }
        }
        let line = std::str::from_utf8(raw).map_err(|e| DataError::Parse {
            path: path.to_path_buf(),
            line: number,
            message: format!(
                "not valid UTF-8 (byte {} of the line); benchmark files are UTF-8 JSON",
                e.valid_up_to() + skipped + 1
            ),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let text = line.trim_end_matches('\r');
        let record = Record { line: number, text };
        if !each(&record, start + skipped as u64)? {
            return Ok(());
        }
    }
}

/// Builds the entries as records arrive, with `load`'s checks: the first record's
/// schema, each record's parse, and duplicate ids (found through their hashes, so the
/// check holds eight bytes per question; a hash seen before is confirmed on the ids).
struct Indexer<'a> {
    file: &'a QuestionFile,
    entries: Index,
    hashes: HashSet<u64>,
    checked_schema: bool,
}

impl<'a> Indexer<'a> {
    fn new(file: &'a QuestionFile) -> Self {
        Indexer {
            file,
            entries: Index::default(),
            hashes: HashSet::new(),
            checked_schema: false,
        }
    }

    fn add(&mut self, record: &Record<'_>, offset: u64) -> Result<(), DataError> {
        let path = &self.file.path;
        if !self.checked_schema {
            detect::check(path, record, self.file.dataset)?;
            self.checked_schema = true;
        }
        let parsed = parse_record(self.file.dataset, record, self.file.aliases.as_ref())
            .map_err(|problem| record.error(path, problem))?;
        // None: a question the benchmark's own evaluation leaves out.
        let Some(question) = parsed else {
            return Ok(());
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        question.id.hash(&mut hasher);
        if !self.hashes.insert(hasher.finish()) {
            let first = (0..self.entries.len()).find(|&i| self.entries.id(i) == question.id);
            if let Some(first) = first {
                let message = format!(
                    "duplicate id `{}` (first seen at line {})",
                    question.id, self.entries.spans[first].line
                );
                return Err(record.error(path, Problem::from(message)));
            }
        }
        let too_big = || DataError::Parse {
            path: path.clone(),
            line: record.line,
            message: "the file is past what an index holds (4 GiB of ids, records or lines)".into(),
        };
        let span = Span {
            offset,
            len: u32::try_from(record.text.len()).map_err(|_| too_big())?,
            line: u32::try_from(record.line).map_err(|_| too_big())?,
        };
        if !self.entries.push(&question.id, question.hops, span) {
            return Err(too_big());
        }
        Ok(())
    }

    fn finish(self) -> Result<Index, DataError> {
        if !self.checked_schema {
            return Err(DataError::Parse {
                path: self.file.path.clone(),
                line: 1,
                message: "the file holds no questions (it is empty)".into(),
            });
        }
        let mut entries = self.entries;
        entries.shrink_to_fit();
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Questions;

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/benchmarks")
            .join(rel)
    }

    /// Every indexed question reads back equal to what `load` gives, in the same order,
    /// for a JSON Lines file (MuSiQue) and a JSON array (HotpotQA).
    #[test]
    fn an_indexed_file_reads_back_what_load_reads() {
        for (dataset, rel) in [
            (Dataset::Musique, "musique/dev_sample.jsonl"),
            (Dataset::HotpotQa, "hotpotqa/dev_distractor_sample.jsonl"),
            (Dataset::TwoWiki, "2wiki/dev_sample.jsonl"),
        ] {
            let path = fixture(rel);
            let loaded = super::super::load(dataset, &path).unwrap();
            let indexed = Questions::index(dataset, &path).unwrap();
            assert_eq!(indexed.len(), loaded.len(), "{rel}");
            assert!(!loaded.is_empty());
            for (i, q) in loaded.iter().enumerate() {
                assert_eq!(indexed.id(i), q.id);
                assert_eq!(indexed.hops(i), q.hops);
                assert_eq!(&*indexed.get(i).unwrap(), q, "{rel} question {i}");
            }
            assert_eq!(detect_file(&path).unwrap(), dataset, "{rel}");
        }
    }

    /// The checks are `load`'s: a duplicate id, a bad record and invalid UTF-8 are the
    /// same errors at the same lines, blank lines and a byte-order mark included.
    #[test]
    fn indexing_refuses_what_load_refuses_with_the_same_error() {
        let dir = tempfile::tempdir().unwrap();
        let row = |id: &str| {
            format!(
                r#"{{"id": "{id}", "question": "Q?", "answers": ["a"], "paragraphs": [{{"title": "T", "text": "x."}}]}}"#
            )
        };
        let cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "dup",
                format!("{}\n\n{}\n{}\n", row("a"), row("b"), row("a")).into_bytes(),
            ),
            (
                "bad",
                format!("\u{feff}{}\n{{\"id\": 3}}\n", row("a")).into_bytes(),
            ),
            (
                "utf8",
                [row("a").as_bytes(), b"\n{\"id\": \"\xff\"}\n"].concat(),
            ),
            ("empty", b"\n\n".to_vec()),
        ];
        for (name, bytes) in cases {
            let path = dir.path().join(format!("{name}.jsonl"));
            std::fs::write(&path, &bytes).unwrap();
            let want = super::super::load(Dataset::Jsonl, &path)
                .unwrap_err()
                .to_string();
            let got = Questions::index(Dataset::Jsonl, &path)
                .unwrap_err()
                .to_string();
            assert_eq!(got, want, "{name}");
        }
        let ok = dir.path().join("ok.jsonl");
        std::fs::write(&ok, format!("\u{feff}\n{}\r\n{}\n", row("a"), row("b"))).unwrap();
        let loaded = super::super::load(Dataset::Jsonl, &ok).unwrap();
        let indexed = Questions::index(Dataset::Jsonl, &ok).unwrap();
        assert_eq!(indexed.into_vec().unwrap(), loaded);
    }

    /// A file rewritten under a run is an error naming it, never another question.
    #[test]
    fn a_changed_file_is_an_error_not_another_question() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.jsonl");
        let row = |id: &str| {
            format!(
                r#"{{"id": "{id}", "question": "Q?", "answers": ["a"], "paragraphs": [{{"title": "T", "text": "x."}}]}}"#
            )
        };
        std::fs::write(&path, format!("{}\n{}\n", row("q1"), row("q2"))).unwrap();
        let indexed = Questions::index(Dataset::Jsonl, &path).unwrap();
        std::fs::write(&path, format!("{}\n{}\n", row("q2"), row("q1"))).unwrap();
        let err = indexed.get(1).unwrap_err().to_string();
        assert!(
            err.contains("changed while the run was reading it"),
            "{err}"
        );
    }
}
