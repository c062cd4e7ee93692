//! The synthetic corpus's growing vocabulary: Heaps' law fitted on the real paragraphs,
//! a Good–Turing tail mass, and Zipf-ranked synthetic words. `gen`'s module doc says
//! why and how; this module holds the arithmetic.

use rand::Rng;
use sleuth::retrieval::bm25::Analyzer;
use std::collections::HashMap;

/// What the real paragraphs say about vocabulary growth.
#[derive(Debug, Clone, Copy)]
pub struct RealVocabulary {
    /// Heaps' law V(n) = k · n^beta over analyzed tokens.
    pub k: f64,
    pub beta: f64,
    pub raw_tokens: u64,
    pub analyzed_tokens: u64,
    pub terms: u64,
    /// Terms seen exactly once.
    pub hapax: u64,
}

/// Counts the analyzed terms of `texts` (in order) and fits Heaps' law by least squares
/// on (ln n, ln V(n)) at n = 1024, 2048, ... and at the end.
pub fn real_vocabulary<'a>(texts: impl Iterator<Item = &'a str>) -> RealVocabulary {
    let analyzer = Analyzer::new();
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut points: Vec<(f64, f64)> = Vec::new();
    let (mut n, mut raw, mut next) = (0u64, 0u64, 1024u64);
    for text in texts {
        raw += text.split_whitespace().count() as u64;
        for term in analyzer.analyze(text) {
            *counts.entry(term).or_default() += 1;
            n += 1;
            if n == next {
                points.push(((n as f64).ln(), (counts.len() as f64).ln()));
                next *= 2;
            }
        }
    }
    if n > next / 2 {
        points.push(((n as f64).ln(), (counts.len() as f64).ln()));
    }
    let len = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / len;
    let my = points.iter().map(|p| p.1).sum::<f64>() / len;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let beta = sxy / sxx;
    RealVocabulary {
        k: (my - beta * mx).exp(),
        beta,
        raw_tokens: raw,
        analyzed_tokens: n,
        terms: counts.len() as u64,
        hapax: counts.values().filter(|&&c| c == 1).count() as u64,
    }
}

/// The tail: each drawn word is a synthetic one with probability `mass`, its rank
/// floor(scale · u^(-1/(s-1))).
#[derive(Debug, Clone, Copy)]
pub struct Tail {
    pub mass: f64,
    pub s: f64,
    pub scale: f64,
    /// K · n^β at the corpus's expected analyzed tokens: the vocabulary aimed at.
    pub target_terms: f64,
    /// Expected distinct synthetic words (target minus the real terms, when reachable).
    pub expected_tail_terms: f64,
}

/// Ranks above this are clamped (about 2^62; reached with negligible probability).
const MAX_RANK: f64 = 4.6e18;

impl Tail {
    /// The tail for a corpus of `raw_tokens` expected whitespace tokens.
    pub fn fit(real: &RealVocabulary, raw_tokens: f64) -> Tail {
        let mass = real.hapax as f64 / real.raw_tokens as f64;
        // s must exceed 1 for the sampling formula; real text gives beta < 1.
        let s = (1.0 / real.beta).max(1.05);
        let analyzed_per_raw = real.analyzed_tokens as f64 / real.raw_tokens as f64;
        let analyzed = raw_tokens * ((1.0 - mass) * analyzed_per_raw + mass);
        let target_terms = real.k * analyzed.powf(real.beta);
        let want = (target_terms - real.terms as f64).max(0.0);
        let draws = raw_tokens * mass;
        // Expected distinct ranks grows with the scale: bisect on ln(scale).
        let (mut lo, mut hi) = (0f64, 40f64);
        for _ in 0..80 {
            let mid = (lo + hi) / 2.0;
            if expected_distinct(draws, s, mid.exp()) < want {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let scale = lo.exp();
        Tail {
            mass,
            s,
            scale,
            target_terms,
            expected_tail_terms: expected_distinct(draws, s, scale),
        }
    }

    /// A tail rank, or `None` when this draw is a real word.
    pub fn draw(&self, rng: &mut impl Rng) -> Option<u64> {
        if rng.gen::<f64>() >= self.mass {
            return None;
        }
        let u = 1.0 - rng.gen::<f64>(); // (0, 1]
        let x = self.scale * u.powf(-1.0 / (self.s - 1.0));
        Some(x.min(MAX_RANK) as u64)
    }
}

/// Expected number of distinct ranks among `draws` draws of floor(X), X = c·u^(-1/(s-1)):
/// the sum over ranks r of 1 - (1 - p_r)^draws, summed over geometric buckets of ranks
/// (p_r barely changes within one) until the draws left beyond are negligible.
fn expected_distinct(draws: f64, s: f64, c: f64) -> f64 {
    let beyond = |r: f64| if r <= c { 1.0 } else { (r / c).powf(1.0 - s) };
    let (mut total, mut a) = (0f64, c.floor());
    while a < MAX_RANK && draws * beyond(a) > 1e-4 * total.max(1.0) {
        let b = (a * 1.01).max(a + 1.0).floor();
        let ranks = b - a;
        let p = (beyond(a) - beyond(b)) / ranks;
        total += ranks * -(draws * (-p).ln_1p()).exp_m1();
        a = b;
    }
    total
}

const CONSONANTS: &[u8] = b"bdgkmnprtvz";
const VOWELS: &[u8] = b"aou";

/// Appends the word for tail rank `rank`: bijective base-33 in consonant-vowel
/// syllables, offset so that every word has at least three.
pub fn push_tail_word(rank: u64, out: &mut String) {
    let base = (CONSONANTS.len() * VOWELS.len()) as u64;
    let mut n = rank.min(1 << 62) + base + base * base + 1;
    let mut syllables = [0u8; 16];
    let mut len = 0;
    while n > 0 {
        n -= 1;
        syllables[len] = (n % base) as u8;
        len += 1;
        n /= base;
    }
    for &d in syllables[..len].iter().rev() {
        let d = usize::from(d);
        out.push(char::from(CONSONANTS[d / VOWELS.len()]));
        out.push(char::from(VOWELS[d % VOWELS.len()]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn tail_words_are_distinct_and_survive_analysis() {
        let analyzer = Analyzer::new();
        let mut seen = std::collections::HashSet::new();
        for rank in (0..5000u64).chain([1 << 40, u64::MAX]) {
            let mut w = String::new();
            push_tail_word(rank, &mut w);
            assert!(w.len() >= 6, "{w}");
            assert_eq!(analyzer.analyze(&w), [w.clone()], "rank {rank}");
            assert!(seen.insert(w));
        }
    }

    #[test]
    fn the_sampled_vocabulary_matches_the_expectation() {
        let real = RealVocabulary {
            k: 4.0,
            beta: 0.7,
            raw_tokens: 1_000_000,
            analyzed_tokens: 600_000,
            terms: 50_000,
            hapax: 20_000,
        };
        let tail = Tail::fit(&real, 20_000_000.0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut ranks = std::collections::HashSet::new();
        for _ in 0..20_000_000 {
            ranks.extend(tail.draw(&mut rng));
        }
        let got = ranks.len() as f64;
        let want = tail.expected_tail_terms;
        assert!((got - want).abs() < 0.03 * want, "{got} vs {want}");
        assert!((want + 50_000.0 - tail.target_terms).abs() < 0.01 * tail.target_terms);
    }
}
