//! The cache in front of a model: lookups, coalescing and graceful degradation.
//!
//! Coalescing happens twice. In-process, concurrent identical requests share one
//! `OnceCell`: the first caller runs the lookup-call-store sequence, the rest await its
//! outcome (a coalesced caller's response counts as a cache hit, billed 0). Across
//! processes, the caller that misses asks the store for a claim on the key: the owner
//! calls the model and stores the entry; the others poll for that entry (backing off to
//! 250 ms) and take the claim over if it lapses without one (its owner died or failed).
//!
//! A store that fails is bypassed, never fatal: the first failure logs one warning and
//! the store is left alone for [`RETRY_STORE_AFTER`]; each later attempt that fails stays
//! quiet, and the first that succeeds logs that the cache is back. Calls made meanwhile
//! go straight to the model, so records are never lost to a cache outage.

use super::{cache_key, CacheEntry, CacheError, CacheSpec, CacheStore, Claim};
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// How long a failed store is left alone before it is tried again.
pub const RETRY_STORE_AFTER: Duration = Duration::from_secs(30);
/// The longest a caller waits on another process's claim before calling itself.
const MAX_CLAIM_WAIT: Duration = Duration::from_secs(15 * 60);

type Outcome = Result<ChatResponse, LlmError>;

/// A store shared by every session of a model stack.
pub struct ResponseCache {
    store: Arc<dyn CacheStore>,
    retry_after: Duration,
    inflight: Mutex<HashMap<String, Arc<OnceCell<Outcome>>>>,
    /// When the store failed last, while it is considered down.
    down_since: Mutex<Option<Instant>>,
    in_outage: AtomicBool,
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("store", &self.store.location())
            .finish()
    }
}

impl ResponseCache {
    pub fn new(store: Arc<dyn CacheStore>) -> Arc<ResponseCache> {
        ResponseCache::with_retry_after(store, RETRY_STORE_AFTER)
    }

    /// Like [`ResponseCache::new`], trying a failed store again after `retry_after`.
    pub fn with_retry_after(
        store: Arc<dyn CacheStore>,
        retry_after: Duration,
    ) -> Arc<ResponseCache> {
        Arc::new(ResponseCache {
            store,
            retry_after,
            inflight: Mutex::new(HashMap::new()),
            down_since: Mutex::new(None),
            in_outage: AtomicBool::new(false),
        })
    }

    /// Opens the store `spec` names.
    pub fn open(spec: &CacheSpec) -> Result<Arc<ResponseCache>, CacheError> {
        Ok(ResponseCache::new(spec.open()?))
    }

    pub fn store(&self) -> &Arc<dyn CacheStore> {
        &self.store
    }

    pub fn location(&self) -> String {
        self.store.location()
    }

    /// Runs one store operation unless the store is resting after a failure; `None`
    /// when skipped or failed (the caller then acts as if there were no cache).
    async fn guard<T>(&self, op: impl Future<Output = Result<T, CacheError>>) -> Option<T> {
        if let Some(t) = *self.down_since.lock().expect("cache health") {
            if t.elapsed() < self.retry_after {
                return None;
            }
        }
        match op.await {
            Ok(v) => {
                if self.in_outage.swap(false, Ordering::SeqCst) {
                    tracing::warn!("response cache {} is reachable again", self.location());
                }
                *self.down_since.lock().expect("cache health") = None;
                Some(v)
            }
            Err(e @ CacheError::Corrupt { .. }) => {
                tracing::warn!("{e}; treated as a miss");
                None
            }
            Err(e) => {
                *self.down_since.lock().expect("cache health") = Some(Instant::now());
                if !self.in_outage.swap(true, Ordering::SeqCst) {
                    tracing::warn!(
                        "{e}; continuing without the response cache (calls go to the model; retrying the cache every {} s)",
                        self.retry_after.as_secs_f64()
                    );
                }
                None
            }
        }
    }

    fn slot(&self, key: &str) -> Arc<OnceCell<Outcome>> {
        let mut map = self.inflight.lock().expect("inflight lock");
        map.entry(key.to_string()).or_default().clone()
    }

    fn vacate(&self, key: &str, slot: &Arc<OnceCell<Outcome>>) {
        let mut map = self.inflight.lock().expect("inflight lock");
        if map.get(key).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            map.remove(key);
        }
    }
}

/// Serves repeated requests from the cache; stores fresh successful responses.
pub struct CacheLayer {
    inner: Arc<dyn ChatModel>,
    cache: Arc<ResponseCache>,
    /// The provider's [`ChatModel::cache_identity`], hashed into every key.
    identity: String,
}

impl CacheLayer {
    pub fn new(inner: Arc<dyn ChatModel>, cache: Arc<ResponseCache>, identity: String) -> Self {
        CacheLayer {
            inner,
            cache,
            identity,
        }
    }

    /// The leader's path: lookup, then claim (or wait on another process's), then
    /// call and store.
    async fn lead(&self, key: &str, request: &ChatRequest) -> Outcome {
        let cache = &self.cache;
        let store = cache.store.clone();
        let started = Instant::now();
        let mut delay = Duration::from_millis(10);
        loop {
            match cache.guard(store.get(key)).await {
                Some(Some(entry)) => return Ok(entry.hit()),
                Some(None) => {}
                None => return self.call_and_store(key, request, None).await,
            }
            match cache.guard(store.claim(key)).await {
                Some(Claim::Owned(token)) => {
                    // The previous owner may have stored its entry and released the
                    // claim between our lookup and our claim.
                    if let Some(Some(entry)) = cache.guard(store.get(key)).await {
                        let _ = cache.guard(store.release(key, &token)).await;
                        return Ok(entry.hit());
                    }
                    return self.call_and_store(key, request, Some(token)).await;
                }
                Some(Claim::Elsewhere) if started.elapsed() < MAX_CLAIM_WAIT => {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_millis(250));
                }
                Some(Claim::Elsewhere) | Some(Claim::Unshared) | None => {
                    return self.call_and_store(key, request, None).await
                }
            }
        }
    }

    async fn call_and_store(
        &self,
        key: &str,
        request: &ChatRequest,
        token: Option<String>,
    ) -> Outcome {
        let claim = token.map(|t| ClaimGuard::hold(self.cache.store.clone(), key, t));
        let result = self.inner.complete(request).await;
        if let Ok(response) = &result {
            let entry = CacheEntry::new(key, self.inner.name(), response);
            let _ = self.cache.guard(self.cache.store.put(&entry)).await;
        }
        if let Some(mut claim) = claim {
            let token = claim.finish();
            let _ = self
                .cache
                .guard(self.cache.store.release(key, &token))
                .await;
        }
        result
    }
}

/// Keeps a claim renewed while its owner's call runs; if the call is abandoned
/// (its future dropped), releases the claim in the background.
struct ClaimGuard {
    store: Arc<dyn CacheStore>,
    key: String,
    token: Option<String>,
    renewer: tokio::task::JoinHandle<()>,
}

impl ClaimGuard {
    fn hold(store: Arc<dyn CacheStore>, key: &str, token: String) -> ClaimGuard {
        let (s, k, t) = (store.clone(), key.to_string(), token.clone());
        let period = store.claim_ttl().unwrap_or(Duration::from_secs(30)) / 3;
        let renewer = tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                if !matches!(s.renew(&k, &t).await, Ok(true)) {
                    return; // lost or unreachable: waiters will take over
                }
            }
        });
        ClaimGuard {
            store,
            key: key.to_string(),
            token: Some(token),
            renewer,
        }
    }

    /// Stops renewing; the caller releases the returned token itself.
    fn finish(&mut self) -> String {
        self.renewer.abort();
        self.token.take().unwrap_or_default()
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        self.renewer.abort();
        if let (Some(token), Ok(rt)) = (self.token.take(), tokio::runtime::Handle::try_current()) {
            let (store, key) = (self.store.clone(), self.key.clone());
            rt.spawn(async move {
                let _ = store.release(&key, &token).await;
            });
        }
    }
}

#[async_trait]
impl ChatModel for CacheLayer {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let key = cache_key(&self.identity, request);
        let slot = self.cache.slot(&key);
        let mut led = false;
        let outcome = slot
            .get_or_init(|| {
                led = true;
                self.lead(&key, request)
            })
            .await
            .clone();
        if led {
            self.cache.vacate(&key, &slot);
        }
        outcome.map(|mut r| {
            if !led {
                // Served by another caller's call: a hit for this one, billed 0.
                r.cached = true;
            }
            r
        })
    }
}
