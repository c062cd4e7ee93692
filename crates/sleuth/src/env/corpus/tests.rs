//! Corpus environment tests on a small index built here.

use super::*;
use crate::retrieval::bm25::{Bm25Params, CorpusDoc, IndexBuilder};

fn env_with(dir: &std::path::Path, docs: usize, opts: CorpusOptions) -> CorpusEnv {
    let mut b = IndexBuilder::new(dir, Bm25Params::default()).unwrap();
    b.add(&CorpusDoc::new(
        "500",
        "Charles Mingus",
        vec![
            "Charles Mingus was a jazz bassist.".into(),
            " He was born in Nogales, Arizona.".into(),
        ],
    ))
    .unwrap();
    b.add(&CorpusDoc::new(
        "501",
        "Nogales, Arizona",
        vec!["Nogales is a city in Santa Cruz County, Arizona.".into()],
    ))
    .unwrap();
    for i in 0..docs {
        b.add(&CorpusDoc::new(
            format!("{}", 1000 + i),
            format!("Jazz club {i}"),
            vec![format!("Jazz club number {i} hosts jazz concerts.")],
        ))
        .unwrap();
    }
    b.finish().unwrap();
    CorpusEnv::new(Arc::new(Bm25Index::open(dir).unwrap()), opts)
}

#[test]
fn search_lists_ids_and_titles_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_with(dir.path(), 20, CorpusOptions::default());
    let obs = env.step(&Action::Search("jazz bassist Mingus".into()));
    assert!(
        obs.text.contains("1. [id 500] Charles Mingus"),
        "{}",
        obs.text
    );
    assert!(
        !obs.text.contains("bassist."),
        "no paragraph text in results"
    );
    assert!(!obs.text.contains("score"));
    assert_eq!(obs.shown.len(), 10, "at most ten results");
    assert_eq!(obs.shown[0], "500");
    assert!(env.retrieved().is_empty(), "listing is not reading");
    assert_eq!(env.searched().len(), 10);
    let none = env.step(&Action::Search("the of and".into()));
    assert!(none.text.contains("no searchable words"));
    let miss = env.step(&Action::Search("zzzzqqq".into()));
    assert!(miss.text.contains("No paragraph matches"));
}

#[test]
fn read_shows_numbered_sentences_and_refuses_unlisted_ids() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_with(
        dir.path(),
        3,
        CorpusOptions {
            top_k: 10,
            max_reads: 4,
        },
    );
    let early = env.step(&Action::Read("500".into()));
    assert!(
        early
            .text
            .contains("not among this episode's search results")
            && early.text.contains("Search first")
    );
    assert_eq!(env.reads_left(), 3);

    env.step(&Action::Search("Mingus".into()));
    let read = env.step(&Action::Read("[id 500]".into()));
    assert!(read.text.contains("[id 500] Charles Mingus\n(0) Charles Mingus was a jazz bassist.\n(1) He was born in Nogales, Arizona."), "{}", read.text);
    assert_eq!(env.retrieved(), ["500"]);
    assert_eq!(env.read_paragraph("500").unwrap().sentences.len(), 2);

    // Found by a later search only: results accumulate, and a title is pointed at its id.
    let by_title = env.step(&Action::Read("Nogales, Arizona".into()));
    assert!(by_title.text.contains("not among"), "{}", by_title.text);
    env.step(&Action::Search("Santa Cruz County".into()));
    let title_hint = env.step(&Action::Read("nogales, arizona".into()));
    assert!(title_hint.text.contains("read[501]"), "{}", title_hint.text);
    assert_eq!(env.reads_left(), 0);
    assert!(!env.can_read());
    let refused = env.step(&Action::Read("501".into()));
    assert!(refused.text.contains("No read attempts left (4 of 4 used)"));
    assert_eq!(env.reads_used(), 4);
    assert_eq!(env.retrieved(), ["500"]);
}

#[test]
fn repeated_reads_spend_attempts_without_duplicating() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_with(dir.path(), 0, CorpusOptions::default());
    env.step(&Action::Search("Arizona".into()));
    env.step(&Action::Read("501".into()));
    let again = env.step(&Action::Read("id: 501".into()));
    assert!(again.text.contains("read this paragraph before"));
    assert_eq!(env.reads_used(), 2);
    assert_eq!(env.retrieved(), ["501"]);
    let lookup = env.step(&Action::Lookup("Charles Mingus".into()));
    assert!(lookup.text.contains("lookup is not available"));
    assert_eq!(env.reads_used(), 2, "an invalid action is not a read");
    assert!(env.tools().prompt().contains("6 read attempts"));
}
