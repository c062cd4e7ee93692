//! Rendering turns and outcomes for a person reading a terminal.
//!
//! A turn is shown in sections (the memory's facts, hypotheses and questions, then
//! actions and what came back), with each memory entry marked against the previous
//! turn: `+` new, `~` changed, `-` dropped, blank unchanged, so a reader sees what the
//! turn learned. Long lines are cut to the terminal's width.
//!
//! Everything shown here is model output or benchmark data, so each piece goes through
//! `terminal_safe` (one line each: a line break inside a fact cannot forge a line).

use sleuth::env::Observation;
use sleuth::eval::RunRecord;
use sleuth::memory::WorkingMemory;
use sleuth::methods::Turn;
use sleuth::names::Named;
use sleuth::terminal::terminal_safe;
use std::fmt::Write;

const OBSERVATION_LINES: usize = 4;
/// Width used when the output is not a terminal and `COLUMNS` is unset.
const DEFAULT_WIDTH: usize = 160;

/// The terminal's width in columns: stdout's window size, else `COLUMNS`, else 160.
pub fn width() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ writes a winsize into the struct we pass; stdout's fd is
        // valid for the life of the process.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col > 0 {
            return usize::from(ws.ws_col);
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c: &usize| c > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

/// How an entry changed since the previous turn.
fn mark(id: &str, rendered: &str, before: &[(String, String)], first: bool) -> &'static str {
    if first {
        return " ";
    }
    match before.iter().find(|(i, _)| i == id) {
        None => "+",
        Some((_, r)) if r != rendered => "~",
        Some(_) => " ",
    }
}

/// (id, rendered) of each entry of one memory section.
type Entries = Vec<(String, String)>;

fn sections(m: &WorkingMemory) -> [(&'static str, Entries); 3] {
    [
        (
            "Confirmed Facts",
            m.facts.iter().map(|f| (f.id.clone(), f.render())).collect(),
        ),
        (
            "Active Hypotheses",
            m.hypotheses
                .iter()
                .map(|h| (h.id.clone(), h.render()))
                .collect(),
        ),
        (
            "Open Questions",
            m.questions
                .iter()
                .map(|q| (q.id.clone(), q.render()))
                .collect(),
        ),
    ]
}

/// One turn, its memory entries marked against `previous` (the memory after the
/// previous turn; None on the first turn), lines cut to `width` columns.
pub fn turn_since(
    turn: &Turn,
    previous: Option<&WorkingMemory>,
    full: bool,
    width: usize,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "── Turn {} {}",
        turn.number,
        if turn.nudged { "· nudge given" } else { "" }
    );
    if !turn.rejected.is_empty() {
        let _ = writeln!(
            out,
            "   ({} response(s) rejected for missing memory notation)",
            turn.rejected.len()
        );
    }
    let clip_to = |line: &str, indent: usize| clip(line, width.saturating_sub(indent).max(20));
    match &turn.state {
        Some(state)
            if !state.facts.is_empty()
                || !state.hypotheses.is_empty()
                || !state.questions.is_empty() =>
        {
            let empty = WorkingMemory::default();
            let first = previous.is_none();
            let before = sections(previous.unwrap_or(&empty));
            for ((title, now), (_, then)) in sections(state).into_iter().zip(before) {
                let dropped: Vec<&(String, String)> = then
                    .iter()
                    .filter(|(id, _)| !now.iter().any(|(i, _)| i == id))
                    .collect();
                if now.is_empty() && dropped.is_empty() {
                    continue;
                }
                let _ = writeln!(out, "   {title}");
                for (id, rendered) in &now {
                    let m = mark(id, rendered, &then, first);
                    let _ = writeln!(out, "   {m} {}", clip_to(rendered, 5));
                }
                for (_, rendered) in dropped {
                    let _ = writeln!(out, "   - {}", clip_to(rendered, 5));
                }
            }
        }
        Some(state) if state.notes.is_some() => {
            let _ = writeln!(out, "   Notes");
            for line in state.notes.as_deref().unwrap_or("").lines() {
                let _ = writeln!(out, "     {}", clip_to(line, 5));
            }
        }
        _ => {
            let lines: Vec<&str> = turn
                .response
                .lines()
                .filter(|l| !l.trim_start().to_lowercase().starts_with("action"))
                .filter(|l| !l.trim().is_empty())
                .collect();
            if !lines.is_empty() {
                let _ = writeln!(out, "   Reasoning");
            }
            for line in lines {
                let _ = writeln!(out, "     {}", clip_to(line, 5));
            }
        }
    }
    if let Some(adherent) = turn.adherent {
        if !adherent {
            let _ = writeln!(out, "   (memory notation not followed this turn)");
        }
    }
    if !turn.actions.is_empty() {
        let _ = writeln!(out, "   Actions");
    }
    for (i, action) in turn.actions.iter().enumerate() {
        let _ = writeln!(out, " → {}", clip_to(&action.to_string(), 3));
        if let Some(obs) = turn.observations.get(i) {
            out.push_str(&observation(obs, full, width));
        }
    }
    out.push('\n');
    out
}

fn observation(obs: &Observation, full: bool, width: usize) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = obs.text.lines().collect();
    let shown = if full {
        lines.len()
    } else {
        lines.len().min(OBSERVATION_LINES)
    };
    for line in &lines[..shown] {
        let _ = writeln!(
            out,
            "   │ {}",
            if full {
                terminal_safe(line).into_owned()
            } else {
                clip(line, width.saturating_sub(5).max(20))
            }
        );
    }
    if shown < lines.len() {
        let _ = writeln!(out, "   │ … ({} more lines)", lines.len() - shown);
    }
    out
}

/// One line of untrusted text, escaped and cut to `max` characters (an ellipsis
/// included).
fn clip(line: &str, max: usize) -> String {
    let line = terminal_safe(line);
    if line.chars().count() <= max {
        return line.into_owned();
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// The episode's answer and how it ended.
pub fn outcome(r: &RunRecord) -> String {
    format!(
        "Answer: {}   ({} after {} turns, {} model calls, {} tokens{})",
        terminal_safe(r.answer.as_deref().unwrap_or("(none)")),
        r.stop.name(),
        r.turns,
        r.calls,
        r.input_tokens + r.output_tokens,
        r.nudge_turn
            .map(|t| format!(", nudged at turn {t}"))
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_to_the_width_with_an_ellipsis() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
