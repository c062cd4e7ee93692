//! The front ends hold no run-level logic (issue 45): the CLI (`crates/sleuth-cli`) and
//! the Python package (`crates/sleuth-py`, its Rust module and its Python face) convert
//! arguments, call `study`, and word what comes back. A rule of a run written in a front
//! end is a rule the other front end lacks, and the two drift (they did: Python gave every
//! job of an experiment the whole budget, and only the CLI said a template error is fixed
//! in the templates).
//!
//! Like `layering.rs`, the check reads the sources as text and fails on the marks each
//! kind of run-level logic leaves, in code (comments, doc strings and test modules left
//! out):
//!
//! - a budget split: the budget types, or arithmetic on `max_cost`;
//! - a manifest or a run's files placed: the names of the files a run or a report
//!   writes, joined onto a path;
//! - a verdict: a run summary's counts compared (the library's `RunSummary::verdict`
//!   decides; a front end only matches on the `Verdict`);
//! - pages rendered or any file written (a report builder owns where each page goes).
//!
//! Each exception is listed with its reason. The check is a tripwire, not a proof of
//! absence: it catches the forms these rules took before they moved into the library.

use regex::Regex;
use std::path::{Path, PathBuf};

/// One kind of run-level logic and the code that betrays it.
struct Mark {
    what: &'static str,
    pattern: &'static str,
}

/// What Rust front-end code may not contain.
const RUST_MARKS: &[Mark] = &[
    Mark {
        what: "a budget split",
        pattern: r"\bCostBudget\b|\bBudgetLayer\b|max_cost\s*[/*]",
    },
    Mark {
        what: "a run's or a report's file placed",
        pattern: r#"\.join\(\s*"(?:experiment\.json|run\.json|records\.jsonl|index\.html|questions\.html|traces|trace\.html)"#,
    },
    Mark {
        what: "a verdict decided",
        pattern: r"summary\.\w+\s*(?:==|!=|<=|>=|<|>)|is_template",
    },
    Mark {
        what: "a page rendered",
        pattern: r"report::html::render|report::site::",
    },
    Mark {
        what: "a file written",
        pattern: r"atomic::write|fs::write|create_dir_all|File::create",
    },
];

/// What the Python face (`python/sleuth/*.py`) may not contain.
const PYTHON_MARKS: &[Mark] = &[
    Mark {
        what: "a budget split",
        pattern: r"max_cost\s*[/*]",
    },
    Mark {
        what: "a run's or a report's file placed",
        pattern: r#"["'](?:experiment\.json|run\.json|records\.jsonl|index\.html)["']"#,
    },
    Mark {
        what: "a verdict decided",
        pattern: r#"\[\s*["'](?:errors|written|skipped_errors)["']\s*\]\s*(?:==|!=|<=|>=|<|>)"#,
    },
    Mark {
        what: "a file written",
        pattern: r"\bopen\(|write_text|write_bytes|json\.dump\(|mkdir|makedirs",
    },
];

/// Front-end files allowed one mark, and why.
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "sleuth-cli/src/commands/cache.rs",
    "File::create",
    "`cache export --out FILE` opens the file the user named as the export's sink",
)];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file under `dir` whose name ends in `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Rust code without comments and test modules, line structure kept.
fn rust_code(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .map(|l| match l.find("//") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Python code without doc strings and comments, line structure kept.
fn python_code(text: &str) -> String {
    let docstring = Regex::new(r#"(?s)""".*?"""|'''.*?'''"#).unwrap();
    let blanked = docstring.replace_all(text, |c: &regex::Captures| {
        c[0].chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect::<String>()
    });
    blanked
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every mark found in `code`, as `file:line: what (text)`.
fn marks_in(shown: &str, code: &str, marks: &[Mark]) -> Vec<String> {
    let mut found = Vec::new();
    for mark in marks {
        let re = Regex::new(mark.pattern).unwrap();
        for (n, line) in code.lines().enumerate() {
            for m in re.find_iter(line) {
                let excused = EXCEPTIONS
                    .iter()
                    .any(|(file, text, _)| shown.ends_with(file) && m.as_str() == *text);
                if !excused {
                    found.push(format!("{shown}:{}: {} ({})", n + 1, mark.what, m.as_str()));
                }
            }
        }
    }
    found
}

fn front_end_marks() -> Vec<String> {
    let crates = crates_dir();
    let mut found = Vec::new();
    let rust = [crates.join("sleuth-cli/src"), crates.join("sleuth-py/src")];
    let python = crates.join("sleuth-py/python/sleuth");
    for dir in rust.iter().chain([&python]) {
        assert!(dir.is_dir(), "{} is not a folder", dir.display());
    }
    for dir in &rust {
        for file in files(dir, "rs") {
            let text = std::fs::read_to_string(&file).unwrap();
            let shown = file.strip_prefix(&crates).unwrap().display().to_string();
            found.extend(marks_in(&shown, &rust_code(&text), RUST_MARKS));
        }
    }
    for file in files(&python, "py") {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&crates).unwrap().display().to_string();
        found.extend(marks_in(&shown, &python_code(&text), PYTHON_MARKS));
    }
    found
}

#[test]
fn no_front_end_holds_run_level_logic() {
    let found = front_end_marks();
    assert!(
        found.is_empty(),
        "run-level logic in a front end (move it into the library's `study`):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_marks_catch_each_kind_in_either_language() {
    let rust = "let each = args.max_cost / jobs as f64;\n\
                let m = out.join(\"experiment.json\");\n\
                if summary.errors == summary.written { bail!() }\n\
                let page = sleuth::report::html::render(t, &c, &r);\n\
                std::fs::write(&m, text)?; // a comment: fs::write\n";
    let found = marks_in("x.rs", &rust_code(rust), RUST_MARKS);
    assert_eq!(found.len(), 5, "{found:#?}");
    let python = "\"\"\"Writes index.html with open(path).\"\"\"\n\
                  each = max_cost / len(jobs)\n\
                  if s[\"errors\"] == s[\"written\"]:\n\
                  \x20   raise SleuthError()\n\
                  with open(p, \"w\") as f:  # open( in a comment\n\
                  \x20   json.dump(m, f)\n";
    let found = marks_in("x.py", &python_code(python), PYTHON_MARKS);
    assert_eq!(found.len(), 4, "{found:#?}");
    // The exception is one mark in one file, not a licence for the file.
    let export = "let sink = File::create(p)?;\nstd::fs::write(p, b)?;\n";
    let found = marks_in("sleuth-cli/src/commands/cache.rs", export, RUST_MARKS);
    assert_eq!(found.len(), 1, "{found:#?}");
}
