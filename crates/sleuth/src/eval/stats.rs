//! Paired statistics for comparing two methods on the same questions.
//!
//! Both papers compare methods question by question: a paired bootstrap interval for the
//! difference in mean score, an exact two-sided McNemar test on exact match, and Holm's
//! step-down correction across a family of comparisons. Everything here is exact or
//! seeded, so a report computed twice from the same records prints the same numbers.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Resamples used by the papers' bootstrap intervals.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// Default bootstrap seed (the EIR paper's reported seed; any fixed value would do).
pub const DEFAULT_SEED: u64 = 20_260_806;

/// A paired bootstrap estimate of `mean(a) - mean(b)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapCi {
    /// The observed difference in means.
    pub diff: f64,
    /// Lower end of the 95% percentile interval.
    pub lo: f64,
    /// Upper end of the 95% percentile interval.
    pub hi: f64,
    /// Two-sided bootstrap p-value: twice the smaller tail of resampled differences on
    /// either side of zero (capped at 1). Coarse (resolution 1/resamples), but useful
    /// for Holm families over continuous scores such as F1.
    pub p: f64,
}

/// Paired bootstrap of the difference in means of `a` and `b` (same length, same
/// question order): resample question indices with replacement `resamples` times from a
/// ChaCha8 stream seeded with `seed`, and take the 2.5th and 97.5th percentiles of the
/// resampled mean differences (linear interpolation between order statistics).
///
/// Returns `None` when there are no pairs.
pub fn paired_bootstrap(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> Option<BootstrapCi> {
    assert_eq!(a.len(), b.len(), "paired samples must have equal length");
    let n = a.len();
    if n == 0 {
        return None;
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let diff = diffs.iter().sum::<f64>() / n as f64;
    let resamples = resamples.max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mut sum = 0.0;
        for _ in 0..n {
            sum += diffs[rng.gen_range(0..n)];
        }
        means.push(sum / n as f64);
    }
    means.sort_by(f64::total_cmp);
    let below = means.iter().filter(|m| **m <= 0.0).count();
    let above = means.iter().filter(|m| **m >= 0.0).count();
    let p = (2.0 * below.min(above) as f64 / resamples as f64).min(1.0);
    Some(BootstrapCi {
        diff,
        lo: percentile(&means, 0.025),
        hi: percentile(&means, 0.975),
        p,
    })
}

/// The `q`-quantile of sorted values, interpolating linearly between order statistics.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Exact two-sided McNemar test on the discordant pairs: `b` questions right only under
/// the first method, `c` right only under the second. Under the null each discordant
/// pair is a fair coin, so `p = min(1, 2 * P(X <= min(b, c)))` with `X ~ Bin(b + c, 1/2)`.
/// The binomial tail is summed in log space, so it stays exact for thousands of pairs.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // log C(n, i) built incrementally; each term is C(n, i) / 2^n.
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut log_choose = 0.0_f64;
    let mut terms = Vec::with_capacity(k as usize + 1);
    for i in 0..=k {
        if i > 0 {
            log_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        terms.push(log_choose - ln2n);
    }
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = max.exp() * terms.iter().map(|t| (t - max).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// [`holm`] of `p` as part of a family of `size` comparisons whose others are not in
/// the report: they are taken as p = 1, ranking last, which gives the shown ones the
/// largest adjusted values any such family could give (EIR Table 20: "groups of five
/// comparisons per metric and model, four of which are shown"). A `size` at or below
/// `p.len()` is plain [`holm`].
pub fn holm_in_family(p: &[f64], size: usize) -> Vec<f64> {
    let mut all = p.to_vec();
    all.resize(size.max(p.len()), 1.0);
    let mut adjusted = holm(&all);
    adjusted.truncate(p.len());
    adjusted
}

/// Holm's step-down adjustment of a family of p-values, returned in the input order:
/// the i-th smallest p (0-based) is multiplied by `m - i`, capped at 1, and made
/// monotone non-decreasing along the sorted order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        let value = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(value);
        adjusted[i] = running;
    }
    adjusted
}

/// Per-question outcomes of method A against method B on exact match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HeadToHead {
    /// A right, B wrong.
    pub wins: u64,
    /// A wrong, B right.
    pub losses: u64,
    pub both_right: u64,
    pub both_wrong: u64,
}

impl HeadToHead {
    /// Counts outcomes over paired correctness flags.
    pub fn count(a: &[bool], b: &[bool]) -> Self {
        assert_eq!(a.len(), b.len(), "paired samples must have equal length");
        let mut h = HeadToHead::default();
        for (&x, &y) in a.iter().zip(b) {
            match (x, y) {
                (true, false) => h.wins += 1,
                (false, true) => h.losses += 1,
                (true, true) => h.both_right += 1,
                (false, false) => h.both_wrong += 1,
            }
        }
        h
    }

    pub fn ties(&self) -> u64 {
        self.both_right + self.both_wrong
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy 1.x: `scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue`.
    #[test]
    fn a_family_larger_than_its_shown_rows_adjusts_as_if_the_rest_had_p_one() {
        let p = [0.01, 0.04, 0.03, 0.002];
        assert_eq!(holm_in_family(&p, 3), holm(&p));
        let five = holm_in_family(&p, 5);
        // Ranks 1-4 of five: x5, x4, x3, x2, made monotone (0.08 rises to 0.09).
        let want = [0.04, 0.09, 0.09, 0.01];
        for (got, want) in five.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{five:?}");
        }
    }

    #[test]
    fn mcnemar_matches_scipy_binomtest() {
        let cases = [
            (12, 25, 0.04703102743951604),
            (3, 17, 0.0025768280029296875),
            (100, 130, 0.05561357778139238),
            (0, 10, 0.001953125),
            (1, 0, 1.0),
            (5, 5, 1.0),
        ];
        for (b, c, want) in cases {
            let got = mcnemar_exact(b, c);
            assert!(
                (got - want).abs() < 1e-12,
                "b={b} c={c}: got {got}, scipy {want}"
            );
        }
        // Symmetric in its arguments.
        assert_eq!(mcnemar_exact(25, 12), mcnemar_exact(12, 25));
    }

    #[test]
    fn mcnemar_without_discordant_pairs_is_one() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
    }

    #[test]
    fn mcnemar_stays_finite_for_large_counts() {
        // 2^-3000 underflows a naive product; the log-space sum does not lose the tail.
        let p = mcnemar_exact(1400, 1600);
        assert!(p > 0.0 && p < 0.001, "{p}");
    }

    #[test]
    fn holm_on_a_hand_computed_family() {
        // sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> 0.06
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (g, w) in adj.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn bootstrap_is_reproducible_and_brackets_the_difference() {
        let a: Vec<f64> = (0..200)
            .map(|i| if i % 3 == 0 { 0.0 } else { 1.0 })
            .collect();
        let b: Vec<f64> = (0..200)
            .map(|i| if i % 2 == 0 { 0.0 } else { 1.0 })
            .collect();
        let x = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, 7).unwrap();
        let y = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, 7).unwrap();
        assert_eq!(x, y);
        let want = a.iter().sum::<f64>() / 200.0 - b.iter().sum::<f64>() / 200.0;
        assert!((x.diff - want).abs() < 1e-12);
        assert!(x.lo < x.diff && x.diff < x.hi, "{x:?}");
        // The percentile interval is close to the normal-theory one, 2 * 1.96 * SE wide.
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let var = d.iter().map(|v| (v - want).powi(2)).sum::<f64>() / (d.len() - 1) as f64;
        let normal_width = 2.0 * 1.96 * (var / d.len() as f64).sqrt();
        let width = x.hi - x.lo;
        assert!(
            (width / normal_width - 1.0).abs() < 0.1,
            "{width} vs {normal_width}"
        );
        // Another seed gives a close interval.
        let z = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, 8).unwrap();
        assert!((x.lo - z.lo).abs() < 0.03);
    }

    #[test]
    fn bootstrap_of_identical_samples_is_degenerate() {
        let a = vec![1.0, 0.0, 1.0];
        let ci = paired_bootstrap(&a, &a, 100, 1).unwrap();
        assert_eq!((ci.diff, ci.lo, ci.hi, ci.p), (0.0, 0.0, 0.0, 1.0));
        assert!(paired_bootstrap(&[], &[], 100, 1).is_none());
    }

    #[test]
    fn head_to_head_counts() {
        let h = HeadToHead::count(&[true, true, false, false], &[false, true, true, false]);
        assert_eq!((h.wins, h.losses, h.both_right, h.both_wrong), (1, 1, 1, 1));
        assert_eq!(h.ties(), 2);
    }
}
