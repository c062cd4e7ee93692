//! The pages that tie a report's HTML together: `index.html`, linking every trace page
//! and every figure and table file, and `questions.html`, one row per question with
//! every arm's answer side by side, each linking to that question in its trace page.
//! Like the trace pages they are self-contained and escape every string from records.

use super::escape::escape_html as esc;
use super::html::anchor_of;
use super::table::Table;
use crate::eval::analysis::{Arm, Outcome, RecordDigest, RecordSet};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

const STYLE: &str = include_str!("trace.css");
const FILTERS: &str = include_str!("questions.js");

/// One trace page as the index lists it.
#[derive(Debug, Clone)]
pub struct PageLink {
    /// Link target, relative to the index page.
    pub href: String,
    /// The run directory it shows.
    pub run: String,
    pub records: usize,
    pub summary: String,
}

fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{0}</title><style>{STYLE}</style></head><body><header><h1>{0}</h1></header><main>",
        esc(title)
    )
}

/// `index.html`: the results (`tables`, in the papers' layout: EM/F1, comparisons),
/// trace pages, the side-by-side view, then the other files (`files`: hrefs of figures
/// and tables, shown with figures inline).
pub fn index(
    pages: &[PageLink],
    questions_href: Option<&str>,
    files: &[String],
    tables: &[Table],
) -> String {
    let mut h = head("sleuth report");
    if let Some(q) = questions_href {
        let _ = write!(
            h,
            "<p><a href=\"{}\">Every question, all methods side by side</a></p>",
            esc(q)
        );
    }
    if !tables.is_empty() {
        h.push_str("<h2>Results</h2>");
        for t in tables {
            h.push_str(&t.to_html(&esc));
        }
    }
    h.push_str("<h2>Trace pages</h2><table class=\"facts index\"><tr><th>run</th><th>records</th><th>contents</th></tr>");
    for p in pages {
        let _ = write!(
            h,
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td></tr>",
            esc(&p.href),
            esc(&p.run),
            p.records,
            esc(&p.summary)
        );
    }
    h.push_str("</table>");
    let (figures, tables): (Vec<&String>, Vec<&String>) =
        files.iter().partition(|f| f.ends_with(".svg"));
    if !tables.is_empty() {
        h.push_str("<h2>Tables</h2><p>");
        let links: Vec<String> = tables
            .iter()
            .map(|t| format!("<a href=\"{0}\">{0}</a>", esc(t)))
            .collect();
        h.push_str(&links.join(" · "));
        h.push_str("</p>");
    }
    if !figures.is_empty() {
        h.push_str("<h2>Figures</h2>");
        for f in figures {
            let _ = write!(
                h,
                "<figure><a href=\"{0}\"><img src=\"{0}\" alt=\"{0}\" style=\"max-width:100%\"></a><figcaption>{0}</figcaption></figure>",
                esc(f)
            );
        }
    }
    h.push_str("</main></body></html>\n");
    h
}

/// Arms in the order the runs list their methods, then by label.
fn ordered(set: &RecordSet) -> Vec<&Arm> {
    let mut order: Vec<&str> = Vec::new();
    for s in &set.sources {
        for m in &s.config.methods {
            if !order.contains(&m.as_str()) {
                order.push(m);
            }
        }
    }
    let rank = |m: &str| order.iter().position(|o| *o == m).unwrap_or(usize::MAX);
    let mut arms: Vec<&Arm> = set.arms.iter().collect();
    arms.sort_by(|a, b| {
        (
            &a.key.dataset,
            rank(&a.key.method),
            &a.key.method,
            &a.key.model,
            &a.key.label,
        )
            .cmp(&(
                &b.key.dataset,
                rank(&b.key.method),
                &b.key.method,
                &b.key.model,
                &b.key.label,
            ))
    });
    arms
}

/// `questions.html`: per dataset, one row per question and one column per arm.
/// `trace_href(run_dir)` is the trace page of a run directory, relative to this page.
pub fn side_by_side(set: &RecordSet, trace_href: &dyn Fn(&Path) -> Option<String>) -> String {
    let mut h = head("Every question, all methods side by side");
    h.push_str(
        "<p class=\"src\">✔ right (EM) · ✘ wrong · — not run. Each answer links to its trace.</p>",
    );
    let arms = ordered(set);
    // Benchmarks in the SLEUTH paper's order (HotpotQA, MuSiQue, 2Wiki), others after.
    let mut datasets: Vec<&str> = arms
        .iter()
        .map(|a| a.key.dataset.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let order = &super::paper::layout::SLEUTH_ORDER;
    datasets.sort_by_key(|d| (order.iter().position(|o| o == d).unwrap_or(usize::MAX), *d));
    let models: BTreeSet<&str> = arms.iter().map(|a| a.key.model.as_str()).collect();
    for (di, d) in datasets.into_iter().enumerate() {
        let here: Vec<&&Arm> = arms.iter().filter(|a| a.key.dataset == d).collect();
        let names: Vec<String> = here
            .iter()
            .map(|a| {
                let name = a.key.name();
                if models.len() > 1 {
                    format!("{name} ({})", a.key.model)
                } else {
                    name
                }
            })
            .collect();
        let table_id = format!("side-{di}");
        let _ = write!(h, "<h2>{}</h2>", esc(d));
        let hops: BTreeSet<u8> = here
            .iter()
            .flat_map(|a| a.records.iter().filter_map(|r| r.hops))
            .collect();
        filter_form(&mut h, &table_id, &names, &hops);
        let _ = write!(
            h,
            "<table class=\"side\" id=\"{table_id}\"><tr><th>question</th><th>gold</th>"
        );
        for name in &names {
            let _ = write!(h, "<th>{}</th>", esc(name));
        }
        h.push_str("</tr>");
        // Question id -> (question text, gold, hops); ids in order.
        let mut questions: BTreeMap<&str, (&str, &str, Option<u8>)> = BTreeMap::new();
        for a in &here {
            for r in &a.records {
                questions
                    .entry(r.id.as_str())
                    .or_insert((&r.question, &r.gold_first, r.hops));
            }
        }
        for (id, (text, gold, hops)) in questions {
            let found: Vec<Option<&RecordDigest>> = here
                .iter()
                .map(|a| {
                    a.records
                        .binary_search_by(|r| r.id.as_str().cmp(id))
                        .ok()
                        .map(|i| &*a.records[i])
                })
                .collect();
            let right: Vec<&str> = found
                .iter()
                .map(|r| r.map_or("-", |r| if r.correct() { "1" } else { "0" }))
                .collect();
            let outcomes: Vec<&str> = found
                .iter()
                .map(|r| r.map_or("-", |r| r.classify().name()))
                .collect();
            let _ = write!(
                h,
                "<tr class=\"q\" data-hops=\"{}\" data-right=\"{}\" data-outcome=\"{}\"><td><code>{}</code><br>{}</td><td class=\"gold\">{}</td>",
                hops.map_or(String::new(), |n| n.to_string()),
                right.join(" "),
                outcomes.join(" "),
                esc(id),
                esc(text),
                esc(gold)
            );
            for (a, r) in here.iter().zip(&found) {
                let Some(r) = r else {
                    h.push_str("<td class=\"none\">—</td>");
                    continue;
                };
                let i = a
                    .records
                    .binary_search_by(|x| x.id.as_str().cmp(id))
                    .expect("found above");
                let ok = r.correct();
                let answer = r
                    .answer
                    .as_deref()
                    .map_or_else(|| "<i>no answer</i>".to_string(), esc);
                let text = format!(
                    "{} {answer} <span class=\"src\">{} turns · {}</span>",
                    if ok { "✔" } else { "✘" },
                    r.turns,
                    r.classify().name()
                );
                let cell = match trace_href(&set.sources[a.origins[i]].dir) {
                    Some(href) => {
                        let anchor = anchor_of(&a.key.method, &r.id);
                        format!("<a href=\"{}#{}\">{text}</a>", esc(&href), esc(&anchor))
                    }
                    None => text,
                };
                let _ = write!(
                    h,
                    "<td class=\"{}\">{cell}</td>",
                    if ok { "right" } else { "wrong" }
                );
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
    let _ = write!(h, "<script>{FILTERS}</script>");
    h.push_str("</main></body></html>\n");
    h
}

/// The filters above one dataset's table: A right and B wrong (arms by position),
/// hop count, and an outcome (of one arm, or of any). Option labels are escaped; the
/// script reads only the positions and our own outcome names.
fn filter_form(h: &mut String, table_id: &str, names: &[String], hops: &BTreeSet<u8>) {
    let arm_options = |h: &mut String, none: &str| {
        let _ = write!(h, "<option value=\"\">{none}</option>");
        for (i, n) in names.iter().enumerate() {
            let _ = write!(h, "<option value=\"{i}\">{}</option>", esc(n));
        }
    };
    let _ = write!(
        h,
        "<form class=\"filters qfilters\" data-table=\"{table_id}\" onsubmit=\"return false\"><label>right under <select name=\"a\">"
    );
    arm_options(h, "any");
    h.push_str("</select></label><label>and wrong under <select name=\"b\">");
    arm_options(h, "any");
    h.push_str(
        "</select></label><label>hops <select name=\"hops\"><option value=\"\">all</option>",
    );
    for n in hops {
        let _ = write!(h, "<option value=\"{n}\">{n}</option>");
    }
    h.push_str(
        "</select></label><label>outcome <select name=\"outcome\"><option value=\"\">all</option>",
    );
    for o in Outcome::ALL {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", o.name());
    }
    h.push_str("</select></label><label>of <select name=\"arm\">");
    arm_options(h, "any method");
    h.push_str("</select></label><span class=\"count\"></span></form>");
}
