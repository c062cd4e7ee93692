//! `sleuth score`: official metrics for a predictions file in the benchmark's own
//! format, averaged over every gold question (a missing prediction scores 0, as in the
//! official scripts), or over the questions predicted (`--only-predicted`) or recorded
//! by a run (`--run`). The first line says which set was scored.

use super::data::{load, resolve};
use sleuth::data::Dataset;
use sleuth::eval::metrics::{
    explain, read_evidence_predictions, read_predictions, score_all, summarize_evidence,
    EvidenceSummary, Summary,
};
use sleuth::terminal::{terminal_safe, terminal_safe_lines};
use std::collections::HashSet;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// hotpotqa, musique, 2wiki or jsonl (default: detected from the file).
    #[arg(long)]
    pub dataset: Option<String>,
    /// The gold benchmark file (default: the fetched dev set of --dataset).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Predictions: `{"answer": {id: text}, "sp": {id: [[title, sent]]}}` for HotpotQA,
    /// 2Wiki and jsonl (2Wiki also `"evidence": {id: [[subject, relation, object]]}`);
    /// JSON Lines of `{id, predicted_answer, predicted_support_idxs}` for MuSiQue.
    #[arg(long)]
    pub predictions: PathBuf,
    /// Only score questions with this many hops.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
    pub hops: Option<u8>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Score only the gold questions the predictions answer (the official scripts score
    /// every gold question, a missing one as 0: right for a full run, a dilution for a
    /// subset).
    #[arg(long, conflicts_with = "run")]
    pub only_predicted: bool,
    /// Score only the questions this run directory (or records file) recorded.
    #[arg(long, value_name = "RUN")]
    pub run: Option<PathBuf>,
    /// Show how the answer of this question id was scored (repeatable).
    #[arg(long, value_name = "ID")]
    pub explain: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (dataset, data) = resolve(args.dataset.as_deref(), args.data.as_deref())?;
    let mut questions = load(dataset, &data, args.hops)?;
    let in_file = questions.len();
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
                dataset.name()
            )
        } else {
            e.into()
        }
    })?;
    let scored = match (&args.run, args.only_predicted) {
        (Some(run), _) => {
            let file = if run.is_dir() {
                run.join("records.jsonl")
            } else {
                run.clone()
            };
            let ids: HashSet<String> = sleuth::eval::store::read_records(&file)?
                .into_iter()
                .map(|r| r.id)
                .collect();
            questions.retain(|q| ids.contains(&q.id));
            Scored::Run(run.display().to_string())
        }
        (None, true) => {
            questions.retain(|q| predictions.by_id.contains_key(&q.id));
            Scored::Predicted
        }
        (None, false) => Scored::All,
    };
    if questions.is_empty() {
        anyhow::bail!(
            "no gold question of {} is {}",
            data.display(),
            match scored {
                Scored::Run(_) => "in the run",
                _ => "predicted",
            }
        );
    }
    let scores = score_all(&questions, &predictions);
    let summary = Summary::of(dataset, &scores, predictions.has_support);
    let evidence = evidence(dataset, &data, &args.predictions, &scores)?;
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
        value["scored"] = scored.name().into();
        value["gold_questions"] = in_file.into();
        if let Some(e) = &evidence {
            for (key, v) in serde_json::to_value(e)?.as_object().expect("a struct") {
                value[key] = v.clone();
            }
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{}", scored.describe(summary.n, in_file, &data));
        print!("{}", render(&summary, unmatched, evidence.as_ref()));
        if matches!(scored, Scored::All) && summary.missing > 0 && summary.answered > 0 {
            eprintln!(
                "{} gold questions have no prediction and score 0; to score only the predicted ones, pass --only-predicted (or --run RUN)",
                summary.missing
            );
        }
    }
    for id in &args.explain {
        let question = questions.iter().find(|q| &q.id == id).ok_or_else(|| {
            anyhow::anyhow!("--explain: no question `{id}` in {}", data.display())
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

/// Which gold questions a score averages over.
enum Scored {
    All,
    Predicted,
    Run(String),
}

impl Scored {
    fn name(&self) -> &'static str {
        match self {
            Scored::All => "all",
            Scored::Predicted => "predicted",
            Scored::Run(_) => "run",
        }
    }

    fn describe(&self, n: usize, in_file: usize, data: &std::path::Path) -> String {
        let shown = data.display().to_string();
        let file = terminal_safe(&shown);
        match self {
            Scored::All => format!("scored: all {n} gold questions of {file}"),
            Scored::Predicted => {
                format!("scored: the {n} predicted questions (of {in_file} in {file})")
            }
            Scored::Run(run) => format!(
                "scored: the {n} questions of the run {} (of {in_file} in {file})",
                terminal_safe(run)
            ),
        }
    }
}

/// 2Wiki's evidence metrics and three-way joint, when the predictions carry evidence.
fn evidence(
    dataset: Dataset,
    data: &std::path::Path,
    predictions: &std::path::Path,
    scores: &[sleuth::eval::metrics::QuestionScore],
) -> anyhow::Result<Option<EvidenceSummary>> {
    if dataset != Dataset::TwoWiki {
        return Ok(None);
    }
    let Some(predicted) = read_evidence_predictions(predictions)? else {
        return Ok(None);
    };
    let aliases_path = data.with_file_name("id_aliases.json");
    let aliases = if aliases_path.is_file() {
        Some(sleuth::data::read_aliases(&aliases_path)?)
    } else {
        None
    };
    let gold = sleuth::data::read_evidence(data, aliases.as_ref())?;
    Ok(Some(summarize_evidence(scores, &predicted, &gold)))
}

fn render(s: &Summary, unmatched: usize, evidence: Option<&EvidenceSummary>) -> String {
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
    match evidence {
        Some(e) => {
            row("Evidence EM", Some(e.evidence_em));
            row("Evidence F1", Some(e.evidence_f1));
            row("Evidence precision", Some(e.evidence_precision));
            row("Evidence recall", Some(e.evidence_recall));
            row("Joint EM", Some(e.joint_em));
            row("Joint F1", Some(e.joint_f1));
        }
        None => {
            row("Joint EM", s.joint_em);
            row("Joint F1", s.joint_f1);
        }
    }
    if s.support_em.is_none() {
        out += "(no support predictions: support not scored)\n";
    }
    out
}
