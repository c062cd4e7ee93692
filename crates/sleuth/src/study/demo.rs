//! Where `sleuth demo` leaves its run: the records (`records.jsonl`, which `sleuth
//! report` reads like any run directory's) and one trace page of every episode, written
//! into a folder the demo replaces on each run. The CLI runs the episodes and prints;
//! the files and their names are the library's, as for every other run (issue 45).

use crate::atomic;
use crate::eval::RunRecord;
use crate::report::html;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The demo's records, as a run directory names them.
pub const DEMO_RECORDS: &str = "records.jsonl";
/// The demo's one trace page.
pub const DEMO_PAGE: &str = "trace.html";

/// Writes `records` (made with `model`) and their trace page into `dir`, replacing an
/// earlier demo's; returns the page's path.
pub fn write_demo_run(dir: &Path, records: &[&RunRecord], model: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut lines = String::new();
    for r in records {
        lines += &serde_json::to_string(r).expect("records serialize");
        lines.push('\n');
    }
    let file = dir.join(DEMO_RECORDS);
    atomic::write(&file, lines.as_bytes()).map_err(|e| Error::io(&file, e))?;
    let config = vec![("model".to_string(), model.to_string())];
    let page = dir.join(DEMO_PAGE);
    let html = html::render("sleuth demo", &config, records);
    atomic::write(&page, html.as_bytes()).map_err(|e| Error::io(&page, e))?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::eval::RecordContext;
    use crate::methods::Episode;
    use std::collections::BTreeMap;

    #[test]
    fn the_demo_leaves_records_report_reads_and_a_page_that_escapes_them() {
        let line = r#"{"id": "q<1>", "question": "Who?", "answers": ["A"], "paragraphs": [{"title": "T", "text": "A is."}]}"#;
        let question = &crate::data::parse(Dataset::Jsonl, Path::new("q.jsonl"), line).unwrap()[0];
        let settings = BTreeMap::new();
        let ctx = RecordContext {
            method: "react",
            settings: &settings,
            model: "local:m",
            retries: 0,
            cost_usd: 0.0,
            constraints_dropped: 0,
            batched_calls: 0,
        };
        let record = RunRecord::from_episode(question, Episode::default(), &ctx);
        let dir = tempfile::tempdir().unwrap();
        let page = write_demo_run(&dir.path().join("demo"), &[&record], "local:m").unwrap();
        assert_eq!(page, dir.path().join("demo").join(DEMO_PAGE));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains("q&lt;1&gt;") && !html.contains("q<1>"));
        let text = std::fs::read_to_string(dir.path().join("demo").join(DEMO_RECORDS)).unwrap();
        let back: RunRecord = serde_json::from_str(text.trim()).unwrap();
        assert_eq!((back.id.as_str(), back.method.as_str()), ("q<1>", "react"));
    }
}
