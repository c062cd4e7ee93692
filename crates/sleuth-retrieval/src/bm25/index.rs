//! Opening an index: both files are memory-mapped, the header and the small parts are
//! verified against their checksums (see `check`), and the header's section table is
//! checked against the counts and file sizes, so a truncated, foreign, damaged or
//! outdated file is refused with a message instead of producing wrong results. The only work done on
//! open is one pass over the document lengths to precompute each document's BM25
//! length normalization (so k1 and b can be overridden without a rebuild).

use super::analyzer::Analyzer;
use super::error::{IndexError, IndexResult};
use super::format::{
    self, u32_at, u64_at, Header, DOCS_FILE, DOCS_MAGIC, INDEX_FILE, TERM_INFO_LEN,
};
use super::source::{id_cmp, CorpusDoc};
use super::Bm25Params;
use memmap2::Mmap;
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Sections (and a `docs.bin`) up to this size are verified on every open (see
/// [`super::check`]).
pub const OPEN_VERIFY_BYTES: u64 = 1 << 20;

/// Reusable per-search buffers, kept by the index so concurrent searches do not
/// allocate them each time: the exhaustive path's dense score array, and the bulk
/// path's window of scores with a bit per document that has one.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) scores: Vec<f32>,
    pub(super) touched: Vec<u32>,
    pub(super) window: Vec<f32>,
    pub(super) in_window: Vec<u64>,
}

#[derive(Default)]
pub(super) struct ScratchPool(pub(super) Mutex<Vec<Scratch>>);

/// Per-term statistics from the term dictionary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TermStats {
    pub df: u32,
    pub max_tf: u32,
    pub min_dl: u32,
    /// Largest tf / (tf + norm) over the postings under the build's k1 and b.
    pub max_part: f32,
}

/// A BM25 index opened read-only. `Send + Sync`: share it with `Arc` across threads.
pub struct Bm25Index {
    dir: PathBuf,
    pub(super) index: Mmap,
    pub(super) docs: Mmap,
    pub(super) header: Header,
    params: Bm25Params,
    avgdl: f64,
    /// k1 * (1 - b + b * dl / avgdl) per document.
    pub(super) norms: Vec<f32>,
    pub(super) analyzer: Analyzer,
    pub(super) pool: ScratchPool,
}

fn map(path: &Path) -> IndexResult<Mmap> {
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => IndexError::corrupt(
            path,
            "file missing (build the index with `sleuth index build`)",
        ),
        _ => IndexError::io(path, e),
    })?;
    // Safety: the index files are written once by the builder and only read afterwards;
    // a concurrent truncation by another process is outside what we defend against.
    unsafe { Mmap::map(&file) }.map_err(|e| IndexError::io(path, e))
}

impl Bm25Index {
    /// Opens the index in `dir` with the k1 and b it was built with.
    pub fn open(dir: impl AsRef<Path>) -> IndexResult<Self> {
        Self::open_with(dir, None)
    }

    /// Opens the index, scoring with `params` instead of the built-in k1 and b.
    pub fn open_with(dir: impl AsRef<Path>, params: Option<Bm25Params>) -> IndexResult<Self> {
        Self::open_verifying(dir, params, OPEN_VERIFY_BYTES)
    }

    /// Opens the index, verifying the checksums of the parts of at most `limit` bytes
    /// (and the document lengths always).
    pub(super) fn open_verifying(
        dir: impl AsRef<Path>,
        params: Option<Bm25Params>,
        limit: u64,
    ) -> IndexResult<Self> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.is_dir() {
            return Err(IndexError::corrupt(&dir, "no such index directory"));
        }
        let index_path = dir.join(INDEX_FILE);
        let docs_path = dir.join(DOCS_FILE);
        let index = map(&index_path)?;
        let docs = map(&docs_path)?;
        let header = Header::decode(&index, &index_path)?;
        let bad = |m: String| IndexError::corrupt(&index_path, m);
        let (n, t) = (header.docs, header.terms);
        if n >= u64::from(u32::MAX) {
            return Err(bad(format!("{n} documents is more than the format holds")));
        }
        let expected = [
            (format::TERM_OFFSETS, 8 * (t + 1)),
            (format::TERM_INFO, TERM_INFO_LEN as u64 * t),
            (format::DOC_LENS, 4 * n),
            (format::DOC_OFFSETS, 8 * (n + 1)),
            (format::ID_ORDER, 4 * n),
            (format::ID_RANK, 4 * n),
        ];
        for (section, (off, len)) in header.sections.iter().enumerate() {
            if off
                .checked_add(*len)
                .is_none_or(|end| end > index.len() as u64)
            {
                return Err(bad(format!(
                    "section {section} runs past the end of the file (truncated?)"
                )));
            }
        }
        for (section, len) in expected {
            if header.sections[section].1 != len {
                return Err(bad(format!("section {section} has the wrong size")));
            }
        }
        if docs.len() < 12 || &docs[..8] != DOCS_MAGIC || u32_at(&docs, 8) != format::VERSION {
            return Err(IndexError::corrupt(
                &docs_path,
                "missing or outdated header",
            ));
        }
        let params = match params {
            Some(p) => {
                p.validate()?;
                p
            }
            None => Bm25Params {
                k1: header.k1,
                b: header.b,
            },
        };
        let mut idx = Bm25Index {
            dir,
            index,
            docs,
            header,
            params,
            avgdl: 0.0,
            norms: Vec::new(),
            analyzer: Analyzer::new(),
            pool: ScratchPool::default(),
        };
        // Checksums before the structure: damage is then named as damage.
        idx.verify_small(limit)?;
        let last_term = idx.u64_in(format::TERM_OFFSETS, t as usize);
        if last_term != header.sections[format::TERM_BYTES].1 {
            return Err(IndexError::corrupt(
                &index_path,
                "term dictionary does not add up",
            ));
        }
        if idx.u64_in(format::DOC_OFFSETS, n as usize) != idx.docs.len() as u64 {
            return Err(IndexError::corrupt(
                &docs_path,
                "size does not match the index (truncated?)",
            ));
        }
        let lens = idx.section(format::DOC_LENS);
        let total: u64 = lens.chunks_exact(4).map(|c| u64::from(u32_at(c, 0))).sum();
        if total != header.total_len {
            return Err(IndexError::corrupt(
                &index_path,
                "document lengths do not add up",
            ));
        }
        // An empty corpus (or one of empty paragraphs) has avgdl 0; any positive value
        // keeps the formula finite and changes nothing, since no document can match.
        let avgdl = if total == 0 {
            1.0
        } else {
            total as f64 / n as f64
        };
        let (k1, b) = (params.k1, params.b);
        let norms = lens
            .chunks_exact(4)
            .map(|c| (k1 * (1.0 - b + b * f64::from(u32_at(c, 0)) / avgdl)) as f32)
            .collect();
        idx.avgdl = avgdl;
        idx.norms = norms;
        Ok(idx)
    }

    /// What tells this index's content from any other's: the checksum of its header,
    /// which holds the checksum of every section and of `docs.bin` (16 hex digits). A
    /// run directory records it so a resume against another index is refused.
    pub fn fingerprint(&self) -> String {
        format!(
            "{:016x}",
            format::checksum(&self.index[..format::HEADER_LEN])
        )
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn params(&self) -> Bm25Params {
        self.params
    }
    pub fn num_docs(&self) -> u32 {
        self.header.docs as u32
    }
    pub fn num_terms(&self) -> u32 {
        self.header.terms as u32
    }
    pub fn avgdl(&self) -> f64 {
        self.avgdl
    }
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    pub(super) fn section(&self, number: usize) -> &[u8] {
        let (off, len) = self.header.sections[number];
        &self.index[off as usize..(off + len) as usize]
    }
    fn u64_in(&self, number: usize, i: usize) -> u64 {
        u64_at(self.section(number), 8 * i)
    }
    pub(super) fn u32_in(&self, number: usize, i: usize) -> u32 {
        u32_at(self.section(number), 4 * i)
    }

    /// The term with number `t` (terms are numbered in sorted order).
    pub fn term(&self, t: u32) -> &str {
        let bytes = self.section(format::TERM_BYTES);
        let r = self.u64_in(format::TERM_OFFSETS, t as usize) as usize
            ..self.u64_in(format::TERM_OFFSETS, t as usize + 1) as usize;
        std::str::from_utf8(bytes.get(r).unwrap_or_default()).unwrap_or("")
    }

    /// The number of an analyzed term, if any document contains it.
    pub fn find_term(&self, term: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0u32, self.num_terms());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.term(mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    pub fn term_stats(&self, t: u32) -> TermStats {
        let info = &self.section(format::TERM_INFO)[t as usize * TERM_INFO_LEN..];
        TermStats {
            df: u32_at(info, 8),
            max_tf: u32_at(info, 12),
            min_dl: u32_at(info, 16),
            max_part: f32::from_bits(u32_at(info, 20)),
        }
    }

    /// The compressed postings of term `t`, checked to lie inside the postings section.
    pub(super) fn postings_bytes(&self, t: u32) -> IndexResult<&[u8]> {
        let info = self.section(format::TERM_INFO);
        let start = u64_at(info, t as usize * TERM_INFO_LEN);
        let all = self.section(format::POSTINGS);
        let end = if t + 1 < self.num_terms() {
            u64_at(info, (t as usize + 1) * TERM_INFO_LEN)
        } else {
            all.len() as u64
        };
        all.get(start as usize..end as usize).ok_or_else(|| {
            IndexError::corrupt(
                self.dir.join(INDEX_FILE),
                format!("postings of term {t} out of range"),
            )
        })
    }

    /// The most term `t` can contribute before idf: tf / (tf + norm) maximized over
    /// its postings. Exact (stored at build) under the build's k1 and b; under other
    /// parameters, bounded from the term's largest tf and shortest document.
    pub(super) fn bound_part(&self, stats: TermStats) -> f32 {
        let built = Bm25Params {
            k1: self.header.k1,
            b: self.header.b,
        };
        if self.params == built {
            return stats.max_part;
        }
        let tf = f64::from(stats.max_tf);
        let norm = self.params.k1
            * (1.0 - self.params.b + self.params.b * f64::from(stats.min_dl) / self.avgdl);
        (tf / (tf + norm) * (1.0 + 1e-6)) as f32
    }

    /// Whether the stored block maxima bound this index's scores: only under the k1 and
    /// b they were computed with (otherwise searches use the per-term bound alone).
    pub(super) fn block_maxima_hold(&self) -> bool {
        self.params.k1 == self.header.k1 && self.params.b == self.header.b
    }

    /// Lucene's idf: ln(1 + (N - df + 0.5) / (df + 0.5)).
    pub fn idf(&self, df: u32) -> f64 {
        super::lucene_idf(u64::from(self.num_docs()), u64::from(df))
    }

    pub fn doc_len(&self, doc: u32) -> u32 {
        self.u32_in(format::DOC_LENS, doc as usize)
    }

    /// The position of a document when all are sorted by id (the tie-break key).
    pub fn id_rank(&self, doc: u32) -> u32 {
        self.u32_in(format::ID_RANK, doc as usize)
    }

    fn record(&self, doc: u32) -> IndexResult<&[u8]> {
        if doc >= self.num_docs() {
            return Err(IndexError::Invalid(format!("no document number {doc}")));
        }
        let r: Range<usize> = self.u64_in(format::DOC_OFFSETS, doc as usize) as usize
            ..self.u64_in(format::DOC_OFFSETS, doc as usize + 1) as usize;
        self.docs.get(r).ok_or_else(|| self.docs_corrupt(doc))
    }

    fn docs_corrupt(&self, doc: u32) -> IndexError {
        IndexError::corrupt(
            self.dir.join(DOCS_FILE),
            format!("stored paragraph {doc} is damaged"),
        )
    }

    /// The stored paragraph with document number `doc`.
    pub fn doc(&self, doc: u32) -> IndexResult<CorpusDoc> {
        let rec = self.record(doc)?;
        let mut reader = RecordReader { rec, pos: 0 };
        let parsed = (|| {
            let id = reader.string()?;
            let title = reader.string()?;
            let count = reader.u32()?;
            let sentences = (0..count)
                .map(|_| reader.string())
                .collect::<Option<Vec<_>>>()?;
            Some(CorpusDoc {
                id,
                title,
                sentences,
            })
        })();
        parsed.ok_or_else(|| self.docs_corrupt(doc))
    }

    /// The external id of a document (reads only that field).
    pub fn doc_id(&self, doc: u32) -> IndexResult<String> {
        let rec = self.record(doc)?;
        RecordReader { rec, pos: 0 }
            .string()
            .ok_or_else(|| self.docs_corrupt(doc))
    }

    /// The document number of a paragraph id, by binary search over the id order.
    pub fn find_id(&self, id: &str) -> IndexResult<Option<u32>> {
        let (mut lo, mut hi) = (0u32, self.num_docs());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let doc = self.u32_in(format::ID_ORDER, mid as usize);
            match id_cmp(&self.doc_id(doc)?, id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(doc)),
            }
        }
        Ok(None)
    }
}

struct RecordReader<'a> {
    rec: &'a [u8],
    pos: usize,
}

impl RecordReader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let v = self.rec.get(self.pos..self.pos + 4)?;
        self.pos += 4;
        Some(u32_at(v, 0))
    }
    fn string(&mut self) -> Option<String> {
        let len = self.u32()? as usize;
        let bytes = self.rec.get(self.pos..self.pos.checked_add(len)?)?;
        self.pos += len;
        String::from_utf8(bytes.to_vec()).ok()
    }
}
