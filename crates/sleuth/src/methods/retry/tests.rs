use crate::data::{Dataset, Paragraph, Question};
use crate::llm::ScriptedModel;
use crate::methods::registry::{build, MethodConfig, RegisteredMethod};
use crate::methods::{CallKind, RunContext};
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

fn reflexion(episodes: &str) -> RegisteredMethod {
    let settings = [("episodes".to_string(), episodes.to_string())]
        .into_iter()
        .collect();
    build(
        "reflexion",
        &MethodConfig::new(
            settings,
            std::sync::Arc::new(crate::eval::metrics::OfficialExactMatch),
        ),
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
    let attempts = &ep.outputs.attempts;
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].answer.as_deref(), Some("Someone Else"));
    assert_eq!(attempts[1].answer.as_deref(), Some("Z. Quillfeather"));
    assert_eq!(ep.calls[&CallKind::Reflection], 1);
    assert_eq!(ep.total_calls(), 3);
    // Turns are numbered across attempts.
    let numbers: Vec<u32> = ep.turns.iter().map(|t| t.number).collect();
    assert_eq!(numbers, [1, 2]);
    assert_eq!(
        ep.outputs.reflections,
        ["I answered without reading anything; next time look up the founder."]
    );
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
    assert_eq!((ep.outputs.attempts.len(), ep.total_calls()), (1, 1));

    let model = Arc::new(ScriptedModel::new(vec!["Action: finish[wrong]".into()]));
    let ep = reflexion("3")
        .run(&question(), &RunContext::new(model.clone()))
        .await
        .unwrap();
    assert_eq!(ep.outputs.attempts.len(), 3);
    assert_eq!(ep.calls[&CallKind::Reflection], 2);
}

#[tokio::test]
async fn the_judge_is_the_one_passed_in() {
    struct Never;
    impl crate::methods::Judge for Never {
        fn is_correct(&self, _: &Question, _: Option<&str>) -> bool {
            false
        }
    }
    let mut config = MethodConfig::new(
        [("episodes".into(), "2".into())].into(),
        std::sync::Arc::new(crate::eval::metrics::OfficialExactMatch),
    );
    config.judge = Arc::new(Never);
    let model = Arc::new(ScriptedModel::new(vec![
        "Action: finish[Zanzibar Quillfeather]".into(),
    ]));
    let ep = build("reflexion", &config)
        .unwrap()
        .run(&question(), &RunContext::new(model))
        .await
        .unwrap();
    // The official judge would have stopped after the right first answer.
    assert_eq!(ep.outputs.attempts.len(), 2);
}
