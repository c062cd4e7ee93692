//! `sleuth report DIR... [--baseline M] [--json] [--out DIR] [--html]`
//!
//! Reads run records (never calls a model), prints the per-method tables, and with
//! `--baseline` the paired comparisons; `--out` also writes CSV/JSON tables and SVG
//! figures, `--html` a trace viewer per run.

use anyhow::{bail, Context};
use sleuth::eval::analysis::{load, Analysis, Options};
use sleuth::eval::stats::{DEFAULT_RESAMPLES, DEFAULT_SEED};
use sleuth::report;
use sleuth::terminal::{terminal_safe, terminal_safe_lines};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Run directories (holding records.jsonl and run.json), records files (shards), or
    /// directories holding run directories (an experiment's output).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Compare every other method with this one (a method, or one labelled arm such as
    /// 'sleuth [nudge=none]'), as one Holm family.
    #[arg(long, value_name = "METHOD")]
    pub baseline: Option<String>,
    /// Print everything as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write every table as tidy CSV, JSON and JSON Lines (snake_case columns, one
    /// value per cell), report.md, report.json, and SVG figures here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write a trace viewer (trace.html) per run, into --out or else the run directory.
    #[arg(long)]
    pub html: bool,
    /// Memory-dynamics cohort: episodes lasting at least this many turns
    /// (default: 70% of the longest episode).
    #[arg(long, value_name = "TURNS", value_parser = clap::value_parser!(u32).range(1..))]
    pub cohort: Option<u32>,
    /// Bootstrap seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = DEFAULT_RESAMPLES, value_parser = crate::bounds::count(1..=10_000_000))]
    pub resamples: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let set = load(&args.dirs)?;
    if let Some(b) = &args.baseline {
        if !set
            .arms
            .iter()
            .any(|a| &a.key.method == b || &a.key.name() == b)
        {
            let methods: BTreeSet<String> = set.arms.iter().map(|a| a.key.name()).collect();
            bail!(
                "baseline `{b}` has no records (present: {})",
                methods.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
        // A method with several arms (a sweep) is ambiguous: name one arm.
        if !set.arms.iter().any(|a| &a.key.name() == b) {
            let arms: BTreeSet<String> = set
                .arms
                .iter()
                .filter(|a| &a.key.method == b)
                .map(|a| a.key.name())
                .collect();
            if arms.len() > 1 {
                bail!(
                    "baseline `{b}` has {} arms; name one: {}",
                    arms.len(),
                    arms.into_iter()
                        .map(|a| format!("--baseline '{a}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    let options = Options {
        baseline: args.baseline.clone(),
        cohort_turns: args.cohort,
        resamples: args.resamples,
        seed: args.seed,
    };
    let analysis = Analysis::build(&set, &options);
    for w in &analysis.warnings {
        eprintln!("warning: {}", terminal_safe(w));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::json(&analysis))?
        );
    } else {
        print!("{}", terminal_safe_lines(&report::markdown(&analysis)));
        if args.baseline.is_none() && analysis.summaries.len() > 1 {
            println!("\n(Pass --baseline METHOD for paired comparisons.)");
        }
    }
    if let Some(out) = &args.out {
        let files = report::write_outputs(&analysis, out)?;
        eprintln!("wrote {} files to {}", files.len(), out.display());
    }
    if args.html {
        write_traces(&set, args.out.as_deref())?;
    }
    Ok(())
}

/// One `trace.html` per run: in the run directory, or under `out` (directly for a
/// single run, in a subdirectory named after each run otherwise).
fn write_traces(set: &sleuth::eval::analysis::RecordSet, out: Option<&Path>) -> anyhow::Result<()> {
    let pages = report::trace_pages(set);
    let single = pages.len() == 1;
    for (dir, html) in pages {
        let target = match out {
            None => dir.join("trace.html"),
            Some(o) if single => o.join("trace.html"),
            Some(o) => {
                let name = report::slug(&dir.display().to_string());
                o.join(if name.is_empty() { "run".into() } else { name })
                    .join("trace.html")
            }
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&target, html).with_context(|| format!("writing {}", target.display()))?;
        eprintln!("wrote {}", target.display());
    }
    Ok(())
}
