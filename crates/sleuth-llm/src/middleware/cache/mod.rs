//! The response cache: a request fingerprint maps to the response first received for it,
//! usage included, so no identical call is paid twice.
//!
//! Two stores keep the same entries behind one trait, [`CacheStore`]:
//!
//! - [`SqliteCache`] (the default): one SQLite file in a directory, for one machine
//!   (several processes may share it; WAL mode makes every commit atomic).
//! - [`RedisCache`] (`--cache redis://HOST:PORT/DB`): one cache for every shard of a
//!   cluster run, every rerun and every colleague pointed at the same server.
//!
//! Key: SHA-256 of the format version, the provider's
//! [`ChatModel::cache_identity`](crate::ChatModel::cache_identity) (provider,
//! endpoint, model, server preset and body options; never the key) and the serde JSON
//! of the full [`ChatRequest`], including
//! `temperature` and `sample_index`. Requests at `temperature > 0` are cached too: a
//! rerun then replays the same samples, and deliberate repeated samples differ by
//! `sample_index`. Entry: [`CacheEntry`], the response as first received (original
//! usage included) with its model and format version; hits come back with
//! `cached = true` (billed cost 0). Errors are never cached. Since the key hashes the
//! format version, a future format never reads an old entry; the stored `format` lets
//! export, import and stats tell versions apart.
//!
//! [`ResponseCache`] puts a store in front of a model: it coalesces identical requests
//! in flight (one caller calls, the others wait for its entry; across processes through
//! the store's claim, a Redis lock key with an expiry) and degrades to no cache with
//! one warning when the store fails, so an outage costs money, never a run.

mod layer;
#[cfg(feature = "redis")]
mod redis;
mod sqlite;

#[cfg(feature = "redis")]
pub use self::redis::RedisCache;
pub use layer::{CacheLayer, ResponseCache};
pub use sqlite::{clear_sqlite, SqliteCache, CACHE_FILE};

use crate::knob::Knob;
use crate::{ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The entry format written by this version (also hashed into every key).
pub const FORMAT_VERSION: u32 = 1;
const KEY_VERSION: &str = "sleuth-response-cache-v1";

/// The cache key of `request` sent to the model whose cache identity is `identity`: 64
/// hex digits.
pub fn cache_key(identity: &str, request: &ChatRequest) -> String {
    let mut h = Sha256::new();
    h.update(KEY_VERSION.as_bytes());
    h.update([0]);
    h.update(identity.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(request).expect("a ChatRequest always serializes"));
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// One stored response; also one line of `sleuth cache export`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    pub format: u32,
    pub key: String,
    /// The model's name as in records (`openai:gpt-4o-mini`), never a key.
    pub model: String,
    pub created_unix: i64,
    /// As first received; `cached` is always false here.
    pub response: ChatResponse,
}

impl CacheEntry {
    /// An entry for a fresh response, stamped now.
    pub fn new(key: &str, model: &str, response: &ChatResponse) -> CacheEntry {
        let mut response = response.clone();
        response.cached = false;
        CacheEntry {
            format: FORMAT_VERSION,
            key: key.to_string(),
            model: model.to_string(),
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
            response,
        }
    }

    /// Checks what a store or an import file handed us: a key of 64 hex digits and a
    /// known format.
    pub fn validate(&self) -> Result<(), String> {
        if self.key.len() != 64 || !self.key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("key `{}` is not 64 hex digits", self.key));
        }
        if self.format != FORMAT_VERSION {
            return Err(format!(
                "format {} (this sleuth reads format {FORMAT_VERSION})",
                self.format
            ));
        }
        Ok(())
    }

    /// The response as a cache hit.
    pub fn hit(&self) -> ChatResponse {
        let mut r = self.response.clone();
        r.cached = true;
        r
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum CacheError {
    /// The store cannot be reached or answered an error (Redis down, SQLite locked).
    #[error("response cache {location}: {message}")]
    Unavailable { location: String, message: String },
    /// A stored value that is not an entry of ours.
    #[error("response cache {location}: entry {key}: {message}")]
    Corrupt {
        location: String,
        key: String,
        message: String,
    },
    /// A bad cache location (`--cache`).
    #[error("{0}")]
    Config(String),
    /// A Redis location given to a build without the `redis` cargo feature.
    #[error("{}: this build of sleuth has no Redis cache (it is the cargo feature `redis` of the sleuth library, on in the CLI)", Knob::Cache.with(.location))]
    RedisNotBuilt { location: String },
    /// Asked to clear a cache another process has open (a run writing it).
    #[error("response cache {location} is in use by a running sleuth (an eval, an experiment, an import or an export); clear it once that has ended")]
    InUse { location: String },
}

impl From<CacheError> for LlmError {
    fn from(e: CacheError) -> Self {
        LlmError::Config(e.to_string())
    }
}

/// The outcome of asking to be the one process that computes a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The store has no cross-process claims (SQLite): go ahead.
    Unshared,
    /// This process holds the claim, identified by the token, until it releases it or
    /// the claim expires.
    Owned(String),
    /// Another process holds it: wait for its entry.
    Elsewhere,
}

/// What `sleuth cache stats` shows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CacheStats {
    pub location: String,
    pub entries: u64,
    /// Bytes of stored values as serialized (SQLite: the response JSON; Redis: the
    /// whole entry JSON), a guide to size rather than the store's own footprint.
    pub bytes: u64,
    pub by_model: BTreeMap<String, u64>,
    pub by_format: BTreeMap<u32, u64>,
    pub oldest_unix: Option<i64>,
    pub newest_unix: Option<i64>,
}

impl CacheStats {
    /// Counts one entry of `bytes` serialized bytes.
    pub fn add(&mut self, entry: &CacheEntry, bytes: usize) {
        self.entries += 1;
        self.bytes += bytes as u64;
        *self.by_model.entry(entry.model.clone()).or_default() += 1;
        *self.by_format.entry(entry.format).or_default() += 1;
        let t = entry.created_unix;
        self.oldest_unix = Some(self.oldest_unix.map_or(t, |o| o.min(t)));
        self.newest_unix = Some(self.newest_unix.map_or(t, |n| n.max(t)));
    }
}

/// A page of entries for export; `next` is the opaque cursor of the following page.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub entries: Vec<CacheEntry>,
    pub next: Option<String>,
}

/// Where entries live. Every method may fail with [`CacheError::Unavailable`]; the
/// caller ([`ResponseCache`]) decides that a failing store means "no cache".
#[async_trait]
pub trait CacheStore: Send + Sync + std::fmt::Debug {
    /// Where the entries live, for messages (`redis://host:6379/0`, a file path);
    /// never a password.
    fn location(&self) -> String;

    async fn get(&self, key: &str) -> Result<Option<CacheEntry>, CacheError>;

    /// Stores `entry` unless its key is present (the first answer wins); returns
    /// whether it was stored.
    async fn put(&self, entry: &CacheEntry) -> Result<bool, CacheError>;

    /// How long an owned claim lives without renewal (None: the store has no claims).
    fn claim_ttl(&self) -> Option<std::time::Duration> {
        None
    }

    /// Asks to be the one process computing `key`.
    async fn claim(&self, _key: &str) -> Result<Claim, CacheError> {
        Ok(Claim::Unshared)
    }

    /// Keeps an owned claim alive while its call runs; false when it was lost.
    async fn renew(&self, _key: &str, _token: &str) -> Result<bool, CacheError> {
        Ok(true)
    }

    /// Gives up an owned claim (only if the token still owns it).
    async fn release(&self, _key: &str, _token: &str) -> Result<(), CacheError> {
        Ok(())
    }

    /// Whether some process holds a claim on `key`.
    async fn claimed(&self, _key: &str) -> Result<bool, CacheError> {
        Ok(false)
    }

    /// Entries after `cursor` ("" for the first page), at most about `limit`.
    async fn page(&self, cursor: &str, limit: usize) -> Result<Page, CacheError>;

    async fn stats(&self) -> Result<CacheStats, CacheError>;
}

/// Where a cache lives, as given by `--cache`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheSpec {
    /// A directory holding the SQLite file.
    Sqlite(PathBuf),
    /// `redis://[user:password@]host:port/db`.
    Redis(String),
}

impl CacheSpec {
    /// `redis://...` is Redis; anything without a URL scheme is a directory.
    pub fn parse(text: &str) -> Result<CacheSpec, CacheError> {
        let t = text.trim();
        if t.starts_with("redis://") {
            return Ok(CacheSpec::Redis(t.to_string()));
        }
        if t.starts_with("rediss://") || t.starts_with("redis+unix://") || t.starts_with("unix://")
        {
            return Err(CacheError::Config(format!(
                "{}: only plain redis://HOST:PORT/DB is supported (reach a TLS or socket server through a local tunnel)",
                Knob::Cache.with(redact(t))
            )));
        }
        if let Some((scheme, _)) = t.split_once("://") {
            return Err(CacheError::Config(format!(
                "{}: `{scheme}://` is not a cache location (a directory or redis://HOST:PORT/DB)",
                Knob::Cache
            )));
        }
        if t.is_empty() {
            return Err(CacheError::Config(format!(
                "{}: empty location",
                Knob::Cache
            )));
        }
        Ok(CacheSpec::Sqlite(PathBuf::from(t)))
    }

    /// Opens the store; Redis must answer now (see [`RedisCache::open`]).
    pub fn open(&self) -> Result<Arc<dyn CacheStore>, CacheError> {
        Ok(match self {
            CacheSpec::Sqlite(dir) => Arc::new(SqliteCache::open(dir)?),
            #[cfg(feature = "redis")]
            CacheSpec::Redis(url) => RedisCache::open(url)?,
            #[cfg(not(feature = "redis"))]
            CacheSpec::Redis(url) => {
                return Err(CacheError::RedisNotBuilt {
                    location: redact(url),
                })
            }
        })
    }
}

impl std::fmt::Display for CacheSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheSpec::Sqlite(dir) => write!(f, "{}", dir.display()),
            CacheSpec::Redis(url) => write!(f, "{}", redact(url)),
        }
    }
}

/// A URL with any `user:password@` removed, for messages.
pub fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Message, Usage};

    #[test]
    fn keys_distinguish_every_request_field_and_the_model() {
        let base = ChatRequest::new(vec![Message::user("q")]);
        let k0 = cache_key("m", &base);
        assert_eq!(k0, cache_key("m", &base.clone()));
        assert_eq!(k0.len(), 64);
        for other in [
            cache_key("m2", &base),
            cache_key("m", &base.clone().temperature(0.7)),
            cache_key("m", &base.clone().sample_index(1)),
            cache_key("m", &base.clone().max_tokens(5)),
            cache_key("m", &base.clone().stop(vec!["x".into()])),
            cache_key("m", &ChatRequest::new(vec![Message::user("q2")])),
        ] {
            assert_ne!(k0, other);
        }
    }

    /// A lean build (no `redis` feature) refuses a Redis location at open, naming the
    /// feature, and never shows the password.
    #[cfg(not(feature = "redis"))]
    #[test]
    fn a_build_without_redis_refuses_a_redis_cache_and_names_the_feature() {
        let spec = CacheSpec::parse("redis://u:hunter2@10.0.0.5:6379/2").unwrap();
        let e = spec.open().err().expect("refused");
        assert!(matches!(&e, CacheError::RedisNotBuilt { .. }), "{e}");
        let message = e.to_string();
        assert!(message.contains("cargo feature `redis`"), "{message}");
        assert!(message.contains("redis://10.0.0.5:6379/2"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn specs_parse_and_never_show_a_password() {
        assert_eq!(
            CacheSpec::parse("/tmp/c").unwrap(),
            CacheSpec::Sqlite("/tmp/c".into())
        );
        let s = CacheSpec::parse("redis://u:hunter2@10.0.0.5:6379/2").unwrap();
        assert_eq!(s.to_string(), "redis://10.0.0.5:6379/2");
        assert!(CacheSpec::parse("rediss://h:1/0").is_err());
        assert!(CacheSpec::parse("http://h/").is_err());
        assert_eq!(redact("redis://h:1/0"), "redis://h:1/0");
    }

    #[test]
    fn entries_validate_key_and_format() {
        let r = ChatResponse::new("a", Usage::default());
        let key = cache_key("m", &ChatRequest::new(vec![Message::user("q")]));
        let e = CacheEntry::new(&key, "m", &r);
        assert!(e.validate().is_ok());
        assert!(e.hit().cached);
        let mut bad = e.clone();
        bad.format = 2;
        assert!(bad.validate().unwrap_err().contains("format 2"));
        bad = e.clone();
        bad.key = "xyz".into();
        assert!(bad.validate().is_err());
    }
}
