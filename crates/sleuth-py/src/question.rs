//! Questions: `sleuth.load` (a benchmark file, selected like `sleuth eval`'s --hops,
//! --limit, --sample) and `Question` (a benchmark's, or the user's own with paragraphs).

use crate::errors;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sleuth::data::{self, Dataset, Paragraph};
use sleuth::study::{Sample, Selection, Source};
use std::path::PathBuf;

/// A multi-hop question with its gold answers and its paragraph pool.
#[pyclass(module = "sleuth", frozen)]
#[derive(Clone)]
pub struct Question {
    pub inner: data::Question,
}

#[derive(serde::Deserialize)]
struct ParagraphInput {
    title: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    sentences: Option<Vec<String>>,
}

#[pymethods]
impl Question {
    /// Your own question: `paragraphs` is a list of `{"title", "text"}` (split into
    /// sentences) or `{"title", "sentences"}` dicts; `answers` (gold first, then
    /// aliases) and `supporting` (titles of the gold paragraphs) are optional and only
    /// used for scoring.
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (text, paragraphs, *, id="ask", answers=None, supporting=None, hops=None, kind=None))]
    fn new(
        py: Python<'_>,
        text: String,
        paragraphs: &Bound<'_, PyAny>,
        id: &str,
        answers: Option<Vec<String>>,
        supporting: Option<Vec<String>>,
        hops: Option<u8>,
        kind: Option<String>,
    ) -> PyResult<Question> {
        let json = py.import("json")?;
        let text_json: String = json.call_method1("dumps", (paragraphs,))?.extract()?;
        let inputs: Vec<ParagraphInput> = serde_json::from_str(&text_json).map_err(|e| {
            errors::DataError::new_err(format!(
                "paragraphs: expected a list of {{\"title\", \"text\"}} or {{\"title\", \"sentences\"}}: {e}"
            ))
        })?;
        let mut pool = Vec::with_capacity(inputs.len());
        for p in inputs {
            let sentences = match (p.sentences, p.text) {
                (Some(s), _) => s,
                (None, Some(t)) => data::split_sentences(&t),
                (None, None) => {
                    return Err(errors::DataError::new_err(format!(
                        "paragraph `{}` has neither text nor sentences",
                        p.title
                    )))
                }
            };
            pool.push(Paragraph::new(p.title, sentences));
        }
        let supporting = supporting.unwrap_or_default();
        let supporting_paragraphs = pool
            .iter()
            .enumerate()
            .filter(|(_, p)| supporting.contains(&p.title))
            .map(|(i, _)| i)
            .collect();
        Ok(Question {
            inner: data::Question {
                id: id.to_string(),
                dataset: Dataset::Jsonl,
                text,
                answers: answers.unwrap_or_default(),
                paragraphs: pool,
                supporting_facts: vec![],
                supporting_paragraphs,
                hops,
                kind,
            },
        })
    }

    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }
    #[getter]
    fn dataset(&self) -> &'static str {
        self.inner.dataset.name()
    }
    /// The question text.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.text
    }
    /// The gold answer ("" when there is none).
    #[getter]
    fn answer(&self) -> &str {
        self.inner.answer()
    }
    /// The gold answer first, then its aliases.
    #[getter]
    fn answers(&self) -> Vec<String> {
        self.inner.answers.clone()
    }
    #[getter]
    fn hops(&self) -> Option<u8> {
        self.inner.hops
    }
    #[getter]
    fn kind(&self) -> Option<String> {
        self.inner.kind.clone()
    }
    /// Titles of the gold (supporting) paragraphs, in pool order.
    #[getter]
    fn gold_titles(&self) -> Vec<String> {
        self.inner
            .gold_titles()
            .into_iter()
            .map(String::from)
            .collect()
    }
    /// The pool: a list of `{"title", "sentences", "text"}` dicts.
    #[getter]
    fn paragraphs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .paragraphs
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("title", &p.title)?;
                d.set_item("sentences", p.sentences.clone())?;
                d.set_item("text", p.text())?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let mut text: String = self.inner.text.chars().take(80).collect();
        if text.len() < self.inner.text.len() {
            text.push('…');
        }
        format!(
            "Question(id={:?}, dataset={:?}, hops={}, text={:?}, answer={:?}, paragraphs={})",
            self.inner.id,
            self.inner.dataset.name(),
            self.inner
                .hops
                .map_or("None".to_string(), |h| h.to_string()),
            text,
            self.inner.answer(),
            self.inner.paragraphs.len()
        )
    }
}

/// Where `eval` and `load` take their questions from: a benchmark file, or questions
/// already in Python (any iterable of `Question`: a filtered list, a slice, a
/// `Questions` built by hand).
pub enum Given {
    File {
        dataset: String,
        path: PathBuf,
    },
    Questions {
        questions: Vec<Question>,
        files: Vec<PathBuf>,
    },
}

/// The selection of `sleuth eval` (the library's): `hops` filter, then a seeded
/// `sample` (after skipping `sample_offset` of its order) or the first `limit`.
pub fn selection(
    given: Given,
    hops: Option<u8>,
    limit: Option<usize>,
    sample: Option<usize>,
    seed: u64,
    sample_offset: usize,
) -> PyResult<Selection> {
    let source = match given {
        Given::File { dataset, path } => Source::File {
            dataset: Some(dataset.parse().map_err(errors::data)?),
            path,
        },
        Given::Questions { questions, files } => {
            let Some(first) = questions.first() else {
                return Err(errors::DataError::new_err("no questions given"));
            };
            Source::Given {
                dataset: first.inner.dataset,
                questions: questions.into_iter().map(|q| q.inner).collect(),
                files,
            }
        }
    };
    if sample.is_none() && sample_offset > 0 {
        return Err(errors::DataError::new_err(
            "sample_offset needs sample (it skips that many of the seeded order)",
        ));
    }
    Ok(Selection {
        source,
        hops,
        limit,
        sample: sample.map(|size| Sample {
            size,
            seed,
            offset: sample_offset,
        }),
        shard: None,
        ids: None,
    })
}

/// The file `sleuth data fetch DATASET` installed, or a `DataError` naming the fetch
/// command to run (the same resolution as the CLI's `--dataset` without `--data`).
#[pyfunction]
pub fn default_data_file(dataset: &str) -> PyResult<String> {
    let dataset: Dataset = dataset.parse().map_err(errors::data)?;
    let path =
        data::fetch::default_file(dataset, &data::fetch::data_dir()).map_err(errors::data)?;
    Ok(path.display().to_string())
}

/// Loads benchmark questions (see the Python wrapper `sleuth.load`).
#[pyfunction]
#[pyo3(signature = (dataset, path, hops=None, limit=None, sample=None, seed=0, sample_offset=0))]
#[allow(clippy::too_many_arguments)]
pub fn load(
    py: Python<'_>,
    dataset: String,
    path: PathBuf,
    hops: Option<u8>,
    limit: Option<usize>,
    sample: Option<usize>,
    seed: u64,
    sample_offset: usize,
) -> PyResult<Vec<Question>> {
    let selection = selection(
        Given::File { dataset, path },
        hops,
        limit,
        sample,
        seed,
        sample_offset,
    )?;
    let selected = py
        .allow_threads(|| selection.select())
        .map_err(errors::to_py)?;
    Ok(selected
        .questions
        .into_vec()
        .map_err(|e| errors::to_py(e.into()))?
        .into_iter()
        .map(|inner| Question { inner })
        .collect())
}
