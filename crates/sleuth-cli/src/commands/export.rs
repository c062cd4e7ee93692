//! `sleuth export RUN --format hotpotqa|musique|2wiki`: one arm's answers and
//! supporting facts as the benchmark's official prediction file, and beside it the gold
//! subset of the questions the run answered, so the official scripts (and `sleuth score
//! --predictions`) can check our numbers on any run, limited or not. The work is the
//! library's ([`sleuth::eval::export`]); this front end words its errors and says which
//! command checks the files.

use super::data::dataset;
use sleuth::eval::export::{self, ExportError, ExportRequest};
use sleuth::study::shell_quoted;
use sleuth::terminal::terminal_safe;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A run directory (or records file, or an experiment's root).
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
    /// hotpotqa, musique or 2wiki (default: the records' dataset; jsonl records export
    /// in the HotpotQA format).
    #[arg(long)]
    pub format: Option<String>,
    /// The method, or one labelled arm ('sleuth [nudge=none]'); needed when the run
    /// holds several.
    #[arg(long, value_name = "METHOD")]
    pub method: Option<String>,
    /// Only the records of this dataset (an experiment root that spans several:
    /// hotpotqa, musique, 2wiki).
    #[arg(long, value_name = "DATASET")]
    pub dataset: Option<String>,
    /// The benchmark file the run answered (default: the first `data` of run.json).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Where to write the predictions (default: standard output). With a file, the gold
    /// subset of the questions exported is written beside it (FILE's stem + `.gold.json`,
    /// `.gold.jsonl` for MuSiQue; 2Wiki also `.id_aliases.json`), and the official
    /// script's command line is printed.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let request = ExportRequest {
        run: args.run.clone(),
        format: args.format.as_deref().map(dataset).transpose()?,
        method: args.method.clone(),
        dataset: args.dataset.clone(),
        data: args.data.clone(),
    };
    let exported = export::export(&request).map_err(|e| worded(e, &args))?;
    let Some(out) = &args.out else {
        print!("{}", exported.predictions);
        return Ok(());
    };
    let written = exported.write(out)?;
    eprintln!(
        "wrote {} predictions of {} to {}",
        exported.count,
        terminal_safe(&exported.arm),
        out.display()
    );
    match (&written.gold, written.official_command(exported.format)) {
        (Some(gold), Some(argv)) => {
            eprintln!(
                "wrote the gold subset of those {} questions (from {}) to {}",
                exported.count,
                exported.data.display(),
                gold.display()
            );
            if let Some(aliases) = &written.aliases {
                let note = if exported.aliases.as_deref().is_some_and(str::is_empty) {
                    "empty: no id_aliases.json beside the benchmark file, so aliases are not counted; `sleuth data fetch 2wiki` fetches it"
                } else {
                    "the gold answers' lines of the id_aliases.json beside the benchmark file"
                };
                eprintln!("wrote {} ({note})", aliases.display());
            }
            let script = export::official_script(exported.format).expect("an official format");
            println!("official check ({}):", script.repository);
            println!("  {}", shell_words(&argv));
            println!(
                "  sleuth score --dataset {} --data {} --predictions {}",
                exported.format.name(),
                shell_quoted(&gold.display().to_string()),
                shell_quoted(&out.display().to_string())
            );
        }
        _ => eprintln!(
            "no gold subset: {} is not in the {} format; score with `sleuth score --data FILE --predictions {}`",
            exported.data.display(),
            exported.format.name(),
            out.display()
        ),
    }
    Ok(())
}

/// A library error in this command's words (its flags).
fn worded(e: sleuth::Error, args: &Args) -> anyhow::Error {
    let sleuth::Error::Export(e) = e else {
        return e.into();
    };
    let run = args.run.display();
    match &e {
        ExportError::SeveralArms { choices, .. } => {
            if let Some(datasets) = e.datasets() {
                let name = &choices[0].name;
                let dirs: Vec<String> = choices
                    .iter()
                    .flat_map(|c| c.dirs.iter().map(|d| d.display().to_string()))
                    .collect();
                anyhow::anyhow!(
                    "`{name}` has records on {} datasets under {run} ({}); export one at a time with --dataset {}, or pass one run directory ({})",
                    datasets.len(),
                    datasets.join(", "),
                    datasets.join("|"),
                    dirs.join(", ")
                )
            } else {
                let datasets: std::collections::BTreeSet<&str> =
                    choices.iter().map(|c| c.dataset.as_str()).collect();
                let names: std::collections::BTreeSet<String> = choices
                    .iter()
                    .map(|c| match datasets.len() {
                        1 => format!("'{}'", c.name),
                        _ => format!("'{}' ({})", c.name, c.dataset),
                    })
                    .collect();
                let names: Vec<String> = names.into_iter().collect();
                let flags = match datasets.len() {
                    1 => "--method",
                    _ => "--method and --dataset",
                };
                anyhow::anyhow!(
                    "the run holds {} arms; choose one with {flags}: {}",
                    choices.len(),
                    names.join(", ")
                )
            }
        }
        ExportError::NoDataFile { dir } => {
            anyhow::anyhow!(
                "{}: run.json names no data file; pass --data",
                dir.display()
            )
        }
        ExportError::NoOfficialFormat => {
            anyhow::anyhow!("--format jsonl: export writes hotpotqa, musique or 2wiki files")
        }
        ExportError::NoSuchArm { .. } => anyhow::anyhow!("{e}"),
    }
}

/// Words joined for a shell, each quoted when it needs it.
fn shell_words(argv: &[String]) -> String {
    let words: Vec<String> = argv.iter().map(|a| shell_quoted(a)).collect();
    words.join(" ")
}
