//! The synthetic benchmark corpus and the real queries.
//!
//! Paragraphs are generated from the real benchmark paragraphs in `shared/data`
//! (HotpotQA `context`, MuSiQue `paragraphs[].paragraph_text`, 2Wiki `context`): each
//! synthetic paragraph copies the sentence-length shape of a randomly drawn real
//! paragraph and fills it with words drawn from the real text's unigram distribution
//! (whitespace tokens, so casing and attached punctuation are as in real text); titles
//! are drawn the same way from the real titles. A seeded ChaCha generator makes the
//! corpus identical on every run of the same (docs, seed). Queries are the real
//! HotpotQA questions.
//!
//! Why a vocabulary tail: the real paragraphs hold only ~1.3M words and ~70k distinct
//! terms, so a corpus drawn from their unigram alone stops growing its vocabulary at
//! once, while Wikipedia's keeps growing (names, numbers, foreign words): at HotpotQA's
//! 5.23M abstracts the term dictionary, the number of short posting lists and the
//! builder's memory would all be understated. So the vocabulary grows as Heaps' law
//! says real text does, fitted on the real paragraphs themselves ([`Tail`]):
//!
//! - Heaps' law V(n) = K · n^β is fitted by least squares in log-log space to the
//!   number of distinct analyzed terms (sleuth's own analyzer) after the first n
//!   analyzed tokens of the real paragraphs, n = 1024, 2048, ... and the total.
//! - Each word drawn is, with probability m, a new rare word instead of a real one. m
//!   is the Good–Turing estimate of the probability that the next word is unseen: the
//!   real paragraphs' terms seen exactly once over their raw (whitespace) tokens.
//! - A tail word's rank follows a Zipf law of exponent s = 1/β (an unbounded Zipf law
//!   with exponent s yields Heaps' law with β = 1/s), sampled as
//!   floor(c · u^(-1/(s-1))) for u uniform in (0, 1]; the scale c is solved (bisection on
//!   the expected number of distinct ranks in the corpus's expected number of tail
//!   draws) so that the real distinct terms plus the expected distinct tail words equal
//!   K · n^β at the corpus's expected number of analyzed tokens.
//! - Rank r is written as a word of consonant-vowel syllables (consonants `bdgkmnprtvz`,
//!   vowels `aou`, at least three syllables), which the analyzer leaves as it is (no
//!   stop word, no suffix the stemmer strips), so distinct ranks are distinct terms; a
//!   rare coincidence with a real word (`banana`) only counts that draw as the real word.

use crate::tail::{push_tail_word, real_vocabulary, RealVocabulary, Tail};
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

    /// Appends `n` words, each a real one or (with the tail's probability) a new one.
    fn fill(&self, tail: &Tail, rng: &mut ChaCha8Rng, n: usize, out: &mut String) -> u64 {
        let mut drawn = 0;
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            match tail.draw(rng) {
                Some(rank) => {
                    push_tail_word(rank, out);
                    drawn += 1;
                }
                None => out.push_str(&self.words[self.dist.sample(rng)]),
            }
        }
        drawn
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
    let real_vocabulary = real_vocabulary(
        real.iter()
            .flat_map(|(t, s)| std::iter::once(t).chain(s))
            .map(String::as_str),
    );
    let mean_words = shapes
        .iter()
        .map(|(t, s)| (t + s.iter().sum::<usize>()) as f64)
        .sum::<f64>()
        / shapes.len() as f64;
    let tail = Tail::fit(&real_vocabulary, mean_words * docs as f64);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let file = File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let (mut words, mut bytes, mut tail_draws) = (0u64, 0u64, 0u64);
    let mut title = String::new();
    let mut sentences: Vec<String> = Vec::new();
    for id in 0..docs {
        let (title_len, shape) = &shapes[rng.gen_range(0..shapes.len())];
        title.clear();
        tail_draws += titles.fill(&tail, &mut rng, *title_len, &mut title);
        sentences.clear();
        for &n in shape {
            let mut s = String::new();
            tail_draws += body.fill(&tail, &mut rng, n, &mut s);
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
        real_vocabulary,
        tail,
        tail_draws,
    })
}

pub struct GenStats {
    pub real_paragraphs: usize,
    /// Distinct whitespace tokens of the real body text.
    pub vocabulary: usize,
    pub words: u64,
    pub bytes: u64,
    pub real_vocabulary: RealVocabulary,
    pub tail: Tail,
    /// Synthetic words written (title and body).
    pub tail_draws: u64,
}

impl GenStats {
    /// The figures the orchestrator prints about the vocabulary.
    pub fn json(&self, docs: usize) -> serde_json::Value {
        let (r, t) = (&self.real_vocabulary, &self.tail);
        serde_json::json!({
            "phase": "gen", "docs": docs, "real_paragraphs": self.real_paragraphs,
            "vocabulary": self.vocabulary, "words": self.words, "bytes": self.bytes,
            "heaps_k": r.k, "heaps_beta": r.beta, "real_terms": r.terms,
            "real_analyzed_tokens": r.analyzed_tokens, "real_raw_tokens": r.raw_tokens,
            "real_hapax": r.hapax, "tail_mass": t.mass, "zipf_s": t.s, "tail_scale": t.scale,
            "target_terms": t.target_terms, "expected_tail_terms": t.expected_tail_terms,
            "tail_draws": self.tail_draws,
        })
    }
}
