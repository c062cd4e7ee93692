//! `bm25-bench`: measures sleuth's BM25 index against bm25s (method="lucene", the
//! formula we implement) and tantivy (its fixed BM25), on one synthetic corpus built
//! from the real benchmark paragraphs and the real HotpotQA questions as queries.
//!
//! `bm25-bench run` does everything in one go: generates the corpus (once, seeded),
//! then runs each engine's build and query phases as separate processes (so each
//! peak-memory figure is that engine's alone), and prints every figure with its ratio
//! to the baselines measured in the same run. The phases are subcommands too.
//!
//! Usage: `cargo run --release --manifest-path crates/sleuth-bench/Cargo.toml -- run
//! [--docs 1000000] [--seed 42]
//! [--data ../shared/data] [--work /tmp/bm25-bench]`

mod gen;
mod measure;
mod ours;
mod report;
mod tail;
mod tantivy_side;

use anyhow::Context;
use clap::{Parser, Subcommand};
use sleuth::names::Named;
use sleuth::retrieval::bm25::Algorithm;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "bm25-bench",
    about = "BM25 benchmark: sleuth vs bm25s vs tantivy"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate the corpus and queries, run every phase, print the comparison.
    Run {
        #[arg(long, default_value_t = 1_000_000)]
        docs: usize,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[arg(long, default_value = "../shared/data")]
        data: PathBuf,
        #[arg(long, default_value = "/tmp/bm25-bench")]
        work: PathBuf,
        #[arg(long, default_value_t = 3)]
        passes: usize,
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Skip the bm25s baseline (needs `pip install bm25s PyStemmer`).
        #[arg(long)]
        no_bm25s: bool,
        /// Query the tantivy index a previous run left in --work instead of rebuilding
        /// it; its build figures are those that run saved.
        #[arg(long)]
        reuse_tantivy: bool,
    },
    /// Write the synthetic corpus and the query file.
    Gen {
        #[arg(long)]
        data: PathBuf,
        #[arg(long)]
        docs: usize,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long)]
        queries: PathBuf,
    },
    OursBuild {
        corpus: PathBuf,
        out: PathBuf,
    },
    /// Time our search paths on a built index (every path the same number of passes)
    /// and check their hits.
    OursQuery {
        index: PathBuf,
        corpus: PathBuf,
        queries: PathBuf,
        #[arg(long, default_value_t = 3)]
        passes: usize,
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// The search paths to time, comma-separated (the default path is always
        /// timed; every path's hits are checked against exhaustive scoring).
        #[arg(long, value_delimiter = ',', default_values_t = Algorithm::ALL.map(|a| a.name().to_string()))]
        algorithms: Vec<String>,
    },
    TantivyBuild {
        corpus: PathBuf,
        out: PathBuf,
        #[arg(long, default_value_t = 2)]
        threads: usize,
    },
    TantivyQuery {
        index: PathBuf,
        queries: PathBuf,
        #[arg(long, default_value_t = 3)]
        passes: usize,
        #[arg(long, default_value_t = 2)]
        threads: usize,
    },
}

fn read_queries(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Cmd::Run {
            docs,
            seed,
            data,
            work,
            passes,
            threads,
            no_bm25s,
            reuse_tantivy,
        } => report::run(&report::RunConfig {
            docs,
            seed,
            data,
            work,
            passes,
            threads,
            bm25s: !no_bm25s,
            reuse_tantivy,
        }),
        Cmd::Gen {
            data,
            docs,
            seed,
            corpus,
            queries,
        } => {
            let s = gen::generate(&data, docs, seed, &corpus)?;
            let q = gen::queries(&data)?;
            std::fs::write(&queries, q.join("\n") + "\n")?;
            let mut v = s.json(docs);
            v["queries"] = serde_json::json!(q.len());
            measure::emit(&v);
            Ok(())
        }
        Cmd::OursBuild { corpus, out } => ours::build(&corpus, &out),
        Cmd::OursQuery {
            index,
            corpus,
            queries,
            passes,
            threads,
            algorithms,
        } => {
            let algorithms = algorithms
                .iter()
                .map(|a| {
                    a.parse()
                        .map_err(|_| anyhow::anyhow!("unknown search path `{a}`"))
                })
                .collect::<anyhow::Result<Vec<Algorithm>>>()?;
            ours::query(
                &index,
                &corpus,
                &read_queries(&queries)?,
                passes,
                threads,
                &algorithms,
            )
        }
        Cmd::TantivyBuild {
            corpus,
            out,
            threads,
        } => tantivy_side::build(&corpus, &out, threads),
        Cmd::TantivyQuery {
            index,
            queries,
            passes,
            threads,
        } => tantivy_side::query(&index, &read_queries(&queries)?, passes, threads),
    }
}
