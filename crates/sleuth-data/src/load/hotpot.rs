//! HotpotQA (distractor / fullwiki) and 2WikiMultiHopQA rows: both store the pool as
//! `context: [[title, [sentences]]]` and support as `supporting_facts: [[title, sent]]`.

use super::records::{Problem, Record};
use super::{positions_of, Aliases, Dataset, Question};
use crate::{Paragraph, SupportingFact};
use serde::Deserialize;

#[derive(Deserialize)]
struct Row {
    #[serde(rename = "_id")]
    id: String,
    question: String,
    /// Required: the unlabeled test releases cannot be evaluated.
    answer: String,
    /// 2Wiki: the Wikidata id of the answer entity, the key into `id_aliases.json`.
    #[serde(default)]
    answer_id: Option<String>,
    #[serde(default)]
    supporting_facts: Vec<(String, usize)>,
    context: Vec<(String, Vec<String>)>,
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

pub(super) fn parse(
    record: &Record<'_>,
    dataset: Dataset,
    aliases: Option<&Aliases>,
) -> Result<Question, Problem> {
    let row: Row = record.decode()?;
    let mut answers = vec![row.answer];
    if let (Some(aliases), Some(id)) = (aliases, row.answer_id.as_deref()) {
        for alias in aliases.of(id) {
            if !answers.contains(alias) {
                answers.push(alias.clone());
            }
        }
    }
    let paragraphs: Vec<Paragraph> = row
        .context
        .into_iter()
        .map(|(title, sentences)| Paragraph::new(title, sentences))
        .collect();
    let gold: Vec<&str> = row
        .supporting_facts
        .iter()
        .map(|(t, _)| t.as_str())
        .collect();
    let supporting_paragraphs = positions_of(&paragraphs, &gold);
    let hops = match dataset {
        Dataset::TwoWiki => twowiki_hops(row.kind.as_deref()),
        _ => Some(2),
    };
    Ok(Question {
        id: row.id,
        dataset,
        text: row.question,
        answers,
        supporting_facts: row
            .supporting_facts
            .into_iter()
            .map(|(title, sentence)| SupportingFact { title, sentence })
            .collect(),
        supporting_paragraphs,
        paragraphs,
        hops,
        kind: row.kind,
    })
}

/// 2Wiki's hop count by question type: a bridge-comparison question resolves two bridge
/// entities and then compares them (four evidence triples, four supporting paragraphs);
/// every other type chains or compares two entities.
fn twowiki_hops(kind: Option<&str>) -> Option<u8> {
    match kind? {
        "bridge_comparison" => Some(4),
        "comparison" | "compositional" | "inference" => Some(2),
        _ => None,
    }
}
