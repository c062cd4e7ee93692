//! EIR's final answer call, across the evidence–inference boundary: its prompt is built
//! from the question text and the evidence records alone — never the lists, the
//! reasoning, or any answer given during retrieval. The function's inputs enforce that:
//! it receives a question string and an [`EvidenceStore`], nothing else from the
//! trajectory. Full Pool calls it with every paragraph of the pool.

use super::json::{
    extract_object, opt_array, opt_string, parse_citations, Citation, Extraction, RejectCause,
    Rejection,
};
use super::schema::{self, final_reply};
use super::trajectory::request;
use crate::env::EvidenceStore;
use crate::methods::outputs::{Evidence, FinalCall, Outputs};
use crate::methods::settings::{EirSettings, FinalCitations};
use crate::methods::{
    call_model, AgentError, CallKind, Episode, PromptSet, RunContext, StopReason,
};
use minijinja::context;
use serde::Serialize;

/// The evidence as the templates see it: paragraphs with numbered sentences.
#[derive(Serialize)]
pub struct EvidenceView {
    title: String,
    sentences: Vec<SentenceView>,
}

#[derive(Serialize)]
struct SentenceView {
    n: usize,
    text: String,
}

pub fn evidence_view(store: &EvidenceStore) -> Vec<EvidenceView> {
    store
        .paragraphs()
        .into_iter()
        .map(|(title, records)| EvidenceView {
            title: title.to_string(),
            sentences: records
                .iter()
                .map(|r| SentenceView {
                    n: r.sentence(),
                    text: r.text().trim().to_string(),
                })
                .collect(),
        })
        .collect()
}

/// What the final call answered.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalAnswer {
    pub answer: Option<String>,
    /// Citations that name read sentences (titles as stored).
    pub evidence: Vec<Citation>,
    /// Citations dropped because they named no read sentence.
    pub dropped: usize,
    /// Why citations of the response were refused (EIR App. H.4: invalid citations and
    /// wrong types are rejection causes): named here, never dropped in silence.
    pub rejection: Option<Rejection>,
    pub raw: String,
}

impl FinalAnswer {
    /// Closes `episode` on this answer, the method's answer (EIR paper §3.3): finished
    /// when the final response could be read, a parse failure otherwise, and a context
    /// overflow whenever a prompt of the episode no longer fit (that stop stays). Every
    /// method that answers by a final call ends here: EIR, Full Pool, the recovery tests
    /// and `sleuth-eir`.
    pub fn close<O>(&self, episode: &mut Episode<O>) {
        if episode.stop != StopReason::ContextOverflow {
            episode.stop = if self.answer.is_some() {
                StopReason::Finished
            } else {
                StopReason::ParseFailure
            };
        }
        episode.answer = self.answer.clone();
    }

    /// The evidence the answer rests on (no refused actions: those are the trajectory's).
    pub fn evidence(&self) -> Evidence {
        Evidence {
            cited: self.evidence.clone(),
            dropped_citations: self.dropped,
            rejected: Default::default(),
        }
    }

    /// The record's final-call output for this answer, from `records` evidence records;
    /// the retrieval-side fields are the method's to fill.
    pub fn output(&self, records: usize) -> FinalCall {
        FinalCall {
            response: self.raw.clone(),
            parsed: self.answer.is_some(),
            rejection: self.rejection.clone(),
            evidence_records: records,
            ..FinalCall::default()
        }
    }
}

/// The final prompt: question and evidence only.
pub fn final_prompt(
    prompts: &PromptSet,
    question: &str,
    store: &EvidenceStore,
) -> Result<String, AgentError> {
    prompts
        .render(
            "eir_final.txt",
            context! { question, paragraphs => evidence_view(store) },
        )
        .map_err(AgentError::from)
}

/// Reads the answer and citations from the final response: the JSON object if there
/// is one, otherwise an `Answer:` line, otherwise a bare one-line reply. Citations that
/// name no read sentence, or are written in the wrong form, are refused with their
/// cause in [`FinalAnswer::rejection`] (EIR App. H.4); what that does to the answer is
/// [`FinalCitations`]'s, applied by [`final_call`].
pub fn parse_final(text: &str, store: &EvidenceStore) -> FinalAnswer {
    let mut out = FinalAnswer {
        answer: None,
        evidence: Vec::new(),
        dropped: 0,
        rejection: None,
        raw: text.to_string(),
    };
    if let Some(obj) = extract_object(text, Extraction::Tolerant) {
        out.answer = opt_string(&obj, &final_reply::ANSWER).ok().flatten();
        let cited = opt_array(&obj, &final_reply::EVIDENCE).and_then(parse_citations);
        let cited = match cited {
            Ok(cited) => cited,
            Err(r) => {
                out.rejection = Some(r);
                Vec::new()
            }
        };
        let mut unread = Vec::new();
        for c in cited {
            match store.get(&c.title, c.sentence) {
                Some(r) => {
                    let c = Citation {
                        title: r.title().to_string(),
                        sentence: r.sentence(),
                    };
                    if !out.evidence.contains(&c) {
                        out.evidence.push(c);
                    }
                }
                None => {
                    out.dropped += 1;
                    unread.push(format!("\"{}\" sentence {}", c.title, c.sentence));
                }
            }
        }
        if !unread.is_empty() {
            out.rejection = Some(Rejection::new(
                RejectCause::InvalidCitation,
                format!(
                    "the final answer cites sentences that are not in the evidence: {}",
                    unread.join(", ")
                ),
            ));
        }
    } else {
        let line = text
            .lines()
            .find_map(|l| {
                // Markdown emphasis around the label ("**Answer:**") is dropped first.
                let l = l.replace(['*', '#'], "");
                let l = l.trim();
                l.get(..7)
                    .filter(|p| p.eq_ignore_ascii_case("answer:"))
                    .map(|_| l[7..].trim().to_string())
            })
            .or_else(|| {
                let t = text.trim();
                (!t.contains('\n') && !t.contains('{') && t.chars().count() <= 200)
                    .then(|| t.to_string())
            });
        out.answer = line;
    }
    out.answer = out.answer.filter(|a| !a.is_empty());
    out
}

/// Makes the final call and counts it as `Final`. On overflow the answer is `None`
/// and the episode's stop reason says so; `retrieved` goes into a partial episode when
/// the call fails.
pub async fn final_call<O: Clone + Into<Outputs>>(
    ctx: &RunContext,
    settings: &EirSettings,
    prompts: &PromptSet,
    episode: &mut Episode<O>,
    question: &str,
    store: &EvidenceStore,
    retrieved: &[String],
) -> Result<FinalAnswer, AgentError> {
    let prompt = final_prompt(prompts, question, store)?;
    let req = request(settings, prompt, schema::final_answer());
    match call_model(ctx, &req, CallKind::Final, episode, None, retrieved).await? {
        Some(text) => {
            let mut answer = parse_final(&text, store);
            if settings.final_citations == FinalCitations::RejectAnswer
                && answer.rejection.is_some()
            {
                answer.answer = None;
                answer.evidence.clear();
            }
            Ok(answer)
        }
        None => {
            episode.stop = StopReason::ContextOverflow;
            Ok(FinalAnswer {
                answer: None,
                evidence: Vec::new(),
                dropped: 0,
                rejection: None,
                raw: String::new(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> EvidenceStore {
        let mut s = EvidenceStore::default();
        s.add_paragraph("Mary de Bohun", &["Mary was Eleanor's sister.".into()], 2);
        s
    }

    #[test]
    fn parses_json_and_drops_citations_of_unread_sentences() {
        let f = parse_final(
            "Here: {\"answer\": \"Mary de Bohun\", \"evidence\": [{\"title\": \"mary de bohun\", \"sentence\": 0}, {\"title\": \"X\", \"sentence\": 1}]}",
            &store(),
        );
        assert_eq!(f.answer.as_deref(), Some("Mary de Bohun"));
        assert_eq!(
            f.evidence,
            [Citation {
                title: "Mary de Bohun".into(),
                sentence: 0
            }]
        );
        assert_eq!(f.dropped, 1);
        let why = f.rejection.unwrap();
        assert_eq!(why.cause, RejectCause::InvalidCitation);
        assert!(why.message.contains("\"X\" sentence 1"), "{}", why.message);
        let typed = parse_final(
            "{\"answer\": \"Mary\", \"evidence\": [{\"title\": \"Mary de Bohun\", \"sentence\": \"first\"}]}",
            &store(),
        );
        assert_eq!(typed.answer.as_deref(), Some("Mary"));
        assert_eq!(typed.rejection.unwrap().cause, RejectCause::WrongType);
    }

    #[test]
    fn falls_back_to_an_answer_line_or_a_bare_reply() {
        assert_eq!(
            parse_final("Reasoning...\n**Answer:** Mary", &store())
                .answer
                .as_deref(),
            Some("Mary")
        );
        assert_eq!(
            parse_final("Mary de Bohun", &store()).answer.as_deref(),
            Some("Mary de Bohun")
        );
        assert_eq!(parse_final("I think\nit is unclear", &store()).answer, None);
    }

    /// One rule closes every final-call method's episode; an overflow always stays (the
    /// recovery tests used to record it as a parse failure).
    #[test]
    fn closing_on_the_final_answer_keeps_an_overflow() {
        let answered = parse_final("Mary de Bohun", &store());
        let unread = parse_final("I think\nit is unclear", &store());
        let stop = |answer: &FinalAnswer, before: StopReason| {
            let mut episode: Episode = Episode {
                stop: before,
                ..Episode::default()
            };
            answer.close(&mut episode);
            (episode.stop, episode.answer)
        };
        assert_eq!(
            stop(&answered, StopReason::Timeout),
            (StopReason::Finished, Some("Mary de Bohun".into()))
        );
        assert_eq!(
            stop(&unread, StopReason::Finished),
            (StopReason::ParseFailure, None)
        );
        assert_eq!(
            stop(&answered, StopReason::ContextOverflow).0,
            StopReason::ContextOverflow
        );
    }

    #[test]
    fn prompt_labels_sentences_by_paragraph_and_number() {
        let p = final_prompt(&PromptSet::default(), "Who is the aunt?", &store()).unwrap();
        assert!(p.contains("Question: Who is the aunt?"));
        assert!(
            p.contains("[Mary de Bohun]\n(0) Mary was Eleanor's sister."),
            "{p}"
        );
        let empty = final_prompt(&PromptSet::default(), "Q?", &EvidenceStore::default()).unwrap();
        assert!(empty.contains("(no paragraph has been read)"));
    }
}
