//! Our own JSON Lines schema for user data (documented in the parent module). Stricter
//! than the benchmark loaders: a supporting title that names no paragraph is an error,
//! because in hand-written data it is almost always a typo.

use super::records::{Problem, Record};
use super::{positions_of, Dataset, Question};
use crate::{split_sentences, Paragraph, SupportingFact};
use serde::Deserialize;

#[derive(Deserialize)]
struct Row {
    id: String,
    question: String,
    #[serde(default)]
    answers: Vec<String>,
    #[serde(default)]
    answer: Option<String>,
    paragraphs: Vec<UserParagraph>,
    #[serde(default)]
    supporting: Vec<String>,
    #[serde(default)]
    supporting_facts: Vec<(String, usize)>,
    #[serde(default)]
    hops: Option<u8>,
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct UserParagraph {
    title: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    sentences: Option<Vec<String>>,
}

pub(super) fn parse(record: &Record<'_>) -> Result<Question, Problem> {
    let row: Row = record.decode()?;
    let mut paragraphs = Vec::with_capacity(row.paragraphs.len());
    for p in row.paragraphs {
        let sentences = match (p.text, p.sentences) {
            (Some(text), None) => split_sentences(&text),
            (None, Some(sentences)) => sentences,
            _ => {
                return Err(format!(
                    "paragraph `{}` needs exactly one of `text` or `sentences`",
                    p.title
                )
                .into())
            }
        };
        paragraphs.push(Paragraph::new(p.title, sentences));
    }
    let mut titles: Vec<&str> = row.supporting.iter().map(String::as_str).collect();
    titles.extend(row.supporting_facts.iter().map(|(t, _)| t.as_str()));
    if let Some(missing) = titles
        .iter()
        .find(|t| !paragraphs.iter().any(|p| p.title == **t))
    {
        return Err(format!("supporting title `{missing}` names no paragraph").into());
    }
    let supporting_paragraphs = positions_of(&paragraphs, &titles);
    let answers = match (row.answer, row.answers.is_empty()) {
        (Some(answer), true) => vec![answer],
        (None, false) => row.answers,
        (None, true) => {
            return Err("no gold answer: give `answer` or a non-empty `answers`"
                .to_string()
                .into())
        }
        (Some(_), false) => return Err("give `answers` or `answer`, not both".to_string().into()),
    };
    Ok(Question {
        id: row.id,
        dataset: Dataset::Jsonl,
        text: row.question,
        answers,
        paragraphs,
        supporting_facts: row
            .supporting_facts
            .into_iter()
            .map(|(title, sentence)| SupportingFact { title, sentence })
            .collect(),
        supporting_paragraphs,
        hops: row.hops,
        kind: row.kind,
    })
}
