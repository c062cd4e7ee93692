//! What was unpacked must be what the registry says it is ([`Content`]): questions in
//! the dataset's schema, 2Wiki's aliases, or the Wikipedia dump's bz2 articles. It is
//! checked in the staging folder, before anything is installed and before a download's
//! digest is recorded, so a host that served a web page, garbage or links never makes
//! the dataset look installed, nor the genuine file look changed upstream later.

use super::registry::{Content, Source};
use super::FetchError;
use crate::load::{detect, read_aliases, read_text};
use std::io::Read;
use std::path::Path;

/// Checks every file the source installs, in `staging`.
pub(super) fn check(source: &Source, staging: &Path, what: &str) -> Result<(), FetchError> {
    for (file, content) in source.checks {
        let path = staging.join(file);
        check_one(&path, *content).map_err(|message| FetchError::Invalid {
            what: format!("{file} from {what}"),
            message,
        })?;
    }
    Ok(())
}

fn check_one(path: &Path, content: Content) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|_| "it is missing".to_string())?;
    if meta.file_type().is_symlink() {
        return Err("it is a symbolic link, not a file".into());
    }
    match content {
        Content::Questions(dataset) => {
            let text = read_text(path).map_err(|e| format!("{e}; {}", found(path)))?;
            let schema = detect(path, &text).map_err(|e| format!("{e}; {}", found(path)))?;
            if schema != dataset {
                return Err(format!("it holds {schema} questions, not {dataset}"));
            }
            Ok(())
        }
        Content::Aliases if meta.len() == 0 => Err("it is empty".into()),
        Content::Aliases => read_aliases(path)
            .map(|_| ())
            .map_err(|e| format!("{e}; {}", found(path))),
        Content::WikiDump => wiki_dump(path),
    }
}

/// The dump's folder holds bz2 files of JSON Lines articles: the first one found must
/// decode to one.
fn wiki_dump(dir: &Path) -> Result<(), String> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .map_err(|e| format!("{}: {e}", d.display()))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let (path, kind) = (entry.path(), entry.file_type().map_err(|e| e.to_string())?);
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "bz2") {
                let first = first_line_of_bz2(&path)?;
                let article =
                    first.and_then(|l| serde_json::from_str::<serde_json::Value>(&l).ok());
                return match article {
                    Some(a) if a.get("title").is_some() && a.get("text").is_some() => Ok(()),
                    _ => Err(format!(
                        "{} is not bz2 JSON Lines of articles (title, text)",
                        path.display()
                    )),
                };
            }
        }
    }
    Err("it holds no .bz2 article files".into())
}

/// What the file starts with, for the message.
/// The first line (up to 1 MiB) of a bz2 file, `None` when it does not decode; an
/// error when this build reads no bz2.
fn first_line_of_bz2(path: &Path) -> Result<Option<String>, String> {
    #[cfg(feature = "archives")]
    {
        use std::io::{BufRead, BufReader};
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let mut first = String::new();
        let decoded = BufReader::new(bzip2::read::MultiBzDecoder::new(file))
            .take(1 << 20)
            .read_line(&mut first);
        Ok(decoded.ok().map(|_| first))
    }
    #[cfg(not(feature = "archives"))]
    {
        let _ = path;
        let what = "bz2 Wikipedia dumps";
        Err(crate::ArchivesNotBuilt { what }.to_string())
    }
}

fn found(path: &Path) -> String {
    let mut head = vec![0u8; 80];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    format!("it starts with {:?}", text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dataset;

    #[test]
    fn wrong_content_is_named_with_what_was_found() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("dev.json");
        std::fs::write(&page, "<html><body>Sign in to continue</body></html>").unwrap();
        let e = check_one(&page, Content::Questions(Dataset::TwoWiki)).unwrap_err();
        assert!(e.contains("<html><body>Sign in"), "{e}");
        let musique = dir.path().join("m.jsonl");
        std::fs::write(
            &musique,
            r#"{"id": "2hop__1", "question": "q", "answer": "a", "answerable": true, "paragraphs": []}"#,
        )
        .unwrap();
        assert!(check_one(&musique, Content::Questions(Dataset::Musique)).is_ok());
        let e = check_one(&musique, Content::Questions(Dataset::HotpotQa)).unwrap_err();
        assert!(e.contains("not hotpotqa"), "{e}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&musique, &link).unwrap();
            let e = check_one(&link, Content::Questions(Dataset::Musique)).unwrap_err();
            assert!(e.contains("symbolic link"), "{e}");
        }
        assert!(check_one(&dir.path().join("none"), Content::Aliases).is_err());
        assert!(wiki_dump(dir.path()).unwrap_err().contains("no .bz2"));
    }
}
