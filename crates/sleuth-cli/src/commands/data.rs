//! `sleuth data stats` and `sleuth data corpus`: inspect benchmark files and turn their
//! paragraph pools into a retrieval corpus.

use clap::{Args, Subcommand};
use sleuth::data::{self, Corpus, Dataset, DatasetStats, Question};
use sleuth::terminal::terminal_safe_lines;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum DataCommand {
    /// Count questions, paragraphs, hops and types in a benchmark file.
    Stats(StatsArgs),
    /// Write every paragraph of one or more benchmark files, deduplicated by title, as a
    /// JSON Lines corpus for `sleuth index build`.
    Corpus(CorpusArgs),
}

#[derive(Args)]
pub struct StatsArgs {
    /// hotpotqa, musique, 2wiki or jsonl.
    #[arg(long)]
    pub dataset: String,
    /// The benchmark file (JSON array or JSON Lines).
    #[arg(long)]
    pub data: PathBuf,
    /// Only questions with this many hops.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
    pub hops: Option<u8>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct CorpusArgs {
    /// hotpotqa, musique, 2wiki or jsonl (all files share it).
    #[arg(long)]
    pub dataset: String,
    /// Benchmark files; repeat for several.
    #[arg(long, required = true)]
    pub data: Vec<PathBuf>,
    /// Output JSON Lines file.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(command: DataCommand) -> anyhow::Result<()> {
    match command {
        DataCommand::Stats(args) => stats(args),
        DataCommand::Corpus(args) => corpus(args),
    }
}

/// Parses a dataset name into a one-line error (clap's own error spans several lines).
pub fn dataset(name: &str) -> anyhow::Result<Dataset> {
    Ok(name.parse::<Dataset>()?)
}

/// Loads `path`, keeping only `hops`-hop questions when asked.
pub fn load(dataset: Dataset, path: &Path, hops: Option<u8>) -> anyhow::Result<Vec<Question>> {
    let questions = data::load(dataset, path)?;
    Ok(match hops {
        Some(h) => data::filter_hops(questions, h),
        None => questions,
    })
}

fn stats(args: StatsArgs) -> anyhow::Result<()> {
    let dataset = dataset(&args.dataset)?;
    let questions = load(dataset, &args.data, args.hops)?;
    let stats = DatasetStats::of(dataset, &questions);
    if args.json {
        let mut value = serde_json::to_value(&stats)?;
        value["file"] = args.data.display().to_string().into();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", terminal_safe_lines(&render(&args.data, &stats)));
    }
    Ok(())
}

fn render(path: &Path, s: &DatasetStats) -> String {
    let spread = |x: &data::Spread| format!("mean {:.2}  min {}  max {}", x.mean, x.min, x.max);
    let mut hops: Vec<String> = s.hops.iter().map(|(h, n)| format!("{h}-hop {n}")).collect();
    if s.hops_unknown > 0 {
        hops.push(format!("unknown {}", s.hops_unknown));
    }
    let mut types: Vec<(&String, &usize)> = s.types.iter().collect();
    types.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let types: Vec<String> = types.iter().map(|(t, n)| format!("{t} {n}")).collect();
    let mut out = format!("{} ({})\n", path.display(), s.dataset);
    out += &format!("questions               {}\n", s.questions);
    out += &format!(
        "paragraphs/question     {}  (total {})\n",
        spread(&s.paragraphs),
        s.paragraphs.total
    );
    out += &format!("sentences/paragraph     {}\n", spread(&s.sentences));
    out += &format!(
        "supporting/question     {}\n",
        spread(&s.supporting_paragraphs)
    );
    out += &format!("hops                    {}\n", hops.join(", "));
    out += &format!("types                   {}\n", types.join(", "));
    out
}

fn corpus(args: CorpusArgs) -> anyhow::Result<()> {
    let dataset = dataset(&args.dataset)?;
    let mut corpus = Corpus::new();
    let mut questions = 0;
    for path in &args.data {
        let qs = data::load(dataset, path)?;
        questions += qs.len();
        corpus.add(&qs);
    }
    corpus.write_jsonl(&args.out)?;
    println!(
        "read {} paragraphs from {} questions in {} file(s); wrote {} unique paragraphs to {}",
        corpus.read(),
        questions,
        args.data.len(),
        corpus.docs().len(),
        args.out.display()
    );
    Ok(())
}
