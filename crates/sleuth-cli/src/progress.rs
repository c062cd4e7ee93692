//! Progress of long work: a bar on a terminal, plain lines otherwise (logs, CI).
//! Ids and method names come from records, hence from data: they are printed through
//! `terminal_safe`.

use indicatif::{ProgressBar, ProgressStyle};
use sleuth::eval::{Progress, RunRecord};
use sleuth::llm::batch::RoundReport;
use sleuth::terminal::terminal_safe;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};

pub enum EvalProgress {
    Bar(ProgressBar),
    Lines {
        total: AtomicUsize,
        done: AtomicUsize,
    },
}

impl EvalProgress {
    pub fn new() -> Self {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} {msg} [{elapsed_precise}<{eta_precise}]",
                )
                .expect("valid progress template"),
            );
            EvalProgress::Bar(bar)
        } else {
            EvalProgress::Lines {
                total: AtomicUsize::new(0),
                done: AtomicUsize::new(0),
            }
        }
    }
}

impl Progress for EvalProgress {
    fn start(&self, total: usize, already_done: usize) {
        match self {
            EvalProgress::Bar(bar) => {
                bar.set_length(total as u64);
                bar.set_position(already_done as u64);
            }
            EvalProgress::Lines { total: t, done } => {
                t.store(total, Ordering::Relaxed);
                done.store(already_done, Ordering::Relaxed);
                if already_done > 0 {
                    eprintln!("resuming: {already_done}/{total} already recorded");
                }
            }
        }
    }

    fn record(&self, r: &RunRecord) {
        let status = match (&r.error, r.em > 0.0) {
            (Some(_), _) => "error",
            (None, true) => "correct",
            (None, false) if r.timed_out => "timeout",
            _ => "wrong",
        };
        let (method, id) = (terminal_safe(&r.method), terminal_safe(&r.id));
        match self {
            EvalProgress::Bar(bar) => {
                bar.inc(1);
                bar.set_message(format!("{method} {id} {status}"));
            }
            EvalProgress::Lines { total, done } => {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                eprintln!(
                    "[{n}/{}] {method} {id} {status}",
                    total.load(Ordering::Relaxed)
                );
            }
        }
    }

    /// One line per change of a batch: `batch round 2 batch_000003: in_progress, 12/40
    /// done, 0 failed, 1m 05s`.
    fn batch(&self, r: &RoundReport) {
        let round = match r.round {
            0 => "resumed batch".to_string(),
            n => format!("batch round {n}"),
        };
        let secs = r.elapsed.as_secs();
        let line = format!(
            "{round} {}: {}, {}/{} done, {} failed, {}m {:02}s",
            terminal_safe(&r.batch_id),
            terminal_safe(&r.status),
            r.counts.succeeded,
            r.requests,
            r.counts.failed,
            secs / 60,
            secs % 60
        );
        match self {
            EvalProgress::Bar(bar) => bar.println(line),
            EvalProgress::Lines { .. } => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let EvalProgress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
