//! Timing and memory helpers shared by every engine's phase, so all are measured the
//! same way: one warm-up pass, then per-query latencies on one thread over several
//! passes (p50, p99), then throughput with a fixed number of threads splitting the
//! query list.

use serde_json::{json, Value};
use std::time::Instant;

/// Peak resident memory of this process so far (VmHWM), in MiB.
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Total size of the files directly in `dir`, in MiB.
pub fn dir_mib(dir: &std::path::Path) -> f64 {
    let bytes: u64 = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    bytes as f64 / f64::from(1 << 20)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Measures `search(query)` latency and throughput. `search` must be callable from
/// several threads at once.
pub fn query_figures<F>(queries: &[String], passes: usize, threads: usize, search: F) -> Value
where
    F: Fn(&str) + Sync,
{
    for q in queries {
        search(q);
    }
    let mut lat = Vec::with_capacity(queries.len() * passes);
    for _ in 0..passes {
        for q in queries {
            let t = Instant::now();
            search(q);
            lat.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    lat.sort_by(f64::total_cmp);
    let started = Instant::now();
    std::thread::scope(|s| {
        for part in 0..threads {
            let search = &search;
            s.spawn(move || {
                for _ in 0..passes {
                    for q in queries.iter().skip(part).step_by(threads) {
                        search(q);
                    }
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    json!({
        "p50_ms": percentile(&lat, 50.0),
        "p99_ms": percentile(&lat, 99.0),
        "mean_ms": lat.iter().sum::<f64>() / lat.len() as f64,
        "qps": (queries.len() * passes) as f64 / wall,
        "threads": threads,
        "queries": queries.len(),
        "passes": passes,
    })
}

/// The 1-minute load average: the machine is shared, so each figure carries it.
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Prints a phase's result as one machine-readable line for the orchestrator, with the
/// load average at its end.
pub fn emit(v: &Value) {
    let mut v = v.clone();
    v["loadavg"] = json!(load_average());
    println!("RESULT {v}");
}
