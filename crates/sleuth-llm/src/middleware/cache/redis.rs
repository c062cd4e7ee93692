//! The shared store: entries on a Redis server, for every shard of a cluster run.
//!
//! Layout (all under one prefix, `sleuth` by default):
//!
//! - `PREFIX:response:KEY` holds the [`CacheEntry`] as JSON, written with `SET NX` so
//!   the first answer wins, never expiring (size the server with `maxmemory-policy
//!   noeviction`, or accept that an evicted entry costs one more call).
//! - `PREFIX:claim:KEY` holds the token of the process computing KEY, written with
//!   `SET NX PX` so a killed process's claim lapses after [`CLAIM_TTL`]; its owner
//!   renews it while its call runs and deletes it (only if still its own) when done.
//!
//! The client is the `redis` crate over one multiplexed connection (concurrent commands
//! share it). Every command has a short timeout and a failed command drops the
//! connection, so a dead server costs each caller at most one timeout before
//! [`super::ResponseCache`] stops asking it.

use super::{CacheEntry, CacheError, CacheStats, CacheStore, Claim, Page};
use async_trait::async_trait;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How long a claim lives without renewal: long enough that a busy owner renews it,
/// short enough that the waiters of a killed owner are not held up for long.
pub const CLAIM_TTL: Duration = Duration::from_secs(30);
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

const RENEW_SCRIPT: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE_SCRIPT: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

pub struct RedisCache {
    client: Client,
    location: String,
    prefix: String,
    claim_ttl: Duration,
    conn: Mutex<Option<MultiplexedConnection>>,
}

impl std::fmt::Debug for RedisCache {
    // Not derived: the client's connection info holds the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCache")
            .field("location", &self.location)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisCache {
    /// Opens the cache at `url` (`redis://[user:password@]host:port/db`) and checks
    /// that the server answers now: a wrong address fails a run at its start rather
    /// than running it uncached. (Later outages degrade to no cache; see
    /// [`super::ResponseCache`].)
    pub fn open(url: &str) -> Result<Arc<RedisCache>, CacheError> {
        Self::open_with_prefix(url, "sleuth")
    }

    /// Like [`RedisCache::open`], with every key under `prefix:` (benchmarks and tests
    /// keep their entries apart from a real cache this way).
    pub fn open_with_prefix(url: &str, prefix: &str) -> Result<Arc<RedisCache>, CacheError> {
        let location = super::redact(url);
        let client = Client::open(url).map_err(|e| {
            let at = crate::knob::Knob::Cache.with(&location);
            CacheError::Config(format!("{at}: not a Redis URL: {e}"))
        })?;
        let cache = RedisCache {
            client,
            location,
            prefix: prefix.to_string(),
            claim_ttl: CLAIM_TTL,
            conn: Mutex::new(None),
        };
        // A blocking PING: this runs once, before any model call.
        let pong: String = cache
            .client
            .get_connection_with_timeout(COMMAND_TIMEOUT)
            .and_then(|mut c| {
                c.set_read_timeout(Some(COMMAND_TIMEOUT))?;
                redis::cmd("PING").query(&mut c)
            })
            .map_err(|e| cache.fail(format!("cannot reach the server: {e}")))?;
        if pong != "PONG" {
            return Err(cache.fail(format!("PING answered {pong:?}")));
        }
        Ok(Arc::new(cache))
    }

    /// The same cache with claims that lapse after `ttl` (tests of a dead owner).
    pub fn with_claim_ttl(mut self: Arc<Self>, ttl: Duration) -> Arc<RedisCache> {
        Arc::get_mut(&mut self)
            .expect("set the claim TTL before sharing the cache")
            .claim_ttl = ttl;
        self
    }

    fn fail(&self, message: impl std::fmt::Display) -> CacheError {
        CacheError::Unavailable {
            location: self.location.clone(),
            message: message.to_string(),
        }
    }

    fn entry_key(&self, key: &str) -> String {
        format!("{}:response:{key}", self.prefix)
    }

    fn claim_key(&self, key: &str) -> String {
        format!("{}:claim:{key}", self.prefix)
    }

    async fn connection(&self) -> Result<MultiplexedConnection, CacheError> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(COMMAND_TIMEOUT)
            .set_response_timeout(COMMAND_TIMEOUT);
        let connect = self
            .client
            .get_multiplexed_async_connection_with_config(&config);
        let conn = tokio::time::timeout(COMMAND_TIMEOUT * 2, connect)
            .await
            .map_err(|_| self.fail("connection timed out"))?
            .map_err(|e| self.fail(e))?;
        *slot = Some(conn.clone());
        Ok(conn)
    }

    /// Runs one command with a timeout; a failure drops the connection so the next
    /// command reconnects.
    async fn run<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, CacheError> {
        let mut conn = self.connection().await?;
        match tokio::time::timeout(COMMAND_TIMEOUT, cmd.query_async::<T>(&mut conn)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                self.conn.lock().await.take();
                Err(self.fail(e))
            }
            Err(_) => {
                self.conn.lock().await.take();
                Err(self.fail("command timed out"))
            }
        }
    }

    fn decode(&self, key: &str, bytes: &[u8]) -> Result<CacheEntry, CacheError> {
        let corrupt = |message: String| CacheError::Corrupt {
            location: self.location.clone(),
            key: key.to_string(),
            message,
        };
        let entry: CacheEntry =
            serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?;
        if entry.key != key {
            return Err(corrupt(format!("stored under another key ({})", entry.key)));
        }
        Ok(entry)
    }

    /// Deletes every key under this cache's prefix (entries and claims); returns how
    /// many entries went. For benchmarks and tests that use their own prefix.
    pub async fn delete_all(&self) -> Result<u64, CacheError> {
        let mut cursor = 0u64;
        let mut deleted = 0u64;
        loop {
            let (next, keys): (u64, Vec<String>) = self
                .run(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(format!("{}:*", self.prefix))
                        .arg("COUNT")
                        .arg(1000),
                )
                .await?;
            if !keys.is_empty() {
                deleted += self.run::<u64>(redis::cmd("DEL").arg(&keys)).await?;
            }
            if next == 0 {
                return Ok(deleted);
            }
            cursor = next;
        }
    }
}

#[async_trait]
impl CacheStore for RedisCache {
    fn location(&self) -> String {
        self.location.clone()
    }

    async fn get(&self, key: &str) -> Result<Option<CacheEntry>, CacheError> {
        let value: Option<Vec<u8>> = self.run(redis::cmd("GET").arg(self.entry_key(key))).await?;
        value.map(|v| self.decode(key, &v)).transpose()
    }

    async fn put(&self, entry: &CacheEntry) -> Result<bool, CacheError> {
        let json = serde_json::to_vec(entry).map_err(|e| self.fail(e))?;
        let set: Option<String> = self
            .run(
                redis::cmd("SET")
                    .arg(self.entry_key(&entry.key))
                    .arg(json)
                    .arg("NX"),
            )
            .await?;
        Ok(set.is_some())
    }

    fn claim_ttl(&self) -> Option<Duration> {
        Some(self.claim_ttl)
    }

    async fn claim(&self, key: &str) -> Result<Claim, CacheError> {
        let token = format!("{}-{:016x}", std::process::id(), rand::random::<u64>());
        let set: Option<String> = self
            .run(
                redis::cmd("SET")
                    .arg(self.claim_key(key))
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(self.claim_ttl.as_millis() as u64),
            )
            .await?;
        Ok(if set.is_some() {
            Claim::Owned(token)
        } else {
            Claim::Elsewhere
        })
    }

    async fn renew(&self, key: &str, token: &str) -> Result<bool, CacheError> {
        let n: i64 = self
            .run(
                redis::cmd("EVAL")
                    .arg(RENEW_SCRIPT)
                    .arg(1)
                    .arg(self.claim_key(key))
                    .arg(token)
                    .arg(self.claim_ttl.as_millis() as u64),
            )
            .await?;
        Ok(n == 1)
    }

    async fn release(&self, key: &str, token: &str) -> Result<(), CacheError> {
        let _: i64 = self
            .run(
                redis::cmd("EVAL")
                    .arg(RELEASE_SCRIPT)
                    .arg(1)
                    .arg(self.claim_key(key))
                    .arg(token),
            )
            .await?;
        Ok(())
    }

    async fn claimed(&self, key: &str) -> Result<bool, CacheError> {
        let n: i64 = self
            .run(redis::cmd("EXISTS").arg(self.claim_key(key)))
            .await?;
        Ok(n > 0)
    }

    async fn page(&self, cursor: &str, limit: usize) -> Result<Page, CacheError> {
        let cursor: u64 = if cursor.is_empty() {
            0
        } else {
            cursor
                .parse()
                .map_err(|_| CacheError::Config(format!("bad Redis scan cursor `{cursor}`")))?
        };
        let (next, names): (u64, Vec<String>) = self
            .run(
                redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(format!("{}:response:*", self.prefix))
                    .arg("COUNT")
                    .arg(limit.max(1)),
            )
            .await?;
        let mut entries = Vec::with_capacity(names.len());
        if !names.is_empty() {
            let values: Vec<Option<Vec<u8>>> = self.run(redis::cmd("MGET").arg(&names)).await?;
            let cut = self.entry_key("").len();
            for (name, value) in names.iter().zip(values) {
                // A key deleted between SCAN and MGET is simply gone.
                if let Some(v) = value {
                    entries.push(self.decode(&name[cut..], &v)?);
                }
            }
        }
        Ok(Page {
            entries,
            next: (next != 0).then(|| next.to_string()),
        })
    }

    async fn stats(&self) -> Result<CacheStats, CacheError> {
        let mut stats = CacheStats {
            location: self.location.clone(),
            ..CacheStats::default()
        };
        // SCAN may return a key twice; count each once.
        let mut seen = HashSet::new();
        let mut cursor = String::new();
        loop {
            let page = self.page(&cursor, 1000).await?;
            for e in page.entries {
                if seen.insert(e.key.clone()) {
                    let bytes = serde_json::to_vec(&e).map_or(0, |v| v.len());
                    stats.add(&e, bytes);
                }
            }
            match page.next {
                Some(c) => cursor = c,
                None => return Ok(stats),
            }
        }
    }
}
