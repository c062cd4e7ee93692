//! Loader tests: the schema edge cases on small files we write, and the real benchmark
//! subsets from `../shared/data`.

use super::*;
use crate::{Paragraph, SupportingFact};
use std::path::PathBuf;

/// A benchmark subset from `../shared/data`, or `None` (the test skips with a line) in a
/// clone without it, unless `SLEUTH_REQUIRE_SHARED=1` (CI) makes its absence a failure.
pub(crate) fn shared(rel: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SLEUTH_SHARED_DATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let path = dir.join(rel);
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var("SLEUTH_REQUIRE_SHARED").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "SLEUTH_REQUIRE_SHARED=1 but {} is missing",
        path.display()
    );
    eprintln!("skipped: needs {} (../shared/data)", path.display());
    None
}

fn parse_str(dataset: Dataset, text: &str) -> Result<Vec<Question>, DataError> {
    parse(dataset, Path::new("mem.jsonl"), text)
}

fn parse_error(dataset: Dataset, text: &str) -> (usize, String) {
    match parse_str(dataset, text) {
        Err(DataError::Parse { line, message, .. }) => (line, message),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

const HOTPOT_ROW: &str = r#"{"_id": "h1", "question": "Q?", "answer": "A", "type": "bridge", "level": "hard", "supporting_facts": [["T2", 0], ["T1", 1]], "context": [["T1", ["a.", " b."]], ["T2", ["c."]], ["T3", ["d."]]]}"#;

#[test]
fn hotpot_row_maps_every_field() {
    let q = &parse_str(Dataset::HotpotQa, HOTPOT_ROW).unwrap()[0];
    assert_eq!(q.id, "h1");
    assert_eq!(q.answers, ["A"]);
    assert_eq!(
        q.paragraphs[0],
        Paragraph::new("T1", vec!["a.".into(), " b.".into()])
    );
    assert_eq!(q.paragraphs[0].text(), "a. b.");
    assert_eq!(
        q.supporting_facts[0],
        SupportingFact {
            title: "T2".into(),
            sentence: 0
        }
    );
    assert_eq!(q.supporting_paragraphs, [0, 1]);
    assert_eq!((q.hops, q.kind.as_deref()), (Some(2), Some("bridge")));
}

#[test]
fn json_array_and_json_lines_give_the_same_questions() {
    let lines = format!("{HOTPOT_ROW}\n\n{}\n", HOTPOT_ROW.replace("h1", "h2"));
    let array = format!("[\n{HOTPOT_ROW},\n{}\n]", HOTPOT_ROW.replace("h1", "h2"));
    assert_eq!(
        parse_str(Dataset::HotpotQa, &lines).unwrap(),
        parse_str(Dataset::HotpotQa, &array).unwrap()
    );
}

#[test]
fn bad_json_line_names_its_line() {
    let text = format!(
        "{HOTPOT_ROW}\n{}\n{{\"_id\": \"x\", \n",
        HOTPOT_ROW.replace("h1", "h2")
    );
    let (line, message) = parse_error(Dataset::HotpotQa, &text);
    assert_eq!(line, 3, "{message}");
    assert!(message.contains("EOF"), "{message}");
}

#[test]
fn schema_error_inside_a_pretty_printed_array_names_the_inner_line() {
    let text = format!(
        "[\n{HOTPOT_ROW},\n{{\n  \"_id\": \"h9\",\n  \"question\": 7,\n  \"context\": []\n}}\n]"
    );
    let (line, message) = parse_error(Dataset::HotpotQa, &text);
    assert_eq!(line, 5, "{message}");
    assert!(message.contains("invalid type"), "{message}");
}

#[test]
fn missing_field_is_named() {
    let (line, message) = parse_error(
        Dataset::HotpotQa,
        r#"{"_id": "h", "answer": "a", "context": []}"#,
    );
    assert_eq!(line, 1);
    assert!(message.contains("missing field `question`"), "{message}");
}

#[test]
fn duplicate_ids_are_rejected() {
    let (line, message) = parse_error(Dataset::HotpotQa, &format!("{HOTPOT_ROW}\n{HOTPOT_ROW}"));
    assert_eq!(line, 2);
    assert!(
        message.contains("duplicate id `h1` (first seen at line 1)"),
        "{message}"
    );
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let err = load(Dataset::HotpotQa, "/nonexistent/q.jsonl").unwrap_err();
    assert!(matches!(err, DataError::Io { .. }));
    assert!(
        err.to_string()
            .starts_with("cannot read /nonexistent/q.jsonl"),
        "{err}"
    );
}

#[test]
fn twowiki_hops_follow_the_type() {
    for (kind, hops) in [
        ("bridge_comparison", Some(4)),
        ("inference", Some(2)),
        ("other", None),
    ] {
        let row = HOTPOT_ROW
            .replace("\"bridge\"", &format!("\"{kind}\""))
            .replace("\"level\": \"hard\"", "\"evidences\": []");
        assert_eq!(
            parse_str(Dataset::TwoWiki, &row).unwrap()[0].hops,
            hops,
            "{kind}"
        );
    }
}

#[test]
fn musique_row_splits_paragraphs_and_reads_hops() {
    let row = r#"{"id": "3hop1__1_2_3", "question": "Q?", "answer": "Paris", "answer_aliases": ["City of Light"], "answerable": true,
        "paragraphs": [{"idx": 0, "title": "A", "paragraph_text": "Dr. X lived in the U.S. Army camp. He left.", "is_supporting": false},
                       {"idx": 1, "title": "B", "paragraph_text": "Paris is big.", "is_supporting": true}]}"#;
    let q = &parse_str(Dataset::Musique, &row.replace('\n', " ")).unwrap()[0];
    assert_eq!(q.answers, ["Paris", "City of Light"]);
    assert_eq!((q.hops, q.kind.as_deref()), (Some(3), Some("3hop1")));
    assert_eq!(
        q.paragraphs[0].sentences,
        ["Dr. X lived in the U.S. Army camp.", "He left."]
    );
    assert_eq!(q.supporting_paragraphs, [1]);
    assert!(q.supporting_facts.is_empty());
}

#[test]
fn musique_idx_must_match_position() {
    let row = r#"{"id": "2hop__1", "question": "Q", "answer": "a", "paragraphs": [{"idx": 1, "title": "A", "paragraph_text": "x"}]}"#;
    let (_, message) = parse_error(Dataset::Musique, row);
    assert!(message.contains("idx 1"), "{message}");
}

#[test]
fn user_schema_accepts_text_or_sentences_and_checks_titles() {
    let row = r#"{"id": "u1", "question": "Q?", "answer": "x", "hops": 3, "type": "chain", "supporting": ["B"],
        "paragraphs": [{"title": "A", "text": "One. Two."}, {"title": "B", "sentences": ["Three.", "Four."]}]}"#;
    let q = &parse_str(Dataset::Jsonl, &row.replace('\n', " ")).unwrap()[0];
    assert_eq!(q.answers, ["x"]);
    assert_eq!(q.paragraphs[0].sentences, ["One.", "Two."]);
    assert_eq!(q.supporting_paragraphs, [1]);
    assert_eq!((q.hops, q.kind.as_deref()), (Some(3), Some("chain")));

    let both = r#"{"id": "u", "question": "Q", "answers": ["a"], "paragraphs": [{"title": "A", "text": "x", "sentences": ["x"]}]}"#;
    assert!(parse_error(Dataset::Jsonl, both)
        .1
        .contains("exactly one of"));
    let typo = r#"{"id": "u", "question": "Q", "answers": ["a", "b"], "supporting": ["Z"], "paragraphs": [{"title": "A", "text": "x"}]}"#;
    assert!(parse_error(Dataset::Jsonl, typo)
        .1
        .contains("`Z` names no paragraph"));
}

#[test]
fn filter_hops_keeps_only_matching_questions() {
    let Some(path) = shared("musique/musique_ans_dev_subset200_with_paragraphs.jsonl") else {
        return;
    };
    let qs = load(Dataset::Musique, path).unwrap();
    assert_eq!(filter_hops(qs.clone(), 2).len(), 145);
    assert_eq!(filter_hops(qs.clone(), 3).len(), 32);
    assert_eq!(filter_hops(qs, 4).len(), 23);
}

#[test]
fn real_musique_paragraphs_round_trip_through_sentences() {
    let Some(path) = shared("musique/musique_ans_dev_subset200_with_paragraphs.jsonl") else {
        return;
    };
    let questions = load(Dataset::Musique, &path).unwrap();
    let raw = std::fs::read_to_string(&path).unwrap();
    let (mut paragraphs, mut sentences) = (0, 0);
    for (q, line) in questions.iter().zip(raw.lines()) {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for (p, original) in q
            .paragraphs
            .iter()
            .zip(row["paragraphs"].as_array().unwrap())
        {
            assert_eq!(
                p.text(),
                original["paragraph_text"].as_str().unwrap(),
                "{}",
                q.id
            );
            paragraphs += 1;
            sentences += p.sentences.len();
        }
        assert!(!q.supporting_paragraphs.is_empty(), "{}", q.id);
    }
    assert_eq!(paragraphs, 4000);
    // Wikipedia paragraphs run several sentences each; a splitter that never split (or
    // split everywhere) would land far outside this band.
    let mean = sentences as f64 / paragraphs as f64;
    assert!(
        (2.0..8.0).contains(&mean),
        "mean sentences per paragraph {mean}"
    );
}

#[test]
fn real_hotpot_and_twowiki_supporting_titles_are_in_the_pool() {
    for (dataset, rel, n) in [
        (
            Dataset::HotpotQa,
            "hotpotqa/hotpot_dev_distractor_subset.jsonl",
            396,
        ),
        (
            Dataset::TwoWiki,
            "2wikimultihopqa/2wiki_dev_subset_with_context.jsonl",
            657,
        ),
    ] {
        let Some(path) = shared(rel) else {
            return;
        };
        let qs = load(dataset, path).unwrap();
        assert_eq!(qs.len(), n);
        for q in &qs {
            let titles = q.gold_titles();
            for f in &q.supporting_facts {
                assert!(titles.contains(&f.title.as_str()), "{}: {}", q.id, f.title);
            }
        }
    }
}

#[test]
fn every_schema_requires_the_gold_answer() {
    let musique = r#"{"id": "2hop__1", "question": "Q", "paragraphs": [{"idx": 0, "title": "A", "paragraph_text": "x"}]}"#;
    let user = r#"{"id": "u", "question": "Q", "paragraphs": [{"title": "A", "text": "x"}]}"#;
    let twowiki = r#"{"_id": "w", "question": "Q", "context": [], "evidences": []}"#;
    for (dataset, row) in [
        (
            Dataset::HotpotQa,
            r#"{"_id": "h", "question": "Q", "context": []}"#,
        ),
        (Dataset::TwoWiki, twowiki),
        (Dataset::Musique, musique),
        (Dataset::Jsonl, user),
    ] {
        let text = format!("{}\n{row}", HOTPOT_ROW.replace("h1", "h0"));
        // The hotpot row on line 1 only suits hotpotqa; the others get their own row.
        let text = if dataset == Dataset::HotpotQa {
            text
        } else {
            format!("{row}\n")
        };
        let (line, message) = parse_error(dataset, &text);
        let expected_line = if dataset == Dataset::HotpotQa { 2 } else { 1 };
        assert_eq!(line, expected_line, "{dataset}: {message}");
        assert!(
            message.contains("`answer`") || message.contains("no gold answer"),
            "{dataset}: {message}"
        );
    }
}

#[test]
fn empty_file_is_an_error_at_line_one() {
    for text in ["", "\n\n", "[]"] {
        let (line, message) = parse_error(Dataset::HotpotQa, text);
        assert_eq!(line, 1);
        assert!(message.contains("no questions"), "{message}");
    }
}

#[test]
fn schema_mismatch_is_refused_both_ways_and_detected() {
    let twowiki = HOTPOT_ROW.replace(
        "\"level\": \"hard\"",
        "\"evidences\": [], \"answer_id\": \"Q1\"",
    );
    let (_, message) = parse_error(Dataset::HotpotQa, &twowiki);
    assert!(message.contains("this is a 2wiki record"), "{message}");
    let (_, message) = parse_error(Dataset::TwoWiki, HOTPOT_ROW);
    assert!(message.contains("this is a hotpotqa record"), "{message}");
    let path = Path::new("x.jsonl");
    assert_eq!(detect(path, &twowiki).unwrap(), Dataset::TwoWiki);
    assert_eq!(detect(path, HOTPOT_ROW).unwrap(), Dataset::HotpotQa);
    let user = r#"{"id": "u", "question": "Q", "answer": "a", "paragraphs": [{"title": "A", "text": "x"}]}"#;
    assert_eq!(detect(path, user).unwrap(), Dataset::Jsonl);
    assert!(detect(path, r#"{"q": 1}"#).is_err());
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    let mut bytes = format!("{HOTPOT_ROW}\n").into_bytes();
    bytes.extend_from_slice(b"{\"_id\": \"x\xff\"}\n");
    std::fs::write(&path, bytes).unwrap();
    let err = load(Dataset::HotpotQa, &path).unwrap_err();
    let DataError::Parse { line, message, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(line, 2);
    assert!(
        message.contains("not valid UTF-8 (byte 11 of the line)"),
        "{message}"
    );
}

#[test]
fn musique_unanswerable_questions_are_left_out() {
    let row = |id: &str, answerable: bool| {
        format!(
            r#"{{"id": "{id}", "question": "Q", "answer": "a", "answerable": {answerable}, "paragraphs": [{{"idx": 0, "title": "A", "paragraph_text": "x"}}]}}"#
        )
    };
    let text = format!("{}\n{}\n", row("2hop__1", true), row("2hop__2", false));
    let qs = parse_str(Dataset::Musique, &text).unwrap();
    assert_eq!(qs.len(), 1);
    assert_eq!(qs[0].id, "2hop__1");
}

#[test]
fn twowiki_answers_gain_aliases_from_id_aliases_json() {
    let dir = tempfile::tempdir().unwrap();
    let row = HOTPOT_ROW.replace(
        "\"level\": \"hard\"",
        "\"evidences\": [], \"answer_id\": \"Q42\"",
    );
    std::fs::write(dir.path().join("dev.json"), format!("[{row}]")).unwrap();
    // Without the aliases file, only the answer.
    assert_eq!(
        load(Dataset::TwoWiki, dir.path().join("dev.json")).unwrap()[0].answers,
        ["A"]
    );
    std::fs::write(
        dir.path().join("id_aliases.json"),
        "{\"Q_id\": \"Q42\", \"aliases\": [\"Alpha\", \"A\"], \"demonyms\": [\"Alphan\"]}\n",
    )
    .unwrap();
    let q = &load(Dataset::TwoWiki, dir.path().join("dev.json")).unwrap()[0];
    assert_eq!(q.answers, ["A", "Alpha", "Alphan"]);
    // A gold subset as `sleuth export` writes it (`X.gold.json`) reads its own
    // `X.id_aliases.json`, the file the official script is given, before the
    // benchmark's.
    std::fs::write(dir.path().join("run.gold.json"), format!("[{row}]")).unwrap();
    std::fs::write(
        dir.path().join("run.id_aliases.json"),
        "{\"Q_id\": \"Q42\", \"aliases\": [\"Aleph\"], \"demonyms\": []}\n",
    )
    .unwrap();
    let gold = dir.path().join("run.gold.json");
    assert_eq!(aliases_file(&gold), dir.path().join("run.id_aliases.json"));
    assert_eq!(
        load(Dataset::TwoWiki, &gold).unwrap()[0].answers,
        ["A", "Aleph"]
    );
    std::fs::remove_file(dir.path().join("run.id_aliases.json")).unwrap();
    assert_eq!(aliases_file(&gold), dir.path().join("id_aliases.json"));
}

#[test]
fn real_twowiki_evidence_expands_through_aliases() {
    let Some(path) = shared("2wikimultihopqa/2wiki_dev_subset_with_context.jsonl") else {
        return;
    };
    let gold = read_evidence(&path, None).unwrap();
    assert_eq!(gold.len(), 657);
    let with_triples = gold.values().filter(|g| !g.is_empty()).count();
    assert_eq!(with_triples, 657);
    // Every triple has exactly one spelling without an aliases file.
    assert!(gold
        .values()
        .flatten()
        .all(|spellings| spellings.len() == 1));
}
