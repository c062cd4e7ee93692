//! A forward cursor over one term's postings, with block skipping and block maxima.
//!
//! A posting list longer than [`BLOCK`] starts with a skip table: for each block of
//! `BLOCK` postings, the last document number in it, where its bytes end (u32 each,
//! relative to the data after the table) and the block's largest tf / (tf + norm) under
//! the build's k1 and b (f32, rounded up). The delta chain runs on across blocks, so a
//! jump to block j restarts decoding from block j-1's last document and end offset.
//! `advance` uses the table to pass over whole blocks without decoding them, which is
//! what lets MaxScore probe a long list only at the few candidate documents.
//!
//! Why block maxima: a term's single bound is set by its best posting anywhere in the
//! list, which over millions of documents is close to the most any term can give; a
//! block's bound is usually far lower. [`Cursor::block_bound`] reads the bound of the
//! block that would hold a document without decoding anything (a "shallow" move), so
//! a search can rule a candidate out, or skip a whole block, before decoding it (as
//! tantivy's and PISA's block-max algorithms do).

use super::format::{read_varint, u32_at};

/// Postings per block.
pub const BLOCK: u32 = 128;

/// Bytes per skip-table entry: last document, end offset, block max part.
pub const SKIP_ENTRY: usize = 12;

/// Length in bytes of a term's skip table, given its df.
pub fn skip_table_len(df: u32) -> usize {
    if df > BLOCK {
        df.div_ceil(BLOCK) as usize * SKIP_ENTRY
    } else {
        0
    }
}

pub struct Cursor<'a> {
    data: &'a [u8],
    skips: &'a [u8],
    df: u32,
    /// Postings consumed so far (the current one included).
    read: u32,
    pos: usize,
    doc: u32,
    tf: u32,
    done: bool,
    pub corrupt: bool,
    /// The block [`Cursor::block_bound`] last looked at.
    shallow: u32,
    /// The term's max part, the bound of a list without a table.
    max_part: f32,
    /// Whether the table's block maxima hold (false when scoring with other k1, b).
    block_maxima: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor over a term's stored bytes (skip table, then data), before its first
    /// posting; call [`Cursor::step`] to load it.
    pub fn new(bytes: &'a [u8], df: u32) -> Self {
        let table = skip_table_len(df).min(bytes.len());
        let mut c = Self::with_parts(&bytes[table..], &bytes[..table], df);
        c.corrupt = table < skip_table_len(df);
        c
    }

    /// A cursor over separately held data and skip table (the builder's view).
    pub fn with_parts(data: &'a [u8], skips: &'a [u8], df: u32) -> Self {
        Cursor {
            data,
            skips,
            df,
            read: 0,
            pos: 0,
            doc: 0,
            tf: 0,
            done: df == 0,
            corrupt: false,
            shallow: 0,
            max_part: f32::INFINITY,
            block_maxima: false,
        }
    }

    /// Sets the term's bound and whether the stored block maxima may be used.
    pub fn set_bounds(&mut self, max_part: f32, block_maxima: bool) {
        self.max_part = max_part;
        self.block_maxima = block_maxima;
    }

    /// The bound (max tf / (tf + norm)) of the block that would hold `target`, never
    /// one before the current posting's, and the last document that bound covers
    /// (`u32::MAX` for the list's last block: past its end the term adds nothing).
    /// Moves only the shallow position; nothing is decoded.
    #[inline]
    pub fn block_bound(&mut self, target: u32) -> (f32, u32) {
        if self.done {
            return (0.0, u32::MAX);
        }
        if self.skips.is_empty() || !self.block_maxima {
            return (self.max_part, u32::MAX);
        }
        let blocks = (self.skips.len() / SKIP_ENTRY) as u32;
        let mut b = self.shallow.max(self.read.saturating_sub(1) / BLOCK);
        while b + 1 < blocks && u32_at(self.skips, SKIP_ENTRY * b as usize) < target {
            b += 1;
        }
        self.shallow = b;
        let entry = SKIP_ENTRY * b as usize;
        let last = if b + 1 == blocks {
            u32::MAX
        } else {
            u32_at(self.skips, entry)
        };
        (f32::from_bits(u32_at(self.skips, entry + 8)), last)
    }

    /// The current document, or `u32::MAX` once exhausted.
    #[inline]
    pub fn doc(&self) -> u32 {
        if self.done {
            u32::MAX
        } else {
            self.doc
        }
    }

    #[inline]
    pub fn tf(&self) -> u32 {
        self.tf
    }

    /// Bytes of posting data consumed so far (for checking a skip table).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Moves to the next posting; false when the list is exhausted (or damaged).
    #[inline]
    pub fn step(&mut self) -> bool {
        if self.done || self.read == self.df {
            self.done = true;
            return false;
        }
        let Some(code) = read_varint(self.data, &mut self.pos) else {
            return self.fail();
        };
        self.tf = if code & 1 == 1 {
            1
        } else {
            match read_varint(self.data, &mut self.pos) {
                Some(tf) => tf as u32,
                None => return self.fail(),
            }
        };
        self.doc = self.doc.wrapping_add((code >> 1) as u32);
        self.read += 1;
        true
    }

    fn fail(&mut self) -> bool {
        self.corrupt = true;
        self.done = true;
        false
    }

    /// Moves to the first posting with document >= `target`; false if there is none.
    pub fn advance(&mut self, target: u32) -> bool {
        if self.done {
            return false;
        }
        if self.read > 0 && self.doc >= target {
            return true;
        }
        if !self.skips.is_empty() {
            // The block holding the current position, then skip blocks ending before target.
            let blocks = (self.skips.len() / SKIP_ENTRY) as u32;
            let current = self.read.saturating_sub(1) / BLOCK;
            let mut b = current;
            while b + 1 < blocks && u32_at(self.skips, SKIP_ENTRY * b as usize) < target {
                b += 1;
            }
            if b > current || (self.read == 0 && b > 0) {
                let prev = SKIP_ENTRY * (b as usize - 1);
                self.doc = u32_at(self.skips, prev);
                self.pos = u32_at(self.skips, prev + 4) as usize;
                self.read = b * BLOCK;
            }
        }
        while self.step() {
            if self.doc >= target {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm25::format::push_posting;

    /// The list with a table whose block max is the block's largest tf.
    fn encode(list: &[(u32, u32)]) -> Vec<u8> {
        let mut data = Vec::new();
        let mut skips = Vec::new();
        let (mut prev, mut block_max) = (0, 0);
        for (i, &(doc, tf)) in list.iter().enumerate() {
            push_posting(&mut data, prev, doc, tf);
            prev = doc;
            block_max = block_max.max(tf);
            if (i as u32 + 1).is_multiple_of(BLOCK) || i + 1 == list.len() {
                skips.extend_from_slice(&doc.to_le_bytes());
                skips.extend_from_slice(&(data.len() as u32).to_le_bytes());
                skips.extend_from_slice(&(block_max as f32).to_bits().to_le_bytes());
                block_max = 0;
            }
        }
        if list.len() as u32 > BLOCK {
            skips.extend_from_slice(&data);
            skips
        } else {
            data
        }
    }

    #[test]
    fn next_and_advance_agree_with_the_list() {
        let list: Vec<(u32, u32)> = (0..1000u32).map(|i| (i * 7 + (i % 3), 1 + i % 4)).collect();
        let bytes = encode(&list);
        let mut c = Cursor::new(&bytes, list.len() as u32);
        let mut seen = Vec::new();
        while c.step() {
            seen.push((c.doc(), c.tf()));
        }
        assert_eq!(seen, list);
        for target in [0, 1, 6, 7, 500, 896, 897, 3000, 6990, 6993, 7001] {
            let mut c = Cursor::new(&bytes, list.len() as u32);
            let expected = list.iter().find(|(d, _)| *d >= target);
            assert_eq!(c.advance(target), expected.is_some(), "target {target}");
            if let Some(&(d, tf)) = expected {
                assert_eq!((c.doc(), c.tf()), (d, tf), "target {target}");
            }
        }
        // Successive advances, including ones behind the current position.
        let mut c = Cursor::new(&bytes, list.len() as u32);
        let mut at = 0u32;
        for target in [10, 5, 2000, 2001, 4500, 100, 6999] {
            let t = target.max(at);
            let expected = list.iter().find(|(d, _)| *d >= t).map_or(u32::MAX, |p| p.0);
            c.advance(target);
            assert_eq!(c.doc(), expected, "target {target}");
            at = expected;
        }
        assert!(!c.corrupt);
    }

    #[test]
    fn block_bounds_are_the_blocks_and_move_only_forward() {
        let list: Vec<(u32, u32)> = (0..1000u32).map(|i| (i * 3, 1 + i / 100)).collect();
        let bytes = encode(&list);
        let mut c = Cursor::new(&bytes, list.len() as u32);
        c.set_bounds(99.0, true);
        // Block j holds postings 128j.., docs 384j..; tf rises by one every 100 postings.
        // The block that would hold a target is that of the first doc at or after it.
        let block_of = |doc: u32| (doc.div_ceil(3) / BLOCK) as usize;
        for target in [0, 383, 384, 1000, 2000, 2999] {
            let b = block_of(target);
            let max = list[b * 128..((b + 1) * 128).min(1000)]
                .iter()
                .map(|p| p.1)
                .max()
                .unwrap();
            let last = if b == 7 {
                u32::MAX
            } else {
                list[b * 128 + 127].0
            };
            assert_eq!(c.block_bound(target), (max as f32, last), "target {target}");
        }
        // Never behind: an earlier target keeps the block reached.
        assert_eq!(c.block_bound(0).1, u32::MAX);
        // Without block maxima (other k1, b), the term bound over the whole list.
        let mut plain = Cursor::new(&bytes, list.len() as u32);
        plain.set_bounds(99.0, false);
        assert_eq!(plain.block_bound(500), (99.0, u32::MAX));
        // Advancing past blocks moves the shallow position with it.
        let mut c = Cursor::new(&bytes, list.len() as u32);
        c.set_bounds(99.0, true);
        assert!(c.advance(1500));
        assert_eq!(c.block_bound(0).1, list[3 * 128 + 127].0);
    }
}
