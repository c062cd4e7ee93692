//! A new stopping strategy is one unit plus its wiring: this module adds one that is in
//! no paper ("commit after K searches in a row") as a [`Strategy`] and runs it on the
//! loop. Outside a test, its wiring is a `Stopping` variant (the `--set stopping=` name)
//! and an arm in [`super::stopping`]; here `run_under` takes the strategy directly.

use super::{Strategy, Trigger, TurnState};
use crate::env::Action;
use crate::llm::ScriptedModel;
use crate::memory::Section;
use crate::methods::agent::tests::question;
use crate::methods::agent::{AgentMethod, PromptSet, Style};
use crate::methods::settings::{AgentSettings, NudgeAt};
use crate::methods::{AgentError, RunContext, StopReason, Turn};
use std::sync::Arc;

const COMMIT: &str = "You have searched several times in a row: commit now.";

/// The toy strategy: once the last `k` turns only searched, tell the agent to commit.
struct AfterSearches {
    k: usize,
}

impl Strategy for AfterSearches {
    fn trigger(&self, at: &TurnState<'_>, _: &PromptSet) -> Result<Option<Trigger>, AgentError> {
        let searched = |t: &Turn| {
            !t.actions.is_empty() && t.actions.iter().all(|a| matches!(a, Action::Search(_)))
        };
        let run = at.turns.iter().rev().take_while(|t| searched(t)).count();
        Ok((run >= self.k).then(|| Trigger {
            message: COMMIT.to_string(),
            condition: None,
        }))
    }
}

/// SLEUTH's memory, searching until it is told to commit, then answering.
fn reply(request: &crate::llm::ChatRequest) -> String {
    let told = request.messages.iter().any(|m| m.content.contains(COMMIT));
    let action = if told {
        "finish[Nogales, Arizona]"
    } else {
        "search[Mingus]"
    };
    format!(
        "Confirmed Facts:\n- [F1] Mingus was born in Nogales (source: Charles Mingus)\n\
         Active Hypotheses:\n- [H1] Nogales | confidence: medium | supports: F1 | contradicts: -\n\
         Open Questions:\n- [Q1] Which state? | action: Nogales | priority: high\n\
         Action: {action}"
    )
}

#[tokio::test]
async fn a_new_strategy_commits_after_k_searches_with_nothing_else_changed() {
    let settings = AgentSettings {
        turns: 10,
        nudge: NudgeAt::Never,
        ..AgentSettings::default()
    };
    let style = Style::memory(&[Section::Facts, Section::Hypotheses, Section::Questions]);
    let method = AgentMethod::new(style, settings, Arc::new(PromptSet::default()));
    let model = Arc::new(ScriptedModel::from_fn(|req, _| Ok(reply(req))));
    let ctx = RunContext::new(model.clone());
    let strategy = Box::new(AfterSearches { k: 3 });
    let episode = method
        .run_under(&question(), &ctx, None, strategy)
        .await
        .unwrap();

    // Three searching turns, the commit message with turn 4, the answer in turn 4.
    assert_eq!(episode.nudge_turn, Some(4));
    assert_eq!(episode.stop, StopReason::Finished);
    assert_eq!(episode.answer.as_deref(), Some("Nogales, Arizona"));
    let nudged: Vec<u32> = episode
        .turns
        .iter()
        .filter(|t| t.nudged)
        .map(|t| t.number)
        .collect();
    assert_eq!(nudged, [4]);
    let requests = model.requests();
    assert!(!requests[2]
        .messages
        .iter()
        .any(|m| m.content.contains(COMMIT)));
    let last = requests[3].messages.last().unwrap();
    assert!(last.content.ends_with(COMMIT), "{}", last.content);
    // The rest of the loop is untouched: memory merged, tool calls counted.
    assert_eq!(episode.tool_calls, 3);
    assert_eq!(episode.outputs.memory_counts.len(), 4);
    assert!(
        episode.outputs.commitment.is_none(),
        "not an adaptive condition"
    );
}
