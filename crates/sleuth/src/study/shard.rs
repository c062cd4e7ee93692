//! `--shard I/N` and `--shard auto`: which slice of the questions this process runs.
//!
//! Shards are dealt round-robin over the selected questions (question k goes to shard
//! k mod N), so every shard gets the same mix of hop counts and the slices of one
//! selection never overlap. `auto` lets a cluster scheduler say which slice a task is,
//! so one batch script or manifest serves every task of an array:
//!
//! - Slurm job arrays (`sbatch --array=...`): `SLURM_ARRAY_TASK_ID` with
//!   `SLURM_ARRAY_TASK_COUNT`, `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_MAX`. Task ids
//!   are whatever `--array` listed (`1-16`, `0-31`, `1-7:2`): they must form an
//!   arithmetic progression (a range with an optional step) and are numbered in order,
//!   so `--array=1-7:2` gives shards 1..4. An irregular list (`1,2,5`) cannot be mapped
//!   from one task's environment, so such a task fails rather than silently leave a
//!   slice unrun (at least one task of any irregular list fails).
//! - Kubernetes indexed Jobs (`completionMode: Indexed`): `JOB_COMPLETION_INDEX`
//!   (0-based) is set by the Job controller, but the Job's `completions` count is not in
//!   the pod's environment, so the manifest must also set `SLEUTH_SHARD_COUNT` to it.
//!
//! Outside both, `auto` fails with a message naming the variables it looked for.

use crate::knob::{Knob, KnobValue};
use crate::{Error, Result};
use std::fmt;

/// A shard error: the message names the flag and what to do.
fn invalid(message: impl Into<String>) -> Error {
    Error::Invalid(message.into())
}

/// One slice of a question list: `index` in 1..=`count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether question number `k` (0-based, in selection order) belongs to this shard.
    pub fn owns(&self, k: usize) -> bool {
        k % self.count == self.index - 1
    }

    /// `I/N`, or `auto` read from the scheduler's environment.
    pub fn resolve(spec: &str) -> Result<Shard> {
        if spec.trim() == "auto" {
            from_env(|name| std::env::var(name).ok())
        } else {
            parse(spec)
        }
    }
}

/// `--shard auto`, as the front end words it.
fn auto() -> KnobValue {
    Knob::Shard.with("auto")
}

/// Parses `I/N` with 1 <= I <= N.
pub fn parse(spec: &str) -> Result<Shard> {
    let err = || {
        invalid(format!(
            "{}: expected I/N with 1 <= I <= N (e.g. 2/4) or `auto`",
            Knob::Shard.with(spec)
        ))
    };
    let (i, n) = spec.split_once('/').ok_or_else(err)?;
    let (index, count): (usize, usize) = (
        i.trim().parse().map_err(|_| err())?,
        n.trim().parse().map_err(|_| err())?,
    );
    if index == 0 || count == 0 || index > count {
        return Err(err());
    }
    Ok(Shard { index, count })
}

/// The shard a scheduler assigned, from environment variables read through `get`.
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Shard> {
    let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
    if let Some(id) = get("SLURM_ARRAY_TASK_ID") {
        return slurm(&id, &get);
    }
    if let Some(index) = get("JOB_COMPLETION_INDEX") {
        return kubernetes(&index, &get);
    }
    if get("SLURM_JOB_ID").is_some() {
        return Err(invalid(format!("{}: this Slurm job is not a job array (SLURM_ARRAY_TASK_ID is unset); submit it with `sbatch --array=1-N` or pass {}", auto(), Knob::Shard.with("I/N"))));
    }
    Err(invalid(format!("{}: not inside a Slurm job array (SLURM_ARRAY_TASK_ID) or a Kubernetes indexed Job (JOB_COMPLETION_INDEX); pass {} instead", auto(), Knob::Shard.with("I/N"))))
}

fn number(name: &str, value: &str) -> Result<usize> {
    value.trim().parse().map_err(|_| {
        invalid(format!(
            "{}: {name}={value} is not a non-negative integer",
            auto()
        ))
    })
}

fn slurm(id: &str, get: &impl Fn(&str) -> Option<String>) -> Result<Shard> {
    let need = |name: &str| {
        let v = get(name).ok_or_else(|| {
            invalid(format!(
                "{}: SLURM_ARRAY_TASK_ID is set but {name} is not (Slurm sets both in a job array)",
                auto()
            ))
        })?;
        number(name, &v)
    };
    let id = number("SLURM_ARRAY_TASK_ID", id)?;
    let (count, min, max) = (
        need("SLURM_ARRAY_TASK_COUNT")?,
        need("SLURM_ARRAY_TASK_MIN")?,
        need("SLURM_ARRAY_TASK_MAX")?,
    );
    if count == 0 || min > max || id < min || id > max {
        return Err(invalid(format!(
            "{}: inconsistent Slurm array (task {id}, {count} tasks from {min} to {max})",
            auto()
        )));
    }
    if count == 1 {
        return Ok(Shard { index: 1, count: 1 });
    }
    let span = max - min;
    let step = span / (count - 1);
    if step == 0 || span % (count - 1) != 0 || (id - min) % step != 0 {
        return Err(invalid(format!("{}: Slurm array task {id} of {count} tasks from {min} to {max}: the ids are not an evenly spaced range (use --array=A-B or A-B:STEP, or pass {})", auto(), Knob::Shard.with("I/N"))));
    }
    Ok(Shard {
        index: (id - min) / step + 1,
        count,
    })
}

fn kubernetes(index: &str, get: &impl Fn(&str) -> Option<String>) -> Result<Shard> {
    let index = number("JOB_COMPLETION_INDEX", index)?;
    let count = get("SLEUTH_SHARD_COUNT").ok_or_else(|| {
        invalid(format!("{}: JOB_COMPLETION_INDEX={index} (a Kubernetes indexed Job) but the Job's completion count is not in the pod's environment; set SLEUTH_SHARD_COUNT to the Job's spec.completions", auto()))
    })?;
    let count = number("SLEUTH_SHARD_COUNT", &count)?;
    if index >= count {
        return Err(invalid(format!("{}: JOB_COMPLETION_INDEX={index} is not below SLEUTH_SHARD_COUNT={count} (set it to the Job's spec.completions)", auto())));
    }
    Ok(Shard {
        index: index + 1,
        count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Result<Shard> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_env(|k| map.get(k).cloned())
    }

    fn slurm_task(id: usize, count: usize, min: usize, max: usize) -> Result<Shard> {
        let (id, count, min, max) = (
            id.to_string(),
            count.to_string(),
            min.to_string(),
            max.to_string(),
        );
        env(&[
            ("SLURM_JOB_ID", "77"),
            ("SLURM_ARRAY_TASK_ID", &id),
            ("SLURM_ARRAY_TASK_COUNT", &count),
            ("SLURM_ARRAY_TASK_MIN", &min),
            ("SLURM_ARRAY_TASK_MAX", &max),
        ])
    }

    #[test]
    fn explicit_shards_parse_and_own_round_robin_slices() {
        let s = parse("2/3").unwrap();
        assert_eq!(s, Shard { index: 2, count: 3 });
        assert_eq!(s.to_string(), "2/3");
        let owned: Vec<usize> = (0..8).filter(|&k| s.owns(k)).collect();
        assert_eq!(owned, vec![1, 4, 7]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slurm_ids_map_to_shards_whatever_the_first_id() {
        // --array=1-4
        assert_eq!(
            slurm_task(1, 4, 1, 4).unwrap(),
            Shard { index: 1, count: 4 }
        );
        assert_eq!(
            slurm_task(4, 4, 1, 4).unwrap(),
            Shard { index: 4, count: 4 }
        );
        // --array=0-31
        assert_eq!(
            slurm_task(0, 32, 0, 31).unwrap(),
            Shard {
                index: 1,
                count: 32
            }
        );
        assert_eq!(
            slurm_task(31, 32, 0, 31).unwrap(),
            Shard {
                index: 32,
                count: 32
            }
        );
        // --array=1-7:2 (ids 1, 3, 5, 7)
        assert_eq!(
            slurm_task(5, 4, 1, 7).unwrap(),
            Shard { index: 3, count: 4 }
        );
        // --array=10-12
        assert_eq!(
            slurm_task(11, 3, 10, 12).unwrap(),
            Shard { index: 2, count: 3 }
        );
        // --array=5 (a single task)
        assert_eq!(
            slurm_task(5, 1, 5, 5).unwrap(),
            Shard { index: 1, count: 1 }
        );
    }

    #[test]
    fn irregular_slurm_lists_fail_in_some_task() {
        // --array=0,1,2,6: ids fit a step of 2 only at 0, 2, 6; task 1 refuses, so the
        // user learns of the gap instead of losing shard 3.
        assert!(slurm_task(1, 4, 0, 6).is_err());
        // --array=1,2,5: a step of 2 would give ids 1, 3, 5: task 2 refuses.
        assert!(slurm_task(2, 3, 1, 5).is_err());
        // --array=0,1,5: span 5 over 2 steps is not whole: every task refuses.
        for id in [0, 1, 5] {
            assert!(slurm_task(id, 3, 0, 5).is_err());
        }
        let e = env(&[("SLURM_ARRAY_TASK_ID", "3")]).unwrap_err();
        assert!(e.to_string().contains("SLURM_ARRAY_TASK_COUNT"), "{e}");
    }

    #[test]
    fn kubernetes_needs_the_completion_count() {
        assert_eq!(
            env(&[("JOB_COMPLETION_INDEX", "0"), ("SLEUTH_SHARD_COUNT", "4")]).unwrap(),
            Shard { index: 1, count: 4 }
        );
        assert_eq!(
            env(&[("JOB_COMPLETION_INDEX", "3"), ("SLEUTH_SHARD_COUNT", "4")]).unwrap(),
            Shard { index: 4, count: 4 }
        );
        let e = env(&[("JOB_COMPLETION_INDEX", "2")]).unwrap_err();
        assert!(e.to_string().contains("SLEUTH_SHARD_COUNT"), "{e}");
        assert!(env(&[("JOB_COMPLETION_INDEX", "4"), ("SLEUTH_SHARD_COUNT", "4")]).is_err());
    }

    #[test]
    fn outside_a_scheduler_auto_names_what_it_looked_for() {
        let e = env(&[]).unwrap_err().to_string();
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID") && e.contains("JOB_COMPLETION_INDEX"),
            "{e}"
        );
        let e = env(&[("SLURM_JOB_ID", "12")]).unwrap_err().to_string();
        assert!(e.contains("not a job array"), "{e}");
    }
}
