//! Exact top-k search.
//!
//! The default path is MaxScore (Turtle & Flood): query terms are ordered by the most
//! each can add to a score (idf times the largest tf / (tf + norm) of its postings);
//! once the k-th best score θ exceeds the sum of the smallest bounds, those terms become
//! "non-essential": a document found only in them cannot reach θ, so candidates come
//! from the essential terms' lists alone, and the long non-essential lists are only
//! probed (with block skips) at candidates that could still make the top k. No
//! document that could enter the top k is ever skipped, so results are exact.
//!
//! Block-max MaxScore (`bm-maxscore`) runs the same loop window by window. A window
//! starts where the last ended and ends at the first end of the blocks the terms have
//! there (read from the skip tables without decoding); within it each term's maximum is
//! its block's bound, usually well under its whole-list bound, and the essential terms
//! are chosen again from those. A window whose maxima together cannot reach θ is passed
//! over without decoding a posting of it, and in the others fewer terms are essential
//! and fewer candidates survive their probes. Plain MaxScore is the same loop with one
//! window, the whole range, and each term's whole-list bound (as the block-max variant
//! becomes when scoring with other k1 and b, under which the stored block bounds do
//! not hold).
//!
//! [`Bm25Index::search_exhaustive_terms`] scores every posting of every term (term at a
//! time into a dense array); it is the plain reading of the definition, kept to check
//! MaxScore against in tests.
//!
//! Both paths sum a document's term contributions in query-term order, starting from
//! zero and adding zero for absent terms, so equal true scores are bit-identical sums and
//! the tie-break by ascending id is reliable; both return bit-identical hits.

use super::cursor::Cursor;
use super::error::{IndexError, IndexResult};
use super::format::INDEX_FILE;
use super::index::{Bm25Index, Scratch};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Which exact top-k algorithm a search runs. Every one returns bit-identical hits; they
/// differ only in how much of the postings they read. Named once, by strum
/// ([`crate::names::Named`]: `bm-maxscore`, `maxscore`, `bmw`, `exhaustive`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantNames,
)]
pub enum Algorithm {
    /// Block-max MaxScore: MaxScore window by window, each term bounded by its block
    /// there, the essential terms chosen again per window (see the module doc).
    #[strum(serialize = "bm-maxscore")]
    BlockMaxScore,
    /// MaxScore with one bound per term (see the module doc): the default.
    #[default]
    #[strum(serialize = "maxscore")]
    MaxScore,
    /// Block-max WAND (see [`super::blockmax`]).
    #[strum(serialize = "bmw")]
    BlockMaxWand,
    /// Every posting of every term scored (the definition read literally).
    #[strum(serialize = "exhaustive")]
    Exhaustive,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::BlockMaxScore,
        Algorithm::MaxScore,
        Algorithm::BlockMaxWand,
        Algorithm::Exhaustive,
    ];
}

/// One search result: a document number and its BM25 score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: u32,
    pub score: f32,
}

/// A candidate in the heap; "greater" means worse, so the heap's top is the one to evict.
#[derive(Clone, Copy)]
struct Worse {
    score: f32,
    rank: u32,
    doc: u32,
}

impl PartialEq for Worse {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worse {}
impl PartialOrd for Worse {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worse {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.rank.cmp(&other.rank))
    }
}

/// The k best so far, by score then ascending id.
pub(super) struct TopK<'i> {
    index: &'i Bm25Index,
    k: usize,
    heap: BinaryHeap<Worse>,
}

impl<'i> TopK<'i> {
    pub(super) fn new(index: &'i Bm25Index, k: usize) -> Self {
        TopK {
            index,
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// The score a new document must at least reach (and then win the tie) to enter.
    pub(super) fn threshold(&self) -> f32 {
        if self.heap.len() < self.k {
            f32::NEG_INFINITY
        } else {
            self.heap.peek().map_or(f32::NEG_INFINITY, |w| w.score)
        }
    }

    pub(super) fn offer(&mut self, doc: u32, score: f32) {
        if self.heap.len() < self.k {
            let rank = self.index.id_rank(doc);
            self.heap.push(Worse { score, rank, doc });
            return;
        }
        let worst = *self.heap.peek().expect("k > 0");
        if score < worst.score {
            return;
        }
        let cand = Worse {
            score,
            rank: self.index.id_rank(doc),
            doc,
        };
        if cand < worst {
            self.heap.pop();
            self.heap.push(cand);
        }
    }

    pub(super) fn into_hits(self) -> Vec<Hit> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|w| Hit {
                doc: w.doc,
                score: w.score,
            })
            .collect()
    }
}

/// Whether a score bound is surely under the threshold. The margin covers the
/// difference between f64 bounds and f32 sums; a document exactly at the threshold is
/// never pruned, since it can still win the tie on its id.
#[inline]
pub(super) fn below(bound: f64, theta: f32) -> bool {
    bound * (1.0 + 1e-5) < f64::from(theta)
}

/// One query term during a search.
pub(super) struct Term<'a> {
    pub(super) cursor: Cursor<'a>,
    pub(super) idf: f32,
    /// Position in the query (the order contributions are summed in).
    pub(super) slot: usize,
    pub(super) bound: f64,
}

impl Term<'_> {
    /// The most this term can add to documents up to the returned one, from the block
    /// that would hold `doc` (see [`Cursor::block_bound`]).
    #[inline]
    pub(super) fn block_bound(&mut self, doc: u32) -> (f64, u32) {
        let (part, last) = self.cursor.block_bound(doc);
        (f64::from(self.idf) * f64::from(part) * (1.0 + 1e-6), last)
    }
}

impl Bm25Index {
    /// The `k` best documents for a query, by decreasing score, ties by ascending id.
    /// Documents matching no query term are never returned.
    pub fn search(&self, query: &str, k: usize) -> IndexResult<Vec<Hit>> {
        let terms = self.analyzer.query_terms(query);
        self.search_terms(&terms, k)
    }

    #[inline]
    pub(super) fn part(&self, idf: f32, tf: u32, doc: u32) -> f32 {
        let tf = tf as f32;
        idf * tf / (tf + self.norms[doc as usize])
    }

    pub(super) fn corrupt_postings(&self, t: u32) -> IndexError {
        IndexError::corrupt(
            self.dir().join(INDEX_FILE),
            format!("postings of term {t} are damaged"),
        )
    }

    /// Cursors for the query's known terms (term number, cursor, idf, query slot).
    pub(super) fn cursors(&self, terms: &[String]) -> IndexResult<Vec<(u32, Term<'_>)>> {
        let mut out = Vec::with_capacity(terms.len());
        for (slot, term) in terms.iter().enumerate() {
            let Some(t) = self.find_term(term) else {
                continue;
            };
            let stats = self.term_stats(t);
            let idf = self.idf(stats.df) as f32;
            let mut cursor = Cursor::new(self.postings_bytes(t)?, stats.df);
            cursor.set_bounds(self.bound_part(stats), self.block_maxima_hold());
            let bound = f64::from(idf) * f64::from(self.bound_part(stats)) * (1.0 + 1e-6);
            out.push((
                t,
                Term {
                    cursor,
                    idf,
                    slot,
                    bound,
                },
            ));
        }
        Ok(out)
    }

    /// Like [`Bm25Index::search`] for already analyzed, unique terms.
    pub fn search_terms(&self, terms: &[String], k: usize) -> IndexResult<Vec<Hit>> {
        self.search_terms_with(terms, k, Algorithm::default())
    }

    /// [`Bm25Index::search_terms`] with a chosen algorithm (the results are the same).
    pub fn search_terms_with(
        &self,
        terms: &[String],
        k: usize,
        algorithm: Algorithm,
    ) -> IndexResult<Vec<Hit>> {
        match algorithm {
            Algorithm::BlockMaxScore => self.search_maxscore(terms, k, true),
            Algorithm::MaxScore => self.search_maxscore(terms, k, false),
            Algorithm::BlockMaxWand => self.search_bmw(terms, k),
            Algorithm::Exhaustive => self.search_exhaustive_terms(terms, k),
        }
    }

    /// MaxScore over the whole list range with each term's bound (`windows` false), or
    /// window by window with the bounds of the blocks each term has there (block-max
    /// MaxScore, see the module doc).
    fn search_maxscore(&self, terms: &[String], k: usize, windows: bool) -> IndexResult<Vec<Hit>> {
        if k == 0 || terms.is_empty() {
            return Ok(Vec::new());
        }
        let (numbers, mut ts): (Vec<u32>, Vec<Term>) = self.cursors(terms)?.into_iter().unzip();
        for t in &mut ts {
            t.cursor.step();
        }
        let mut run = MaxScoreRun {
            order: (0..ts.len()).collect(),
            maxima: ts.iter().map(|t| t.bound).collect(),
            prefix: vec![0f64; ts.len() + 1],
            contrib: vec![0f32; terms.len()],
            top: TopK::new(self, k),
        };
        let mut start = 0u32;
        loop {
            let end = if windows {
                run.window_maxima(&mut ts, start)
            } else {
                u32::MAX
            };
            run.sort_by_maxima();
            if !below(run.prefix[ts.len()], run.top.threshold()) {
                run.score_window(self, &mut ts, start, end)
                    .map_err(|i| self.corrupt_postings(numbers[i]))?;
            }
            if end == u32::MAX {
                break;
            }
            start = end + 1;
        }
        if let Some(i) = ts.iter().position(|t| t.cursor.corrupt) {
            return Err(self.corrupt_postings(numbers[i]));
        }
        Ok(run.top.into_hits())
    }

    /// The same results as [`Bm25Index::search_terms`], by scoring every posting of
    /// every term: the definition read literally, kept as the check on MaxScore.
    pub fn search_exhaustive_terms(&self, terms: &[String], k: usize) -> IndexResult<Vec<Hit>> {
        if k == 0 || terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut scratch = self
            .pool
            .0
            .lock()
            .expect("scratch pool")
            .pop()
            .unwrap_or_default();
        let n = self.num_docs() as usize;
        if scratch.scores.len() != n {
            scratch.scores = vec![0.0; n];
        }
        let result = self.accumulate(terms, &mut scratch);
        let hits = result.map(|()| {
            let mut top = TopK::new(self, k);
            for &doc in &scratch.touched {
                top.offer(doc, scratch.scores[doc as usize]);
            }
            top.into_hits()
        });
        for &d in &scratch.touched {
            scratch.scores[d as usize] = 0.0;
        }
        scratch.touched.clear();
        self.pool.0.lock().expect("scratch pool").push(scratch);
        hits
    }

    fn accumulate(&self, terms: &[String], scratch: &mut Scratch) -> IndexResult<()> {
        let n = self.num_docs();
        let Scratch { scores, touched } = scratch;
        // Terms in query order, as MaxScore sums them: adding nothing for an absent term
        // is the same as its adding zero there.
        for (t, mut term) in self.cursors(terms)? {
            while term.cursor.step() {
                let doc = term.cursor.doc();
                if doc >= n {
                    return Err(self.corrupt_postings(t));
                }
                let slot = &mut scores[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += self.part(term.idf, term.cursor.tf(), doc);
            }
            if term.cursor.corrupt {
                return Err(self.corrupt_postings(t));
            }
        }
        Ok(())
    }
}

/// The state of one MaxScore search: the terms ordered by the most each can add in the
/// current window, and the results so far.
struct MaxScoreRun<'i> {
    /// Term positions by ascending `maxima`: a prefix of this order is non-essential.
    order: Vec<usize>,
    /// The most each term can add to a document of the window.
    maxima: Vec<f64>,
    /// prefix[i] = the sum of the maxima of order[..i].
    prefix: Vec<f64>,
    /// Each query slot's contribution to the candidate being scored.
    contrib: Vec<f32>,
    top: TopK<'i>,
}

impl MaxScoreRun<'_> {
    /// Sets each term's maximum to the bound of its block holding `start`, and returns
    /// the window's last document: the first end of those blocks, so that each bound
    /// holds over the whole window.
    fn window_maxima(&mut self, ts: &mut [Term], start: u32) -> u32 {
        let mut end = u32::MAX;
        for (max, t) in self.maxima.iter_mut().zip(ts) {
            let (bound, last) = t.block_bound(start);
            *max = bound;
            end = end.min(last);
        }
        end
    }

    fn sort_by_maxima(&mut self) {
        let maxima = &self.maxima;
        self.order
            .sort_unstable_by(|&a, &b| maxima[a].total_cmp(&maxima[b]));
        for (i, &t) in self.order.iter().enumerate() {
            self.prefix[i + 1] = self.prefix[i] + maxima[t];
        }
    }

    /// Scores the documents of `start..=end` that could enter the top k: candidates
    /// come from the essential terms, the others are probed only while the candidate
    /// can still reach θ. `Err` holds the position of a term whose postings are damaged.
    fn score_window(
        &mut self,
        index: &Bm25Index,
        ts: &mut [Term],
        start: u32,
        end: u32,
    ) -> Result<(), usize> {
        let mut essential = self.essential_from(0);
        for &i in &self.order[essential..] {
            ts[i].cursor.advance(start);
        }
        while essential < ts.len() {
            let doc = self.order[essential..]
                .iter()
                .map(|&i| ts[i].cursor.doc())
                .min()
                .unwrap_or(u32::MAX);
            if doc > end || doc == u32::MAX {
                break;
            }
            if doc >= index.num_docs() {
                return Err(self.order[essential]);
            }
            self.score_candidate(index, ts, essential, doc);
            essential = self.essential_from(essential);
        }
        Ok(())
    }

    /// The first essential position at or after `from` under the current θ: the terms
    /// before it cannot reach θ together.
    fn essential_from(&self, mut from: usize) -> usize {
        let theta = self.top.threshold();
        while from < self.order.len() && below(self.prefix[from + 1], theta) {
            from += 1;
        }
        from
    }

    /// Scores `doc`'s essential terms (moving their cursors past it), then probes the
    /// non-essential ones, the largest maximum first, until the candidate is ruled out
    /// or fully scored, and offers it.
    fn score_candidate(&mut self, index: &Bm25Index, ts: &mut [Term], essential: usize, doc: u32) {
        let theta = self.top.threshold();
        let mut partial = 0f64;
        for &i in &self.order[essential..] {
            let t = &mut ts[i];
            if t.cursor.doc() == doc {
                let c = index.part(t.idf, t.cursor.tf(), doc);
                self.contrib[t.slot] = c;
                partial += f64::from(c);
                t.cursor.step();
            }
        }
        let mut pruned = false;
        for p in (0..essential).rev() {
            if below(partial + self.prefix[p + 1], theta) {
                pruned = true;
                break;
            }
            let t = &mut ts[self.order[p]];
            if t.cursor.advance(doc) && t.cursor.doc() == doc {
                let c = index.part(t.idf, t.cursor.tf(), doc);
                self.contrib[t.slot] = c;
                partial += f64::from(c);
            }
        }
        if !pruned {
            let score = self.contrib.iter().fold(0f32, |sum, c| sum + c);
            self.top.offer(doc, score);
        }
        self.contrib.fill(0.0);
    }
}
