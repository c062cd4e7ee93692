//! What every layer of sleuth shares and nothing else: a file rewritten in place without
//! ever leaving a cut one ([`atomic`]), an advisory lock on a file that ends with its
//! process ([`file_lock`]), the one way enums are named and parsed ([`names`]), and the
//! choices a user makes, worded by whichever front end speaks ([`knob`]).
//!
//! It is a crate of its own because the layers above it (data, retrieval, the LLM
//! client, the agents) are crates too, and each needs these without depending on any
//! other.

pub mod atomic;
pub mod file_lock;
pub mod knob;
pub mod names;
