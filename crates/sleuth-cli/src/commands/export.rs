//! `sleuth export RUN --format hotpotqa|musique|2wiki`: one arm's answers and
//! supporting facts as the benchmark's official prediction file, so the official
//! scripts (and `sleuth score --predictions`) can check our numbers.
//!
//! Support comes from what the records say the method used: the EIR setting's cited
//! sentences (HotpotQA/2Wiki sentence facts; MuSiQue the cited paragraphs), and for
//! MuSiQue only, other methods' retrieved paragraphs. Citations name paragraphs as the
//! agent saw them (`A (2)` for a second `A`), so the benchmark file is read to map them
//! back to titles and pool positions, exactly as the records' `support_f1` was scored.

use super::data::{dataset, load};
use anyhow::{bail, Context};
use serde_json::{json, Map, Value};
use sleuth::data::{Dataset, Question};
use sleuth::env::titles::display_titles;
use sleuth::eval::analysis::{self, Arm};
use sleuth::eval::RunRecord;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A run directory (or records file).
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
    /// The benchmark file the run answered (default: the first `data` of run.json).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Where to write (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let set = analysis::load(std::slice::from_ref(&args.run))?;
    let arm = pick(&set.arms, args.method.as_deref())?;
    let source = &set.sources[arm.origins[0]];
    let format = match &args.format {
        Some(f) => dataset(f)?,
        None => match dataset(&arm.key.dataset)? {
            Dataset::Jsonl => Dataset::HotpotQa,
            d => d,
        },
    };
    if format == Dataset::Jsonl {
        bail!("--format jsonl: export writes hotpotqa, musique or 2wiki files");
    }
    let data = match &args.data {
        Some(d) => d.clone(),
        None => source
            .config
            .raw
            .get("data")
            .and_then(|d| d.get(0).or(Some(d)))
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .with_context(|| {
                format!(
                    "{}: run.json names no data file; pass --data",
                    source.dir.display()
                )
            })?,
    };
    let questions = load(dataset(&arm.key.dataset)?, &data, None)
        .with_context(|| format!("reading the run's benchmark file {}", data.display()))?;
    let by_id: HashMap<&str, &Question> = questions.iter().map(|q| (q.id.as_str(), q)).collect();
    // In the benchmark file's order: MuSiQue's script pairs predictions with gold lines.
    let position: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    // The whole records of the one arm exported (the analyses hold digests only).
    let full = set.reader().arm(arm)?;
    let mut records: Vec<&RunRecord> = full.iter().collect();
    records.sort_by_key(|r| position.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
    let text = match format {
        Dataset::Musique => musique(&records, &by_id),
        Dataset::TwoWiki => hotpot(&records, &by_id, true),
        _ => hotpot(&records, &by_id, false),
    };
    match &args.out {
        Some(path) => {
            sleuth::atomic::write(path, text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "wrote {} predictions of {} to {}",
                arm.records.len(),
                arm.key.name(),
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// The one arm to export: named by `method`, or the only one.
fn pick<'a>(arms: &'a [Arm], method: Option<&str>) -> anyhow::Result<&'a Arm> {
    let names = |arms: &[&Arm]| {
        arms.iter()
            .map(|a| format!("'{}'", a.key.name()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all: Vec<&Arm> = arms.iter().collect();
    let chosen: Vec<&Arm> = match method {
        None => all.clone(),
        Some(m) => {
            let exact: Vec<&Arm> = arms.iter().filter(|a| a.key.name() == m).collect();
            if exact.is_empty() {
                arms.iter().filter(|a| a.key.method == m).collect()
            } else {
                exact
            }
        }
    };
    match chosen.as_slice() {
        [one] => Ok(one),
        [] => bail!(
            "no records of `{}` (present: {})",
            method.unwrap_or_default(),
            names(&all)
        ),
        several => bail!(
            "the run holds {} arms; choose one with --method: {}",
            several.len(),
            names(several)
        ),
    }
}

/// Pool positions of the titles an agent saw, per question.
fn positions(q: &Question, shown_titles: &[String]) -> Vec<usize> {
    let shown = display_titles(&q.paragraphs);
    let mut out: Vec<usize> = shown_titles
        .iter()
        .filter_map(|t| shown.iter().position(|s| s == t))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn answer(r: &RunRecord) -> String {
    r.answer.clone().unwrap_or_default()
}

/// `{"answer": {id: text}, "sp": {id: [[title, sentence]]}}`, and for 2Wiki also
/// `"evidence": {id: []}`: every key the official script reads, for every question.
/// Sentence facts come only from cited evidence (they cannot be made up from retrieved
/// titles), so a method that cites nothing predicts no supporting facts; nor does any
/// method predict 2Wiki's evidence triples.
fn hotpot(records: &[&RunRecord], by_id: &HashMap<&str, &Question>, triples: bool) -> String {
    let answers: Map<String, Value> = records
        .iter()
        .map(|r| (r.id.clone(), Value::String(answer(r))))
        .collect();
    let sp: Map<String, Value> = records
        .iter()
        .map(|r| {
            let facts: Vec<Value> = match (by_id.get(r.id.as_str()), &r.outputs.evidence) {
                (Some(q), Some(e)) => {
                    let shown = display_titles(&q.paragraphs);
                    e.cited
                        .iter()
                        .filter_map(|c| {
                            let i = shown.iter().position(|s| s == &c.title)?;
                            Some(json!([q.paragraphs[i].title, c.sentence]))
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            (r.id.clone(), Value::Array(facts))
        })
        .collect();
    let mut file = json!({ "answer": answers, "sp": sp });
    if triples {
        let none: Map<String, Value> = records
            .iter()
            .map(|r| (r.id.clone(), Value::Array(Vec::new())))
            .collect();
        file["evidence"] = Value::Object(none);
    }
    serde_json::to_string(&file).expect("predictions serialize") + "\n"
}

/// JSON Lines of `{id, predicted_answer, predicted_support_idxs, predicted_answerable}`:
/// support is the cited paragraphs where the method cites, else those it retrieved.
fn musique(records: &[&RunRecord], by_id: &HashMap<&str, &Question>) -> String {
    records
        .iter()
        .map(|r| {
            let support = by_id.get(r.id.as_str()).map_or_else(Vec::new, |q| {
                let titles: Vec<String> = match &r.outputs.evidence {
                    Some(e) => e.cited.iter().map(|c| c.title.clone()).collect(),
                    None => r.retrieved.clone(),
                };
                positions(q, &titles)
            });
            let row = json!({
                "id": r.id,
                "predicted_answer": answer(r),
                "predicted_support_idxs": support,
                "predicted_answerable": true,
            });
            format!("{row}\n")
        })
        .collect()
}
