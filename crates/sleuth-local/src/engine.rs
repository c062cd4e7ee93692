//! The inference thread: it owns the llama.cpp model and context and serves requests.
//!
//! A llama.cpp context is not `Send`, and one context runs one sequence at a time, so a
//! dedicated thread owns both and takes jobs from a channel; callers await a oneshot
//! reply. Keeping the context alive between requests is what makes prefix reuse
//! possible: the thread remembers which tokens its KV cache holds, and a prompt that
//! extends the previous one (the normal case in an agent episode, where each turn
//! appends an observation) only pays for the tokens after the longest common prefix.

use crate::options::LocalOptions;
use crate::prompt::Template;
use crate::sampler::TokenSampler;
use crate::stop::find_stop;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::DecodeError;
use sleuth_llm::{ChatResponse, FinishReason, LlmError, Message, Usage};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, OnceLock};
use std::time::Instant;

/// Tokens handed to llama.cpp per decode call while reading a prompt.
const BATCH: usize = 512;
/// The context used when neither the options nor a smaller training context say otherwise.
const DEFAULT_CTX: u32 = 8192;
/// The provider name in errors.
const PROVIDER: &str = "local";

/// One generation, already resolved from a `ChatRequest` and the options.
#[derive(Debug, Clone)]
pub(crate) struct Generation {
    pub messages: Vec<Message>,
    pub max_tokens: Option<u32>,
    pub stop: Vec<String>,
    pub temperature: f32,
    pub seed: u32,
    /// A GBNF grammar the output must match (root rule `root`).
    pub grammar: Option<String>,
    /// 1.0 for none; see [`LocalOptions::repeat_penalty`].
    pub repeat_penalty: f32,
}

/// What can be asked of the thread.
pub(crate) enum Job {
    Generate(
        Generation,
        tokio::sync::oneshot::Sender<Result<(ChatResponse, Timings), LlmError>>,
    ),
    /// Whether a grammar loads (llama.cpp's parser is the judge), and, when `sample` is
    /// given, whether that text can be produced under it token by token.
    CheckGrammar {
        grammar: String,
        sample: Option<String>,
        reply: tokio::sync::oneshot::Sender<Result<bool, LlmError>>,
    },
}

/// Where one generation's time went: reading the prompt (only the tokens not reused)
/// and producing the output. For benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Prompt tokens actually decoded (the prompt minus the reused prefix).
    pub prompt_tokens: usize,
    pub prompt_secs: f64,
    /// Tokens sampled, including one that ended the output.
    pub sampled_tokens: usize,
    pub generation_secs: f64,
}

/// Facts about the loaded model, fixed at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub path: PathBuf,
    /// The context window in use.
    pub ctx_size: u32,
    pub ctx_train: u32,
    pub threads: u32,
    /// `"gguf"` when the file's own chat template is used, `"chatml"` otherwise.
    pub template: &'static str,
    pub params: u64,
}

/// The process-wide llama.cpp backend: it may be initialised only once.
fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp logs every tensor at load; route it to tracing (SLEUTH_LOG=debug).
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Starts the thread for the model at `path`; returns once the model is loaded (or has
/// failed to load), so a bad file is reported at open time, not at the first request.
pub(crate) fn start(
    path: &Path,
    opts: &LocalOptions,
) -> Result<(mpsc::Sender<Job>, ModelInfo), crate::LocalError> {
    let (jobs, inbox) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    let path = path.to_path_buf();
    let opts = opts.clone();
    let load_error = |path: &Path, message: String| crate::LocalError::Load {
        path: path.to_path_buf(),
        message,
    };
    std::thread::Builder::new()
        .name("sleuth-llama".into())
        .spawn({
            let path = path.clone();
            move || {
                let loaded = backend().and_then(|b| {
                    LlamaModel::load_from_file(b, &path, &LlamaModelParams::default())
                        .map_err(|e| e.to_string())
                        .map(|m| (b, m))
                });
                let (backend, model) = match loaded {
                    Ok(x) => x,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let engine = Engine::new(backend, &model, &path, &opts);
                match engine {
                    Ok(mut engine) => {
                        let _ = ready_tx.send(Ok(engine.info.clone()));
                        engine.serve(inbox);
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            }
        })
        .map_err(crate::LocalError::io("start the inference thread"))?;
    match ready_rx.recv() {
        Ok(Ok(info)) => Ok((jobs, info)),
        Ok(Err(message)) => Err(load_error(&path, message)),
        Err(_) => Err(load_error(
            &path,
            "the inference thread died while loading".into(),
        )),
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: Template,
    /// The tokens whose keys and values sit in the KV cache, position by position.
    cached: Vec<LlamaToken>,
    prefix_reuse: bool,
    /// Index in the last decoded batch of the token whose logits are kept.
    last_logits_index: i32,
    info: ModelInfo,
}

impl<'m> Engine<'m> {
    fn new(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        path: &Path,
        opts: &LocalOptions,
    ) -> Result<Self, String> {
        let ctx_train = model.n_ctx_train();
        let ctx_size = opts
            .ctx_size
            .map(NonZeroU32::get)
            .unwrap_or_else(|| DEFAULT_CTX.min(ctx_train.max(512)));
        let threads = opts.effective_threads();
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(ctx_size))
            .with_n_batch(BATCH as u32)
            .with_n_ubatch(BATCH as u32)
            .with_n_threads(threads as i32)
            .with_n_threads_batch(threads as i32);
        let ctx = model
            .new_context(backend, params)
            .map_err(|e| format!("cannot create a context of {ctx_size} tokens: {e}"))?;
        let template = Template::for_model(model);
        let info = ModelInfo {
            path: path.to_path_buf(),
            ctx_size: ctx.n_ctx(),
            ctx_train,
            threads,
            template: template.source,
            params: model.n_params(),
        };
        Ok(Engine {
            model,
            ctx,
            template,
            cached: Vec::new(),
            prefix_reuse: opts.prefix_reuse,
            last_logits_index: 0,
            info,
        })
    }

    fn serve(&mut self, inbox: mpsc::Receiver<Job>) {
        // The loop ends when every sender (every clone of the model handle) is dropped.
        while let Ok(job) = inbox.recv() {
            match job {
                Job::Generate(generation, reply) => {
                    let result = self.generate(&generation);
                    if result.is_err() {
                        // A failed decode may leave the cache half-written: forget it all.
                        self.ctx.clear_kv_cache();
                        self.cached.clear();
                    }
                    let _ = reply.send(result);
                }
                Job::CheckGrammar {
                    grammar,
                    sample,
                    reply,
                } => {
                    let _ = reply.send(self.check_grammar(&grammar, sample.as_deref()));
                }
            }
        }
    }

    fn generate(&mut self, g: &Generation) -> Result<(ChatResponse, Timings), LlmError> {
        let tokens = self.template.tokens(self.model, &g.messages)?;
        let n_ctx = self.ctx.n_ctx() as usize;
        if tokens.len() >= n_ctx {
            return Err(overflow(format!(
                "the prompt is {} tokens; the context holds {n_ctx} (raise it with the \
                 context-size option)",
                tokens.len()
            )));
        }
        let started = Instant::now();
        let reused = self.load_prompt(&tokens)?;
        let prompt_secs = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let mut sampled = 0usize;
        let mut sampler = TokenSampler::new(self.model, g)?;
        let max_new = g.max_tokens.map_or(usize::MAX, |m| m as usize);
        let vocab = self.model.vocab();
        let mut text = Vec::new();
        let mut generated = 0usize;
        let mut finish = FinishReason::Length;
        // Logits of the last decoded batch's last token.
        let mut logits_at = self.last_logits_index;
        while generated < max_new && self.cached.len() < n_ctx {
            let token = sampler.sample(&self.ctx, logits_at);
            sampled += 1;
            if vocab.is_eog(token) {
                finish = FinishReason::Stop;
                break;
            }
            generated += 1;
            let from = text.len();
            text.extend(vocab.token_to_piece(token, false, None));
            if let Some(cut) = find_stop(&text, &g.stop, from) {
                text.truncate(cut);
                finish = FinishReason::Stop;
                break;
            }
            self.decode(&[token], self.cached.len())?;
            logits_at = 0;
        }
        let usage = Usage {
            input_tokens: tokens.len() as u64,
            output_tokens: generated as u64,
            cached_input_tokens: reused as u64,
            cache_write_tokens: 0,
        };
        let timings = Timings {
            prompt_tokens: tokens.len() - reused,
            prompt_secs,
            sampled_tokens: sampled,
            generation_secs: started.elapsed().as_secs_f64(),
        };
        let mut response = ChatResponse::new(String::from_utf8_lossy(&text), usage);
        response.finish_reason = finish;
        Ok((response, timings))
    }

    /// Brings the KV cache to hold exactly `tokens`, reusing the longest common prefix
    /// with what it holds; returns how many prompt tokens were reused.
    fn load_prompt(&mut self, tokens: &[LlamaToken]) -> Result<usize, LlmError> {
        let common = if self.prefix_reuse {
            common_prefix(&self.cached, tokens)
        } else {
            0
        };
        // The last prompt token is always decoded again: its logits start generation.
        let mut keep = common.min(tokens.len().saturating_sub(1));
        if self
            .ctx
            .kv_cache_seq_rm(0, Some(keep as u32), None)
            .is_err()
        {
            // Some architectures cannot drop a tail; start over.
            self.ctx.clear_kv_cache();
            keep = 0;
        }
        self.cached.truncate(keep);
        self.decode(&tokens[keep..], keep)?;
        Ok(keep)
    }

    /// Decodes `tokens` at positions `start..`, in batches, keeping logits for the last.
    fn decode(&mut self, tokens: &[LlamaToken], start: usize) -> Result<(), LlmError> {
        let mut batch = LlamaBatch::new(BATCH, 1);
        for (n, chunk) in tokens.chunks(BATCH).enumerate() {
            batch.clear();
            let last_chunk = (n + 1) * BATCH >= tokens.len();
            for (i, &token) in chunk.iter().enumerate() {
                let pos = start + n * BATCH + i;
                let logits = last_chunk && i + 1 == chunk.len();
                batch
                    .add(token, pos as i32, &[0], logits)
                    .map_err(|e| internal(format!("batch: {e}")))?;
            }
            self.ctx.decode(&mut batch).map_err(|e| match e {
                DecodeError::NoKvCacheSlot => overflow("no room left in the KV cache".into()),
                e => internal(format!("llama.cpp decode failed: {e}")),
            })?;
            self.cached.extend_from_slice(chunk);
            self.last_logits_index = chunk.len() as i32 - 1;
        }
        Ok(())
    }
}

impl Engine<'_> {
    /// Loads `grammar`; with a `sample`, feeds its tokens through the grammar and asks
    /// whether the text is complete under it (the end-of-text token is then allowed).
    fn check_grammar(&self, grammar: &str, sample: Option<&str>) -> Result<bool, LlmError> {
        let mut sampler = crate::sampler::grammar(self.model, grammar)?;
        let Some(sample) = sample else {
            return Ok(true);
        };
        let vocab = self.model.vocab();
        for token in vocab.tokenize(sample.as_bytes(), false, false) {
            if sampler.try_accept(token).is_err() {
                return Ok(false);
            }
        }
        let mut end =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(vocab.eos(), 0.0, 0.0)], false);
        sampler.apply(&mut end);
        Ok(end.data[0].logit().is_finite())
    }
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn overflow(message: String) -> LlmError {
    LlmError::ContextOverflow {
        provider: PROVIDER.into(),
        message,
    }
}

fn internal(message: String) -> LlmError {
    LlmError::Decode {
        provider: PROVIDER.into(),
        message,
        raw: String::new(),
    }
}
