//! The library's messages speak the CLI's language (`--max-cost`, `--set k=v`); a
//! notebook user passes keywords. Each message is reworded once, on its way into a
//! Python exception, so the library keeps one wording and Python users read theirs.
//!
//! Only flags that are keywords of the package's functions are reworded; a suggested
//! shell command (a backquoted span starting with `sleuth `) is left as written.

use pyo3::prelude::*;
use regex::{Captures, Regex};
use std::sync::LazyLock;

/// CLI flags whose Python keyword differs from the flag with `-` read as `_`.
const RENAMED: &[(&str, &str)] = &[("data", "path")];

/// CLI flags that are keywords (after [`RENAMED`]) of `load`, `ask`, `eval`,
/// `experiment` or `report`.
const KEYWORDS: &[&str] = &[
    "attempts",
    "baseline",
    "batch",
    "bootstrap-p",
    "cache",
    "cohort",
    "concurrency",
    "corpus-reads",
    "data",
    "data-root",
    "dataset",
    "direction",
    "dry-run",
    "error-classes",
    "holm-family",
    "holm-size",
    "hops",
    "html",
    "index",
    "limit",
    "max-cost",
    "model",
    "out",
    "prices",
    "prompts",
    "reasoning-evidence",
    "resamples",
    "retry-errors",
    "rpm",
    "sample",
    "sample-offset",
    "seed",
    "shard",
    "tables",
    "timeout",
    "tpm",
];

/// Flags that take no value: in Python the keyword set to True.
const SWITCHES: &[&str] = &["batch", "dry-run", "html", "retry-errors"];

/// `message` with CLI flags as the Python keywords that set the same thing.
pub fn pythonic(message: &str) -> String {
    static COMMAND: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`sleuth [^`]*`").unwrap());
    let mut out = String::with_capacity(message.len());
    let mut last = 0;
    for command in COMMAND.find_iter(message) {
        out.push_str(&reword(&message[last..command.start()]));
        out.push_str(command.as_str());
        last = command.end();
    }
    out.push_str(&reword(&message[last..]));
    out
}

fn reword(text: &str) -> String {
    static SET: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`?--set`?(\s+)?").unwrap());
    static FLAG: LazyLock<Regex> = LazyLock::new(|| {
        // A flag, then optionally `=value` or ` PLACEHOLDER` (FILE, DIR, USD, RUN_DIR).
        Regex::new(r"--([a-z][a-z-]*)(=|\s[A-Z][A-Z_]*\b)?").unwrap()
    });
    // `--set key=value` is a keyword argument (or a `settings` entry) in Python.
    let text = SET.replace_all(text, |c: &Captures| match c.get(1) {
        Some(_) => "setting ",
        None => "a setting keyword",
    });
    // Flags whose value is a name, written after them in the message (`--dataset jsonl`,
    // or quoted: `--baseline 'sleuth [nudge=none]'`).
    static NAMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"--(dataset|model|shard|baseline|direction)\s('[^']*'|[A-Za-z0-9][^\s`,;()]*)")
            .unwrap()
    });
    let text = NAMED.replace_all(&text, "${1}=${2}");
    // The report's baseline checks name the value as their subject (`baseline `ircot`
    // has no records`): the keyword that was given it.
    static BASELINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\bbaseline `([^`']*)`").unwrap());
    let text = BASELINE.replace_all(&text, "baseline='${1}'");
    FLAG.replace_all(&text, |c: &Captures| {
        let flag = &c[1];
        let value = c
            .get(2)
            .map_or("", |m| m.as_str().trim_start_matches(['=', ' ']));
        if flag == "no-cache" {
            return "cache=False".to_string();
        }
        if !KEYWORDS.contains(&flag) {
            return c[0].to_string();
        }
        let name = RENAMED
            .iter()
            .find(|(cli, _)| *cli == flag)
            .map_or_else(|| flag.replace('-', "_"), |(_, py)| py.to_string());
        if value.is_empty() && SWITCHES.contains(&flag) {
            return format!("{name}=True");
        }
        format!("{name}={value}")
    })
    .into_owned()
}

/// [`pythonic`] for the package's own Python-side messages (the summary checks).
#[pyfunction]
pub fn pythonic_message(message: &str) -> String {
    pythonic(message)
}
