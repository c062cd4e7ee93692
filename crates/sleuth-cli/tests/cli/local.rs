//! Integration tests: local.
