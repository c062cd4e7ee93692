//! `sleuth model bench`: how fast the embedded backend is, against baselines measured in
//! the same run.
//!
//! Three figures, each a ratio: prompt and generation throughput against llama.cpp run
//! directly on the same file and thread count (through `llama-cpp-python`, when a Python
//! that has it is given), and the wall time of an episode-like sequence of turns (a
//! growing conversation, each turn appending an observation and generating a short reply)
//! with prefix reuse against full reprocessing. Peak resident memory (VmHWM) is read from
//! `/proc` at the end.

use crate::{LocalModel, LocalOptions};
use sleuth_llm::{ChatModel, ChatRequest, LlmError, Message};
use std::fmt;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// A known model name or a `.gguf` path.
    pub model: String,
    pub threads: Option<u32>,
    /// Turns of the episode-like sequence.
    pub turns: usize,
    /// A Python interpreter with `llama_cpp` importable, for the direct baseline.
    pub baseline_python: Option<String>,
}

/// Everything measured; `Display` prints the report.
#[derive(Debug, Clone)]
pub struct BenchReport {
    pub model: String,
    pub threads: u32,
    pub ctx_size: u32,
    pub prompt_tokens: u64,
    pub prompt_tps: f64,
    pub gen_tokens: u64,
    pub gen_tps: f64,
    pub baseline: Result<Baseline, String>,
    pub turns: usize,
    pub appended_per_turn: f64,
    pub generated_in_episode: u64,
    pub reuse_secs: f64,
    pub full_secs: f64,
    pub cached_tokens: u64,
    pub input_tokens: u64,
    pub identical_outputs: bool,
    pub peak_mb: Option<f64>,
}

/// llama.cpp measured directly.
#[derive(Debug, Clone, Copy)]
pub struct Baseline {
    pub prompt_tps: f64,
    pub gen_tps: f64,
}

/// Tokens generated in the throughput measurement.
const GEN_TOKENS: u32 = 128;
/// Tokens generated per episode turn.
const TURN_TOKENS: u32 = 60;
/// Timed repetitions; the best (least disturbed by other processes) is reported.
const REPS: usize = 3;
/// Alternations of our throughput measurement and the baseline's.
const ROUNDS: usize = 2;

/// Runs the benchmark. Blocking; loads the model twice (with and without prefix reuse).
pub fn run(config: &BenchConfig) -> Result<BenchReport, LlmError> {
    let path = crate::resolve(&config.model)?;
    let mut opts = LocalOptions::default().prefix_reuse(false);
    if let Some(t) = config.threads {
        opts = opts.threads(t);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| LlmError::Config(format!("cannot start a runtime: {e}")))?;
    let full = LocalModel::load("bench", &path, opts.clone())?;
    let info = full.info().clone();

    let prompt_text = long_text(4);
    let prompt_req = ChatRequest::new(vec![Message::user(prompt_text.clone())]).max_tokens(1);
    rt.block_on(full.complete(&prompt_req))?; // warm-up: page the weights in
    let gen_prompt = "Count from 1 to 500 in words, separated by commas.";
    let gen_req = ChatRequest::new(vec![Message::user(gen_prompt)]).max_tokens(GEN_TOKENS);

    // Ours and the baseline take turns, best figure of each kept, so a burst of load
    // from other processes cannot favour one side.
    let (mut prompt_tps, mut gen_tps, mut prompt_tokens, mut gen_tokens) = (0.0f64, 0.0f64, 0, 0);
    let mut baseline_result: Result<Baseline, String> =
        Err("not measured (pass --baseline-python PYTHON with llama-cpp-python)".into());
    for _ in 0..ROUNDS {
        // The engine's own timings: prompt reading and token generation, separately.
        for _ in 0..REPS {
            let response = rt.block_on(full.complete(&prompt_req))?;
            let t = full.last_timings().expect("timings after a completion");
            prompt_tokens = response.usage.input_tokens;
            prompt_tps = prompt_tps.max(t.prompt_tokens as f64 / t.prompt_secs);
            let response = rt.block_on(full.complete(&gen_req))?;
            let t = full.last_timings().expect("timings after a completion");
            gen_tokens = response.usage.output_tokens;
            gen_tps = gen_tps.max(t.sampled_tokens as f64 / t.generation_secs);
        }
        if let Some(python) = &config.baseline_python {
            let this = baseline(python, &path, &info, &prompt_text, gen_prompt);
            baseline_result = match (baseline_result, this) {
                (Ok(a), Ok(b)) => Ok(Baseline {
                    prompt_tps: a.prompt_tps.max(b.prompt_tps),
                    gen_tps: a.gen_tps.max(b.gen_tps),
                }),
                (_, this) => this,
            };
        }
    }

    let (full_secs, full_out, _) = episode(&rt, &full, config.turns)?;
    drop(full);
    let reuse = LocalModel::load("bench", &path, opts.prefix_reuse(true))?;
    let (reuse_secs, reuse_out, usage) = episode(&rt, &reuse, config.turns)?;
    drop(reuse);

    Ok(BenchReport {
        model: format!(
            "{} ({}M parameters)",
            path.display(),
            info.params / 1_000_000
        ),
        threads: info.threads,
        ctx_size: info.ctx_size,
        prompt_tokens,
        prompt_tps,
        gen_tokens,
        gen_tps,
        baseline: baseline_result,
        turns: config.turns,
        appended_per_turn: usage.appended_per_turn,
        generated_in_episode: usage.generated,
        reuse_secs,
        full_secs,
        cached_tokens: usage.cached,
        input_tokens: usage.input,
        identical_outputs: full_out == reuse_out,
        peak_mb: peak_memory_mb(),
    })
}

struct EpisodeUsage {
    input: u64,
    cached: u64,
    generated: u64,
    appended_per_turn: f64,
}

/// A growing conversation: question, then per turn the model's reply and a new
/// observation paragraph. Returns wall time, the replies, and token counts.
fn episode(
    rt: &tokio::runtime::Runtime,
    model: &LocalModel,
    turns: usize,
) -> Result<(f64, Vec<String>, EpisodeUsage), LlmError> {
    let mut messages = vec![
        Message::system(
            "You answer multi-hop questions. Think step by step, then end with one line \
             `Action: search[query]` or `Action: finish[answer]`.",
        ),
        Message::user("Question: Which river runs through the city where the author of the observed report was born?"),
    ];
    let mut replies = Vec::new();
    let mut usage = EpisodeUsage {
        input: 0,
        cached: 0,
        generated: 0,
        appended_per_turn: 0.0,
    };
    let mut first_input = 0;
    let mut last_input = 0;
    let start = Instant::now();
    for turn in 0..turns {
        let request = ChatRequest::new(messages.clone()).max_tokens(TURN_TOKENS);
        let response = rt.block_on(model.complete(&request))?;
        usage.input += response.usage.input_tokens;
        usage.cached += response.usage.cached_input_tokens;
        usage.generated += response.usage.output_tokens;
        if turn == 0 {
            first_input = response.usage.input_tokens;
        }
        last_input = response.usage.input_tokens;
        messages.push(Message::assistant(response.text.clone()));
        messages.push(Message::user(format!(
            "Observation {}: {}",
            turn + 1,
            paragraph(turn)
        )));
        replies.push(response.text);
    }
    let secs = start.elapsed().as_secs_f64();
    if turns > 1 {
        usage.appended_per_turn = (last_input - first_input) as f64 / (turns - 1) as f64;
    }
    Ok((secs, replies, usage))
}

const SUBJECTS: &[&str] = &[
    "the harbour town of Velmora",
    "the engineer Ada Kestrel",
    "the Corran river delta",
    "the northern railway company",
    "the observatory on Mount Tesh",
];

/// About 170 tokens of prose, different for every turn.
fn paragraph(turn: usize) -> String {
    let subject = SUBJECTS[turn % SUBJECTS.len()];
    format!(
        "Records kept in the archive describe {subject} in some detail. In the year {}, \
         a survey counted {} households and noted that most families worked on the \
         water, in the mills or on the long freight line that crossed the valley. The \
         report's author, who signed only with initials, wrote that the spring floods \
         had twice changed the course of the main channel, and that the town council \
         argued for a decade about whether to build a stone embankment or move the \
         market square to higher ground. Later letters mention a bridge of iron \
         girders, opened after a harsh winter, and a school founded by the widow of a \
         ship owner. None of these sources names the river directly; they call it \
         simply the water, as if every reader would know which one was meant, and \
         the maps bound with the report were lost in a fire in turn {turn}.",
        1840 + 7 * turn,
        310 + 23 * turn
    )
}

/// A long prompt made of several observation paragraphs.
fn long_text(paragraphs: usize) -> String {
    (0..paragraphs)
        .map(paragraph)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Peak resident set size of this process (Linux), in MB.
fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs llama.cpp directly (llama-cpp-python's low-level eval/sample loop) on the same
/// file, threads and context, measuring prompt and generation throughput the same way.
fn baseline(
    python: &str,
    path: &std::path::Path,
    info: &crate::ModelInfo,
    prompt: &str,
    gen_prompt: &str,
) -> Result<Baseline, String> {
    let input = serde_json::json!({
        "model": path, "threads": info.threads, "ctx": info.ctx_size,
        "prompt": prompt, "gen_prompt": gen_prompt, "gen_tokens": GEN_TOKENS, "reps": REPS,
    });
    let mut child = Command::new(python)
        .args(["-c", include_str!("../bench/baseline.py")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped stdin");
        stdin
            .write_all(input.to_string().as_bytes())
            .map_err(|e| format!("cannot talk to {python}: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{python} failed: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{python} failed: {}",
            err.lines().last().unwrap_or("").trim()
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("unreadable baseline output: {e}"))?;
    Ok(Baseline {
        prompt_tps: v["prompt_tps"].as_f64().ok_or("no prompt_tps")?,
        gen_tps: v["gen_tps"].as_f64().ok_or("no gen_tps")?,
    })
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "model      {}", self.model)?;
        writeln!(
            f,
            "setup      {} threads, context {}",
            self.threads, self.ctx_size
        )?;
        let (bp, bg) = match &self.baseline {
            Ok(b) => (Some(b.prompt_tps), Some(b.gen_tps)),
            Err(_) => (None, None),
        };
        let row = |f: &mut fmt::Formatter<'_>, what: &str, n: u64, ours: f64, base: Option<f64>| {
            write!(f, "{what:<10} ours {ours:8.1} tok/s ({n} tokens)")?;
            match base {
                Some(b) => writeln!(
                    f,
                    "   llama.cpp direct {b:8.1} tok/s   ratio {:.2}x",
                    ours / b
                ),
                None => writeln!(f),
            }
        };
        row(f, "prompt", self.prompt_tokens, self.prompt_tps, bp)?;
        row(f, "generation", self.gen_tokens, self.gen_tps, bg)?;
        if let Err(why) = &self.baseline {
            writeln!(f, "baseline   {why}")?;
        }
        writeln!(
            f,
            "episode    {} turns, +{:.0} prompt tokens/turn, {} tokens generated: \
             prefix reuse {:.2} s, full reprocessing {:.2} s, speed-up {:.2}x",
            self.turns,
            self.appended_per_turn,
            self.generated_in_episode,
            self.reuse_secs,
            self.full_secs,
            self.full_secs / self.reuse_secs
        )?;
        writeln!(
            f,
            "           reused {} of {} input tokens; outputs identical to full reprocessing: {}",
            self.cached_tokens,
            self.input_tokens,
            if self.identical_outputs { "yes" } else { "NO" }
        )?;
        match self.peak_mb {
            Some(mb) => writeln!(f, "memory     peak resident (VmHWM) {mb:.0} MB"),
            None => writeln!(f, "memory     peak resident unknown (no /proc)"),
        }
    }
}
