//! Integration tests: eval.
