//! What a new EIR-setting method really takes, shown by one (ARCHITECTURE.md, "Adding
//! a method"): a [`Policy`] (the prompt and schema of each turn, how a response is read
//! and checked, what it keeps from a refusal or an observation) and a `Method` that runs
//! the shared [`Trajectory`] under it and closes the episode. The trajectory owns the
//! rest: the turn and read budgets, the submit-only last turn, refusals counted by
//! cause, reads into evidence records, the partial episode on a failed call. A real
//! method then gets a registry row (`MethodSpec` in `registry::METHODS`).
//!
//! The toy, "Notebook": each prompt lists the titles read so far and the unread ones; a
//! response is Direct's JSON reply (so its schema and parser are reused, not copied).

use super::direct::parse_proposal;
use super::json::{Move, Rejection};
use super::schema;
use super::trajectory::{rejection_feedback, Budget, Policy, Trajectory};
use super::Shared;
use crate::data::{Dataset, Paragraph, Question};
use crate::env::Observation;
use crate::llm::ScriptedModel;
use crate::methods::settings::EirSettings;
use crate::methods::{AgentError, Episode, Method, PromptSet, RunContext, StopReason, Turn};
use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::Arc;

/// The policy's own state: what it has read, and the last refusal to show.
struct Notebook {
    read: Vec<String>,
    feedback: String,
}

#[async_trait]
impl Policy for Notebook {
    fn prompt(&self, t: &Trajectory<'_>, turn: u32) -> Result<(String, Value), AgentError> {
        let prompt = format!(
            "Turn {turn} of {}. Read so far: {:?}. Unread: {:?}. {}",
            t.budget.turns,
            self.read,
            t.env.choices(),
            self.feedback
        );
        Ok((prompt, schema::direct_action(t.env.can_search())))
    }

    async fn accept(
        &mut self,
        t: &mut Trajectory<'_>,
        turn: &mut Turn,
    ) -> Result<Result<Move, Rejection>, AgentError> {
        Ok(parse_proposal(&turn.response).and_then(|p| {
            t.allowed(&p.action, turn.number)?;
            Ok(p.action)
        }))
    }

    fn refused(&mut self, rejection: &Rejection, turn: &mut Turn) {
        self.feedback = rejection_feedback(rejection, turn.number);
    }

    fn observed(&mut self, mv: &Move, _observation: &Observation, _turn: u32) {
        if let Move::Read { title } = mv {
            self.read.push(title.clone());
        }
        self.feedback.clear();
    }
}

/// The method: one trajectory under the policy, scored on its submission.
struct NotebookMethod {
    shared: Shared,
}

#[async_trait]
impl Method for NotebookMethod {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let settings = &self.shared.settings;
        let env = self.shared.env.make(question);
        let mut t = Trajectory::new(ctx, settings, env, Budget::direct(settings));
        let mut policy = Notebook {
            read: Vec::new(),
            feedback: String::new(),
        };
        let ending = t.run(&mut policy).await?;
        let submission = ending.submission;
        t.episode.stop = if ending.overflow {
            StopReason::ContextOverflow
        } else if submission.is_some() {
            StopReason::Finished
        } else {
            StopReason::Timeout
        };
        t.episode.answer = submission.map(|s| s.answer);
        Ok(t.finish(Vec::new(), 0))
    }
}

fn reply(action: Value) -> String {
    json!({"reasoning": "r", "action": action}).to_string()
}

#[tokio::test]
async fn a_new_policy_runs_on_the_shared_trajectory() {
    let question = Question {
        id: "t1".into(),
        dataset: Dataset::HotpotQa,
        text: "Where was Ada born?".into(),
        answers: vec!["Velmora".into()],
        paragraphs: vec![
            Paragraph::new("Ada", vec!["Ada was born in Velmora.".into()]),
            Paragraph::new("Velmora", vec!["Velmora is a town.".into()]),
        ],
        supporting_facts: Vec::new(),
        supporting_paragraphs: vec![0],
        hops: Some(1),
        kind: None,
    };
    let model = Arc::new(ScriptedModel::new(vec![
        reply(json!({"type": "read", "title": "Ada"})),
        "not json".into(),
        reply(json!({"type": "submit", "answer": "Velmora"})),
    ]));
    let shared = Shared::new(EirSettings::default(), Arc::new(PromptSet::default()));
    let ep = NotebookMethod { shared }
        .run(&question, &RunContext::new(model.clone()))
        .await
        .unwrap();

    assert_eq!(ep.answer.as_deref(), Some("Velmora"));
    assert_eq!(ep.stop, StopReason::Finished);
    assert_eq!(ep.retrieved, ["Ada"]);
    assert_eq!(ep.turns.len(), 3, "the refused response used its turn");
    let evidence = ep
        .outputs
        .evidence
        .as_ref()
        .expect("the setting's evidence");
    assert_eq!(evidence.rejected_total(), 1);
    // The policy's state reached the prompts: the refusal, then the page read.
    let prompts: Vec<String> = model
        .requests()
        .iter()
        .map(|r| r.messages[0].content.clone())
        .collect();
    assert!(
        prompts[1].contains("Read so far: [\"Ada\"]"),
        "{}",
        prompts[1]
    );
    assert!(
        prompts[2].contains("was rejected (unparseable)"),
        "{}",
        prompts[2]
    );
}
