//! EIR's retrieval state: the Requirements list (what the answer still needs) and the
//! Conclusions list (claims the agent considers supported, each citing sentences read).
//!
//! A response proposes changes to both lists. The changes are checked together against
//! the current lists and the evidence read so far, and applied all-or-nothing: a change
//! may revise only an entry that exists, add only an id that is free, and cite only a
//! sentence that was read. If any part fails, neither list changes. The check confirms
//! that a cited sentence was read, not that it supports the claim.

use super::json::{
    given, kind, opt_array, opt_string, parse_citations, Citation, RejectCause, Rejection,
};
use super::schema::{conclusion, reply, requirement, Field, ADD, REVISE};
use crate::env::EvidenceStore;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequirementStatus {
    Open,
    Met,
    Dropped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConclusionStatus {
    Tentative,
    Supported,
    Retracted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    pub id: String,
    pub text: String,
    pub status: RequirementStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conclusion {
    pub id: String,
    pub claim: String,
    pub status: ConclusionStatus,
    pub citations: Vec<Citation>,
    /// Ids of conclusions this one builds on (dependency-repair control only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
}

/// Both lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lists {
    pub requirements: Vec<Requirement>,
    pub conclusions: Vec<Conclusion>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Revise,
}

#[derive(Debug, Clone, PartialEq)]
struct RequirementChange {
    op: Op,
    id: String,
    text: Option<String>,
    status: Option<RequirementStatus>,
}

#[derive(Debug, Clone, PartialEq)]
struct ConclusionChange {
    op: Op,
    id: String,
    claim: Option<String>,
    status: Option<ConclusionStatus>,
    citations: Option<Vec<Citation>>,
    depends_on: Option<Vec<String>>,
}

/// The list changes one response proposes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListChanges {
    requirements: Vec<RequirementChange>,
    conclusions: Vec<ConclusionChange>,
}

/// Lists after a successful application, and which conclusions changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub lists: Lists,
    /// Ids of existing conclusions that this change revised.
    pub revised: Vec<String>,
}

/// A status field: one of the declared choices (any case), which are the status enum's
/// own names (the schema tests check they agree).
fn parse_status<T: serde::de::DeserializeOwned>(
    obj: &Map<String, Value>,
    field: &Field,
) -> Result<Option<T>, Rejection> {
    match opt_string(obj, field)? {
        None => Ok(None),
        Some(s) => serde_json::from_value(Value::String(s.to_ascii_lowercase()))
            .map(Some)
            .map_err(|_| {
                Rejection::new(
                    RejectCause::WrongType,
                    format!(
                        "{} `{s}` is not one of {}",
                        field.name,
                        field.choice_list(", ")
                    ),
                )
            }),
    }
}

fn parse_head(item: &Value, list: &str) -> Result<(Op, String, Map<String, Value>), Rejection> {
    let Value::Object(obj) = item else {
        return Err(Rejection::new(
            RejectCause::WrongType,
            format!(
                "each change to {list} must be an object, not {}",
                kind(item)
            ),
        ));
    };
    // Requirement and conclusion changes share their head fields.
    let (op_field, id_field) = (requirement::OP, requirement::ID);
    let (op_name, ops) = (op_field.name, op_field.choice_list(" or "));
    let op = match opt_string(obj, &op_field)?.map(|s| s.to_ascii_lowercase()) {
        Some(s) if ADD.accepts(&s) => Op::Add,
        Some(s) if REVISE.accepts(&s) => Op::Revise,
        Some(s) => {
            return Err(Rejection::new(
                RejectCause::WrongType,
                format!("`{op_name}` `{s}` in {list} is not {ops}"),
            ))
        }
        None => {
            return Err(Rejection::new(
                RejectCause::MissingField,
                format!("each change to {list} needs an `{op_name}` ({ops})"),
            ))
        }
    };
    let id = opt_string(obj, &id_field)?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            Rejection::new(
                RejectCause::MissingField,
                format!("each change to {list} needs an `{}`", id_field.name),
            )
        })?;
    Ok((op, id, obj.clone()))
}

impl ListChanges {
    /// Reads the `requirements` and `conclusions` arrays of a response (absent means no
    /// change). Shape errors reject the whole response.
    pub fn parse(obj: &Map<String, Value>) -> Result<Self, Rejection> {
        let mut changes = ListChanges::default();
        let list = reply::REQUIREMENTS.name;
        for item in opt_array(obj, &reply::REQUIREMENTS)? {
            let (op, id, o) = parse_head(item, list)?;
            changes.requirements.push(RequirementChange {
                op,
                id,
                text: opt_string(&o, &requirement::TEXT)?,
                status: parse_status(&o, &requirement::STATUS)?,
            });
        }
        let list = reply::CONCLUSIONS.name;
        for item in opt_array(obj, &reply::CONCLUSIONS)? {
            let (op, id, o) = parse_head(item, list)?;
            let citations = if given(&o, &conclusion::CITATIONS) {
                Some(parse_citations(opt_array(&o, &conclusion::CITATIONS)?)?)
            } else {
                None
            };
            let depends_on = if given(&o, &conclusion::DEPENDS_ON) {
                Some(
                    opt_array(&o, &conclusion::DEPENDS_ON)?
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => Ok(s.trim().to_string()),
                            other => Err(Rejection::new(
                                RejectCause::WrongType,
                                format!(
                                    "`{}` lists ids as strings, not {}",
                                    conclusion::DEPENDS_ON.name,
                                    kind(other)
                                ),
                            )),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                )
            } else {
                None
            };
            changes.conclusions.push(ConclusionChange {
                op,
                id,
                claim: opt_string(&o, &conclusion::CLAIM)?,
                status: parse_status(&o, &conclusion::STATUS)?,
                citations,
                depends_on,
            });
        }
        Ok(changes)
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty() && self.conclusions.is_empty()
    }

    /// Dependency repair's first call (EIR App. E.3) may only revise the affected
    /// conclusions; anything else refuses the whole reply.
    pub fn only_revising(&self, affected: &[String]) -> Result<(), Rejection> {
        if !self.requirements.is_empty() {
            return Err(Rejection::new(
                RejectCause::NotAllowed,
                "this call revises conclusions only",
            ));
        }
        match self
            .conclusions
            .iter()
            .find(|c| c.op != Op::Revise || !affected.contains(&c.id))
        {
            Some(c) => Err(Rejection::new(
                RejectCause::NotAllowed,
                format!("{} is not one of the affected conclusions to revise", c.id),
            )),
            None => Ok(()),
        }
    }

    /// Dependency repair's second call (EIR App. E.3) may only change requirements.
    pub fn only_requirements(&self) -> Result<(), Rejection> {
        match self.conclusions.first() {
            Some(c) => Err(Rejection::new(
                RejectCause::NotAllowed,
                format!("this call refreshes requirements only, not {}", c.id),
            )),
            None => Ok(()),
        }
    }
}

impl Lists {
    /// Checks every change against these lists and `evidence`; on success returns the
    /// new lists, otherwise one rejection naming every problem (cause: the first's).
    pub fn apply(
        &self,
        changes: &ListChanges,
        evidence: &EvidenceStore,
    ) -> Result<Applied, Rejection> {
        let mut next = self.clone();
        let mut problems: Vec<Rejection> = Vec::new();
        let mut revised = Vec::new();
        for c in &changes.requirements {
            let existing = next.requirements.iter().position(|r| r.id == c.id);
            match (c.op, existing) {
                (Op::Add, Some(_)) => problems.push(duplicate("requirement", &c.id)),
                (Op::Add, None) => match c.text.as_deref().filter(|t| !t.is_empty()) {
                    Some(text) => next.requirements.push(Requirement {
                        id: c.id.clone(),
                        text: text.to_string(),
                        status: c.status.unwrap_or(RequirementStatus::Open),
                    }),
                    None => problems.push(missing("requirement", &c.id, &requirement::TEXT)),
                },
                (Op::Revise, None) => problems.push(unknown("requirement", &c.id)),
                (Op::Revise, Some(i)) => {
                    let r = &mut next.requirements[i];
                    if let Some(t) = c.text.as_deref().filter(|t| !t.is_empty()) {
                        r.text = t.to_string();
                    }
                    if let Some(s) = c.status {
                        r.status = s;
                    }
                }
            }
        }
        for c in &changes.conclusions {
            let citations = match &c.citations {
                Some(cs) => match canonical(cs, evidence) {
                    Ok(cs) => Some(cs),
                    Err(p) => {
                        problems.push(p);
                        continue;
                    }
                },
                None => None,
            };
            let existing = next.conclusions.iter().position(|x| x.id == c.id);
            match (c.op, existing) {
                (Op::Add, Some(_)) => problems.push(duplicate("conclusion", &c.id)),
                (Op::Add, None) => {
                    let claim = c.claim.as_deref().filter(|t| !t.is_empty());
                    let cites = citations.filter(|cs| !cs.is_empty());
                    match (claim, cites) {
                        (None, _) => {
                            problems.push(missing("conclusion", &c.id, &conclusion::CLAIM))
                        }
                        (_, None) => {
                            problems.push(missing("conclusion", &c.id, &conclusion::CITATIONS))
                        }
                        (Some(claim), Some(citations)) => next.conclusions.push(Conclusion {
                            id: c.id.clone(),
                            claim: claim.to_string(),
                            status: c.status.unwrap_or(ConclusionStatus::Supported),
                            citations,
                            depends_on: c.depends_on.clone().unwrap_or_default(),
                        }),
                    }
                }
                (Op::Revise, None) => problems.push(unknown("conclusion", &c.id)),
                (Op::Revise, Some(i)) => {
                    let x = &mut next.conclusions[i];
                    let before = x.clone();
                    if let Some(claim) = c.claim.as_deref().filter(|t| !t.is_empty()) {
                        x.claim = claim.to_string();
                    }
                    if let Some(s) = c.status {
                        x.status = s;
                    }
                    if let Some(cs) = citations {
                        x.citations = cs;
                    }
                    if let Some(d) = &c.depends_on {
                        x.depends_on = d.clone();
                    }
                    if *x != before && !revised.contains(&x.id) {
                        revised.push(x.id.clone());
                    }
                }
            }
        }
        // Dependencies may name only conclusions that exist once the batch is applied.
        for x in &next.conclusions {
            for d in &x.depends_on {
                if *d == x.id || !next.conclusions.iter().any(|y| &y.id == d) {
                    problems.push(Rejection::new(
                        RejectCause::UnknownEntry,
                        format!(
                            "conclusion {} depends on {d}, which is not another conclusion",
                            x.id
                        ),
                    ));
                }
            }
        }
        match problems.first() {
            None => Ok(Applied {
                lists: next,
                revised,
            }),
            Some(first) => Err(Rejection {
                other_causes: problems[1..].iter().map(|p| p.cause).collect(),
                ..Rejection::new(
                    first.cause,
                    problems
                        .iter()
                        .map(|p| p.message.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            }),
        }
    }

    /// Conclusions that depend, directly or through others, on any of `ids` (excluding
    /// `ids` themselves), in list order.
    pub fn dependents_of(&self, ids: &[String]) -> Vec<String> {
        let mut affected: Vec<String> = Vec::new();
        loop {
            let before = affected.len();
            for x in &self.conclusions {
                if ids.contains(&x.id) || affected.contains(&x.id) {
                    continue;
                }
                if x.depends_on
                    .iter()
                    .any(|d| ids.contains(d) || affected.contains(d))
                {
                    affected.push(x.id.clone());
                }
            }
            if affected.len() == before {
                return affected;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty() && self.conclusions.is_empty()
    }

    /// The lists as the prompt shows them.
    pub fn render(&self) -> String {
        let mut out = String::from("Requirements:");
        if self.requirements.is_empty() {
            out.push_str("\n(none yet)");
        }
        for r in &self.requirements {
            out.push_str(&format!(
                "\n- {} [{}] {}",
                r.id,
                status_name(&r.status),
                r.text
            ));
        }
        out.push_str("\nConclusions:");
        if self.conclusions.is_empty() {
            out.push_str("\n(none yet)");
        }
        for c in &self.conclusions {
            let cites = c
                .citations
                .iter()
                .map(|x| format!("{} #{}", x.title, x.sentence))
                .collect::<Vec<_>>()
                .join("; ");
            out.push_str(&format!(
                "\n- {} [{}] {} (cites: {cites})",
                c.id,
                status_name(&c.status),
                c.claim
            ));
            if !c.depends_on.is_empty() {
                out.push_str(&format!(" (depends on: {})", c.depends_on.join(", ")));
            }
        }
        out
    }
}

fn status_name<T: Serialize>(status: &T) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Citations with titles as stored; an error names every sentence not read.
fn canonical(citations: &[Citation], evidence: &EvidenceStore) -> Result<Vec<Citation>, Rejection> {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for c in citations {
        match evidence.get(&c.title, c.sentence) {
            Some(r) => out.push(Citation {
                title: r.title().to_string(),
                sentence: r.sentence(),
            }),
            None => bad.push(format!("\"{}\" sentence {}", c.title, c.sentence)),
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Rejection::new(
            RejectCause::InvalidCitation,
            format!(
                "cited sentences that have not been read: {}",
                bad.join(", ")
            ),
        ))
    }
}

fn duplicate(list: &str, id: &str) -> Rejection {
    Rejection::new(
        RejectCause::DuplicateEntry,
        format!("{list} {id} already exists (use op revise to change it)"),
    )
}

fn unknown(list: &str, id: &str) -> Rejection {
    Rejection::new(
        RejectCause::UnknownEntry,
        format!("{list} {id} does not exist, so it cannot be revised"),
    )
}

fn missing(list: &str, id: &str, field: &Field) -> Rejection {
    Rejection::new(
        RejectCause::MissingField,
        format!("the new {list} {id} needs `{}`", field.name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn evidence() -> EvidenceStore {
        let mut e = EvidenceStore::default();
        e.add_paragraph("Humphrey", &["His mother was Eleanor.".into()], 1);
        e.add_paragraph(
            "Eleanor",
            &["Eleanor had a sister.".into(), "Mary.".into()],
            2,
        );
        e
    }

    fn changes(v: Value) -> ListChanges {
        ListChanges::parse(v.as_object().unwrap()).unwrap()
    }

    fn base() -> Lists {
        Lists::default()
            .apply(
                &changes(json!({
                    "requirements": [{"op": "add", "id": "R1", "text": "Who is his mother?"}],
                    "conclusions": [{"op": "add", "id": "C1", "claim": "Mother is Eleanor",
                        "citations": [{"title": "humphrey", "sentence": 0}]}]
                })),
                &evidence(),
            )
            .unwrap()
            .lists
    }

    #[test]
    fn valid_changes_apply_with_defaults_and_canonical_titles() {
        let lists = base();
        assert_eq!(lists.requirements[0].status, RequirementStatus::Open);
        assert_eq!(lists.conclusions[0].status, ConclusionStatus::Supported);
        assert_eq!(lists.conclusions[0].citations[0].title, "Humphrey");
        let applied = lists
            .apply(
                &changes(json!({
                    "requirements": [{"op": "revise", "id": "R1", "status": "met"}],
                    "conclusions": [{"op": "revise", "id": "C1", "status": "tentative"}]
                })),
                &evidence(),
            )
            .unwrap();
        assert_eq!(applied.lists.requirements[0].status, RequirementStatus::Met);
        assert_eq!(applied.revised, ["C1"]);
    }

    #[test]
    fn one_invalid_change_rejects_the_whole_batch() {
        let lists = base();
        for (bad, cause) in [
            (
                json!({"op": "revise", "id": "C9", "claim": "x"}),
                RejectCause::UnknownEntry,
            ),
            (
                json!({"op": "add", "id": "C1", "claim": "x",
                "citations": [{"title": "Eleanor", "sentence": 1}]}),
                RejectCause::DuplicateEntry,
            ),
            (
                json!({"op": "add", "id": "C2", "claim": "Aunt is Mary",
                "citations": [{"title": "Eleanor", "sentence": 7}]}),
                RejectCause::InvalidCitation,
            ),
            (
                json!({"op": "add", "id": "C2", "claim": "Aunt is Mary",
                "citations": [{"title": "Mary de Bohun", "sentence": 0}]}),
                RejectCause::InvalidCitation,
            ),
            (
                json!({"op": "add", "id": "C2", "claim": "no citation"}),
                RejectCause::MissingField,
            ),
            (
                json!({"op": "add", "id": "C2", "claim": "x", "depends_on": ["C7"],
                "citations": [{"title": "Eleanor", "sentence": 1}]}),
                RejectCause::UnknownEntry,
            ),
        ] {
            // A valid requirement change travels with the bad conclusion change: it must
            // not be applied either.
            let batch = changes(json!({
                "requirements": [{"op": "add", "id": "R2", "text": "Who is her sister?"}],
                "conclusions": [bad]
            }));
            let err = lists.apply(&batch, &evidence()).unwrap_err();
            assert_eq!(err.cause, cause, "{}", err.message);
            assert_eq!(lists, base(), "the lists must be unchanged");
        }
    }

    #[test]
    fn shape_errors_are_typed() {
        let parse = |v: Value| {
            ListChanges::parse(v.as_object().unwrap())
                .unwrap_err()
                .cause
        };
        assert_eq!(parse(json!({"requirements": "R1"})), RejectCause::WrongType);
        assert_eq!(
            parse(json!({"requirements": [{"id": "R1"}]})),
            RejectCause::MissingField
        );
        assert_eq!(
            parse(json!({"requirements": [{"op": "add", "id": "R1", "status": "done"}]})),
            RejectCause::WrongType
        );
    }

    #[test]
    fn dependents_are_found_transitively() {
        let mut lists = base();
        for (id, dep) in [("C2", "C1"), ("C3", "C2"), ("C4", "")] {
            lists.conclusions.push(Conclusion {
                id: id.into(),
                claim: "x".into(),
                status: ConclusionStatus::Supported,
                citations: vec![],
                depends_on: if dep.is_empty() {
                    vec![]
                } else {
                    vec![dep.into()]
                },
            });
        }
        assert_eq!(lists.dependents_of(&["C1".into()]), ["C2", "C3"]);
        assert!(lists
            .render()
            .contains("C3 [supported] x (cites: ) (depends on: C2)"));
    }
}
