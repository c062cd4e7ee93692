//! Test helpers for sleuth: a real HTTP server on 127.0.0.1 that speaks the OpenAI
//! chat-completions protocol (`POST /v1/chat/completions`, also `/chat/completions`) and
//! the Anthropic Messages protocol (`POST /v1/messages`).
//!
//! Why a real server rather than a fake client: the provider clients, their timeouts,
//! connection handling and error mapping are exactly what we want to test, and the CLI
//! integration tests drive the real `sleuth` binary, which can only be pointed at a URL.
//!
//! A test supplies a handler `Fn(&ReceivedRequest) -> Reply`; the server answers every
//! request with whatever the handler returns (a well-formed completion, an error status,
//! a hang, a dropped connection, garbage bytes or a truncated body) and keeps a log of
//! every request it received.
//!
//! [`MockServer::spawn_with_cache`] adds an emulation of the providers' prompt caches
//! ([`PromptCache`]): OpenAI's automatic prefix caching and Anthropic's explicit
//! breakpoints, each reported in its provider's usage fields.
//!
//! [`Cassette`] replays responses that OpenAI and Anthropic really sent (status,
//! headers such as `retry-after`, body), kept small under `cassettes/` with their
//! sources in `cassettes/README.md`: the conformance suite runs the clients on them.
//!
//! The providers' batch APIs are emulated on the same server ([`MockServer::spawn_with_batches`],
//! module `batch`): OpenAI's file upload and Batches, Anthropic's Message Batches, with
//! status changes over polls, failed and expired requests, and results out of order.
//!
//! [`RedisServer`] starts a real `redis-server` on a free loopback port for the tests of
//! the shared response cache.
//!
//! ```no_run
//! use sleuth_testkit::{MockServer, Reply};
//! // From a plain #[test]: the server runs its own runtime on a background thread.
//! let server = MockServer::spawn(|req| Reply::text(format!("call {}", req.index)));
//! let base_url = server.url(); // http://127.0.0.1:PORT/v1
//! # drop(base_url);
//! assert_eq!(server.requests().len(), 0);
//! ```

mod batch;
mod cache;
mod cassette;
mod prompt;
mod redis;
mod reply;
mod request;
mod server;

pub use batch::BatchPlan;
pub use cache::PromptCache;
pub use cassette::{Cassette, Recorded};
pub use redis::RedisServer;
pub use reply::{Protocol, Reply};
pub use request::ReceivedRequest;
pub use server::{Handler, MockServer};

/// A handler that answers the `i`-th request with `replies[i]`, repeating the last reply
/// once the list is exhausted.
pub fn sequence(replies: Vec<Reply>) -> impl Fn(&ReceivedRequest) -> Reply + Send + Sync {
    assert!(!replies.is_empty(), "sequence needs at least one reply");
    move |req| replies[req.index.min(replies.len() - 1)].clone()
}
