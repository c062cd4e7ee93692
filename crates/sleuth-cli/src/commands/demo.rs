//! `sleuth demo`: the main job on this machine with nothing but the project — the
//! embedded model (pulled on first use) runs `sleuth` and `react` on a few multi-hop
//! questions we wrote ourselves. It says first what it shows and why its model is tiny,
//! then takes one question at a time: each method's turns as they happen, SLEUTH's
//! working memory as what changed since the turn before; then the scores, and the
//! trace page written for a closer look.

use crate::resolve::{MethodArgs, ModelArgs};
use crate::show;
use anyhow::{bail, Context, Result};
use sleuth::data::{self, Dataset, Question};
use sleuth::eval::{run_episode, Outcome, RunRecord};
use sleuth::memory::WorkingMemory;
use sleuth::methods::{Turn, TurnObserver};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Method options that keep the demo near a minute on two cores with the embedded
/// model: each bundled question's pool holds four paragraphs, so four turns can read
/// the two it needs and answer, and a turn's memory fits 192 tokens.
const DEMO_SETTINGS: [&str; 2] = ["turns=4", "max_tokens=192"];

/// Our own bundled questions (paragraphs and all), in the `jsonl` schema.
const QUESTIONS: &str = include_str!("../demo/questions.jsonl");

#[derive(clap::Args)]
pub struct Args {
    /// Model spec (default: the embedded SmolLM2-135M-Instruct).
    #[arg(long, default_value = "local:smollm2")]
    pub model: String,
    /// Comma-separated methods to compare.
    #[arg(long, default_value = "sleuth,react")]
    pub methods: String,
    /// How many of the bundled questions to run (four are bundled).
    #[arg(long, default_value_t = 2, value_parser = crate::bounds::count(1..))]
    pub questions: usize,
    /// Method options (`--set key=value`); the demo defaults to turns=4, max_tokens=192.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print only the final table.
    #[arg(long)]
    pub quiet: bool,
    /// Where to write the run's records and its trace page (default: `demo` beside the
    /// response cache, e.g. ~/.cache/sleuth/demo; replaced on each run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub local: crate::local::LocalArgs,
}

/// Prints each turn as it ends: the working memory as what changed since the turn
/// before (`+` new, `~` changed, `-` dropped), the actions and what they returned.
#[derive(Default)]
struct Printer {
    previous: Mutex<Option<WorkingMemory>>,
}

impl TurnObserver for Printer {
    fn turn(&self, turn: &Turn) {
        let mut previous = self.previous.lock().expect("one episode at a time");
        print!(
            "{}",
            show::turn_since(turn, previous.as_ref(), false, show::width())
        );
        if let Some(state) = &turn.state {
            *previous = Some(state.clone());
        }
    }
}

pub fn bundled_questions() -> Result<Vec<Question>> {
    Ok(data::parse(
        Dataset::Jsonl,
        Path::new("<bundled demo questions>"),
        QUESTIONS,
    )?)
}

/// What the demo shows, said before anything runs.
const INTRO: &str = "sleuth demo: SLEUTH, an agent that keeps a working memory (confirmed facts with their sources, hypotheses ranked by evidence, open questions that choose the next search), beside ReAct, which keeps none, on multi-hop questions we wrote. One question at a time: each turn shows what changed in the memory (+ new, ~ changed, - dropped), the action taken and what it returned; then the scores, and a trace page to look at every turn again.";

/// Said with the intro when the model is the embedded one, so nobody reads the table's
/// EM as the methods' worth.
const SMALL_MODEL_NOTE: &str = "The model is the embedded SmolLM2-135M: 98 MB, offline, under a minute on two cores. It runs the whole machinery (memory, tools, protocol checks) but a model this small is expected to score EM near 0; to see what the methods do, pass a real model (--model openai:gpt-4o-mini, or any OpenAI-compatible server).";

pub fn run(args: Args) -> Result<()> {
    println!("{INTRO}");
    if args.model.starts_with("local:") {
        println!("\n{SMALL_MODEL_NOTE}");
    }
    println!();
    let mut questions = bundled_questions()?;
    questions.truncate(args.questions.max(1));
    let mut set = DEMO_SETTINGS
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    set.extend(args.set.iter().cloned());
    let options = MethodArgs {
        set,
        ..MethodArgs::default()
    };
    let methods = options.setup(&args.methods)?.build()?.built;
    let model = ModelArgs::for_demo(&args.model, args.local.clone());
    crate::local::ensure_pulled(&args.model)?;
    let stack = model.open_stack()?;
    let model_id = model.setup().name();

    let runtime = tokio::runtime::Runtime::new()?;
    let started = Instant::now();
    let mut rows: Vec<(String, Vec<RunRecord>, f64)> = methods
        .iter()
        .map(|m| (m.name().to_string(), Vec::new(), 0.0))
        .collect();
    for (i, q) in questions.iter().enumerate() {
        if !args.quiet {
            println!(
                "━━ Question {} of {} ({}) ━━\n{}\nGold: {}\n",
                i + 1,
                questions.len(),
                q.id,
                q.text,
                q.answers.join(" | ")
            );
        }
        for (method, row) in methods.iter().zip(&mut rows) {
            let observer: Option<Arc<dyn TurnObserver>> = if args.quiet {
                None
            } else {
                println!("── {} on {} ──", method.name(), q.id);
                Some(Arc::new(Printer::default()))
            };
            let clock = Instant::now();
            let record = match runtime.block_on(run_episode(&stack, &model_id, q, method, observer))
            {
                Outcome::Record(record) => record,
                Outcome::Halted(reason) => bail!("the demo stopped: {reason}"),
                Outcome::Skipped => unreachable!("a single episode is never skipped"),
            };
            row.2 += clock.elapsed().as_secs_f64();
            if !args.quiet {
                println!("{}\n", show::outcome(&record));
            }
            if let Some(e) = &record.error {
                bail!("{} on {}: {e}", method.name(), q.id);
            }
            row.1.push(*record);
        }
    }
    println!("{}", table(&rows));
    let dir = match &args.out {
        Some(dir) => dir.clone(),
        None => demo_dir()?,
    };
    let page = write_run(&dir, &rows, &model_id)?;
    println!(
        "{} questions, {} methods in {:.0} s; every turn again: {}",
        questions.len(),
        rows.len(),
        started.elapsed().as_secs_f64(),
        page.display()
    );
    Ok(())
}

/// `demo` beside the default response cache (`~/.cache/sleuth/demo`).
fn demo_dir() -> Result<PathBuf> {
    let cache = sleuth::study::default_cache_dir()?;
    Ok(cache
        .parent()
        .map_or_else(|| cache.join("demo"), |p| p.join("demo")))
}

/// The demo's records and trace page, written by the library into `dir`.
fn write_run(dir: &Path, rows: &[(String, Vec<RunRecord>, f64)], model: &str) -> Result<PathBuf> {
    let records: Vec<&RunRecord> = rows.iter().flat_map(|(_, r, _)| r).collect();
    sleuth::study::write_demo_run(dir, &records, model)
        .with_context(|| format!("writing the demo's run into {}", dir.display()))
}

fn table(rows: &[(String, Vec<RunRecord>, f64)]) -> String {
    let mut out = String::from(
        "| method | n | EM | F1 | answered | mean turns | calls | tokens | seconds |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for (name, records, secs) in rows {
        let n = records.len().max(1) as f64;
        let mean = |f: &dyn Fn(&RunRecord) -> f64| records.iter().map(f).sum::<f64>() / n;
        out.push_str(&format!(
            "| {name} | {} | {:.1} | {:.1} | {} | {:.1} | {} | {} | {:.1} |\n",
            records.len(),
            100.0 * mean(&|r| r.em),
            100.0 * mean(&|r| r.f1),
            records.iter().filter(|r| r.finished).count(),
            mean(&|r| r.turns as f64),
            records.iter().map(|r| r.calls).sum::<u32>(),
            records
                .iter()
                .map(|r| r.input_tokens + r.output_tokens)
                .sum::<u64>(),
            secs
        ));
    }
    out
}
