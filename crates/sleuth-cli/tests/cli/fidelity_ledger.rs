//! The fidelity ledgers (`docs/fidelity/*.md`) name, for each rule of a paper, the test
//! that shows it. This test reads every ledger table with a `test` column and checks
//! that each `path::function` it names exists in that test source, so a ledger cannot
//! cite a test that was renamed or never written; a row without a named test must say
//! `open` (or cite the golden transcripts).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A table row's cells; `\|` is a pipe inside a cell (Markdown's escape), not a border.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().expect("a cell").push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().expect("a cell").push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// `(path, function)` for every backticked `path.rs::function` in a cell.
fn named_tests(cell: &str) -> Vec<(String, String)> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|code| {
            let (path, name) = code.split_once(".rs::")?;
            Some((format!("{path}.rs"), name.to_string()))
        })
        .collect()
}

/// Every table row of `text` under a header that has a `test` column: (line, test cell).
fn test_cells(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut column: Option<usize> = None;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with('|') {
            column = None;
            continue;
        }
        let row = cells(line);
        if row
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
        {
            continue;
        }
        let is_header = lines
            .get(i + 1)
            .is_some_and(|next| next.trim_start().starts_with("| ---"));
        if is_header {
            column = row.iter().position(|c| c == "test");
            continue;
        }
        if let Some(k) = column {
            out.push((i + 1, row.get(k).cloned().unwrap_or_default()));
        }
    }
    out
}

#[test]
fn every_test_a_fidelity_ledger_names_exists() {
    let dir = root().join("docs/fidelity");
    let mut ledgers: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    ledgers.sort();
    assert!(!ledgers.is_empty(), "no ledger in {}", dir.display());
    let mut checked = 0;
    let mut problems = Vec::new();
    for ledger in &ledgers {
        let text = std::fs::read_to_string(ledger).unwrap();
        let rows = test_cells(&text);
        assert!(
            !rows.is_empty(),
            "{}: no table with a test column",
            ledger.display()
        );
        for (line, cell) in rows {
            let where_ = format!("{}:{line}", ledger.display());
            let tests = named_tests(&cell);
            if tests.is_empty() && !cell.contains("open") && !cell.contains("golden") {
                problems.push(format!("{where_}: names no test and does not say open"));
            }
            for (path, name) in tests {
                checked += 1;
                let file = root().join(&path);
                let Ok(source) = std::fs::read_to_string(&file) else {
                    problems.push(format!("{where_}: {path} does not exist"));
                    continue;
                };
                if !source.contains(&format!("fn {name}(")) {
                    problems.push(format!("{where_}: {path} has no fn {name}"));
                }
            }
        }
    }
    println!("{checked} named tests checked in {} ledgers", ledgers.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 0);
}

#[test]
fn the_ledger_check_catches_a_missing_test() {
    let text = "| section | rule | test |\n| --- | --- | --- |\n\
        | §1 | x | `crates/sleuth-cli/tests/cli/fidelity_ledger.rs::no_such_test` |\n\
        | §2 | y | open |\n";
    let rows = test_cells(text);
    assert_eq!(rows.len(), 2);
    let named = named_tests(&rows[0].1);
    assert_eq!(
        named,
        [(
            "crates/sleuth-cli/tests/cli/fidelity_ledger.rs".to_string(),
            "no_such_test".to_string()
        )]
    );
    let source = std::fs::read_to_string(root().join(&named[0].0)).unwrap();
    assert!(!source.contains(&format!("fn {}(", "no_such_test")));
}
