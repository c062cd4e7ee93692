//! The shared response cache, measured: lookup latency on Redis versus SQLite for
//! 10,000 entries, and the requests a 4-shard run of a recipe sends with a cold versus
//! a warm shared cache. Both parts run in this process's one invocation, against a real
//! `redis-server` it starts on a free loopback port and a local model server.
//!
//! ```text
//! cargo build --release -p sleuth-cli --no-default-features
//! cargo run --release -p sleuth-cli --no-default-features --example cache_bench -- [ENTRIES] [LIMIT]
//! ```
//!
//! ENTRIES (10000) is the cache size of the lookup part; LIMIT (8) the questions per
//! split of the recipe (experiments/nudge-sweep.toml: 11 jobs on 4-hop MuSiQue). The
//! recipe part runs the `sleuth` binary built next to this example (four processes,
//! `--shard i/4`, like four array tasks); set SLEUTH_BIN to use another.

use futures::StreamExt;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use sleuth::llm::middleware::{CacheEntry, CacheStore, RedisCache, SqliteCache};
use sleuth::llm::{ChatResponse, Usage};
use sleuth_testkit::{MockServer, ReceivedRequest, RedisServer, Reply};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn arg(i: usize, default: usize) -> usize {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// A response of typical size for an agent turn (about 1.2 KB of text).
fn entry(i: usize) -> CacheEntry {
    let text = format!("Confirmed Facts:\n- [F1] fact number {i} (source: Title {i})\n").repeat(20);
    let usage = Usage {
        input_tokens: 1800,
        output_tokens: 300,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
    };
    CacheEntry::new(
        &format!("{i:064x}"),
        "openai:gpt-4o-mini",
        &ChatResponse::new(text, usage),
    )
}

struct Latency {
    mean_us: f64,
    p50_us: f64,
    p99_us: f64,
    concurrent_per_s: f64,
}

async fn measure(store: Arc<dyn CacheStore>, n: usize) -> Latency {
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        let puts = chunk.iter().map(|&i| {
            let store = store.clone();
            async move { store.put(&entry(i)).await.unwrap() }
        });
        futures::future::join_all(puts).await;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(7));
    // Sequential hits: one caller's lookup latency.
    let mut times = Vec::with_capacity(n);
    for &i in &order {
        let key = format!("{i:064x}");
        let t = Instant::now();
        let hit = store.get(&key).await.unwrap();
        times.push(t.elapsed());
        assert!(hit.is_some(), "entry {i} missing");
    }
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean_us = times.iter().map(|d| us(*d)).sum::<f64>() / n as f64;
    // 32 callers at once, as a busy eval process has.
    let t = Instant::now();
    futures::stream::iter(order.clone())
        .map(|i| {
            let store = store.clone();
            async move { store.get(&format!("{i:064x}")).await.unwrap() }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    Latency {
        mean_us,
        p50_us: us(times[n / 2]),
        p99_us: us(times[n * 99 / 100]),
        concurrent_per_s: n as f64 / t.elapsed().as_secs_f64(),
    }
}

fn sleuth_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SLEUTH_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current exe");
    let bin = exe.parent().and_then(Path::parent).unwrap().join("sleuth");
    assert!(
        bin.is_file(),
        "{} not found: build it first (cargo build --release -p sleuth-cli --no-default-features) or set SLEUTH_BIN",
        bin.display()
    );
    bin
}

/// Memory-notation turns that search until turn 8, then answer: every method of the
/// recipe runs its loop, nudges included.
fn agent_reply(req: &ReceivedRequest) -> Reply {
    let turn = req.body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count())
        + 1;
    let action = if turn >= 8 {
        "finish[an answer]".to_string()
    } else {
        format!("search[clue {turn}]")
    };
    Reply::delayed(
        Duration::from_millis(5),
        Reply::text(format!(
            "Confirmed Facts:\n- [F1] first point (source: A)\n- [F2] second point (source: B)\n\
             Active Hypotheses:\n- [H1] a candidate | confidence: medium | supports: F1 | contradicts: -\n\
             Open Questions:\n- [Q1] what next? | action: clue | priority: high\nAction: {action}"
        )),
    )
}

struct ShardedRun {
    calls: u64,
    hits: u64,
    requests: usize,
    wall: Duration,
}

/// Four `sleuth experiment --shard i/4` processes at once, sharing `cache`.
fn four_shards(
    bin: &Path,
    server: &MockServer,
    cache: &str,
    out: &Path,
    limit: usize,
) -> ShardedRun {
    let recipe =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/nudge-sweep.toml");
    let data_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let model = format!("openai-compat:{}#bench-model", server.url());
    let before = server.request_count();
    let start = Instant::now();
    let children: Vec<_> = (1..=4)
        .map(|i| {
            Command::new(bin)
                .arg("experiment")
                .arg(&recipe)
                .args(["--model", &model, "--limit", &limit.to_string()])
                .arg("--data-root")
                .arg(&data_root)
                .arg("--out")
                .arg(out)
                .args(["--shard", &format!("{i}/4"), "--cache", cache])
                .env_remove("SLEUTH_NO_CACHE")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn sleuth")
        })
        .collect();
    let (mut calls, mut hits) = (0u64, 0u64);
    for c in children {
        let o = c.wait_with_output().unwrap();
        let log = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "a shard failed:\n{log}");
        // One line per job: "model calls N (retries R, cache hits H), ...".
        for line in log.lines().filter(|l| l.starts_with("model calls ")) {
            let num = |after: &str| -> u64 {
                line.split(after)
                    .nth(1)
                    .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                    .unwrap_or(0)
            };
            calls += num("model calls ");
            hits += num("cache hits ");
        }
    }
    ShardedRun {
        calls,
        hits,
        requests: server.request_count() - before,
        wall: start.elapsed(),
    }
}

#[tokio::main]
async fn main() {
    let (entries, limit) = (arg(1, 10_000), arg(2, 8));
    let Some(redis) = RedisServer::start() else {
        eprintln!("cache_bench needs redis-server");
        std::process::exit(2);
    };
    println!("## Lookup latency, {entries} entries (~1.4 KB each), one process");
    let dir = tempfile::tempdir().unwrap();
    let sqlite = measure(Arc::new(SqliteCache::open(dir.path()).unwrap()), entries).await;
    let redis_store = RedisCache::open_with_prefix(&redis.url(0), "bench").unwrap();
    let remote = measure(redis_store, entries).await;
    println!("| store  | mean µs | p50 µs | p99 µs | lookups/s at 32 in flight |");
    println!("| ------ | ------: | -----: | -----: | ------------------------: |");
    for (name, l) in [("SQLite", &sqlite), ("Redis", &remote)] {
        println!(
            "| {name:<6} | {:>7.1} | {:>6.1} | {:>6.1} | {:>25.0} |",
            l.mean_us, l.p50_us, l.p99_us, l.concurrent_per_s
        );
    }
    println!(
        "Redis / SQLite: mean latency x{:.2}, p99 x{:.2}, throughput at 32 in flight x{:.2}\n",
        remote.mean_us / sqlite.mean_us,
        remote.p99_us / sqlite.p99_us,
        remote.concurrent_per_s / sqlite.concurrent_per_s
    );

    let bin = sleuth_bin();
    let server = MockServer::spawn(agent_reply);
    let url = redis.url(1);
    let runs = tempfile::tempdir().unwrap();
    println!(
        "## experiments/nudge-sweep.toml, --limit {limit}, 4 shards in parallel, one Redis cache"
    );
    let cold = four_shards(&bin, &server, &url, &runs.path().join("cold"), limit);
    let warm = four_shards(&bin, &server, &url, &runs.path().join("warm"), limit);
    println!("| cache | model calls | cache hits | requests sent | wall s |");
    println!("| ----- | ----------: | ---------: | ------------: | -----: |");
    for (name, r) in [("cold", &cold), ("warm", &warm)] {
        println!(
            "| {name:<5} | {:>11} | {:>10} | {:>13} | {:>6.1} |",
            r.calls,
            r.hits,
            r.requests,
            r.wall.as_secs_f64()
        );
    }
    println!(
        "cold run: {} of {} calls sent ({:.1}%; the rest shared by jobs of one shard before their settings diverge); warm run: {} sent ({:.1}% of cold); wall time warm/cold x{:.2}",
        cold.requests,
        cold.calls,
        100.0 * cold.requests as f64 / cold.calls.max(1) as f64,
        warm.requests,
        100.0 * warm.requests as f64 / cold.requests.max(1) as f64,
        warm.wall.as_secs_f64() / cold.wall.as_secs_f64()
    );
}
