//! Top-k search: term-at-a-time accumulation over every posting of every query term,
//! then a bounded heap for the k best.
//!
//! Exhaustive accumulation is exact by construction (no pruning that could drop a hit)
//! and simple; it reads each posting list once, sequentially. Each document's score is
//! summed in the same term order, so documents with equal true scores get bit-identical
//! sums and the tie-break by ascending id is reliable. Per-thread scratch (a dense score
//! array and the list of documents touched) is pooled so concurrent searches never
//! allocate or clear the whole array.

use super::error::{IndexError, IndexResult};
use super::format::{Postings, INDEX_FILE};
use super::index::Bm25Index;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Mutex;

/// One search result: a document number and its BM25 score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: u32,
    pub score: f32,
}

#[derive(Default)]
pub(super) struct Scratch {
    scores: Vec<f32>,
    touched: Vec<u32>,
}

#[derive(Default)]
pub(super) struct ScratchPool(Mutex<Vec<Scratch>>);

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

impl Bm25Index {
    /// The `k` best documents for a query, by decreasing score, ties by ascending id.
    /// Documents matching no query term are never returned.
    pub fn search(&self, query: &str, k: usize) -> IndexResult<Vec<Hit>> {
        let terms = self.analyzer.query_terms(query);
        self.search_terms(&terms, k)
    }

    /// Like [`Bm25Index::search`] for already analyzed, unique terms.
    pub fn search_terms(&self, terms: &[String], k: usize) -> IndexResult<Vec<Hit>> {
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
        let hits = result.map(|()| self.top_k(&scratch, k));
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
        for term in terms {
            let Some(t) = self.find_term(term) else {
                continue;
            };
            let df = self.term_stats(t).df;
            let idf = self.idf(df) as f32;
            let mut postings = Postings::new(self.postings_bytes(t)?, df);
            for (doc, tf) in postings.by_ref() {
                let Some(norm) = self.norms.get(doc as usize) else {
                    return Err(self.corrupt_postings(t));
                };
                let slot = &mut scores[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                let tf = tf as f32;
                *slot += idf * tf / (tf + norm);
            }
            if postings.corrupt || touched.len() > n as usize {
                return Err(self.corrupt_postings(t));
            }
        }
        Ok(())
    }

    fn corrupt_postings(&self, t: u32) -> IndexError {
        IndexError::corrupt(
            self.dir().join(INDEX_FILE),
            format!("postings of term {t} are damaged"),
        )
    }

    fn top_k(&self, scratch: &Scratch, k: usize) -> Vec<Hit> {
        let mut heap: BinaryHeap<Worse> = BinaryHeap::with_capacity(k + 1);
        for &doc in &scratch.touched {
            let score = scratch.scores[doc as usize];
            if heap.len() == k {
                let worst = heap.peek().expect("k > 0");
                if score < worst.score {
                    continue;
                }
                let cand = Worse {
                    score,
                    rank: self.id_rank(doc),
                    doc,
                };
                if cand >= *worst {
                    continue;
                }
                heap.pop();
                heap.push(cand);
            } else {
                heap.push(Worse {
                    score,
                    rank: self.id_rank(doc),
                    doc,
                });
            }
        }
        heap.into_sorted_vec()
            .into_iter()
            .map(|w| Hit {
                doc: w.doc,
                score: w.score,
            })
            .collect()
    }
}
