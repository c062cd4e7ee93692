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
use crate::{DataError, Dataset, Question};
use std::collections::HashSet;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The questions of an indexed file in file order, 10 bytes each: where each record
/// starts in the file and its hop count, and in a JSON array (where a record does not
/// end its line) its length. Ids are not held (they would be most of the index: a run
/// of 100,000 questions held 4.7 MB of them, issue 32); they are read from the file
/// when asked for ([`QuestionFile::id`]), as is a record's line when an error names it.
#[derive(Debug, Clone, Default)]
pub struct Index {
    offsets: Vec<u64>,
    /// Empty for a JSON Lines file: a record there is its line.
    lens: Vec<u32>,
    hops: Vec<Option<u8>>,
    by_line: bool,
}

impl Index {
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn hops(&self, i: usize) -> Option<u8> {
        self.hops[i]
    }

    fn push(&mut self, offset: u64, len: u32, hops: Option<u8>) {
        self.offsets.push(offset);
        if !self.by_line {
            self.lens.push(len);
        }
        self.hops.push(hops);
    }

    /// The length of record `i`, when the index holds it.
    fn len_of(&self, i: usize) -> Option<u32> {
        (!self.by_line).then(|| self.lens[i])
    }

    /// The entries at `positions`, in that order; all of them, in order, costs nothing.
    pub fn keep(self, positions: &[usize]) -> Index {
        if positions.len() == self.len() && positions.iter().enumerate().all(|(k, &i)| k == i) {
            return self;
        }
        let mut kept = Index {
            by_line: self.by_line,
            ..Index::default()
        };
        for &i in positions {
            kept.push(self.offsets[i], self.len_of(i).unwrap_or(0), self.hops[i]);
        }
        kept.shrink_to_fit();
        kept
    }

    fn shrink_to_fit(&mut self) {
        self.offsets.shrink_to_fit();
        self.lens.shrink_to_fit();
        self.hops.shrink_to_fit();
    }
}

/// What a file looked like when it was indexed: a read finding it otherwise is an
/// error, never another question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Stamp> {
        let meta = std::fs::metadata(path)?;
        Ok(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// An indexed benchmark file: what reading one of its records again needs.
#[derive(Debug)]
pub struct QuestionFile {
    pub dataset: Dataset,
    pub path: PathBuf,
    aliases: Option<Aliases>,
    stamp: Stamp,
}

impl QuestionFile {
    /// Reads and parses question `i` of `index`.
    pub fn read(&self, index: &Index, i: usize) -> Result<Question, DataError> {
        let offset = index.offsets[i];
        let io = |cause| DataError::Io {
            path: self.path.clone(),
            cause,
        };
        let changed = |line: usize| DataError::Parse {
            path: self.path.clone(),
            line,
            message: "the file changed while the run was reading it".into(),
        };
        if Stamp::of(&self.path).map_err(io)? != self.stamp {
            return Err(changed(self.line_at(offset)?));
        }
        let mut file = File::open(&self.path).map_err(io)?;
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let bytes = match index.len_of(i) {
            Some(len) => {
                let mut bytes = vec![0; len as usize];
                file.read_exact(&mut bytes).map_err(io)?;
                bytes
            }
            None => {
                let mut bytes = Vec::new();
                BufReader::new(file)
                    .read_until(b'\n', &mut bytes)
                    .map_err(io)?;
                bytes
            }
        };
        let line = || self.line_at(offset);
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(changed(line()?));
        };
        // A line's record, as `each_line` cut it: without its line end.
        let text = match index.by_line {
            true => text
                .strip_suffix('\n')
                .unwrap_or(&text)
                .trim_end_matches('\r'),
            false => &text,
        };
        let record = Record { line: 0, text };
        match parse_record(self.dataset, &record, self.aliases.as_ref()) {
            Ok(Some(q)) => Ok(q),
            Ok(None) => Err(changed(line()?)),
            Err(problem) => {
                let record = Record {
                    line: line()?,
                    text,
                };
                Err(record.error(&self.path, problem))
            }
        }
    }

    /// The id of question `i` of `index` (read from the file).
    pub fn id(&self, index: &Index, i: usize) -> Result<String, DataError> {
        self.read(index, i).map(|q| q.id)
    }

    /// The 1-based line the byte at `offset` is on (for errors: lines are not held).
    fn line_at(&self, offset: u64) -> Result<usize, DataError> {
        let io = |cause| DataError::Io {
            path: self.path.clone(),
            cause,
        };
        let file = File::open(&self.path).map_err(io)?;
        let mut reader = BufReader::new(file.take(offset));
        let mut newlines = 0;
        loop {
            let buf = reader.fill_buf().map_err(io)?;
            if buf.is_empty() {
                return Ok(newlines + 1);
            }
            newlines += buf.iter().filter(|&&b| b == b'\n').count();
            let n = buf.len();
            reader.consume(n);
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
    let io = |cause| DataError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let file = QuestionFile {
        dataset,
        path: path.to_path_buf(),
        aliases,
        stamp: Stamp::of(path).map_err(io)?,
    };
    let mut entries = Indexer::new(&file);
    let array = is_array(path)?;
    entries.entries.by_line = !array;
    if array {
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
    if dataset == Dataset::TwoWiki {
        super::twowiki::warn_without_aliases(path, file.aliases.as_ref());
    }
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
/// check holds eight bytes per question; a hash seen before is confirmed on the ids,
/// read again from the file).
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
            for i in 0..self.entries.len() {
                if self.file.id(&self.entries, i)? == question.id {
                    let message = format!(
                        "duplicate id `{}` (first seen at line {})",
                        question.id,
                        self.file.line_at(self.entries.offsets[i])?
                    );
                    return Err(record.error(path, Problem::from(message)));
                }
            }
        }
        let len = u32::try_from(record.text.len()).map_err(|_| DataError::Parse {
            path: path.clone(),
            line: record.line,
            message: "the record is past what an index holds (4 GiB)".into(),
        })?;
        self.entries.push(offset, len, question.hops);
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
    use crate::Questions;

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
                assert_eq!(indexed.id(i).unwrap(), q.id);
                assert_eq!(indexed.hops(i), q.hops);
                assert_eq!(&*indexed.get(i).unwrap(), q, "{rel} question {i}");
            }
            assert_eq!(detect_file(&path).unwrap(), dataset, "{rel}");
        }
        // The same records as a JSON array (the official releases' form): the index holds
        // their lengths there, since a record does not end its line.
        let dir = tempfile::tempdir().unwrap();
        let lines =
            std::fs::read_to_string(fixture("hotpotqa/dev_distractor_sample.jsonl")).unwrap();
        let rows: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
        let array = dir.path().join("dev.json");
        std::fs::write(&array, format!("[\n{}\n]\n", rows.join(",\n"))).unwrap();
        let loaded = super::super::load(Dataset::HotpotQa, &array).unwrap();
        let indexed = Questions::index(Dataset::HotpotQa, &array).unwrap();
        assert_eq!(loaded.len(), rows.len());
        assert_eq!(indexed.into_vec().unwrap(), loaded);
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
