//! Python exceptions carrying the CLI's one-line messages.
//!
//! One base class, `SleuthError`, so a notebook can catch everything sleuth raises;
//! subclasses say which layer refused (bad data, a model that cannot be opened or
//! failed, a method or setting that does not exist, a run directory in use, a budget).
//! The classes live in module `sleuth` (tracebacks read `sleuth.MethodError`, not the
//! extension's private name), and messages name keywords, not CLI flags (the library
//! words its knobs for Python once the module has called `sleuth::knob::speak_as`).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    sleuth,
    SleuthError,
    PyException,
    "Base class of every error sleuth raises; the message is the CLI's one-line message."
);
create_exception!(
    sleuth,
    DataError,
    SleuthError,
    "A benchmark or run file could not be read (the message names file and line)."
);
create_exception!(
    sleuth,
    ModelError,
    SleuthError,
    "A model could not be opened, or a call to it failed."
);
create_exception!(
    sleuth,
    MethodError,
    SleuthError,
    "An unknown method or setting, or a setting value it does not accept."
);
create_exception!(
    sleuth,
    RunLockedError,
    SleuthError,
    "Another sleuth process is writing this run directory."
);
create_exception!(
    sleuth,
    BudgetExceeded,
    SleuthError,
    "The run stopped before its billed cost would pass max_cost."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SleuthError", py.get_type::<SleuthError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("MethodError", py.get_type::<MethodError>())?;
    m.add("RunLockedError", py.get_type::<RunLockedError>())?;
    m.add("BudgetExceeded", py.get_type::<BudgetExceeded>())?;
    Ok(())
}

/// A library error as the matching Python exception, its message in Python's words
/// (keywords for the CLI's flags).
pub fn to_py(e: sleuth::Error) -> PyErr {
    let message = e.to_string();
    match e {
        sleuth::Error::Data(_) | sleuth::Error::Index(_) | sleuth::Error::IndexAt { .. } => {
            DataError::new_err(message)
        }
        sleuth::Error::Method(_) | sleuth::Error::Template(_) => MethodError::new_err(message),
        sleuth::Error::Llm(_) => ModelError::new_err(message),
        sleuth::Error::Agent(e) => match e.kind() {
            sleuth::methods::ErrorKind::Model => ModelError::new_err(message),
            sleuth::methods::ErrorKind::Template | sleuth::methods::ErrorKind::Method => {
                MethodError::new_err(message)
            }
        },
        sleuth::Error::RunLocked { .. } => RunLockedError::new_err(message),
        sleuth::Error::Score(_) => DataError::new_err(message),
        sleuth::Error::Experiment(e) => experiment(e),
        sleuth::Error::Io { .. }
        | sleuth::Error::Invalid(_)
        | sleuth::Error::RunDiffers { .. }
        | sleuth::Error::Export(_) => SleuthError::new_err(message),
    }
}

/// An experiment's refusal as the exception its cause calls for.
fn experiment(e: sleuth::study::ExperimentError) -> PyErr {
    use sleuth::study::ExperimentError as E;
    match &e {
        E::DataMissing { .. } => DataError::new_err(e.to_string()),
        E::NoSetupQuestions { .. } => SleuthError::new_err(e.to_string()),
        E::BudgetSpent { .. } => BudgetExceeded::new_err(e.to_string()),
    }
}

pub fn data(e: sleuth::data::DataError) -> PyErr {
    DataError::new_err(e.to_string())
}

pub fn method(message: impl std::fmt::Display) -> PyErr {
    MethodError::new_err(message.to_string())
}

/// A report that could not be made: a baseline the records do not hold (or that names
/// a sweep's method) is a `MethodError`, records or files are as [`to_py`] says, and
/// a bad table name or option is a `SleuthError`.
pub fn report(e: sleuth::study::ReportError) -> PyErr {
    use sleuth::study::ReportError as R;
    match e {
        R::Records(e) => to_py(e),
        R::UnknownBaseline { .. } | R::AmbiguousBaseline { .. } => method(e),
        other => SleuthError::new_err(with_causes(&other)),
    }
}

/// The error and its causes on one line, each cause once (as the CLI prints errors).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !text.contains(&c_text) {
            text = format!("{text}: {c_text}");
        }
        cause = c.source();
    }
    text
}
