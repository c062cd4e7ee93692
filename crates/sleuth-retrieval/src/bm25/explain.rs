//! Score explanations, which double as the reference computation of the formula.
//!
//! An explanation does not read the postings: it re-analyzes the stored paragraph to get
//! each term's tf and the document length, takes df from the term dictionary, and
//! evaluates the BM25 formula in f64 term by term. Agreement between this and
//! [`Bm25Index::search`] therefore checks the postings, the length normalization and
//! the accumulation against a straightforward evaluation of the formula.

use super::error::IndexResult;
use super::index::Bm25Index;
use super::{bm25_term_score, lucene_idf};
use std::fmt;

/// One query term's part of a score.
#[derive(Debug, Clone, PartialEq)]
pub struct TermExplanation {
    pub term: String,
    pub df: u32,
    pub idf: f64,
    pub tf: u32,
    pub contribution: f64,
}

/// Why a document scored what it scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub doc: u32,
    pub id: String,
    pub title: String,
    pub dl: u32,
    pub avgdl: f64,
    pub k1: f64,
    pub b: f64,
    pub docs: u32,
    pub terms: Vec<TermExplanation>,
    pub score: f64,
}

impl Bm25Index {
    /// Explains the score of document `doc` for `query`, from first principles.
    pub fn explain(&self, query: &str, doc: u32) -> IndexResult<Explanation> {
        let stored = self.doc(doc)?;
        let mut tokens: Vec<String> = Vec::new();
        for piece in stored.pieces() {
            tokens.extend(self.analyzer().analyze(piece));
        }
        let dl = tokens.len() as u32;
        let params = self.params();
        let n = u64::from(self.num_docs());
        let terms: Vec<TermExplanation> = self
            .analyzer()
            .query_terms(query)
            .into_iter()
            .map(|term| {
                let df = self.find_term(&term).map_or(0, |t| self.term_stats(t).df);
                let tf = tokens.iter().filter(|t| **t == term).count() as u32;
                let idf = if df == 0 {
                    0.0
                } else {
                    lucene_idf(n, u64::from(df))
                };
                let contribution = if tf == 0 {
                    0.0
                } else {
                    bm25_term_score(idf, tf, dl, self.avgdl(), params)
                };
                TermExplanation {
                    term,
                    df,
                    idf,
                    tf,
                    contribution,
                }
            })
            .collect();
        Ok(Explanation {
            doc,
            id: stored.id,
            title: stored.title,
            dl,
            avgdl: self.avgdl(),
            k1: params.k1,
            b: params.b,
            docs: self.num_docs(),
            score: terms.iter().map(|t| t.contribution).sum(),
            terms,
        })
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:.6} = sum of idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))   [id {}] {}",
            self.score, self.id, self.title
        )?;
        writeln!(
            f,
            "    N = {}, dl = {}, avgdl = {:.4}, k1 = {}, b = {}",
            self.docs, self.dl, self.avgdl, self.k1, self.b
        )?;
        for t in &self.terms {
            writeln!(
                f,
                "    {:<16} df = {:<8} idf = ln(1 + (N - df + 0.5) / (df + 0.5)) = {:.6}  tf = {:<3} -> {:.6}",
                t.term, t.df, t.idf, t.tf, t.contribution
            )?;
        }
        Ok(())
    }
}
