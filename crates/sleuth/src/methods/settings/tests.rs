use super::*;

fn with(pairs: &[(&str, &str)]) -> Result<Settings, String> {
    Settings::parse(
        &pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        false,
    )
    .map_err(|e| e.to_string())
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
    assert_eq!(loop_view["max_tokens"], "4096");
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
        .to_string()
        .contains("compact"));
}

/// A new `--set` key is one [`SettingDef`] row: this test adds one that is in no paper
/// (`half_turns`: a turn budget given as half of T) in its own table, parses with it
/// beside the built-in catalogue, and shows it resolved. Outside a test the row goes in
/// [`SETTINGS`] (with a field of its own in `AgentSettings`/`EirSettings` when it holds a
/// new value) and the registry lists it among the keys of the methods that read it.
#[test]
fn a_new_key_is_one_catalogue_row() {
    const MINE: &[SettingDef] = &[SettingDef::new(
        "half_turns",
        "half the turn budget (integer >= 1)",
        |s, v| {
            s.agent.turns = 2 * positive("half_turns", v)?;
            Ok(())
        },
        |s, _| (s.agent.turns / 2).to_string(),
    )];
    let catalogue = [SETTINGS, MINE];
    let pairs: BTreeMap<String, String> = [("half_turns".to_string(), "7".to_string())].into();
    let s = Settings::parse_in(&catalogue, &pairs, false).unwrap();
    assert_eq!(s.agent.turns, 14);
    assert_eq!(
        known_in(&catalogue, "half_turns")
            .unwrap()
            .show(&s, Family::Loop),
        "7"
    );
    // The built-in catalogue alone does not know it, and names what it knows.
    let e = Settings::parse(&pairs, false).unwrap_err();
    assert!(
        matches!(&e, SettingError::Unknown { key, known } if key == "half_turns" && known.contains(&"turns"))
    );
    // Its values are checked like any key's.
    let bad: BTreeMap<String, String> = [("half_turns".to_string(), "0".to_string())].into();
    let e = Settings::parse_in(&catalogue, &bad, false).unwrap_err();
    assert_eq!(e, SettingError::value("half_turns", "0", "an integer >= 1"));
    assert_eq!(
        e.to_string(),
        "the setting half_turns=0: expected an integer >= 1"
    );
}

/// Each enum's names are declared once (its `strum` derive) and read through
/// [`crate::names::Named`]: every name parses back to its value, aliases parse, and
/// the declared order is what help texts list.
#[test]
fn enum_names_are_declared_once_and_round_trip() {
    use crate::names::Named;
    fn round_trip<T: Named + PartialEq + std::fmt::Debug>() {
        for name in T::names() {
            let v = T::from_name(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(v.name(), *name);
        }
    }
    round_trip::<Stopping>();
    round_trip::<ToolChannel>();
    round_trip::<DependencyRepair>();
    round_trip::<RecoverMode>();
    round_trip::<SelectedRerun>();
    round_trip::<RequirementRefresh>();
    round_trip::<crate::methods::StopReason>();
    round_trip::<crate::methods::registry::Setting>();
    assert_eq!(
        Stopping::names(),
        [
            "nudge",
            "structural",
            "forward-only",
            "contrastive",
            "late-verification",
            "late-verification-memory"
        ]
    );
    assert_eq!(DependencyRepair::names(), ["false", "true", "unapplied"]);
    assert_eq!(
        DependencyRepair::from_name(" Applied "),
        Some(DependencyRepair::Applied)
    );
    assert_eq!(
        DependencyRepair::from_name("0"),
        Some(DependencyRepair::Off)
    );
    assert_eq!(DependencyRepair::Applied.name(), "true");
    assert_eq!(
        crate::methods::StopReason::ParseFailure.name(),
        "parse_failure"
    );
    assert_eq!(Stopping::from_name("sideways"), None);
}

/// The report and the analysis read a nudge turn off text settings as the agent does,
/// `nudge_count=consumed` included (SLEUTH §3.3).
#[test]
fn text_settings_name_the_agents_nudge_turn() {
    let of = |pairs: &[(&str, &str)]| {
        let map: std::collections::BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AgentSettings::nudge_turn_of(|k| map.get(k).cloned())
    };
    assert_eq!(of(&[("nudge", "0.7"), ("turns", "20")]), Some(14));
    assert_eq!(
        of(&[
            ("nudge", "0.7"),
            ("turns", "20"),
            ("nudge_count", "consumed")
        ]),
        Some(15)
    );
    assert_eq!(of(&[("nudge", "0.7")]), Some(14), "T defaults to 20");
    assert_eq!(of(&[("nudge", "turn:12"), ("turns", "20")]), Some(12));
    assert_eq!(of(&[("nudge", "none")]), None);
    assert_eq!(of(&[("nudge", "adaptive")]), None);
    assert_eq!(of(&[]), None);
}
