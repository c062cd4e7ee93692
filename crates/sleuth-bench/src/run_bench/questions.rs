//! The benchmark's question files: real MuSiQue questions (with their paragraph
//! pools) repeated under new ids until a file holds the size asked for, so every
//! episode does real work (pool search over real paragraphs) and every id is new.

use anyhow::{bail, Context};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The MuSiQue file with paragraphs under `data`, or else the repository's fixture
/// (four questions), so the benchmark runs on a checkout without the shared data.
pub fn source(data: &Path, repo: &Path) -> PathBuf {
    let shared = data.join("musique/musique_ans_dev_subset200_with_paragraphs.jsonl");
    if shared.is_file() {
        shared
    } else {
        repo.join("fixtures/benchmarks/musique/dev_sample.jsonl")
    }
}

/// The source questions, each as one JSON object.
fn read(path: &Path) -> anyhow::Result<Vec<Value>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(&line).with_context(|| format!("{}:{}", path.display(), i + 1))?;
        out.push(v);
    }
    if out.is_empty() {
        bail!("{}: no questions", path.display());
    }
    Ok(out)
}

/// Writes `size` questions to `out`: the source's questions in order, over and over,
/// the k-th repetition's ids suffixed `-rK` (the hop prefix MuSiQue ids carry, which
/// the loader reads the hop count from, is kept). Written once per size.
pub fn write(source: &Path, size: usize, out: &Path) -> anyhow::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let base = read(source)?;
    let tmp = out.with_extension("tmp");
    let mut w = BufWriter::new(File::create(&tmp)?);
    for i in 0..size {
        let mut q = base[i % base.len()].clone();
        let id = q["id"].as_str().context("a question without an id")?;
        q["id"] = Value::String(format!("{id}-r{}", i / base.len()));
        serde_json::to_writer(&mut w, &q)?;
        w.write_all(b"\n")?;
    }
    w.into_inner()?.sync_all()?;
    std::fs::rename(&tmp, out)?;
    Ok(())
}
