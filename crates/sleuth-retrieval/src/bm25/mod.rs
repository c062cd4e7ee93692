//! Open-corpus BM25 search, scored exactly as the EIR paper's corpus experiment
//! describes Lucene's BM25: k1 = 0.9 and b = 0.4 by default, title and text indexed as
//! one field with no boost, lowercased, stop words removed, stemmed, duplicate query
//! terms merged, any term may match, ties by ascending paragraph id.
//!
//! Formula (Lucene >= 8, and `bm25s` with `method="lucene"`, which is our comparison
//! target): for each unique query term t in document d,
//! `idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))` with
//! `idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`. The older `(k1 + 1)` numerator
//! factor is dropped, as Lucene 8 dropped it: it scales every score by the same constant
//! and so changes no ranking. Document lengths are exact (see [`format`]), not Lucene's
//! one-byte norm. `N` counts every paragraph, including ones with no indexed word.
//!
//! Why an index of our own rather than tantivy: tantivy's BM25 has k1 = 1.2 and b =
//! 0.75 hard-wired and a heavy build; what we need is small (an analyzer, a sorted term
//! dictionary, bit-packed postings, exact lengths, a paragraph store) and lives in the core
//! crate with two light dependencies (`rust-stemmers` for the Snowball English stemmer,
//! `memmap2` to open an index without reading it). tantivy appears only in the
//! benchmark crate, as a speed baseline.
//!
//! Layout: [`analyzer`] (text to terms), [`source`] (corpus lines), [`build`]
//! (streaming builder), [`jsonl`] (a corpus file, parsed on a second thread), [`format`] (files, checksums), [`check`] (integrity),
//! [`cursor`] (postings with block skips and block score bounds),
//! [`index`] (open, lookups), [`search`] (exact top-k: bulk MaxScore by default,
//! MaxScore a candidate at a time, with or without block bounds, and an exhaustive path
//! kept as their check), [`blockmax`]
//! (block-max WAND, the alternative), [`explain`] (per-term breakdown = the reference
//! computation).

pub mod analyzer;
pub mod blockmax;
pub mod build;
pub mod check;
pub mod cursor;
pub mod error;
pub mod explain;
pub mod format;
pub mod index;
pub mod jsonl;
pub mod search;
pub mod source;

pub use analyzer::Analyzer;
pub use build::{BuildProgress, BuildSummary, IndexBuilder};
pub use check::CheckReport;
pub use error::{IndexError, IndexResult};
pub use explain::{Explanation, TermExplanation};
pub use index::{Bm25Index, TermStats};
pub use jsonl::build_from_jsonl;
pub use search::{Algorithm, Hit};
pub use source::CorpusDoc;

/// The BM25 free parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalization strength, 0 (none) to 1 (full).
    pub b: f64,
}

impl Default for Bm25Params {
    /// The EIR paper's corpus setting.
    fn default() -> Self {
        Bm25Params { k1: 0.9, b: 0.4 }
    }
}

impl Bm25Params {
    pub fn validate(&self) -> IndexResult<()> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(IndexError::Invalid(format!(
                "k1 must be a finite number >= 0, got {}",
                self.k1
            )));
        }
        if !(0.0..=1.0).contains(&self.b) {
            return Err(IndexError::Invalid(format!(
                "b must be between 0 and 1, got {}",
                self.b
            )));
        }
        Ok(())
    }
}

/// Lucene's BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5)); always positive.
pub fn lucene_idf(docs: u64, df: u64) -> f64 {
    (1.0 + (docs as f64 - df as f64 + 0.5) / (df as f64 + 0.5)).ln()
}

/// One term's BM25 contribution, straight from the formula.
pub fn bm25_term_score(idf: f64, tf: u32, dl: u32, avgdl: f64, p: Bm25Params) -> f64 {
    let tf = f64::from(tf);
    idf * tf / (tf + p.k1 * (1.0 - p.b + p.b * f64::from(dl) / avgdl))
}

#[cfg(test)]
mod tests;
