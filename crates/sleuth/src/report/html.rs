//! The trace viewer: one self-contained HTML page per run (inline CSS and JS, no
//! network requests) listing every question with filters, and per question each turn's
//! working memory, actions, observations, nudges and rejected responses, the EIR
//! setting's final call as a step of its own, and the final answer against the gold.
//! Memory facts whose cited source no earlier observation showed are flagged: the
//! model claims to have read something it never saw.
//!
//! Pages are rendered on our side, so every untrusted string (paragraphs, model
//! output, answers, ids) passes through [`escape_html`]; the script only shows and
//! hides elements and never reads text back into markup.

use super::escape::escape_html as esc;
use crate::eval::analysis::{classify, correct, support_recall};
use crate::eval::RunRecord;
use crate::memory::WorkingMemory;
use crate::methods::Turn;
use crate::names::Named;
use std::collections::BTreeSet;
use std::fmt::Write;

const STYLE: &str = include_str!("trace.css");
const SCRIPT: &str = include_str!("trace.js");

/// Renders the page for one run. `title` names the run (its directory); `config` is
/// shown as `key: value` lines at the top.
pub fn render(title: &str, config: &[(String, String)], records: &[&RunRecord]) -> String {
    let mut page = Vec::new();
    render_to(&mut page, title, config, records).expect("writing to memory cannot fail");
    String::from_utf8(page).expect("the page is text")
}

/// Writes [`render`]'s page to `out` one question at a time, so the page is never held
/// whole (a run of 100,000 questions makes a page of gigabytes; issue 32).
pub fn render_to(
    out: &mut dyn std::io::Write,
    title: &str,
    config: &[(String, String)],
    records: &[&RunRecord],
) -> std::io::Result<()> {
    let methods: BTreeSet<&str> = records.iter().map(|r| r.method.as_str()).collect();
    render_each(out, title, config, &methods, records.iter().map(|r| Ok(*r)))
}

/// [`render_to`] for records that come one at a time (read again from their files):
/// `methods` are the methods the page's filter offers (those of the records).
pub fn render_each<R: std::borrow::Borrow<RunRecord>>(
    out: &mut dyn std::io::Write,
    title: &str,
    config: &[(String, String)],
    methods: &BTreeSet<&str>,
    records: impl IntoIterator<Item = std::io::Result<R>>,
) -> std::io::Result<()> {
    let mut h = String::with_capacity(16384);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>sleuth trace: {}</title><style>{STYLE}</style></head><body>",
        esc(title)
    );
    let _ = write!(
        h,
        "<header><h1>Traces: {}</h1><dl class=\"config\">",
        esc(title)
    );
    for (k, v) in config {
        let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    }
    h.push_str("</dl>");
    filters(&mut h, methods);
    h.push_str("</header><main id=\"list\">");
    for r in records {
        let r = r?;
        out.write_all(h.as_bytes())?;
        h.clear();
        question(&mut h, r.borrow());
    }
    let _ = writeln!(h, "</main><script>{SCRIPT}</script></body></html>");
    out.write_all(h.as_bytes())
}

fn filters(h: &mut String, methods: &BTreeSet<&str>) {
    h.push_str("<form class=\"filters\" onsubmit=\"return false\"><label>method <select id=\"f-method\"><option value=\"\">all</option>");
    for m in methods {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", esc(m));
    }
    h.push_str(
        "</select></label>\
<label>outcome <select id=\"f-outcome\"><option value=\"\">all</option><option value=\"1\">correct</option><option value=\"0\">wrong</option></select></label>\
<label>timeout <select id=\"f-timeout\"><option value=\"\">all</option><option value=\"1\">timed out</option><option value=\"0\">answered</option></select></label>\
<label>id / answer <input id=\"f-text\" type=\"search\" placeholder=\"filter\"></label>\
<span id=\"f-count\"></span></form>",
    );
}

fn question(h: &mut String, r: &RunRecord) {
    let ok = correct(r);
    let search = format!(
        "{} {} {} {}",
        r.id,
        r.question,
        r.answer.as_deref().unwrap_or(""),
        r.gold.join(" ")
    )
    .to_lowercase();
    let _ = write!(
        h,
        "<details class=\"q {}\" id=\"{}\" data-method=\"{}\" data-correct=\"{}\" data-timeout=\"{}\" data-text=\"{}\"><summary>",
        if ok { "right" } else { "wrong" },
        esc(&anchor(r)),
        esc(&r.method),
        u8::from(ok),
        u8::from(r.timed_out),
        esc(&search)
    );
    let _ = write!(
        h,
        "<span class=\"mark\">{}</span> <code>{}</code> <span class=\"method\">{}</span> \
<span class=\"ans\">{}</span> <span class=\"vs\">gold:</span> <span class=\"gold\">{}</span> \
<span class=\"meta\">{} turns · {} · {}</span></summary>",
        if ok { "✔" } else { "✘" },
        esc(&r.id),
        esc(&r.method),
        r.answer
            .as_deref()
            .map_or_else(|| "<i>no answer</i>".to_string(), esc),
        esc(r.gold.first().map(String::as_str).unwrap_or("")),
        r.turns,
        r.stop.name(),
        classify(r).name()
    );
    if !r.question.is_empty() {
        let _ = write!(
            h,
            "<p class=\"question\"><b>Question:</b> {}</p>",
            esc(&r.question)
        );
    }
    facts_table(h, r);
    // Titles shown before each turn. Every environment reports what an observation
    // showed, so an episode with observations is tracked even when they all showed
    // nothing (searches with no result): a fact citing a source then was never shown
    // it. An episode without observations (no tools) has nothing to check against.
    let tracks_shown = r.trace.iter().any(|t| !t.observations.is_empty());
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for t in &r.trace {
        turn(
            h,
            t,
            r.nudge_turn == Some(t.number),
            tracks_shown.then_some(&seen),
        );
        seen.extend(
            t.observations
                .iter()
                .flat_map(|o| &o.shown)
                .map(|s| s.to_lowercase()),
        );
    }
    final_call(h, r);
    let _ = write!(
        h,
        "<div class=\"final {}\"><b>Final answer:</b> {} <b>Gold:</b> {} <b>EM</b> {} <b>F1</b> {:.2}</div></details>",
        if ok { "right" } else { "wrong" },
        r.answer.as_deref().map_or_else(|| "<i>none</i>".to_string(), esc),
        esc(&r.gold.join(" | ")),
        r.em,
        r.f1
    );
}

fn facts_table(h: &mut String, r: &RunRecord) {
    let mut rows: Vec<(&str, String)> = vec![
        ("model", esc(&r.model)),
        ("dataset", esc(&r.dataset)),
        (
            "hops / type",
            format!(
                "{} / {}",
                r.hops.map_or("-".into(), |x| x.to_string()),
                esc(r.kind.as_deref().unwrap_or("-"))
            ),
        ),
        (
            "calls",
            format!(
                "{} ({} in / {} out tokens, ${:.4})",
                r.calls, r.input_tokens, r.output_tokens, r.cost_usd
            ),
        ),
        (
            "nudge / reminders",
            format!(
                "{} / {}",
                r.nudge_turn.map_or("-".into(), |t| format!("turn {t}")),
                r.reminders
            ),
        ),
    ];
    if let Some(a) = r.adherence {
        rows.push(("adherence", format!("{:.0}%", 100.0 * a)));
    }
    let titles: Vec<String> = r
        .retrieved
        .iter()
        .map(|t| {
            let cls = if r.gold_titles.contains(t) {
                " class=\"goldtitle\""
            } else {
                ""
            };
            format!("<span{cls}>{}</span>", esc(t))
        })
        .collect();
    rows.push(("retrieved", titles.join(", ")));
    if !r.gold_titles.is_empty() {
        let recall = support_recall(r).unwrap_or(0.0);
        rows.push((
            "gold paragraphs",
            format!(
                "{} (recall {:.0}%)",
                esc(&r.gold_titles.join(", ")),
                100.0 * recall
            ),
        ));
    }
    if let Some(e) = &r.error {
        rows.push(("error", format!("<span class=\"err\">{}</span>", esc(e))));
    }
    if !r.settings.is_empty() {
        let pairs: Vec<String> = r.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        rows.push(("settings", esc(&pairs.join(" "))));
    }
    if let Some(f1) = r.support_f1 {
        rows.push(("support F1", format!("{:.0}%", 100.0 * f1)));
    }
    if let Some(e) = &r.outputs.evidence {
        let cited: Vec<String> = e
            .cited
            .iter()
            .map(|c| format!("{} ({})", c.title, c.sentence))
            .collect();
        rows.push(("cited", esc(&cited.join("; "))));
        if e.rejected_total() > 0 {
            let causes: Vec<String> = e
                .rejected
                .iter()
                .map(|(c, n)| format!("{} {n}", c.name()))
                .collect();
            rows.push(("rejected actions", esc(&causes.join(", "))));
        }
    }
    if let Some(first) = &r.first_attempt {
        rows.push((
            "first attempt",
            format!(
                "{} (EM {:.0}; {} attempts)",
                esc(first.answer.as_deref().unwrap_or("no answer")),
                100.0 * first.em,
                r.outputs.attempts.len()
            ),
        ));
    }
    h.push_str("<table class=\"facts\">");
    for (k, v) in rows {
        let _ = write!(h, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    h.push_str("</table>");
}

/// The anchor of a record's entry: `trace.html#q-<method>-<id>`.
pub fn anchor(r: &RunRecord) -> String {
    anchor_of(&r.method, &r.id)
}

/// [`anchor`] of the record of question `id` under `method`.
pub fn anchor_of(method: &str, id: &str) -> String {
    format!("q-{}-{}", super::slug(method), super::slug(id))
}

/// The EIR setting's final call: one step after the retrieval turns, with what the
/// trajectory submitted, the lists it ended with, and the answer and citations.
fn final_call(h: &mut String, r: &RunRecord) {
    let Some(f) = &r.outputs.final_call else {
        return;
    };
    h.push_str("<section class=\"turn final-call\"><h3>Final call");
    if f.forced_end {
        h.push_str(" <span class=\"badge warn\">retrieval ended without a submission</span>");
    }
    if !f.parsed {
        h.push_str(" <span class=\"badge warn\">response not readable</span>");
    }
    h.push_str("</h3><table class=\"facts\">");
    let mut row = |k: &str, v: String| {
        let _ = write!(h, "<tr><th>{k}</th><td>{v}</td></tr>");
    };
    row(
        "retrieval answer",
        f.retrieval_answer
            .as_deref()
            .map_or_else(|| "<i>none</i>".to_string(), esc),
    );
    row("evidence records", f.evidence_records.to_string());
    row(
        "lists at the end",
        format!(
            "{} requirements, {} conclusions",
            f.lists.requirements.len(),
            f.lists.conclusions.len()
        ),
    );
    if let Some(e) = &r.outputs.evidence {
        let cited: Vec<String> = e
            .cited
            .iter()
            .map(|c| format!("{} ({})", c.title, c.sentence))
            .collect();
        row("cited", esc(&cited.join("; ")));
        if e.dropped_citations > 0 {
            row(
                "dropped",
                format!(
                    "<span class=\"badge unseen\">{} citation(s) of sentences never read</span>",
                    e.dropped_citations
                ),
            );
        }
    }
    row(
        "answer",
        r.answer.as_deref().map_or_else(
            || "<i>none</i>".to_string(),
            |a| format!("<b>{}</b>", esc(a)),
        ),
    );
    h.push_str("</table>");
    let _ = write!(
        h,
        "<details class=\"response\"><summary>final-call response</summary><pre>{}</pre></details></section>",
        esc(&f.response)
    );
}

/// Whether a fact's source names a title shown earlier (either contains the other,
/// case-insensitively: sources are written by the model).
fn source_shown(source: &str, seen: &BTreeSet<String>) -> bool {
    let s = source.trim().to_lowercase();
    s.is_empty()
        || seen
            .iter()
            .any(|t| !t.is_empty() && (s.contains(t.as_str()) || t.contains(s.as_str())))
}

fn turn(h: &mut String, t: &Turn, nudge_fired: bool, seen: Option<&BTreeSet<String>>) {
    let _ = write!(h, "<section class=\"turn\"><h3>Turn {}", t.number);
    if t.adherent == Some(false) {
        h.push_str(" <span class=\"badge warn\">notation not followed</span>");
    }
    h.push_str("</h3>");
    for (i, rej) in t.rejected.iter().enumerate() {
        let _ = write!(
            h,
            "<details class=\"rejected\"><summary>rejected response {} (reminder sent)</summary><pre>{}</pre></details>",
            i + 1,
            esc(rej)
        );
    }
    let _ = write!(
        h,
        "<details class=\"response\"><summary>model response</summary><pre>{}</pre></details>",
        esc(&t.response)
    );
    if let Some(m) = t.state.as_ref().or(t.memory.as_ref()) {
        memory(h, m, seen);
    }
    if !t.actions.is_empty() {
        h.push_str("<ul class=\"actions\">");
        for a in &t.actions {
            let _ = write!(h, "<li><b>{}</b>[{}]</li>", a.tool(), esc(a.argument()));
        }
        h.push_str("</ul>");
    }
    for o in &t.observations {
        let label = if o.shown.is_empty() {
            "observation".to_string()
        } else {
            esc(&o.shown.join(", "))
        };
        let _ = write!(
            h,
            "<details class=\"obs\"><summary>{label}</summary><pre>{}</pre></details>",
            esc(&o.text)
        );
    }
    if t.nudged || nudge_fired {
        h.push_str("<div class=\"badge nudge\">commitment nudge given after this turn</div>");
    }
    h.push_str("</section>");
}

fn memory(h: &mut String, m: &WorkingMemory, seen: Option<&BTreeSet<String>>) {
    h.push_str("<div class=\"memory\">");
    let mut section = |title: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = write!(h, "<div><h4>{title}</h4><ul>{}</ul></div>", items.concat());
        }
    };
    section(
        "Confirmed facts",
        m.facts
            .iter()
            .map(|f| {
                let src = f.source.as_deref().map_or(String::new(), |s| {
                    let flag = match seen {
                        Some(seen) if !source_shown(s, seen) => {
                            " <span class=\"badge unseen\" title=\"no earlier observation showed this source\">source never shown</span>"
                        }
                        _ => "",
                    };
                    format!(" <span class=\"src\">(source: {})</span>{flag}", esc(s))
                });
                let conf = f.confidence.map_or(String::new(), |c| {
                    format!(" <span class=\"src\">confidence: {}</span>", c.as_str())
                });
                format!("<li><b>{}</b> {}{src}{conf}</li>", esc(&f.id), esc(&f.statement))
            })
            .collect(),
    );
    // Contradiction detection (`contradictions=true`): held claims and what settled them.
    section(
        "Contradictions",
        m.conflicts
            .iter()
            .map(|c| {
                let state = match (c.resolution, c.settled) {
                    (Some(r), Some(t)) => format!("settled at turn {t}: {r:?}").to_lowercase(),
                    _ => "open".to_string(),
                };
                format!(
                    "<li><b>{}</b> held: {} <span class=\"src\">contradicts {} · raised at turn {} · {state}</span></li>",
                    esc(&c.question),
                    esc(&c.claim.statement),
                    esc(&c.confirmed),
                    c.raised
                )
            })
            .collect(),
    );
    section(
        "Retracted facts",
        m.retracted
            .iter()
            .map(|f| {
                format!(
                    "<li><b>{}</b> <s>{}</s></li>",
                    esc(&f.id),
                    esc(&f.statement)
                )
            })
            .collect(),
    );
    section(
        "Active hypotheses",
        m.hypotheses
            .iter()
            .map(|x| {
                let conf = x.confidence.map_or("-".to_string(), |c| format!("{c:?}").to_lowercase());
                format!(
                    "<li><b>{}</b> {} <span class=\"src\">confidence: {conf} · supports: {} · contradicts: {}</span></li>",
                    esc(&x.id),
                    esc(&x.text),
                    esc(&or_dash(&x.supports)),
                    esc(&or_dash(&x.contradicts))
                )
            })
            .collect(),
    );
    section(
        "Open questions",
        m.questions
            .iter()
            .map(|q| {
                let prio = q.priority.map_or("-".to_string(), |p| format!("{p:?}").to_lowercase());
                format!(
                    "<li><b>{}</b> {} <span class=\"src\">action: {} · priority: {prio}</span></li>",
                    esc(&q.id),
                    esc(&q.text),
                    esc(q.action.as_deref().unwrap_or("-"))
                )
            })
            .collect(),
    );
    if let Some(n) = &m.notes {
        section("Notes", vec![format!("<li><pre>{}</pre></li>", esc(n))]);
    }
    h.push_str("</div>");
}

fn or_dash(ids: &[String]) -> String {
    if ids.is_empty() {
        "-".to_string()
    } else {
        ids.join(", ")
    }
}
