//! Which questions a run answers: a source (a benchmark file, the fetched dev set, or
//! questions already in memory) narrowed by hop count, a seeded sample or the first N,
//! a shard, and a set of ids.
//!
//! The CLI's `--dataset/--data/--hops/--limit/--sample/--seed/--sample-offset/--shard`
//! and the Python package's keyword arguments both become one [`Selection`], so the
//! same numbers pick the same questions from either. The sample is a seeded shuffle of
//! the filtered questions; skipping its first `offset` is what makes a scored sample
//! and a set of setup questions disjoint (EIR paper §4.1 and Table 4: 1,000 scored
//! questions, 20 more for prompt development, drawn from one order):
//! [`Selection::held_out`] gives the setup questions a sample skips.

use super::Shard;
use crate::data::{self, DataError, Dataset, Question, Questions};
use crate::knob::Knob;
use crate::Result;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where the questions come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A benchmark file: JSON array or JSON Lines, its schema given or detected.
    File {
        dataset: Option<Dataset>,
        path: PathBuf,
    },
    /// The dev set of a benchmark that `sleuth data fetch` installed.
    Fetched(Dataset),
    /// Questions already loaded (a filtered list, a slice, questions built by hand);
    /// `files` names where they came from, for `run.json` (may be empty).
    Given {
        dataset: Dataset,
        questions: Vec<Question>,
        files: Vec<PathBuf>,
    },
}

impl Source {
    /// What an optional dataset name and file give, as every data-reading command
    /// takes them: the file (its schema named, or detected when read), else the named
    /// dataset's fetched dev set; `None` with neither, for the front end to word.
    pub fn of(dataset: Option<Dataset>, file: Option<PathBuf>) -> Option<Source> {
        match (dataset, file) {
            (dataset, Some(path)) => Some(Source::File { dataset, path }),
            (Some(d), None) => Some(Source::Fetched(d)),
            (None, None) => None,
        }
    }
}

/// A seeded random sample: shuffle with `seed`, skip `offset`, keep `size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub size: usize,
    pub seed: u64,
    pub offset: usize,
}

/// A question selection, applied in this order: hops, then the sample and the first
/// `limit`, then the shard, then the ids.
///
/// Without a sample, `limit` keeps the file's first N. With one, it keeps the first N
/// of the sample's seeded order (then put back in file order): a smoke run of a
/// recipe's `sample = 1000` is a small sample of the same population (MuSiQue's file
/// is ordered by hops; its head is 2-hop only), and a later full run only adds to it.
#[derive(Debug, Clone)]
pub struct Selection {
    pub source: Source,
    /// Keep only questions with this many hops (MuSiQue's splits).
    pub hops: Option<u8>,
    /// Keep the first N: of the file (after hops), or of the sample's seeded order.
    pub limit: Option<usize>,
    pub sample: Option<Sample>,
    /// This process's slice, dealt round-robin.
    pub shard: Option<Shard>,
    /// Keep only these question ids (an earlier run's known failures); the rest of the
    /// selection is applied first, so a shard deals the same questions with or without.
    pub ids: Option<BTreeSet<String>>,
}

/// The questions a selection picked, with the schema and the files they came from.
/// Questions from a file are held as an index ([`Questions`]) and read again one at a
/// time.
#[derive(Debug, Clone)]
pub struct Selected {
    pub dataset: Dataset,
    pub files: Vec<PathBuf>,
    pub questions: Questions,
    /// What a user should know about the selection (a head of a hop-ordered file that
    /// holds one hop count only), to show as warnings.
    pub notes: Vec<String>,
}

impl Selection {
    /// Every question of `source`.
    pub fn all(source: Source) -> Selection {
        Selection {
            source,
            hops: None,
            limit: None,
            sample: None,
            shard: None,
            ids: None,
        }
    }

    /// The schema and the file of a file source, resolved as every data-reading command
    /// does: a named dataset without a file reads the fetched dev set, a file without a
    /// name has its schema detected. `None` for questions given in memory.
    pub fn resolve_file(&self) -> Result<Option<(Dataset, PathBuf)>> {
        match &self.source {
            Source::File { dataset, path } => {
                if !path.is_file() {
                    return Err(DataError::Invalid(format!(
                        "data file {} does not exist (pass a benchmark file with --data, or leave \
                         --data out to use a dataset installed by `sleuth data fetch`)",
                        path.display()
                    ))
                    .into());
                }
                let dataset = match dataset {
                    Some(d) => *d,
                    None => data::detect_file(path)?,
                };
                Ok(Some((dataset, path.clone())))
            }
            Source::Fetched(dataset) => {
                let file = data::fetch::default_file(*dataset, &data::fetch::data_dir())?;
                Ok(Some((*dataset, file)))
            }
            Source::Given { .. } => Ok(None),
        }
    }

    /// The schema of the questions.
    pub fn dataset(&self) -> Result<Dataset> {
        match &self.source {
            Source::Given { dataset, .. } => Ok(*dataset),
            _ => Ok(self.resolve_file()?.expect("a file source").0),
        }
    }

    /// Loads and narrows the questions. An empty result before the shard is an error
    /// (the filters left nothing); a shard may be empty (an array with more tasks than
    /// questions), and so may the id filter: the caller says what that means.
    pub fn select(&self) -> Result<Selected> {
        let (dataset, files, all, origin) = match &self.source {
            Source::Given {
                dataset,
                questions,
                files,
            } => (
                *dataset,
                files.clone(),
                Questions::loaded(questions.clone()),
                "the given questions".to_string(),
            ),
            _ => {
                let (dataset, path) = self.resolve_file()?.expect("a file source");
                let questions = Questions::index(dataset, &path)?;
                let origin = path.display().to_string();
                (dataset, vec![path], questions, origin)
            }
        };
        let notes: Vec<String> = self.head_note(&all).into_iter().collect();
        let mut keep = self.narrow(&all);
        if keep.is_empty() {
            return Err(DataError::Invalid(format!(
                "no questions selected from {origin} (check {} and {})",
                Knob::Hops,
                Knob::Limit
            ))
            .into());
        }
        if let Some(shard) = self.shard {
            keep = keep
                .into_iter()
                .enumerate()
                .filter(|(k, _)| shard.owns(*k))
                .map(|(_, i)| i)
                .collect();
        }
        if let Some(ids) = &self.ids {
            let mut wanted = Vec::with_capacity(keep.len());
            for i in keep {
                if ids.contains(&*all.id(i)?) {
                    wanted.push(i);
                }
            }
            keep = wanted;
        }
        Ok(Selected {
            dataset,
            files,
            questions: all.keep(&keep),
            notes,
        })
    }

    /// A `limit` without a sample takes the file's head; MuSiQue's files are ordered by
    /// hops, so that head can be one split only, and the by-hops tables would say
    /// nothing of the others. Said, not changed: the first N stay the first N.
    fn head_note(&self, all: &Questions) -> Option<String> {
        let limit = self
            .limit
            .filter(|_| self.sample.is_none() && self.hops.is_none())?;
        let hops = |n: usize| -> BTreeSet<u8> { (0..n).filter_map(|i| all.hops(i)).collect() };
        let present = hops(all.len());
        let head = hops(limit.min(all.len()));
        if present.len() < 2 || head.len() != 1 {
            return None;
        }
        let only = head.iter().next().expect("one hop count");
        let others: Vec<String> = present
            .iter()
            .filter(|h| *h != only)
            .map(|h| format!("{h}-hop"))
            .collect();
        Some(format!(
            "the first {limit} questions are all {only}-hop (the file is ordered by hops and also holds {}); for a mix use {} {}, or {} per split",
            others.join(", "),
            Knob::Sample.with(limit),
            Knob::Seed.with("S"),
            Knob::Hops.with("H")
        ))
    }

    /// The positions hops, then the sample and the first `limit`, keep.
    fn narrow(&self, all: &Questions) -> Vec<usize> {
        let mut keep: Vec<usize> = (0..all.len()).collect();
        if let Some(h) = self.hops {
            keep.retain(|&i| all.hops(i) == Some(h));
        }
        match self.sample {
            Some(sample) => keep = sample.first(keep, self.limit),
            None => keep.truncate(self.limit.unwrap_or(usize::MAX)),
        }
        keep
    }

    /// The setup questions this selection's sample holds out: the `offset` questions
    /// its seeded order skips, so they never meet the scored ones (EIR paper App. B.1:
    /// twenty setup questions per benchmark, excluded from scoring, beside the 1,000).
    /// `None` without a sample or when it skips nothing.
    pub fn held_out(&self) -> Option<Selection> {
        let sample = self.sample.filter(|s| s.offset > 0)?;
        Some(Selection {
            sample: Some(Sample {
                size: sample.offset,
                seed: sample.seed,
                offset: 0,
            }),
            limit: None,
            ids: None,
            ..self.clone()
        })
    }
}

/// The ids of an earlier run's EIR exact-match errors that missed annotated support:
/// the known failures `eir-recover` is run on (EIR paper App. F.2, F.3). `run` is a run
/// directory or its records file.
pub fn known_failures(run: &Path) -> Result<BTreeSet<String>> {
    let file = if run.is_dir() {
        run.join(crate::eval::store::RECORDS)
    } else {
        run.to_path_buf()
    };
    let records = crate::eval::store::read_records(&file)?;
    Ok(records
        .into_iter()
        .filter(|r| r.method == "eir" && r.em < 1.0)
        .filter(|r| crate::eval::analysis::missing_gold(r).is_some_and(|m| m > 0))
        .map(|r| r.id)
        .collect())
}

impl Sample {
    /// The first `limit` items of the sample's seeded order (all of it without a
    /// limit), in their original order. Every limit takes a prefix of the same order,
    /// so a larger limit keeps every item a smaller one kept.
    pub fn first<T>(&self, questions: Vec<T>, limit: Option<usize>) -> Vec<T> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
        let mut idx: Vec<usize> = (0..questions.len()).collect();
        idx.shuffle(&mut rng);
        idx.drain(..self.offset.min(idx.len()));
        idx.truncate(self.size.min(limit.unwrap_or(usize::MAX)));
        idx.sort_unstable();
        let mut slots: Vec<Option<T>> = questions.into_iter().map(Some).collect();
        idx.into_iter()
            .map(|i| slots[i].take().expect("sampled indices are distinct"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn questions(n: usize) -> Vec<Question> {
        (0..n)
            .map(|i| Question {
                id: format!("q{i}"),
                dataset: Dataset::Jsonl,
                text: format!("question {i}"),
                answers: vec!["a".into()],
                paragraphs: vec![],
                supporting_facts: vec![],
                supporting_paragraphs: vec![],
                hops: Some(2 + (i % 3) as u8),
                kind: None,
            })
            .collect()
    }

    fn given(n: usize) -> Selection {
        Selection::all(Source::Given {
            dataset: Dataset::Jsonl,
            questions: questions(n),
            files: vec![],
        })
    }

    fn ids(s: &Selection) -> Vec<String> {
        let selected = s.select().unwrap();
        selected.questions.ids().unwrap()
    }

    #[test]
    fn the_held_out_setup_questions_never_meet_the_sample() {
        let mut scored = given(60);
        scored.sample = Some(Sample {
            size: 40,
            seed: 7,
            offset: 20,
        });
        let setup = scored.held_out().unwrap();
        let (a, b) = (ids(&scored), ids(&setup));
        assert_eq!((a.len(), b.len()), (40, 20));
        assert!(a.iter().all(|id| !b.contains(id)));
        // Together they are the whole pool: one seeded order, split in two.
        let all: BTreeSet<_> = a.iter().chain(&b).collect();
        assert_eq!(all.len(), 60);
        assert!(given(5).held_out().is_none());
    }

    #[test]
    fn a_head_of_one_hop_count_is_noted() {
        let mut qs = questions(9);
        qs.sort_by_key(|q| q.hops);
        let mut s = Selection::all(Source::Given {
            dataset: Dataset::Jsonl,
            questions: qs,
            files: vec![],
        });
        s.limit = Some(3);
        let notes = s.select().unwrap().notes;
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("all 2-hop") && notes[0].contains("3-hop, 4-hop"),
            "{}",
            notes[0]
        );
        s.limit = Some(4);
        assert!(s.select().unwrap().notes.is_empty());
    }

    #[test]
    fn filters_apply_in_order_and_only_the_filters_may_not_empty_it() {
        let mut s = given(12);
        s.hops = Some(3);
        s.limit = Some(2);
        assert_eq!(ids(&s), ["q1", "q4"]);
        assert!(
            s.select().unwrap().notes.is_empty(),
            "a hops filter says nothing"
        );
        s.shard = Some(Shard { index: 2, count: 2 });
        assert_eq!(ids(&s), ["q4"]);
        s.ids = Some(["q1".to_string()].into());
        assert!(ids(&s).is_empty());
        s.hops = Some(9);
        let err = s.select().unwrap_err().to_string();
        assert!(err.contains("no questions selected"), "{err}");
    }

    #[test]
    fn a_limit_on_a_sample_takes_the_head_of_its_seeded_order() {
        let mut qs = questions(60);
        qs.sort_by_key(|q| q.hops);
        let mut s = Selection::all(Source::Given {
            dataset: Dataset::Jsonl,
            questions: qs,
            files: vec![],
        });
        s.sample = Some(Sample {
            size: 40,
            seed: 7,
            offset: 5,
        });
        let full = ids(&s);
        s.limit = Some(6);
        let smoke = ids(&s);
        assert_eq!(smoke.len(), 6);
        // Drawn from the whole population, not the file's 2-hop head...
        let hops: BTreeSet<char> = smoke.iter().map(|id| id_hops(id)).collect();
        assert!(hops.len() > 1, "{smoke:?}");
        // ...and a subset of the full sample, so the full run extends it.
        assert!(smoke.iter().all(|id| full.contains(id)));
        s.limit = Some(12);
        let larger = ids(&s);
        assert!(smoke.iter().all(|id| larger.contains(id)));
        // The held-out setup questions stay out.
        let setup = s.held_out().unwrap();
        assert!(ids(&setup).iter().all(|id| !larger.contains(id)));
    }

    /// The hop count `questions` gave question `q{i}`, as a digit.
    fn id_hops(id: &str) -> char {
        let i: usize = id[1..].parse().unwrap();
        char::from(b'2' + (i % 3) as u8)
    }
}
