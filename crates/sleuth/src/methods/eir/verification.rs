//! Agentic SSR's verification of one proposal (EIR paper App. D.1): the rules of the vote
//! and the typed record the trace keeps of it (`verification` on each turn).
//!
//! A part qualifies for refinement when it has at least two rejections, a majority of
//! its valid judgments reject it, and a majority of the rejections agree on one
//! correction. Invalid judgments do not vote. A correction is *agreed* only when at
//! least two rejections give it and they are a majority of the rejections: a lone
//! rejection's correction is no agreement (D.1's fallback uses only an agreed one). Of the qualifying parts, the one with the
//! lowest confidence (the share of valid judgments accepting it; ties go to the later
//! part) is refined. The calls that produce the judgments are `ssr.rs`'s.

use super::json::{extract_object, opt_string, parse_move, Extraction, Move, Rejection};
use super::schema::{decomposition, reply, verdict, Field};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Verifier samples per part.
pub const SAMPLES: u32 = 3;

/// A part of a decomposed proposal, named as the decomposition call writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Facts,
    Justification,
    Action,
}

/// The three parts, in order.
pub const PARTS: [Part; 3] = [Part::Facts, Part::Justification, Part::Action];

impl Part {
    /// The part's field in the decomposition call's format.
    pub fn field(self) -> &'static Field {
        match self {
            Part::Facts => &decomposition::FACTS,
            Part::Justification => &decomposition::JUSTIFICATION,
            Part::Action => &decomposition::ACTION,
        }
    }

    /// Its name in prompts and in the trace.
    pub fn name(self) -> &'static str {
        self.field().name
    }
}

/// A proposal decomposed into its parts (the decomposition call's reply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decomposition {
    pub facts: String,
    pub justification: String,
    pub action: String,
}

impl Decomposition {
    /// Reads a decomposition reply; `None` unless every part is there.
    pub fn parse(text: &str) -> Option<Decomposition> {
        let obj = extract_object(text, Extraction::Tolerant)?;
        let part = |p: Part| opt_string(&obj, p.field()).ok().flatten();
        Some(Decomposition {
            facts: part(Part::Facts)?,
            justification: part(Part::Justification)?,
            action: part(Part::Action)?,
        })
    }

    pub fn part(&self, part: Part) -> &str {
        match part {
            Part::Facts => &self.facts,
            Part::Justification => &self.justification,
            Part::Action => &self.action,
        }
    }
}

/// One verifier judgment that could be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgment {
    pub reject: bool,
    pub correction: String,
}

/// Reads a verifier reply; `None` (an invalid judgment) when it has no clear verdict.
pub fn parse_judgment(text: &str) -> Option<Judgment> {
    let obj = extract_object(text, Extraction::Tolerant)?;
    let said = opt_string(&obj, &verdict::VERDICT)
        .ok()??
        .to_ascii_lowercase();
    let reject = if verdict::ACCEPT.accepts(&said) {
        false
    } else if verdict::REJECT.accepts(&said) {
        true
    } else {
        return None;
    };
    let correction = opt_string(&obj, &verdict::CORRECTION)
        .ok()
        .flatten()
        .unwrap_or_default();
    Some(Judgment { reject, correction })
}

/// One part's judgments, in sample order (`None` marks an invalid one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartJudgments {
    pub part: Part,
    pub judgments: Vec<Option<Judgment>>,
}

/// The vote on one part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartVote {
    pub part: Part,
    pub valid: u32,
    pub rejections: u32,
    /// Share of valid judgments accepting the part (0 when none is valid).
    pub confidence: f64,
    /// The correction at least two rejections agree on, when they are a majority of the
    /// rejections (EIR App. D.1); `None` for a lone rejection's correction.
    pub agreed: Option<String>,
    pub qualifies: bool,
}

/// Corrections agree when they are the same text up to case, spacing and end punctuation.
fn correction_key(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_end_matches(['.', '!', ';', ','])
        .to_string()
}

/// Tallies one part's judgments (`None` marks an invalid one) by the rules above.
pub fn tally(part: Part, judgments: &[Option<Judgment>]) -> PartVote {
    let valid: Vec<&Judgment> = judgments.iter().flatten().collect();
    let rejections: Vec<&Judgment> = valid.iter().copied().filter(|j| j.reject).collect();
    let (n_valid, n_rej) = (valid.len() as u32, rejections.len() as u32);
    let mut groups: Vec<(String, &str, u32)> = Vec::new();
    for j in rejections
        .iter()
        .filter(|j| !j.correction.trim().is_empty())
    {
        let key = correction_key(&j.correction);
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some(g) => g.2 += 1,
            None => groups.push((key, j.correction.trim(), 1)),
        }
    }
    // The largest group; on equal size the first one written.
    let best = groups
        .iter()
        .fold(None::<&(String, &str, u32)>, |b, g| match b {
            Some(b) if b.2 >= g.2 => Some(b),
            _ => Some(g),
        });
    // EIR App. D.1: refinement needs "at least two rejections" and "a majority of those
    // rejections agreeing on a correction"; agreement takes two, so one rejection's
    // correction (the majority of one) is not agreed.
    let agreed = best
        .filter(|g| g.2 >= 2 && 2 * g.2 > n_rej)
        .map(|g| g.1.to_string());
    let qualifies = n_rej >= 2 && 2 * n_rej > n_valid && agreed.is_some();
    PartVote {
        part,
        valid: n_valid,
        rejections: n_rej,
        confidence: if n_valid == 0 {
            0.0
        } else {
            (n_valid - n_rej) as f64 / n_valid as f64
        },
        agreed,
        qualifies,
    }
}

/// The part to refine: the qualifying one with the lowest confidence, ties to the later.
pub fn pick(votes: &[PartVote]) -> Option<usize> {
    let mut chosen: Option<usize> = None;
    for (i, v) in votes.iter().enumerate().filter(|(_, v)| v.qualifies) {
        if chosen.is_none_or(|c| v.confidence <= votes[c].confidence) {
            chosen = Some(i);
        }
    }
    chosen
}

/// Reads an action out of a correction's text: a JSON action, or `read <title>` /
/// `submit <answer>` in plain words.
pub fn correction_action(text: &str) -> Option<Move> {
    if let Some(obj) = extract_object(text, Extraction::Tolerant) {
        let key = reply::ACTION.name;
        let wrapped: Map<String, Value> = if obj.contains_key(key) {
            obj
        } else {
            [(key.to_string(), Value::Object(obj))]
                .into_iter()
                .collect()
        };
        return parse_move(&wrapped).ok();
    }
    let t = text.trim();
    let lower = t.to_lowercase();
    let strip = |rest: &str| {
        rest.trim_matches(|c: char| c.is_whitespace() || ":[]()\"'“”.".contains(c))
            .to_string()
    };
    for prefix in ["read", "search", "submit", "answer"] {
        if lower.starts_with(prefix) {
            let arg = strip(&t[prefix.len()..]);
            if arg.is_empty() {
                return None;
            }
            return Some(match prefix {
                "read" => Move::Read { title: arg },
                "search" => Move::Search { query: arg },
                _ => Move::Submit {
                    answer: arg,
                    evidence: vec![],
                },
            });
        }
    }
    None
}

/// How one verification ended: which action runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The decomposition could not be read: the proposal runs.
    #[serde(rename = "kept: decomposition unreadable")]
    DecompositionUnreadable,
    /// No part qualified for refinement: the proposal runs.
    #[serde(rename = "kept: no part qualified")]
    NoPartQualified,
    /// The refinement's action runs.
    #[serde(rename = "refined")]
    Refined,
    /// The refinement was unreadable; the action part's agreed correction runs.
    #[serde(rename = "action correction")]
    ActionCorrection,
    /// The refinement was unreadable and no correction gave an action: the proposal runs.
    #[serde(rename = "kept: refinement unreadable")]
    RefinementUnreadable,
    /// The refinement's action parsed but would be refused (`Refinement::rejection`
    /// says why), and no correction gave a valid action: the proposal runs.
    #[serde(rename = "kept: refinement invalid")]
    RefinementInvalid,
}

/// The refinement call of a verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refinement {
    pub refined_part: Part,
    /// The refinement's response (`None` when its prompt no longer fit the context).
    pub refinement: Option<String>,
    /// Why the refinement gave no valid action (unreadable, or an action the trajectory
    /// would refuse); absent when it gave one or its prompt no longer fit.
    #[serde(
        rename = "refinement_rejection",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub rejection: Option<Rejection>,
}

/// One proposal's verification as the trace keeps it: the decomposition, every judgment,
/// the votes, the refinement if a part qualified, and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub decomposition: Option<Decomposition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judgments: Vec<PartJudgments>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub votes: Vec<PartVote>,
    #[serde(flatten)]
    pub refinement: Option<Refinement>,
    pub outcome: Outcome,
}

impl Verification {
    /// The verification of a proposal whose decomposition could not be read.
    pub fn unreadable() -> Self {
        Verification {
            decomposition: None,
            judgments: Vec::new(),
            votes: Vec::new(),
            refinement: None,
            outcome: Outcome::DecompositionUnreadable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn j(reject: bool, correction: &str) -> Option<Judgment> {
        Some(Judgment {
            reject,
            correction: correction.into(),
        })
    }

    #[test]
    fn a_part_qualifies_only_with_two_rejections_a_majority_and_an_agreed_correction() {
        let v = tally(
            Part::Facts,
            &[j(true, "X is Y."), j(true, "x is  y"), j(false, "")],
        );
        assert!(v.qualifies);
        assert_eq!((v.valid, v.rejections), (3, 2));
        assert_eq!(v.agreed.as_deref(), Some("X is Y."));
        assert!((v.confidence - 1.0 / 3.0).abs() < 1e-12);

        // Two rejections but they disagree on the correction.
        assert!(!tally(Part::Facts, &[j(true, "A"), j(true, "B"), j(false, "")]).qualifies);
        // One rejection only (the other judgments are invalid and do not vote).
        let v = tally(Part::Facts, &[j(true, "A"), None, None]);
        assert!(!v.qualifies && v.valid == 1);
        // A lone rejection's correction is no agreement, even among valid judgments.
        let v = tally(
            Part::Action,
            &[j(true, "Submit X"), j(false, ""), j(false, "")],
        );
        assert_eq!((v.rejections, v.agreed.as_deref()), (1, None));
        // Three rejections, two agreeing: agreed; all three different: not.
        let v = tally(Part::Action, &[j(true, "A"), j(true, "B"), j(true, "a")]);
        assert_eq!(v.agreed.as_deref(), Some("A"));
        assert!(v.qualifies);
        let v = tally(Part::Action, &[j(true, "A"), j(true, "B"), j(true, "C")]);
        assert!(v.agreed.is_none() && !v.qualifies);
        // Two of two valid judgments reject and agree: qualifies even with one invalid.
        assert!(tally(Part::Facts, &[j(true, "A"), j(true, "a."), None]).qualifies);
        // Rejections without any correction cannot agree.
        assert!(!tally(Part::Facts, &[j(true, ""), j(true, ""), j(true, "")]).qualifies);
    }

    #[test]
    fn refinement_goes_to_the_lowest_confidence_qualifying_part_ties_to_the_later() {
        let q2 = tally(Part::Facts, &[j(true, "c"), j(true, "c"), j(false, "")]);
        let q3 = tally(
            Part::Justification,
            &[j(true, "c"), j(true, "c"), j(true, "c")],
        );
        let q3b = tally(Part::Action, &[j(true, "d"), j(true, "d"), j(true, "d")]);
        let no = tally(Part::Action, &[j(false, ""), j(false, ""), j(false, "")]);
        assert_eq!(pick(&[q2.clone(), q3.clone(), no.clone()]), Some(1));
        assert_eq!(pick(&[q2.clone(), q3, q3b]), Some(2));
        assert_eq!(pick(&[no.clone(), no.clone(), no]), None);
    }

    #[test]
    fn verifier_replies_and_action_corrections_parse() {
        assert_eq!(
            parse_judgment("{\"verdict\": \"Reject\", \"correction\": \"r\"}"),
            j(true, "r")
        );
        assert_eq!(parse_judgment("{\"verdict\": \"maybe\"}"), None);
        assert_eq!(parse_judgment("looks fine"), None);
        assert_eq!(
            correction_action("Read \"Mary de Bohun\""),
            Some(Move::Read {
                title: "Mary de Bohun".into()
            })
        );
        assert_eq!(
            correction_action("{\"type\": \"submit\", \"answer\": \"Mary\"}"),
            Some(Move::Submit {
                answer: "Mary".into(),
                evidence: vec![]
            })
        );
        assert_eq!(correction_action("think again"), None);
    }

    /// The trace names parts and decomposition fields as the decomposition call does.
    #[test]
    fn parts_are_named_by_the_decomposition_format() {
        let d = Decomposition {
            facts: "f".into(),
            justification: "j".into(),
            action: "a".into(),
        };
        let keys: Vec<String> = serde_json::to_value(&d)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let names: Vec<&str> = PARTS.iter().map(|p| p.name()).collect();
        assert_eq!(keys, names);
        for p in PARTS {
            assert_eq!(serde_json::to_value(p).unwrap(), json!(p.name()));
            assert_eq!(d.part(p), &p.name()[..1]);
        }
    }

    /// The typed record writes what the untyped one wrote, key for key, in every outcome,
    /// and reads it back.
    #[test]
    fn a_verification_serializes_as_the_trace_always_recorded_it() {
        let unreadable = serde_json::to_string(&Verification::unreadable()).unwrap();
        assert_eq!(
            unreadable,
            r#"{"decomposition":null,"outcome":"kept: decomposition unreadable"}"#
        );
        let refined = Verification {
            decomposition: Some(Decomposition {
                facts: "f".into(),
                justification: "j".into(),
                action: "a".into(),
            }),
            judgments: vec![PartJudgments {
                part: Part::Action,
                judgments: vec![j(true, "c"), None],
            }],
            votes: vec![tally(Part::Action, &[j(true, "c"), None])],
            refinement: Some(Refinement {
                refined_part: Part::Action,
                refinement: None,
                rejection: None,
            }),
            outcome: Outcome::RefinementUnreadable,
        };
        let text = serde_json::to_string(&refined).unwrap();
        assert_eq!(
            text,
            "{\"decomposition\":{\"facts\":\"f\",\"justification\":\"j\",\"action\":\"a\"},\
             \"judgments\":[{\"part\":\"action\",\"judgments\":[{\"reject\":true,\"correction\":\"c\"},null]}],\
             \"votes\":[{\"part\":\"action\",\"valid\":1,\"rejections\":1,\"confidence\":0.0,\"agreed\":null,\"qualifies\":false}],\
             \"refined_part\":\"action\",\"refinement\":null,\"outcome\":\"kept: refinement unreadable\"}"
        );
        assert_eq!(
            serde_json::from_str::<Verification>(&text).unwrap(),
            refined
        );
        assert_eq!(
            serde_json::from_str::<Verification>(&unreadable).unwrap(),
            Verification::unreadable()
        );
    }
}
