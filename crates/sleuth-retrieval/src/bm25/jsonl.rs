//! Building from a JSON Lines corpus, on two threads.
//!
//! Why two: reading and parsing the JSON (and decoding UTF-8) costs about as much as
//! analyzing the words and appending the postings, and the two need nothing from each
//! other but the parsed paragraphs. So a reader thread parses batches of lines and
//! hands them over a small bounded channel (a few batches in flight, so memory stays
//! flat) while the calling thread indexes them, in corpus order, so document numbers
//! and the result are exactly those of a one-thread build. An error on either side
//! stops both: a bad line is reported with its line number once every paragraph
//! before it has been added, and a failed `add` drops the channel, which ends the
//! reader.

use super::build::{BuildProgress, BuildSummary, IndexBuilder};
use super::error::{IndexError, IndexResult};
use super::source::{parse_line, CorpusDoc};
use super::Bm25Params;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender};

/// Paragraphs per batch handed from the reader to the indexer.
const BATCH: usize = 512;

/// One batch from the reader: parsed paragraphs, then possibly the error that ended
/// the reading, with how far it got.
struct Batch {
    docs: Vec<CorpusDoc>,
    error: Option<IndexError>,
    bytes_read: u64,
    lines: usize,
}

/// Reads and parses `corpus` into batches until the end, an error, or the receiver
/// hanging up.
fn read_batches(corpus: &Path, file: File, tx: SyncSender<Batch>) {
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut raw = Vec::new();
    let (mut lines, mut bytes_read, mut docs) = (0usize, 0u64, 0u64);
    let mut batch = Vec::with_capacity(BATCH);
    let error = loop {
        raw.clear();
        let n = match reader.read_until(b'\n', &mut raw) {
            Ok(n) => n,
            Err(e) => break Some(IndexError::io(corpus, e)),
        };
        if n == 0 {
            break None;
        }
        lines += 1;
        bytes_read += n as u64;
        // Decoded per line, so a bad byte is reported at its line.
        let line = match std::str::from_utf8(&raw) {
            Ok(line) => line,
            Err(e) => {
                break Some(IndexError::Corpus {
                    path: corpus.to_path_buf(),
                    line: lines,
                    message: format!("not valid UTF-8 (byte {} of the line)", e.valid_up_to() + 1),
                })
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line, docs) {
            Ok(doc) => batch.push(doc),
            Err(message) => {
                break Some(IndexError::Corpus {
                    path: corpus.to_path_buf(),
                    line: lines,
                    message,
                })
            }
        }
        docs += 1;
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            let sent = tx.send(Batch {
                docs: full,
                error: None,
                bytes_read,
                lines,
            });
            if sent.is_err() {
                return;
            }
        }
    };
    let _ = tx.send(Batch {
        docs: batch,
        error,
        bytes_read,
        lines,
    });
}

/// Builds an index from a JSON Lines corpus in one streaming pass, calling `progress`
/// every few thousand paragraphs and once at the end.
pub fn build_from_jsonl(
    corpus: &Path,
    out: &Path,
    params: Bm25Params,
    mut progress: impl FnMut(BuildProgress),
) -> IndexResult<BuildSummary> {
    let file = File::open(corpus).map_err(|e| IndexError::io(corpus, e))?;
    let total_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut builder = IndexBuilder::new(out, params)?;
    let (tx, rx) = sync_channel::<Batch>(4);
    let lines = std::thread::scope(|s| -> IndexResult<usize> {
        s.spawn(move || read_batches(corpus, file, tx));
        let mut lines = 0;
        for batch in rx {
            for doc in &batch.docs {
                builder.add(doc)?;
                if builder.docs() % 4096 == 0 {
                    progress(BuildProgress {
                        docs: builder.docs(),
                        bytes_read: batch.bytes_read,
                        total_bytes,
                    });
                }
            }
            if let Some(e) = batch.error {
                return Err(e);
            }
            lines = batch.lines;
        }
        Ok(lines)
    })?;
    if builder.docs() == 0 {
        let read = match lines {
            0 => "it is empty".to_string(),
            n => format!("its {n} lines are all blank"),
        };
        return Err(IndexError::Invalid(format!(
            "{}: the corpus has no paragraphs ({read}); no index was written",
            corpus.display()
        )));
    }
    progress(BuildProgress {
        docs: builder.docs(),
        bytes_read: total_bytes,
        total_bytes,
    });
    builder.finish()
}
