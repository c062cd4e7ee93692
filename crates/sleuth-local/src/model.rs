//! [`LocalModel`]: the embedded model behind the core `ChatModel` trait.

use crate::engine::{self, Generation, Job, ModelInfo, Timings};
use crate::options::LocalOptions;
use crate::Result;
use async_trait::async_trait;
use sleuth_llm::quirks::SchemaBounds;
use sleuth_llm::{ChatModel, ChatRequest, ChatResponse, LlmError, OutputConstraint};
use std::path::Path;
use std::sync::{mpsc, Mutex};

/// A GGUF model run in-process by llama.cpp on its own thread.
///
/// Requests are served one at a time in arrival order; the KV cache is kept between
/// them, so the turns of one episode share their common prompt prefix. Dropping the
/// model (every clone of an `Arc` holding it) stops the thread and frees the memory.
pub struct LocalModel {
    name: String,
    jobs: mpsc::Sender<Job>,
    info: ModelInfo,
    opts: LocalOptions,
    last_timings: Mutex<Option<Timings>>,
}

impl LocalModel {
    /// Loads the GGUF at `path` and starts its thread; fails here when the file cannot
    /// be loaded. `name` is what [`ChatModel::name`] reports (e.g. `local:smollm2`).
    pub fn load(name: impl Into<String>, path: &Path, opts: LocalOptions) -> Result<Self> {
        if !path.is_file() {
            return Err(crate::LocalError::MissingFile(path.to_path_buf()));
        }
        let (jobs, info) = engine::start(path, &opts)?;
        Ok(LocalModel {
            name: name.into(),
            jobs,
            info,
            opts,
            last_timings: Mutex::new(None),
        })
    }

    /// The loaded model's context size, threads, template source and size.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    pub fn options(&self) -> &LocalOptions {
        &self.opts
    }

    /// Where the most recent completion's time went (prompt reading vs generation).
    pub fn last_timings(&self) -> Option<Timings> {
        *self.last_timings.lock().expect("timings lock")
    }

    /// Whether llama.cpp accepts `grammar` and, given `sample`, whether that text is a
    /// complete match of it. A diagnostic for grammar authors and tests.
    pub async fn check_grammar(
        &self,
        grammar: &str,
        sample: Option<&str>,
    ) -> std::result::Result<bool, LlmError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.send(Job::CheckGrammar {
            grammar: grammar.to_string(),
            sample: sample.map(str::to_string),
            reply,
        })?;
        answer.await.map_err(|_| stopped())?
    }

    fn send(&self, job: Job) -> std::result::Result<(), LlmError> {
        self.jobs.send(job).map_err(|_| stopped())
    }

    /// The grammar to sample under, if constraints are enabled and the request has one.
    fn grammar_for(&self, request: &ChatRequest) -> std::result::Result<Option<String>, LlmError> {
        if !self.opts.grammar {
            return Ok(None);
        }
        match &request.constraint {
            None => Ok(None),
            Some(OutputConstraint::Grammar(g) | OutputConstraint::EmbeddedGrammar(g)) => {
                Ok(Some(g.clone()))
            }
            Some(OutputConstraint::JsonSchema(schema)) => {
                // llama.cpp's converter expands each bound into nested rules; the same
                // bounds as the llama.cpp server presets keep the grammar compilable.
                let schema = SchemaBounds::LLAMA_CPP.clamp(schema);
                llama_cpp_2::json_schema_to_grammar(&schema.to_string())
                    .map(Some)
                    .map_err(|e| {
                        LlmError::Config(format!("cannot turn the JSON schema into a grammar: {e}"))
                    })
            }
        }
    }
}

fn stopped() -> LlmError {
    LlmError::Connection {
        provider: "local".into(),
        message: "the inference thread has stopped".into(),
    }
}

#[async_trait]
impl ChatModel for LocalModel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn complete(&self, request: &ChatRequest) -> std::result::Result<ChatResponse, LlmError> {
        let generation = Generation {
            messages: request.messages.clone(),
            max_tokens: request.max_tokens,
            stop: request.stop.clone(),
            temperature: request.temperature,
            seed: self.opts.seed.wrapping_add(request.sample_index),
            grammar: self.grammar_for(request)?,
            repeat_penalty: self.opts.repeat_penalty,
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.send(Job::Generate(generation, reply))?;
        let (response, timings) = answer.await.map_err(|_| stopped())??;
        *self.last_timings.lock().expect("timings lock") = Some(timings);
        Ok(response)
    }
}
