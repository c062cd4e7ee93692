//! The on-disk format: two little-endian files in the index directory.
//!
//! `index.bin` = a 512-byte header (magic, format version, counts, k1, b, a table of
//! section offsets/lengths, a checksum per section, the checksum of `docs.bin`, and
//! the header's own checksum), then 8-byte-aligned sections (zero padding between):
//!
//! | section       | contents                                                        |
//! |---------------|-----------------------------------------------------------------|
//! | term_bytes    | the terms (UTF-8), sorted bytewise, concatenated                 |
//! | term_offsets  | u64 x (terms + 1): where each term starts in term_bytes          |
//! | term_info     | per term: postings offset u64, df u32, max tf u32, min dl u32, max part f32 |
//! | postings      | per term: a skip table if df > 128 (see `cursor`: per block its last doc u32, end offset u32, max part f32), then the blocks (below) |
//! | doc_lens      | u32 x docs: exact analyzed length (title + text)                 |
//! | doc_offsets   | u64 x (docs + 1): where each stored paragraph starts in docs.bin |
//! | id_order      | u32 x docs: document numbers sorted by external id               |
//! | id_rank       | u32 x docs: each document's position in id_order (tie-breaking)  |
//!
//! Postings come in blocks of 128 (the last block of a list holds the rest): a byte
//! holding the doc-delta width w_d, a byte holding the tf width w_t, then the block's
//! document deltas bit-packed at w_d bits each, then its tf − 1 at w_t bits each, each
//! run padded with zero bits to a whole byte. Value i of a run is bits i·w .. (i+1)·w
//! of it, bit j being bit j % 8 of byte j / 8 (as in tantivy's and PISA's bit-packed
//! blocks; see [`pack`]). A delta is the document minus the one before it, the list's
//! first counting from 0, so block j decodes from block j-1's last document alone (in
//! the skip table). Each width is the least that holds the block's largest value, so a
//! list has exactly one encoding, which `check` compares byte for byte.
//!
//! `docs.bin` = magic + version, then per document: id, title, sentence count, sentences
//! (each a u32 length + UTF-8 bytes).
//!
//! "max part" is the largest tf / (tf + k1 * (1 - b + b * dl / avgdl)) over the term's
//! postings under the build's k1 and b (rounded up): times idf, the most the term can add
//! to any score, which MaxScore needs. Each skip-table entry holds the same maximum over
//! its block alone, for block-max search; `check` recomputes both.
//!
//! Document lengths are exact u32 counts, not Lucene's lossy one-byte `SmallFloat` norm:
//! scores follow the BM25 formula exactly, which can differ from Lucene's by the norm's
//! rounding (at most a few percent of the length term) and so reorder near-ties.
//! Both files are memory-mapped on open, so opening costs no parse of the postings.
//!
//! Checksums (format 3): the first 8 bytes of SHA-256 of each section, of the whole of
//! `docs.bin`, and of the header with its own checksum field zeroed. They are there to
//! catch damage (a flipped bit, a bad copy), not tampering: whoever can rewrite the
//! index can rewrite its checksums. SHA-256 because the crate already has it and it is
//! fast enough (hardware-accelerated where the CPU offers it); 64 bits make an
//! undetected random change vanishingly unlikely. Opening verifies the header and the
//! small sections; `Bm25Index::check` verifies every byte.

use super::cursor::{skip_table_len, BLOCK};
use super::error::{IndexError, IndexResult};
use sha2::{Digest, Sha256};
use std::path::Path;

pub const INDEX_FILE: &str = "index.bin";
pub const DOCS_FILE: &str = "docs.bin";
pub const INDEX_MAGIC: &[u8; 8] = b"SLTHBM25";
pub const DOCS_MAGIC: &[u8; 8] = b"SLTHDOCS";
/// 3 added checksums (and the longer header that holds them); 4 added each block's
/// largest part to the skip tables (12-byte entries), for block-max search; 5 replaced
/// the varint per posting with bit-packed blocks, for faster decoding.
pub const VERSION: u32 = 5;
pub const HEADER_LEN: usize = 512;
pub const TERM_INFO_LEN: usize = 24;

/// Section numbers in the header's table.
pub const TERM_BYTES: usize = 0;
pub const TERM_OFFSETS: usize = 1;
pub const TERM_INFO: usize = 2;
pub const POSTINGS: usize = 3;
pub const DOC_LENS: usize = 4;
pub const DOC_OFFSETS: usize = 5;
pub const ID_ORDER: usize = 6;
pub const ID_RANK: usize = 7;
pub const SECTIONS: usize = 8;

/// Section names, for messages.
pub const SECTION_NAMES: [&str; SECTIONS] = [
    "term_bytes",
    "term_offsets",
    "term_info",
    "postings",
    "doc_lens",
    "doc_offsets",
    "id_order",
    "id_rank",
];

/// Byte offsets of the header fields after the section table.
const CHECKSUMS_AT: usize = 184;
const DOCS_CHECKSUM_AT: usize = CHECKSUMS_AT + 8 * SECTIONS;
const HEADER_CHECKSUM_AT: usize = DOCS_CHECKSUM_AT + 8;

/// The fixed header of `index.bin`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    pub docs: u64,
    pub terms: u64,
    pub total_len: u64,
    pub k1: f64,
    pub b: f64,
    /// (offset, length) of each section, in bytes from the start of the file.
    pub sections: [(u64, u64); SECTIONS],
    /// [`checksum`] of each section's bytes.
    pub checksums: [u64; SECTIONS],
    /// [`checksum`] of the whole of `docs.bin`.
    pub docs_checksum: u64,
}

impl Header {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN);
        out.extend_from_slice(INDEX_MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for v in [self.docs, self.terms, self.total_len] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.k1.to_le_bytes());
        out.extend_from_slice(&self.b.to_le_bytes());
        for (off, len) in self.sections {
            out.extend_from_slice(&off.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        debug_assert_eq!(out.len(), CHECKSUMS_AT);
        for sum in self.checksums {
            out.extend_from_slice(&sum.to_le_bytes());
        }
        out.extend_from_slice(&self.docs_checksum.to_le_bytes());
        out.resize(HEADER_LEN, 0);
        // Computed with its own field still zero, as `decode` recomputes it.
        let own = checksum(&out);
        out[HEADER_CHECKSUM_AT..HEADER_CHECKSUM_AT + 8].copy_from_slice(&own.to_le_bytes());
        out
    }

    pub fn decode(bytes: &[u8], path: &Path) -> IndexResult<Header> {
        // The version first, so an older index (shorter header) is named as such.
        if bytes.len() < 12 || &bytes[..8] != INDEX_MAGIC {
            return Err(IndexError::corrupt(
                path,
                "missing header (wrong file type or truncated)",
            ));
        }
        let version = u32_at(bytes, 8);
        if version < VERSION {
            return Err(IndexError::corrupt(
                path,
                format!("format version {version}, written by an older sleuth (this one reads version {VERSION}, which stores postings in bit-packed blocks for faster search); rebuild it with `sleuth index build`"),
            ));
        }
        if version > VERSION {
            return Err(IndexError::corrupt(
                path,
                format!("format version {version} is not one this build reads (version {VERSION}): a newer sleuth wrote it, or the header is damaged"),
            ));
        }
        if bytes.len() < HEADER_LEN {
            return Err(IndexError::corrupt(path, "truncated header"));
        }
        let mut header = bytes[..HEADER_LEN].to_vec();
        let stored = u64_at(&header, HEADER_CHECKSUM_AT);
        header[HEADER_CHECKSUM_AT..HEADER_CHECKSUM_AT + 8].fill(0);
        if checksum(&header) != stored {
            return Err(IndexError::corrupt(
                path,
                "the header fails its checksum (the file is damaged); rebuild the index",
            ));
        }
        let mut sections = [(0u64, 0u64); SECTIONS];
        for (i, s) in sections.iter_mut().enumerate() {
            *s = (u64_at(bytes, 56 + 16 * i), u64_at(bytes, 64 + 16 * i));
        }
        let mut checksums = [0u64; SECTIONS];
        for (i, sum) in checksums.iter_mut().enumerate() {
            *sum = u64_at(bytes, CHECKSUMS_AT + 8 * i);
        }
        Ok(Header {
            docs: u64_at(bytes, 16),
            terms: u64_at(bytes, 24),
            total_len: u64_at(bytes, 32),
            k1: f64::from_bits(u64_at(bytes, 40)),
            b: f64::from_bits(u64_at(bytes, 48)),
            sections,
            checksums,
            docs_checksum: u64_at(bytes, DOCS_CHECKSUM_AT),
        })
    }
}

/// An incremental [`checksum`], for data written in pieces.
#[derive(Clone, Default)]
pub struct Checksum(Sha256);

impl Checksum {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    pub fn finish(self) -> u64 {
        let digest = self.0.finalize();
        u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
    }
}

/// The checksum the format stores: the first 8 bytes of SHA-256, little-endian.
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut c = Checksum::default();
    c.update(bytes);
    c.finish()
}

/// One posting's tf / (tf + k1 * (1 - b + b * dl / avgdl)), the part of its score
/// before idf: what the stored bounds are maxima of (the builder and `check` share it,
/// so a check recomputes the stored bits exactly).
#[inline]
pub fn part(tf: u32, dl: u32, k1: f64, b: f64, avgdl: f64) -> f64 {
    let tf = f64::from(tf);
    tf / (tf + k1 * (1.0 - b + b * f64::from(dl) / avgdl))
}

/// A bound rounded up, so that f32 scoring can never exceed it.
pub fn round_up(bound: f64) -> f32 {
    (bound * (1.0 + 1e-6)) as f32
}

pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Appends `v` as a varint (7 bits a byte, low first): the builder's in-memory form of
/// a posting list, compact while the corpus streams in; the file holds packed blocks.
pub fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes one varint at `*pos`, advancing it; `None` when the bytes run out.
#[inline]
pub fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Appends one posting (document `doc` after `prev`, frequency `tf`) to a builder's
/// in-memory list: varint((doc delta << 1) | tf==1), then varint(tf) if tf > 1.
pub fn push_posting(out: &mut Vec<u8>, prev: u32, doc: u32, tf: u32) {
    let delta = u64::from(doc - prev);
    push_varint(out, (delta << 1) | u64::from(tf == 1));
    if tf != 1 {
        push_varint(out, u64::from(tf));
    }
}

/// The (document, tf) pairs of a list written by [`push_posting`]; stops early at
/// damaged bytes (the builder's own memory, so only a bug could cause that).
pub fn varint_postings(bytes: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    let (mut pos, mut doc) = (0usize, 0u32);
    std::iter::from_fn(move || {
        let code = read_varint(bytes, &mut pos)?;
        let tf = if code & 1 == 1 {
            1
        } else {
            read_varint(bytes, &mut pos)? as u32
        };
        doc = doc.wrapping_add((code >> 1) as u32);
        Some((doc, tf))
    })
}

/// The bits needed to hold `v` (0 for 0).
fn bit_width(v: u32) -> u8 {
    (u32::BITS - v.leading_zeros()) as u8
}

/// Bytes taken by `n` values packed at `width` bits each.
#[inline]
pub fn packed_len(n: usize, width: u8) -> usize {
    (n * usize::from(width)).div_ceil(8)
}

/// Appends `values` at `width` bits each: value i is bits i·width.. of the run, bit j of
/// the run being bit j % 8 of byte j / 8; the last byte is padded with zero bits.
pub fn pack(out: &mut Vec<u8>, values: &[u32], width: u8) {
    let (mut acc, mut held) = (0u64, 0u32);
    for &v in values {
        debug_assert!(bit_width(v) <= width);
        acc |= u64::from(v) << held;
        held += u32::from(width);
        while held >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            held -= 8;
        }
    }
    if held > 0 {
        out.push(acc as u8);
    }
}

/// Fills `out` with values packed by [`pack`] at the front of `bytes`; `None` when the
/// width is over 32 or `bytes` is too short. Each value is one unaligned 8-byte load
/// and a shift (a value of up to 32 bits starting anywhere in a byte spans at most 5
/// bytes), so a block decodes with no branch per value but the bounds test.
#[inline]
pub fn unpack(bytes: &[u8], width: u8, out: &mut [u32]) -> Option<()> {
    let w = usize::from(width);
    if w > 32 || bytes.len() < packed_len(out.len(), width) {
        return None;
    }
    if w == 0 {
        out.fill(0);
        return Some(());
    }
    let mask = (1u64 << w) - 1;
    for (i, v) in out.iter_mut().enumerate() {
        let bit = i * w;
        let at = bit / 8;
        let word = match bytes.get(at..at + 8) {
            Some(eight) => u64::from_le_bytes(eight.try_into().expect("8 bytes")),
            None => word_at_end(bytes, at),
        };
        *v = ((word >> (bit % 8)) & mask) as u32;
    }
    Some(())
}

/// The bytes from `at` to the end (fewer than 8), zero-extended to a word.
#[cold]
fn word_at_end(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    let rest = &bytes[at.min(bytes.len())..];
    word[..rest.len().min(8)].copy_from_slice(&rest[..rest.len().min(8)]);
    u64::from_le_bytes(word)
}

/// Appends one block of postings (at most [`BLOCK`], documents ascending after `base`):
/// the doc-delta width and the tf width (a byte each), the deltas packed, then tf − 1
/// packed (most tfs are 1, so that run is often empty).
pub fn push_block(out: &mut Vec<u8>, base: u32, docs: &[u32], tfs: &[u32]) {
    let mut deltas = [0u32; BLOCK as usize];
    let mut prev = base;
    for (delta, &doc) in deltas.iter_mut().zip(docs) {
        *delta = doc - prev;
        prev = doc;
    }
    let mut extra = [0u32; BLOCK as usize];
    for (e, &tf) in extra.iter_mut().zip(tfs) {
        *e = tf - 1;
    }
    let (deltas, extra) = (&deltas[..docs.len()], &extra[..tfs.len()]);
    let doc_width = bit_width(deltas.iter().copied().max().unwrap_or(0));
    let tf_width = bit_width(extra.iter().copied().max().unwrap_or(0));
    out.push(doc_width);
    out.push(tf_width);
    pack(out, deltas, doc_width);
    pack(out, extra, tf_width);
}

/// A term's postings as stored (see the module doc): the skip table (empty when the
/// list is one block), the packed blocks, and the largest part over the list.
pub struct EncodedPostings {
    pub table: Vec<u8>,
    pub blocks: Vec<u8>,
    pub max_part: f32,
}

/// Encodes ascending (document, tf) pairs, `df` of them, into the stored form;
/// `part_of(tf, doc)` gives each posting's part, for the block and term bounds. The
/// builder writes this and `check` compares the stored bytes with it.
pub fn encode_postings(
    postings: impl IntoIterator<Item = (u32, u32)>,
    df: u32,
    part_of: impl Fn(u32, u32) -> f64,
) -> EncodedPostings {
    let mut out = EncodedPostings {
        table: Vec::with_capacity(skip_table_len(df)),
        blocks: Vec::new(),
        max_part: 0.0,
    };
    let (mut docs, mut tfs) = (Vec::with_capacity(BLOCK as usize), Vec::new());
    let (mut base, mut block_best) = (0u32, 0f64);
    let mut flush = |docs: &mut Vec<u32>, tfs: &mut Vec<u32>, block_best: &mut f64| {
        push_block(&mut out.blocks, base, docs, tfs);
        let last = *docs.last().expect("a block is never empty");
        let bound = round_up(*block_best);
        if df > BLOCK {
            out.table.extend_from_slice(&last.to_le_bytes());
            out.table
                .extend_from_slice(&(out.blocks.len() as u32).to_le_bytes());
            out.table.extend_from_slice(&bound.to_bits().to_le_bytes());
        }
        out.max_part = out.max_part.max(bound);
        base = last;
        docs.clear();
        tfs.clear();
        *block_best = 0.0;
    };
    for (doc, tf) in postings {
        block_best = block_best.max(part_of(tf, doc));
        docs.push(doc);
        tfs.push(tf);
        if docs.len() == BLOCK as usize {
            flush(&mut docs, &mut tfs, &mut block_best);
        }
    }
    if !docs.is_empty() {
        flush(&mut docs, &mut tfs, &mut block_best);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_at_every_width() {
        for width in 0..=32u8 {
            let mask = if width == 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            for n in [1usize, 5, 127, 128] {
                let values: Vec<u32> = (0..n as u32)
                    .map(|i| i.wrapping_mul(2_654_435_761) & mask)
                    .collect();
                let mut bytes = Vec::new();
                pack(&mut bytes, &values, width);
                assert_eq!(bytes.len(), packed_len(n, width));
                let mut got = vec![0u32; n];
                unpack(&bytes, width, &mut got).unwrap();
                assert_eq!(got, values, "width {width}, {n} values");
                if !bytes.is_empty() {
                    assert!(unpack(&bytes[..bytes.len() - 1], width, &mut got).is_none());
                }
            }
        }
        assert!(unpack(&[0; 64], 33, &mut [0; 4]).is_none());
    }

    #[test]
    fn postings_round_trip_through_blocks() {
        use crate::bm25::cursor::Cursor;
        // One short list, and one over several blocks with a partial last block.
        let short = vec![(0u32, 1u32), (3, 2), (4, 1), (1_000_000, 300)];
        let long: Vec<(u32, u32)> = (0..300u32).map(|i| (i * i + 5, 1 + i % 7)).collect();
        for list in [short, long] {
            let df = list.len() as u32;
            let mut varints = Vec::new();
            let mut prev = 0;
            for &(doc, tf) in &list {
                push_posting(&mut varints, prev, doc, tf);
                prev = doc;
            }
            assert_eq!(varint_postings(&varints).collect::<Vec<_>>(), list);
            let stored = encode_postings(list.iter().copied(), df, |tf, _| f64::from(tf));
            let bytes = [stored.table, stored.blocks].concat();
            let mut c = Cursor::new(&bytes, df);
            let mut got = Vec::new();
            while c.step() {
                got.push((c.doc(), c.tf()));
            }
            assert_eq!(got, list);
            assert!(!c.corrupt);
            let mut truncated = Cursor::new(&bytes[..bytes.len() - 1], df);
            while truncated.step() {
                truncated.tf();
            }
            assert!(truncated.corrupt);
        }
    }

    #[test]
    fn header_round_trip() {
        let h = Header {
            docs: 7,
            terms: 9,
            total_len: 70,
            k1: 0.9,
            b: 0.4,
            sections: [(512, 8); SECTIONS],
            checksums: [1, 2, 3, 4, 5, 6, 7, 8],
            docs_checksum: 9,
        };
        let bytes = h.encode();
        assert_eq!(bytes.len(), HEADER_LEN);
        assert_eq!(Header::decode(&bytes, Path::new("x")).unwrap(), h);
    }

    #[test]
    fn any_flipped_header_bit_is_refused() {
        let h = Header {
            docs: 7,
            terms: 9,
            total_len: 70,
            k1: 0.9,
            b: 0.4,
            sections: [(512, 8); SECTIONS],
            checksums: [0; SECTIONS],
            docs_checksum: 0,
        };
        let good = h.encode();
        for byte in 0..HEADER_LEN {
            let mut bad = good.clone();
            bad[byte] ^= 1 << (byte % 8);
            assert!(Header::decode(&bad, Path::new("x")).is_err(), "byte {byte}");
        }
    }

    #[test]
    fn an_older_format_asks_for_a_rebuild() {
        // A version-2 header was 256 bytes; an index that small still gets the message.
        let mut old = vec![0u8; 256];
        old[..8].copy_from_slice(INDEX_MAGIC);
        old[8..12].copy_from_slice(&2u32.to_le_bytes());
        let e = Header::decode(&old, Path::new("x"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("format version 2") && e.contains("rebuild it with `sleuth index build`"),
            "{e}"
        );
    }
}
