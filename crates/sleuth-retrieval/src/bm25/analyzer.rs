//! Text analysis shared by indexing and querying, modelled on Lucene's `EnglishAnalyzer`:
//! word tokens, lowercased, English possessive `'s` removed, Lucene's 33 English stop
//! words removed, then stemmed.
//!
//! Differences from Lucene, kept deliberately small and written down here:
//! - Tokens are maximal runs of Unicode alphanumerics, joined across an apostrophe
//!   between letters (`don't`) and across `.`/`,` between digits (`3.14`, `1,000`); this
//!   approximates the UAX#29 word rules of Lucene's `StandardTokenizer` without its
//!   special cases (e-mail addresses, URLs, CJK ideographs one per token).
//! - The stemmer is Snowball English (Porter2, `rust-stemmers`) rather than Lucene's
//!   original Porter: the comparison target `bm25s` with PyStemmer uses Porter2 too.
//!
//! Index and query go through the same [`Analyzer::analyze_token`], so whatever a
//! query term becomes, the indexed word became the same.

use rust_stemmers::{Algorithm, Stemmer};

/// Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`.
pub const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Lowercasing, stop-word removal and stemming; cheap to create, `Send + Sync`.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzer {
    pub fn new() -> Self {
        Analyzer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// Calls `f` with every raw word token of `text`, in order (not yet normalized).
    pub fn for_each_word<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
        let bytes = text.as_bytes();
        let mut start: Option<usize> = None;
        let mut iter = text.char_indices().peekable();
        while let Some((i, c)) = iter.next() {
            if c.is_alphanumeric() {
                if start.is_none() {
                    start = Some(i);
                }
                continue;
            }
            if let Some(s) = start {
                // A joiner stays inside the token only between two word characters of
                // the right kind: letters around an apostrophe, digits around . or ,.
                let next = iter.peek().map(|&(_, n)| n);
                let prev = text[s..i].chars().next_back();
                let joins = match (c, prev, next) {
                    ('\'' | '\u{2019}', Some(p), Some(n)) => p.is_alphabetic() && n.is_alphabetic(),
                    ('.' | ',', Some(p), Some(n)) => p.is_ascii_digit() && n.is_ascii_digit(),
                    _ => false,
                };
                if joins {
                    continue;
                }
                f(&text[s..i]);
                start = None;
            }
        }
        if let Some(s) = start {
            f(&text[s..bytes.len()]);
        }
    }

    /// Normalizes one raw word: `None` for a stop word, else its indexed term.
    pub fn analyze_token(&self, raw: &str) -> Option<String> {
        let mut word = if raw.is_ascii() {
            raw.to_ascii_lowercase()
        } else {
            raw.to_lowercase().replace('\u{2019}', "'")
        };
        if word.ends_with("'s") {
            word.truncate(word.len() - 2);
        }
        if word.is_empty() || STOP_WORDS.binary_search(&word.as_str()).is_ok() {
            return None;
        }
        Some(self.stemmer.stem(&word).into_owned())
    }

    /// Every indexed term of `text`, in order, with repeats (document analysis).
    pub fn analyze(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Self::for_each_word(text, |w| out.extend(self.analyze_token(w)));
        out
    }

    /// The unique terms of a query, in order of first appearance: duplicate query terms
    /// are merged, so a repeated word does not count twice.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for term in self.analyze(query) {
            if !out.contains(&term) {
                out.push(term);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn lowercases_removes_stop_words_and_stems() {
        let a = Analyzer::new();
        assert_eq!(
            a.analyze("The Running of the BULLS in Pamplona"),
            ["run", "bull", "pamplona"]
        );
        assert_eq!(
            a.analyze("It is not THAT they were connected"),
            ["were", "connect"]
        );
    }

    #[test]
    fn possessives_apostrophes_and_numbers() {
        let a = Analyzer::new();
        assert_eq!(a.analyze("Mingus's band"), ["mingus", "band"]);
        assert_eq!(a.analyze("Mingus\u{2019}s band"), ["mingus", "band"]);
        assert_eq!(
            a.analyze("1,000 people, 3.14 and 7."),
            ["1,000", "peopl", "3.14", "7"]
        );
        assert_eq!(a.analyze("end. Start"), ["end", "start"]);
        assert_eq!(a.analyze("Zürich–Genève"), ["zürich", "genèv"]);
    }

    #[test]
    fn duplicate_query_terms_are_merged() {
        let a = Analyzer::new();
        assert_eq!(
            a.query_terms("runs running Runner the the run"),
            ["run", "runner"]
        );
        assert!(a.query_terms("the of and").is_empty());
    }
}
