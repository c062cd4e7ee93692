//! A batch's results file, read a line at a time as it arrives (issue 31).
//!
//! Why not read the body and then split it: a paper-scale batch answers thousands of
//! requests, and its results file (OpenAI's output file, Anthropic's results JSONL,
//! which the provider streams) runs to tens of megabytes. Read whole, it sits in memory
//! twice (the bytes, then the text) beside the outcomes parsed from it. Read as lines,
//! only the line being received is held, and each is parsed and dropped as it arrives.
//!
//! Each line is one reply, so it is capped at one reply's limit (`max_reply_bytes`),
//! and the whole file at that limit times the batch's requests: a paid batch of long
//! replies is never failed at one reply's limit, and a server that streams without end
//! is still cut off.

use crate::http::{self, CallContext};
use crate::secret::redact;
use crate::LlmError;

/// Sends `request` and hands `each` every non-blank line of a successful response's
/// body as it arrives, with the key redacted (a key holds no newline, so it never
/// straddles two lines). A failed status is the same [`LlmError`] a plain call gives;
/// an error from `each` stops the reading and is returned.
pub(crate) async fn each_line(
    request: reqwest::RequestBuilder,
    ctx: &CallContext<'_>,
    requests: usize,
    mut each: impl FnMut(&str) -> Result<(), LlmError>,
) -> Result<(), LlmError> {
    let mut response = http::accepted(request, ctx).await?;
    let whole_limit = ctx.max_reply_bytes.saturating_mul(requests.max(1));
    let too_large = |limit: usize| LlmError::TooLarge {
        provider: ctx.provider.to_string(),
        limit,
    };
    let mut emit = |bytes: &[u8]| {
        if bytes.len() > ctx.max_reply_bytes {
            return Err(too_large(ctx.max_reply_bytes));
        }
        let line = redact(&String::from_utf8_lossy(bytes), ctx.key);
        match line.trim().is_empty() {
            true => Ok(()),
            false => each(&line),
        }
    };
    let mut pending: Vec<u8> = Vec::new();
    let mut read = 0usize;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| http::transport_error(&e, ctx))?
    {
        read += chunk.len();
        if read > whole_limit {
            return Err(too_large(whole_limit));
        }
        pending.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(end) = pending[start..].iter().position(|&b| b == b'\n') {
            emit(&pending[start..start + end])?;
            start += end + 1;
        }
        pending.drain(..start);
        if pending.len() > ctx.max_reply_bytes {
            return Err(too_large(ctx.max_reply_bytes));
        }
    }
    emit(&pending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::sync::oneshot;

    /// A chunked HTTP/1.1 response written by hand: `first` goes out at once, `rest`
    /// only once `go` fires.
    async fn serve_in_two_parts(
        listener: TcpListener,
        first: Vec<&'static str>,
        rest: Vec<&'static str>,
        go: oneshot::Receiver<()>,
    ) {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await.unwrap();
        let chunk = |s: &str| format!("{:x}\r\n{s}\r\n", s.len());
        let mut head = "HTTP/1.1 200 OK\r\ncontent-type: application/binary\r\ntransfer-encoding: chunked\r\n\r\n".to_string();
        head.extend(first.iter().map(|s| chunk(s)));
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        if go.await.is_err() {
            return;
        }
        let tail: String = rest.iter().map(|s| chunk(s)).collect::<String>() + "0\r\n\r\n";
        socket.write_all(tail.as_bytes()).await.unwrap();
    }

    fn context(max_reply_bytes: usize) -> CallContext<'static> {
        CallContext {
            provider: "test",
            key: None,
            timeout: Duration::from_secs(5),
            max_reply_bytes,
        }
    }

    /// The server sends the rest of the file only after the reader has handed over the
    /// first line: a reader that waited for the whole body would never get it.
    #[tokio::test]
    async fn lines_are_handed_over_as_they_arrive_and_rejoined_across_chunks() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/results", listener.local_addr().unwrap());
        let (go, wait) = oneshot::channel();
        let server = tokio::spawn(serve_in_two_parts(
            listener,
            vec!["{\"a\":1}\n{\"b\"", ":2"],
            vec!["}\n\n", "{\"c\":3}"],
            wait,
        ));
        let mut go = Some(go);
        let mut seen = Vec::new();
        let ctx = context(64);
        let read = each_line(reqwest::Client::new().get(url), &ctx, 3, |line| {
            seen.push(line.to_string());
            if let Some(go) = go.take() {
                go.send(()).unwrap();
            }
            Ok(())
        });
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the first line was handed over before the body ended")
            .unwrap();
        server.await.unwrap();
        assert_eq!(seen, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[tokio::test]
    async fn one_line_is_capped_at_one_replys_limit_and_the_file_at_all_of_them() {
        for (lines, requests, expected) in [
            // One 19-byte line against a 16-byte reply limit, the file within 4 × 16.
            (vec!["{\"long\":\"0123456\"}\n"], 4, 16),
            // The same line arriving in pieces, never ended.
            (vec!["{\"long\":", "\"0123456\"}"], 4, 16),
            // Short lines, but more bytes in all (40) than 2 replies' worth (32).
            (vec!["{\"a\":1}\n"; 5], 2, 32),
        ] {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/results", listener.local_addr().unwrap());
            let (go, wait) = oneshot::channel();
            let server = tokio::spawn(serve_in_two_parts(listener, lines, vec![], wait));
            let ctx = context(16);
            let read = each_line(reqwest::Client::new().get(url), &ctx, requests, |_| Ok(()));
            let _ = go.send(());
            match read.await {
                Err(LlmError::TooLarge { limit, .. }) => assert_eq!(limit, expected),
                other => panic!("expected TooLarge, got {other:?}"),
            }
            server.abort();
        }
    }
}
