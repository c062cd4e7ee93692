//! Index integrity: checksums verified on open where cheap, everything by `check`.
//!
//! A damaged index rarely fails loudly: a flipped byte in the postings or the lengths
//! shifts scores, and results can look plausible while being wrong. Every byte of both
//! files is covered by a stored checksum (see [`super::format`]); opening verifies the
//! header, the document lengths (read in full on open anyway, and what every score
//! depends on) and any section or `docs.bin` of at most
//! [`OPEN_VERIFY_BYTES`](super::index::OPEN_VERIFY_BYTES), so a small index is fully
//! verified each time it is opened at the cost of a few milliseconds.
//! [`Bm25Index::check`] (`sleuth index check`) verifies every checksum, the zero padding
//! between sections, and then decodes the whole index: each posting list against its
//! df, max tf, skip table and score bounds (recomputed), every stored paragraph, the
//! term order and the id order.

use super::cursor::{skip_table_len, Cursor};
use super::error::{IndexError, IndexResult};
use super::format::{
    self, checksum, encode_postings, part, DOCS_FILE, HEADER_LEN, INDEX_FILE, SECTIONS,
};
use super::index::{Bm25Index, TermStats};
use super::source::id_cmp;

/// What a full check covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckReport {
    pub docs: u64,
    pub terms: u64,
    pub postings: u64,
    /// Bytes covered by a verified checksum, both files together.
    pub bytes: u64,
}

impl Bm25Index {
    fn index_damaged(&self, message: String) -> IndexError {
        IndexError::corrupt(
            self.dir().join(INDEX_FILE),
            format!("{message} (the file is damaged); rebuild the index"),
        )
    }

    fn verify_section(&self, number: usize) -> IndexResult<()> {
        if checksum(self.section(number)) == self.header.checksums[number] {
            Ok(())
        } else {
            Err(self.index_damaged(format!(
                "the {} section fails its checksum",
                format::SECTION_NAMES[number]
            )))
        }
    }

    fn verify_docs(&self) -> IndexResult<()> {
        if checksum(&self.docs) == self.header.docs_checksum {
            Ok(())
        } else {
            Err(IndexError::corrupt(
                self.dir().join(DOCS_FILE),
                "fails its checksum (the file is damaged); rebuild the index",
            ))
        }
    }

    /// The open-time verification: the document lengths, and whatever is at most
    /// `limit` bytes. (The header verified itself when it was decoded.)
    pub(super) fn verify_small(&self, limit: u64) -> IndexResult<()> {
        for number in 0..SECTIONS {
            let len = self.header.sections[number].1;
            if number == format::DOC_LENS || len <= limit {
                self.verify_section(number)?;
            }
        }
        if self.docs.len() as u64 <= limit {
            self.verify_docs()?;
        }
        Ok(())
    }

    /// Verifies every byte of the index and decodes all of it; the first problem found
    /// is the error.
    pub fn check(&self) -> IndexResult<CheckReport> {
        for number in 0..SECTIONS {
            self.verify_section(number)?;
        }
        self.verify_docs()?;
        self.check_layout()?;
        let postings = self.check_postings()?;
        self.check_terms()?;
        self.check_docs()?;
        Ok(CheckReport {
            docs: self.header.docs,
            terms: self.header.terms,
            postings,
            bytes: (self.index.len() + self.docs.len()) as u64,
        })
    }

    /// Between the header and the sections, and between sections, only zero padding
    /// (under 8 bytes); nothing after the last section.
    fn check_layout(&self) -> IndexResult<()> {
        let mut spans: Vec<(u64, u64)> = self.header.sections.to_vec();
        spans.sort_unstable();
        let mut end = HEADER_LEN as u64;
        for (off, len) in spans {
            if off < end || off - end >= 8 {
                return Err(self.index_damaged(format!(
                    "a section starts at {off}, expected {end} plus padding"
                )));
            }
            if self.index[end as usize..off as usize]
                .iter()
                .any(|&b| b != 0)
            {
                return Err(self.index_damaged(format!("nonzero padding at byte {end}")));
            }
            end = off + len;
        }
        if end != self.index.len() as u64 {
            return Err(self.index_damaged(format!(
                "{} bytes after the last section",
                self.index.len() as u64 - end
            )));
        }
        Ok(())
    }

    /// Each posting list decodes to exactly df increasing documents below N, with tf
    /// between 1 and the stored max tf, and its stored bytes are exactly what the
    /// builder writes for those postings: the skip table (last documents, block ends,
    /// and each block's largest part recomputed under the build's k1 and b), every
    /// block's widths (the least that hold its values), packing and zero padding, and
    /// nothing after the last block; the term's max part is the largest block's.
    fn check_postings(&self) -> IndexResult<u64> {
        let (k1, b, avgdl) = (self.header.k1, self.header.b, self.avgdl());
        let part_of = |tf: u32, doc: u32| part(tf, self.doc_len(doc), k1, b, avgdl);
        let mut total = 0u64;
        let mut list = Vec::new();
        for t in 0..self.num_terms() {
            let stats = self.term_stats(t);
            let bytes = self.postings_bytes(t)?;
            let bad = |what: &str| self.index_damaged(format!("postings of term {t}: {what}"));
            if bytes.len() < skip_table_len(stats.df) || stats.df == 0 {
                return Err(bad("shorter than their skip table, or empty"));
            }
            self.decode_list(bytes, stats, &mut list).map_err(bad)?;
            let stored = encode_postings(list.iter().copied(), stats.df, part_of);
            let (table, blocks) = bytes.split_at(stored.table.len());
            if table != stored.table {
                return Err(bad(
                    "the skip table (or a block's score bound) disagrees with the list",
                ));
            }
            if blocks != stored.blocks {
                return Err(bad(
                    "the blocks are not the packing of the postings they decode to",
                ));
            }
            if stored.max_part.to_bits() != stats.max_part.to_bits() {
                return Err(bad("the term's score bound disagrees with the list"));
            }
            total += u64::from(stats.df);
        }
        Ok(total)
    }

    /// Decodes one term's list into `list`, checking what decoding alone can: df
    /// postings, documents increasing and below N, tfs from 1 to the stored max tf.
    fn decode_list(
        &self,
        bytes: &[u8],
        stats: TermStats,
        list: &mut Vec<(u32, u32)>,
    ) -> Result<(), &'static str> {
        list.clear();
        let n = self.num_docs();
        let mut c = Cursor::new(bytes, stats.df);
        while c.step() {
            let (doc, tf) = (c.doc(), c.tf());
            if doc >= n || list.last().is_some_and(|&(prev, _)| doc <= prev) || tf == 0 {
                return Err("documents out of order or range");
            }
            list.push((doc, tf));
        }
        let max_tf = list.iter().map(|&(_, tf)| tf).max().unwrap_or(0);
        if c.corrupt || list.len() != stats.df as usize || max_tf != stats.max_tf {
            return Err("df or max tf disagrees with the list");
        }
        Ok(())
    }

    /// Terms are valid UTF-8, strictly ascending.
    fn check_terms(&self) -> IndexResult<()> {
        let offsets = self.section(format::TERM_OFFSETS);
        let bytes = self.section(format::TERM_BYTES);
        let mut prev: Option<&[u8]> = None;
        for t in 0..self.num_terms() as usize {
            let (a, b) = (
                format::u64_at(offsets, 8 * t) as usize,
                format::u64_at(offsets, 8 * t + 8) as usize,
            );
            let term = bytes
                .get(a..b)
                .filter(|s| std::str::from_utf8(s).is_ok())
                .ok_or_else(|| self.index_damaged(format!("term {t} is not valid text")))?;
            if prev.is_some_and(|p| p >= term) {
                return Err(self.index_damaged(format!("term {t} is out of order")));
            }
            prev = Some(term);
        }
        Ok(())
    }

    /// Every stored paragraph parses; the id order is sorted and its inverse is the
    /// rank table.
    fn check_docs(&self) -> IndexResult<()> {
        let n = self.num_docs();
        for doc in 0..n {
            self.doc(doc)?;
        }
        let mut prev: Option<String> = None;
        for rank in 0..n {
            let doc = self.u32_in(format::ID_ORDER, rank as usize);
            if doc >= n || self.id_rank(doc) != rank {
                return Err(self.index_damaged(format!("id order entry {rank} is wrong")));
            }
            let id = self.doc_id(doc)?;
            if prev
                .as_deref()
                .is_some_and(|p| id_cmp(p, &id) != std::cmp::Ordering::Less)
            {
                return Err(self.index_damaged(format!("id order is not sorted at {rank}")));
            }
            prev = Some(id);
        }
        Ok(())
    }
}
