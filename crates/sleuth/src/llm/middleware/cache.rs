//! The on-disk response cache: one SQLite file per cache directory.
//!
//! Why SQLite: runs are often interrupted (Ctrl-C, a killed shard) and several
//! processes may share one cache. SQLite in WAL mode gives atomic commits (a kill at any
//! moment leaves either the whole entry or none), concurrent readers with one writer at
//! a time, and waits for the write lock (`busy_timeout`) instead of failing.
//!
//! Key: SHA-256 of a version tag, the model's name (provider, endpoint and model, never
//! the key) and the serde JSON of the full [`ChatRequest`], including `temperature` and
//! `sample_index`. Requests at `temperature > 0` are cached too: a rerun then replays
//! the same samples, and deliberate repeated samples differ by `sample_index`, so they
//! are never conflated. Value: the response as first received, original usage included;
//! hits are returned with `cached = true` (billed cost 0). Errors are never cached.
//! A cache that fails to read or write is logged and bypassed, never fatal to a run.

use crate::llm::{ChatModel, ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The cache file's name inside the cache directory.
pub const CACHE_FILE: &str = "responses.sqlite3";
const KEY_VERSION: &str = "sleuth-response-cache-v1";

#[derive(Debug)]
pub struct ResponseCache {
    path: PathBuf,
    conn: Mutex<Connection>,
}

fn sql_err(path: &Path, e: impl std::fmt::Display) -> LlmError {
    LlmError::Config(format!("response cache {}: {e}", path.display()))
}

impl ResponseCache {
    /// Opens (creating if needed) the cache in directory `dir`.
    pub fn open(dir: &Path) -> Result<Arc<ResponseCache>, LlmError> {
        std::fs::create_dir_all(dir).map_err(|e| sql_err(dir, e))?;
        let path = dir.join(CACHE_FILE);
        let conn = Connection::open(&path).map_err(|e| sql_err(&path, e))?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(|e| sql_err(&path, e))?;
        // WAL + NORMAL: commits are atomic and survive a killed process; only an OS
        // crash can lose the last few entries, which costs a re-query, not corruption.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| sql_err(&path, e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| sql_err(&path, e))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY,
                model TEXT NOT NULL,
                response TEXT NOT NULL,
                created_unix INTEGER NOT NULL
            )",
        )
        .map_err(|e| sql_err(&path, e))?;
        Ok(Arc::new(ResponseCache {
            path,
            conn: Mutex::new(conn),
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cache key of `request` sent to the model named `model_name`.
    pub fn key(model_name: &str, request: &ChatRequest) -> String {
        let mut h = Sha256::new();
        h.update(KEY_VERSION.as_bytes());
        h.update([0]);
        h.update(model_name.as_bytes());
        h.update([0]);
        h.update(serde_json::to_vec(request).expect("a ChatRequest always serializes"));
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn get(&self, key: &str) -> Result<Option<ChatResponse>, LlmError> {
        let conn = self.conn.lock().expect("cache lock");
        let row: Option<String> = conn
            .query_row(
                "SELECT response FROM responses WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| sql_err(&self.path, e))?;
        match row {
            None => Ok(None),
            Some(json) => {
                let mut response: ChatResponse =
                    serde_json::from_str(&json).map_err(|e| sql_err(&self.path, e))?;
                response.cached = true;
                Ok(Some(response))
            }
        }
    }

    /// Stores a response; an existing entry for the key is kept (first answer wins).
    pub fn put(
        &self,
        key: &str,
        model_name: &str,
        response: &ChatResponse,
    ) -> Result<(), LlmError> {
        let mut stored = response.clone();
        stored.cached = false;
        let json = serde_json::to_string(&stored).map_err(|e| sql_err(&self.path, e))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let conn = self.conn.lock().expect("cache lock");
        conn.execute(
            "INSERT OR IGNORE INTO responses (key, model, response, created_unix) VALUES (?1, ?2, ?3, ?4)",
            params![key, model_name, json, now],
        )
        .map_err(|e| sql_err(&self.path, e))?;
        Ok(())
    }

    /// Number of stored responses.
    pub fn len(&self) -> Result<u64, LlmError> {
        let conn = self.conn.lock().expect("cache lock");
        conn.query_row("SELECT COUNT(*) FROM responses", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| sql_err(&self.path, e))
    }

    pub fn is_empty(&self) -> Result<bool, LlmError> {
        Ok(self.len()? == 0)
    }
}

/// Serves repeated requests from the cache; stores fresh successful responses.
pub struct CacheLayer {
    inner: Arc<dyn ChatModel>,
    cache: Arc<ResponseCache>,
}

impl CacheLayer {
    pub fn new(inner: Arc<dyn ChatModel>, cache: Arc<ResponseCache>) -> Self {
        CacheLayer { inner, cache }
    }
}

#[async_trait]
impl ChatModel for CacheLayer {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let key = ResponseCache::key(self.inner.name(), request);
        // SQLite calls block (and may wait on another process's write lock): keep them
        // off the async worker threads.
        let (cache, k) = (self.cache.clone(), key.clone());
        let hit = tokio::task::spawn_blocking(move || cache.get(&k)).await;
        match hit {
            Ok(Ok(Some(response))) => return Ok(response),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!("response cache read failed, bypassing: {e}"),
            Err(e) => tracing::warn!("response cache read task failed, bypassing: {e}"),
        }
        let response = self.inner.complete(request).await?;
        let (cache, name, stored) = (
            self.cache.clone(),
            self.inner.name().to_string(),
            response.clone(),
        );
        match tokio::task::spawn_blocking(move || cache.put(&key, &name, &stored)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("response cache write failed: {e}"),
            Err(e) => tracing::warn!("response cache write task failed: {e}"),
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Usage};

    #[test]
    fn keys_distinguish_every_request_field_and_the_model() {
        let base = ChatRequest::new(vec![Message::user("q")]);
        let k = |m: &str, r: &ChatRequest| ResponseCache::key(m, r);
        let k0 = k("m", &base);
        assert_eq!(k0, k("m", &base.clone()));
        assert_eq!(k0.len(), 64);
        for other in [
            k("m2", &base),
            k("m", &base.clone().temperature(0.7)),
            k("m", &base.clone().sample_index(1)),
            k("m", &base.clone().max_tokens(5)),
            k("m", &base.clone().stop(vec!["x".into()])),
            k("m", &ChatRequest::new(vec![Message::user("q2")])),
        ] {
            assert_ne!(k0, other);
        }
    }

    #[test]
    fn round_trip_marks_cached_and_keeps_usage() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ResponseCache::open(dir.path()).unwrap();
        let usage = Usage {
            input_tokens: 7,
            output_tokens: 3,
            cached_input_tokens: 2,
            cache_write_tokens: 0,
        };
        let resp = ChatResponse::new("answer", usage);
        assert!(cache.get("k").unwrap().is_none());
        cache.put("k", "m", &resp).unwrap();
        cache
            .put("k", "m", &ChatResponse::new("second", usage))
            .unwrap();
        let hit = cache.get("k").unwrap().unwrap();
        assert_eq!(
            (hit.text.as_str(), hit.usage, hit.cached),
            ("answer", usage, true)
        );
        drop(cache);
        let reopened = ResponseCache::open(dir.path()).unwrap();
        assert_eq!(reopened.len().unwrap(), 1);
    }
}
