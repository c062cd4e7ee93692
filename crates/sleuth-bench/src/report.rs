//! The `run` orchestrator: runs each phase in its own process, collects their
//! `RESULT {json}` lines, and prints the figures side by side with ratios, plus the
//! build extrapolated linearly to HotpotQA's 5,233,329 paragraphs when the run is
//! smaller, the targets met or not, and the exactness check (failing the run).

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
    /// Query the tantivy index already in the work directory instead of rebuilding it
    /// (its build took 435 s at 5.23M); its build figures are then the ones saved when
    /// it was built (`tantivy-build.json`), shown as from an earlier run.
    pub reuse_tantivy: bool,
}

/// Where a tantivy build's figures are kept beside its index, for a run that reuses it.
const TANTIVY_BUILD_FILE: &str = "tantivy-build.json";

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
    // "v2": the generator with the vocabulary tail; an older cached corpus is not reused.
    let corpus = c
        .work
        .join(format!("corpus-{}-{}-v2.jsonl", c.docs, c.seed));
    let gen_stats = corpus.with_extension("gen.json");
    let queries = c.work.join("queries.txt");
    let bench = |args: &[&str]| {
        let mut cmd = Command::new(&me);
        cmd.args(args);
        cmd
    };
    let p = |x: &PathBuf| x.to_string_lossy().into_owned();
    let (passes, threads) = (c.passes.to_string(), c.threads.to_string());
    if !corpus.exists() || !queries.exists() || !gen_stats.exists() {
        let tmp = c.work.join("corpus.partial");
        let v = phase(&mut bench(&[
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
        std::fs::write(&gen_stats, v.to_string())?;
        std::fs::rename(&tmp, &corpus)?;
    }
    let gen: Value = serde_json::from_str(&std::fs::read_to_string(&gen_stats)?)?;
    let ours_dir = c.work.join("ours-index");
    let tantivy_dir = c.work.join("tantivy-index");
    let tantivy_saved = c.work.join(TANTIVY_BUILD_FILE);
    if !c.reuse_tantivy {
        let _ = std::fs::remove_dir_all(&tantivy_dir);
    }
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
    let tantivy_build = if c.reuse_tantivy {
        let saved = std::fs::read_to_string(&tantivy_saved).with_context(|| {
            format!(
                "--reuse-tantivy needs {} (written when a run builds the tantivy index)",
                tantivy_saved.display()
            )
        })?;
        let mut v: Value = serde_json::from_str(&saved)?;
        v["reused"] = Value::Bool(true);
        v
    } else {
        let v = phase(&mut bench(&[
            "tantivy-build",
            &p(&corpus),
            &p(&tantivy_dir),
            "--threads",
            &threads,
        ]))?;
        std::fs::write(&tantivy_saved, v.to_string())?;
        v
    };
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

    let bm25s_query = bm25s.as_ref().map(|(_, q)| q);
    let bm25s_build = bm25s.as_ref().map(|(b, _)| b);
    println!(
        "\nBM25 benchmark: {} synthetic paragraphs (seed {}), {} HotpotQA questions, top-10",
        c.docs, c.seed, ours_query["queries"]
    );
    print_vocabulary(&gen, &ours_build);
    print_queries(&ours_query, &tantivy_query, bm25s_query);
    print_builds(c.docs, &ours_build, &tantivy_build, bm25s_build);
    print_targets(
        c.docs,
        &ours_build,
        &ours_query,
        &tantivy_build,
        &tantivy_query,
    );
    check_exactness(&ours_query)
}

fn print_vocabulary(gen: &Value, ours_build: &Value) {
    println!(
        "vocabulary: Heaps' law fitted on the real paragraphs' {} analyzed tokens: V = {:.2} n^{:.3} ({} terms, {} seen once);",
        gen["real_analyzed_tokens"], f(gen, "heaps_k"), f(gen, "heaps_beta"), gen["real_terms"], gen["real_hapax"]
    );
    println!(
        "  tail: {:.4} of words drawn new (Good-Turing), Zipf s = {:.3}, {} drawn; K n^beta at this size = {:.0} terms, expected {:.0}; the index has {} terms",
        f(gen, "tail_mass"), f(gen, "zipf_s"), gen["tail_draws"], f(gen, "target_terms"),
        f(gen, "expected_tail_terms") + f(gen, "real_terms"), ours_build["terms"]
    );
}

fn print_queries(ours: &Value, tantivy: &Value, bm25s: Option<&Value>) {
    println!(
        "\n{:<18} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "engine", "p50 ms", "p99 ms", "mean ms", "qps", "threads", "load"
    );
    let mut rows = vec![("ours".to_string(), ours.clone())];
    for (name, alt) in ours["alternatives"].as_object().into_iter().flatten() {
        let mut alt = alt.clone();
        alt["loadavg"] = ours["loadavg"].clone();
        rows.push((format!("ours-{name}"), alt));
    }
    rows.push(("tantivy".into(), tantivy.clone()));
    if let Some(q) = bm25s {
        rows.push(("bm25s".into(), q.clone()));
    }
    for (name, q) in &rows {
        println!(
            "{:<18} {:>10.3} {:>10.3} {:>10.3} {:>10.1} {:>8} {:>8.2}",
            name,
            f(q, "p50_ms"),
            f(q, "p99_ms"),
            f(q, "mean_ms"),
            f(q, "qps"),
            q["threads"].to_string(),
            f(q, "loadavg")
        );
    }
    let ratio = |name: &str, q: &Value| {
        println!(
            "ours vs {name}: p50 {:.2}x, p99 {:.2}x faster; qps {:.2}x",
            f(q, "p50_ms") / f(ours, "p50_ms"),
            f(q, "p99_ms") / f(ours, "p99_ms"),
            f(ours, "qps") / f(q, "qps")
        );
    };
    ratio("tantivy", tantivy);
    if let Some(q) = bm25s {
        ratio("bm25s", q);
    }
    println!(
        "(ratios > 1 mean ours is faster; < 1 mean the baseline is faster; ours = {}, the",
        ours["algorithm"].as_str().unwrap_or("?")
    );
    println!(" ours-* rows = the same index with the other search paths, shown for comparison;");
    println!(" load = 1-minute load average when the phase ended, on a shared 2-core machine)");
}

fn print_builds(docs: usize, ours: &Value, tantivy: &Value, bm25s: Option<&Value>) {
    println!(
        "\nbuild      {:>10} {:>12} {:>12} {:>8}",
        "seconds", "peak MiB", "index MiB", "load"
    );
    let tantivy_name = if tantivy["reused"] == true {
        "tantivy*"
    } else {
        "tantivy"
    };
    let mut builds = vec![("ours", ours), (tantivy_name, tantivy)];
    if let Some(b) = bm25s {
        builds.push(("bm25s", b));
    }
    for (name, b) in &builds {
        println!(
            "{:<10} {:>10.1} {:>12.0} {:>12.0} {:>8.2}",
            name,
            f(b, "seconds"),
            f(b, "peak_rss_mib"),
            f(b, "index_mib"),
            f(b, "loadavg")
        );
    }
    println!(
        "ours vs tantivy: build {:.2}x faster, {:.2}x less peak memory, {:.2}x less disk",
        f(tantivy, "seconds") / f(ours, "seconds"),
        f(tantivy, "peak_rss_mib") / f(ours, "peak_rss_mib"),
        f(tantivy, "index_mib") / f(ours, "index_mib")
    );
    println!("(index MiB: ours holds the stored paragraphs too, tantivy only the ids)");
    if tantivy["reused"] == true {
        println!("(* tantivy's index was reused, not rebuilt: its build figures are from the run that built it)");
    }
    // Below 99% of the full size: at (about) the full size the figures are measured.
    if (docs as f64) < 0.99 * FULL_CORPUS {
        let scale = FULL_CORPUS / docs as f64;
        println!(
            "ours extrapolated to 5,233,329 paragraphs (linear): {:.1} min, {:.0} MiB peak (index {:.0} MiB)",
            f(ours, "seconds") * scale / 60.0,
            f(ours, "peak_rss_mib") * scale,
            f(ours, "index_mib") * scale
        );
    }
}

/// The targets (at HotpotQA's size), each met or not, with tantivy's figure.
fn print_targets(docs: usize, ours_build: &Value, ours: &Value, tb: &Value, tq: &Value) {
    let when = if tb["reused"] == true {
        "tantivy's query in the same run, its build from the run that built its index"
    } else {
        "tantivy in the same run"
    };
    println!("\ntargets ({docs} paragraphs; {when}):");
    let rows = [
        (
            "build seconds",
            f(ours_build, "seconds"),
            180.0,
            f(tb, "seconds"),
        ),
        (
            "build peak MiB",
            f(ours_build, "peak_rss_mib"),
            3e9 / f64::from(1 << 20),
            f(tb, "peak_rss_mib"),
        ),
        ("query p50 ms", f(ours, "p50_ms"), 2.0, f(tq, "p50_ms")),
        ("query p99 ms", f(ours, "p99_ms"), 15.0, f(tq, "p99_ms")),
    ];
    for (name, got, target, tantivy) in rows {
        println!(
            "  {name:<15} {got:>10.3} (target <= {target:.3}: {}), tantivy {tantivy:.3}, ours/tantivy {:.3}",
            if got <= target { "met" } else { "NOT MET" },
            got / tantivy
        );
    }
}

/// Prints the reference check and fails the run, loudly, if any hit is not exact.
fn check_exactness(ours: &Value) -> anyhow::Result<()> {
    let r = &ours["reference"];
    println!(
        "\nreference check: {} hits of {} queries, {} over 1e-4 relative error (max {:.2e}), {} misordered pairs, {} queries where a search path differs from exhaustive ({})",
        r["hits_checked"], ours["queries"], r["over_1e-4"], f(r, "max_rel_err"), r["misordered_pairs"],
        r["differs_from_exhaustive"], r["differs_by_path"]
    );
    let count = |key: &str| r[key].as_u64().unwrap_or(u64::MAX);
    let failures =
        count("over_1e-4") + count("misordered_pairs") + count("differs_from_exhaustive");
    if failures > 0 || r["docs"] != r["index_docs"] {
        println!("EXACTNESS FAILURE: the results above are not exact; do not trust the timings");
        bail!("exactness check failed ({failures} problems)");
    }
    println!("exact: every query's top-10 equals exhaustive scoring and the independent reference");
    Ok(())
}
