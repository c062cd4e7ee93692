//! `sleuth report DIR... [--baseline M] [--tables NAMES] [--json] [--out DIR] [--html]`
//!
//! Reads run records (never calls a model) and prints the tables a recipe names (its
//! `experiment.json`; `--tables` chooses others) in the papers' layout, else the
//! per-method tables, and with `--baseline` the paired comparisons; `--out` also writes
//! CSV/JSON tables, Markdown and LaTeX of the shown ones, and SVG figures, `--html` a
//! trace viewer per run, an index with the tables and a filterable side-by-side page.
//!
//! Everything but the printing is `sleuth::study::ReportJob` and `Report`, which the
//! Python package's `report()` calls too.

use sleuth::eval::analysis::{
    Aliases, Conventions, Direction, ErrorClasses, HolmFamily, MusiqueGroups, Options, Overrides,
    ReasoningEvidence,
};
use sleuth::eval::stats::{BootstrapP, DEFAULT_RESAMPLES, DEFAULT_SEED};
use sleuth::study::{ReportJob, Wrote};
use sleuth::terminal::{terminal_safe, terminal_safe_lines};
use std::path::PathBuf;

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
    /// Whose rules the report follows: sleuth (the SLEUTH paper's: MuSiQue by hop
    /// split, Holm per compared arm, Table 15's error-class sums), eir (the EIR paper's:
    /// MuSiQue pooled, Holm per compared method, add-one bootstrap p) or ours (MuSiQue by split, one Holm family, App. J's classes). Default:
    /// the conventions the recipe names (its experiment.json under DIR), else ours. The
    /// flags below each set one rule over them.
    #[arg(long, value_name = "NAME", value_parser = parse_conventions)]
    pub conventions: Option<Conventions>,
    /// MuSiQue as one benchmark per hop split (splits) or one over every hop (pooled).
    /// Default: the conventions'.
    #[arg(long, value_name = "GROUPING", value_parser = parse_musique)]
    pub musique: Option<MusiqueGroups>,
    /// Whether EM and F1 count a gold answer's aliases (MuSiQue's answer_aliases, 2Wiki's
    /// id_aliases.json), as both papers and the official scripts do (on), or score
    /// against the first gold answer alone (off; the records are re-scored as they are
    /// read, their files untouched). The report's first line says which.
    #[arg(long, value_name = "ON|OFF", default_value = "on", value_parser = parse_aliases)]
    pub aliases: Aliases,
    /// Which comparisons share one Holm correction: all (every comparison), dataset (one
    /// family per dataset and model), arm (one per compared arm across datasets: a
    /// baseline row of the SLEUTH paper's Table 1), or baseline (one per compared method
    /// across datasets and models: the EIR paper's six comparisons per baseline).
    /// Default: the conventions'.
    #[arg(long, value_name = "FAMILY", value_parser = parse_family)]
    pub holm_family: Option<HolmFamily>,
    /// Count each Holm family as at least N comparisons, those the report does not hold
    /// taken as p = 1 (the largest adjusted values such a family could give). The EIR
    /// paper's Table 20 keeps groups of five per metric and model, four of them shown:
    /// `--holm-family dataset --holm-size 5`. Default 0: each family as the rows it holds.
    #[arg(long, value_name = "N")]
    pub holm_size: Option<usize>,
    /// The tables to show and write, in order, comma-separated: paper tables
    /// (sleuth_table1, sleuth_table7, eir_table1, ...), the report's own (summary,
    /// comparison, agent, errors, by_hops, eir_support_f1, ...), or `all`. Default: the
    /// tables the recipe names (its experiment.json under DIR), else the report's own.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub tables: Vec<String>,
    /// What a reasoning error of the error decomposition needs retrieved (SLEUTH App. J's
    /// "relevant evidence"): any (at least one gold paragraph) or all (every one); a
    /// wrong answer without it is counted as other. Default: any.
    #[arg(long, value_name = "RULE", value_parser = parse_evidence)]
    pub reasoning_evidence: Option<ReasoningEvidence>,
    /// Which account of SLEUTH App. J's error classes to follow: defined (the appendix's
    /// definitions: a partial match, or a wrong answer without the evidence, is other) or
    /// sums (Table 15's rows, which add up to 100 without other: every wrong, finished,
    /// non-verbose answer is a reasoning error). Default: the conventions' (sums under
    /// sleuth, defined otherwise).
    #[arg(long, value_name = "READING", value_parser = parse_classes)]
    pub error_classes: Option<ErrorClasses>,
    /// Bootstrap seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = DEFAULT_RESAMPLES, value_parser = crate::bounds::count(1..=sleuth::study::MAX_RESAMPLES as u64))]
    pub resamples: usize,
    /// How a bootstrap p-value is read from the resamples, k of R on the smaller side of
    /// zero: twice-tail (2k/R, 0 when none crosses) or add-one (2(k+1)/(R+1), never 0).
    /// The EIR paper gives no formula: its Table 6 fits twice-tail, its Table 20 add-one.
    /// Default: the conventions' (add-one under eir, twice-tail otherwise).
    #[arg(long, value_name = "READING", value_parser = parse_bootstrap_p)]
    pub bootstrap_p: Option<BootstrapP>,
    /// Which way paired differences subtract: method-minus-baseline (default, b = right
    /// only under the baseline) or baseline-minus-method, the EIR paper's "EIR minus each
    /// baseline" (Tables 6-8, 12, 18, 20) under `--baseline eir`, with its b and c.
    /// Default: method-minus-baseline.
    #[arg(long, value_name = "DIRECTION", value_parser = parse_direction)]
    pub direction: Option<Direction>,
}

fn parse_conventions(value: &str) -> Result<Conventions, String> {
    Conventions::parse(value)
        .ok_or_else(|| format!("expected one of {}", Conventions::NAMES.join(", ")))
}

fn parse_musique(value: &str) -> Result<MusiqueGroups, String> {
    match value {
        "splits" => Ok(MusiqueGroups::Splits),
        "pooled" => Ok(MusiqueGroups::Pooled),
        _ => Err("expected one of splits, pooled".into()),
    }
}

fn parse_aliases(value: &str) -> Result<Aliases, String> {
    Aliases::parse(value).ok_or_else(|| format!("expected one of {}", Aliases::NAMES.join(", ")))
}

fn parse_direction(value: &str) -> Result<Direction, String> {
    Direction::parse(value)
        .ok_or_else(|| format!("expected one of {}", Direction::NAMES.join(", ")))
}

fn parse_bootstrap_p(value: &str) -> Result<BootstrapP, String> {
    BootstrapP::parse(value)
        .ok_or_else(|| format!("expected one of {}", BootstrapP::NAMES.join(", ")))
}

fn parse_family(value: &str) -> Result<HolmFamily, String> {
    HolmFamily::parse(value)
        .ok_or_else(|| format!("expected one of {}", HolmFamily::NAMES.join(", ")))
}

fn parse_classes(value: &str) -> Result<ErrorClasses, String> {
    value
        .parse()
        .map_err(|_| format!("expected one of {}", ErrorClasses::NAMES.join(", ")))
}

fn parse_evidence(value: &str) -> Result<ReasoningEvidence, String> {
    value
        .parse()
        .map_err(|_| format!("expected one of {}", ReasoningEvidence::NAMES.join(", ")))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let job = ReportJob {
        dirs: args.dirs.clone(),
        options: Options {
            baseline: args.baseline.clone(),
            cohort_turns: args.cohort,
            resamples: args.resamples,
            seed: args.seed,
            aliases: args.aliases,
            ..Options::default()
        },
        conventions: args.conventions,
        overrides: Overrides {
            musique: args.musique,
            holm_family: args.holm_family,
            holm_size: args.holm_size,
            bootstrap_p: args.bootstrap_p,
            error_classes: args.error_classes,
            reasoning_evidence: args.reasoning_evidence,
            direction: args.direction,
        },
        tables: args.tables.clone(),
    };
    let report = job.open()?;
    for w in report.warnings() {
        eprintln!("warning: {}", terminal_safe(w));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        let markdown = report.markdown();
        print!("{}", terminal_safe_lines(&markdown.text));
        for name in markdown.empty {
            eprintln!(
                "note: table {} has nothing to show for these runs",
                terminal_safe(&name)
            );
        }
        if args.baseline.is_none() && report.analysis().summaries.len() > 1 {
            println!("\n(Pass --baseline METHOD for paired comparisons.)");
        }
    }
    let written = report.write(args.out.as_deref(), args.html, &mut |step| match step {
        Wrote::Outputs { dir, count } => eprintln!("wrote {count} files to {}", dir.display()),
        Wrote::Page(page) => eprintln!("wrote {}", page.display()),
    })?;
    if args.html && written.index.is_none() {
        eprintln!("(pass --out DIR for index.html and the side-by-side questions page)");
    }
    Ok(())
}
