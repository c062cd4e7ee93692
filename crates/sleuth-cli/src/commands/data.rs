//! `sleuth data fetch`, `sleuth data stats` and `sleuth data corpus`: install the
//! benchmarks, inspect their files, and turn paragraph pools (or HotpotQA's Wikipedia)
//! into a retrieval corpus. Also the one place a command's `--dataset` / `--data` pair is
//! resolved: either may be left out (the schema is detected from the file; the file is
//! the fetched default), never both.

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use sleuth::data::{self, Corpus, Dataset, DatasetStats, Question};
use sleuth::terminal::terminal_safe_lines;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum DataCommand {
    /// Download benchmarks by name into the data directory ($SLEUTH_HOME/data):
    /// hotpotqa, musique, 2wiki, hotpotqa-wiki.
    Fetch(super::fetch::FetchArgs),
    /// Count questions, paragraphs, hops and types in a benchmark file.
    Stats(StatsArgs),
    /// Write every paragraph of one or more benchmark files, deduplicated by title, as a
    /// JSON Lines corpus for `sleuth index build`; with `--dataset hotpotqa-wiki`, the
    /// HotpotQA Wikipedia abstracts instead.
    Corpus(CorpusArgs),
}

#[derive(Args)]
pub struct StatsArgs {
    /// hotpotqa, musique, 2wiki or jsonl (default: detected from the file).
    #[arg(long)]
    pub dataset: Option<String>,
    /// The benchmark file (default: the fetched dev set of --dataset).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Only questions with this many hops.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
    pub hops: Option<u8>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct CorpusArgs {
    /// hotpotqa, musique, 2wiki or jsonl (all files share it), or hotpotqa-wiki.
    #[arg(long)]
    pub dataset: String,
    /// Benchmark files; repeat for several. For hotpotqa-wiki: the abstracts folder or
    /// .tar.bz2 (default: the fetched one).
    #[arg(long)]
    pub data: Vec<PathBuf>,
    /// Output JSON Lines file.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(command: DataCommand) -> Result<()> {
    match command {
        DataCommand::Fetch(args) => super::fetch::run(args),
        DataCommand::Stats(args) => stats(args),
        DataCommand::Corpus(args) => corpus(args),
    }
}

/// Parses a dataset name into a one-line error (clap's own error spans several lines).
pub fn dataset(name: &str) -> Result<Dataset> {
    Ok(name.parse::<Dataset>()?)
}

/// The schema and file a command reads, from its optional `--dataset` and `--data`:
/// a missing file is a one-line error, a missing dataset is detected from the file, a
/// missing file is the fetched default of the dataset (or the `data fetch` command to
/// run). The file's schema is checked against `--dataset` when it is read.
pub fn resolve(dataset_name: Option<&str>, data: Option<&Path>) -> Result<(Dataset, PathBuf)> {
    let source = crate::resolve::source(dataset_name, data)?;
    Ok(sleuth::study::Selection::all(source)
        .resolve_file()?
        .expect("a file source"))
}

/// Loads `path`, keeping only `hops`-hop questions when asked.
pub fn load(dataset: Dataset, path: &Path, hops: Option<u8>) -> Result<Vec<Question>> {
    let questions = data::load(dataset, path)?;
    Ok(match hops {
        Some(h) => data::filter_hops(questions, h),
        None => questions,
    })
}

fn stats(args: StatsArgs) -> Result<()> {
    let (dataset, path) = resolve(args.dataset.as_deref(), args.data.as_deref())?;
    let questions = load(dataset, &path, args.hops)?;
    let stats = DatasetStats::of(dataset, &questions);
    if args.json {
        let mut value = serde_json::to_value(&stats)?;
        value["file"] = path.display().to_string().into();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", terminal_safe_lines(&render(&path, &stats)));
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
    out += &format!("question tokens         {}\n", spread(&s.question_tokens));
    out += &format!("answer tokens           {}\n", spread(&s.answer_tokens));
    out += &format!("hops                    {}\n", hops.join(", "));
    out += &format!("types                   {}\n", types.join(", "));
    out
}

fn corpus(args: CorpusArgs) -> Result<()> {
    if args.dataset == "hotpotqa-wiki" {
        return super::fetch::wiki_corpus(&args.data, &args.out);
    }
    if args.data.is_empty() {
        bail!("give the benchmark files to take paragraphs from with --data");
    }
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
