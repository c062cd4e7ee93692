//! Building an index in one streaming pass over the corpus.
//!
//! Each paragraph is analyzed as it arrives, its stored form is appended to `docs.bin`,
//! and its (term, tf) pairs are appended to per-term postings already delta/varint
//! compressed, so memory grows with the compressed postings (about 2-3 bytes per
//! distinct term of a paragraph) plus the vocabulary, never with the raw text.
//! Analysis of a raw word is cached (raw word -> term id or stop word), which keeps
//! stemming off the hot path: a corpus repeats the same few hundred thousand words.
//! Files are written under temporary names and renamed at the end, so an interrupted
//! build never leaves something that opens as an index. Checksums are computed as the
//! bytes are written, so they cost no second pass.

use super::analyzer::Analyzer;
use super::error::{IndexError, IndexResult};
use super::format::{
    self, Checksum, Header, DOCS_FILE, DOCS_MAGIC, HEADER_LEN, INDEX_FILE, SECTIONS,
};
use super::format::{encode_postings, part, varint_postings, EncodedPostings};
use super::source::{id_cmp, CorpusDoc};
use super::Bm25Params;
use rustc_hash::FxHashMap;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Raw words cached beyond this many are analyzed each time (bounds memory on corpora
/// with a huge long tail of distinct surface forms).
const CACHE_LIMIT: usize = 8_000_000;
const STOP: u32 = u32::MAX;

/// How far a build has got, for progress display.
#[derive(Debug, Clone, Copy)]
pub struct BuildProgress {
    pub docs: u64,
    pub bytes_read: u64,
    pub total_bytes: u64,
}

/// What a finished build produced.
#[derive(Debug, Clone)]
pub struct BuildSummary {
    pub docs: u64,
    pub terms: u64,
    pub postings: u64,
    pub total_len: u64,
    pub avgdl: f64,
    pub index_bytes: u64,
    pub elapsed: Duration,
}

#[derive(Default)]
struct TermBuf {
    last: u32,
    df: u32,
    max_tf: u32,
    min_dl: u32,
    bytes: Vec<u8>,
}

impl TermBuf {
    /// The stored form (see `format`: skip table, packed blocks) and the largest part
    /// over the whole list (the term's MaxScore bound before idf). Computed at the end
    /// because the parts need avgdl.
    fn encode(&self, part_of: impl Fn(u32, u32) -> f64) -> EncodedPostings {
        encode_postings(varint_postings(&self.bytes), self.df, part_of)
    }
}

/// Accumulates paragraphs into an index directory; [`IndexBuilder::finish`] writes it.
pub struct IndexBuilder {
    dir: PathBuf,
    params: Bm25Params,
    analyzer: Analyzer,
    cache: FxHashMap<Box<str>, u32>,
    term_ids: FxHashMap<Box<str>, u32>,
    terms: Vec<TermBuf>,
    doc_lens: Vec<u32>,
    ids: Vec<String>,
    doc_offsets: Vec<u64>,
    docs_out: BufWriter<File>,
    docs_pos: u64,
    docs_sum: Checksum,
    postings: u64,
    scratch: Vec<u32>,
    started: Instant,
}

fn tmp(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.tmp"))
}

impl IndexBuilder {
    /// Starts a build into `dir` (created if needed).
    pub fn new(dir: impl Into<PathBuf>, params: Bm25Params) -> IndexResult<Self> {
        params.validate()?;
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| IndexError::io(&dir, e))?;
        let docs_path = tmp(&dir, DOCS_FILE);
        let file = File::create(&docs_path).map_err(|e| IndexError::io(&docs_path, e))?;
        let mut docs_out = BufWriter::with_capacity(1 << 20, file);
        let mut docs_sum = Checksum::default();
        let mut head = DOCS_MAGIC.to_vec();
        head.extend_from_slice(&format::VERSION.to_le_bytes());
        docs_out
            .write_all(&head)
            .map_err(|e| IndexError::io(&docs_path, e))?;
        docs_sum.update(&head);
        Ok(IndexBuilder {
            dir,
            params,
            analyzer: Analyzer::new(),
            cache: FxHashMap::default(),
            term_ids: FxHashMap::default(),
            terms: Vec::new(),
            doc_lens: Vec::new(),
            ids: Vec::new(),
            doc_offsets: vec![12],
            docs_out,
            docs_pos: 12,
            docs_sum,
            postings: 0,
            scratch: Vec::new(),
            started: Instant::now(),
        })
    }

    pub fn docs(&self) -> u64 {
        self.doc_lens.len() as u64
    }

    fn term_id(&mut self, raw: &str) -> u32 {
        if let Some(&id) = self.cache.get(raw) {
            return id;
        }
        let id = match self.analyzer.analyze_token(raw) {
            None => STOP,
            Some(term) => match self.term_ids.get(term.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.terms.len() as u32;
                    self.term_ids.insert(term.into_boxed_str(), id);
                    self.terms.push(TermBuf {
                        min_dl: u32::MAX,
                        ..TermBuf::default()
                    });
                    id
                }
            },
        };
        if self.cache.len() < CACHE_LIMIT {
            self.cache.insert(raw.into(), id);
        }
        id
    }

    /// Adds one paragraph; its document number is the number of paragraphs added before.
    pub fn add(&mut self, doc: &CorpusDoc) -> IndexResult<()> {
        let number = self.doc_lens.len() as u32;
        if number == u32::MAX - 1 {
            return Err(IndexError::Invalid("more than 4 billion paragraphs".into()));
        }
        let mut tokens = std::mem::take(&mut self.scratch);
        tokens.clear();
        for piece in doc.pieces() {
            Analyzer::for_each_word(piece, |w| {
                let id = self.term_id(w);
                if id != STOP {
                    tokens.push(id);
                }
            });
        }
        let dl = tokens.len() as u32;
        tokens.sort_unstable();
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            let mut j = i + 1;
            while j < tokens.len() && tokens[j] == t {
                j += 1;
            }
            let tf = (j - i) as u32;
            let buf = &mut self.terms[t as usize];
            format::push_posting(&mut buf.bytes, buf.last, number, tf);
            buf.last = number;
            buf.df += 1;
            buf.max_tf = buf.max_tf.max(tf);
            buf.min_dl = buf.min_dl.min(dl);
            self.postings += 1;
            i = j;
        }
        self.scratch = tokens;
        self.doc_lens.push(dl);
        self.ids.push(doc.id.clone());
        self.write_doc(doc)
    }

    fn write_doc(&mut self, doc: &CorpusDoc) -> IndexResult<()> {
        let mut record = Vec::with_capacity(64);
        let mut put = |s: &str| {
            record.extend_from_slice(&(s.len() as u32).to_le_bytes());
            record.extend_from_slice(s.as_bytes());
        };
        put(&doc.id);
        put(&doc.title);
        record.extend_from_slice(&(doc.sentences.len() as u32).to_le_bytes());
        for s in &doc.sentences {
            record.extend_from_slice(&(s.len() as u32).to_le_bytes());
            record.extend_from_slice(s.as_bytes());
        }
        let path = tmp(&self.dir, DOCS_FILE);
        self.docs_out
            .write_all(&record)
            .map_err(|e| IndexError::io(&path, e))?;
        self.docs_sum.update(&record);
        self.docs_pos += record.len() as u64;
        self.doc_offsets.push(self.docs_pos);
        Ok(())
    }

    /// Writes the index files and returns what was built.
    pub fn finish(mut self) -> IndexResult<BuildSummary> {
        let docs_tmp = tmp(&self.dir, DOCS_FILE);
        self.docs_out
            .flush()
            .map_err(|e| IndexError::io(&docs_tmp, e))?;
        self.cache = FxHashMap::default();

        let mut id_order: Vec<u32> = (0..self.ids.len() as u32).collect();
        id_order.sort_unstable_by(|&a, &b| id_cmp(&self.ids[a as usize], &self.ids[b as usize]));
        for w in id_order.windows(2) {
            let (a, b) = (&self.ids[w[0] as usize], &self.ids[w[1] as usize]);
            if a == b {
                return Err(IndexError::Invalid(format!(
                    "duplicate paragraph id `{a}` (paragraphs {} and {}); ids must be unique",
                    w[0].min(w[1]) + 1,
                    w[0].max(w[1]) + 1
                )));
            }
        }
        let mut id_rank = vec![0u32; id_order.len()];
        for (rank, &doc) in id_order.iter().enumerate() {
            id_rank[doc as usize] = rank as u32;
        }
        self.ids = Vec::new();

        let mut sorted: Vec<(Box<str>, u32)> =
            std::mem::take(&mut self.term_ids).into_iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));

        let index_tmp = tmp(&self.dir, INDEX_FILE);
        let index_bytes = self
            .write_index(&index_tmp, &sorted, &id_order, &id_rank)
            .map_err(|e| IndexError::io(&index_tmp, e))?;
        for name in [DOCS_FILE, INDEX_FILE] {
            let (from, final_path) = (tmp(&self.dir, name), self.dir.join(name));
            // On the disk before the rename makes it the index (`crate::atomic`).
            crate::atomic::sync_file(&from).map_err(|e| IndexError::io(&from, e))?;
            std::fs::rename(&from, &final_path).map_err(|e| IndexError::io(&final_path, e))?;
        }
        crate::atomic::sync_parent(&self.dir.join(INDEX_FILE));
        let docs = self.doc_lens.len() as u64;
        let total_len: u64 = self.doc_lens.iter().map(|&l| u64::from(l)).sum();
        Ok(BuildSummary {
            docs,
            terms: sorted.len() as u64,
            postings: self.postings,
            total_len,
            avgdl: if docs == 0 {
                0.0
            } else {
                total_len as f64 / docs as f64
            },
            index_bytes: index_bytes + self.docs_pos,
            elapsed: self.started.elapsed(),
        })
    }

    fn write_index(
        &self,
        path: &Path,
        sorted: &[(Box<str>, u32)],
        id_order: &[u32],
        id_rank: &[u32],
    ) -> std::io::Result<u64> {
        let file = File::create(path)?;
        let mut w = SectionWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            pos: 0,
            table: [(0, 0); SECTIONS],
            sums: [0; SECTIONS],
            current: None,
        };
        w.out.write_all(&[0u8; HEADER_LEN])?;
        w.pos = HEADER_LEN as u64;

        w.section(format::TERM_BYTES, |w| {
            sorted.iter().try_for_each(|(t, _)| w.put(t.as_bytes()))
        })?;
        w.section(format::TERM_OFFSETS, |w| {
            let mut off = 0u64;
            w.put(&off.to_le_bytes())?;
            for (t, _) in sorted {
                off += t.len() as u64;
                w.put(&off.to_le_bytes())?;
            }
            Ok(())
        })?;
        let total: u64 = self.doc_lens.iter().map(|&l| u64::from(l)).sum();
        let avgdl = if total == 0 {
            1.0
        } else {
            total as f64 / self.doc_lens.len() as f64
        };
        let Bm25Params { k1, b } = self.params;
        let part_of = |tf: u32, doc: u32| part(tf, self.doc_lens[doc as usize], k1, b, avgdl);
        // Postings before the term info, which needs each term's bound and length.
        let mut stored = Vec::with_capacity(sorted.len());
        w.section(format::POSTINGS, |w| {
            sorted.iter().try_for_each(|(_, id)| {
                let postings = self.terms[*id as usize].encode(part_of);
                stored.push((
                    postings.max_part,
                    postings.table.len() + postings.blocks.len(),
                ));
                w.put(&postings.table)?;
                w.put(&postings.blocks)
            })
        })?;
        w.section(format::TERM_INFO, |w| {
            let mut off = 0u64;
            for ((_, id), (max_part, len)) in sorted.iter().zip(&stored) {
                let t = &self.terms[*id as usize];
                w.put(&off.to_le_bytes())?;
                for v in [t.df, t.max_tf, t.min_dl, max_part.to_bits()] {
                    w.put(&v.to_le_bytes())?;
                }
                off += *len as u64;
            }
            Ok(())
        })?;
        w.section(format::DOC_LENS, |w| {
            self.doc_lens
                .iter()
                .try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;
        w.section(format::DOC_OFFSETS, |w| {
            self.doc_offsets
                .iter()
                .try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;
        w.section(format::ID_ORDER, |w| {
            id_order.iter().try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;
        w.section(format::ID_RANK, |w| {
            id_rank.iter().try_for_each(|v| w.put(&v.to_le_bytes()))
        })?;

        let header = Header {
            docs: self.doc_lens.len() as u64,
            terms: sorted.len() as u64,
            total_len: total,
            k1: self.params.k1,
            b: self.params.b,
            sections: w.table,
            checksums: w.sums,
            docs_checksum: self.docs_sum.clone().finish(),
        };
        let size = w.pos;
        let mut file = w.out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header.encode())?;
        file.sync_all()?;
        Ok(size)
    }
}

struct SectionWriter {
    out: BufWriter<File>,
    pos: u64,
    table: [(u64, u64); SECTIONS],
    sums: [u64; SECTIONS],
    /// The checksum of the section being written (None while padding).
    current: Option<Checksum>,
}

impl SectionWriter {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.pos += bytes.len() as u64;
        if let Some(sum) = &mut self.current {
            sum.update(bytes);
        }
        self.out.write_all(bytes)
    }

    /// Writes one 8-byte-aligned section and records where it lies.
    fn section(
        &mut self,
        number: usize,
        body: impl FnOnce(&mut Self) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let pad = (8 - self.pos % 8) % 8;
        self.put(&[0u8; 8][..pad as usize])?;
        let start = self.pos;
        self.current = Some(Checksum::default());
        body(self)?;
        self.table[number] = (start, self.pos - start);
        self.sums[number] = self.current.take().map_or(0, Checksum::finish);
        Ok(())
    }
}
