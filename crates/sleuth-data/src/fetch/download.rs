//! One HTTP download into a `.part` file that survives interruptions.
//!
//! The bytes go to `<name>.part`, never to the final name, so a half-finished file can
//! never be mistaken for a finished one. When the connection drops, the next attempt
//! (in this run, or the next `sleuth data fetch`) asks for the rest with an HTTP
//! `Range` request and appends; a server that ignores ranges answers 200 with the whole
//! file, which we then write from the start. Digest checks happen after the download,
//! over the whole file (see the parent module).
//!
//! A download is bounded ([`super::registry::Remote::max_bytes`]): a server announcing
//! more is not read, and a body that runs past the bound (an endless mirror) is stopped.
//! Either, and a write that fails (a full disk), deletes the part file: only a dropped
//! connection keeps it for a resume.

use super::limits::chain;
use super::{FetchError, FetchProgress};
use std::path::Path;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Attempts per download before giving up (each resumes where the last stopped).
const ATTEMPTS: u32 = 5;

/// What one download may take from the disk.
pub(super) struct Bounds<'a> {
    /// The most the whole file may be.
    pub max_bytes: u64,
    /// About how large it is, when the server does not say.
    pub expected: u64,
    /// Free space a file of this many bytes needs (itself and what it unpacks to).
    pub room: &'a dyn Fn(u64) -> u64,
    pub data_dir: &'a Path,
}

/// Downloads `url` into `part`, resuming from whatever `part` already holds, within
/// `bounds`.
pub(super) async fn download(
    client: &reqwest::Client,
    url: &str,
    part: &Path,
    label: &str,
    bounds: &Bounds<'_>,
    progress: &dyn FetchProgress,
) -> Result<(), FetchError> {
    let mut last_error = String::new();
    // Whether any try reached the server: when none did (no DNS, no route, refused), the
    // machine is likely offline, and the error says how to install the file by hand.
    let mut reached = false;
    for attempt in 1..=ATTEMPTS {
        if attempt > 1 {
            let again = if reached { "resuming" } else { "trying again" };
            progress.note(&format!(
                "{label}: {last_error}; {again} (try {attempt} of {ATTEMPTS})"
            ));
            tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
        }
        match try_once(client, url, part, label, bounds, progress).await {
            Ok(()) => return Ok(()),
            Err(Attempt::Retry(message)) => {
                reached = true;
                last_error = message;
            }
            Err(Attempt::Unreachable(message)) => last_error = message,
            Err(Attempt::Fatal(e)) => return Err(e),
            Err(Attempt::Discard(e)) => {
                let _ = tokio::fs::remove_file(part).await;
                return Err(e);
            }
        }
    }
    if !reached {
        return Err(FetchError::Unreachable {
            url: url.to_string(),
            attempts: ATTEMPTS,
            message: last_error,
        });
    }
    let have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    Err(FetchError::Interrupted {
        url: url.to_string(),
        attempts: ATTEMPTS,
        message: last_error,
        bytes: have,
    })
}

enum Attempt {
    /// A network failure worth resuming after.
    Retry(String),
    /// No connection was made at all (name resolution, route, refused): maybe offline.
    Unreachable(String),
    Fatal(FetchError),
    /// A failure that makes the part file worthless (too long, or not fully written):
    /// it is deleted.
    Discard(FetchError),
}

async fn try_once(
    client: &reqwest::Client,
    url: &str,
    part: &Path,
    label: &str,
    bounds: &Bounds<'_>,
    progress: &dyn FetchProgress,
) -> Result<(), Attempt> {
    let max_bytes = bounds.max_bytes;
    let io = |e: std::io::Error| Attempt::Fatal(FetchError::io(part, e));
    let write_failed = |e: std::io::Error| {
        Attempt::Discard(FetchError::WriteFailed {
            path: part.to_path_buf(),
            cause: e,
            cleaned: "the partial download was deleted",
        })
    };
    let too_long = |found: String| {
        Attempt::Discard(FetchError::TooLarge {
            what: url.to_string(),
            found,
            limit: max_bytes,
        })
    };
    let offset = tokio::fs::metadata(part)
        .await
        .map(|m| m.len())
        .unwrap_or(0);
    let mut request = client.get(url);
    if offset > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={offset}-"));
    }
    let mut response = request.send().await.map_err(|e| {
        if e.is_connect() {
            Attempt::Unreachable(format!("cannot reach the server ({})", chain(&e)))
        } else {
            Attempt::Retry(chain(&e))
        }
    })?;
    let status = response.status();
    let resume = match status.as_u16() {
        206 if content_range_start(&response) == Some(offset) => true,
        // A range we did not ask for cannot be appended: drop the part, ask again.
        206 => {
            tokio::fs::remove_file(part).await.map_err(io)?;
            return Err(Attempt::Retry("the server answered another range".into()));
        }
        // The server ignores ranges: the body is the whole file.
        200 => false,
        // Our part is already as long as the file (or longer): fetch it whole again.
        416 => {
            tokio::fs::remove_file(part).await.map_err(io)?;
            return Err(Attempt::Retry("the server refused the resume range".into()));
        }
        code if code >= 500 || code == 429 => {
            return Err(Attempt::Retry(format!("HTTP {status}")));
        }
        _ => {
            return Err(Attempt::Fatal(FetchError::Status {
                url: url.to_string(),
                status: status.as_u16(),
            }))
        }
    };
    if is_html(&response) && !url.ends_with(".html") {
        return Err(Attempt::Fatal(FetchError::Html {
            url: url.to_string(),
        }));
    }
    if offset > 0 && !resume {
        progress.note(&format!(
            "{label}: the server does not resume downloads; starting over"
        ));
    }
    let start = if resume { offset } else { 0 };
    let total = response.content_length().map(|n| n + start);
    if let Some(total) = total.filter(|&t| t > max_bytes) {
        return Err(too_long(format!("the server announced {total} bytes")));
    }
    // Room for the rest of the file and what it unpacks to, before writing a byte.
    let need = (bounds.room)(total.unwrap_or(bounds.expected)).saturating_sub(start);
    super::limits::check_room(
        bounds.data_dir,
        need,
        super::limits::available(bounds.data_dir),
    )
    .map_err(Attempt::Fatal)?;
    let mut file = if resume {
        tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(part)
            .await
            .map_err(io)?
    } else {
        tokio::fs::File::create(part).await.map_err(io)?
    };
    progress.begin(&format!("downloading {label}"), total, start);
    let mut received = start;
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => {
                if received + bytes.len() as u64 > max_bytes {
                    progress.end();
                    return Err(too_long(format!("the body ran past {max_bytes} bytes")));
                }
                if let Err(e) = file.write_all(&bytes).await {
                    progress.end();
                    return Err(write_failed(e));
                }
                received += bytes.len() as u64;
                progress.advance(bytes.len() as u64);
            }
            Ok(None) => break,
            Err(e) => {
                file.flush().await.map_err(write_failed)?;
                progress.end();
                return Err(Attempt::Retry(format!(
                    "connection lost after {received} bytes ({})",
                    chain(&e)
                )));
            }
        }
    }
    file.flush().await.map_err(write_failed)?;
    file.sync_all().await.map_err(write_failed)?;
    progress.end();
    match total {
        Some(total) if received < total => Err(Attempt::Retry(format!(
            "connection closed after {received} of {total} bytes"
        ))),
        _ => Ok(()),
    }
}

/// The first byte of a `Content-Range: bytes START-END/TOTAL` header.
fn content_range_start(response: &reqwest::Response) -> Option<u64> {
    let value = response
        .headers()
        .get(reqwest::header::CONTENT_RANGE)?
        .to_str()
        .ok()?;
    let range = value.trim().strip_prefix("bytes ")?;
    range.split('-').next()?.trim().parse().ok()
}

/// File hosts answer a link that needs a browser with an HTML page and status 200.
fn is_html(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/html"))
}
