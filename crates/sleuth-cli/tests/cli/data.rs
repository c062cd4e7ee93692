//! Integration tests: data.
