//! `sleuth score`: official metrics for a predictions file in the benchmark's own
//! format, averaged over every gold question (a missing prediction scores 0).

use super::data::{dataset, load};
use sleuth::eval::metrics::{explain, read_predictions, score_all, Summary};
use sleuth::terminal::{terminal_safe, terminal_safe_lines};
use std::collections::HashSet;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// hotpotqa, musique, 2wiki or jsonl.
    #[arg(long)]
    pub dataset: String,
    /// The gold benchmark file.
    #[arg(long)]
    pub data: PathBuf,
    /// Predictions: `{"answer": {id: text}, "sp": {id: [[title, sent]]}}` for HotpotQA,
    /// 2Wiki and jsonl; JSON Lines of `{id, predicted_answer, predicted_support_idxs}` for
    /// MuSiQue.
    #[arg(long)]
    pub predictions: PathBuf,
    /// Only score questions with this many hops.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
    pub hops: Option<u8>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Show how the answer of this question id was scored (repeatable).
    #[arg(long, value_name = "ID")]
    pub explain: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let dataset = dataset(&args.dataset)?;
    let questions = load(dataset, &args.data, args.hops)?;
    let predictions = read_predictions(dataset, &args.predictions).map_err(|e| {
        // Run records are not predictions: say what turns one into the other.
        let head = std::fs::read_to_string(&args.predictions)
            .ok()
            .and_then(|t| t.lines().next().map(str::to_string))
            .unwrap_or_default();
        if head.contains("\"record_version\"") {
            anyhow::anyhow!(
                "{} holds run records, not predictions: `sleuth export RUN --format {} --out FILE` writes them in the official format",
                args.predictions.display(),
                args.dataset
            )
        } else {
            e.into()
        }
    })?;
    let scores = score_all(&questions, &predictions);
    let summary = Summary::of(dataset, &scores, predictions.has_support);
    // Predictions for ids outside the gold file (or outside the --hops filter) are not
    // scored; count them so a wrong file pairing is visible.
    let gold: HashSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    let unmatched = predictions
        .by_id
        .keys()
        .filter(|id| !gold.contains(id.as_str()))
        .count();

    if args.json {
        let mut value = serde_json::to_value(&summary)?;
        value["unmatched"] = unmatched.into();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", render(&summary, unmatched));
    }
    for id in &args.explain {
        let question = questions.iter().find(|q| &q.id == id).ok_or_else(|| {
            anyhow::anyhow!("--explain: no question `{id}` in {}", args.data.display())
        })?;
        match predictions.by_id.get(id).and_then(|p| p.answer.as_deref()) {
            Some(answer) => {
                let line = format!("{id}: {}", explain(dataset, answer, &question.answers));
                eprintln!("{}", terminal_safe_lines(&line));
            }
            None => eprintln!("{}: no predicted answer (scores 0)", terminal_safe(id)),
        }
    }
    Ok(())
}

fn render(s: &Summary, unmatched: usize) -> String {
    let mut out = format!(
        "{}: {} questions, {} answered, {} missing",
        s.dataset, s.n, s.answered, s.missing
    );
    if unmatched > 0 {
        out += &format!(" ({unmatched} predictions for ids not scored)");
    }
    out.push('\n');
    let mut row = |name: &str, v: Option<f64>| {
        if let Some(v) = v {
            out += &format!("{name:<18}{v:>7.2}\n");
        }
    };
    row("EM", Some(s.em));
    row("F1", Some(s.f1));
    row("Precision", Some(s.precision));
    row("Recall", Some(s.recall));
    row("Support EM", s.support_em);
    row("Support F1", s.support_f1);
    row("Support precision", s.support_precision);
    row("Support recall", s.support_recall);
    row("Joint EM", s.joint_em);
    row("Joint F1", s.joint_f1);
    if s.support_em.is_none() {
        out += "(no support predictions: support not scored)\n";
    }
    out
}
