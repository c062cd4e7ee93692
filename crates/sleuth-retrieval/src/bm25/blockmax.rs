//! Block-max WAND (Ding & Suel, SIGIR 2011), the algorithm tantivy and PISA use for
//! disjunctions, kept beside MaxScore so the two can be compared on the same index.
//!
//! The cursors are kept sorted by their current document. The pivot is the first
//! cursor at which the terms' global bounds, summed in that order, could reach the
//! k-th score θ: no document before the pivot's can (it would match only terms whose
//! bounds sum below θ). Before decoding anything at the pivot document d, the bounds of
//! the blocks that would hold d (read from the skip tables without decoding, see
//! [`super::cursor::Cursor::block_bound`]) are summed; if even they fall below θ,
//! no document up to the end of the shortest of those blocks can enter the top k, and
//! one cursor jumps past it. Otherwise, if every cursor up to the pivot is at d, d is
//! scored; if not, one lagging cursor is moved to d.
//!
//! The pivot document never decreases (the cursors before it only move to it or past
//! it), so every block bound is read for a document at or after the last one asked
//! about, as the shallow position requires. Exactness: a document is skipped only when
//! a sum of true upper bounds of its possible contributions is surely below θ (with
//! the margin of [`below`]); a document at exactly θ is still scored, since it can win
//! the tie on its id. Scores are summed in query-term order as on every other path, so
//! the hits are bit-identical to the exhaustive path's.

use super::error::IndexResult;
use super::index::Bm25Index;
use super::search::{below, Hit, Term, TopK};

/// What one step of the loop does at the pivot.
enum Move {
    /// Score the pivot document (every cursor up to the pivot is on it).
    Score(u32),
    /// Move the cursor at this position of the order to this document.
    Advance(usize, u32),
    Done,
}

/// The position in `order` of the cursor with the largest bound among those whose
/// document is before `target` (the one whose move skips the most).
fn strongest_before(ts: &[Term], order: &[usize], target: u32) -> usize {
    order
        .iter()
        .enumerate()
        .filter(|(_, &i)| ts[i].cursor.doc() < target)
        .max_by(|a, b| ts[*a.1].bound.total_cmp(&ts[*b.1].bound))
        .map_or(0, |(p, _)| p)
}

/// The next move, given θ and the cursors sorted by document in `order`.
fn next_move(ts: &mut [Term], order: &[usize], theta: f32) -> Move {
    let mut acc = 0f64;
    let mut pivot = None;
    for (p, &i) in order.iter().enumerate() {
        if ts[i].cursor.doc() == u32::MAX {
            break;
        }
        acc += ts[i].bound;
        if !below(acc, theta) {
            pivot = Some(p);
            break;
        }
    }
    let Some(mut p) = pivot else {
        return Move::Done;
    };
    let d = ts[order[p]].cursor.doc();
    while p + 1 < order.len() && ts[order[p + 1]].cursor.doc() == d {
        p += 1;
    }
    let (mut block, mut next) = (0f64, u32::MAX);
    for &i in &order[..=p] {
        let (bound, last) = ts[i].block_bound(d);
        block += bound;
        next = next.min(last.saturating_add(1));
    }
    if below(block, theta) {
        if let Some(&j) = order.get(p + 1) {
            next = next.min(ts[j].cursor.doc());
        }
        if next == u32::MAX {
            return Move::Done;
        }
        return Move::Advance(strongest_before(ts, &order[..=p], next), next);
    }
    if ts[order[0]].cursor.doc() == d {
        Move::Score(d)
    } else {
        Move::Advance(strongest_before(ts, &order[..p], d), d)
    }
}

impl Bm25Index {
    /// Exact top-k by block-max WAND (see the module doc).
    pub(super) fn search_bmw(&self, terms: &[String], k: usize) -> IndexResult<Vec<Hit>> {
        if k == 0 || terms.is_empty() {
            return Ok(Vec::new());
        }
        let (numbers, mut ts): (Vec<u32>, Vec<Term>) = self.cursors(terms)?.into_iter().unzip();
        for t in &mut ts {
            t.cursor.step();
        }
        let n = self.num_docs();
        let mut order: Vec<usize> = (0..ts.len()).collect();
        let mut contrib = vec![0f32; terms.len()];
        let mut top = TopK::new(self, k);
        loop {
            order.sort_by_key(|&i| ts[i].cursor.doc());
            match next_move(&mut ts, &order, top.threshold()) {
                Move::Done => break,
                Move::Advance(p, target) => {
                    ts[order[p]].cursor.advance(target);
                }
                Move::Score(d) => {
                    if d >= n {
                        return Err(self.corrupt_postings(numbers[order[0]]));
                    }
                    for &i in &order {
                        let t = &mut ts[i];
                        if t.cursor.doc() != d {
                            break;
                        }
                        contrib[t.slot] = self.part(t.idf, t.cursor.tf(), d);
                        t.cursor.step();
                    }
                    let mut score = 0f32;
                    for c in &mut contrib {
                        score += *c;
                        *c = 0.0;
                    }
                    top.offer(d, score);
                }
            }
        }
        if let Some(i) = ts.iter().position(|t| t.cursor.corrupt) {
            return Err(self.corrupt_postings(numbers[i]));
        }
        Ok(top.into_hits())
    }
}
