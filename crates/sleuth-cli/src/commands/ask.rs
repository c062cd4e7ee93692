//! `sleuth ask`: one question, one method, every turn shown as it happens: the memory
//! in sections with what changed since the previous turn marked, the actions and
//! their observations cut to the terminal's width, and a spinner on stderr while the
//! model is thinking (only on a terminal).

use crate::resolve::{MethodArgs, ModelArgs};
use crate::show;
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sleuth::data::{self, Dataset, Paragraph, Question};
use sleuth::eval::{run_episode, Outcome};
use sleuth::memory::WorkingMemory;
use sleuth::methods::TurnObserver;
use sleuth::terminal::terminal_safe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").args(["data", "dataset"]).multiple(true)))]
pub struct Args {
    /// Method name, e.g. sleuth or react (`sleuth methods` lists them).
    #[arg(long, default_value = "sleuth")]
    pub method: String,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub options: MethodArgs,
    /// Benchmark of --id: with --data, the schema of that file (detected when omitted,
    /// as `eval` does); alone, the fetched dev set of that benchmark.
    #[arg(long, requires = "id")]
    pub dataset: Option<String>,
    /// Benchmark file holding the question --id.
    #[arg(long, requires = "id")]
    pub data: Option<PathBuf>,
    /// Question id in --data (or in the fetched --dataset).
    #[arg(long, requires = "source")]
    pub id: Option<String>,
    /// Your own question (with --paragraphs).
    #[arg(long, conflicts_with = "id", requires = "paragraphs")]
    pub question: Option<String>,
    /// Paragraphs for --question: JSON array or JSON Lines of {"title", "text"} or {"title", "sentences"}.
    #[arg(long)]
    pub paragraphs: Option<PathBuf>,
    /// Print the full observations instead of their first lines.
    #[arg(long)]
    pub full: bool,
}

struct Printer {
    full: bool,
    width: usize,
    /// The memory after the previous turn, to mark what changed.
    previous: Mutex<Option<WorkingMemory>>,
    waiting: ProgressBar,
}

impl TurnObserver for Printer {
    fn turn(&self, turn: &sleuth::methods::Turn) {
        let mut previous = self.previous.lock().unwrap_or_else(|e| e.into_inner());
        let text = show::turn_since(turn, previous.as_ref(), self.full, self.width);
        self.waiting.suspend(|| print!("{text}"));
        if let Some(state) = &turn.state {
            *previous = Some(state.clone());
        }
        self.waiting
            .set_message(format!("turn {} done; waiting for the model…", turn.number));
    }
}

/// A spinner on stderr while the model works; hidden when stderr is not a terminal.
fn spinner() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message("waiting for the model…");
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

pub fn run(args: Args) -> Result<()> {
    let question = question(&args)?;
    let method = args.options.setup(&args.method)?.build()?.built.remove(0);
    crate::cost::price_check(&args.model.setup())?;
    let stack = args.model.open_stack()?;
    println!("Question: {}", terminal_safe(&question.text));
    println!("(memory marks: + new, ~ changed, - dropped since the previous turn)\n");
    // The spinner starts after these lines: from now on stdout is written only through
    // it (`suspend`), so it never draws over text.
    let printer = Arc::new(Printer {
        full: args.full,
        width: show::width(),
        previous: Mutex::new(None),
        waiting: spinner(),
    });
    let observer: Arc<dyn TurnObserver> = printer.clone();
    let runtime = tokio::runtime::Runtime::new()?;
    let outcome = runtime.block_on(run_episode(
        &stack,
        &args.model.setup().name(),
        &question,
        &method,
        Some(observer),
    ));
    printer.waiting.finish_and_clear();
    let record = match outcome {
        Outcome::Record(record) => record,
        Outcome::Halted(reason) => bail!("stopped before exceeding the cost budget ({reason})"),
        Outcome::Skipped => unreachable!("a single episode is never skipped"),
    };
    println!("{}", show::outcome(&record));
    if let Some(e) = &record.error {
        bail!("{e}");
    }
    if question.answers.iter().any(|a| !a.is_empty()) {
        println!(
            "Gold: {}   EM {:.0}  F1 {:.2}",
            terminal_safe(&question.answers.join(" | ")),
            record.em,
            record.f1
        );
    }
    Ok(())
}

fn question(args: &Args) -> Result<Question> {
    if let Some(id) = &args.id {
        let mut selection = sleuth::study::Selection::all(crate::resolve::source(
            args.dataset.as_deref(),
            args.data.as_deref(),
        )?);
        selection.ids = Some([id.clone()].into());
        let selected = selection.select()?;
        return selected
            .questions
            .into_vec()?
            .into_iter()
            .next()
            .ok_or_else(|| {
                let file = selected.files.first().map(|p| p.display().to_string());
                anyhow!("no question with id `{id}` in {}", file.unwrap_or_default())
            });
    }
    let (Some(text), Some(path)) = (&args.question, &args.paragraphs) else {
        bail!("give either --id ID (with --data F and/or --dataset D), or --question Q --paragraphs F");
    };
    Ok(Question {
        id: "ask".into(),
        dataset: Dataset::Jsonl,
        text: text.clone(),
        answers: vec![],
        paragraphs: read_paragraphs(path)?,
        supporting_facts: vec![],
        supporting_paragraphs: vec![],
        hops: None,
        kind: None,
    })
}

#[derive(serde::Deserialize)]
struct ParagraphInput {
    title: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    sentences: Option<Vec<String>>,
}

fn read_paragraphs(path: &PathBuf) -> Result<Vec<Paragraph>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let inputs: Vec<ParagraphInput> = if text.trim_start().starts_with('[') {
        serde_json::from_str(&text)
            .with_context(|| format!("{}: expected a JSON array of paragraphs", path.display()))?
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .with_context(|| format!("{}:{}: malformed paragraph", path.display(), i + 1))
            })
            .collect::<Result<_>>()?
    };
    inputs
        .into_iter()
        .map(|p| {
            let sentences = match (p.sentences, p.text) {
                (Some(s), _) => s,
                (None, Some(t)) => data::split_sentences(&t),
                (None, None) => bail!(
                    "{}: paragraph `{}` has neither text nor sentences",
                    path.display(),
                    p.title
                ),
            };
            Ok(Paragraph::new(p.title, sentences))
        })
        .collect()
}
