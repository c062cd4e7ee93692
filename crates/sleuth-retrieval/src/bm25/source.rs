//! Corpus input: one JSON object per line with `id`, `title`, and the paragraph as
//! `sentences` (a list of strings) and/or `text` (a string, or a list of sentences as in
//! HotpotQA's Wikipedia dump). `id` may be a string or an integer; when it is missing
//! the paragraph's 0-based position in the corpus is its id.
//!
//! What is stored is what is indexed: the title and each sentence are analyzed as
//! separate pieces, and a read returns exactly those sentences, so sentence boundaries
//! survive. A line with only `text` (a string) is one sentence: its boundaries are not
//! known, and guessing them with a splitter would break abbreviations.

use serde::Deserialize;
use std::cmp::Ordering;

/// One paragraph of the corpus, as stored in and returned from the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusDoc {
    pub id: String,
    pub title: String,
    pub sentences: Vec<String>,
}

impl CorpusDoc {
    pub fn new(id: impl Into<String>, title: impl Into<String>, sentences: Vec<String>) -> Self {
        CorpusDoc {
            id: id.into(),
            title: title.into(),
            sentences,
        }
    }

    /// The pieces that are analyzed, in order: the title, then each sentence.
    pub fn pieces(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.title.as_str()).chain(self.sentences.iter().map(String::as_str))
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum IdField {
    Text(String),
    Number(u64),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TextField {
    Text(String),
    Sentences(Vec<String>),
}

#[derive(Deserialize)]
struct Line {
    id: Option<IdField>,
    #[serde(default)]
    title: Option<String>,
    text: Option<TextField>,
    sentences: Option<Vec<String>>,
}

/// Parses one corpus line; `position` is the paragraph's 0-based number, used as the id
/// when the line has none. Errors are messages for the caller to locate.
pub fn parse_line(line: &str, position: u64) -> Result<CorpusDoc, String> {
    let parsed: Line =
        serde_json::from_str(line).map_err(|e| format!("invalid corpus line: {e}"))?;
    let id = match parsed.id {
        Some(IdField::Text(s)) => s,
        Some(IdField::Number(n)) => n.to_string(),
        None => position.to_string(),
    };
    if id.is_empty() {
        return Err("empty `id`".into());
    }
    let sentences = match (parsed.sentences, parsed.text) {
        (Some(s), _) => s,
        (None, Some(TextField::Sentences(s))) => s,
        (None, Some(TextField::Text(t))) => vec![t],
        (None, None) => return Err("the line has neither `text` nor `sentences`".into()),
    };
    Ok(CorpusDoc {
        id,
        title: parsed.title.unwrap_or_default(),
        sentences,
    })
}

/// The order of ids used to break score ties: ids made only of ASCII digits compare as
/// numbers and come before all others, which compare bytewise; equal numbers written
/// with different leading zeros fall back to bytes, so the order is total.
pub fn id_cmp(a: &str, b: &str) -> Ordering {
    fn numeric(s: &str) -> Option<&str> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| {
            let t = s.trim_start_matches('0');
            t
        })
    }
    match (numeric(a), numeric(b)) {
        (Some(x), Some(y)) => x.len().cmp(&y.len()).then(x.cmp(y)).then(a.cmp(b)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_every_line_shape() {
        let d = parse_line(
            r#"{"id":"7","title":"T","text":"a b","sentences":["a"," b"]}"#,
            0,
        )
        .unwrap();
        assert_eq!(d, CorpusDoc::new("7", "T", vec!["a".into(), " b".into()]));
        let d = parse_line(r#"{"id":12,"title":"T","text":"one. two."}"#, 0).unwrap();
        assert_eq!(d.id, "12");
        assert_eq!(d.sentences, ["one. two."]);
        let d = parse_line(r#"{"title":"T","text":["s1","s2"]}"#, 4).unwrap();
        assert_eq!((d.id.as_str(), d.sentences.len()), ("4", 2));
        let d = parse_line(r#"{"sentences":["only"]}"#, 9).unwrap();
        assert_eq!((d.id.as_str(), d.title.as_str()), ("9", ""));
        assert!(parse_line(r#"{"id":"x","title":"T"}"#, 0)
            .unwrap_err()
            .contains("neither"));
        assert!(parse_line("{not json", 0)
            .unwrap_err()
            .contains("invalid corpus line"));
    }

    #[test]
    fn ids_order_numerically_then_bytewise() {
        let mut ids = vec!["b", "10", "9", "a", "009", "100"];
        ids.sort_by(|a, b| id_cmp(a, b));
        assert_eq!(ids, ["009", "9", "10", "100", "a", "b"]);
    }
}
