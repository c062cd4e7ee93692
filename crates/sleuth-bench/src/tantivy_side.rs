//! tantivy as a speed baseline: one text field holding title and text, analyzed like
//! ours (lowercase, English stop words, English Snowball stemmer), scored with
//! tantivy's fixed BM25 (k1 = 1.2, b = 0.75). Queries are the analyzed query terms as
//! an OR of term queries, so both engines do the same logical work.

use crate::measure::{dir_mib, emit, peak_rss_mib, query_figures};
use anyhow::Context;
use serde_json::{json, Value};
use std::io::BufRead;
use std::path::Path;
use std::time::Instant;
use tantivy::collector::TopDocs;
use tantivy::query::BooleanQuery;
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING};
use tantivy::tokenizer::{
    Language, LowerCaser, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{doc, Index, IndexWriter, Term};

const ANALYZER: &str = "en_bm25";

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("english stop words"))
        .filter(Stemmer::new(Language::English))
        .build()
}

pub fn build(corpus: &Path, out: &Path, threads: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut schema = Schema::builder();
    let body_opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let body = schema.add_text_field("body", body_opts);
    let id = schema.add_text_field("id", STRING | STORED);
    std::fs::create_dir_all(out)?;
    let index = Index::create_in_dir(out, schema.build()).context("create tantivy index")?;
    index.tokenizers().register(ANALYZER, analyzer());
    let mut writer: IndexWriter = index.writer_with_num_threads(threads, 1_000_000_000)?;
    let file = std::fs::File::open(corpus)?;
    let mut docs = 0u64;
    for line in std::io::BufReader::with_capacity(1 << 20, file).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)?;
        let mut text = v["title"].as_str().unwrap_or_default().to_string();
        for s in v["sentences"].as_array().into_iter().flatten() {
            text.push(' ');
            text.push_str(s.as_str().unwrap_or_default());
        }
        writer.add_document(doc!(body => text, id => v["id"].as_str().unwrap_or_default()))?;
        docs += 1;
    }
    writer.commit()?;
    // One segment, as a read-mostly index would be after optimization: tantivy's
    // fastest query path, so the comparison is against its best.
    let segments = index.searchable_segment_ids()?;
    if segments.len() > 1 {
        writer.merge(&segments).wait()?;
    }
    // The merged-away segments' files, so the size on disk is the index's.
    writer.garbage_collect_files().wait()?;
    writer.wait_merging_threads()?;
    emit(&json!({
        "engine": "tantivy", "phase": "build", "docs": docs,
        "seconds": started.elapsed().as_secs_f64(), "peak_rss_mib": peak_rss_mib(),
        "index_mib": dir_mib(out),
    }));
    Ok(())
}

pub fn query(dir: &Path, queries: &[String], passes: usize, threads: usize) -> anyhow::Result<()> {
    let index = Index::open_in_dir(dir)?;
    index.tokenizers().register(ANALYZER, analyzer());
    let body = index.schema().get_field("body")?;
    let reader = index.reader()?;
    let searcher = reader.searcher();
    let segments = searcher.segment_readers().len();
    let tokenizer = index.tokenizer_for_field(body)?;
    let search = |q: &str| {
        let mut tok = tokenizer.clone();
        let mut stream = tok.token_stream(q);
        let mut terms: Vec<Term> = Vec::new();
        while let Some(t) = stream.next() {
            let term = Term::from_field_text(body, &t.text);
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        if terms.is_empty() {
            return 0;
        }
        let query = BooleanQuery::new_multiterms_query(terms);
        searcher
            .search(&query, &TopDocs::with_limit(10).order_by_score())
            .expect("tantivy search")
            .len()
    };
    let mut figures = query_figures(queries, passes, threads, |q| {
        search(q);
    });
    figures["engine"] = json!("tantivy");
    figures["phase"] = json!("query");
    figures["segments"] = json!(segments);
    emit(&figures);
    Ok(())
}
