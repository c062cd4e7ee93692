//! A recipe's report commands, generated rather than written by hand (issue 42 item 7).
//!
//! A recipe lists the reports its output gives (`[[reports]]`: what each shows, the
//! paper tables it stands for, its baseline); the Holm flags of each come from the
//! recipe's conventions ([`Conventions::holm_rule`]), so a table's documented command
//! cannot drift from the paper's family for it. `sleuth experiment` prints them, and
//! `experiment.json` keeps them.

use crate::eval::analysis::{Conventions, HolmRule};
use crate::knob::Knob;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One `[[reports]]` entry of a recipe, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// What the report gives, in the paper's words (`Tables 12 and 17`).
    pub about: String,
    /// The numbers of the paper's tables it stands for (the recipe's conventions name
    /// the paper): their Holm rules decide its flags.
    #[serde(default)]
    pub paper_tables: Vec<u32>,
    /// `--baseline` (a method, or one labelled arm).
    pub baseline: Option<String>,
}

/// A report command of a recipe, resolved against its conventions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportCommand {
    pub about: String,
    pub baseline: Option<String>,
    /// The Holm rule its tables share, where the paper gives one and it is not the
    /// conventions' default family.
    pub holm: Option<HolmRule>,
}

/// Why a recipe's reports cannot be resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportSpecError {
    /// Two tables of one report take different Holm families.
    MixedHolm { about: String, tables: (u32, u32) },
}

impl std::fmt::Display for ReportSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportSpecError::MixedHolm { about, tables } => write!(
                f,
                "report `{about}`: Tables {} and {} take different Holm families; give each its own [[reports]] entry",
                tables.0, tables.1
            ),
        }
    }
}

impl ReportCommand {
    /// Resolves `specs` under `conventions`.
    pub fn resolve(
        specs: &[ReportSpec],
        conventions: Conventions,
    ) -> Result<Vec<ReportCommand>, ReportSpecError> {
        specs
            .iter()
            .map(|spec| {
                let mut holm: Option<(u32, HolmRule)> = None;
                for &table in &spec.paper_tables {
                    let Some(rule) = conventions.holm_rule(table) else {
                        continue;
                    };
                    match holm {
                        Some((first, r)) if r != rule => {
                            return Err(ReportSpecError::MixedHolm {
                                about: spec.about.clone(),
                                tables: (first, table),
                            })
                        }
                        Some(_) => {}
                        None => holm = Some((table, rule)),
                    }
                }
                let default = HolmRule {
                    family: conventions.holm_family(),
                    size: 0,
                };
                Ok(ReportCommand {
                    about: spec.about.clone(),
                    baseline: spec.baseline.clone(),
                    holm: holm.map(|(_, r)| r).filter(|r| *r != default),
                })
            })
            .collect()
    }

    /// The command's arguments after `sleuth`, reading `out` (a command line: the
    /// CLI's flags, whoever is speaking).
    pub fn argv(&self, out: &Path) -> Vec<String> {
        let mut argv = vec!["report".to_string(), out.display().to_string()];
        let mut pass = |knob: Knob, value: String| argv.extend([knob.flag().to_string(), value]);
        if let Some(b) = &self.baseline {
            pass(Knob::Baseline, b.clone());
        }
        if let Some(h) = self.holm {
            pass(Knob::HolmFamily, h.family.name().to_string());
            if h.size > 0 {
                pass(Knob::HolmSize, h.size.to_string());
            }
        }
        argv
    }

    /// The command as a shell line (`sleuth report OUT --baseline 'eir [reads=6]'`).
    pub fn shell_line(&self, out: &Path) -> String {
        let words: Vec<String> = self.argv(out).iter().map(|w| shell_quoted(w)).collect();
        format!("sleuth {}", words.join(" "))
    }
}

/// `word` as a POSIX shell reads it back: bare when it holds only safe characters,
/// else in single quotes (a quote inside closed, escaped and reopened).
pub fn shell_quoted(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=,@%+".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::analysis::HolmFamily;

    fn spec(about: &str, tables: &[u32]) -> ReportSpec {
        ReportSpec {
            about: about.into(),
            paper_tables: tables.to_vec(),
            baseline: Some("eir [reads=6]".into()),
        }
    }

    #[test]
    fn flags_come_from_the_tables_rules_and_only_where_they_differ_from_the_default() {
        let out = Path::new("runs/x");
        let got = ReportCommand::resolve(
            &[
                spec("Table 11", &[11]),
                spec("Tables 12 and 17", &[12, 17]),
                spec("Table 13", &[13]),
            ],
            Conventions::Eir,
        )
        .unwrap();
        assert_eq!(
            got[0].shell_line(out),
            "sleuth report runs/x --baseline 'eir [reads=6]' --holm-family all"
        );
        assert_eq!(got[1].holm, None, "baseline is the EIR default");
        assert_eq!(
            got[2].holm,
            Some(HolmRule {
                family: HolmFamily::Dataset,
                size: 4
            })
        );
        let mixed =
            ReportCommand::resolve(&[spec("Tables 12 and 13", &[12, 13])], Conventions::Eir);
        assert_eq!(
            mixed.unwrap_err(),
            ReportSpecError::MixedHolm {
                about: "Tables 12 and 13".into(),
                tables: (12, 13)
            }
        );
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
    }
}
