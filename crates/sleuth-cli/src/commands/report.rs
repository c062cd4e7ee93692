//! `sleuth report DIR... [--baseline M] [--tables NAMES] [--json] [--out DIR] [--html]`
//!
//! Reads run records (never calls a model) and prints the tables a recipe names (its
//! `experiment.json`; `--tables` chooses others) in the papers' layout, else the
//! per-method tables, and with `--baseline` the paired comparisons; `--out` also writes
//! CSV/JSON tables, Markdown and LaTeX of the shown ones, and SVG figures, `--html` a
//! trace viewer per run, an index with the tables and a filterable side-by-side page.

use anyhow::{bail, Context};
use sleuth::eval::analysis::{load, Analysis, HolmFamily, Options, ReasoningEvidence};
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
    /// Write a trace viewer (trace.html) per run, into --out or else the run directory,
    /// and (into --out, or the one DIR given) index.html linking every trace page, table
    /// and figure, and questions.html with every method's answer side by side.
    #[arg(long)]
    pub html: bool,
    /// Memory-dynamics cohort: episodes lasting at least this many turns (default, per
    /// arm: its nudge turn ⌈α·T⌉, SLEUTH App. E; without a nudge, 70% of the longest
    /// episode).
    #[arg(long, value_name = "TURNS", value_parser = clap::value_parser!(u32).range(1..))]
    pub cohort: Option<u32>,
    /// Which comparisons share one Holm correction: all (every comparison), dataset (one
    /// family per dataset and model), arm (one per compared arm across datasets: a
    /// baseline row of the SLEUTH paper's Table 1), or baseline (one per compared method
    /// across datasets and models: the EIR paper's six comparisons per baseline).
    #[arg(long, value_name = "FAMILY", default_value = "all", value_parser = parse_family)]
    pub holm_family: HolmFamily,
    /// Count each Holm family as at least N comparisons, those the report does not hold
    /// taken as p = 1 (the largest adjusted values such a family could give). The EIR
    /// paper's Table 20 keeps groups of five per metric and model, four of them shown:
    /// `--holm-family dataset --holm-size 5`. 0: each family as the rows it holds.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub holm_size: usize,
    /// The tables to show and write, in order, comma-separated: paper tables
    /// (sleuth_table1, sleuth_table7, eir_table1, ...), the report's own (summary,
    /// comparison, agent, errors, by_hops, eir_support_f1, ...), or `all`. Default: the
    /// tables the recipe names (its experiment.json under DIR), else the report's own.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub tables: Vec<String>,
    /// What a reasoning error of the error decomposition needs retrieved (SLEUTH App. J's
    /// "relevant evidence"): any (at least one gold paragraph) or all (every one); a
    /// wrong answer without it is counted as other.
    #[arg(long, value_name = "RULE", default_value = "any", value_parser = parse_evidence)]
    pub reasoning_evidence: ReasoningEvidence,
    /// Bootstrap seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = DEFAULT_RESAMPLES, value_parser = crate::bounds::count(1..=10_000_000))]
    pub resamples: usize,
}

fn parse_family(value: &str) -> Result<HolmFamily, String> {
    HolmFamily::parse(value)
        .ok_or_else(|| format!("expected one of {}", HolmFamily::NAMES.join(", ")))
}

/// The tables to show: `--tables`, else the recipes' (`experiment.json` in a DIR),
/// else the report's own tables.
fn selection(args: &Args) -> anyhow::Result<report::Selection> {
    if !args.tables.is_empty() {
        return report::Selection::parse(&args.tables).map_err(anyhow::Error::msg);
    }
    let mut names: Vec<String> = Vec::new();
    for dir in &args.dirs {
        let path = dir.join(sleuth::study::MANIFEST);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let manifest: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        for t in manifest["tables"].as_array().into_iter().flatten() {
            if let Some(t) = t.as_str().filter(|t| !names.iter().any(|n| n == t)) {
                names.push(t.to_string());
            }
        }
    }
    if names.is_empty() {
        return Ok(report::Selection::Terminal);
    }
    report::Selection::parse(&names)
        .map_err(|e| anyhow::anyhow!("{e} (in {})", sleuth::study::MANIFEST))
}

fn parse_evidence(value: &str) -> Result<ReasoningEvidence, String> {
    value
        .parse()
        .map_err(|_| format!("expected one of {}", ReasoningEvidence::NAMES.join(", ")))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let selection = selection(&args)?;
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
        holm_family: args.holm_family,
        holm_size: args.holm_size,
        reasoning_evidence: args.reasoning_evidence,
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
        let (text, empty) = report::markdown_of(&analysis, &selection);
        print!("{}", terminal_safe_lines(&text));
        for name in empty {
            eprintln!(
                "note: table {} has nothing to show for these runs",
                terminal_safe(&name)
            );
        }
        if args.baseline.is_none() && analysis.summaries.len() > 1 {
            println!("\n(Pass --baseline METHOD for paired comparisons.)");
        }
    }
    let mut written = Vec::new();
    if let Some(out) = &args.out {
        written = report::write_outputs_with(&analysis, out, &selection)?;
        eprintln!("wrote {} files to {}", written.len(), out.display());
    }
    if args.html {
        let traces = write_traces(&set, args.out.as_deref())?;
        // The index goes beside the other outputs, else into the one directory given.
        let index_dir = match (&args.out, args.dirs.as_slice()) {
            (Some(o), _) => Some(o.clone()),
            (None, [one]) if one.is_dir() => Some(one.clone()),
            _ => None,
        };
        // The index shows the report's tables (a recipe's paper tables), or for runs no
        // recipe names tables for, the accuracy and comparison tables.
        let shown = match &selection {
            report::Selection::Terminal => report::Selection::Named(
                ["pivot", "summary", "comparison"]
                    .map(String::from)
                    .to_vec(),
            ),
            other => other.clone(),
        };
        let tables: Vec<report::table::Table> = report::paper::select(&analysis, &shown)
            .0
            .into_iter()
            .map(|(display, _)| display)
            .collect();
        match index_dir {
            Some(dir) => write_index(&set, &traces, &written, &tables, &dir)?,
            None => {
                eprintln!("(pass --out DIR for index.html and the side-by-side questions page)")
            }
        }
    }
    Ok(())
}

/// `index.html` and `questions.html` in `dir`, linking the trace pages and `files`.
fn write_index(
    set: &sleuth::eval::analysis::RecordSet,
    traces: &[(PathBuf, PathBuf, usize)],
    files: &[PathBuf],
    tables: &[report::table::Table],
    dir: &Path,
) -> anyhow::Result<()> {
    let pages: Vec<report::index::PageLink> = traces
        .iter()
        .map(|(run, page, n)| {
            let source = set.sources.iter().find(|s| &s.dir == run);
            let summary = source.map_or_else(String::new, |s| {
                let c = &s.config;
                format!(
                    "{} · {} · {}",
                    c.dataset.as_deref().unwrap_or("-"),
                    c.methods.join(", "),
                    c.model.as_deref().unwrap_or("-")
                )
            });
            report::index::PageLink {
                href: relative(dir, page),
                run: run.display().to_string(),
                records: *n,
                summary,
            }
        })
        .collect();
    let hrefs: Vec<String> = files
        .iter()
        .filter(|f| {
            f.extension()
                .is_some_and(|e| e == "svg" || e == "csv" || e == "md" || e == "json" || e == "tex")
        })
        .map(|f| relative(dir, f))
        .collect();
    let by_run: std::collections::HashMap<&Path, &Path> = traces
        .iter()
        .map(|(run, page, _)| (run.as_path(), page.as_path()))
        .collect();
    let questions = report::index::side_by_side(set, &|run: &Path| {
        by_run.get(run).map(|page| relative(dir, page))
    });
    let index = report::index::index(&pages, Some("questions.html"), &hrefs, tables);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in [("index.html", index), ("questions.html", questions)] {
        let path = dir.join(name);
        sleuth::atomic::write(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// `to` as a link from a page in `from` (`../run/trace.html`), `/` separated and
/// percent-encoded (`report::escape::link_path`): never a scheme.
fn relative(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_os_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let (f, t) = (abs(from), abs(to));
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(t[common..].iter().map(|c| c.to_string_lossy().into_owned()));
    report::escape::link_path(&parts)
}

/// One `trace.html` per run: in the run directory, or under `out` (directly for a
/// single run, in a subdirectory named after each run otherwise). Returns (run
/// directory, page, records) per page.
fn write_traces(
    set: &sleuth::eval::analysis::RecordSet,
    out: Option<&Path>,
) -> anyhow::Result<Vec<(PathBuf, PathBuf, usize)>> {
    let pages = report::trace_pages(set);
    let single = pages.len() == 1;
    // Subdirectories are named by what tells the runs apart (`musique`, not
    // `tmp_runs_musique`): the part below the runs' common ancestor.
    let common: usize = pages
        .iter()
        .map(|p| p.dir.components().collect::<Vec<_>>())
        .reduce(|a, b| {
            a.into_iter()
                .zip(b)
                .take_while(|(x, y)| x == y)
                .map(|(x, _)| x)
                .collect()
        })
        .map_or(0, |c| c.len());
    let mut written = Vec::new();
    for page in pages {
        let dir = page.dir.clone();
        let records = set
            .arms
            .iter()
            .flat_map(|a| &a.origins)
            .filter(|&&o| set.sources[o].dir == dir)
            .count();
        let target = match out {
            None => dir.join("trace.html"),
            Some(o) if single => o.join("trace.html"),
            Some(o) => {
                let below: PathBuf = dir.components().skip(common).collect();
                let mut name = report::slug(&below.display().to_string());
                if name.is_empty() {
                    name = report::slug(&dir.display().to_string());
                }
                o.join(if name.is_empty() { "run".into() } else { name })
                    .join("trace.html")
            }
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        sleuth::atomic::write_with(&target, |out| page.write_to(out))
            .with_context(|| format!("writing {}", target.display()))?;
        eprintln!("wrote {}", target.display());
        written.push((dir, target, records));
    }
    Ok(written)
}
