//! A forward cursor over one term's postings, with block skipping.
//!
//! A posting list longer than [`BLOCK`] starts with a skip table: for each block of
//! `BLOCK` postings, the last document number in it and where its bytes end (u32 each,
//! relative to the data after the table). The delta chain runs on across blocks, so a
//! jump to block j restarts decoding from block j-1's last document and end offset.
//! `advance` uses the table to pass over whole blocks without decoding them, which is
//! what lets MaxScore probe a long list only at the few candidate documents.

use super::format::{read_varint, u32_at};

/// Postings per block.
pub const BLOCK: u32 = 128;

/// Length in bytes of a term's skip table, given its df.
pub fn skip_table_len(df: u32) -> usize {
    if df > BLOCK {
        df.div_ceil(BLOCK) as usize * 8
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
        }
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
            let blocks = (self.skips.len() / 8) as u32;
            let current = self.read.saturating_sub(1) / BLOCK;
            let mut b = current;
            while b + 1 < blocks && u32_at(self.skips, 8 * b as usize) < target {
                b += 1;
            }
            if b > current || (self.read == 0 && b > 0) {
                let prev = 8 * (b as usize - 1);
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
    use crate::retrieval::bm25::format::push_posting;

    fn encode(list: &[(u32, u32)]) -> Vec<u8> {
        let mut data = Vec::new();
        let mut skips = Vec::new();
        let mut prev = 0;
        for (i, &(doc, tf)) in list.iter().enumerate() {
            push_posting(&mut data, prev, doc, tf);
            prev = doc;
            if (i as u32 + 1).is_multiple_of(BLOCK) || i + 1 == list.len() {
                skips.extend_from_slice(&doc.to_le_bytes());
                skips.extend_from_slice(&(data.len() as u32).to_le_bytes());
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
}
