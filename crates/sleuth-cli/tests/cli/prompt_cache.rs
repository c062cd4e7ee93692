//! Prompt caching (issue "Beyond the papers"), through the binary: the same scripted
//! 20-turn `sleuth` episode on MuSiQue 4-hop pools, answered by the local server with
//! the providers' prompt-cache accounting emulated at their published thresholds
//! (1,024-token minimum; OpenAI in 128-token steps), priced by the built-in table
//! (Claude Sonnet 4: reads 0.1x, writes 1.25x input; gpt-4o-mini: reads 0.5x).

use crate::util::{musique, ok, records_under, replay_answer, Eval};
use serde_json::Value;
use sleuth_testkit::{MockServer, PromptCache};
use std::path::Path;

/// Answers each request with the replay's reply for its turn, so every question hears
/// the same 20 replies.
fn replay_server(cache: bool) -> MockServer {
    if cache {
        MockServer::spawn_with_cache(PromptCache::providers(), replay_answer)
    } else {
        MockServer::spawn(replay_answer)
    }
}

/// The two ways to talk to the server.
#[derive(Clone, Copy)]
enum Api {
    /// `anthropic:claude-sonnet-4-5`, breakpoints on or `?prompt_cache=off`.
    Anthropic { breakpoints: bool },
    /// `openai-compat:URL#gpt-4o-mini`.
    OpenAi,
}

/// One run of `sleuth` on the first `n` 4-hop questions at T = 20, one question at a
/// time (so the cache figures do not depend on scheduling); its records.
fn run(server: &MockServer, api: Api, out: &Path, n: usize) -> Vec<Value> {
    let model = match api {
        Api::Anthropic { breakpoints: true } => "anthropic:claude-sonnet-4-5".to_string(),
        Api::Anthropic { breakpoints: false } => {
            "anthropic:claude-sonnet-4-5?prompt_cache=off".to_string()
        }
        Api::OpenAi => format!("openai-compat:{}#gpt-4o-mini", server.url()),
    };
    Eval::new("musique", musique(), "sleuth", &model, out)
        .opt("--hops", 4)
        .opt("--limit", n)
        .opt("--concurrency", 1)
        .set("turns=20")
        .env("ANTHROPIC_BASE_URL", server.origin())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .ok();
    let records = records_under(out);
    assert_eq!(records.len(), n);
    for r in &records {
        assert!(r["error"].is_null(), "{}", r["error"]);
        assert_eq!(r["calls"], 20, "the full budget ran");
    }
    records
}

fn field(r: &Value, name: &str) -> u64 {
    r[name].as_u64().unwrap()
}

/// Totals over records: input, cached reads, cache writes, output tokens, dollars.
struct Totals {
    input: u64,
    read: u64,
    write: u64,
    output: u64,
    usd: f64,
    n: usize,
}

impl Totals {
    fn of(records: &[Value]) -> Totals {
        let sum = |name: &str| records.iter().map(|r| field(r, name)).sum::<u64>();
        Totals {
            input: sum("input_tokens"),
            read: sum("cached_input_tokens"),
            write: sum("cache_write_tokens"),
            output: sum("output_tokens"),
            usd: records
                .iter()
                .map(|r| r["cost_usd"].as_f64().unwrap())
                .sum(),
            n: records.len(),
        }
    }
    fn cached_share(&self) -> f64 {
        self.read as f64 / self.input as f64
    }
    fn usd_per_question(&self) -> f64 {
        self.usd / self.n as f64
    }
}

/// Each record's `cost_usd` is its tokens at their own rates (USD per million: fresh
/// input, cached read, cache write, output).
fn assert_priced(records: &[Value], rates: [f64; 4]) {
    for r in records {
        let (input, read, write) = (
            field(r, "input_tokens"),
            field(r, "cached_input_tokens"),
            field(r, "cache_write_tokens"),
        );
        let want = ((input - read - write) as f64 * rates[0]
            + read as f64 * rates[1]
            + write as f64 * rates[2]
            + field(r, "output_tokens") as f64 * rates[3])
            / 1e6;
        let got = r["cost_usd"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-8, "cost_usd {got} vs {want}");
    }
}

/// Claude Sonnet 4 (built in): 3.00 in, 0.30 cached, 3.75 cache write, 15.00 out.
const SONNET: [f64; 4] = [3.00, 0.30, 3.75, 15.00];
/// gpt-4o-mini (built in): 0.15 in, 0.075 cached, 0.60 out.
const MINI: [f64; 4] = [0.15, 0.075, 0.15, 0.60];

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn anthropic_breakpoints_read_most_of_the_prompt_and_cost_less() {
    let dir = tempfile::tempdir().unwrap();
    let (on_dir, off_dir) = (dir.path().join("on"), dir.path().join("off"));
    let on = run(
        &replay_server(true),
        Api::Anthropic { breakpoints: true },
        &on_dir,
        3,
    );
    let off = run(
        &replay_server(true),
        Api::Anthropic { breakpoints: false },
        &off_dir,
        3,
    );
    let (t_on, t_off) = (Totals::of(&on), Totals::of(&off));
    assert_eq!(t_on.input, t_off.input, "the same prompts either way");
    assert_eq!(
        (t_off.read, t_off.write),
        (0, 0),
        "no breakpoints, no cache"
    );
    assert!(
        t_on.cached_share() >= 0.8,
        "cached share {:.3}",
        t_on.cached_share()
    );
    assert!(t_on.write > 0 && t_on.read + t_on.write <= t_on.input);
    assert_priced(&on, SONNET);
    assert_priced(&off, SONNET);
    assert!(
        t_on.usd < 0.5 * t_off.usd,
        "${:.4} with breakpoints vs ${:.4} without",
        t_on.usd,
        t_off.usd
    );

    // The report shows the cached share and the dollars per question per method, in
    // its tables and in the tidy CSV.
    let report = dir.path().join("report");
    let shown = ok(&[
        "report",
        on_dir.to_str().unwrap(),
        off_dir.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(
        shown.contains("cached %") && shown.contains("cost/q"),
        "{shown}"
    );
    let csv = std::fs::read_to_string(report.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for row in rows {
        let model = &row[col("model")];
        let share: f64 = row[col("cached_pct")].parse().unwrap();
        let cost: f64 = row[col("cost_per_q")].parse().unwrap();
        let t = if model.ends_with("?prompt_cache=off") {
            &t_off
        } else {
            &t_on
        };
        assert!((share - 100.0 * t.cached_share()).abs() < 1e-6, "{csv}");
        assert!((cost - t.usd_per_question()).abs() < 1e-9, "{csv}");
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs ../shared/data")]
fn openai_prefix_caching_is_counted_and_priced_below_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let records = run(
        &replay_server(true),
        Api::OpenAi,
        &dir.path().join("run"),
        3,
    );
    let t = Totals::of(&records);
    assert!(records.iter().all(|r| field(r, "cached_input_tokens") > 0));
    assert_eq!(t.write, 0, "OpenAI reports no cache writes");
    assert!(
        t.cached_share() >= 0.7,
        "cached share {:.3}",
        t.cached_share()
    );
    assert_priced(&records, MINI);
    let fresh = (t.input as f64 * MINI[0] + t.output as f64 * MINI[3]) / 1e6;
    assert!(t.usd < fresh, "${:.6} vs ${fresh:.6} fresh", t.usd);
}

/// The figures: `cargo test -p sleuth-cli --no-default-features --test cli --
/// prompt_cache::prompt_cache_figures --ignored --nocapture`.
#[test]
#[ignore]
fn prompt_cache_figures() {
    let dir = tempfile::tempdir().unwrap();
    let n = 23; // every 4-hop question of the subset
    println!("MuSiQue 4-hop, {n} questions, sleuth at T = 20, the same 20 replies replayed");
    let show = |name: &str, with: &Totals, without: &Totals| {
        println!(
            "{name}: ${:.4}/q with caching ({:.1}% of input read from cache, {:.0} written/q) vs ${:.4}/q without: {:.2}x",
            with.usd_per_question(),
            100.0 * with.cached_share(),
            with.write as f64 / with.n as f64,
            without.usd_per_question(),
            with.usd / without.usd
        );
    };
    let on = Totals::of(&run(
        &replay_server(true),
        Api::Anthropic { breakpoints: true },
        &dir.path().join("a-on"),
        n,
    ));
    let off = Totals::of(&run(
        &replay_server(true),
        Api::Anthropic { breakpoints: false },
        &dir.path().join("a-off"),
        n,
    ));
    println!(
        "input tokens per question: {:.0}",
        on.input as f64 / n as f64
    );
    show(
        "anthropic:claude-sonnet-4-5 (breakpoints vs prompt_cache=off)",
        &on,
        &off,
    );
    let on = Totals::of(&run(
        &replay_server(true),
        Api::OpenAi,
        &dir.path().join("o-on"),
        n,
    ));
    let off = Totals::of(&run(
        &replay_server(false),
        Api::OpenAi,
        &dir.path().join("o-off"),
        n,
    ));
    show(
        "openai-compat gpt-4o-mini (prefix caching vs none)",
        &on,
        &off,
    );
}
