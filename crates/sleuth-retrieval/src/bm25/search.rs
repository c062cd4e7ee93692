//! Exact top-k search.
//!
//! Every path but the exhaustive one is MaxScore (Turtle & Flood): query terms are
//! ordered by the most each can add to a score (idf times the largest tf / (tf + norm)
//! of its postings); once the k-th best score θ exceeds the sum of the smallest bounds,
//! those terms become "non-essential": a document found only in them cannot reach θ,
//! so candidates come from the essential terms' lists alone, and the long
//! non-essential lists are only probed (with block skips) at candidates that could
//! still make the top k. No document that could enter the top k is ever skipped, so
//! results are exact.
//!
//! The default, bulk MaxScore (`bulk-maxscore`), takes the candidates a window of
//! 32,768 documents at a time (as Lucene's MaxScoreBulkScorer does): each essential
//! term's postings in the window are scored term by term into an array of the window's
//! scores, a tight loop over decoded blocks with no merging of cursors, and then the
//! window's documents with a score are the candidates, in order, each probed in the
//! non-essential terms as above. At 5.23M documents a ten-term question has about half
//! a million essential postings, nearly all ruled out at their first probe, so what a
//! candidate costs before its probe is most of the search. The few that survive are
//! scored again from a second set of cursors, so that the contributions are summed in
//! query-term order.
//!
//! Block-max MaxScore (`bm-maxscore`) runs the candidate-at-a-time loop (`maxscore`)
//! window by window. A window starts where the last ended and ends at the first end of
//! the blocks the terms have there (read from the skip tables without decoding); within
//! it each term's maximum is its block's bound, usually under its whole-list bound, and
//! the essential terms are chosen again from those. A window whose maxima together
//! cannot reach θ is passed over without decoding a posting of it, and in the others
//! fewer terms can be essential. (On the HotpotQA questions at 5.23M documents no
//! window was ever passed over: ten terms' block maxima always sum past θ; the path
//! took about a fifth fewer candidates than plain MaxScore and no less time.) Plain
//! MaxScore is the same loop with one window, the whole range, and each term's
//! whole-list bound (as the block-max variant becomes when scoring with other k1 and b,
//! under which the stored block bounds do not hold).
//!
//! [`Bm25Index::search_exhaustive_terms`] scores every posting of every term (term at a
//! time into a dense array); it is the plain reading of the definition, kept to check
//! MaxScore against in tests.
//!
//! Every path sums a document's term contributions in query-term order, starting from
//! zero and adding zero for absent terms, so equal true scores are bit-identical sums
//! and the tie-break by ascending id is reliable; all return bit-identical hits.

use super::cursor::Cursor;
use super::error::{IndexError, IndexResult};
use super::format::INDEX_FILE;
use super::index::{Bm25Index, Scratch};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Which exact top-k algorithm a search runs. Every one returns bit-identical hits; they
/// differ only in how much of the postings they read. Named once, by strum
/// ([`sleuth_common::names::Named`]: `bulk-maxscore`, `bm-maxscore`, `maxscore`, `bmw`,
/// `exhaustive`).
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
    /// MaxScore with one bound per term, a candidate at a time (see the module doc).
    #[strum(serialize = "maxscore")]
    MaxScore,
    /// MaxScore scoring the essential terms a window of documents at a time, term by
    /// term into an array, then the window's candidates in order (see the module doc):
    /// the default, measured fastest at 5.23M documents (README, 2026-12-07).
    #[default]
    #[strum(serialize = "bulk-maxscore")]
    BulkMaxScore,
    /// Block-max WAND (see [`super::blockmax`]).
    #[strum(serialize = "bmw")]
    BlockMaxWand,
    /// Every posting of every term scored (the definition read literally).
    #[strum(serialize = "exhaustive")]
    Exhaustive,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::BlockMaxScore,
        Algorithm::MaxScore,
        Algorithm::BulkMaxScore,
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
            Algorithm::BulkMaxScore => self.search_bulk(terms, k),
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
        let mut run = MaxScoreRun::new(&ts, terms.len(), TopK::new(self, k));
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
        let Scratch {
            scores, touched, ..
        } = scratch;
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

/// Documents per window of the bulk path: the window's scores (f32) stay in the L2
/// cache. Small under test, so that the tests' corpora span many windows.
const WINDOW: u32 = if cfg!(test) { 1 << 9 } else { 1 << 15 };

impl Bm25Index {
    /// MaxScore a window at a time (see the module doc): each window's essential terms
    /// are scored term by term into an array, then its documents with a score are taken
    /// in order as candidates and probed in the non-essential terms as usual. A
    /// candidate that survives is scored again from second cursors over the essential
    /// lists, so its score is summed in query-term order like on every path.
    fn search_bulk(&self, terms: &[String], k: usize) -> IndexResult<Vec<Hit>> {
        if k == 0 || terms.is_empty() {
            return Ok(Vec::new());
        }
        let (numbers, mut ts): (Vec<u32>, Vec<Term>) = self.cursors(terms)?.into_iter().unzip();
        let mut exact: Vec<Term> = self.cursors(terms)?.into_iter().map(|(_, t)| t).collect();
        for t in ts.iter_mut().chain(&mut exact) {
            t.cursor.step();
        }
        let mut run = MaxScoreRun::new(&ts, terms.len(), TopK::new(self, k));
        run.sort_by_maxima();
        let mut window = self
            .pool
            .0
            .lock()
            .expect("scratch pool")
            .pop()
            .unwrap_or_default();
        if window.window.len() != WINDOW as usize {
            window.reset_window();
        }
        let (n, mut start) = (self.num_docs(), 0u32);
        let mut damaged = None;
        while start < n && damaged.is_none() {
            let end = start.saturating_add(WINDOW - 1).min(n - 1);
            let essential = run.essential_from(0);
            if essential == ts.len() {
                break;
            }
            let mut bulk = BulkWindow {
                index: self,
                window: &mut window,
                start,
                end,
            };
            damaged = bulk.score(&mut run, &mut ts, &mut exact, essential).err();
            start = end + 1;
        }
        if damaged.is_some() {
            // Left mid-window: clear what the next search would otherwise inherit.
            window.reset_window();
        }
        self.pool.0.lock().expect("scratch pool").push(window);
        let sound =
            |t: &Term| !t.cursor.corrupt && (t.cursor.doc() < n || t.cursor.doc() == u32::MAX);
        if let Some(i) =
            damaged.or_else(|| (0..ts.len()).find(|&i| !sound(&ts[i]) || !sound(&exact[i])))
        {
            return Err(self.corrupt_postings(numbers[i]));
        }
        Ok(run.top.into_hits())
    }
}

/// One window of the bulk path.
struct BulkWindow<'a> {
    index: &'a Bm25Index,
    window: &'a mut Scratch,
    start: u32,
    end: u32,
}

impl BulkWindow<'_> {
    /// Scores the window: the essential terms' postings give the candidates and their
    /// partial scores, then each candidate is probed in the non-essential terms, and
    /// one that survives is scored exactly and offered. `Err` holds the position of a
    /// term whose postings are damaged.
    fn score(
        &mut self,
        run: &mut MaxScoreRun,
        ts: &mut [Term],
        exact: &mut [Term],
        essential: usize,
    ) -> Result<(), usize> {
        for &i in &run.order[essential..] {
            self.add_postings(&mut ts[i]).map_err(|()| i)?;
        }
        let (index, start) = (self.index, self.start);
        self.window.drain_window(|offset, partial| {
            let doc = start + offset;
            if run.probe(index, ts, essential, doc, f64::from(partial)) {
                for &i in &run.order[essential..] {
                    let t = &mut exact[i];
                    if t.cursor.advance(doc) && t.cursor.doc() == doc {
                        run.contrib[t.slot] = index.part(t.idf, t.cursor.tf(), doc);
                    }
                }
                run.offer_contributions(doc);
            }
            run.contrib.fill(0.0);
        });
        Ok(())
    }

    /// Adds a term's contributions in the window to the window's scores, making each
    /// of its documents a candidate. `Err` when a posting falls outside the window
    /// (damaged postings).
    fn add_postings(&mut self, t: &mut Term) -> Result<(), ()> {
        let (index, window, start) = (self.index, &mut *self.window, self.start);
        let idf = t.idf;
        let mut sound = true;
        t.cursor.advance(start);
        t.cursor.drain_through(self.end, |doc, tf| {
            sound &= window.add_to_window(doc.wrapping_sub(start), index.part(idf, tf, doc));
        });
        if sound {
            Ok(())
        } else {
            Err(())
        }
    }
}

impl Scratch {
    /// Sizes and zeroes the bulk path's window buffers (a finished window leaves them
    /// zero, so a search needs this only the first time or after damaged postings).
    fn reset_window(&mut self) {
        self.window.clear();
        self.window.resize(WINDOW as usize, 0.0);
        self.in_window.clear();
        self.in_window.resize(WINDOW as usize / 64, 0);
    }

    /// Adds `part` to the score of the window's document at `offset`, making it a
    /// candidate; false (nothing added) when the offset is outside the window, which
    /// only damaged postings give.
    #[inline]
    fn add_to_window(&mut self, offset: u32, part: f32) -> bool {
        let at = offset as usize;
        let Some(score) = self.window.get_mut(at) else {
            return false;
        };
        *score += part;
        self.in_window[at / 64] |= 1 << (at % 64);
        true
    }

    /// Calls `f(offset, score)` for each document of the window with a score, in
    /// order, leaving the window zeroed for the next.
    fn drain_window(&mut self, mut f: impl FnMut(u32, f32)) {
        for (word_at, word) in self.in_window.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let at = word_at * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f(at as u32, std::mem::take(&mut self.window[at]));
            }
        }
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

impl<'i> MaxScoreRun<'i> {
    /// A run over `ts` (for `slots` query terms), each term's maximum its whole-list
    /// bound until [`MaxScoreRun::window_maxima`] says otherwise.
    fn new(ts: &[Term], slots: usize, top: TopK<'i>) -> Self {
        MaxScoreRun {
            order: (0..ts.len()).collect(),
            maxima: ts.iter().map(|t| t.bound).collect(),
            prefix: vec![0f64; ts.len() + 1],
            contrib: vec![0f32; slots],
            top,
        }
    }

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
    /// non-essential ones, and offers it unless it was ruled out.
    fn score_candidate(&mut self, index: &Bm25Index, ts: &mut [Term], essential: usize, doc: u32) {
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
        if self.probe(index, ts, essential, doc, partial) {
            self.offer_contributions(doc);
        }
        self.contrib.fill(0.0);
    }

    /// Probes the non-essential terms at `doc`, the largest maximum first, recording
    /// their contributions, until the candidate (`partial` from its essential terms)
    /// is ruled out (false) or fully scored (true).
    fn probe(
        &mut self,
        index: &Bm25Index,
        ts: &mut [Term],
        essential: usize,
        doc: u32,
        mut partial: f64,
    ) -> bool {
        let theta = self.top.threshold();
        for p in (0..essential).rev() {
            if below(partial + self.prefix[p + 1], theta) {
                return false;
            }
            let t = &mut ts[self.order[p]];
            if t.cursor.advance(doc) && t.cursor.doc() == doc {
                let c = index.part(t.idf, t.cursor.tf(), doc);
                self.contrib[t.slot] = c;
                partial += f64::from(c);
            }
        }
        true
    }

    /// Offers `doc` with the recorded contributions summed in query-term order (as
    /// every path sums them, so equal scores are equal bits).
    fn offer_contributions(&mut self, doc: u32) {
        let score = self.contrib.iter().fold(0f32, |sum, c| sum + c);
        self.top.offer(doc, score);
    }
}
