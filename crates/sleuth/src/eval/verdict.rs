//! What a finished run amounts to: the exit rules every front end applies (issue 45).
//!
//! Why a type: the rules (a budget halt fails the run; so does a run whose every
//! question ended in an error, now or in an earlier run of the directory; leftover
//! errors in a run that otherwise worked are only a hint) were written once in the
//! CLI's `eval` and again in the Python wrapper, and the copies drifted (only the CLI
//! said that a template error is fixed in the templates). [`RunSummary::verdict`]
//! decides once; the CLI turns a [`Verdict`] into an exit code and its flags' words,
//! Python into an exception and its keywords.

use super::runner::RunSummary;
use crate::methods::ErrorKind;
use serde::Serialize;

/// What a finished run amounts to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Every selected question has a record; `errors` of them (written now or kept
    /// from an earlier run) ended in an error and run again when retried.
    Done { errors: usize },
    /// The cost budget stopped the run before every question ran; a larger budget
    /// resumes it.
    Halted { reason: String },
    /// Every question this run wrote ended in an error (and every earlier record it
    /// skipped had too).
    AllFailed {
        first_error: String,
        /// Where the fix lies: the first error's kind.
        cause: ErrorKind,
    },
    /// Nothing ran: every selected question's earlier record was an error, skipped
    /// until errors are retried.
    NothingRan { skipped: usize, first_error: String },
}

impl Verdict {
    /// Whether the run counts as failed (a front end exits non-zero, or raises).
    pub fn failed(&self) -> bool {
        !matches!(self, Verdict::Done { .. })
    }
}

impl RunSummary {
    /// The run's [`Verdict`]: a budget halt first, then a run of errors only.
    pub fn verdict(&self) -> Verdict {
        if let Some(reason) = &self.halted {
            return Verdict::Halted {
                reason: reason.clone(),
            };
        }
        let first_error = self.first_error.clone().unwrap_or_default();
        let all_failed = self.errors == self.written && self.skipped_errors == self.skipped;
        if self.written > 0 && all_failed {
            // A run whose every question failed wrote at least one error, so its kind
            // is known; records carry it since `error_kind` exists.
            let cause = self.first_error_kind.unwrap_or(ErrorKind::Model);
            return Verdict::AllFailed { first_error, cause };
        }
        if self.written == 0 && self.skipped > 0 && all_failed {
            return Verdict::NothingRan {
                skipped: self.skipped,
                first_error,
            };
        }
        Verdict::Done {
            errors: self.errors + self.skipped_errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(written: usize, errors: usize, skipped: usize, skipped_errors: usize) -> RunSummary {
        RunSummary {
            planned: written + skipped,
            skipped,
            skipped_errors,
            written,
            errors,
            first_error: (errors + skipped_errors > 0).then(|| "HTTP 401: bad key".to_string()),
            first_error_kind: (errors > 0).then_some(ErrorKind::Model),
            halted: None,
        }
    }

    #[test]
    fn a_run_fails_when_halted_or_when_nothing_but_errors_is_left() {
        assert_eq!(summary(4, 0, 0, 0).verdict(), Verdict::Done { errors: 0 });
        // Leftover errors in a run that otherwise worked are a hint.
        assert_eq!(summary(4, 1, 2, 1).verdict(), Verdict::Done { errors: 2 });
        let all = summary(3, 3, 1, 1).verdict();
        assert_eq!(
            all,
            Verdict::AllFailed {
                first_error: "HTTP 401: bad key".into(),
                cause: ErrorKind::Model
            }
        );
        assert!(all.failed());
        // A resume that finds only earlier errors runs nothing.
        let nothing = summary(0, 0, 5, 5).verdict();
        assert!(matches!(nothing, Verdict::NothingRan { skipped: 5, .. }));
        // An empty selection is not a failure.
        assert_eq!(summary(0, 0, 0, 0).verdict(), Verdict::Done { errors: 0 });
        // The budget decides first.
        let mut halted = summary(3, 3, 0, 0);
        halted.halted = Some("$0.50 spent of $0.50".into());
        assert!(matches!(halted.verdict(), Verdict::Halted { .. }));
    }

    #[test]
    fn a_template_error_points_at_the_templates() {
        let mut s = summary(2, 2, 0, 0);
        let error = crate::methods::PromptSet::default()
            .render("no-such-template", ())
            .unwrap_err();
        let error = crate::methods::AgentError::from(error);
        s.first_error = Some(error.to_string());
        s.first_error_kind = Some(error.kind());
        assert!(matches!(
            s.verdict(),
            Verdict::AllFailed {
                cause: ErrorKind::Template,
                ..
            }
        ));
    }
}
