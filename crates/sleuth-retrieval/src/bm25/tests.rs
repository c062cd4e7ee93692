//! Index tests on small hand-made corpora: scores checked by hand and against the
//! reference computation, parameters, ties, round trips and damaged indexes.

use super::*;
use sleuth_common::names::Named;
use std::io::Write;
use std::path::Path;

fn doc(id: &str, title: &str, text: &str) -> CorpusDoc {
    CorpusDoc::new(id, title, vec![text.to_string()])
}

/// doc0: appl x2, pie, sweet (dl 4); doc1: banana x2, bread, appl, jam (dl 5);
/// doc2: cherri x2, tart (dl 3). N = 3, avgdl = 4.
fn fruit() -> Vec<CorpusDoc> {
    vec![
        doc("d0", "Apple", "Apple pie is sweet."),
        doc("d1", "Banana", "Banana bread and apple jam."),
        doc("d2", "Cherry", "Cherry tart."),
    ]
}

fn build(dir: &Path, docs: &[CorpusDoc], params: Bm25Params) -> BuildSummary {
    let mut b = IndexBuilder::new(dir, params).unwrap();
    for d in docs {
        b.add(d).unwrap();
    }
    b.finish().unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1e-9)
}

#[test]
fn score_checked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let summary = build(dir.path(), &fruit(), Bm25Params::default());
    assert_eq!((summary.docs, summary.total_len), (3, 12));
    let idx = Bm25Index::open(dir.path()).unwrap();
    assert_eq!(idx.avgdl(), 4.0);
    // idf(appl) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln 1.6 = 0.470004
    // doc0: 0.470004 * 2 / (2 + 0.9 * (0.6 + 0.4 * 4/4)) = 0.324140
    // doc1: 0.470004 * 1 / (1 + 0.9 * (0.6 + 0.4 * 5/4)) = 0.236183
    let hits = idx.search("apple", 10).unwrap();
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 1]);
    assert!(close(f64::from(hits[0].score), 0.324_140_434));
    assert!(close(f64::from(hits[1].score), 0.236_182_728));
    let e = idx.explain("apple", 0).unwrap();
    assert_eq!((e.dl, e.terms[0].tf, e.terms[0].df), (4, 2, 2));
    assert!(close(e.terms[0].idf, 1.6f64.ln()));
    assert!(close(e.score, 0.324_140_434));
}

#[test]
fn search_equals_reference_for_multi_term_queries() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &fruit(), Bm25Params::default());
    let idx = Bm25Index::open(dir.path()).unwrap();
    for q in [
        "apple banana jam",
        "sweet cherry pie pie",
        "bread the apples",
        "nothing here",
    ] {
        let hits = idx.search(q, 10).unwrap();
        let matching = (0..3)
            .filter(|&d| idx.explain(q, d).unwrap().score > 0.0)
            .count();
        assert_eq!(hits.len(), matching, "{q}");
        for h in &hits {
            let reference = idx.explain(q, h.doc).unwrap().score;
            assert!(
                close(f64::from(h.score), reference),
                "{q}: {} vs {reference}",
                h.score
            );
        }
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
    // Repeating a query word changes nothing: duplicates are merged.
    assert_eq!(
        idx.search("apple apple APPLES", 10).unwrap(),
        idx.search("apple", 10).unwrap()
    );
}

#[test]
fn k1_and_b_change_scores_as_the_formula_says() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &fruit(), Bm25Params { k1: 1.5, b: 0.0 });
    let built = Bm25Index::open(dir.path()).unwrap();
    assert_eq!(built.params(), Bm25Params { k1: 1.5, b: 0.0 });
    let idf = 1.6f64.ln();
    // b = 0: no length normalization, so only tf matters.
    let hits = built.search("apple", 10).unwrap();
    assert!(close(f64::from(hits[0].score), idf * 2.0 / 3.5));
    assert!(close(f64::from(hits[1].score), idf * 1.0 / 2.5));
    // k1 = 0: every matching term contributes exactly its idf, whatever tf and dl.
    let flat = Bm25Index::open_with(dir.path(), Some(Bm25Params { k1: 0.0, b: 0.4 })).unwrap();
    let hits = flat.search("apple", 10).unwrap();
    assert!(hits.iter().all(|h| close(f64::from(h.score), idf)));
    // b = 1, k1 = 2: full normalization.
    let full = Bm25Index::open_with(dir.path(), Some(Bm25Params { k1: 2.0, b: 1.0 })).unwrap();
    let hits = full.search("apple", 10).unwrap();
    assert!(close(
        f64::from(hits[0].score),
        idf * 2.0 / (2.0 + 2.0 * 4.0 / 4.0)
    ));
    assert!(close(
        f64::from(hits[1].score),
        idf * 1.0 / (1.0 + 2.0 * 5.0 / 4.0)
    ));
    assert!(Bm25Index::open_with(dir.path(), Some(Bm25Params { k1: 0.9, b: 1.5 })).is_err());
}

#[test]
fn ties_break_by_ascending_id() {
    let dir = tempfile::tempdir().unwrap();
    let docs = vec![
        doc("b", "Same", "identical words here"),
        doc("10", "Same", "identical words here"),
        doc("9", "Same", "identical words here"),
        doc("a", "Other", "unrelated"),
    ];
    build(dir.path(), &docs, Bm25Params::default());
    let idx = Bm25Index::open(dir.path()).unwrap();
    let hits = idx.search("identical words", 10).unwrap();
    let ids: Vec<String> = hits.iter().map(|h| idx.doc_id(h.doc).unwrap()).collect();
    assert_eq!(ids, ["9", "10", "b"]);
    assert!(hits.windows(2).all(|w| w[0].score == w[1].score));
    // With k = 2 the heap must keep the two smallest ids, not the first two seen.
    let top2: Vec<u32> = idx
        .search("identical words", 2)
        .unwrap()
        .iter()
        .map(|h| h.doc)
        .collect();
    assert_eq!(top2, [2, 1]);
}

#[test]
fn jsonl_round_trip_and_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    let mut f = std::fs::File::create(&corpus).unwrap();
    writeln!(f, r#"{{"id":"101","title":"Port Blair","text":"Port Blair is a city. It is in India.","sentences":["Port Blair is a city."," It is in India."]}}"#).unwrap();
    writeln!(f).unwrap();
    writeln!(
        f,
        r#"{{"id":7,"title":"Nogales","text":"Nogales lies in Arizona."}}"#
    )
    .unwrap();
    writeln!(
        f,
        r#"{{"title":"Tucson","sentences":["Tucson is in Arizona.","It is hot."]}}"#
    )
    .unwrap();
    drop(f);
    let out = dir.path().join("idx");
    let mut calls = 0;
    let summary = build_from_jsonl(&corpus, &out, Bm25Params::default(), |_| calls += 1).unwrap();
    assert_eq!(summary.docs, 3);
    assert!(calls >= 1);
    let idx = Bm25Index::open(&out).unwrap();
    let d = idx.doc(0).unwrap();
    assert_eq!(d.sentences, ["Port Blair is a city.", " It is in India."]);
    assert_eq!(idx.find_id("7").unwrap(), Some(1));
    assert_eq!(idx.find_id("2").unwrap(), Some(2), "missing id = position");
    assert_eq!(idx.find_id("nope").unwrap(), None);
    let hits = idx.search("Arizona city", 10).unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(idx.doc(hits[0].doc).unwrap().title, "Port Blair");
}

#[test]
fn bad_corpus_lines_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c.jsonl");
    std::fs::write(&corpus, "{\"id\":\"1\",\"text\":\"ok\"}\n{\"id\":\"2\"}\n").unwrap();
    let err = build_from_jsonl(
        &corpus,
        &dir.path().join("i"),
        Bm25Params::default(),
        |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("c.jsonl:2:") && err.contains("neither"),
        "{err}"
    );
    std::fs::write(
        &corpus,
        "{\"id\":\"1\",\"text\":\"a\"}\n{\"id\":\"1\",\"text\":\"b\"}\n",
    )
    .unwrap();
    let err = build_from_jsonl(
        &corpus,
        &dir.path().join("i"),
        Bm25Params::default(),
        |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("duplicate paragraph id `1`"), "{err}");
}

#[test]
fn damaged_or_missing_index_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Bm25Index::open(dir.path().join("none"))
        .err()
        .unwrap()
        .to_string();
    assert!(missing.contains("no such index directory"), "{missing}");

    let out = dir.path().join("idx");
    build(&out, &fruit(), Bm25Params::default());
    let index_file = out.join(format::INDEX_FILE);
    let good = std::fs::read(&index_file).unwrap();

    std::fs::write(&index_file, &good[..good.len() - 9]).unwrap();
    let e = Bm25Index::open(&out).err().unwrap().to_string();
    assert!(
        e.contains("not a usable sleuth BM25 index") && e.contains("truncated"),
        "{e}"
    );

    let mut wrong = good.clone();
    wrong[..8].copy_from_slice(b"NOTANIDX");
    std::fs::write(&index_file, &wrong).unwrap();
    let e = Bm25Index::open(&out).err().unwrap().to_string();
    assert!(e.contains("missing header"), "{e}");

    let mut future = good.clone();
    future[8] = 99;
    std::fs::write(&index_file, &future).unwrap();
    let e = Bm25Index::open(&out).err().unwrap().to_string();
    assert!(
        e.contains("format version 99") && e.contains("newer sleuth"),
        "{e}"
    );

    // Versions 3 and 4 had this header's layout (4 the varint postings).
    for version in [3u8, 4] {
        let mut old = good.clone();
        old[8] = version;
        std::fs::write(&index_file, &old).unwrap();
        let e = Bm25Index::open(&out).err().unwrap().to_string();
        assert!(
            e.contains(&format!("format version {version}"))
                && e.contains("rebuild it with `sleuth index build`"),
            "{e}"
        );
    }

    let mut older = good.clone();
    older[8] = 2;
    std::fs::write(&index_file, &older).unwrap();
    let e = Bm25Index::open(&out).err().unwrap().to_string();
    assert!(
        e.contains("format version 2") && e.contains("rebuild it with `sleuth index build`"),
        "{e}"
    );

    std::fs::write(&index_file, &good).unwrap();
    std::fs::remove_file(out.join(format::DOCS_FILE)).unwrap();
    let e = Bm25Index::open(&out).err().unwrap().to_string();
    assert!(e.contains("docs.bin") && e.contains("file missing"), "{e}");
}

#[test]
fn concurrent_searches_agree() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &fruit(), Bm25Params::default());
    let idx = std::sync::Arc::new(Bm25Index::open(dir.path()).unwrap());
    let expected = idx.search("apple banana", 10).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let idx = idx.clone();
            std::thread::spawn(move || {
                (0..200)
                    .map(|_| idx.search("apple banana", 10).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap().iter().all(|r| *r == expected));
    }
}

/// A skewed random corpus: long posting lists (many blocks), duplicate paragraphs (exact
/// ties) and ids whose order differs from the insertion order.
fn random_corpus(docs: usize, seed: u64) -> Vec<CorpusDoc> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out: Vec<CorpusDoc> = Vec::with_capacity(docs);
    for i in 0..docs {
        let id = format!("{}", (i * 7919) % 100_003);
        if i % 40 == 39 {
            let prev = &out[i - 1];
            out.push(CorpusDoc::new(
                id,
                prev.title.clone(),
                prev.sentences.clone(),
            ));
            continue;
        }
        let len = rng.gen_range(1..40);
        let words: Vec<String> = (0..len)
            .map(|_| {
                let r: f64 = rng.gen();
                format!("w{}x", (r * r * r * 80.0) as u32)
            })
            .collect();
        out.push(CorpusDoc::new(id, "", vec![words.join(" ")]));
    }
    out
}

/// Every search path's hits for `terms`, checked equal to the exhaustive path's.
fn assert_all_paths_exact(idx: &Bm25Index, terms: &[String], k: usize) {
    let slow = idx.search_exhaustive_terms(terms, k).unwrap();
    for algorithm in Algorithm::ALL {
        let fast = idx.search_terms_with(terms, k, algorithm).unwrap();
        assert_eq!(fast, slow, "{} query {terms:?} k {k}", algorithm.name());
    }
}

#[test]
fn every_path_returns_exactly_the_exhaustive_results() {
    use rand::{Rng, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &random_corpus(4000, 11), Bm25Params::default());
    let built = Bm25Index::open(dir.path()).unwrap();
    // Other k1 and b: the stored block maxima do not hold, the term bounds must do.
    let other = Bm25Index::open_with(dir.path(), Some(Bm25Params { k1: 1.7, b: 0.9 })).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for _ in 0..150 {
        let n = rng.gen_range(1..9);
        let query: Vec<String> = (0..n)
            .map(|_| format!("w{}x", rng.gen_range(0..85)))
            .collect();
        let terms = built.analyzer().query_terms(&query.join(" "));
        for idx in [&built, &other] {
            for k in [1, 3, 10, 60] {
                assert_all_paths_exact(idx, &terms, k);
            }
        }
    }
}

#[test]
fn block_max_paths_are_exact_on_small_random_corpora() {
    use rand::{Rng, SeedableRng};
    // Several corpora: few documents (k above the matches), many exact ties (a small
    // vocabulary and duplicated paragraphs), single terms, and repeated query words.
    for seed in 0..6u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(100 + seed);
        let docs = [30, 300, 1500, 3000, 700, 5000][seed as usize];
        let vocabulary = [3, 8, 20, 60, 5, 120][seed as usize];
        let corpus: Vec<CorpusDoc> = (0..docs)
            .map(|i| {
                let len = rng.gen_range(1..12);
                let words: Vec<String> = (0..len)
                    .map(|_| format!("t{}q", rng.gen_range(0..vocabulary)))
                    .collect();
                doc(&format!("{}", (i * 31) % 10_007), "", &words.join(" "))
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        build(dir.path(), &corpus, Bm25Params::default());
        let idx = Bm25Index::open(dir.path()).unwrap();
        for _ in 0..60 {
            let n = rng.gen_range(1..6);
            let words: Vec<String> = (0..n)
                .map(|_| format!("t{}q", rng.gen_range(0..vocabulary + 2)))
                .collect();
            let repeated = format!("{} {}", words.join(" "), words[0]);
            let terms = idx.analyzer().query_terms(&repeated);
            for k in [1, 2, 10, 100, 10_000] {
                assert_all_paths_exact(&idx, &terms, k);
            }
            assert_all_paths_exact(&idx, &terms[..1], 5);
        }
        assert!(idx
            .search_terms_with(&[], 10, Algorithm::BlockMaxWand)
            .unwrap()
            .is_empty());
        idx.check().unwrap();
    }
}

/// Flips one bit of `file` at `byte`.
fn flip(file: &Path, byte: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[byte] ^= 1 << (byte % 8);
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn check_accepts_a_sound_index_and_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let summary = build(dir.path(), &random_corpus(3000, 4), Bm25Params::default());
    let report = Bm25Index::open(dir.path()).unwrap().check().unwrap();
    assert_eq!(
        (report.docs, report.terms, report.postings),
        (summary.docs, summary.terms, summary.postings)
    );
    assert_eq!(report.bytes, summary.index_bytes);
}

#[test]
fn every_flipped_byte_is_caught_by_open_or_check() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("idx");
    build(&out, &fruit(), Bm25Params::default());
    for name in [format::INDEX_FILE, format::DOCS_FILE] {
        let file = out.join(name);
        let good = std::fs::read(&file).unwrap();
        for byte in 0..good.len() {
            flip(&file, byte);
            let caught = match Bm25Index::open(&out) {
                Err(e) => e.to_string(),
                Ok(idx) => idx.check().err().map(|e| e.to_string()).unwrap_or_default(),
            };
            assert!(
                caught.contains("not a usable sleuth BM25 index"),
                "{name} byte {byte} of {}: {caught:?}",
                good.len()
            );
            std::fs::write(&file, &good).unwrap();
        }
    }
    Bm25Index::open(&out).unwrap().check().unwrap();
}

#[test]
fn open_verifies_lengths_and_small_parts_check_verifies_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &random_corpus(3000, 9), Bm25Params::default());
    let index_file = dir.path().join(format::INDEX_FILE);
    let good = std::fs::read(&index_file).unwrap();
    let header = format::Header::decode(&good, &index_file).unwrap();
    let middle = |section: usize| {
        let (off, len) = header.sections[section];
        (off + len / 2) as usize
    };

    // A flipped posting byte: an open that verifies nothing large still opens, the
    // default open (this index is small) and check refuse it, naming the section.
    flip(&index_file, middle(format::POSTINGS));
    let lax = Bm25Index::open_verifying(dir.path(), None, 0).unwrap();
    let e = lax.check().err().unwrap().to_string();
    assert!(e.contains("the postings section fails its checksum"), "{e}");
    let e = Bm25Index::open(dir.path()).err().unwrap().to_string();
    assert!(e.contains("postings section"), "{e}");
    std::fs::write(&index_file, &good).unwrap();

    // Document lengths feed every score: always verified on open.
    flip(&index_file, middle(format::DOC_LENS));
    let e = Bm25Index::open_verifying(dir.path(), None, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("doc_lens section fails its checksum"), "{e}");
    std::fs::write(&index_file, &good).unwrap();

    let docs_file = dir.path().join(format::DOCS_FILE);
    let docs_len = std::fs::metadata(&docs_file).unwrap().len() as usize;
    flip(&docs_file, docs_len / 2);
    let lax = Bm25Index::open_verifying(dir.path(), None, 0).unwrap();
    let e = lax.check().err().unwrap().to_string();
    assert!(e.contains("docs.bin") && e.contains("checksum"), "{e}");
}
