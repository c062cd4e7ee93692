//! Where a report's HTML pages go and how they link: one trace page per run (in the run
//! directory, or under the output directory), then `index.html` and `questions.html`
//! linking them with relative, percent-encoded links. Every front end writes the pages
//! through here, so a page `sleuth report --html` writes and one Python's
//! `report(html=True)` writes are the same file in the same place.

use super::escape::link_path;
use super::index::{self, PageLink};
use super::table::Table;
use crate::eval::analysis::RecordSet;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A page that could not be written: what was being done, to which path, and why.
#[derive(Debug, thiserror::Error)]
#[error("{action} {}", .path.display())]
pub struct PageError {
    /// `creating` (a directory) or `writing` (a page).
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn creating(path: &Path) -> impl FnOnce(std::io::Error) -> PageError + '_ {
    move |source| PageError {
        action: "creating",
        path: path.to_path_buf(),
        source,
    }
}

fn writing(path: &Path) -> impl FnOnce(std::io::Error) -> PageError + '_ {
    move |source| PageError {
        action: "writing",
        path: path.to_path_buf(),
        source,
    }
}

/// One trace page written.
#[derive(Debug, Clone, Serialize)]
pub struct TraceWritten {
    /// The run directory it shows.
    pub run: PathBuf,
    /// The page.
    pub page: PathBuf,
    /// How many of the report's records it holds.
    pub records: usize,
}

/// The two pages that tie a report together.
#[derive(Debug, Clone, Serialize)]
pub struct IndexPages {
    pub index: PathBuf,
    pub questions: PathBuf,
}

/// One `trace.html` per run: in the run directory, or under `out` (directly for a
/// single run, in a subdirectory named after each run otherwise). `wrote` hears of
/// each page as it is written.
pub fn write_traces(
    set: &RecordSet,
    out: Option<&Path>,
    wrote: &mut dyn FnMut(&Path),
) -> Result<Vec<TraceWritten>, PageError> {
    let pages = super::trace_pages(set);
    let single = pages.len() == 1;
    let common = common_prefix(pages.iter().map(|p| p.dir.as_path()));
    let mut written = Vec::new();
    for page in pages {
        let run = page.dir.clone();
        let records = set
            .arms
            .iter()
            .flat_map(|a| &a.origins)
            .filter(|&&o| set.sources[o].dir == run)
            .count();
        let target = match out {
            None => run.join("trace.html"),
            Some(o) if single => o.join("trace.html"),
            Some(o) => o.join(subdirectory(&run, common)).join("trace.html"),
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(creating(parent))?;
        }
        crate::atomic::write_with(&target, |out| page.write_to(out)).map_err(writing(&target))?;
        wrote(&target);
        written.push(TraceWritten {
            run,
            page: target,
            records,
        });
    }
    Ok(written)
}

/// How many leading components every one of `dirs` shares.
fn common_prefix<'a>(dirs: impl Iterator<Item = &'a Path>) -> usize {
    dirs.map(|d| d.components().collect::<Vec<_>>())
        .reduce(|a, b| {
            a.into_iter()
                .zip(b)
                .take_while(|(x, y)| x == y)
                .map(|(x, _)| x)
                .collect()
        })
        .map_or(0, |c| c.len())
}

/// A run's subdirectory under the output directory, named by what tells the runs apart
/// (`musique`, not `tmp_runs_musique`): the part below the runs' common ancestor.
fn subdirectory(run: &Path, common: usize) -> String {
    let below: PathBuf = run.components().skip(common).collect();
    let mut name = super::slug(&below.display().to_string());
    if name.is_empty() {
        name = super::slug(&run.display().to_string());
    }
    if name.is_empty() {
        "run".into()
    } else {
        name
    }
}

/// `index.html` and `questions.html` in `dir`: the index shows `tables` and links the
/// trace pages and the figures and table files among `files`; the questions page links
/// each answer to its trace page.
pub fn write_index(
    set: &RecordSet,
    traces: &[TraceWritten],
    files: &[PathBuf],
    tables: &[Table],
    dir: &Path,
    wrote: &mut dyn FnMut(&Path),
) -> Result<IndexPages, PageError> {
    let pages: Vec<PageLink> = traces
        .iter()
        .map(|t| PageLink {
            href: relative(dir, &t.page),
            run: t.run.display().to_string(),
            records: t.records,
            summary: run_summary(set, &t.run),
        })
        .collect();
    let linked = ["svg", "csv", "md", "json", "tex"];
    let hrefs: Vec<String> = files
        .iter()
        .filter(|f| {
            f.extension()
                .is_some_and(|e| linked.iter().any(|l| e == *l))
        })
        .map(|f| relative(dir, f))
        .collect();
    let by_run: HashMap<&Path, &Path> = traces
        .iter()
        .map(|t| (t.run.as_path(), t.page.as_path()))
        .collect();
    let questions = index::side_by_side(set, &|run: &Path| {
        by_run.get(run).map(|page| relative(dir, page))
    });
    let index = index::index(&pages, Some("questions.html"), &hrefs, tables);
    std::fs::create_dir_all(dir).map_err(creating(dir))?;
    let paths = IndexPages {
        index: dir.join("index.html"),
        questions: dir.join("questions.html"),
    };
    for (path, text) in [(&paths.index, index), (&paths.questions, questions)] {
        crate::atomic::write(path, text.as_bytes()).map_err(writing(path))?;
        wrote(path);
    }
    Ok(paths)
}

/// `dataset · methods · model` of the run in `run`, as the index lists it.
fn run_summary(set: &RecordSet, run: &Path) -> String {
    let source = set.sources.iter().find(|s| s.dir == run);
    source.map_or_else(String::new, |s| {
        let c = &s.config;
        format!(
            "{} · {} · {}",
            c.dataset.as_deref().unwrap_or("-"),
            c.methods.join(", "),
            c.model.as_deref().unwrap_or("-")
        )
    })
}

/// `to` as a link from a page in `from` (`../run/trace.html`), `/` separated and
/// percent-encoded ([`link_path`]): never a scheme.
pub fn relative(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_os_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let (f, t) = (abs(from), abs(to));
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(t[common..].iter().map(|c| c.to_string_lossy().into_owned()));
    link_path(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_climb_out_of_the_index_directory_and_encode_names() {
        let base = std::env::temp_dir().join("site-links");
        let link = relative(&base.join("report"), &base.join("runs/a b/trace.html"));
        assert_eq!(link, "../runs/a%20b/trace.html");
        assert_eq!(
            relative(&base, &base.join("trace.html")),
            "trace.html".to_string()
        );
    }

    #[test]
    fn subdirectories_are_named_below_the_common_ancestor() {
        let runs = [
            Path::new("/tmp/runs/musique"),
            Path::new("/tmp/runs/hotpot"),
        ];
        let common = common_prefix(runs.iter().copied());
        assert_eq!(common, 3);
        assert_eq!(subdirectory(runs[0], common), "musique");
        // A run that is the common ancestor itself is named by its whole path.
        assert_eq!(subdirectory(Path::new("/tmp/runs"), common), "tmp_runs");
    }
}
