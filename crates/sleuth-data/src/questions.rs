//! The questions a run answers, held compactly: a selection from a benchmark file keeps
//! one index entry per question and reads each question again when it is needed
//! ([`Questions::get`]), so a run's memory does not grow with its size (issue 32);
//! questions built in memory stay as they are.

use super::load::index::{Index, QuestionFile};
use super::{DataError, Question};
use std::borrow::Cow;
use std::sync::Arc;

/// A list of questions, in order; see the module doc.
#[derive(Debug, Clone)]
pub struct Questions(Inner);

#[derive(Debug, Clone)]
enum Inner {
    Loaded(Vec<Question>),
    Indexed {
        file: Arc<QuestionFile>,
        index: Index,
    },
}

impl Questions {
    /// Questions already in memory.
    pub fn loaded(questions: Vec<Question>) -> Questions {
        Questions(Inner::Loaded(questions))
    }

    /// Indexes a benchmark file (checked as [`super::load`] checks it).
    pub fn index(dataset: super::Dataset, path: &std::path::Path) -> Result<Questions, DataError> {
        let (file, index) = super::load::index::index(dataset, path)?;
        Ok(Questions(Inner::Indexed {
            file: Arc::new(file),
            index,
        }))
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Inner::Loaded(qs) => qs.len(),
            Inner::Indexed { index, .. } => index.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of question `i` (read from its file when indexed: an index holds no ids).
    pub fn id(&self, i: usize) -> Result<Cow<'_, str>, DataError> {
        match &self.0 {
            Inner::Loaded(qs) => Ok(Cow::Borrowed(&qs[i].id)),
            Inner::Indexed { file, index } => file.id(index, i).map(Cow::Owned),
        }
    }

    /// The hop count of question `i`.
    pub fn hops(&self, i: usize) -> Option<u8> {
        match &self.0 {
            Inner::Loaded(qs) => qs[i].hops,
            Inner::Indexed { index, .. } => index.hops(i),
        }
    }

    /// Every id, in order.
    pub fn ids(&self) -> Result<Vec<String>, DataError> {
        (0..self.len())
            .map(|i| self.id(i).map(Cow::into_owned))
            .collect()
    }

    /// Question `i`, read again from its file when indexed.
    pub fn get(&self, i: usize) -> Result<Cow<'_, Question>, DataError> {
        match &self.0 {
            Inner::Loaded(qs) => Ok(Cow::Borrowed(&qs[i])),
            Inner::Indexed { file, index } => file.read(index, i).map(Cow::Owned),
        }
    }

    /// The questions at `positions`, in that order (each at most once).
    pub fn keep(self, positions: &[usize]) -> Questions {
        match self.0 {
            Inner::Loaded(qs) => {
                let mut slots: Vec<Option<Question>> = qs.into_iter().map(Some).collect();
                Questions::loaded(
                    positions
                        .iter()
                        .map(|&i| slots[i].take().expect("positions are distinct"))
                        .collect(),
                )
            }
            Inner::Indexed { file, index } => Questions(Inner::Indexed {
                file,
                index: index.keep(positions),
            }),
        }
    }

    /// Every question, in memory.
    pub fn into_vec(self) -> Result<Vec<Question>, DataError> {
        match self.0 {
            Inner::Loaded(qs) => Ok(qs),
            Inner::Indexed { file, index } => {
                (0..index.len()).map(|i| file.read(&index, i)).collect()
            }
        }
    }
}
