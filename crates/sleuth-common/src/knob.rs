//! The choices a user makes, named in the library's messages by what they are, and
//! worded by the front end that is speaking (issue 45).
//!
//! Why: a message such as "raise the budget to continue" should name the thing a user
//! changes, and a CLI user changes `--max-cost` where a notebook user passes
//! `max_cost=`. The library used to write the CLI's flags into its strings, and the
//! Python package rewrote them by regular expression on the way out, missing some (a
//! notebook user was told to raise `--max-reply-bytes`, which Python cannot pass). Now a
//! message holds a [`Knob`], and the knob is worded when the message is shown: as a
//! flag once the CLI has called [`speak_as`]`(Speaker::Cli)`, as a keyword once Python
//! has called it with [`Speaker::Python`], and by its plain name for a library user who
//! called neither. A shell command a message suggests (`sleuth data fetch NAME --from
//! FILE`) is the CLI's whatever the speaker: it uses [`Knob::flag`].
//!
//! The speaker is process-wide, like a terminal's colour choice: a process is one front
//! end, and errors are worded far from where they are made (an error chain, a warning).

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};

/// Who words the library's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// A library user: knobs by their plain names (`max_cost`).
    Library = 0,
    /// The command line: flags (`--max-cost`).
    Cli = 1,
    /// The Python package: keywords (`max_cost=`).
    Python = 2,
}

static SPEAKER: AtomicU8 = AtomicU8::new(Speaker::Library as u8);

/// Makes `speaker` word every message from now on (a front end calls it once, first).
pub fn speak_as(speaker: Speaker) {
    SPEAKER.store(speaker as u8, Ordering::Relaxed);
}

/// Who words messages now.
pub fn speaker() -> Speaker {
    match SPEAKER.load(Ordering::Relaxed) {
        1 => Speaker::Cli,
        2 => Speaker::Python,
        _ => Speaker::Library,
    }
}

/// A choice a user makes on a front end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    Aliases,
    Baseline,
    Batch,
    Cache,
    Cohort,
    Conventions,
    /// A benchmark file (the CLI's `--data FILE`; Python's `path=`).
    Data,
    DataRoot,
    Dataset,
    ErrorClasses,
    /// A fetched file given by hand (`sleuth data fetch --from`).
    From,
    Hops,
    HolmFamily,
    HolmSize,
    Index,
    /// The report's machine-readable output.
    Json,
    Limit,
    MaxCost,
    MaxReplyBytes,
    Methods,
    NoCache,
    Out,
    Prices,
    ReasoningEvidence,
    Resamples,
    Rpm,
    Sample,
    Seed,
    /// A method's setting (`--set key=value`; in Python a keyword of its own).
    Set,
    Shard,
    Tpm,
}

impl Knob {
    /// The CLI's flag, whoever is speaking (a suggested shell command is the CLI's).
    pub fn flag(self) -> &'static str {
        use Knob::*;
        match self {
            Aliases => "--aliases",
            Baseline => "--baseline",
            Batch => "--batch",
            Cache => "--cache",
            Cohort => "--cohort",
            Conventions => "--conventions",
            Data => "--data",
            DataRoot => "--data-root",
            Dataset => "--dataset",
            ErrorClasses => "--error-classes",
            From => "--from",
            Hops => "--hops",
            HolmFamily => "--holm-family",
            HolmSize => "--holm-size",
            Index => "--index",
            Json => "--json",
            Limit => "--limit",
            MaxCost => "--max-cost",
            MaxReplyBytes => "--max-reply-bytes",
            Methods => "--methods",
            NoCache => "--no-cache",
            Out => "--out",
            Prices => "--prices",
            ReasoningEvidence => "--reasoning-evidence",
            Resamples => "--resamples",
            Rpm => "--rpm",
            Sample => "--sample",
            Seed => "--seed",
            Set => "--set",
            Shard => "--shard",
            Tpm => "--tpm",
        }
    }

    /// The Python package's keyword, where its functions take one.
    pub fn keyword(self) -> Option<&'static str> {
        use Knob::*;
        Some(match self {
            Aliases => "aliases",
            Baseline => "baseline",
            Batch => "batch",
            Cache | NoCache => "cache",
            Cohort => "cohort",
            Conventions => "conventions",
            Data => "path",
            DataRoot => "data_root",
            Dataset => "dataset",
            ErrorClasses => "error_classes",
            Hops => "hops",
            HolmFamily => "holm_family",
            HolmSize => "holm_size",
            Index => "index",
            Limit => "limit",
            MaxCost => "max_cost",
            Methods => "methods",
            Out => "out",
            Prices => "prices",
            ReasoningEvidence => "reasoning_evidence",
            Resamples => "resamples",
            Rpm => "rpm",
            Sample => "sample",
            Seed => "seed",
            Shard => "shard",
            Tpm => "tpm",
            From | Json | MaxReplyBytes | Set => return None,
        })
    }

    /// The knob's plain name, a library user's word for it (`max_cost`).
    pub fn name(self) -> String {
        self.flag().trim_start_matches('-').replace('-', "_")
    }

    /// The knob set to `value`: `--shard 2/4`, `shard=2/4`.
    pub fn with(self, value: impl fmt::Display) -> KnobValue {
        KnobValue {
            knob: self,
            value: value.to_string(),
        }
    }

    /// A value of the knob as the subject of a sentence: ``baseline `react` `` (the
    /// CLI, a library user), `baseline='react'` (Python, where it is what was passed).
    pub fn subject(self, value: &str) -> String {
        match (speaker(), self.keyword()) {
            (Speaker::Python, Some(keyword)) => format!("{keyword}='{value}'"),
            _ => format!("{} `{value}`", self.name()),
        }
    }

    /// The knob named bare as `speaker` words it: `--max-cost`, `max_cost=`,
    /// `batch=True`. In Python, a flag the package has no keyword for is the CLI's
    /// (`the CLI's --max-reply-bytes`), and a method setting is a keyword of its own.
    pub fn worded_by(self, speaker: Speaker) -> String {
        match speaker {
            Speaker::Cli => self.flag().to_string(),
            Speaker::Library => self.name(),
            Speaker::Python => match (self, self.keyword()) {
                (Knob::Set, _) => "a setting keyword".to_string(),
                (Knob::Batch, _) => "batch=True".to_string(),
                (Knob::NoCache, _) => "cache=False".to_string(),
                (_, Some(keyword)) => format!("{keyword}="),
                (_, None) => format!("the CLI's {}", self.flag()),
            },
        }
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.worded_by(speaker()))
    }
}

/// A knob with its value, worded by the speaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobValue {
    pub knob: Knob,
    pub value: String,
}

impl KnobValue {
    /// `--shard 2/4` or `shard=2/4`; `--set nudge=0.7` is `setting nudge=0.7` in Python
    /// (a keyword of its own) and `the setting nudge=0.7` to a library user.
    pub fn worded_by(&self, speaker: Speaker) -> String {
        let (knob, value) = (self.knob, &self.value);
        match (speaker, knob.keyword()) {
            (Speaker::Cli, _) => format!("{} {value}", knob.flag()),
            (Speaker::Library, _) if knob == Knob::Set => format!("the setting {value}"),
            (Speaker::Library, _) => format!("{}={value}", knob.name()),
            (Speaker::Python, _) if knob == Knob::Set => format!("setting {value}"),
            (Speaker::Python, Some(keyword)) => format!("{keyword}={value}"),
            (Speaker::Python, None) => format!("the CLI's {} {value}", knob.flag()),
        }
    }
}

impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.worded_by(speaker()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_front_end_words_a_knob_its_own_way() {
        let said = |s: Speaker| {
            [
                Knob::MaxCost.worded_by(s),
                Knob::MaxReplyBytes.worded_by(s),
                Knob::NoCache.worded_by(s),
                Knob::Shard.with("2/4").worded_by(s),
                Knob::Set.with("nudge=0.7").worded_by(s),
                Knob::Data.with("FILE").worded_by(s),
            ]
        };
        assert_eq!(
            said(Speaker::Cli),
            [
                "--max-cost",
                "--max-reply-bytes",
                "--no-cache",
                "--shard 2/4",
                "--set nudge=0.7",
                "--data FILE"
            ]
        );
        assert_eq!(
            said(Speaker::Python),
            [
                "max_cost=",
                "the CLI's --max-reply-bytes",
                "cache=False",
                "shard=2/4",
                "setting nudge=0.7",
                "path=FILE"
            ]
        );
        assert_eq!(
            said(Speaker::Library),
            [
                "max_cost",
                "max_reply_bytes",
                "no_cache",
                "shard=2/4",
                "the setting nudge=0.7",
                "data=FILE"
            ]
        );
        // Nothing in the library's own tests picks a front end.
        assert_eq!(speaker(), Speaker::Library);
        assert_eq!(Knob::HolmSize.to_string(), "holm_size");
    }

    /// The workspace's library crates, whose strings may never name a CLI flag.
    const LIBRARY_CRATES: [&str; 5] = [
        "sleuth",
        "sleuth-common",
        "sleuth-data",
        "sleuth-llm",
        "sleuth-retrieval",
    ];

    /// Issue 45: no string of the library's own code names one of the CLI's flags (a
    /// front end words every knob). Comments and test modules may; foreign tools'
    /// flags in a suggested command (`sbatch --array=1-N`) are not ours.
    #[test]
    fn no_library_string_names_a_cli_flag() {
        let flag = regex::Regex::new(r"--[a-z][a-z-]+").unwrap();
        let literal = regex::Regex::new(r#""(?:[^"\\]|\\.)*""#).unwrap();
        let foreign = ["--array"];
        // Every library crate of the workspace: the front ends (CLI, Python) word knobs.
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let libraries = LIBRARY_CRATES.map(|c| crates.join(c).join("src"));
        for src in &libraries {
            assert!(src.is_dir(), "{} is not a folder", src.display());
        }
        let mut offenders = Vec::new();
        let mut dirs = libraries.to_vec();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let tests = name == "tests.rs" || name.ends_with("_tests.rs");
                if !name.ends_with(".rs")
                    || tests
                    || ["knob.rs", "layering.rs", "front_ends.rs"].contains(&name.as_str())
                {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap();
                for (n, line) in code.lines().enumerate() {
                    if line.trim_start().starts_with("//") {
                        continue;
                    }
                    for lit in literal.find_iter(line) {
                        for f in flag.find_iter(lit.as_str()) {
                            if !foreign.contains(&f.as_str()) {
                                offenders.push(format!(
                                    "{}:{}: {}",
                                    path.display(),
                                    n + 1,
                                    f.as_str()
                                ));
                            }
                        }
                    }
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "library strings naming CLI flags:\n{}",
            offenders.join("\n")
        );
    }
}
