//! Tells the integration tests whether the benchmark subsets are here.
//!
//! Most CLI tests run on the real subsets in `../shared/data` (beside the repository).
//! A stranger's clone has no such folder: there those tests are compiled as ignored,
//! each listed with the reason, and the rest of the suite runs (the few-question
//! fixtures in `fixtures/benchmarks` cover the basics). CI sets
//! `SLEUTH_REQUIRE_SHARED=1`, which turns them back on so that a missing folder fails.
//! `SLEUTH_SHARED_DATA` points the tests at another copy.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_data)");
    println!("cargo::rerun-if-env-changed=SLEUTH_SHARED_DATA");
    println!("cargo::rerun-if-env-changed=SLEUTH_REQUIRE_SHARED");
    println!("cargo::rerun-if-changed=build.rs");
    let dir = match std::env::var_os("SLEUTH_SHARED_DATA").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
            .join("../../../shared/data"),
    };
    // Watching the folder makes a later copy of ../shared turn the tests on.
    println!("cargo::rerun-if-changed={}", dir.display());
    println!("cargo::rustc-env=SLEUTH_SHARED_DATA_DIR={}", dir.display());
    let required = std::env::var("SLEUTH_REQUIRE_SHARED").is_ok_and(|v| v == "1");
    if dir.is_dir() || required {
        println!("cargo::rustc-cfg=shared_data");
    }
}
