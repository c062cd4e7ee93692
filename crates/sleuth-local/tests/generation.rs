//! The embedded backend on the real model: usage, determinism, prefix reuse, stop
//! sequences, max_tokens, context overflow and model-spec errors.

mod common;

use common::{complete, load, opts};
use sleuth::llm::{ChatRequest, FinishReason, LlmError, Message};

fn question() -> Vec<Message> {
    vec![
        Message::system("You are a concise assistant."),
        Message::user("What is the capital of France? Answer in one sentence."),
    ]
}

#[test]
fn a_completion_reports_its_token_usage() {
    let Some(model) = load(opts()) else { return };
    let r = complete(&model, &ChatRequest::new(question()).max_tokens(24)).unwrap();
    assert!(!r.text.trim().is_empty(), "empty reply");
    assert!(
        r.usage.input_tokens > 15,
        "the templated prompt has more than 15 tokens: {:?}",
        r.usage
    );
    assert!((1..=24).contains(&r.usage.output_tokens), "{:?}", r.usage);
    assert_eq!(r.usage.cached_input_tokens, 0, "first call reuses nothing");
    assert!(!r.cached);
    assert_eq!(
        model.info().template,
        "gguf",
        "SmolLM2 ships its chat template"
    );
}

#[test]
fn greedy_decoding_reproduces_across_calls_and_models() {
    let Some(a) = load(opts()) else { return };
    let request = ChatRequest::new(question()).max_tokens(40);
    let first = complete(&a, &request).unwrap();
    let again = complete(&a, &request).unwrap();
    assert_eq!(first.text, again.text);
    assert!(
        again.usage.cached_input_tokens > 0,
        "the identical prompt is served from the KV cache: {:?}",
        again.usage
    );
    let b = load(opts()).unwrap();
    assert_eq!(first.text, complete(&b, &request).unwrap().text);
}

#[test]
fn seeded_sampling_reproduces() {
    let Some(model) = load(opts().seed(7)) else {
        return;
    };
    let request = ChatRequest::new(question()).temperature(0.9).max_tokens(30);
    let a = complete(&model, &request).unwrap();
    let b = complete(&model, &request).unwrap();
    assert_eq!(a.text, b.text, "same seed and sample index, same text");
}

/// An episode: each turn appends the reply and an observation, as the agents do.
fn episode(model: &sleuth_local::LocalModel, turns: usize) -> Vec<(String, u64, u64)> {
    let mut messages = vec![
        Message::system("Answer the question by searching. End with `Action: search[query]`."),
        Message::user("Question: Who designed the bridge over the river in Velmora?"),
    ];
    let mut out = Vec::new();
    for turn in 0..turns {
        let r = complete(model, &ChatRequest::new(messages.clone()).max_tokens(30)).unwrap();
        messages.push(Message::assistant(r.text.clone()));
        messages.push(Message::user(format!(
            "Observation {turn}: The iron bridge in Velmora opened in {}; the archive \
             credits an engineer named Ada Kestrel, who also surveyed the harbour.",
            1880 + turn
        )));
        out.push((r.text, r.usage.input_tokens, r.usage.cached_input_tokens));
    }
    out
}

#[test]
fn prefix_reuse_gives_the_same_output_as_full_reprocessing() {
    let Some(reuse) = load(opts()) else { return };
    let full = load(opts().prefix_reuse(false)).unwrap();
    let with_reuse = episode(&reuse, 4);
    let without = episode(&full, 4);
    let texts = |e: &[(String, u64, u64)]| e.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&with_reuse), texts(&without));
    for (turn, (_, input, cached)) in with_reuse.iter().enumerate().skip(1) {
        assert!(
            *cached > 0 && cached < input,
            "turn {turn} reuses part of its prompt: {cached} of {input}"
        );
        // Everything before this turn's new observation was in the cache.
        let previous_input = with_reuse[turn - 1].1;
        assert!(
            *cached >= previous_input / 2,
            "turn {turn}: {cached} cached"
        );
    }
    assert!(without.iter().all(|t| t.2 == 0), "no reuse when disabled");
}

#[test]
fn generation_stops_at_a_stop_sequence_and_at_max_tokens() {
    let Some(model) = load(opts()) else { return };
    let messages = vec![Message::user(
        "Count from one to twenty in words, separated by commas.",
    )];
    let free = complete(&model, &ChatRequest::new(messages.clone()).max_tokens(60)).unwrap();
    // Cut at a piece of the model's own output, so the test does not guess its wording.
    let text = free.text.clone();
    let middle = text.len() / 2;
    let stop: String = text[text.floor_char_boundary_compat(middle)..]
        .chars()
        .take(3)
        .collect();
    assert!(
        !stop.trim().is_empty(),
        "need a visible stop string in {text:?}"
    );
    let cut = text.find(&stop).unwrap();
    let stopped = complete(
        &model,
        &ChatRequest::new(messages.clone())
            .max_tokens(60)
            .stop(vec![stop.clone()]),
    )
    .unwrap();
    assert_eq!(stopped.text, text[..cut], "stop {stop:?} in {text:?}");
    assert_eq!(stopped.finish_reason, FinishReason::Stop);

    let short = complete(&model, &ChatRequest::new(messages).max_tokens(3)).unwrap();
    assert_eq!(short.usage.output_tokens, 3);
    assert_eq!(short.finish_reason, FinishReason::Length);
    assert!(
        text.starts_with(&short.text),
        "{:?} vs {text:?}",
        short.text
    );
}

/// `str::floor_char_boundary` is unstable; the first char boundary at or before `i`.
trait FloorBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}
impl FloorBoundary for String {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

#[test]
fn a_prompt_longer_than_the_context_is_a_context_overflow() {
    let Some(model) = load(opts().ctx_size(256)) else {
        return;
    };
    let long = "The archive lists every ship that entered the harbour. ".repeat(60);
    let err = complete(&model, &ChatRequest::new(vec![Message::user(long)])).unwrap_err();
    match &err {
        LlmError::ContextOverflow { message, .. } => {
            assert!(message.contains("256"), "{message}")
        }
        other => panic!("expected a context overflow, got {other:?}"),
    }
    assert!(!err.is_retryable());
    // The model still works afterwards.
    let ok = complete(&model, &ChatRequest::new(question()).max_tokens(5)).unwrap();
    assert!(ok.usage.output_tokens > 0);
}

#[test]
fn generation_ends_at_the_edge_of_the_context() {
    let Some(model) = load(opts().ctx_size(64)) else {
        return;
    };
    let r = complete(&model, &ChatRequest::new(question())).unwrap();
    assert!(
        r.usage.input_tokens + r.usage.output_tokens <= 64,
        "{:?}",
        r.usage
    );
}

#[test]
fn bad_specs_and_files_are_clear_errors() {
    let err = sleuth_local::open("no-such-model", opts()).err().unwrap();
    assert!(
        err.to_string()
            .contains("unknown local model `no-such-model`"),
        "{err}"
    );
    let err = sleuth_local::open("/nonexistent/m.gguf", opts())
        .err()
        .unwrap();
    assert!(err.to_string().contains("/nonexistent/m.gguf"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.gguf");
    std::fs::write(&junk, b"not a gguf file").unwrap();
    let err = sleuth_local::open(junk.to_str().unwrap(), opts())
        .err()
        .unwrap();
    assert!(err.to_string().contains("cannot load"), "{err}");
}
