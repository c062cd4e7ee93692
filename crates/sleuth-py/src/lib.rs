//! `sleuth._native`: the sleuth library as a CPython extension module (PyO3, abi3).
//!
//! Python users get the same seams the CLI uses — the method registry, the runner and
//! its run directory, the model stack, the loaders and the report — so a notebook and
//! `sleuth eval` write the same records. This layer only converts: structured values
//! cross as JSON text (the record format is already stable JSON, docs/records.md) and
//! the pure-Python package `sleuth` wraps them in friendly objects and DataFrames.
//!
//! Every long call releases the GIL (a notebook's other threads keep running) and
//! wakes every 200 ms to check for Ctrl-C; a Python callable used as the model takes
//! the GIL only for the duration of its own call.

mod errors;
mod model;
mod official;
mod question;
mod report;
mod run;

use pyo3::prelude::*;
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

/// The one tokio runtime of the process, started on first use.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("sleuth")
            .build()
            .expect("the tokio runtime starts")
    })
}

/// Runs the future `make` returns to completion without the GIL. Every 200 ms the
/// calling thread takes the GIL for a moment to let Python raise a pending
/// `KeyboardInterrupt`; the future is then dropped (records already appended stay on
/// disk, so a rerun resumes). The future is made and polled on this thread, so it
/// need not be `Send`; only what `make` captures crosses the GIL boundary.
fn block_on<M, F>(py: Python<'_>, make: M) -> PyResult<F::Output>
where
    M: FnOnce() -> F + Send,
    F: Future,
    F::Output: Send,
{
    py.allow_threads(|| {
        runtime().block_on(async {
            let future = make();
            tokio::pin!(future);
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tokio::select! {
                    out = &mut future => return Ok(out),
                    _ = tick.tick() => {
                        Python::with_gil(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The library's messages name its knobs by this package's keywords.
    sleuth::knob::speak_as(sleuth::knob::Speaker::Python);
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<question::Question>()?;
    m.add_function(wrap_pyfunction!(question::load, m)?)?;
    m.add_function(wrap_pyfunction!(question::default_data_file, m)?)?;
    m.add_function(wrap_pyfunction!(run::ask, m)?)?;
    m.add_function(wrap_pyfunction!(run::eval, m)?)?;
    m.add_function(wrap_pyfunction!(run::experiment, m)?)?;
    m.add_function(wrap_pyfunction!(run::methods, m)?)?;
    m.add_function(wrap_pyfunction!(report::records, m)?)?;
    m.add_function(wrap_pyfunction!(report::record_fields, m)?)?;
    m.add_function(wrap_pyfunction!(report::report, m)?)?;
    m.add_function(wrap_pyfunction!(official::export, m)?)?;
    m.add_function(wrap_pyfunction!(official::score, m)?)?;
    Ok(())
}
