//! The response cache's stores and coalescing over a real `redis-server` and a real
//! HTTP server: identical concurrent requests reach the server once, within one stack
//! and across independent stacks (as separate processes would be), and a dead Redis
//! costs calls, never results.

use crate::support::{compat_spec, options, question};
use futures::future::join_all;
use sleuth_llm::middleware::{
    cache_key, CacheEntry, CacheStore, Claim, RedisCache, ResponseCache, FORMAT_VERSION,
};
use sleuth_llm::{
    open_provider, open_stack, CacheSpec, ChatModel, ChatResponse, ModelOptions, ModelStack, Usage,
};
use sleuth_testkit::{MockServer, RedisServer, Reply};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn redis_options(redis: &RedisServer) -> ModelOptions {
    ModelOptions {
        cache: Some(CacheSpec::Redis(redis.url(0))),
        ..options()
    }
}

/// A server that answers every request after `ms`, so concurrent callers overlap.
async fn slow_server(ms: u64) -> MockServer {
    MockServer::start(move |req| {
        Reply::delayed(
            Duration::from_millis(ms),
            Reply::text(format!("reply to {}", req.last_message().unwrap_or("?"))),
        )
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_store_keeps_first_answer_pages_and_counts() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisCache::open_with_prefix(&redis.url(3), "t1").unwrap();
    let key = |i: u32| format!("{i:064x}");
    for i in 0..25u32 {
        let model = if i < 5 { "a" } else { "b" };
        let e = CacheEntry::new(
            &key(i),
            model,
            &ChatResponse::new(format!("r{i}"), Usage::default()),
        );
        assert!(store.put(&e).await.unwrap());
    }
    let dup = CacheEntry::new(&key(1), "a", &ChatResponse::new("late", Usage::default()));
    assert!(!store.put(&dup).await.unwrap(), "the first answer wins");
    let got = store.get(&key(1)).await.unwrap().unwrap();
    assert_eq!(
        (got.response.text.as_str(), got.format),
        ("r1", FORMAT_VERSION)
    );
    assert!(store.get(&key(99)).await.unwrap().is_none());
    let stats = store.stats().await.unwrap();
    assert_eq!(stats.entries, 25);
    assert_eq!((stats.by_model["a"], stats.by_model["b"]), (5, 20));
    // Another prefix on the same server sees none of them.
    let other = RedisCache::open_with_prefix(&redis.url(3), "t2").unwrap();
    assert_eq!(other.stats().await.unwrap().entries, 0);
    assert_eq!(store.delete_all().await.unwrap(), 25);

    // Claims: one owner at a time; released only by its own token.
    let k = key(7);
    let Claim::Owned(token) = store.claim(&k).await.unwrap() else {
        panic!("first claim must be owned");
    };
    assert_eq!(store.claim(&k).await.unwrap(), Claim::Elsewhere);
    assert!(store.claimed(&k).await.unwrap());
    store.release(&k, "someone-else").await.unwrap();
    assert!(store.claimed(&k).await.unwrap());
    assert!(store.renew(&k, &token).await.unwrap());
    store.release(&k, &token).await.unwrap();
    assert!(!store.claimed(&k).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_identical_requests_in_one_stack_make_one_server_request() {
    let server = slow_server(300).await;
    let dir = tempfile::tempdir().unwrap();
    let mut specs = vec![CacheSpec::Sqlite(dir.path().to_path_buf())];
    let redis = RedisServer::start();
    if let Some(r) = &redis {
        specs.push(CacheSpec::Redis(r.url(1)));
    }
    for (i, spec) in specs.into_iter().enumerate() {
        let opts = ModelOptions {
            cache: Some(spec.clone()),
            ..options()
        };
        let stack = open_stack(&compat_spec(&server, "m"), &opts).unwrap();
        let before = server.request_count();
        let q = question(&format!("the same question {i}"));
        let calls = (0..32).map(|_| {
            let model = stack.session();
            let q = q.clone();
            async move { model.complete(&q).await.unwrap() }
        });
        let replies = join_all(calls).await;
        assert_eq!(
            server.request_count() - before,
            1,
            "{spec}: one request for 32 callers"
        );
        assert!(replies.iter().all(|r| r.text == replies[0].text));
        assert_eq!(replies.iter().filter(|r| !r.cached).count(), 1, "{spec}");
        let totals = stack.totals();
        assert_eq!((totals.calls, totals.cache_hits), (32, 31), "{spec}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn identical_requests_from_independent_stacks_share_one_server_request() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = slow_server(500).await;
    // Four stacks with their own Redis connections and no shared memory: four
    // processes in all but address space. Eight callers each.
    let stacks: Vec<_> = (0..4)
        .map(|_| open_stack(&compat_spec(&server, "m"), &redis_options(&redis)).unwrap())
        .collect();
    let q = question("one question for everyone");
    let calls = stacks.iter().flat_map(|stack| {
        (0..8).map(|_| {
            let model = stack.session();
            let q = q.clone();
            async move { model.complete(&q).await.unwrap() }
        })
    });
    let replies = join_all(calls).await;
    assert_eq!(replies.len(), 32);
    assert_eq!(server.request_count(), 1, "one request across four stacks");
    assert_eq!(replies.iter().filter(|r| !r.cached).count(), 1);
    assert!(replies
        .iter()
        .all(|r| r.text == "reply to one question for everyone"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_redis_costs_calls_not_results() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let server = slow_server(0).await;
    let stack = open_stack(&compat_spec(&server, "m"), &redis_options(&redis)).unwrap();
    let model: Arc<dyn ChatModel> = stack.model();
    let first = model.complete(&question("q1")).await.unwrap();
    assert!(!first.cached);
    assert!(model.complete(&question("q1")).await.unwrap().cached);
    assert_eq!(server.request_count(), 1);

    redis.kill();
    // Every call still succeeds; the cache is bypassed, so repeats reach the server.
    for i in 0..5 {
        let r = model
            .complete(&question(&format!("after {i}")))
            .await
            .unwrap();
        assert!(!r.cached);
    }
    let r = model.complete(&question("q1")).await.unwrap();
    assert_eq!(r.text, first.text);
    assert_eq!(server.request_count(), 7);
}

/// A stack over `server` whose cache is a Redis store with claims lasting `ttl`.
fn stack_with_claim_ttl(
    server: &MockServer,
    redis: &RedisServer,
    ttl: Duration,
) -> (sleuth_llm::ModelStack, String) {
    let provider = open_provider(&compat_spec(server, "m"), &options()).unwrap();
    let name = provider.cache_identity().unwrap();
    let store = RedisCache::open(&redis.url(4)).unwrap().with_claim_ttl(ttl);
    let stack = ModelStack::builder(provider).cache(ResponseCache::new(store));
    (stack, name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_claim_whose_owner_died_lapses_and_the_waiter_calls() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = slow_server(0).await;
    let ttl = Duration::from_millis(400);
    let (stack, name) = stack_with_claim_ttl(&server, &redis, ttl);
    let q = question("orphaned");
    // A process that claimed the request and was killed before answering.
    let dead = RedisCache::open(&redis.url(4)).unwrap().with_claim_ttl(ttl);
    assert!(matches!(
        dead.claim(&cache_key(&name, &q)).await.unwrap(),
        Claim::Owned(_)
    ));
    let t = Instant::now();
    let r = stack.model().complete(&q).await.unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    assert!(!r.cached);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_live_owner_keeps_its_claim_past_the_ttl() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // The call takes four claim lifetimes: without renewal the waiter would call too.
    let server = slow_server(2400).await;
    let ttl = Duration::from_millis(600);
    let (owner, _) = stack_with_claim_ttl(&server, &redis, ttl);
    let (waiter, _) = stack_with_claim_ttl(&server, &redis, ttl);
    let q = question("slow one");
    let first = {
        let (m, q) = (owner.model(), q.clone());
        tokio::spawn(async move { m.complete(&q).await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = waiter.model().complete(&q).await.unwrap();
    let first = first.await.unwrap();
    assert_eq!(server.request_count(), 1);
    assert!(!first.cached && second.cached);
    assert_eq!(first.text, second.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_cache_comes_back_with_the_server() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let server = slow_server(0).await;
    let provider = open_provider(&compat_spec(&server, "m"), &options()).unwrap();
    let store = RedisCache::open(&redis.url(0)).unwrap();
    let cache = ResponseCache::with_retry_after(store.clone(), Duration::from_millis(200));
    let model = ModelStack::builder(provider).cache(cache).model();
    model.complete(&question("before")).await.unwrap();

    redis.kill();
    assert!(!model.complete(&question("during")).await.unwrap().cached);
    redis.restart();
    // Once the rest is over, the store is used again (the killed server's entries
    // are gone: it ran without persistence).
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(!model.complete(&question("after")).await.unwrap().cached);
    assert!(model.complete(&question("after")).await.unwrap().cached);
    assert_eq!(store.stats().await.unwrap().entries, 1);
    assert_eq!(server.request_count(), 3);
}
