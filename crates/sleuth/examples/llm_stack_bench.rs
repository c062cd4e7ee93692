//! Overhead of the full middleware stack (cache, budget, rate limit, retry, metering)
//! against the bare provider, both measured in this run on one local server that
//! answers every request after a fixed latency.
//!
//! ```text
//! cargo run --release -p sleuth --example llm_stack_bench -- [REQUESTS] [CONCURRENCY] [LATENCY_MS]
//! ```
//!
//! Defaults: 200 requests at concurrency 32, 100 ms latency. Two lower bounds are
//! printed: total latency / concurrency (625 ms for the defaults), and the bound for a
//! fixed latency, ceil(requests / concurrency) x latency (700 ms), which no client can
//! beat because requests finish in waves.

use futures::StreamExt;
use sleuth::llm::{
    open_provider, open_stack, CacheSpec, ChatModel, ChatRequest, CostBudget, EnvSource, Message,
    ModelOptions, ModelSpec, RateLimit, RetryPolicy,
};
use sleuth_testkit::{MockServer, Reply};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

async fn drive(model: Arc<dyn ChatModel>, requests: u64, concurrency: u64, tag: &str) -> Duration {
    let start = Instant::now();
    let results: Vec<_> = futures::stream::iter(0..requests)
        .map(|i| {
            let model = model.clone();
            let req =
                ChatRequest::new(vec![Message::user(format!("{tag} question {i}"))]).max_tokens(16);
            async move { model.complete(&req).await }
        })
        .buffer_unordered(concurrency as usize)
        .collect()
        .await;
    let failed = results.iter().filter(|r| r.is_err()).count();
    assert_eq!(failed, 0, "{failed} requests failed");
    start.elapsed()
}

#[tokio::main]
async fn main() {
    let (requests, concurrency, latency_ms) = (arg(1, 200), arg(2, 32), arg(3, 100));
    let latency = Duration::from_millis(latency_ms);
    let server = MockServer::spawn(move |_| Reply::delayed(latency, Reply::text("Frank Herbert")));
    let spec = ModelSpec::parse(&format!("openai-compat:{}#bench-model", server.url())).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let opts = ModelOptions {
        timeout: Duration::from_secs(30),
        retry: RetryPolicy::default(),
        cache: Some(CacheSpec::Sqlite(cache.path().to_path_buf())),
        rate_limit: Some(RateLimit {
            requests_per_minute: Some(600_000.0),
            tokens_per_minute: Some(60_000_000.0),
        }),
        budget: Some(CostBudget::new(1000.0)),
        env: EnvSource::isolated(),
        ..ModelOptions::default()
    };

    let bare = open_provider(&spec, &opts).unwrap();
    let stack = open_stack(&spec, &opts).unwrap();
    // Warm both connection pools so neither side pays connection setup in the timing.
    drive(bare.clone(), concurrency, concurrency, "warm-bare").await;
    drive(stack.model(), concurrency, concurrency, "warm-stack").await;

    let t_bare = drive(bare, requests, concurrency, "bare").await;
    let t_stack = drive(stack.model(), requests, concurrency, "stack").await;
    let t_hits = drive(stack.model(), requests, concurrency, "stack").await;

    let ideal = latency.mul_f64(requests as f64 / concurrency as f64);
    let waves = latency * requests.div_ceil(concurrency) as u32;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("requests {requests}, concurrency {concurrency}, server latency {latency_ms} ms");
    println!("ideal (total latency / concurrency): {:8.1} ms", ms(ideal));
    println!("wave bound (ceil(n/c) x latency):   {:8.1} ms", ms(waves));
    println!(
        "bare provider:                      {:8.1} ms  ({:.3}x ideal, {:.3}x wave bound)",
        ms(t_bare),
        ms(t_bare) / ms(ideal),
        ms(t_bare) / ms(waves)
    );
    println!("full stack, all misses:             {:8.1} ms  ({:.3}x ideal, {:.3}x wave bound, {:.3}x bare)", ms(t_stack), ms(t_stack) / ms(ideal), ms(t_stack) / ms(waves), ms(t_stack) / ms(t_bare));
    println!("full stack, all cache hits:         {:8.1} ms", ms(t_hits));
    let s = stack.totals();
    println!(
        "stack totals: calls {}, cache hits {}, retries {}, failures {}",
        s.calls, s.cache_hits, s.retries, s.failures
    );
}
