//! `run-bench`: how `sleuth eval` and `sleuth report` scale with the number of
//! questions (issue 32). For each size it writes a question file (real MuSiQue
//! questions repeated under new ids), runs the real `sleuth` binary's `eval` with a
//! scripted model (no network, no cache), then `report` on the records, each as its own
//! process, and prints wall time, peak RSS and the ratios between sizes.
//!
//! Usage (build the binary first: `cargo build --release -p sleuth-cli
//! --no-default-features`):
//! `cargo run --release --manifest-path crates/sleuth-bench/Cargo.toml
//! --no-default-features --bin run-bench -- [--sizes 1000,10000,100000]
//! [--sleuth target/release/sleuth] [--data ../shared/data] [--work /tmp/run-bench]
//! [--concurrency 4] [--turns 10] [--runs 1] [--html]`

mod child;
mod questions;

use anyhow::Context;
use child::Measured;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Parser)]
#[command(
    name = "run-bench",
    about = "Wall time and peak memory of sleuth eval and report by run size"
)]
struct Cli {
    /// Question counts, smallest first (ratios are to the first).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    sizes: Vec<usize>,
    /// The `sleuth` binary to measure.
    #[arg(long, default_value = "target/release/sleuth")]
    sleuth: PathBuf,
    /// The shared data folder (MuSiQue with paragraphs); the repository's fixture when
    /// it is absent.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    /// The repository root (for the fixture).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    #[arg(long, default_value = "/tmp/run-bench")]
    work: PathBuf,
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    #[arg(long, default_value_t = 10)]
    turns: u32,
    #[arg(long, default_value = "react")]
    method: String,
    /// Runs per size: the fastest wall time and the largest peak are shown.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Also measure `report --html --out` (trace pages, index, tables, figures).
    #[arg(long)]
    html: bool,
    /// Keep each size's run directory (records) after measuring.
    #[arg(long)]
    keep: bool,
}

/// The scripted model's one reply, repeated every turn: a search, so every episode
/// uses all its turns and every turn reads the pool.
const REPLY: &str =
    "Thought: I need the first entity of the question.\nAction: search[capital city]";

/// One size's figures.
struct Row {
    size: usize,
    eval: Measured,
    calls: u64,
    records_mb: f64,
    report: Measured,
    html: Option<Measured>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    std::fs::create_dir_all(&cli.work)?;
    let source = questions::source(&cli.data, &cli.repo);
    let replies = cli.work.join("replies.json");
    std::fs::write(&replies, serde_json::to_string(&[REPLY])?)?;
    println!(
        "sleuth {} | {} | {} turns | concurrency {} | questions from {}",
        cli.sleuth.display(),
        cli.method,
        cli.turns,
        cli.concurrency,
        source.display()
    );
    let mut rows = Vec::new();
    for &size in &cli.sizes {
        let file = cli.work.join(format!("questions-{size}.jsonl"));
        questions::write(&source, size, &file)?;
        let row = measure_size(&cli, size, &file, &replies)?;
        print_row(&row);
        rows.push(row);
    }
    print_summary(&rows);
    Ok(())
}

fn measure_size(cli: &Cli, size: usize, file: &Path, replies: &Path) -> anyhow::Result<Row> {
    let dir = cli.work.join(format!("run-{size}"));
    let mut best: Option<(Measured, u64)> = None;
    for _ in 0..cli.runs.max(1) {
        let _ = std::fs::remove_dir_all(&dir);
        let log = cli.work.join(format!("eval-{size}"));
        let m = child::run(eval_command(cli, file, replies, &dir), &log)?;
        let calls = model_calls(&log.with_extension("err"))?;
        best = Some(match best {
            None => (m, calls),
            Some((b, _)) => (merge(b, m), calls),
        });
    }
    let (eval, calls) = best.expect("at least one run");
    let records_mb = std::fs::metadata(dir.join("records.jsonl"))?.len() as f64 / 1e6;
    let mut report = None;
    for _ in 0..cli.runs.max(1) {
        let mut cmd = Command::new(&cli.sleuth);
        cmd.arg("report").arg(&dir);
        let m = child::run(cmd, &cli.work.join(format!("report-{size}")))?;
        report = Some(report.map_or(m, |b| merge(b, m)));
    }
    let html = if cli.html {
        let out = cli.work.join(format!("report-{size}-html"));
        let _ = std::fs::remove_dir_all(&out);
        let mut cmd = Command::new(&cli.sleuth);
        cmd.arg("report")
            .arg(&dir)
            .arg("--html")
            .arg("--out")
            .arg(&out);
        let m = child::run(cmd, &cli.work.join(format!("report-{size}-html")))?;
        let _ = std::fs::remove_dir_all(&out);
        Some(m)
    } else {
        None
    };
    if !cli.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(Row {
        size,
        eval,
        calls,
        records_mb,
        report: report.expect("at least one run"),
        html,
    })
}

fn eval_command(cli: &Cli, file: &Path, replies: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(&cli.sleuth);
    cmd.args(["eval", "--dataset", "musique", "--data"])
        .arg(file)
        .args(["--methods", &cli.method, "--model"])
        .arg(format!("scripted:{}", replies.display()))
        .arg("--set")
        .arg(format!("turns={}", cli.turns))
        .args(["--no-cache", "--concurrency", &cli.concurrency.to_string()])
        .arg("--out")
        .arg(dir)
        .env_remove("SLEUTH_CACHE")
        .env("SLEUTH_HOME", cli.work.join("home"));
    cmd
}

/// The fastest wall time and the largest peak of two runs.
fn merge(a: Measured, b: Measured) -> Measured {
    Measured {
        wall_s: a.wall_s.min(b.wall_s),
        peak_rss_mb: a.peak_rss_mb.max(b.peak_rss_mb),
    }
}

/// The model calls `eval`'s closing summary counted (`model calls N (...`).
fn model_calls(stderr: &Path) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(stderr)?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("model calls ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .with_context(|| format!("{}: no `model calls` line", stderr.display()))
}

fn per_call_us(row: &Row) -> f64 {
    row.eval.wall_s * 1e6 / row.calls.max(1) as f64
}

fn print_row(row: &Row) {
    let html = row.html.map_or(String::new(), |h| {
        format!(
            " | report --html {:.2} s, {:.0} MiB",
            h.wall_s, h.peak_rss_mb
        )
    });
    println!(
        "{:>7} questions | eval {:.2} s, {:.0} MiB, {} calls, {:.0} µs/call | records {:.1} MB | report {:.2} s, {:.0} MiB{html}",
        row.size,
        row.eval.wall_s,
        row.eval.peak_rss_mb,
        row.calls,
        per_call_us(row),
        row.records_mb,
        row.report.wall_s,
        row.report.peak_rss_mb,
    );
    println!(
        "RESULT {}",
        serde_json::json!({
            "questions": row.size, "eval_s": row.eval.wall_s, "eval_peak_mib": row.eval.peak_rss_mb,
            "calls": row.calls, "us_per_call": per_call_us(row), "records_mb": row.records_mb,
            "report_s": row.report.wall_s, "report_peak_mib": row.report.peak_rss_mb,
            "html_s": row.html.map(|h| h.wall_s), "html_peak_mib": row.html.map(|h| h.peak_rss_mb),
        })
    );
}

/// The Markdown table of every size with its ratios to the first.
fn print_summary(rows: &[Row]) {
    let Some(first) = rows.first() else { return };
    println!("\n| questions | eval wall | eval peak RSS | µs/call | report wall | report peak RSS | eval RSS ÷ first | report RSS ÷ first |");
    println!("| --: | --: | --: | --: | --: | --: | --: | --: |");
    for r in rows {
        println!(
            "| {} | {:.2} s | {:.0} MiB | {:.0} | {:.2} s | {:.0} MiB | {:.2}× | {:.2}× |",
            r.size,
            r.eval.wall_s,
            r.eval.peak_rss_mb,
            per_call_us(r),
            r.report.wall_s,
            r.report.peak_rss_mb,
            r.eval.peak_rss_mb / first.eval.peak_rss_mb,
            r.report.peak_rss_mb / first.report.peak_rss_mb,
        );
    }
}
