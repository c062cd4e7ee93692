//! Parse-time bounds of numeric arguments, so an out-of-range number (`--concurrency 0`,
//! `--timeout 0`, `--rpm -1`, `--b 2`) is refused by clap with the argument's name
//! before anything runs, instead of being clamped or hanging a run later.
//!
//! Integers use clap's ranged parsers ([`count`] for usize); real numbers go through the
//! functions below (clap has no ranged float parser). NaN and infinities are refused
//! everywhere.

use clap::builder::RangedU64ValueParser;
use std::ops::RangeBounds;

/// A count (usize) in `range`. Other integer types use `clap::value_parser!(u32)`
/// and the like with `.range(..)` directly.
pub fn count(range: impl RangeBounds<u64>) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(range)
}

fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{s} is not a finite number"))
    }
}

/// A finite number > 0 (a cost cap, a rate).
pub fn positive(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} must be greater than 0"))
    }
}

/// A finite number > 0, as f32.
pub fn positive_f32(s: &str) -> Result<f32, String> {
    let v = positive(s)?;
    if v <= f64::from(f32::MAX) {
        Ok(v as f32)
    } else {
        Err(format!("{v} is too large"))
    }
}

/// A finite number >= 0 (BM25's k1).
pub fn non_negative(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} must be 0 or more"))
    }
}

/// A number from 0 to 1 inclusive (BM25's b).
pub fn unit_interval(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} must be between 0 and 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reals_are_bounded_and_finite() {
        assert_eq!(positive("0.5"), Ok(0.5));
        for bad in ["0", "-1", "nan", "inf", "x", ""] {
            assert!(positive(bad).is_err(), "{bad}");
        }
        assert_eq!(non_negative("0"), Ok(0.0));
        assert!(non_negative("-0.1").is_err());
        assert_eq!(unit_interval("1"), Ok(1.0));
        assert!(unit_interval("1.01").is_err());
        assert!(positive_f32("1e300").is_err());
    }
}
