//! `sleuth demo`: the main job on this machine with nothing but the project — the
//! embedded model (pulled on first use) runs `sleuth` and `react` on a few multi-hop
//! questions we wrote ourselves, showing every turn as it happens.

use crate::resolve::{MethodArgs, ModelArgs};
use crate::show;
use anyhow::{bail, Result};
use sleuth::data::{self, Dataset, Question};
use sleuth::eval::{run_episode, Outcome, RunRecord};
use sleuth::methods::{Turn, TurnObserver};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Method options that keep the demo to a few minutes on two cores: each question's pool
/// holds four paragraphs, so five turns are enough, and a turn's memory fits 256 tokens.
const DEMO_SETTINGS: [&str; 2] = ["turns=5", "max_tokens=256"];

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
    /// How many of the bundled questions to run.
    #[arg(long, default_value_t = 4, value_parser = crate::bounds::count(1..))]
    pub questions: usize,
    /// Method options (`--set key=value`); the demo defaults to turns=5, max_tokens=256.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print only the final table.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub local: crate::local::LocalArgs,
}

struct Printer;

impl TurnObserver for Printer {
    fn turn(&self, turn: &Turn) {
        print!("{}", show::turn(turn, false));
    }
}

pub fn bundled_questions() -> Result<Vec<Question>> {
    Ok(data::parse(
        Dataset::Jsonl,
        Path::new("<bundled demo questions>"),
        QUESTIONS,
    )?)
}

/// Said before the first turn with an embedded model, so nobody reads the table's EM as
/// the methods' worth: a 135M-parameter model follows the protocol but seldom answers.
const SMALL_MODEL_NOTE: &str = "note: the embedded SmolLM2-135M runs the whole machinery (memory, tools, protocol checks) on this machine, but a model this small is expected to score EM near 0; to see what the methods do, pass a real model (e.g. --model openai:gpt-4o-mini or any OpenAI-compatible server)";

pub fn run(args: Args) -> Result<()> {
    if args.model.starts_with("local:") {
        eprintln!("{SMALL_MODEL_NOTE}\n");
    }
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
    let mut rows = Vec::new();
    for method in &methods {
        let mut records = Vec::new();
        let started = Instant::now();
        for q in &questions {
            let observer: Option<Arc<dyn TurnObserver>> = if args.quiet {
                None
            } else {
                println!("━━ {} · {} ━━\nQuestion: {}\n", method.name(), q.id, q.text);
                Some(Arc::new(Printer))
            };
            let record = match runtime.block_on(run_episode(&stack, &model_id, q, method, observer))
            {
                Outcome::Record(record) => record,
                Outcome::Halted(reason) => bail!("the demo stopped: {reason}"),
                Outcome::Skipped => unreachable!("a single episode is never skipped"),
            };
            if !args.quiet {
                println!(
                    "{}\nGold: {}\n",
                    show::outcome(&record),
                    q.answers.join(" | ")
                );
            }
            if let Some(e) = &record.error {
                bail!("{} on {}: {e}", method.name(), q.id);
            }
            records.push(*record);
        }
        rows.push((
            method.name().to_string(),
            records,
            started.elapsed().as_secs_f64(),
        ));
    }
    println!("{}", table(&rows));
    Ok(())
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
