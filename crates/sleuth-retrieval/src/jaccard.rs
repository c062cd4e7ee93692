//! Jaccard overlap of word-token sets, the SLEUTH paper's pool search.

use super::tokenize::words;
use std::collections::HashSet;

/// |A ∩ B| / |A ∪ B| over the sets of word tokens; 0 when both are empty.
pub fn similarity(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

pub fn token_set(text: &str) -> HashSet<String> {
    words(text).collect()
}

/// Ranks documents against a query: indices of the top `k` by Jaccard similarity,
/// highest first, ties broken by position (stable), zero-overlap documents excluded.
pub fn top_k(query: &str, documents: &[HashSet<String>], k: usize) -> Vec<(usize, f64)> {
    let q = token_set(query);
    let mut scored: Vec<(usize, f64)> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| (i, similarity(&q, d)))
        .filter(|&(_, s)| s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_overlap_and_breaks_ties_by_position() {
        let docs: Vec<_> = ["the cat sat", "a dog ran", "cat and dog", "the cat sat"]
            .iter()
            .map(|d| token_set(d))
            .collect();
        let top = top_k("cat sat", &docs, 3);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![0, 3, 2]);
        assert!((top[0].1 - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn no_overlap_returns_nothing() {
        let docs = vec![token_set("alpha beta")];
        assert!(top_k("gamma", &docs, 3).is_empty());
    }
}
