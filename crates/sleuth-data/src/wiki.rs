//! HotpotQA's Wikipedia (the open-corpus setting): the processed abstracts dump
//! `enwiki-20171001-pages-meta-current-withlinks-abstracts`, turned into the JSON Lines
//! corpus that `sleuth index build` reads.
//!
//! The dump is a tar.bz2 of folders (`AA/`, `AB/`, ...) of `wiki_NN.bz2` files, each
//! bz2-compressed JSON Lines of one article's first paragraph: `{"id", "url", "title",
//! "text": [sentences], ...}` (the `*_with_links` fields are ignored). We read either
//! the unpacked folder (what `sleuth data fetch hotpotqa-wiki` leaves) or the tar.bz2
//! itself, in sorted file order so the corpus ids are stable, and stream every article
//! straight to the output: the 5.23M paragraphs never sit in memory.

use super::DataError;
#[cfg(feature = "archives")]
use super::{CorpusDoc, Paragraph};
#[cfg(feature = "archives")]
use std::fs::File;
#[cfg(feature = "archives")]
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
#[cfg(feature = "archives")]
use std::path::PathBuf;

#[cfg(feature = "archives")]
#[derive(serde::Deserialize)]
struct Article {
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: Vec<String>,
}

/// What a conversion read and wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WikiStats {
    pub files: usize,
    pub articles: usize,
    /// Articles with an empty first paragraph (redirect and list pages), left out.
    pub empty: usize,
    pub written: usize,
    /// Symbolic links in the folder not followed: they lead out of it, or back to a
    /// folder or file already read.
    pub links_skipped: usize,
}

/// Converts the dump at `input` (folder or `.tar.bz2`) into a corpus at `out`.
/// `on_file` is called after each inner file with the running totals.
pub fn write_wiki_corpus(
    input: &Path,
    out: &Path,
    on_file: &mut dyn FnMut(&WikiStats),
) -> Result<WikiStats, DataError> {
    #[cfg(feature = "archives")]
    return convert(input, out, on_file);
    #[cfg(not(feature = "archives"))]
    {
        let _ = (input, out, on_file);
        Err(crate::ArchivesNotBuilt {
            what: "bz2 Wikipedia dumps",
        }
        .into())
    }
}

/// [`write_wiki_corpus`] in a build that reads bz2.
#[cfg(feature = "archives")]
fn convert(
    input: &Path,
    out: &Path,
    on_file: &mut dyn FnMut(&WikiStats),
) -> Result<WikiStats, DataError> {
    let write_err = |cause| DataError::Write {
        path: out.to_path_buf(),
        cause,
    };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(write_err)?;
    }
    let tmp = out.with_extension("jsonl.tmp");
    let mut writer = BufWriter::new(File::create(&tmp).map_err(write_err)?);
    let mut stats = WikiStats::default();
    let mut links_skipped = 0;
    let mut each = |label: &str, stream: &mut dyn Read| -> Result<(), DataError> {
        let reader = BufReader::new(bzip2::read::MultiBzDecoder::new(stream));
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| DataError::Parse {
                path: PathBuf::from(label),
                line: i + 1,
                message: format!("cannot decompress: {e}"),
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let article: Article = serde_json::from_str(&line).map_err(|e| DataError::Parse {
                path: PathBuf::from(label),
                line: i + 1,
                message: e.to_string(),
            })?;
            stats.articles += 1;
            let paragraph = Paragraph::new(article.title, article.text);
            let text = paragraph.text();
            if text.trim().is_empty() {
                stats.empty += 1;
                continue;
            }
            let doc = CorpusDoc {
                id: format!("{:07}", stats.written),
                title: paragraph.title,
                text,
                sentences: paragraph.sentences,
            };
            let json = serde_json::to_string(&doc).expect("corpus docs serialize");
            writeln!(writer, "{json}").map_err(write_err)?;
            stats.written += 1;
        }
        stats.files += 1;
        on_file(&stats);
        Ok(())
    };
    let read_err = |cause| DataError::Io {
        path: input.to_path_buf(),
        cause,
    };
    if input.is_dir() {
        let (files, skipped) = bz2_files(input).map_err(read_err)?;
        links_skipped = skipped;
        for file in files {
            let mut f = File::open(&file).map_err(|cause| DataError::Io {
                path: file.clone(),
                cause,
            })?;
            each(&file.display().to_string(), &mut f)?;
        }
    } else {
        let file = File::open(input).map_err(read_err)?;
        let decoder = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
        let mut archive = tar::Archive::new(decoder);
        // Tar entries come in archive order, which the dump writes sorted.
        for entry in archive.entries().map_err(read_err)? {
            let mut entry = entry.map_err(read_err)?;
            let name = entry.path().map_err(read_err)?.display().to_string();
            if entry.header().entry_type().is_file() && name.ends_with(".bz2") {
                each(&format!("{}:{name}", input.display()), &mut entry)?;
            }
        }
    }
    stats.links_skipped = links_skipped;
    writer.flush().map_err(write_err)?;
    drop(writer);
    crate::atomic::sync_file(&tmp).map_err(write_err)?;
    std::fs::rename(&tmp, out).map_err(write_err)?;
    crate::atomic::sync_parent(out);
    Ok(stats)
}

/// Every `.bz2` file under `dir`, sorted by path, and how many links were skipped. A
/// symbolic link is followed only to a folder or file inside `dir` that was not reached
/// already: a link to `.` cannot loop, and a link to `/etc` or `../x.bz2` cannot pull
/// in what lies outside (an archive may carry such links; `data fetch` creates none).
#[cfg(feature = "archives")]
fn bz2_files(dir: &Path) -> std::io::Result<(Vec<PathBuf>, usize)> {
    let root = dir.canonicalize()?;
    let mut seen = std::collections::HashSet::from([root.clone()]);
    let (mut out, mut skipped) = (Vec::new(), 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let mut kind = entry.file_type()?;
            let real = if kind.is_symlink() {
                match path.canonicalize() {
                    Ok(real) if real.starts_with(&root) => {
                        kind = std::fs::metadata(&real)?.file_type();
                        real
                    }
                    // Outside the folder, or dangling.
                    _ => {
                        skipped += 1;
                        continue;
                    }
                }
            } else {
                path.clone()
            };
            let wanted = kind.is_dir() || path.extension().is_some_and(|e| e == "bz2");
            if !wanted {
                continue;
            }
            // Through a link, or reached through one before: read each thing once.
            let canonical = real.canonicalize()?;
            if !seen.insert(canonical) {
                skipped += 1;
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok((out, skipped))
}

#[cfg(all(test, not(feature = "archives")))]
mod lean_tests {
    use super::*;

    /// A lean build (no `archives` feature) refuses a dump by naming the feature and
    /// writes no corpus.
    #[test]
    fn a_build_without_archives_refuses_a_dump_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("corpus.jsonl");
        let e = write_wiki_corpus(dir.path(), &out, &mut |_| {}).unwrap_err();
        assert!(matches!(e, DataError::ArchivesNotBuilt(_)), "{e}");
        assert!(e.to_string().contains("cargo feature `archives`"), "{e}");
        assert!(!out.exists());
    }
}
