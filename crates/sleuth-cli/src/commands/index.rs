//! `sleuth index build`, `search` and `check`: the BM25 corpus index of the open-
//! corpus setting. Build streams a JSON Lines corpus with a progress bar (a live bar on
//! a terminal, plain lines otherwise, so logs stay readable) and prints a summary;
//! search prints the top hits, optionally with a per-term breakdown of each score that
//! can be checked by hand, or JSON for scripts; check verifies every checksum and
//! decodes the whole index. Titles and ids are corpus data: printed through
//! `terminal_safe`.

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use sleuth::names::Named;
use sleuth::retrieval::bm25::{
    build_from_jsonl, Algorithm, Bm25Index, Bm25Params, BuildProgress, Explanation,
};
use sleuth::terminal::{terminal_safe, terminal_safe_lines};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand)]
pub enum IndexCommand {
    /// Build an index from a JSON Lines corpus ({"id","title","text"|"sentences"} per line).
    Build(BuildArgs),
    /// Search an index and print the top hits.
    Search(SearchArgs),
    /// Verify an index: every checksum, then decode all of it (opening verifies only
    /// the header and the small parts).
    Check {
        /// The index directory.
        dir: PathBuf,
    },
}

#[derive(ClapArgs)]
pub struct BuildArgs {
    /// The corpus, one paragraph per line.
    #[arg(long)]
    corpus: PathBuf,
    /// The index directory to write.
    #[arg(long)]
    out: PathBuf,
    /// BM25 term-frequency saturation stored as the index default.
    #[arg(long, default_value_t = 0.9, value_parser = crate::bounds::non_negative)]
    k1: f64,
    /// BM25 length normalization stored as the index default (0 to 1).
    #[arg(long, default_value_t = 0.4, value_parser = crate::bounds::unit_interval)]
    b: f64,
}

#[derive(ClapArgs)]
pub struct SearchArgs {
    /// The index directory.
    dir: PathBuf,
    /// The query text.
    query: String,
    /// How many hits to show.
    #[arg(short = 'k', long = "top-k", default_value_t = 10, value_parser = crate::bounds::count(1..=100_000))]
    k: usize,
    /// Show each query term's idf, tf, the document length and its contribution.
    #[arg(long)]
    explain: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Score with this k1 instead of the index's.
    #[arg(long, value_parser = crate::bounds::non_negative)]
    k1: Option<f64>,
    /// Score with this b instead of the index's (0 to 1).
    #[arg(long, value_parser = crate::bounds::unit_interval)]
    b: Option<f64>,
    /// The exact top-k algorithm (all return the same hits): bulk-maxscore (default:
    /// MaxScore scoring a window of documents at a time), maxscore, bm-maxscore
    /// (MaxScore with per-block bounds), bmw (block-max WAND), or exhaustive.
    #[arg(long, default_value = Algorithm::default().name(), value_parser = parse_algorithm)]
    algorithm: Algorithm,
}

fn parse_algorithm(name: &str) -> Result<Algorithm, String> {
    Algorithm::from_name(name).ok_or_else(|| {
        let names = Algorithm::names().join(", ");
        format!("unknown algorithm `{name}` (one of {names})")
    })
}

pub fn run(command: IndexCommand) -> anyhow::Result<()> {
    match command {
        IndexCommand::Build(a) => build(a),
        IndexCommand::Search(a) => search(a),
        IndexCommand::Check { dir } => check(&dir),
    }
}

fn check(dir: &std::path::Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let report = Bm25Index::open(dir)?.check()?;
    println!(
        "{}: ok ({} paragraphs, {} terms, {} postings; {:.1} MiB verified in {:.2} s)",
        dir.display(),
        report.docs,
        report.terms,
        report.postings,
        report.bytes as f64 / (1 << 20) as f64,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn build(a: BuildArgs) -> anyhow::Result<()> {
    let params = Bm25Params { k1: a.k1, b: a.b };
    let total = std::fs::metadata(&a.corpus)
        .with_context(|| format!("cannot read corpus {}", a.corpus.display()))?
        .len();
    let mut report = Progress::new(total);
    let summary = build_from_jsonl(&a.corpus, &a.out, params, |p| report.update(p))?;
    report.finish();
    let secs = summary.elapsed.as_secs_f64();
    println!("Built BM25 index in {}", a.out.display());
    println!("  paragraphs   {}", summary.docs);
    println!("  terms        {}", summary.terms);
    println!("  postings     {}", summary.postings);
    println!("  avg length   {:.2} terms", summary.avgdl);
    println!("  k1, b        {}, {}", params.k1, params.b);
    println!(
        "  size         {:.1} MiB",
        summary.index_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "  time         {secs:.1} s ({:.0} paragraphs/s)",
        summary.docs as f64 / secs.max(1e-9)
    );
    Ok(())
}

/// A live bar on a terminal; otherwise a plain line roughly every 10% of the input.
enum Progress {
    Bar(ProgressBar),
    Lines {
        total: u64,
        next: u64,
        start: Instant,
    },
}

impl Progress {
    fn new(total: u64) -> Self {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg} (eta {eta})",
                )
                .expect("valid template"),
            );
            Progress::Bar(bar)
        } else {
            Progress::Lines {
                total,
                next: total / 10,
                start: Instant::now(),
            }
        }
    }

    fn update(&mut self, p: BuildProgress) {
        match self {
            Progress::Bar(bar) => {
                bar.set_position(p.bytes_read);
                bar.set_message(format!("{} paragraphs", p.docs));
            }
            Progress::Lines { total, next, start } => {
                if p.bytes_read >= *next && p.bytes_read < *total {
                    eprintln!(
                        "indexed {} paragraphs ({:.0}% of input, {:.1} s)",
                        p.docs,
                        100.0 * p.bytes_read as f64 / (*total).max(1) as f64,
                        start.elapsed().as_secs_f64()
                    );
                    *next = p.bytes_read + *total / 10;
                }
            }
        }
    }

    fn finish(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

fn search(a: SearchArgs) -> anyhow::Result<()> {
    let params = match (a.k1, a.b) {
        (None, None) => None,
        (k1, b) => {
            let built = Bm25Index::open(&a.dir)?.params();
            Some(Bm25Params {
                k1: k1.unwrap_or(built.k1),
                b: b.unwrap_or(built.b),
            })
        }
    };
    let index = Bm25Index::open_with(&a.dir, params)?;
    let started = Instant::now();
    let terms = index.analyzer().query_terms(&a.query);
    let hits = index.search_terms_with(&terms, a.k, a.algorithm)?;
    let elapsed = started.elapsed();
    let mut rows = Vec::with_capacity(hits.len());
    for (rank, hit) in hits.iter().enumerate() {
        let doc = index.doc(hit.doc)?;
        let explanation = if a.explain {
            Some(index.explain(&a.query, hit.doc)?)
        } else {
            None
        };
        rows.push((rank + 1, hit.score, doc, explanation));
    }
    if a.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(rank, score, doc, e)| {
                let mut v = json!({"rank": rank, "id": doc.id, "title": doc.title, "score": score});
                if let Some(e) = e {
                    v["explain"] = explanation_json(e);
                }
                v
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"query": a.query, "hits": list}))?
        );
        return Ok(());
    }
    let terms = index.analyzer().query_terms(&a.query);
    println!(
        "query terms: {}   ({} hits, {:.2} ms)",
        if terms.is_empty() {
            "(none)".to_string()
        } else {
            terminal_safe(&terms.join(" ")).into_owned()
        },
        rows.len(),
        elapsed.as_secs_f64() * 1e3
    );
    for (rank, score, doc, e) in &rows {
        println!(
            "{rank:>3}. {score:.6}  [id {}] {}",
            terminal_safe(&doc.id),
            terminal_safe(&doc.title)
        );
        if let Some(e) = e {
            print!("{}", terminal_safe_lines(&e.to_string()));
        }
    }
    Ok(())
}

fn explanation_json(e: &Explanation) -> serde_json::Value {
    json!({
        "score": e.score,
        "dl": e.dl,
        "avgdl": e.avgdl,
        "docs": e.docs,
        "k1": e.k1,
        "b": e.b,
        "terms": e.terms.iter().map(|t| json!({
            "term": t.term, "df": t.df, "idf": t.idf, "tf": t.tf, "contribution": t.contribution
        })).collect::<Vec<_>>(),
    })
}
