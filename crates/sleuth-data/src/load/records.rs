//! Splits a benchmark file into per-question JSON records that remember their line.
//!
//! JSON arrays are read with borrowed raw values, so each element is a slice of the
//! original text and its starting line is computed from its byte offset; a schema error
//! inside an element is then reported at the element's line plus the line within it.

use super::super::DataError;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use std::path::Path;

/// One question's JSON text and where it starts.
pub struct Record<'a> {
    /// 1-based line of the file on which the record starts.
    pub line: usize,
    pub text: &'a str,
}

/// What is wrong with a record, and on which line of the file if more precise than the
/// record's first line.
pub struct Problem {
    pub line: Option<usize>,
    pub message: String,
}

impl From<String> for Problem {
    fn from(message: String) -> Self {
        Problem {
            line: None,
            message,
        }
    }
}

impl Record<'_> {
    /// Deserializes the record; errors name the line of the file, not of the record.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, Problem> {
        serde_json::from_str(self.text).map_err(|e| Problem {
            line: Some(self.line + e.line().saturating_sub(1)),
            message: describe(&e),
        })
    }

    pub fn error(&self, path: &Path, problem: Problem) -> DataError {
        DataError::Parse {
            path: path.to_path_buf(),
            line: problem.line.unwrap_or(self.line),
            message: problem.message,
        }
    }
}

/// serde_json's message with its "at line L column C" suffix reduced to the column (the
/// caller reports the line itself).
fn describe(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match full.strip_suffix(&suffix) {
        Some(message) if e.line() > 0 => format!("{message} (column {})", e.column()),
        Some(message) => message.to_string(),
        None => full,
    }
}

/// Splits `text` into records: the elements of a top-level JSON array, or the non-blank
/// lines of a JSON Lines file.
pub fn split<'a>(path: &Path, text: &'a str) -> Result<Vec<Record<'a>>, DataError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('[') {
        split_array(path, text)
    } else {
        Ok(text
            .split('\n')
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| Record {
                line: i + 1,
                text: l.trim_end_matches('\r'),
            })
            .collect())
    }
}

fn split_array<'a>(path: &Path, text: &'a str) -> Result<Vec<Record<'a>>, DataError> {
    let elements: Vec<&'a RawValue> = serde_json::from_str(text).map_err(|e| DataError::Parse {
        path: path.to_path_buf(),
        line: e.line().max(1),
        message: describe(&e),
    })?;
    let base = text.as_ptr() as usize;
    let mut line = 1;
    let mut counted_to = 0;
    let mut records = Vec::with_capacity(elements.len());
    for raw in elements {
        let slice = raw.get();
        // Borrowed raw values point into `text`, so the offset is exact.
        let offset = slice.as_ptr() as usize - base;
        line += text[counted_to..offset].matches('\n').count();
        counted_to = offset;
        records.push(Record { line, text: slice });
    }
    Ok(records)
}
