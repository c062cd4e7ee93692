//! Integration tests: index.
