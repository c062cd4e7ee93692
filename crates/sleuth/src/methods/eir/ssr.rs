//! Agentic SSR: Socratic Self-Refine adapted to action selection, as the EIR paper's
//! Appendix D.1 specifies it.
//!
//! Per proposed action: one call decomposes the proposal into established facts, the
//! justification, and the action; three verifier calls judge each part (at the verifier
//! temperature, 0.7 by default, each with its own sample index so a response cache never
//! merges them). A part qualifies for refinement when it has at least two rejections, a
//! majority of its valid judgments reject it, and a majority of the rejections agree on
//! one correction. Invalid judgments do not vote. If any part qualifies, one refinement
//! call revises the qualifying part with the lowest confidence (the share of valid
//! judgments accepting it; ties go to the later part). If the refinement yields no valid
//! action, an agreed correction to the action part is used when there is one; otherwise
//! the original action stands.

use super::direct::{describe, parse_proposal, Direct, Proposal};
use super::json::{extract_object, opt_string, parse_move, Extraction, Move};
use super::schema;
use super::trajectory::Trajectory;
use super::Shared;
use crate::data::Question;
use crate::methods::{AgentError, CallKind, Episode, Method, RunContext, Turn};
use async_trait::async_trait;
use minijinja::context;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The three parts of a decomposed proposal, in order.
pub const PARTS: [&str; 3] = ["facts", "justification", "action"];
/// Verifier samples per part.
pub const SAMPLES: u32 = 3;

/// One verifier judgment that could be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgment {
    pub reject: bool,
    pub correction: String,
}

/// The vote on one part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartVote {
    pub part: &'static str,
    pub valid: u32,
    pub rejections: u32,
    /// Share of valid judgments accepting the part (0 when none is valid).
    pub confidence: f64,
    /// The correction most rejections agree on, if a majority of them do.
    pub agreed: Option<String>,
    pub qualifies: bool,
}

/// Reads a verifier reply; `None` (an invalid judgment) when it has no clear verdict.
pub fn parse_judgment(text: &str) -> Option<Judgment> {
    let obj = extract_object(text, Extraction::Tolerant)?;
    let verdict = opt_string(&obj, "verdict").ok()??.to_ascii_lowercase();
    let reject = match verdict.as_str() {
        "accept" => false,
        "reject" => true,
        _ => return None,
    };
    let correction = opt_string(&obj, "correction")
        .ok()
        .flatten()
        .unwrap_or_default();
    Some(Judgment { reject, correction })
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
pub fn tally(part: &'static str, judgments: &[Option<Judgment>]) -> PartVote {
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
    let agreed = best.filter(|g| 2 * g.2 > n_rej).map(|g| g.1.to_string());
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
        let wrapped: Map<String, Value> = if obj.contains_key("action") {
            obj
        } else {
            [("action".to_string(), Value::Object(obj))]
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

/// Verification of proposals, run inside a Direct trial.
pub struct Checker<'s> {
    shared: &'s Shared,
}

impl Checker<'_> {
    /// Checks one proposal: returns the action to execute and a report for the trace.
    pub async fn check(
        &self,
        question: &Question,
        t: &mut Trajectory<'_>,
        context: &str,
        proposal: &Proposal,
        turn: &Turn,
    ) -> Result<(Move, Value), AgentError> {
        let prompts = &self.shared.prompts;
        let proposal_text = format!(
            "Reasoning: {}\nAction: {}",
            proposal.reasoning,
            describe(&proposal.action)
        );
        let prompt = prompts
            .render(
                "ssr_decompose.txt",
                context! { question => &question.text, context, proposal => &proposal_text },
            )
            .map_err(AgentError::config)?;
        let req = t.request(prompt, schema::decomposition());
        let decomposition = t
            .call(CallKind::Decomposition, &req, Some(turn))
            .await?
            .and_then(|text| extract_object(&text, Extraction::Tolerant))
            .and_then(|obj| {
                PARTS
                    .iter()
                    .map(|p| opt_string(&obj, p).ok().flatten())
                    .collect::<Option<Vec<String>>>()
            });
        let Some(parts) = decomposition else {
            let report =
                json!({"decomposition": null, "outcome": "kept: decomposition unreadable"});
            return Ok((proposal.action.clone(), report));
        };

        let mut votes = Vec::new();
        let mut judgments_log = Vec::new();
        for (i, part) in PARTS.iter().enumerate() {
            let prompt = prompts
                .render(
                    "ssr_verify.txt",
                    context! {
                        question => &question.text,
                        context,
                        facts => &parts[0],
                        justification => &parts[1],
                        action => &parts[2],
                        part,
                    },
                )
                .map_err(AgentError::config)?;
            let mut judgments = Vec::new();
            for sample in 0..SAMPLES {
                let req = t
                    .request(prompt.clone(), schema::verdict())
                    .temperature(self.shared.settings.verifier_temperature)
                    .sample_index(sample);
                let reply = t.call(CallKind::Verification, &req, Some(turn)).await?;
                judgments.push(reply.as_deref().and_then(parse_judgment));
            }
            judgments_log.push(json!({"part": part, "judgments": &judgments}));
            votes.push(tally(PARTS[i], &judgments));
        }

        let mut report = json!({
            "decomposition": {"facts": &parts[0], "justification": &parts[1], "action": &parts[2]},
            "judgments": judgments_log,
            "votes": &votes,
        });
        let Some(chosen) = pick(&votes) else {
            report["outcome"] = json!("kept: no part qualified");
            return Ok((proposal.action.clone(), report));
        };
        report["refined_part"] = json!(PARTS[chosen]);
        let readable = t.env.choices();
        let can_search = t.env.can_search();
        let number = turn.number;
        let prompt = prompts
            .render(
                "ssr_refine.txt",
                context! {
                    question => &question.text,
                    context,
                    readable,
                    can_search,
                    proposal => &proposal_text,
                    part => PARTS[chosen],
                    text => &parts[chosen],
                    correction => votes[chosen].agreed.as_deref().unwrap_or(""),
                    turn => number,
                    turns => t.budget.turns,
                    submit_only => t.is_last(number),
                },
            )
            .map_err(AgentError::config)?;
        let req = t.request(prompt, schema::direct_action(can_search));
        let refined = t.call(CallKind::Refinement, &req, Some(turn)).await?;
        report["refinement"] = json!(refined);
        if let Some(p) = refined.as_deref().and_then(|r| parse_proposal(r).ok()) {
            report["outcome"] = json!("refined");
            return Ok((p.action, report));
        }
        if let Some(mv) = votes[2].agreed.as_deref().and_then(correction_action) {
            report["outcome"] = json!("action correction");
            return Ok((mv, report));
        }
        report["outcome"] = json!("kept: refinement unreadable");
        Ok((proposal.action.clone(), report))
    }
}

/// The method: Direct's loop with every proposal checked.
pub struct Ssr {
    direct: Direct,
    shared: Shared,
}

impl Ssr {
    pub fn new(shared: Shared) -> Self {
        Ssr {
            direct: Direct::new(shared.clone()),
            shared,
        }
    }
}

#[async_trait]
impl Method for Ssr {
    async fn run(&self, question: &Question, ctx: &RunContext) -> Result<Episode, AgentError> {
        let checker = Checker {
            shared: &self.shared,
        };
        self.direct.trial(question, ctx, &[], Some(&checker)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(reject: bool, correction: &str) -> Option<Judgment> {
        Some(Judgment {
            reject,
            correction: correction.into(),
        })
    }

    #[test]
    fn a_part_qualifies_only_with_two_rejections_a_majority_and_an_agreed_correction() {
        let v = tally(
            "facts",
            &[j(true, "X is Y."), j(true, "x is  y"), j(false, "")],
        );
        assert!(v.qualifies);
        assert_eq!((v.valid, v.rejections), (3, 2));
        assert_eq!(v.agreed.as_deref(), Some("X is Y."));
        assert!((v.confidence - 1.0 / 3.0).abs() < 1e-12);

        // Two rejections but they disagree on the correction.
        assert!(!tally("facts", &[j(true, "A"), j(true, "B"), j(false, "")]).qualifies);
        // One rejection only (the other judgments are invalid and do not vote).
        let v = tally("facts", &[j(true, "A"), None, None]);
        assert!(!v.qualifies && v.valid == 1);
        // Two of two valid judgments reject and agree: qualifies even with one invalid.
        assert!(tally("facts", &[j(true, "A"), j(true, "a."), None]).qualifies);
        // Rejections without any correction cannot agree.
        assert!(!tally("facts", &[j(true, ""), j(true, ""), j(true, "")]).qualifies);
    }

    #[test]
    fn refinement_goes_to_the_lowest_confidence_qualifying_part_ties_to_the_later() {
        let q2 = tally("facts", &[j(true, "c"), j(true, "c"), j(false, "")]);
        let q3 = tally("justification", &[j(true, "c"), j(true, "c"), j(true, "c")]);
        let q3b = tally("action", &[j(true, "d"), j(true, "d"), j(true, "d")]);
        let no = tally("action", &[j(false, ""), j(false, ""), j(false, "")]);
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
}
