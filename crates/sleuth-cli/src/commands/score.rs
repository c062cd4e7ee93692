//! `sleuth score`: official metrics for a predictions file in the benchmark's own
//! format, averaged over every gold question (a missing prediction scores 0, as in the
//! official scripts), or over the questions predicted (`--only-predicted`) or recorded
//! by a run (`--run`). The first line says which set was scored.

use super::data::resolve;
use sleuth::eval::metrics::{explain, EvidenceSummary, Summary};
use sleuth::eval::scoring::{score_file, Scope, ScoreError, ScoreRequest};
use sleuth::terminal::{terminal_safe, terminal_safe_lines};
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
    /// Print one JSON object instead of a table: the benchmark's official script's keys
    /// on its scale (HotpotQA `em, f1, prec, recall, sp_*, joint_*` and MuSiQue
    /// `answer_f1, answer_em, support_f1` as fractions 0-1; 2Wiki's keys, `evi_*`
    /// included, as percentages 0-100), unrounded, with `scale` and `official_rounding`
    /// (the decimals the script rounds to) saying which. The table prints percentages.
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
    let scope = match (&args.run, args.only_predicted) {
        (Some(run), _) => Scope::Run(run.clone()),
        (None, true) => Scope::Predicted,
        (None, false) => Scope::All,
    };
    let request = ScoreRequest {
        dataset,
        data: data.clone(),
        predictions: args.predictions.clone(),
        hops: args.hops,
        scope,
    };
    let scored = score_file(&request).map_err(|e| match e {
        sleuth::Error::Score(ScoreError::RunRecords { path, dataset }) => anyhow::anyhow!(
            "{} holds run records, not predictions: `sleuth export RUN --format {} --out FILE` writes them in the official format",
            path.display(),
            dataset.name()
        ),
        e => e.into(),
    })?;
    let summary = &scored.summary;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&scored.to_json())?);
    } else {
        println!(
            "{}",
            describe(&scored.scope, summary.n, scored.gold_questions, &data)
        );
        print!(
            "{}",
            render(summary, scored.unmatched, scored.evidence.as_ref())
        );
        if let Some(missing) = scored.unpredicted_scored_zero() {
            eprintln!(
                "{missing} gold questions have no prediction and score 0; to score only the predicted ones, pass --only-predicted (or --run RUN)"
            );
        }
    }
    if args.explain.is_empty() {
        return Ok(());
    }
    let predictions = sleuth::eval::metrics::read_predictions(dataset, &args.predictions)?;
    for id in &args.explain {
        let question = scored.questions.iter().find(|q| &q.id == id);
        let question = question.ok_or_else(|| {
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

/// The first line: which gold questions the score averages over.
fn describe(scope: &Scope, n: usize, in_file: usize, data: &std::path::Path) -> String {
    let shown = data.display().to_string();
    let file = terminal_safe(&shown);
    match scope {
        Scope::All => format!("scored: all {n} gold questions of {file}"),
        Scope::Predicted => {
            format!("scored: the {n} predicted questions (of {in_file} in {file})")
        }
        Scope::Run(run) => format!(
            "scored: the {n} questions of the run {} (of {in_file} in {file})",
            terminal_safe(&run.display().to_string())
        ),
    }
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
    // Percentages, as the papers print them.
    let mut row = |name: &str, v: Option<f64>| {
        if let Some(v) = v {
            out += &format!("{name:<18}{:>7.2}\n", 100.0 * v);
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
