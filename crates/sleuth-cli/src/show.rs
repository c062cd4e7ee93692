//! Rendering turns and outcomes for a person reading a terminal.
//!
//! Everything shown here is model output or benchmark data, so each piece goes through
//! `terminal_safe` (one line each: a line break inside a fact cannot forge a line).

use sleuth::env::Observation;
use sleuth::eval::RunRecord;
use sleuth::methods::Turn;
use sleuth::terminal::terminal_safe;
use std::fmt::Write;

const OBSERVATION_LINES: usize = 4;
const LINE_WIDTH: usize = 160;

/// One turn: the memory state (or the model's reasoning), the actions and what came back.
pub fn turn(turn: &Turn, full: bool) -> String {
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
    match &turn.state {
        Some(state)
            if !state.facts.is_empty()
                || !state.hypotheses.is_empty()
                || !state.questions.is_empty() =>
        {
            for f in &state.facts {
                let _ = writeln!(out, "   {}", terminal_safe(&f.render()));
            }
            for h in &state.hypotheses {
                let _ = writeln!(out, "   {}", terminal_safe(&h.render()));
            }
            for q in &state.questions {
                let _ = writeln!(out, "   {}", terminal_safe(&q.render()));
            }
        }
        Some(state) if state.notes.is_some() => {
            for line in state.notes.as_deref().unwrap_or("").lines() {
                let _ = writeln!(out, "   notes: {}", terminal_safe(line));
            }
        }
        _ => {
            for line in turn
                .response
                .lines()
                .filter(|l| !l.trim_start().to_lowercase().starts_with("action"))
            {
                if !line.trim().is_empty() {
                    let _ = writeln!(out, "   {}", clip(line));
                }
            }
        }
    }
    if let Some(adherent) = turn.adherent {
        if !adherent {
            let _ = writeln!(out, "   (memory notation not followed this turn)");
        }
    }
    for (i, action) in turn.actions.iter().enumerate() {
        let _ = writeln!(out, " → {}", terminal_safe(&action.to_string()));
        if let Some(obs) = turn.observations.get(i) {
            out.push_str(&observation(obs, full));
        }
    }
    out.push('\n');
    out
}

fn observation(obs: &Observation, full: bool) -> String {
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
                clip(line)
            }
        );
    }
    if shown < lines.len() {
        let _ = writeln!(out, "   │ … ({} more lines)", lines.len() - shown);
    }
    out
}

/// One line of untrusted text, escaped and cut to the display width.
fn clip(line: &str) -> String {
    let line = terminal_safe(line);
    if line.chars().count() <= LINE_WIDTH {
        return line.into_owned();
    }
    let cut: String = line.chars().take(LINE_WIDTH).collect();
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
