//! The synthetic benchmark corpus and the real queries.
//!
//! Paragraphs are generated from the real benchmark paragraphs in `shared/data`
//! (HotpotQA `context`, MuSiQue `paragraphs[].paragraph_text`, 2Wiki `context`): each
//! synthetic paragraph copies the sentence-length shape of a randomly drawn real
//! paragraph and fills it with words drawn from the real text's unigram distribution
//! (whitespace tokens, so casing and attached punctuation are as in real text); titles
//! are drawn the same way from the real titles. A seeded ChaCha generator makes the
//! corpus identical on every run. Queries are the real HotpotQA questions.

use anyhow::{bail, Context};
use rand::distributions::{Distribution, WeightedIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

/// Real paragraphs as (title, sentences).
type Real = Vec<(String, Vec<String>)>;

fn read_jsonl(path: &Path, mut f: impl FnMut(Value)) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(&line).with_context(|| format!("{}:{}", path.display(), i + 1))?;
        f(v);
    }
    Ok(())
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Every distinct real paragraph of the benchmark files under `data`.
pub fn real_paragraphs(data: &Path) -> anyhow::Result<Real> {
    let mut seen = HashSet::new();
    let mut out = Real::new();
    let mut push = |title: String, sentences: Vec<String>| {
        if !sentences.is_empty() && seen.insert((title.clone(), sentences.concat())) {
            out.push((title, sentences));
        }
    };
    let context = |v: &Value, push: &mut dyn FnMut(String, Vec<String>)| {
        for pair in v["context"].as_array().into_iter().flatten() {
            let title = pair[0].as_str().unwrap_or_default().to_string();
            push(title, strings(&pair[1]));
        }
    };
    for file in [
        "hotpotqa/hotpot_dev_distractor_subset.jsonl",
        "hotpotqa/hotpot_dev_fullwiki_sample500.jsonl",
        "2wikimultihopqa/2wiki_dev_subset_with_context.jsonl",
    ] {
        read_jsonl(&data.join(file), |v| context(&v, &mut push))?;
    }
    read_jsonl(
        &data.join("musique/musique_ans_dev_subset200_with_paragraphs.jsonl"),
        |v| {
            for p in v["paragraphs"].as_array().into_iter().flatten() {
                let title = p["title"].as_str().unwrap_or_default().to_string();
                let text = p["paragraph_text"].as_str().unwrap_or_default().to_string();
                push(title, vec![text]);
            }
        },
    )?;
    if out.is_empty() {
        bail!("no paragraphs found under {}", data.display());
    }
    Ok(out)
}

/// The 396 HotpotQA distractor questions.
pub fn queries(data: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    read_jsonl(
        &data.join("hotpotqa/hotpot_dev_distractor_subset.jsonl"),
        |v| {
            out.extend(v["question"].as_str().map(str::to_string));
        },
    )?;
    Ok(out)
}

struct Unigram {
    words: Vec<String>,
    dist: WeightedIndex<u64>,
}

impl Unigram {
    fn new<'a>(tokens: impl Iterator<Item = &'a str>) -> Self {
        let mut counts: HashMap<&str, u64> = HashMap::new();
        for t in tokens {
            *counts.entry(t).or_default() += 1;
        }
        let mut pairs: Vec<(&str, u64)> = counts.into_iter().collect();
        pairs.sort_unstable(); // deterministic order whatever the hash seed
        Unigram {
            words: pairs.iter().map(|(w, _)| w.to_string()).collect(),
            dist: WeightedIndex::new(pairs.iter().map(|(_, c)| *c)).expect("non-empty"),
        }
    }

    fn fill(&self, rng: &mut ChaCha8Rng, n: usize, out: &mut String) {
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&self.words[self.dist.sample(rng)]);
        }
    }
}

/// Writes `docs` synthetic paragraphs as `{"id","title","sentences"}` lines.
pub fn generate(data: &Path, docs: usize, seed: u64, out: &Path) -> anyhow::Result<GenStats> {
    let real = real_paragraphs(data)?;
    let body = Unigram::new(
        real.iter()
            .flat_map(|(_, s)| s.iter())
            .flat_map(|s| s.split_whitespace()),
    );
    let titles = Unigram::new(real.iter().flat_map(|(t, _)| t.split_whitespace()));
    let shapes: Vec<(usize, Vec<usize>)> = real
        .iter()
        .map(|(t, s)| {
            let title_len = t.split_whitespace().count().max(1);
            (
                title_len,
                s.iter()
                    .map(|x| x.split_whitespace().count().max(1))
                    .collect(),
            )
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let file = File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let (mut words, mut bytes) = (0u64, 0u64);
    let mut title = String::new();
    let mut sentences: Vec<String> = Vec::new();
    for id in 0..docs {
        let (title_len, shape) = &shapes[rng.gen_range(0..shapes.len())];
        title.clear();
        titles.fill(&mut rng, *title_len, &mut title);
        sentences.clear();
        for &n in shape {
            let mut s = String::new();
            body.fill(&mut rng, n, &mut s);
            words += n as u64;
            sentences.push(s);
        }
        let line =
            serde_json::json!({"id": id.to_string(), "title": title, "sentences": sentences});
        let text = serde_json::to_string(&line)?;
        bytes += text.len() as u64 + 1;
        writeln!(w, "{text}")?;
    }
    w.flush()?;
    Ok(GenStats {
        real_paragraphs: real.len(),
        vocabulary: body.words.len(),
        words,
        bytes,
    })
}

pub struct GenStats {
    pub real_paragraphs: usize,
    pub vocabulary: usize,
    pub words: u64,
    pub bytes: u64,
}
