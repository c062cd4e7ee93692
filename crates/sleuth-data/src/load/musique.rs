//! MuSiQue rows: paragraphs as single strings (split here into sentences) and the hop
//! structure encoded in the id prefix (`3hop1__...`).

use super::records::{Problem, Record};
use super::{Dataset, Question};
use crate::{split_sentences, Paragraph};
use serde::Deserialize;

#[derive(Deserialize)]
struct Row {
    id: String,
    question: String,
    answer: String,
    #[serde(default)]
    answer_aliases: Vec<String>,
    /// Absent from hand-made copies; the official files always say.
    #[serde(default = "yes")]
    answerable: bool,
    paragraphs: Vec<RawParagraph>,
}

#[derive(Deserialize)]
struct RawParagraph {
    idx: usize,
    title: String,
    paragraph_text: String,
    #[serde(default)]
    is_supporting: bool,
}

fn yes() -> bool {
    true
}

/// The question, or None for an unanswerable one (the `full` release's contrast
/// questions), which the answerable-question metrics leave out.
pub(super) fn parse(record: &Record<'_>) -> Result<Option<Question>, Problem> {
    let row: Row = record.decode()?;
    if !row.answerable {
        return Ok(None);
    }
    let mut paragraphs = Vec::with_capacity(row.paragraphs.len());
    let mut supporting_paragraphs = Vec::new();
    for (position, p) in row.paragraphs.into_iter().enumerate() {
        if p.idx != position {
            return Err(format!(
                "paragraph at position {position} has idx {}; sleuth needs idx to equal the position",
                p.idx
            )
            .into());
        }
        if p.is_supporting {
            supporting_paragraphs.push(position);
        }
        paragraphs.push(Paragraph::new(p.title, split_sentences(&p.paragraph_text)));
    }
    let (hops, kind) = match hop_kind(&row.id) {
        Some((hops, kind)) => (Some(hops), Some(kind.to_string())),
        None => (None, None),
    };
    Ok(Some(Question {
        id: row.id,
        dataset: Dataset::Musique,
        text: row.question,
        answers: std::iter::once(row.answer)
            .chain(row.answer_aliases)
            .collect(),
        paragraphs,
        supporting_facts: Vec::new(),
        supporting_paragraphs,
        hops,
        kind,
    }))
}

/// `3hop1__123_456` -> `(3, "3hop1")`. None when the id has no such prefix.
pub(crate) fn hop_kind(id: &str) -> Option<(u8, &str)> {
    let prefix = id.split("__").next()?;
    let (count, _variant) = prefix.split_once("hop")?;
    let hops = count.parse().ok()?;
    Some((hops, prefix))
}

#[cfg(test)]
mod tests {
    use super::hop_kind;

    #[test]
    fn hop_count_comes_from_the_id_prefix() {
        assert_eq!(hop_kind("2hop__460946_294723"), Some((2, "2hop")));
        assert_eq!(hop_kind("3hop1__9991_42268_36600"), Some((3, "3hop1")));
        assert_eq!(hop_kind("4hop3__1_2_3_4"), Some((4, "4hop3")));
        assert_eq!(hop_kind("question-7"), None);
        assert_eq!(hop_kind("xhop__1"), None);
    }
}
