//! `batch-bench`: what the runner's lock-step rounds (`--batch`, issue 31) cost per
//! round, apart from the provider. N episodes (real MuSiQue questions repeated under
//! new ids, ReAct, T turns) run through the library's own job runner with a batched
//! model stack whose batch API answers every batch at once from memory (no HTTP, no
//! waiting), so each round's wall time is the runner's alone: parking N calls, the
//! round driver's split, submission and journal line, handing N results back, and the
//! episodes' own work until each parks its next call. The same run without batching
//! (the same answers from a plain in-memory model, N in flight) is measured beside it.
//!
//! `cargo run --release --manifest-path crates/sleuth-bench/Cargo.toml
//! --no-default-features --features rounds --bin batch-bench -- [--episodes 1000]
//! [--turns 10] [--data ../shared/data] [--runs 3]`

#[path = "run_bench/questions.rs"]
mod questions;

use async_trait::async_trait;
use clap::Parser;
use sleuth::data::Dataset;
use sleuth::eval::{Progress, Quiet};
use sleuth::llm::batch::{
    Backoff, BatchApi, BatchCounts, BatchHandle, BatchItem, BatchProgress, BatchProvider,
    BatchRounds, ItemOutcome, RoundReport,
};
use sleuth::llm::{ChatModel, ChatRequest, ChatResponse, LlmError, ModelStack, Usage};
use sleuth::study::{Job, MethodSetup, ModelSetup, Selection, Source};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "batch-bench", about = "The runner's overhead per batch round")]
struct Cli {
    #[arg(long, default_value_t = 1000)]
    episodes: usize,
    #[arg(long, default_value_t = 10)]
    turns: u32,
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    #[arg(long, default_value = "/tmp/batch-bench")]
    work: PathBuf,
    /// Runs of each mode: the fastest is shown.
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

/// Every turn searches, so every episode uses all its turns: T rounds of N calls.
const REPLY: &str =
    "Thought: I need the first entity of the question.\nAction: search[capital city]";

fn reply() -> ChatResponse {
    ChatResponse::new(
        REPLY,
        Usage {
            input_tokens: 1000,
            output_tokens: 20,
            ..Usage::default()
        },
    )
}

/// The plain model: answers at once.
struct Instant0;

#[async_trait]
impl ChatModel for Instant0 {
    fn name(&self) -> &str {
        "openai:gpt-4o-mini"
    }
    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
        Ok(reply())
    }
}

/// A batch API that has every batch ended by its first poll.
#[derive(Default)]
struct InMemory {
    batches: AtomicU64,
}

#[async_trait]
impl BatchApi for InMemory {
    fn provider(&self) -> BatchProvider {
        BatchProvider::OpenAi
    }
    async fn submit(&self, items: &[BatchItem]) -> Result<BatchHandle, LlmError> {
        let n = self.batches.fetch_add(1, Ordering::Relaxed);
        Ok(BatchHandle {
            provider: BatchProvider::OpenAi,
            id: format!("batch_{n}"),
            requests: items.len(),
        })
    }
    async fn progress(&self, b: &BatchHandle) -> Result<BatchProgress, LlmError> {
        let n = b.requests as u64;
        Ok(BatchProgress::Ended {
            counts: BatchCounts {
                total: n,
                succeeded: n,
                failed: 0,
            },
        })
    }
    async fn results(
        &self,
        _: &BatchHandle,
        ids: &[String],
    ) -> Result<HashMap<String, ItemOutcome>, LlmError> {
        Ok(ids
            .iter()
            .map(|id| (id.clone(), ItemOutcome::Done(reply())))
            .collect())
    }
}

/// When each round's batch ended.
struct Rounds(std::sync::Mutex<Vec<Instant>>);

impl Progress for Rounds {
    fn batch(&self, r: &RoundReport) {
        if r.status == "ended" {
            self.0.lock().unwrap().push(Instant::now());
        }
    }
}

/// The median time between one round's end and the next's: a round in steady state
/// (the first also holds the episodes' start-up).
fn median_gap(ends: &[Instant]) -> Duration {
    let mut gaps: Vec<Duration> = ends.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort();
    gaps.get(gaps.len() / 2).copied().unwrap_or_default()
}

fn job(file: &std::path::Path, out: PathBuf, turns: u32, concurrency: usize) -> Job {
    Job {
        selection: Selection {
            source: Source::File {
                dataset: Some(Dataset::Musique),
                path: file.to_path_buf(),
            },
            hops: None,
            limit: None,
            sample: None,
            shard: None,
            ids: None,
        },
        methods: MethodSetup {
            names: vec!["react".into()],
            settings: BTreeMap::from([("turns".to_string(), turns.to_string())]),
            prompts: None,
            corpus: None,
        },
        model: ModelSetup::new("openai:gpt-4o-mini"),
        out,
        concurrency: Some(concurrency),
        retry_errors: false,
    }
}

/// User and system CPU time of this process so far: on a shared machine the wall time
/// also counts other processes' turns, the CPU time only ours.
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// One run's figures.
#[derive(Clone, Copy)]
struct Figures {
    wall: Duration,
    cpu: Duration,
    calls: u64,
    rounds: u64,
    /// Batched: the median wall time of a round after the first.
    steady: Duration,
}

/// One run.
async fn run(cli: &Cli, file: &std::path::Path, batched: bool, i: usize) -> Figures {
    let out = cli
        .work
        .join(format!("{}-{i}", if batched { "batch" } else { "plain" }));
    let _ = std::fs::remove_dir_all(&out);
    let job = job(file, out, cli.turns, cli.episodes);
    let prepared = job.prepare().expect("the job prepares");
    let mut stack = ModelStack::builder(Arc::new(Instant0));
    if batched {
        let backoff = Backoff {
            first: Duration::ZERO,
            longest: Duration::ZERO,
        };
        let api = Arc::new(InMemory::default());
        stack = stack.batch(BatchRounds::with_timing(
            api,
            "bench",
            backoff,
            Duration::from_secs(5),
        ));
    }
    let rounds = Rounds(std::sync::Mutex::new(Vec::new()));
    let progress: &dyn Progress = if batched { &rounds } else { &Quiet };
    let (t, cpu) = (Instant::now(), cpu_time());
    let done = prepared.run(&job, stack, progress).await.expect("the run");
    let (wall, cpu) = (t.elapsed(), cpu_time() - cpu);
    assert_eq!(done.summary.written, cli.episodes);
    let ends = rounds.0.into_inner().unwrap();
    Figures {
        wall,
        cpu,
        calls: done.totals.calls,
        rounds: ends.len() as u64,
        steady: median_gap(&ends),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    std::fs::create_dir_all(&cli.work)?;
    let source = questions::source(&cli.data, &cli.repo);
    let file = cli.work.join(format!("questions-{}.jsonl", cli.episodes));
    questions::write(&source, cli.episodes, &file)?;
    println!(
        "{} episodes (ReAct, {} turns; questions from {})",
        cli.episodes,
        cli.turns,
        source.display()
    );
    let mut per_round = Vec::new();
    for batched in [false, true] {
        let mut best: Option<Figures> = None;
        for i in 0..cli.runs {
            let r = run(&cli, &file, batched, i).await;
            if best.is_none_or(|b| r.cpu < b.cpu) {
                best = Some(r);
            }
        }
        let f = best.expect("at least one run");
        // A plain run's "round" is the same calls: one per episode.
        let rounds = if batched {
            f.rounds
        } else {
            u64::from(cli.turns)
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3 / rounds as f64;
        let us_call = |d: Duration| d.as_secs_f64() * 1e6 / f.calls as f64;
        let steady = match batched {
            true => format!(", {:.1} ms after the first", f.steady.as_secs_f64() * 1e3),
            false => String::new(),
        };
        println!(
            "{}: {} calls in {rounds} rounds of {}: {:.1} ms CPU a round ({:.1} µs a call), wall {:.1} ms a round{steady}",
            if batched { "batched" } else { "plain  " },
            f.calls,
            cli.episodes,
            ms(f.cpu),
            us_call(f.cpu),
            ms(f.wall),
        );
        per_round.push(ms(f.cpu));
    }
    println!(
        "the rounds' own cost: {:.1} ms CPU a round of {} episodes ({:.1} µs a call)",
        per_round[1] - per_round[0],
        cli.episodes,
        (per_round[1] - per_round[0]) * 1e3 / cli.episodes as f64
    );
    Ok(())
}
