//! Integration tests of the model layer against a real HTTP server on 127.0.0.1
//! (`sleuth-testkit`): request shapes, error mapping, middleware and secrets.

mod anthropic;
mod batch;
mod middleware;
mod openai;
mod secrets;
#[cfg(feature = "redis")]
mod shared_cache;
mod specs;
mod structured;
mod support;
