//! `sleuth-eir` (ours, beyond both papers): SLEUTH's working memory drives the search,
//! and EIR's evidence-only final call gives the answer.
//!
//! SLEUTH keeps what it learnt as confirmed facts in the model's words; EIR shows that
//! answering from immutable evidence alone fixes verbose and unsupported answers. Here
//! every confirmed fact's source sentence (the sentence of its cited paragraph that
//! shares the most words with the statement) is kept verbatim as an evidence record,
//! and after the loop (finished, timed out or overflowed) one final call sees the
//! question and those records only. A timeout thus still yields an answer from what
//! was established; the loop's own `finish` stays in `outputs.final_call`.

use super::AgentMethod;
use crate::data::Question;
use crate::env::titles::display_titles;
use crate::env::EvidenceStore;
use crate::memory::Fact;
use crate::methods::eir::final_call;
use crate::methods::outputs::FinalCall;
use crate::methods::settings::EirSettings;
use crate::methods::{AgentError, Episode, Method, RunContext, StopReason};
use async_trait::async_trait;

pub struct SleuthEir {
    agent: AgentMethod,
    /// The final call's settings (temperature, output tokens, JSON schema).
    final_settings: EirSettings,
}

impl SleuthEir {
    pub fn new(agent: AgentMethod, final_settings: EirSettings) -> Self {
        SleuthEir {
            agent,
            final_settings,
        }
    }
}

/// The evidence records of the confirmed facts: for each fact whose source names a
/// paragraph of the pool (as the agent saw its title, case aside), the sentence of that
/// paragraph sharing the most words with the statement, stamped with the turn the fact
/// was first confirmed. Facts without a matching source add nothing.
pub fn fact_evidence(question: &Question, episode: &Episode) -> EvidenceStore {
    let mut store = EvidenceStore::default();
    let Some(state) = episode.turns.iter().rev().find_map(|t| t.state.as_ref()) else {
        return store;
    };
    let titles = display_titles(&question.paragraphs);
    for fact in &state.facts {
        let Some(source) = fact.source.as_deref().map(str::trim) else {
            continue;
        };
        let found = titles.iter().zip(&question.paragraphs).find(|(shown, p)| {
            shown.eq_ignore_ascii_case(source) || p.title.trim().eq_ignore_ascii_case(source)
        });
        let Some((shown, paragraph)) = found else {
            continue;
        };
        if let Some((n, text)) = source_sentence(fact, &paragraph.sentences) {
            store.add_sentence(shown, n, text, confirmed_on(episode, fact));
        }
    }
    store
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The sentence sharing the most words with the fact (the first among equals).
fn source_sentence<'a>(fact: &Fact, sentences: &'a [String]) -> Option<(usize, &'a str)> {
    let wanted = words(&fact.statement);
    sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let have = words(s);
            let shared = wanted.iter().filter(|w| have.contains(w)).count();
            (shared, i, s.as_str())
        })
        .filter(|(shared, _, _)| *shared > 0)
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, i, s)| (i, s))
}

/// The first turn whose merged state holds the fact.
fn confirmed_on(episode: &Episode, fact: &Fact) -> u32 {
    episode
        .turns
        .iter()
        .find(|t| {
            t.state
                .as_ref()
                .is_some_and(|s| s.facts.iter().any(|f| f.id == fact.id))
        })
        .map_or(0, |t| t.number)
}

#[async_trait]
impl Method for SleuthEir {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let mut episode = self.agent.run_episode(question, ctx, None).await?;
        let store = fact_evidence(question, &episode);
        let loop_answer = episode.answer.take();
        let loop_stop = episode.stop;
        let retrieved = episode.retrieved.clone();
        let answer = final_call(
            ctx,
            &self.final_settings,
            self.agent.prompts(),
            &mut episode,
            &question.text,
            &store,
            &retrieved,
        )
        .await?;
        // The loop's overflow, or the final call's, stays in `episode.stop`.
        answer.close(&mut episode);
        episode.outputs.evidence = Some(answer.evidence());
        episode.outputs.final_call = Some(FinalCall {
            forced_end: loop_stop != StopReason::Finished,
            retrieval_answer: loop_answer,
            ..answer.output(store.len())
        });
        Ok(episode)
    }
}
