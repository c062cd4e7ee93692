use super::*;

fn with(pairs: &[(&str, &str)]) -> Result<Settings, String> {
    Settings::parse(
        &pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        false,
    )
}

#[test]
fn nudge_turn_is_ceiling_of_alpha_t() {
    for (t, alpha, want) in [
        (20, "0.7", 14),
        (15, "0.7", 11),
        (10, "0.7", 7),
        (20, "0.3", 6),
        (20, "0.5", 10),
        (20, "1.0", 20),
        (20, "1", 20),
    ] {
        let s = with(&[("turns", &t.to_string()), ("nudge", alpha)]).unwrap();
        assert_eq!(s.agent.nudge_turn(), Some(want), "T={t} α={alpha}");
    }
    assert_eq!(
        with(&[("nudge", "turn:12")]).unwrap().agent.nudge_turn(),
        Some(12)
    );
    assert_eq!(with(&[("nudge", "none")]).unwrap().agent.nudge_turn(), None);
}

#[test]
fn a_bare_number_is_always_alpha_and_a_turn_says_so() {
    let e = with(&[("nudge", "14")]).unwrap_err();
    assert!(e.contains("nudge=turn:14"), "{e}");
    assert!(with(&[("nudge", "1.5")]).unwrap_err().contains("nudge=1.5"));
    assert!(with(&[("nudge", "turn:0")]).is_err());
    assert_eq!(
        with(&[("nudge", "1")]).unwrap().agent.nudge,
        NudgeAt::Fraction(1.0)
    );
}

#[test]
fn bad_values_name_the_key_and_what_it_accepts() {
    assert!(with(&[("enforce", "maybe")])
        .unwrap_err()
        .contains("enforce"));
    assert!(with(&[("stopping", "sometimes")])
        .unwrap_err()
        .contains("stopping"));
    assert!(with(&[("reads", "0")]).unwrap_err().contains("reads"));
    assert!(with(&[("turns", "0")]).unwrap_err().contains("turns"));
    assert!(with(&[("temperature", "-1")])
        .unwrap_err()
        .contains("temperature"));
    let e = with(&[("list_feedback", "maybe")]).unwrap_err();
    assert!(
        e.contains("list_feedback=maybe") && e.contains("true or false"),
        "{e}"
    );
    assert!(with(&[("extra_reads", "-1")])
        .unwrap_err()
        .contains("extra_reads"));
    let e = with(&[("turnz", "3")]).unwrap_err();
    assert!(
        e.contains("unknown setting `turnz`") && e.contains("turns"),
        "{e}"
    );
}

#[test]
fn alternative_stopping_replaces_the_nudge() {
    let s = with(&[("stopping", "late-verification")]).unwrap();
    assert_eq!(s.agent.stopping, Stopping::LateVerification);
    assert_eq!(s.agent.nudge_turn(), None);
}

#[test]
fn defaults_follow_the_papers() {
    let d = with(&[]).unwrap();
    assert_eq!((d.eir.reads, d.eir.trials, d.eir.max_tokens), (6, 5, 2048));
    assert_eq!(d.eir.verifier_temperature, 0.7);
    assert_eq!((d.agent.turns, d.agent.tau, d.agent.top_k), (20, 2, 3));
    assert_eq!(d.agent.nudge_turn(), Some(14));
    let c = Settings::defaults(true);
    assert_eq!((c.agent.turns, c.agent.last_turn_answer_only), (12, true));
}

#[test]
fn resolved_values_parse_back_to_the_same_settings() {
    let s = with(&[
        ("nudge", "turn:6"),
        ("turns", "10"),
        ("temperature", "0.3"),
        ("stopping", "none"),
        ("reads", "4"),
    ])
    .unwrap();
    let keys: Vec<&str> = SETTINGS.iter().map(|d| d.key).collect();
    for family in [Family::Loop, Family::Eir] {
        let shown = s.resolved(&keys, family);
        assert_eq!(shown.len(), SETTINGS.len());
        let again = Settings::parse(&shown, false).unwrap();
        assert_eq!(again.resolved(&keys, family), shown);
    }
    let loop_view = s.resolved(&["max_tokens", "nudge"], Family::Loop);
    assert_eq!(loop_view["max_tokens"], "1024");
    assert_eq!(loop_view["nudge"], "none");
    assert_eq!(
        s.resolved(&["max_tokens"], Family::Eir)["max_tokens"],
        "2048"
    );
}

#[test]
fn adaptive_nudge_and_compaction_parse_and_show_back() {
    let pairs: BTreeMap<String, String> = [
        ("nudge", "adaptive"),
        ("adaptive_stagnation", "4"),
        ("adaptive_confident", "false"),
        ("compact", "3"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let s = Settings::parse(&pairs, false).unwrap();
    assert_eq!(s.agent.nudge, NudgeAt::Adaptive);
    assert_eq!(s.agent.adaptive.stagnation, 4);
    assert!(!s.agent.adaptive.confident);
    assert!(s.agent.adaptive.questions_closed);
    assert_eq!(s.agent.compact, Some(3));
    let shown = s.resolved(&["nudge", "compact", "adaptive_stagnation"], Family::Loop);
    assert_eq!(shown["nudge"], "adaptive");
    assert_eq!(shown["compact"], "3");
    assert_eq!(
        Settings::default().resolved(&["compact"], Family::Loop)["compact"],
        "none"
    );
    let bad: BTreeMap<String, String> = [("compact".to_string(), "0".to_string())].into();
    assert!(Settings::parse(&bad, false)
        .unwrap_err()
        .contains("compact"));
}
