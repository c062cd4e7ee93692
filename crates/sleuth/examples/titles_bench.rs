//! How the shown titles of a pool scale with a title repeated k times (hardening III,
//! item 8): `sleuth::data::display_titles` against the list-scanning naming it replaced,
//! both measured in this run.
//!
//! ```text
//! cargo run --release -p sleuth --example titles_bench -- [MAX_K]
//! ```
//!
//! For k = 1,000 up to MAX_K (default 64,000), doubling: the median of five calls, its
//! ratio to k = 1,000 (linear time gives k / 1,000) and, up to k = 2,000, the old
//! naming's time and how many times slower it is.

use sleuth::data::{display_titles, Paragraph};
use std::time::{Duration, Instant};

/// The naming before the fix: each candidate checked against every title shown so far.
fn scanning(paragraphs: &[Paragraph]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(paragraphs.len());
    for p in paragraphs {
        let mut n = 1;
        let mut title = p.title.clone();
        while out.contains(&title) {
            n += 1;
            title = format!("{} ({n})", p.title);
        }
        out.push(title);
    }
    out
}

fn median(mut f: impl FnMut() -> Vec<String>) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

fn main() {
    let max_k: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(64_000);
    println!(
        "{:>7}  {:>10}  {:>9}  {:>7}  {:>12}  {:>7}",
        "k", "ms", "ratio", "linear", "scanning ms", "slower"
    );
    let mut base = None;
    let mut k = 1_000;
    while k <= max_k {
        let pool: Vec<Paragraph> = (0..k).map(|_| Paragraph::new("Same", vec![])).collect();
        let now = median(|| display_titles(&pool));
        let base = *base.get_or_insert(now);
        let (old, slower) = if k <= 2_000 {
            assert_eq!(display_titles(&pool), scanning(&pool), "the same names");
            let old = median(|| scanning(&pool));
            (
                format!("{:.1}", old.as_secs_f64() * 1e3),
                format!("{:.0}x", old.as_secs_f64() / now.as_secs_f64()),
            )
        } else {
            ("-".into(), "-".into())
        };
        println!(
            "{k:>7}  {:>10.3}  {:>9.2}  {:>7.0}  {old:>12}  {slower:>7}",
            now.as_secs_f64() * 1e3,
            now.as_secs_f64() / base.as_secs_f64(),
            k as f64 / 1_000.0,
        );
        k *= 2;
    }
}
