//! The `run` orchestrator: runs each phase in its own process, collects their
//! `RESULT {json}` lines, and prints the figures side by side with ratios, plus the
//! build extrapolated linearly to HotpotQA's 5,233,329 paragraphs.

use anyhow::{bail, Context};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const FULL_CORPUS: f64 = 5_233_329.0;

pub struct RunConfig {
    pub docs: usize,
    pub seed: u64,
    pub data: PathBuf,
    pub work: PathBuf,
    pub passes: usize,
    pub threads: usize,
    pub bm25s: bool,
}

fn phase(cmd: &mut Command) -> anyhow::Result<Value> {
    eprintln!("+ {cmd:?}");
    let out = cmd.output().with_context(|| format!("run {cmd:?}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "{cmd:?} failed:\n{}\n{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let line = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .next_back()
        .with_context(|| format!("{cmd:?} printed no RESULT line"))?;
    let v: Value = serde_json::from_str(line)?;
    eprintln!("  {v}");
    Ok(v)
}

fn phases(cmd: &mut Command) -> anyhow::Result<Vec<Value>> {
    eprintln!("+ {cmd:?}");
    let out = cmd.output().with_context(|| format!("run {cmd:?}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "{cmd:?} failed:\n{}\n{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .map(|l| Ok(serde_json::from_str(l)?))
        .collect()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

pub fn run(c: &RunConfig) -> anyhow::Result<()> {
    std::fs::create_dir_all(&c.work)?;
    let me = std::env::current_exe()?;
    let corpus = c.work.join(format!("corpus-{}-{}.jsonl", c.docs, c.seed));
    let queries = c.work.join("queries.txt");
    let bench = |args: &[&str]| {
        let mut cmd = Command::new(&me);
        cmd.args(args);
        cmd
    };
    let p = |x: &PathBuf| x.to_string_lossy().into_owned();
    let (passes, threads) = (c.passes.to_string(), c.threads.to_string());
    if !corpus.exists() || !queries.exists() {
        let tmp = c.work.join("corpus.partial");
        phase(&mut bench(&[
            "gen",
            "--data",
            &p(&c.data),
            "--docs",
            &c.docs.to_string(),
            "--seed",
            &c.seed.to_string(),
            "--corpus",
            &p(&tmp),
            "--queries",
            &p(&queries),
        ]))?;
        std::fs::rename(&tmp, &corpus)?;
    }
    let ours_dir = c.work.join("ours-index");
    let tantivy_dir = c.work.join("tantivy-index");
    let _ = std::fs::remove_dir_all(&tantivy_dir);
    let ours_build = phase(&mut bench(&["ours-build", &p(&corpus), &p(&ours_dir)]))?;
    let ours_query = phase(&mut bench(&[
        "ours-query",
        &p(&ours_dir),
        &p(&corpus),
        &p(&queries),
        "--passes",
        &passes,
        "--threads",
        &threads,
    ]))?;
    let tantivy_build = phase(&mut bench(&[
        "tantivy-build",
        &p(&corpus),
        &p(&tantivy_dir),
        "--threads",
        &threads,
    ]))?;
    let tantivy_query = phase(&mut bench(&[
        "tantivy-query",
        &p(&tantivy_dir),
        &p(&queries),
        "--passes",
        &passes,
        "--threads",
        &threads,
    ]))?;
    let bm25s = if c.bm25s {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/bm25s_bench.py");
        let mut cmd = Command::new("python3");
        cmd.arg(script).arg(&corpus).arg(&queries).args([
            "--passes",
            &passes,
            "--threads",
            &threads,
        ]);
        let v = phases(&mut cmd)?;
        let find = |ph: &str| v.iter().find(|x| x["phase"] == ph).cloned();
        find("build").zip(find("query"))
    } else {
        None
    };

    println!(
        "\nBM25 benchmark: {} synthetic paragraphs (seed {}), {} HotpotQA questions, top-10",
        c.docs, c.seed, ours_query["queries"]
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "engine", "p50 ms", "p99 ms", "mean ms", "qps", "threads", "load"
    );
    let mut exhaustive = ours_query["exhaustive"].clone();
    exhaustive["loadavg"] = ours_query["loadavg"].clone();
    let mut rows = vec![
        ("ours", &ours_query),
        ("ours-exh", &exhaustive),
        ("tantivy", &tantivy_query),
    ];
    if let Some((_, q)) = &bm25s {
        rows.push(("bm25s", q));
    }
    for (name, q) in &rows {
        println!(
            "{:<10} {:>10.3} {:>10.3} {:>10.3} {:>10.1} {:>8} {:>8.2}",
            name,
            f(q, "p50_ms"),
            f(q, "p99_ms"),
            f(q, "mean_ms"),
            f(q, "qps"),
            q["threads"],
            f(q, "loadavg")
        );
    }
    let ratio = |name: &str, q: &Value| {
        println!(
            "ours vs {name}: p50 {:.2}x, p99 {:.2}x faster; qps {:.2}x",
            f(q, "p50_ms") / f(&ours_query, "p50_ms"),
            f(q, "p99_ms") / f(&ours_query, "p99_ms"),
            f(&ours_query, "qps") / f(q, "qps")
        );
    };
    ratio("tantivy", &tantivy_query);
    if let Some((_, q)) = &bm25s {
        ratio("bm25s", q);
    }
    println!("(ratios > 1 mean ours is faster; < 1 mean the baseline is faster; ours = MaxScore,");
    println!(" ours-exh = the same index scoring every posting, shown for comparison;");
    println!(" load = 1-minute load average when the phase ended, on a shared 2-core machine)");

    println!(
        "\nbuild      {:>10} {:>12} {:>8}",
        "seconds", "peak MiB", "load"
    );
    let mut builds = vec![("ours", &ours_build), ("tantivy", &tantivy_build)];
    if let Some((b, _)) = &bm25s {
        builds.push(("bm25s", b));
    }
    for (name, b) in &builds {
        println!(
            "{:<10} {:>10.1} {:>12.0} {:>8.2}",
            name,
            f(b, "seconds"),
            f(b, "peak_rss_mib"),
            f(b, "loadavg")
        );
    }
    let scale = FULL_CORPUS / c.docs as f64;
    println!(
        "ours extrapolated to 5,233,329 paragraphs (linear): {:.1} min, {:.0} MiB peak (index {:.0} MiB)",
        f(&ours_build, "seconds") * scale / 60.0,
        f(&ours_build, "peak_rss_mib") * scale,
        f(&ours_build, "index_mib") * scale
    );
    let r = &ours_query["reference"];
    println!(
        "\nreference check: {} hits of {} queries, {} over 1e-4 relative error (max {:.2e}), {} misordered pairs, {} queries where MaxScore differs from exhaustive",
        r["hits_checked"], ours_query["queries"], r["over_1e-4"], f(r, "max_rel_err"), r["misordered_pairs"],
        r["maxscore_differs_from_exhaustive"]
    );
    Ok(())
}
