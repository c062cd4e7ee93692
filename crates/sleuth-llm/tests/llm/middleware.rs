//! The middleware stack over real HTTP: retries, response cache, budget, rate limit.

use crate::support::{compat_spec, fast_retry, options, question};
use sleuth_llm::middleware::SqliteCache;
use sleuth_llm::CacheSpec;
use sleuth_llm::{
    open_stack, ChatModel, CostBudget, LlmError, ModelOptions, ModelSpec, Price, PriceTable,
    RateLimit,
};
use sleuth_testkit::{sequence, MockServer, Reply};
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn one_call(
    replies: Vec<Reply>,
    opts: ModelOptions,
) -> (Result<String, LlmError>, u64, u64, usize, Duration) {
    let server = MockServer::start(sequence(replies)).await;
    let stack = open_stack(&compat_spec(&server, "m"), &opts).unwrap();
    let session = stack.session();
    let t = Instant::now();
    let result = session.complete(&question("q")).await.map(|r| r.text);
    let s = session.stats().snapshot();
    (
        result,
        s.retries,
        s.calls,
        server.request_count(),
        t.elapsed(),
    )
}

#[tokio::test]
async fn rate_limited_then_ok_waits_at_least_retry_after() {
    let (result, retries, calls, requests, elapsed) =
        one_call(vec![Reply::rate_limited(1), Reply::text("ok")], options()).await;
    assert_eq!(result.unwrap(), "ok");
    assert_eq!((retries, calls, requests), (1, 1, 2));
    assert!(
        elapsed >= Duration::from_secs(1),
        "Retry-After: 1 not honoured: {elapsed:?}"
    );
}

#[tokio::test]
async fn transient_failures_are_retried() {
    for first in [
        Reply::status(500),
        Reply::anthropic_error(529, "overloaded_error", "Overloaded"),
        Reply::CloseConnection,
        Reply::Truncated,
        Reply::Malformed("{\"choices\": [".into()),
    ] {
        let label = format!("{first:?}");
        let (result, retries, calls, requests, _) =
            one_call(vec![first, Reply::text("ok")], options()).await;
        assert_eq!(result.unwrap(), "ok", "{label}");
        assert_eq!((retries, calls, requests), (1, 1, 2), "{label}");
    }
}

#[tokio::test]
async fn a_hang_times_out_and_is_retried() {
    let opts = ModelOptions {
        timeout: Duration::from_millis(200),
        ..options()
    };
    let (result, retries, _, requests, elapsed) = one_call(
        vec![Reply::Hang(Duration::from_secs(10)), Reply::text("ok")],
        opts,
    )
    .await;
    assert_eq!(result.unwrap(), "ok");
    assert_eq!((retries, requests), (1, 2));
    assert!(
        elapsed >= Duration::from_millis(200) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn auth_errors_are_not_retried_and_attempts_are_capped() {
    let (result, retries, calls, requests, _) = one_call(
        vec![
            Reply::openai_error(401, "invalid_api_key", "bad key"),
            Reply::text("ok"),
        ],
        options(),
    )
    .await;
    assert!(matches!(result, Err(LlmError::Http { status: 401, .. })));
    assert_eq!((retries, calls, requests), (0, 1, 1));

    let opts = ModelOptions {
        retry: fast_retry(3),
        ..options()
    };
    let (result, retries, _, requests, _) = one_call(vec![Reply::status(503)], opts).await;
    assert!(matches!(result, Err(LlmError::Http { status: 503, .. })));
    assert_eq!((retries, requests), (2, 3));
}

#[tokio::test]
async fn cache_hit_makes_no_network_call_and_returns_identical_text_and_usage() {
    let server = MockServer::start(|req| Reply::text(format!("answer {}", req.index))).await;
    let dir = tempfile::tempdir().unwrap();
    let opts = ModelOptions {
        cache: Some(CacheSpec::Sqlite(dir.path().to_path_buf())),
        env: options()
            .env
            .set("OPENAI_API_KEY", "sk-test")
            .set("OPENAI_BASE_URL", server.url()),
        ..options()
    };
    let spec = ModelSpec::parse("openai:gpt-4o-mini").unwrap();
    let first = open_stack(&spec, &opts).unwrap().session();
    let a = first.complete(&question("Who wrote Dune?")).await.unwrap();
    assert!(!a.cached);
    assert_eq!(server.request_count(), 1);
    let billed = first.stats().snapshot().cost_usd;
    assert!(billed > 0.0, "gpt-4o-mini has a default price");

    // A new stack on the same directory, as a rerun would have.
    let second = open_stack(&spec, &opts).unwrap().session();
    let b = second.complete(&question("Who wrote Dune?")).await.unwrap();
    assert_eq!(
        server.request_count(),
        1,
        "cache hit must not call the server"
    );
    assert!(b.cached);
    assert_eq!(
        (b.text.as_str(), b.usage, b.finish_reason),
        (a.text.as_str(), a.usage, a.finish_reason)
    );
    let s = second.stats().snapshot();
    assert_eq!((s.calls, s.cache_hits, s.cost_usd), (1, 1, 0.0));
    assert_eq!(s.list_cost_usd, billed);
    assert_eq!(s.usage, a.usage);

    // A deliberate second sample is a different request.
    let c = second
        .complete(&question("Who wrote Dune?").temperature(0.7).sample_index(1))
        .await
        .unwrap();
    assert_eq!((c.text.as_str(), c.cached), ("answer 1", false));
}

#[tokio::test]
async fn errors_are_never_cached() {
    let server = MockServer::start(sequence(vec![
        Reply::openai_error(400, "invalid_request", "no"),
        Reply::text("ok"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let opts = ModelOptions {
        cache: Some(CacheSpec::Sqlite(dir.path().to_path_buf())),
        ..options()
    };
    let model = open_stack(&compat_spec(&server, "m"), &opts)
        .unwrap()
        .model();
    assert!(model.complete(&question("q")).await.is_err());
    assert_eq!(model.complete(&question("q")).await.unwrap().text, "ok");
    assert_eq!(server.request_count(), 2);
    assert_eq!(SqliteCache::open(dir.path()).unwrap().len().unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cache_survives_concurrent_writers() {
    let server = MockServer::start(|req| {
        Reply::text(format!("reply to {}", req.last_message().unwrap_or("?")))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let opts = ModelOptions {
        cache: Some(CacheSpec::Sqlite(dir.path().to_path_buf())),
        ..options()
    };
    let spec = compat_spec(&server, "m");
    let (writers, per_writer) = (8, 20);
    let mut tasks = Vec::new();
    for w in 0..writers {
        // Each writer opens its own stack, hence its own SQLite connection, like a
        // separate process sharing the cache directory.
        let model = open_stack(&spec, &opts).unwrap().model();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_writer {
                // Overlapping questions: writers race to insert the same keys too.
                let q = format!("question {}", (w * per_writer + i) % 100);
                model.complete(&question(&q)).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let cache = SqliteCache::open(dir.path()).unwrap();
    assert_eq!(cache.len().unwrap(), 100);
    let before = server.request_count();
    let model = open_stack(&spec, &opts).unwrap().model();
    for q in 0..100 {
        let r = model
            .complete(&question(&format!("question {q}")))
            .await
            .unwrap();
        assert!(r.cached);
        assert_eq!(r.text, format!("reply to question {q}"));
    }
    assert_eq!(server.request_count(), before, "every question was cached");
}

#[tokio::test]
async fn budget_refuses_once_spent_and_is_not_retried() {
    let server = MockServer::start(|_| Reply::text("one two three four")).await;
    let mut prices = PriceTable::empty();
    // $1 per token, so each call (7 prompt + 4 output words) costs $11.
    prices.insert(
        "m",
        Price {
            input: 1e6,
            output: 1e6,
            cached_input: None,
            cache_write: None,
            batch: None,
        },
    );
    let budget = CostBudget::new(25.0);
    let opts = ModelOptions {
        prices: Arc::new(prices),
        budget: Some(budget.clone()),
        ..options()
    };
    let stack = open_stack(&compat_spec(&server, "m"), &opts).unwrap();
    let model = stack.session();
    let req = question("one two three four five");
    assert!(model.complete(&req).await.is_ok());
    assert!(model.complete(&req).await.is_ok());
    let refused = model.complete(&req).await.unwrap_err();
    assert!(matches!(refused, LlmError::Refused(_)), "{refused}");
    assert_eq!(
        server.request_count(),
        2,
        "a refused call never reaches the server"
    );
    assert!(
        (budget.spent_usd() - 22.0).abs() < 1e-6,
        "{}",
        budget.spent_usd()
    );
    let s = model.stats().snapshot();
    assert_eq!((s.calls, s.failures, s.retries), (3, 1, 0));
    assert!((s.cost_usd - 22.0).abs() < 1e-6);
    assert_eq!(stack.totals(), s);
}

#[tokio::test]
async fn rate_limit_spaces_requests_across_concurrent_callers() {
    let server = MockServer::start(|_| Reply::text("ok")).await;
    // 1200/min = 20/s: a burst of 20, then one every 50 ms.
    let opts = ModelOptions {
        rate_limit: Some(RateLimit {
            requests_per_minute: Some(1200.0),
            tokens_per_minute: None,
        }),
        ..options()
    };
    let model = open_stack(&compat_spec(&server, "m"), &opts)
        .unwrap()
        .model();
    let t = Instant::now();
    let calls = (0..30).map(|i| {
        let model = model.clone();
        async move { model.complete(&question(&format!("q{i}"))).await.unwrap() }
    });
    futures::future::join_all(calls).await;
    let elapsed = t.elapsed();
    // 10 past the burst at 50 ms each.
    assert!(elapsed >= Duration::from_millis(480), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}");
    assert_eq!(server.request_count(), 30);
}
