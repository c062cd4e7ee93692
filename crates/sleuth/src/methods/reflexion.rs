//! Reflexion on the shared loop: run an episode; when the controller judges the answer
//! wrong (against the gold answer, which the model never sees), ask the model for a
//! self-reflection on its attempt and run another episode carrying that reflection.
//! The record keeps the first episode's answer and the final one.

use super::agent::AgentMethod;
use super::{AgentError, CallKind, Episode, Method, RunContext};
use crate::data::Question;
use crate::eval::metrics;
use crate::llm::{ChatRequest, LlmError, Message};
use async_trait::async_trait;
use minijinja::context;
use serde_json::json;

/// Observation text kept per tool result when an attempt is shown back for reflection.
const OBSERVATION_CHARS: usize = 600;

pub struct Reflexion {
    inner: AgentMethod,
}

impl Reflexion {
    pub fn new(inner: AgentMethod) -> Self {
        Reflexion { inner }
    }

    async fn reflect(
        &self,
        question: &Question,
        attempt: &Episode,
        ctx: &RunContext,
    ) -> Result<(String, crate::llm::ChatResponse), LlmError> {
        let prompt = self
            .inner
            .prompts()
            .render(
                "reflection.txt",
                context! {
                    question => &question.text,
                    answer => attempt.answer.as_deref().unwrap_or("(no answer: the turn budget ran out)"),
                    trajectory => trajectory(attempt),
                },
            )
            .map_err(|e| LlmError::Config(e.to_string()))?;
        let request = ChatRequest::new(vec![Message::user(prompt)])
            .temperature(self.inner.settings().temperature)
            .max_tokens(self.inner.settings().max_tokens);
        let response = ctx.model.complete(&request).await?;
        Ok((response.text.trim().to_string(), response))
    }
}

/// The attempt as text: each turn's response and (clipped) observations.
fn trajectory(ep: &Episode) -> String {
    let mut out = String::new();
    for turn in &ep.turns {
        out.push_str(&format!(
            "Turn {}:\n{}\n",
            turn.number,
            turn.response.trim()
        ));
        for obs in &turn.observations {
            let clipped: String = obs.text.chars().take(OBSERVATION_CHARS).collect();
            out.push_str(&format!("Observation: {clipped}\n"));
        }
    }
    out
}

/// Folds a later episode into the running one: counts, usage and trace accumulate.
fn absorb(total: &mut Episode, next: Episode) {
    total.usage += next.usage;
    total.billed_usage += next.billed_usage;
    for (k, v) in next.calls {
        *total.calls.entry(k).or_default() += v;
    }
    total.tool_calls += next.tool_calls;
    total.reminders += next.reminders;
    for r in next.retrieved {
        if !total.retrieved.contains(&r) {
            total.retrieved.push(r);
        }
    }
    total.turns.extend(next.turns);
    total.answer = next.answer;
    total.stop = next.stop;
    total.nudge_turn = total.nudge_turn.or(next.nudge_turn);
}

#[async_trait]
impl Method for Reflexion {
    fn name(&self) -> &str {
        Method::name(&self.inner)
    }

    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let episodes = self.inner.settings().episodes.max(1);
        let mut total = self.inner.run_episode(question, ctx, None).await?;
        let first = metrics::answer_scores(question, total.answer.as_deref());
        total
            .extra
            .insert("first_answer".into(), json!(total.answer));
        total.extra.insert("first_em".into(), json!(first.em));
        total.extra.insert("first_f1".into(), json!(first.f1));
        let mut episode_turns = vec![total.turns.len()];
        let mut reflections = Vec::new();
        let mut correct = first.em >= 1.0;
        while !correct && (episode_turns.len() as u32) < episodes {
            let (reflection, response) = match self.reflect(question, &total, ctx).await {
                Ok(r) => r,
                Err(source) => {
                    return Err(AgentError::Llm {
                        source,
                        partial: Box::new(total),
                    })
                }
            };
            total.count_call(CallKind::Reflection, &response);
            reflections.push(reflection.clone());
            let next = match self
                .inner
                .run_episode(question, ctx, Some(&reflection))
                .await
            {
                Ok(ep) => ep,
                Err(AgentError::Llm { source, partial }) => {
                    absorb(&mut total, *partial);
                    return Err(AgentError::Llm {
                        source,
                        partial: Box::new(total),
                    });
                }
                Err(e) => return Err(e),
            };
            episode_turns.push(next.turns.len());
            absorb(&mut total, next);
            correct = metrics::answer_scores(question, total.answer.as_deref()).em >= 1.0;
        }
        total
            .extra
            .insert("episodes".into(), json!(episode_turns.len()));
        total
            .extra
            .insert("episode_turns".into(), json!(episode_turns));
        total.extra.insert("reflections".into(), json!(reflections));
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use crate::data::{Dataset, Paragraph, Question};
    use crate::llm::ScriptedModel;
    use crate::methods::registry::{build, MethodConfig};
    use crate::methods::{CallKind, PromptSet, RunContext};
    use std::sync::Arc;

    fn question() -> Question {
        Question {
            id: "r1".into(),
            dataset: Dataset::Musique,
            text: "Who founded the town?".into(),
            answers: vec!["Zanzibar Quillfeather".into(), "Z. Quillfeather".into()],
            paragraphs: vec![Paragraph::new("Town", vec!["The town is old.".into()])],
            supporting_facts: vec![],
            supporting_paragraphs: vec![0],
            hops: Some(2),
            kind: None,
        }
    }

    fn reflexion(episodes: &str) -> Arc<dyn crate::methods::Method> {
        let settings = [("episodes".to_string(), episodes.to_string())]
            .into_iter()
            .collect();
        build(
            "reflexion",
            &MethodConfig {
                settings,
                prompts: Arc::new(PromptSet::default()),
                corpus: None,
            },
        )
        .unwrap()
    }

    #[tokio::test]
    async fn wrong_answer_triggers_reflection_and_retry_without_leaking_gold() {
        let model = Arc::new(ScriptedModel::from_fn(|req, _| {
            let system = &req.messages[0].content;
            Ok(if req.messages.len() == 1 {
                "I answered without reading anything; next time look up the founder.".into()
            } else if req.messages[1].content.contains("judged incorrect") || system.is_empty() {
                "Action: finish[Z. Quillfeather]".into()
            } else {
                "Action: finish[Someone Else]".into()
            })
        }));
        let ep = reflexion("2")
            .run(&question(), &RunContext::new(model.clone()))
            .await
            .unwrap();
        assert_eq!(ep.answer.as_deref(), Some("Z. Quillfeather"));
        assert_eq!(ep.extra["first_answer"], "Someone Else");
        assert_eq!(ep.extra["first_em"], 0.0);
        assert_eq!(ep.extra["episodes"], 2);
        assert_eq!(ep.calls[&CallKind::Reflection], 1);
        assert_eq!(ep.total_calls(), 3);
        for req in model.requests() {
            for m in &req.messages {
                assert!(
                    !m.content.contains("Quillfeather") || m.role == crate::llm::Role::Assistant,
                    "gold leaked: {}",
                    m.content
                );
            }
        }
        let retry = &model.requests()[2];
        assert!(retry.messages[1]
            .content
            .contains("next time look up the founder"));
    }

    #[tokio::test]
    async fn a_correct_first_answer_stops_and_episodes_cap_retries() {
        let model = Arc::new(ScriptedModel::new(vec![
            "Action: finish[Zanzibar Quillfeather]".into(),
        ]));
        let ep = reflexion("2")
            .run(&question(), &RunContext::new(model.clone()))
            .await
            .unwrap();
        assert_eq!(
            (ep.extra["episodes"].clone(), ep.total_calls()),
            (serde_json::json!(1), 1)
        );

        let model = Arc::new(ScriptedModel::new(vec!["Action: finish[wrong]".into()]));
        let ep = reflexion("3")
            .run(&question(), &RunContext::new(model.clone()))
            .await
            .unwrap();
        assert_eq!(ep.extra["episodes"], 3);
        assert_eq!(ep.calls[&CallKind::Reflection], 2);
    }
}
