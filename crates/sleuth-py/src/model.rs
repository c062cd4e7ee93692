//! The model argument: a model spec string (the CLI's `--model`), or a Python callable
//! used as a `ChatModel`.
//!
//! A callable is `f(messages, **kw) -> str` or an object with `complete(messages, **kw)`
//! (a `transformers` pipeline wrapper, vLLM's offline `LLM`, a DSPy `LM`, ...). It is
//! called with the GIL on a blocking thread, so the async runner never stalls on it and
//! concurrent episodes take turns at the interpreter. Whatever it raises becomes a
//! non-retryable model error, which the runner records on that question exactly like a
//! provider's error; the run goes on.

use crate::errors;
use async_trait::async_trait;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use sleuth::llm::{
    ChatModel, ChatRequest, ChatResponse, LlmError, ModelStack, OutputConstraint, Usage,
};
use sleuth::study::{CacheChoice, ModelSetup};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A Python callable as a chat model.
pub struct PyModel {
    name: String,
    target: Arc<Py<PyAny>>,
}

impl PyModel {
    /// `model` itself when it is callable, else its `complete` method.
    pub fn new(model: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<PyModel> {
        let target = if model.hasattr("complete")? {
            model.getattr("complete")?
        } else if model.is_callable() {
            model.clone()
        } else {
            return Err(errors::ModelError::new_err(format!(
                "model must be a spec string (openai:MODEL, scripted:FILE, ...), a callable, or an object with complete(messages, **kw); got {}",
                model.get_type().name()?
            )));
        };
        let name = match name {
            Some(n) => n,
            None => format!("python:{}", default_name(model)?),
        };
        Ok(PyModel {
            name,
            target: Arc::new(target.unbind()),
        })
    }
}

/// The callable's `__name__` (a function, `<lambda>`) or its class name (an object).
fn default_name(model: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(n) = model.getattr("__name__") {
        if let Ok(s) = n.extract::<String>() {
            return Ok(s);
        }
    }
    Ok(model.get_type().name()?.to_string())
}

/// A crude but deterministic token count (whitespace words) for callables that return
/// text only, so usage is never zero (the scripted model counts the same way).
fn approx_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

fn call(
    py: Python<'_>,
    target: &Py<PyAny>,
    name: &str,
    request: &ChatRequest,
) -> PyResult<ChatResponse> {
    let messages = PyList::empty(py);
    for m in &request.messages {
        let d = PyDict::new(py);
        let role = serde_json::to_value(m.role).expect("roles serialize");
        d.set_item("role", role.as_str().unwrap_or("user"))?;
        d.set_item("content", &m.content)?;
        messages.append(d)?;
    }
    let kw = PyDict::new(py);
    kw.set_item("temperature", request.temperature)?;
    kw.set_item("max_tokens", request.max_tokens)?;
    kw.set_item("stop", request.stop.clone())?;
    match &request.constraint {
        Some(OutputConstraint::Grammar(g)) => kw.set_item("grammar", g)?,
        Some(OutputConstraint::JsonSchema(s)) => {
            let json = py.import("json")?;
            kw.set_item("json_schema", json.call_method1("loads", (s.to_string(),))?)?
        }
        // Only the embedded model honours its default grammar.
        Some(OutputConstraint::EmbeddedGrammar(_)) | None => {}
    }
    if request.sample_index > 0 {
        kw.set_item("sample_index", request.sample_index)?;
    }
    let out = target.bind(py).call((messages,), Some(&kw))?;
    let input: u64 = request
        .messages
        .iter()
        .map(|m| approx_tokens(&m.content))
        .sum();
    if let Ok(text) = out.extract::<String>() {
        let usage = Usage {
            input_tokens: input,
            output_tokens: approx_tokens(&text),
            ..Usage::default()
        };
        return Ok(ChatResponse::new(text, usage));
    }
    // DSPy's `LM` and similar return a list of completions: the first is the reply.
    if let Ok(texts) = out.extract::<Vec<String>>() {
        if let Some(text) = texts.into_iter().next() {
            let usage = Usage {
                input_tokens: input,
                output_tokens: approx_tokens(&text),
                ..Usage::default()
            };
            return Ok(ChatResponse::new(text, usage));
        }
    }
    if let Ok(d) = out.downcast::<PyDict>() {
        if let Some(text) = d.get_item("text")? {
            let text: String = text.extract()?;
            let count = |key: &str, default: u64| -> PyResult<u64> {
                match d.get_item(key)? {
                    Some(v) if !v.is_none() => v.extract(),
                    _ => Ok(default),
                }
            };
            let usage = Usage {
                input_tokens: count("input_tokens", input)?,
                output_tokens: count("output_tokens", approx_tokens(&text))?,
                cached_input_tokens: count("cached_input_tokens", 0)?,
                cache_write_tokens: 0,
            };
            return Ok(ChatResponse::new(text, usage));
        }
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{name} returned {}, expected a str, a list of str, or a dict with \"text\"",
        out.get_type().name()?
    )))
}

#[async_trait]
impl ChatModel for PyModel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let target = self.target.clone();
        let name = self.name.clone();
        let request = request.clone();
        tokio::task::spawn_blocking(move || {
            Python::with_gil(|py| {
                call(py, &target, &name, &request)
                    .map_err(|e| LlmError::Config(format!("{name} raised {e}")))
            })
        })
        .await
        .map_err(|e| LlmError::Config(format!("{}: the call did not finish: {e}", self.name)))?
    }
}

/// The CLI's model options (`--cache`, `--max-cost`, `--rpm`, ...): the wrapper's
/// `model_options` dict, one key per field.
#[derive(Debug, Clone, Default, FromPyObject)]
#[pyo3(from_item_all)]
pub struct ModelArgs {
    /// `None`: the CLI's default cache for a spec, none for a callable; `Some("")` or
    /// `no_cache`: none.
    pub cache: Option<String>,
    pub no_cache: bool,
    pub max_cost: Option<f64>,
    /// `None`: the library's default for the spec (longer for a model on this machine).
    pub timeout: Option<u64>,
    pub attempts: u32,
    pub rpm: Option<f64>,
    pub tpm: Option<f64>,
    pub prices: Option<PathBuf>,
    /// `--batch`: every call through the provider's batch API.
    pub batch: bool,
}

impl ModelArgs {
    /// The library's model setup for `model` (a spec, or a callable: then its name).
    pub fn setup_of(&self, model: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<ModelSetup> {
        let mut setup = match model.extract::<String>() {
            Ok(spec) => self.setup(spec, false),
            Err(_) => self.setup(PyModel::new(model, name.clone())?.name.clone(), true),
        };
        setup.name = name;
        Ok(setup)
    }

    /// The library's model setup for `spec` (a callable's name for a callable).
    fn setup(&self, spec: String, callable: bool) -> ModelSetup {
        let mut setup = ModelSetup::new(spec);
        if let Some(secs) = self.timeout {
            setup.timeout = Duration::from_secs(secs.max(1));
        }
        setup.attempts = self.attempts;
        setup.cache = match (&self.cache, self.no_cache) {
            (_, true) => CacheChoice::Off,
            (Some(c), _) if c.is_empty() => CacheChoice::Off,
            (Some(c), _) => CacheChoice::At(c.clone()),
            // A Python function's replies can change with its code while its name
            // stays: never cache it unless asked to.
            (None, _) if callable => CacheChoice::Off,
            (None, _) => CacheChoice::Default,
        };
        setup.max_cost = self.max_cost;
        setup.rpm = self.rpm;
        setup.tpm = self.tpm;
        setup.prices = self.prices.clone();
        setup.batch = self.batch;
        setup
    }
}

/// An opened model: its stack and the setup it came from (whose name records carry).
pub struct Opened {
    pub stack: ModelStack,
    pub setup: ModelSetup,
}

/// Opens `model` (a spec string or a Python callable) with the middleware `args` ask for.
pub fn open(model: &Bound<'_, PyAny>, name: Option<String>, args: &ModelArgs) -> PyResult<Opened> {
    let setup = args.setup_of(model, name)?;
    open_setup(model, setup)
}

/// Opens `model` (a spec string or a Python callable) as `setup` describes it (a job's
/// model: its share of an experiment's budget, its batching).
pub fn open_setup(model: &Bound<'_, PyAny>, setup: ModelSetup) -> PyResult<Opened> {
    if model.extract::<String>().is_ok() {
        let spec = setup.parsed().map_err(errors::to_py)?;
        if !spec.is_core() {
            return Err(errors::ModelError::new_err(format!(
                "`{spec}` is the embedded llama.cpp model, which the Python package does not include; serve it with llama.cpp's server and use openai-compat:, or pass a Python callable"
            )));
        }
        let stack = setup.open().map_err(errors::to_py)?;
        return Ok(Opened { stack, setup });
    }
    let provider = PyModel::new(model, setup.name.clone())?;
    let stack = setup.open_with(Arc::new(provider)).map_err(errors::to_py)?;
    Ok(Opened { stack, setup })
}
