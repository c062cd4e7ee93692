//! The EIR paper's recovery tests on known failures (App. F.2, F.3, Table 16): only the
//! final answer call runs again, on the evidence an earlier EIR run collected.
//!
//! The earlier run's paragraphs are read again in their recorded order, which rebuilds
//! its evidence records E_T exactly (reads are deterministic). Then, by `recover`:
//! - `added`: the annotated supporting paragraphs it missed are read too (E_T+, F.2);
//!   benchmark labels choose them, so this tests receiving them, not finding them;
//! - `unchanged`: nothing is added (F.2's repeat on unchanged evidence);
//! - `selected`: one call, shown only the question, the text read and the unread titles,
//!   picks up to two more paragraphs (F.3); the final call then runs again even when
//!   no read succeeded (`selected_rerun=always`, the default: one of F.3's matches
//!   followed no read), or only after a successful read (`selected_rerun=after_read`),
//!   where otherwise the earlier answer stands with the sentences it cited.
//!
//! The final prompt holds the question and the evidence only, never the earlier or the
//! reference answer. Which questions are known failures is the caller's choice
//! (`sleuth recover` takes EM errors that missed annotated support).

use super::eir::{Eir, MoreReading};
use super::final_call::{final_call, FinalAnswer};
use super::json::Citation;
use super::trajectory::{Budget, Trajectory};
use super::Shared;
use crate::data::Question;
use crate::methods::outputs::FinalCall;
use crate::methods::settings::{RecoverMode, SelectedRerun};
use crate::methods::{AgentError, Episode, Method, RunContext};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What the earlier run recorded for one question.
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    /// Paragraphs read, in order.
    pub retrieved: Vec<String>,
    pub answer: Option<String>,
    /// The sentences that answer cited (its Support F1 rests on them).
    pub cited: Vec<Citation>,
}

/// The earlier runs recovery reads. A method never imports the evaluation layer, which
/// owns the record format and its reader: the run's assembly passes that reader in
/// (`eval::store::RecordedRuns`, through the registry's `MethodConfig::earlier`).
pub trait EarlierRuns: Send + Sync {
    /// The records of `method` in the run at `from` (a run directory or a records
    /// file), keyed by question id.
    fn priors(
        &self,
        from: &Path,
        method: &str,
    ) -> Result<BTreeMap<String, Prior>, Box<dyn std::error::Error + Send + Sync>>;
}

/// The method whose runs recovery repeats the final call of.
const RECOVERS: &str = "eir";

/// Paragraphs the model may add under `recover=selected` (EIR App. F.3).
const SELECTED_READS: u32 = 2;

pub struct Recover {
    shared: Shared,
    mode: RecoverMode,
    from: Option<PathBuf>,
    earlier: Option<Arc<dyn EarlierRuns>>,
    priors: OnceLock<Result<BTreeMap<String, Prior>, String>>,
}

impl Recover {
    /// Recovery on `shared`'s settings, reading earlier runs through `earlier` (the
    /// evaluation layer's record reader; without one, every question is refused).
    pub fn new(shared: Shared, earlier: Option<Arc<dyn EarlierRuns>>) -> Self {
        let mode = shared.settings.recover;
        let from = shared.settings.recover_from.clone();
        Recover {
            shared,
            mode,
            from,
            earlier,
            priors: OnceLock::new(),
        }
    }

    fn prior(&self, id: &str) -> Result<&Prior, AgentError> {
        let Some(from) = &self.from else {
            return Err(AgentError::config(format!(
                "eir-recover needs {} (an earlier EIR run's records)",
                crate::knob::Knob::Set.with("from=RUN_DIR")
            )));
        };
        let Some(earlier) = &self.earlier else {
            return Err(AgentError::config(
                "eir-recover was built without a reader of earlier runs (MethodConfig::earlier)",
            ));
        };
        let priors = self
            .priors
            .get_or_init(|| earlier.priors(from, RECOVERS).map_err(|e| e.to_string()));
        let priors = priors.as_ref().map_err(|e| AgentError::config(e.clone()))?;
        priors.get(id).ok_or_else(|| {
            AgentError::config(format!(
                "{} has no {RECOVERS} record of question {id}",
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
                // F.3: a separate call selects at most two further paragraphs, and the
                // final call then runs on the evidence (`selected_rerun=always`, even
                // when no read succeeded: one of the 174 matches followed none).
                let mut picking = s.clone();
                picking.settings.extra_reads = SELECTED_READS;
                let eir = Eir::new(picking);
                let reading = match settings.selected_rerun {
                    SelectedRerun::Always => MoreReading::Select,
                    SelectedRerun::AfterRead => MoreReading::SelectRerunAfterRead,
                };
                // The earlier answer stands where the final call does not run again
                // (`after_read` with nothing read, or a selection call that overflowed),
                // and with it the sentences it cited (all of them in the rebuilt E_T),
                // so its Support F1 is the earlier run's.
                let store = t.env.evidence();
                let cited: Vec<Citation> = prior
                    .cited
                    .iter()
                    .filter(|c| store.get(&c.title, c.sentence).is_some())
                    .cloned()
                    .collect();
                let before = FinalAnswer {
                    answer: prior.answer.clone(),
                    evidence: cited,
                    dropped: 0,
                    rejection: None,
                    raw: String::new(),
                };
                let (answer, reads) = eir.read_more(question, &mut t, before, reading).await?;
                t.episode.outputs.final_call = Some(FinalCall {
                    extra_reads: Some(reads),
                    ..final_output(&answer, &prior, t.env.evidence().len())
                });
                answer
            }
            mode => {
                if mode == RecoverMode::Added {
                    let read: Vec<String> = t.env.retrieved().to_vec();
                    // By identity: the shown title names one paragraph (F.2).
                    for gold in question.gold_shown() {
                        if !read.contains(&gold) {
                            t.env.read(&gold, turn);
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
