//! One edge case per test, checked against what the official scripts return.

use super::*;
use crate::data::Dataset::{HotpotQa, Jsonl, Musique, TwoWiki};

fn golds(g: &[&str]) -> Vec<String> {
    g.iter().map(|s| s.to_string()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn em_ignores_case_punctuation_and_articles() {
    for d in Dataset::ALL {
        assert_eq!(
            exact_match(d, "the U.S. Army!", &golds(&["US army"])),
            1.0,
            "{d}"
        );
    }
}

#[test]
fn em_is_zero_for_different_strings() {
    assert_eq!(
        exact_match(HotpotQa, "Paris, France", &golds(&["Paris"])),
        0.0
    );
}

#[test]
fn f1_partial_overlap() {
    let s = score_answer(HotpotQa, "Barack Obama Jr", &golds(&["Barack Obama"]));
    assert!(
        close(s.precision, 2.0 / 3.0) && close(s.recall, 1.0) && close(s.f1, 0.8),
        "{s:?}"
    );
}

#[test]
fn f1_counts_duplicate_tokens_as_a_multiset() {
    // Counter & Counter: "cat cat cat" shares only one "cat" with "cat".
    let s = score_answer(HotpotQa, "cat cat cat", &golds(&["cat"]));
    assert!(
        close(s.precision, 1.0 / 3.0) && close(s.recall, 1.0) && close(s.f1, 0.5),
        "{s:?}"
    );
    let s = score_answer(Musique, "cat dog", &golds(&["cat cat dog"]));
    assert!(
        close(s.precision, 1.0) && close(s.recall, 2.0 / 3.0) && close(s.f1, 0.8),
        "{s:?}"
    );
}

#[test]
fn f1_no_common_token_is_zero() {
    assert_eq!(f1(Musique, "London", &golds(&["Paris"])), 0.0);
    assert_eq!(f1(HotpotQa, "London", &golds(&["Paris"])), 0.0);
}

#[test]
fn yes_no_prediction_mismatch_zeroes_f1_in_hotpot_style_datasets() {
    // Token overlap would give 2/3; the Hotpot rule zeroes it because "yes" != "yes sir".
    for d in [HotpotQa, TwoWiki, Jsonl] {
        assert_eq!(f1(d, "yes", &golds(&["yes sir"])), 0.0, "{d}");
    }
    assert!(close(f1(Musique, "yes", &golds(&["yes sir"])), 2.0 / 3.0));
}

#[test]
fn yes_no_gold_mismatch_zeroes_f1_in_hotpot_style_datasets() {
    for d in [HotpotQa, TwoWiki, Jsonl] {
        assert_eq!(f1(d, "no way", &golds(&["no"])), 0.0, "{d}");
    }
    assert!(close(f1(Musique, "no way", &golds(&["no"])), 2.0 / 3.0));
}

#[test]
fn noanswer_is_special_only_as_one_word() {
    assert_eq!(f1(HotpotQa, "noanswer", &golds(&["no answer"])), 0.0);
    // "no answer" is not special itself, but its gold "no" is: still zero.
    assert_eq!(f1(HotpotQa, "no answer", &golds(&["no"])), 0.0);
}

#[test]
fn matching_yes_no_scores_full_marks() {
    for d in Dataset::ALL {
        let s = score_answer(d, "Yes.", &golds(&["yes"]));
        assert_eq!((s.em, s.f1), (1.0, 1.0), "{d}");
    }
}

#[test]
fn empty_strings_hotpot_style_em_one_f1_zero() {
    for d in [HotpotQa, TwoWiki, Jsonl] {
        let s = score_answer(d, "", &golds(&[""]));
        assert_eq!((s.em, s.f1), (1.0, 0.0), "{d}");
        // Normalizing to nothing counts as empty too.
        let s = score_answer(d, "The.", &golds(&["a"]));
        assert_eq!((s.em, s.f1), (1.0, 0.0), "{d}");
    }
}

#[test]
fn empty_strings_musique_f1_one_only_if_both_empty() {
    let s = score_answer(Musique, "", &golds(&[""]));
    assert_eq!((s.em, s.f1), (1.0, 1.0));
    let s = score_answer(Musique, "the", &golds(&["Paris"]));
    assert_eq!((s.em, s.f1), (0.0, 0.0));
    let s = score_answer(Musique, "Paris", &golds(&[""]));
    assert_eq!((s.em, s.f1), (0.0, 0.0));
}

#[test]
fn aliases_take_the_max_of_each_score_separately() {
    let g = golds(&["New York City", "Big Apple"]);
    for d in [Musique, TwoWiki] {
        let s = score_answer(d, "big apple city", &g);
        assert!(
            close(s.f1, 0.8) && close(s.precision, 2.0 / 3.0) && close(s.recall, 1.0),
            "{d} {s:?}"
        );
        assert_eq!(s.em, 0.0);
        assert_eq!(exact_match(d, "the big apple", &g), 1.0, "{d}");
    }
}

#[test]
fn no_gold_answers_score_zero() {
    assert_eq!(score_answer(Musique, "", &[]), AnswerScore::default());
}

#[test]
fn unicode_answers_compare_case_insensitively_but_keep_accents() {
    assert_eq!(exact_match(HotpotQa, "ZÜRICH", &golds(&["Zürich"])), 1.0);
    assert_eq!(exact_match(HotpotQa, "Zurich", &golds(&["Zürich"])), 0.0);
    assert!(close(f1(Musique, "Café de Flore", &golds(&["café"])), 0.5));
}

#[test]
fn comparison_reports_the_deciding_rule() {
    assert_eq!(
        compare(F1Rule::Hotpot, "yes", "no").decision,
        Decision::YesNoMismatch
    );
    assert_eq!(
        compare(F1Rule::Squad2, "", "x").decision,
        Decision::EmptyAnswer
    );
    assert_eq!(
        compare(F1Rule::Hotpot, "", "").decision,
        Decision::NoOverlap
    );
    let c = compare(F1Rule::Hotpot, "the cat and the cat", "cat hat");
    assert_eq!(c.decision, Decision::Overlap);
    assert_eq!(c.prediction_tokens, ["cat", "and", "cat"]);
    assert_eq!(c.common, ["cat"]);
}
