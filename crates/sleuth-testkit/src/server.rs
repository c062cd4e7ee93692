//! The server itself: hyper's HTTP/1.1 connection handling on a tokio listener bound to
//! an ephemeral port of 127.0.0.1. Misbehaviour (hangs, dropped connections, truncated
//! bodies) is produced by failing the service or the body stream, which makes hyper
//! abort the connection exactly like a crashed or overloaded server would.

use crate::batch::{BatchPlan, Batches};
use crate::cache::CacheState;
use crate::reply::{completion_body, Protocol};
use crate::{PromptCache, ReceivedRequest, Reply};
use futures::{stream, StreamExt};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Answers one request.
pub type Handler = Arc<dyn Fn(&ReceivedRequest) -> Reply + Send + Sync>;

type Body = BoxBody<Bytes, std::io::Error>;

struct State {
    handler: Handler,
    log: Mutex<Vec<ReceivedRequest>>,
    /// The prompt-cache emulation, when the server was started with one.
    cache: Option<Mutex<CacheState>>,
    /// The batch APIs' files and batches (see [`crate::batch`]).
    batches: Mutex<Batches>,
}

/// A running mock server; it stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<State>,
    // Dropping the sender tells the accept loop and every open connection to stop.
    shutdown: Option<watch::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockServer {
    /// Starts the server on the current tokio runtime.
    pub async fn start(
        handler: impl Fn(&ReceivedRequest) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        Self::start_state(new_state(handler, None)).await
    }

    /// [`MockServer::start`] with the prompt-cache emulation (see [`PromptCache`]).
    pub async fn start_with_cache(
        cache: PromptCache,
        handler: impl Fn(&ReceivedRequest) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        Self::start_state(new_state(handler, Some(cache))).await
    }

    async fn start_state(state: Arc<State>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = watch::channel(());
        tokio::spawn(accept_loop(listener, state.clone(), rx));
        MockServer {
            addr,
            state,
            shutdown: Some(tx),
            thread: None,
        }
    }

    /// [`MockServer::spawn`] whose batch APIs progress as `plan` says (the default
    /// plan answers two polls as still running).
    pub fn spawn_with_batches(
        plan: BatchPlan,
        handler: impl Fn(&ReceivedRequest) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        let state = new_state(handler, None);
        *state.batches.lock().expect("batches lock") = Batches::new(plan);
        Self::spawn_state(state)
    }

    /// Starts the server on its own runtime in a background thread, for plain `#[test]`
    /// functions (e.g. tests that spawn the `sleuth` binary).
    pub fn spawn(
        handler: impl Fn(&ReceivedRequest) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        Self::spawn_state(new_state(handler, None))
    }

    /// [`MockServer::spawn`] with the prompt-cache emulation: completions report cached
    /// prompt tokens the way the provider of their protocol does (see [`PromptCache`]).
    pub fn spawn_with_cache(
        cache: PromptCache,
        handler: impl Fn(&ReceivedRequest) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        Self::spawn_state(new_state(handler, Some(cache)))
    }

    fn spawn_state(state: Arc<State>) -> MockServer {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("local addr");
        let (tx, rx) = watch::channel(());
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name(format!("mock-server-{}", addr.port()))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("mock server runtime");
                rt.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("tokio listener");
                    accept_loop(listener, thread_state, rx).await;
                });
                // Dropping the runtime cancels connections still hanging.
                rt.shutdown_background();
            })
            .expect("spawn mock server thread");
        MockServer {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// Replays `cassette`'s responses in order, one per request (see
    /// [`Cassette::replay`]).
    pub fn replay(cassette: &crate::Cassette) -> MockServer {
        Self::spawn(cassette.replay())
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:PORT/v1`; both protocols live under it
    /// (`/chat/completions`, `/messages`).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bare origin, `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.state.log.lock().expect("log lock").clone()
    }

    /// How many requests arrived so far.
    pub fn request_count(&self) -> usize {
        self.state.log.lock().expect("log lock").len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        drop(self.shutdown.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish()
    }
}

fn new_state(
    handler: impl Fn(&ReceivedRequest) -> Reply + Send + Sync + 'static,
    cache: Option<PromptCache>,
) -> Arc<State> {
    Arc::new(State {
        handler: Arc::new(handler),
        log: Mutex::new(Vec::new()),
        cache: cache.map(|c| Mutex::new(CacheState::new(c))),
        batches: Mutex::new(Batches::new(BatchPlan::default())),
    })
}

async fn accept_loop(listener: TcpListener, state: Arc<State>, mut stop: watch::Receiver<()>) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            _ = stop.changed() => return,
        };
        let state = state.clone();
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| respond(req, state.clone()));
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {}
                _ = stop.changed() => {}
            }
        });
    }
}

fn dropped() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        "mock server dropped the connection",
    )
}

fn full(status: u16, content_type: &str, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(
            Full::new(Bytes::from(body))
                .map_err(|never| match never {})
                .boxed(),
        )
        .expect("response")
}

/// A body sent with chunked transfer encoding in 997-byte pieces (no length announced),
/// so a client reading lines meets lines cut across chunks.
fn chunked(content_type: &str, body: String) -> Response<Body> {
    let bytes = Bytes::from(body);
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = (0..bytes.len())
        .step_by(997)
        .map(|at| Ok(Frame::data(bytes.slice(at..(at + 997).min(bytes.len())))))
        .collect();
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(BodyExt::boxed(StreamBody::new(stream::iter(frames))))
        .expect("response")
}

async fn respond(
    req: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<Body>, std::io::Error> {
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let bytes = req
        .into_body()
        .collect()
        .await
        .map_err(|_| dropped())?
        .to_bytes();
    let raw_body = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_str(&raw_body).unwrap_or(serde_json::Value::Null);
    let received = {
        let mut log = state.log.lock().expect("log lock");
        let r = ReceivedRequest {
            index: log.len(),
            method,
            path,
            headers,
            body,
            raw_body,
        };
        log.push(r.clone());
        r
    };
    if Batches::serves(&received.path) {
        let dispatch = |batch: &str, path: &str, body: &serde_json::Value| {
            let inner = {
                let mut log = state.log.lock().expect("log lock");
                let r = ReceivedRequest {
                    index: log.len(),
                    method: "POST".into(),
                    path: path.to_string(),
                    headers: vec![("x-batch-id".into(), batch.to_string())],
                    body: body.clone(),
                    raw_body: body.to_string(),
                };
                log.push(r.clone());
                r
            };
            (state.handler)(&inner)
        };
        let (status, content_type, body) = state
            .batches
            .lock()
            .expect("batches lock")
            .respond(&received, &dispatch);
        if status == 200 && Batches::downloads(&received) {
            return Ok(chunked(content_type, body));
        }
        return Ok(full(status, content_type, body));
    }
    let Some(protocol) = Protocol::of_path(&received.path) else {
        let msg = format!("mock server: no route for {}", received.path);
        return Ok(full(404, "text/plain", msg));
    };

    let mut reply = (state.handler)(&received);
    while let Reply::Delayed(after, inner) = reply {
        tokio::time::sleep(after).await;
        reply = *inner;
    }
    match reply {
        Reply::Text(text) => {
            let cached = state.cache.as_ref().map(|c| {
                c.lock()
                    .expect("cache lock")
                    .serve(protocol, &received.body)
            });
            let body = completion_body(protocol, &received, &text, cached).to_string();
            Ok(full(200, "application/json", body))
        }
        Reply::Json(v) => Ok(full(200, "application/json", v.to_string())),
        Reply::Status {
            code,
            retry_after,
            body,
        } => {
            let mut resp = full(code, "application/json", body);
            if let Some(secs) = retry_after {
                resp.headers_mut().insert("retry-after", secs.into());
            }
            Ok(resp)
        }
        Reply::Hang(d) => {
            tokio::time::sleep(d).await;
            Err(dropped())
        }
        Reply::CloseConnection => Err(dropped()),
        Reply::Malformed(raw) => Ok(full(200, "application/json", raw)),
        Reply::Truncated => {
            let body = completion_body(protocol, &received, "this body never arrives whole", None)
                .to_string();
            let half = Bytes::from(body[..body.len() / 2].to_string());
            // The pause lets the headers and first half reach the client before the
            // connection drops, so the failure shows up while reading the body.
            let frames =
                stream::iter(vec![Ok(Frame::data(half)), Err(dropped())]).then(|frame| async {
                    if frame.is_err() {
                        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                    }
                    frame
                });
            Ok(Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .header("content-length", body.len())
                .body(BodyExt::boxed(StreamBody::new(frames)))
                .expect("response"))
        }
        Reply::Recorded(r) => {
            let mut resp = full(r.status, "application/json", r.body);
            for (name, value) in &r.headers {
                if let (Ok(name), Ok(value)) = (
                    hyper::header::HeaderName::from_bytes(name.as_bytes()),
                    hyper::header::HeaderValue::from_str(value),
                ) {
                    resp.headers_mut().insert(name, value);
                }
            }
            Ok(resp)
        }
        Reply::Expired => Ok(full(
            504,
            "application/json",
            r#"{"error":{"message":"expired (a batch-only reply sent on its own)","type":"server_error"}}"#.into(),
        )),
        Reply::Delayed(..) => unreachable!("delays were unwrapped above"),
    }
}
