//! A forward cursor over one term's postings, with block skipping and block maxima.
//!
//! A posting list is stored as blocks of [`BLOCK`] postings (the last block holds the
//! rest), each bit-packed at its own widths (see [`super::format`]); the cursor decodes
//! a whole block's documents into a buffer at once, and its tfs only when one is asked
//! for. A list longer than one block starts with a skip table: for each block, the last
//! document number in it, where its bytes end (u32 each, relative to the blocks) and the
//! block's largest tf / (tf + norm) under the build's k1 and b (f32, rounded up). Block
//! j's deltas start from block j-1's last document, so a jump to block j needs only
//! table entry j-1. `advance` uses the table to pass over whole blocks without decoding
//! them, which is what lets MaxScore probe a long list only at the few candidate
//! documents.
//!
//! Why fixed-width blocks rather than a varint per posting (format 4 and before): a
//! varint's length is only known once its bytes are read, so decoding is a chain of
//! dependent, unpredictable branches, which is where a search spent most of its time at
//! 5.23M documents; a packed block decodes as 128 independent shifts and masks.
//!
//! Why block maxima: a term's single bound is set by its best posting anywhere in the
//! list, which over millions of documents is close to the most any term can give; a
//! block's bound is usually far lower. [`Cursor::block_bound`] reads the bound of the
//! block that would hold a document without decoding anything (a "shallow" move), so
//! a search can rule a candidate out, or skip a whole block, before decoding it (as
//! tantivy's and PISA's block-max algorithms do).

use super::format::{packed_len, u32_at, unpack};

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
    blocks: &'a [u8],
    skips: &'a [u8],
    df: u32,
    /// The decoded block's number, its documents and (once asked for) its tfs − 1.
    block: u32,
    docs: [u32; BLOCK as usize],
    tfs: [u32; BLOCK as usize],
    /// Postings in the decoded block (0 before the first is decoded).
    len: usize,
    /// The current posting's position in the block.
    at: usize,
    /// Where the decoded block's packed tfs start, their width, whether they are in `tfs`.
    tfs_from: usize,
    tf_width: u8,
    tfs_ready: bool,
    /// Where the decoded block's bytes end (the next block's start).
    block_end: usize,
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
    /// A cursor over a term's stored bytes (skip table, then blocks), before its first
    /// posting; call [`Cursor::step`] to load it.
    pub fn new(bytes: &'a [u8], df: u32) -> Self {
        let table = skip_table_len(df).min(bytes.len());
        Cursor {
            blocks: &bytes[table..],
            skips: &bytes[..table],
            df,
            block: 0,
            docs: [0; BLOCK as usize],
            tfs: [0; BLOCK as usize],
            len: 0,
            at: 0,
            tfs_from: 0,
            tf_width: 0,
            tfs_ready: false,
            block_end: 0,
            done: df == 0,
            corrupt: table < skip_table_len(df),
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

    fn block_count(&self) -> u32 {
        self.df.div_ceil(BLOCK)
    }

    /// Table entry `b`'s last document and end offset.
    #[inline]
    fn entry(&self, b: u32) -> (u32, usize) {
        let at = SKIP_ENTRY * b as usize;
        (u32_at(self.skips, at), u32_at(self.skips, at + 4) as usize)
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
        let blocks = self.block_count();
        let mut b = self.shallow.max(self.block);
        while b + 1 < blocks && self.entry(b).0 < target {
            b += 1;
        }
        self.shallow = b;
        let at = SKIP_ENTRY * b as usize;
        let last = if b + 1 == blocks {
            u32::MAX
        } else {
            u32_at(self.skips, at)
        };
        (f32::from_bits(u32_at(self.skips, at + 8)), last)
    }

    /// The current document, or `u32::MAX` once exhausted.
    #[inline]
    pub fn doc(&self) -> u32 {
        if self.done {
            u32::MAX
        } else {
            self.docs[self.at]
        }
    }

    /// The current posting's tf (its block's tfs are decoded on the first ask).
    #[inline]
    pub fn tf(&mut self) -> u32 {
        if !self.tfs_ready {
            self.load_tfs();
        }
        self.tfs[self.at].wrapping_add(1)
    }

    #[cold]
    fn load_tfs(&mut self) {
        let run = self.blocks.get(self.tfs_from..).unwrap_or_default();
        if unpack(run, self.tf_width, &mut self.tfs[..self.len]).is_none() {
            self.tfs.fill(0);
            self.corrupt = true;
        }
        self.tfs_ready = true;
    }

    /// Where the current block's bytes end, relative to the blocks (for checking a
    /// skip table against the list).
    pub fn block_end(&self) -> usize {
        self.block_end
    }

    /// Whether the current posting is its block's last.
    pub fn at_block_end(&self) -> bool {
        self.at + 1 == self.len
    }

    /// Decodes block `b`, whose bytes start at `from` and whose deltas start from
    /// document `base`, and moves to its first posting; false if the bytes are short.
    fn load(&mut self, b: u32, from: usize, base: u32) -> bool {
        let n = (self.df - b * BLOCK).min(BLOCK) as usize;
        let (Some(&doc_width), Some(&tf_width)) =
            (self.blocks.get(from), self.blocks.get(from + 1))
        else {
            return self.fail();
        };
        let run = self.blocks.get(from + 2..).unwrap_or_default();
        if unpack(run, doc_width, &mut self.docs[..n]).is_none() {
            return self.fail();
        }
        let mut doc = base;
        for d in &mut self.docs[..n] {
            doc = doc.wrapping_add(*d);
            *d = doc;
        }
        self.tfs_from = from + 2 + packed_len(n, doc_width);
        self.tf_width = tf_width;
        self.tfs_ready = false;
        self.block_end = self.tfs_from + packed_len(n, tf_width);
        (self.block, self.len, self.at) = (b, n, 0);
        true
    }

    /// Moves to the next posting; false when the list is exhausted (or damaged).
    #[inline]
    pub fn step(&mut self) -> bool {
        if self.done {
            return false;
        }
        if self.at + 1 < self.len {
            self.at += 1;
            return true;
        }
        self.next_block()
    }

    /// Decodes the block after the current one (the first, before any).
    fn next_block(&mut self) -> bool {
        let (b, base) = if self.len == 0 {
            (0, 0)
        } else {
            (self.block + 1, self.docs[self.len - 1])
        };
        if b >= self.block_count() {
            self.done = true;
            return false;
        }
        self.load(b, self.block_end, base)
    }

    fn fail(&mut self) -> bool {
        self.corrupt = true;
        self.done = true;
        false
    }

    /// Calls `f(doc, tf)` for every posting from the current one through document
    /// `end`, a decoded block at a time, and stops on the first posting after `end` (or
    /// exhausted). What a search that scores a window of documents term by term reads.
    #[inline]
    pub fn drain_through(&mut self, end: u32, mut f: impl FnMut(u32, u32)) {
        while !self.done {
            if !self.tfs_ready {
                self.load_tfs();
            }
            let rest = &self.docs[self.at..self.len];
            let n = rest.partition_point(|&d| d <= end);
            for (&doc, &extra) in rest[..n].iter().zip(&self.tfs[self.at..self.at + n]) {
                f(doc, extra.wrapping_add(1));
            }
            if self.at + n < self.len {
                self.at += n;
                return;
            }
            self.at = self.len - 1;
            self.next_block();
        }
    }

    /// Moves to the first posting with document >= `target`; false if there is none.
    /// A target inside the decoded block (the common case for a probe) is found here,
    /// inlined into the search loop; others go through the skip table.
    #[inline]
    pub fn advance(&mut self, target: u32) -> bool {
        if !self.done && self.len > 0 && self.docs[self.len - 1] >= target {
            while self.docs[self.at] < target {
                self.at += 1;
            }
            return true;
        }
        self.advance_past_block(target)
    }

    /// [`Cursor::advance`] to a target past the decoded block (or before any).
    fn advance_past_block(&mut self, target: u32) -> bool {
        if self.done {
            return false;
        }
        if self.len > 0 && self.docs[self.at] >= target {
            return true;
        }
        if (self.len == 0 || self.docs[self.len - 1] < target) && !self.skips.is_empty() {
            // Past the decoded block: the first later block whose last document reaches
            // target, decoded straight from the table.
            let blocks = self.block_count();
            let mut b = if self.len == 0 { 0 } else { self.block + 1 };
            while b + 1 < blocks && self.entry(b).0 < target {
                b += 1;
            }
            if b >= blocks || self.entry(b).0 < target {
                self.done = true;
                return false;
            }
            let (from, base) = match b.checked_sub(1) {
                Some(prev) => {
                    let (last, end) = self.entry(prev);
                    (end, last)
                }
                None => (0, 0),
            };
            if !self.load(b, from, base) {
                return false;
            }
        } else if self.len == 0 && !self.step() {
            return false;
        }
        while self.docs[self.at] < target {
            if !self.step() {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm25::format::{encode_postings, round_up};

    /// The list as stored (table, then blocks), with each block's max the largest tf.
    fn encode(list: &[(u32, u32)]) -> Vec<u8> {
        let stored = encode_postings(list.iter().copied(), list.len() as u32, |tf, _| {
            f64::from(tf)
        });
        [stored.table, stored.blocks].concat()
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
            assert_eq!(
                c.block_bound(target),
                (round_up(f64::from(max)), last),
                "target {target}"
            );
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
