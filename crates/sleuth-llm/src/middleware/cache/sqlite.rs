//! The default store: one SQLite file per cache directory.
//!
//! Why SQLite: runs are often interrupted (Ctrl-C, a killed shard) and several
//! processes on one machine may share a cache. WAL mode gives atomic commits (a kill at
//! any moment leaves either the whole entry or none), concurrent readers with one writer
//! at a time, and waits for the write lock (`busy_timeout`) instead of failing. SQLite
//! calls block, so the async methods run them on the blocking pool.

use super::{CacheEntry, CacheError, CacheStats, CacheStore, Page, FORMAT_VERSION};
use crate::file_lock::{FileLock, SharedLock};
use crate::ChatResponse;
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The cache file's name inside the cache directory.
pub const CACHE_FILE: &str = "responses.sqlite3";
/// Held shared by every process with the cache open, exclusively by [`clear_sqlite`].
const IN_USE_FILE: &str = "responses.lock";

/// Cheap to clone: clones share one connection.
#[derive(Debug, Clone)]
pub struct SqliteCache {
    path: PathBuf,
    conn: Arc<Mutex<Connection>>,
    /// The shared hold that keeps [`clear_sqlite`] from deleting the files under us.
    _in_use: Arc<Option<SharedLock>>,
}

/// A shared hold on the cache of `dir`, waiting out a clear in progress (it takes
/// milliseconds); `None` off Unix or when the lock file cannot be made (a read-only
/// directory: then nothing could clear it either).
fn hold(dir: &Path) -> Option<SharedLock> {
    for _ in 0..100 {
        match SharedLock::try_acquire(&dir.join(IN_USE_FILE)) {
            Ok(Some(hold)) => return Some(hold),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return None,
        }
    }
    None
}

/// Removes the cache files of `dir` without opening them (they may be damaged past
/// opening), refusing while any process has the cache open: a run writing into files
/// deleted under it would write into nothing and end with an empty cache (hardening
/// III, item 3). Returns the files removed.
pub fn clear_sqlite(dir: &Path) -> Result<Vec<PathBuf>, CacheError> {
    let lock = dir.join(IN_USE_FILE);
    let _held = match lock.exists() {
        false => None,
        true => match FileLock::try_acquire(&lock) {
            Ok(Ok(held)) => Some(held),
            Ok(Err(_)) => {
                return Err(CacheError::InUse {
                    location: dir.join(CACHE_FILE).display().to_string(),
                })
            }
            Err(e) => return Err(unavailable(&lock, e)),
        },
    };
    let mut removed = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let path = dir.join(format!("{CACHE_FILE}{suffix}"));
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(unavailable(&path, e)),
        }
    }
    Ok(removed)
}

impl SqliteCache {
    fn err(&self, e: impl std::fmt::Display) -> CacheError {
        unavailable(&self.path, e)
    }

    /// Opens (creating if needed) the cache in directory `dir`.
    pub fn open(dir: &Path) -> Result<SqliteCache, CacheError> {
        std::fs::create_dir_all(dir).map_err(|e| unavailable(dir, e))?;
        let in_use = hold(dir);
        let path = dir.join(CACHE_FILE);
        let e = |e: rusqlite::Error| unavailable(&path, e);
        let conn = Connection::open(&path).map_err(e)?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(e)?;
        // WAL + NORMAL: commits are atomic and survive a killed process; only an OS
        // crash can lose the last few entries, which costs a re-query, not corruption.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(e)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(e)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY,
                model TEXT NOT NULL,
                response TEXT NOT NULL,
                created_unix INTEGER NOT NULL
            )",
        )
        .map_err(e)?;
        // Caches written before entries carried a format are format 1.
        let has_format = conn
            .prepare("SELECT 1 FROM pragma_table_info('responses') WHERE name = 'format'")
            .and_then(|mut s| s.exists([]))
            .map_err(e)?;
        if !has_format {
            conn.execute_batch(
                "ALTER TABLE responses ADD COLUMN format INTEGER NOT NULL DEFAULT 1",
            )
            .map_err(e)?;
        }
        Ok(SqliteCache {
            path,
            conn: Arc::new(Mutex::new(conn)),
            _in_use: Arc::new(in_use),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of stored responses.
    pub fn len(&self) -> Result<u64, CacheError> {
        let conn = self.conn.lock().expect("cache lock");
        conn.query_row("SELECT COUNT(*) FROM responses", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    pub fn is_empty(&self) -> Result<bool, CacheError> {
        Ok(self.len()? == 0)
    }

    /// The entry of `key`, if any (blocking).
    pub fn get_blocking(&self, key: &str) -> Result<Option<CacheEntry>, CacheError> {
        let conn = self.conn.lock().expect("cache lock");
        let row = conn
            .query_row(
                "SELECT key, model, response, created_unix, format FROM responses WHERE key = ?1",
                params![key],
                row_parts,
            )
            .optional()
            .map_err(|e| self.err(e))?;
        row.map(|parts| self.entry(parts)).transpose()
    }

    /// Stores `entry` unless its key is present (blocking); true when stored.
    pub fn put_blocking(&self, entry: &CacheEntry) -> Result<bool, CacheError> {
        let json = serde_json::to_string(&entry.response).map_err(|e| self.err(e))?;
        let conn = self.conn.lock().expect("cache lock");
        let n = conn
            .execute(
                "INSERT OR IGNORE INTO responses (key, model, response, created_unix, format) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![entry.key, entry.model, json, entry.created_unix, entry.format],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    fn page_blocking(&self, after: &str, limit: usize) -> Result<Page, CacheError> {
        let conn = self.conn.lock().expect("cache lock");
        let mut stmt = conn
            .prepare(
                "SELECT key, model, response, created_unix, format FROM responses
                 WHERE key > ?1 ORDER BY key LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![after, limit as i64], row_parts)
            .map_err(|e| self.err(e))?;
        let mut entries = Vec::new();
        for row in rows {
            entries.push(self.entry(row.map_err(|e| self.err(e))?)?);
        }
        let next = (entries.len() == limit)
            .then(|| entries.last().map(|e| e.key.clone()))
            .flatten();
        Ok(Page { entries, next })
    }

    fn stats_blocking(&self) -> Result<CacheStats, CacheError> {
        let conn = self.conn.lock().expect("cache lock");
        let mut stats = CacheStats {
            location: self.location(),
            ..CacheStats::default()
        };
        let mut stmt = conn
            .prepare(
                "SELECT model, format, COUNT(*), SUM(LENGTH(response)), MIN(created_unix), MAX(created_unix)
                 FROM responses GROUP BY model, format",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (model, format, n, bytes, oldest, newest) = row.map_err(|e| self.err(e))?;
            stats.entries += n as u64;
            stats.bytes += bytes.unwrap_or(0) as u64;
            *stats.by_model.entry(model).or_default() += n as u64;
            *stats.by_format.entry(format as u32).or_default() += n as u64;
            stats.oldest_unix = Some(stats.oldest_unix.map_or(oldest, |o| o.min(oldest)));
            stats.newest_unix = Some(stats.newest_unix.map_or(newest, |t| t.max(newest)));
        }
        Ok(stats)
    }

    fn entry(
        &self,
        (key, model, json, created_unix, format): RowParts,
    ) -> Result<CacheEntry, CacheError> {
        let response: ChatResponse =
            serde_json::from_str(&json).map_err(|e| CacheError::Corrupt {
                location: self.location(),
                key: key.clone(),
                message: e.to_string(),
            })?;
        Ok(CacheEntry {
            format: u32::try_from(format).unwrap_or(FORMAT_VERSION + 1),
            key,
            model,
            created_unix,
            response,
        })
    }
}

type RowParts = (String, String, String, i64, i64);

fn row_parts(r: &rusqlite::Row<'_>) -> rusqlite::Result<RowParts> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

/// A failed SQLite call. A damaged file (SQLite's "file is not a database", "database
/// disk image is malformed") is named with the commands that inspect and clear it.
fn unavailable(path: &Path, e: impl std::fmt::Display) -> CacheError {
    let mut message = e.to_string();
    let lower = message.to_ascii_lowercase();
    if ["not a database", "malformed", "corrupt"]
        .iter()
        .any(|w| lower.contains(w))
    {
        let dir = path.parent().unwrap_or(path).display();
        // Shell commands: the CLI's flags whoever is speaking.
        let cache = crate::knob::Knob::Cache.flag();
        message.push_str(&format!(
            " (the cache file is damaged: inspect it with `sleuth cache stats {cache} {dir}`, clear it with `sleuth cache clear {cache} {dir}`)"
        ));
    }
    CacheError::Unavailable {
        location: path.display().to_string(),
        message,
    }
}

/// Runs a blocking store call on the blocking pool.
async fn blocking<T: Send + 'static>(
    cache: SqliteCache,
    f: impl FnOnce(&SqliteCache) -> Result<T, CacheError> + Send + 'static,
) -> Result<T, CacheError> {
    let location = cache.location();
    tokio::task::spawn_blocking(move || f(&cache))
        .await
        .map_err(|e| CacheError::Unavailable {
            location,
            message: format!("cache task failed: {e}"),
        })?
}

#[async_trait]
impl CacheStore for SqliteCache {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    async fn get(&self, key: &str) -> Result<Option<CacheEntry>, CacheError> {
        let key = key.to_string();
        blocking(self.clone(), move |c| c.get_blocking(&key)).await
    }

    async fn put(&self, entry: &CacheEntry) -> Result<bool, CacheError> {
        let entry = entry.clone();
        blocking(self.clone(), move |c| c.put_blocking(&entry)).await
    }

    async fn page(&self, cursor: &str, limit: usize) -> Result<Page, CacheError> {
        let cursor = cursor.to_string();
        blocking(self.clone(), move |c| {
            c.page_blocking(&cursor, limit.max(1))
        })
        .await
    }

    async fn stats(&self) -> Result<CacheStats, CacheError> {
        blocking(self.clone(), |c| c.stats_blocking()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Usage;

    fn key(i: u8) -> String {
        format!("{:064x}", i)
    }

    #[test]
    fn round_trip_keeps_usage_model_and_first_answer() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SqliteCache::open(dir.path()).unwrap();
        let usage = Usage {
            input_tokens: 7,
            output_tokens: 3,
            cached_input_tokens: 2,
            cache_write_tokens: 0,
        };
        let first = CacheEntry::new(&key(1), "m", &ChatResponse::new("answer", usage));
        assert!(cache.get_blocking(&key(1)).unwrap().is_none());
        assert!(cache.put_blocking(&first).unwrap());
        let second = CacheEntry::new(&key(1), "m", &ChatResponse::new("second", usage));
        assert!(!cache.put_blocking(&second).unwrap());
        let got = cache.get_blocking(&key(1)).unwrap().unwrap();
        assert_eq!(got, first);
        assert_eq!(got.hit().usage, usage);
        drop(cache);
        let reopened = SqliteCache::open(dir.path()).unwrap();
        assert_eq!(reopened.len().unwrap(), 1);
    }

    #[tokio::test]
    async fn pages_cover_every_entry_once_and_stats_count_by_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SqliteCache::open(dir.path()).unwrap();
        for i in 0..25u8 {
            let model = if i % 5 == 0 { "a" } else { "b" };
            let e = CacheEntry::new(&key(i), model, &ChatResponse::new("x", Usage::default()));
            cache.put(&e).await.unwrap();
        }
        let (mut seen, mut cursor) = (Vec::new(), String::new());
        loop {
            let page = cache.page(&cursor, 10).await.unwrap();
            seen.extend(page.entries.into_iter().map(|e| e.key));
            match page.next {
                Some(c) => cursor = c,
                None => break,
            }
        }
        assert_eq!(seen, (0..25u8).map(key).collect::<Vec<_>>());
        let stats = cache.stats().await.unwrap();
        assert_eq!(stats.entries, 25);
        assert_eq!((stats.by_model["a"], stats.by_model["b"]), (5, 20));
        assert_eq!(stats.by_format[&FORMAT_VERSION], 25);
    }

    #[test]
    fn a_cache_from_before_formats_opens_as_format_1() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join(CACHE_FILE)).unwrap();
        conn.execute_batch(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL,
             response TEXT NOT NULL, created_unix INTEGER NOT NULL)",
        )
        .unwrap();
        let json = serde_json::to_string(&ChatResponse::new("old", Usage::default())).unwrap();
        conn.execute(
            "INSERT INTO responses VALUES (?1, 'm', ?2, 5)",
            params![key(9), json],
        )
        .unwrap();
        drop(conn);
        let cache = SqliteCache::open(dir.path()).unwrap();
        let e = cache.get_blocking(&key(9)).unwrap().unwrap();
        assert_eq!((e.format, e.response.text.as_str()), (1, "old"));
    }
}
