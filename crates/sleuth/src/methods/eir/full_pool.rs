//! Full Pool: one call that answers from every paragraph of the question's pool,
//! distractors included, with exactly EIR's final answering instructions and evidence
//! format (it renders the same template). It is the reference for complete evidence
//! access, not a practical method for large collections.

use super::final_call::final_call;
use super::Shared;
use crate::data::Question;
use crate::env::titles::display_titles;
use crate::env::EvidenceStore;
use crate::methods::{AgentError, EirOutputs, Episode, Method, Outputs, RunContext};
use async_trait::async_trait;

pub struct FullPool {
    shared: Shared,
}

impl FullPool {
    pub fn new(shared: Shared) -> Self {
        FullPool { shared }
    }
}

/// Every paragraph of the pool as evidence, under the titles the agent would see.
pub fn whole_pool(question: &Question) -> EvidenceStore {
    let mut store = EvidenceStore::default();
    for (title, p) in display_titles(&question.paragraphs)
        .iter()
        .zip(&question.paragraphs)
    {
        store.add_paragraph(title, &p.sentences, 0);
    }
    store
}

#[async_trait]
impl Method for FullPool {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let store = whole_pool(question);
        let mut episode: Episode<EirOutputs> = Episode::default();
        let s = &self.shared;
        let answer = final_call(
            ctx,
            &s.settings,
            &s.prompts,
            &mut episode,
            &question.text,
            &store,
            &[],
        )
        .await?;
        answer.close(&mut episode);
        episode.retrieved = store.titles().to_vec();
        episode.outputs.evidence = answer.evidence();
        episode.outputs.final_call = Some(answer.output(store.len()));
        Ok(episode.map_outputs(Outputs::from))
    }
}
