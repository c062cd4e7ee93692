//! Lexical scoring used by the environments.
//!
//! The SLEUTH setting ranks a question's own pool by Jaccard overlap of word tokens
//! ([`jaccard`]); the corpus setting uses BM25 over a real index (`bm25`).

// The shared utilities, under the paths the modules name them by.
use sleuth_common::atomic;

pub mod bm25;
pub mod jaccard;
pub mod tokenize;
