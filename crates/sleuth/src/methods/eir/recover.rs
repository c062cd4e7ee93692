//! The EIR paper's recovery tests on known failures (App. F.2, F.3, Table 16): only the
//! final answer call runs again, on the evidence an earlier EIR run collected.
//!
//! The earlier run's paragraphs are read again in their recorded order, which rebuilds
//! its evidence records E_T exactly (reads are deterministic). Then, by `recover`:
//! - `added`: the annotated supporting paragraphs it missed are read too (E_T+, F.2);
//!   benchmark labels choose them, so this tests receiving them, not finding them;
//! - `unchanged`: nothing is added (F.2's repeat on unchanged evidence);
//! - `selected`: one call, shown only the question, the text read and the unread titles,
//!   picks up to two more paragraphs (F.3); the final call runs again only after a
//!   successful read, otherwise the earlier answer stands.
//!
//! The final prompt holds the question and the evidence only, never the earlier or the
//! reference answer. Which questions are known failures is the caller's choice
//! (`sleuth recover` takes EM errors that missed annotated support).

use super::eir::Eir;
use super::final_call::{final_call, FinalAnswer};
use super::trajectory::{Budget, Trajectory};
use super::Shared;
use crate::data::Question;
use crate::methods::outputs::FinalCall;
use crate::methods::settings::RecoverMode;
use crate::methods::{AgentError, Episode, Method, RunContext};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// What the earlier run recorded for one question.
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    /// Paragraphs read, in order.
    pub retrieved: Vec<String>,
    pub answer: Option<String>,
}

/// Reads the `eir` records of a records file (or a run directory holding one), keyed
/// by question id. Only the fields recovery needs are read, so any record version works.
pub fn read_priors(path: &std::path::Path) -> Result<BTreeMap<String, Prior>, String> {
    let file = if path.is_dir() {
        path.join("records.jsonl")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut out = BTreeMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", file.display(), i + 1))?;
        if v["method"] != "eir" {
            continue;
        }
        let Some(id) = v["id"].as_str() else {
            return Err(format!(
                "{}:{}: a record without an id",
                file.display(),
                i + 1
            ));
        };
        let retrieved = v["retrieved"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let answer = v["answer"].as_str().map(str::to_string);
        out.insert(id.to_string(), Prior { retrieved, answer });
    }
    Ok(out)
}

/// Paragraphs the model may add under `recover=selected` (EIR App. F.3).
const SELECTED_READS: u32 = 2;

pub struct Recover {
    shared: Shared,
    mode: RecoverMode,
    from: Option<PathBuf>,
    priors: OnceLock<Result<BTreeMap<String, Prior>, String>>,
}

impl Recover {
    pub fn new(shared: Shared) -> Self {
        let mode = shared.settings.recover;
        let from = shared.settings.recover_from.clone();
        Recover {
            shared,
            mode,
            from,
            priors: OnceLock::new(),
        }
    }

    fn prior(&self, id: &str) -> Result<&Prior, AgentError> {
        let Some(from) = &self.from else {
            return Err(AgentError::config(
                "eir-recover needs --set from=RUN_DIR (an earlier EIR run's records)",
            ));
        };
        let priors = self.priors.get_or_init(|| read_priors(from));
        let priors = priors.as_ref().map_err(|e| AgentError::config(e.clone()))?;
        priors.get(id).ok_or_else(|| {
            AgentError::config(format!(
                "{} has no eir record of question {id}",
                from.display()
            ))
        })
    }
}

#[async_trait]
impl Method for Recover {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let prior = self.prior(&question.id)?.clone();
        let settings = &self.shared.settings;
        let env = self.shared.env.make(question);
        let mut t = Trajectory::new(ctx, settings, env, Budget::eir(settings));
        // E_T again: the same paragraphs in the same order (turn numbers as read).
        for (turn, title) in prior.retrieved.iter().enumerate() {
            t.env.read(title, turn as u32 + 1);
        }
        let mut turn = prior.retrieved.len() as u32 + 1;
        let s = &self.shared;
        let answer = match self.mode {
            RecoverMode::Selected => {
                // F.3: at most two further paragraphs.
                let mut picking = s.clone();
                picking.settings.extra_reads = SELECTED_READS;
                let eir = Eir::new(picking);
                let before = FinalAnswer {
                    answer: prior.answer.clone(),
                    evidence: Vec::new(),
                    dropped: 0,
                    raw: String::new(),
                };
                let (answer, reads) = eir.read_more(question, &mut t, before).await?;
                t.episode.outputs.final_call = Some(FinalCall {
                    extra_reads: Some(reads),
                    ..final_output(&answer, &prior, t.env.evidence().len())
                });
                answer
            }
            mode => {
                if mode == RecoverMode::Added {
                    let read: Vec<String> = t.env.retrieved().to_vec();
                    for gold in question.gold_titles() {
                        if !read.iter().any(|r| r == gold) {
                            t.env.read(gold, turn);
                            turn += 1;
                        }
                    }
                }
                let retrieved = t.env.retrieved().to_vec();
                let answer = final_call(
                    ctx,
                    settings,
                    &s.prompts,
                    &mut t.episode,
                    &question.text,
                    t.env.evidence(),
                    &retrieved,
                )
                .await?;
                t.episode.outputs.final_call =
                    Some(final_output(&answer, &prior, t.env.evidence().len()));
                answer
            }
        };
        answer.close(&mut t.episode);
        Ok(t.finish(answer.evidence, answer.dropped))
    }
}

/// The record's final-call output; `retrieval_answer` holds the earlier run's answer
/// (for the before/after comparison; the model never sees it).
fn final_output(answer: &FinalAnswer, prior: &Prior, records: usize) -> FinalCall {
    FinalCall {
        retrieval_answer: prior.answer.clone(),
        ..answer.output(records)
    }
}
