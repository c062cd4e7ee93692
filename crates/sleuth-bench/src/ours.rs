//! Our index's phases: build, and query (speed plus the reference check).
//!
//! The reference check is independent of the index's files: it re-reads the corpus,
//! counts N, the total length and each query term's df itself, re-analyzes every hit's
//! paragraph from the corpus line to get tf and dl, evaluates the formula in f64, and
//! compares with the score the index returned, for every hit of every query.

use crate::measure::{emit, peak_rss_mib, query_figures};
use anyhow::Context;
use serde_json::{json, Value};
use sleuth::names::Named;
use sleuth::retrieval::bm25::{build_from_jsonl, Algorithm, Analyzer, Bm25Index, Bm25Params, Hit};
use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub fn build(corpus: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let s = build_from_jsonl(corpus, out, Bm25Params::default(), |_| {})?;
    emit(&json!({
        "engine": "ours", "phase": "build",
        "seconds": started.elapsed().as_secs_f64(),
        "peak_rss_mib": peak_rss_mib(),
        "docs": s.docs, "terms": s.terms, "postings": s.postings,
        "index_mib": s.index_bytes as f64 / (1 << 20) as f64,
    }));
    Ok(())
}

/// Times each of `algorithms` (the default always among them) in the same way, one
/// after another on the same opened index: a warm-up pass, `passes` timed passes on
/// one thread, then throughput on `threads`. Before the timing, each path's hits for
/// every query are compared with exhaustive scoring's, and the default's are checked
/// against the independent reference.
pub fn query(
    index: &Path,
    corpus: &Path,
    queries: &[String],
    passes: usize,
    threads: usize,
    algorithms: &[Algorithm],
) -> anyhow::Result<()> {
    let started = Instant::now();
    let idx = Arc::new(Bm25Index::open(index)?);
    let open_ms = started.elapsed().as_secs_f64() * 1e3;
    let default = Algorithm::default();
    let mut timed: Vec<Algorithm> = vec![default];
    timed.extend(algorithms.iter().filter(|&&a| a != default));
    let terms: Vec<Vec<String>> = queries
        .iter()
        .map(|q| idx.analyzer().query_terms(q))
        .collect();
    let hits_of = |algorithm: Algorithm| -> anyhow::Result<Vec<Vec<Hit>>> {
        terms
            .iter()
            .map(|t| Ok(idx.search_terms_with(t, 10, algorithm)?))
            .collect()
    };
    let exhaustive = hits_of(Algorithm::Exhaustive)?;
    let mut differs = json!({});
    let mut differing_total = 0;
    for &algorithm in &timed {
        let got = hits_of(algorithm)?;
        let differing = got.iter().zip(&exhaustive).filter(|(a, b)| a != b).count();
        differing_total += differing;
        differs[algorithm.name()] = json!(differing);
    }
    let time = |algorithm: Algorithm| {
        query_figures(queries, passes, threads, |q| {
            let terms = idx.analyzer().query_terms(q);
            idx.search_terms_with(&terms, 10, algorithm)
                .expect("search");
        })
    };
    let mut figures = time(default);
    let mut alternatives = json!({});
    for &algorithm in &timed[1..] {
        alternatives[algorithm.name()] = time(algorithm);
    }
    let mut check = reference_check(&idx, corpus, queries, &hits_of(default)?)?;
    check["differs_from_exhaustive"] = json!(differing_total);
    check["differs_by_path"] = differs;
    figures["alternatives"] = alternatives;
    figures["algorithm"] = json!(default.name());
    figures["engine"] = json!("ours");
    figures["phase"] = json!("query");
    figures["open_ms"] = json!(open_ms);
    figures["reference"] = check;
    emit(&figures);
    Ok(())
}

#[derive(Default)]
struct DocCounts {
    dl: u32,
    tf: HashMap<String, u32>,
}

fn reference_check(
    idx: &Bm25Index,
    corpus: &Path,
    queries: &[String],
    hits: &[Vec<Hit>],
) -> anyhow::Result<Value> {
    let analyzer = Analyzer::new();
    let query_terms: Vec<Vec<String>> = queries.iter().map(|q| analyzer.query_terms(q)).collect();
    let wanted_terms: HashSet<&str> = query_terms.iter().flatten().map(String::as_str).collect();
    let wanted_docs: HashSet<u32> = hits.iter().flatten().map(|h| h.doc).collect();

    let mut df: HashMap<String, u64> = HashMap::new();
    let mut docs: HashMap<u32, DocCounts> = HashMap::new();
    let mut ids: HashMap<u32, String> = HashMap::new();
    let (mut n, mut total) = (0u64, 0u64);
    let file = std::fs::File::open(corpus).with_context(|| format!("open {}", corpus.display()))?;
    for line in std::io::BufReader::with_capacity(1 << 20, file).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)?;
        let mut tokens = analyzer.analyze(v["title"].as_str().unwrap_or_default());
        for s in v["sentences"].as_array().into_iter().flatten() {
            tokens.extend(analyzer.analyze(s.as_str().unwrap_or_default()));
        }
        let doc = n as u32;
        n += 1;
        total += tokens.len() as u64;
        let unique: HashSet<&String> = tokens
            .iter()
            .filter(|t| wanted_terms.contains(t.as_str()))
            .collect();
        for t in &unique {
            *df.entry((*t).clone()).or_default() += 1;
        }
        if wanted_docs.contains(&doc) {
            let mut c = DocCounts {
                dl: tokens.len() as u32,
                ..DocCounts::default()
            };
            for t in tokens.iter().filter(|t| wanted_terms.contains(t.as_str())) {
                *c.tf.entry(t.clone()).or_default() += 1;
            }
            docs.insert(doc, c);
            ids.insert(doc, v["id"].as_str().unwrap_or_default().to_string());
        }
    }
    let avgdl = total as f64 / n as f64;
    let (k1, b) = (0.9f64, 0.4f64);
    let (mut checked, mut bad, mut order_bad, mut max_rel) = (0u64, 0u64, 0u64, 0f64);
    for (terms, list) in query_terms.iter().zip(hits) {
        for h in list {
            let c = &docs[&h.doc];
            let reference: f64 = terms
                .iter()
                .filter_map(|t| {
                    let tf = f64::from(*c.tf.get(t)?);
                    let d = df[t] as f64;
                    let idf = (1.0 + (n as f64 - d + 0.5) / (d + 0.5)).ln();
                    Some(idf * tf / (tf + k1 * (1.0 - b + b * f64::from(c.dl) / avgdl)))
                })
                .sum();
            let rel = (f64::from(h.score) - reference).abs() / reference.abs().max(1e-12);
            max_rel = max_rel.max(rel);
            checked += 1;
            if rel > 1e-4 {
                bad += 1;
            }
        }
        // Order: decreasing score, equal scores by ascending id (numeric ids here).
        for w in list.windows(2) {
            let id = |h: &Hit| ids[&h.doc].parse::<u64>().unwrap_or(u64::MAX);
            if w[0].score < w[1].score || (w[0].score == w[1].score && id(&w[0]) > id(&w[1])) {
                order_bad += 1;
            }
        }
    }
    Ok(json!({
        "hits_checked": checked, "over_1e-4": bad, "max_rel_err": max_rel,
        "misordered_pairs": order_bad, "docs": n, "index_docs": idx.num_docs(),
    }))
}
