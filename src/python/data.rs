//! `Qrels` and `Run`: the two inputs as Python classes (frozen, holding an `Arc` of the
//! crate's value), built from files, text, dicts, columns and frames.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use super::arrow::{self, Frame, PyArrowData, Table};
use super::convert::{self, id_list, id_to_py};
use super::errors;
use super::errors::input_err;
use super::pickle;
use super::{guarded, heavy};
use crate::arrow::{
    self as core_arrow, find_column, Columns, DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS,
    SCORE_COLUMNS,
};
use crate::qrels::Qrels;
use crate::run::Run;

/// Relevance judgments: for each query, document ids with integer labels.
/// `dataset.<method>()` of an ir_datasets dataset, loading it first when given by id;
/// a dataset without that part says so.
fn ir_datasets_iter<'py>(
    dataset: &Bound<'py, PyAny>,
    method: &str,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = dataset.py();
    let dataset = if dataset.is_instance_of::<PyString>() {
        errors::require(py, "ir_datasets", "a dataset by its id", "ir_datasets")?;
        py.import("ir_datasets")?.call_method1("load", (dataset,))?
    } else {
        dataset.clone()
    };
    let has = format!("has_{}", method.trim_end_matches("_iter"));
    let provides = dataset
        .call_method0(has.as_str())
        .and_then(|v| v.is_truthy())
        .unwrap_or_else(|_| dataset.hasattr(method).unwrap_or(false));
    if !provides {
        return Err(input_err(
            py,
            format!("the dataset {} has no {what}", dataset.repr()?),
        ));
    }
    dataset.call_method0(method)
}

/// A `format=` argument (None: by the file name).
fn file_format(py: Python<'_>, name: Option<&str>) -> PyResult<Option<crate::formats::Format>> {
    name.map(crate::formats::Format::parse)
        .transpose()
        .map_err(|e| errors::to_py(py, e))
}

#[pyclass(frozen, name = "Qrels", module = "irmetrics")]
pub struct PyQrels {
    pub(super) inner: Arc<Qrels>,
}

#[pymethods]
impl PyQrels {
    /// Read a qrels file: TREC (`qid iter docno rel`), JSONL, ranx's JSON, BEIR's TSV
    /// or parquet, by `format` or the file name; gzip is detected, "-" is stdin.
    #[staticmethod]
    #[pyo3(signature = (path, format = None))]
    fn from_file(py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<Self> {
        let format = file_format(py, format)?;
        let q = heavy(py, |cancel| {
            crate::formats::read_qrels(&path, format, Some(cancel))
        })?;
        Ok(PyQrels { inner: Arc::new(q) })
    }

    /// Parse TREC qrels text.
    #[staticmethod]
    #[pyo3(signature = (text, source = "<string>"))]
    fn from_string(text: &Bound<'_, PyAny>, source: &str) -> PyResult<Self> {
        let py = text.py();
        let data = text_bytes(text)?;
        let q = guarded(py, || {
            Qrels::from_bytes(&data, source).map_err(|e| errors::to_py(py, e))
        })?;
        Ok(PyQrels { inner: Arc::new(q) })
    }

    /// Build from `{query_id: {doc_id: label}}`.
    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Self> {
        let d = d.cast::<PyDict>().map_err(|_| {
            errors::format_err(
                d.py(),
                "Qrels.from_dict expects a dict {query_id: {doc_id: label}}".into(),
            )
        })?;
        Ok(PyQrels {
            inner: Arc::new(guarded(d.py(), || convert::qrels_from_dict(d))?),
        })
    }

    /// Build from an iterable of `(query_id, doc_id, relevance)` rows: tuples, named
    /// tuples (ir_datasets' and ir_measures' `Qrel`), or objects with those attributes.
    #[staticmethod]
    fn from_rows(rows: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyQrels {
            inner: Arc::new(guarded(rows.py(), || convert::qrels_from_rows(rows))?),
        })
    }

    /// The judgments of an ir_datasets dataset (an object, or its id, loaded with
    /// `ir_datasets.load`), read from its `qrels_iter()`.
    #[staticmethod]
    fn from_ir_datasets(dataset: &Bound<'_, PyAny>) -> PyResult<Self> {
        let rows = ir_datasets_iter(dataset, "qrels_iter", "qrels")?;
        Self::from_rows(&rows)
    }

    /// Build from three equally long columns: query ids, doc ids, labels.
    #[staticmethod]
    fn from_columns(
        query_ids: &Bound<'_, PyAny>,
        doc_ids: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(PyQrels {
            inner: Arc::new(guarded(query_ids.py(), || {
                convert::qrels_from_columns(query_ids, doc_ids, labels)
            })?),
        })
    }

    /// Build from a pandas DataFrame. Columns are found by name as in every input
    /// (query `q_id`, `query_id`, `qid`, `query`, ...; document `doc_id`, `docno`,
    /// `docid`, ...; label `relevance`, `label`, `rel`, ...: the README lists them all),
    /// or given explicitly.
    #[staticmethod]
    #[pyo3(signature = (df, *, query = None, doc = None, label = None))]
    fn from_dataframe(
        df: &Bound<'_, PyAny>,
        query: Option<&str>,
        doc: Option<&str>,
        label: Option<&str>,
    ) -> PyResult<Self> {
        if let Some(table) = arrow::import(df)? {
            return Self::from_table(df.py(), &table, [query, doc, label]);
        }
        let q = frame_column(df, query, QUERY_COLUMNS, "query id")?;
        let d = frame_column(df, doc, DOC_COLUMNS, "document id")?;
        let l = frame_column(df, label, LABEL_COLUMNS, "label")?;
        let qrels = l
            .call_method0("to_numpy")
            .and_then(|labels| convert::qrels_from_columns(&q, &d, &labels))
            .map_err(|e| {
                explain_missing(
                    "qrels",
                    [(&q, "query id"), (&d, "document id"), (&l, "label")],
                    e,
                )
            })?;
        Ok(PyQrels {
            inner: Arc::new(qrels),
        })
    }

    /// Build from Arrow data: any object with `__arrow_c_stream__` or
    /// `__arrow_c_array__` (a pyarrow Table or RecordBatchReader, a polars DataFrame,
    /// ...), read without a Python object per row. Columns are found by
    /// name as in `from_dataframe`, or given explicitly.
    #[staticmethod]
    #[pyo3(signature = (data, *, query = None, doc = None, label = None))]
    fn from_arrow(
        data: &Bound<'_, PyAny>,
        query: Option<&str>,
        doc: Option<&str>,
        label: Option<&str>,
    ) -> PyResult<Self> {
        let table = arrow::required(data)?;
        Self::from_table(data.py(), &table, [query, doc, label])
    }

    /// The judgments as Arrow data (`query_id`, `doc_id`, `relevance`; queries in id
    /// order), which `pyarrow.table(...)` or `polars.DataFrame(...)` take as they are.
    fn arrow_data(&self, py: Python<'_>) -> PyResult<PyArrowData> {
        let q = self.inner.clone();
        heavy(py, move |_| arrow::qrels_rows(&q))
    }

    /// The judgments as a `pyarrow.Table` (`query_id`, `doc_id`, `relevance`).
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        arrow::to_frame(py, self.arrow_data(py)?, Frame::Arrow, "Qrels.to_arrow()")
    }

    /// The judgments as a `polars.DataFrame` (`query_id`, `doc_id`, `relevance`).
    fn to_polars<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        arrow::to_frame(py, self.arrow_data(py)?, Frame::Polars, "Qrels.to_polars()")
    }

    /// The judgments as a `pandas.DataFrame` (`query_id`, `doc_id`, `relevance`).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        arrow::to_frame(py, self.arrow_data(py)?, Frame::Pandas, "Qrels.to_pandas()")
    }

    /// Pickled as one flat `bytes` (no Python object per judgment).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pickle::reduce_qrels(py, &self.inner)
    }

    /// `{query_id: {doc_id: label}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        nested_dict(py, self.inner.queries().iter().map(|q| (q.id(), q.iter())))
    }

    /// Write the judgments to a file, atomically, in `format` (trec, jsonl, json, tsv,
    /// parquet; None: as the file name implies, TREC otherwise).
    #[pyo3(signature = (path, format = None))]
    fn to_file(&self, py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<()> {
        let format = file_format(py, format)?;
        let q = self.inner.clone();
        heavy(py, move |_| q.to_file(&path, format))
    }

    /// Query ids, in byte order.
    fn query_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        id_list(py, self.inner.queries().iter().map(|q| q.id()))
    }

    /// Number of judgments.
    #[getter]
    fn num_judgments(&self) -> usize {
        self.inner.num_judgments()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, qid: &Bound<'_, PyAny>) -> bool {
        match convert::id_bytes(qid, &|| "query id".into()) {
            Ok(b) => self.inner.query(&b).is_some(),
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Qrels(queries={}, judgments={})",
            self.inner.len(),
            self.inner.num_judgments()
        )
    }
}

impl PyQrels {
    /// Judgments from Arrow data, columns found by name unless `given`.
    pub(super) fn from_table(
        py: Python<'_>,
        table: &Table,
        given: [Option<&str>; 3],
    ) -> PyResult<Self> {
        let cols = arrow_columns(py, table, given, core_arrow::LABEL)?;
        let q = heavy(py, |cancel| table.qrels(&cols, "qrels", cancel))?;
        Ok(PyQrels { inner: Arc::new(q) })
    }
}

/// A run: for each query, document ids with scores (ranked at evaluation time, score
/// descending with ties broken by document id descending, as trec_eval does).
#[pyclass(frozen, name = "Run", module = "irmetrics")]
pub struct PyRun {
    pub(super) inner: Arc<Run>,
}

#[pymethods]
impl PyRun {
    /// Read a run file: TREC (`qid iter docno rank score tag`), JSONL, ranx's JSON,
    /// MS MARCO's TSV (`qid docid rank`, scored -rank) or parquet, by `format` or the
    /// file name; gzip is detected, "-" is stdin.
    #[staticmethod]
    #[pyo3(signature = (path, format = None))]
    fn from_file(py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<Self> {
        let format = file_format(py, format)?;
        let r = heavy(py, |cancel| {
            crate::formats::read_run(&path, format, Some(cancel))
        })?;
        Ok(PyRun { inner: Arc::new(r) })
    }

    /// Parse TREC run text.
    #[staticmethod]
    #[pyo3(signature = (text, source = "<string>"))]
    fn from_string(text: &Bound<'_, PyAny>, source: &str) -> PyResult<Self> {
        let py = text.py();
        let data = text_bytes(text)?;
        let r = guarded(py, || {
            Run::from_bytes(&data, source).map_err(|e| errors::to_py(py, e))
        })?;
        Ok(PyRun { inner: Arc::new(r) })
    }

    /// Build from `{query_id: {doc_id: score}}`; `name` becomes the runid.
    #[staticmethod]
    #[pyo3(signature = (d, name = None))]
    fn from_dict(d: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let runid = convert::runid_arg(name)?;
        let d = d.cast::<PyDict>().map_err(|_| {
            errors::format_err(
                d.py(),
                "Run.from_dict expects a dict {query_id: {doc_id: score}}".into(),
            )
        })?;
        Ok(PyRun {
            inner: Arc::new(guarded(d.py(), || convert::run_from_dict(d, runid))?),
        })
    }

    /// Build from an iterable of `(query_id, doc_id, score)` rows: tuples, named tuples
    /// (ir_datasets' and ir_measures' `ScoredDoc`), or objects with those attributes.
    #[staticmethod]
    #[pyo3(signature = (rows, name = None))]
    fn from_rows(rows: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let runid = convert::runid_arg(name)?;
        Ok(PyRun {
            inner: Arc::new(guarded(rows.py(), || convert::run_from_rows(rows, runid))?),
        })
    }

    /// The scored documents of an ir_datasets dataset (an object, or its id), read from
    /// its `scoreddocs_iter()`.
    #[staticmethod]
    #[pyo3(signature = (dataset, name = None))]
    fn from_ir_datasets(
        dataset: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let rows = ir_datasets_iter(dataset, "scoreddocs_iter", "scored documents")?;
        Self::from_rows(&rows, name)
    }

    /// Build from three equally long columns: query ids, doc ids, scores.
    #[staticmethod]
    #[pyo3(signature = (query_ids, doc_ids, scores, name = None))]
    fn from_columns(
        query_ids: &Bound<'_, PyAny>,
        doc_ids: &Bound<'_, PyAny>,
        scores: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let runid = convert::runid_arg(name)?;
        Ok(PyRun {
            inner: Arc::new(guarded(query_ids.py(), || {
                convert::run_from_columns(query_ids, doc_ids, scores, runid)
            })?),
        })
    }

    /// Build from a pandas DataFrame. Columns are found by name as in every input
    /// (query `q_id`, `query_id`, `qid`, `query`, ...; document `doc_id`, `docno`,
    /// `docid`, ...; score `score`, `similarity`: the README lists them all), or given
    /// explicitly.
    #[staticmethod]
    #[pyo3(signature = (df, *, query = None, doc = None, score = None, name = None))]
    fn from_dataframe(
        df: &Bound<'_, PyAny>,
        query: Option<&str>,
        doc: Option<&str>,
        score: Option<&str>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let runid = convert::runid_arg(name)?;
        if let Some(table) = arrow::import(df)? {
            return Self::from_table(df.py(), &table, [query, doc, score], runid);
        }
        let (q, d, s) = run_frame_columns(df, query, doc, score)?;
        let run = convert::run_from_columns(&q, &d, &s, runid).map_err(|e| {
            explain_missing(
                "run",
                [(&q, "query id"), (&d, "document id"), (&s, "score")],
                e,
            )
        })?;
        Ok(PyRun {
            inner: Arc::new(run),
        })
    }

    /// Build from Arrow data (see `Qrels.from_arrow`); `name` becomes the runid.
    #[staticmethod]
    #[pyo3(signature = (data, *, query = None, doc = None, score = None, name = None))]
    fn from_arrow(
        data: &Bound<'_, PyAny>,
        query: Option<&str>,
        doc: Option<&str>,
        score: Option<&str>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let runid = convert::runid_arg(name)?;
        let table = arrow::required(data)?;
        Self::from_table(data.py(), &table, [query, doc, score], runid)
    }

    /// A copy with each score rounded to the nearest 32-bit float, as pytrec_eval and
    /// trec_eval 9 hold scores (a C `float`; trec_eval 10 and irmetrics read a double):
    /// scores closer than a float's precision tie, then document ids order them.
    fn with_float32_scores(&self, py: Python<'_>) -> PyResult<PyRun> {
        let r = self.inner.clone();
        let out = heavy(py, move |_| Ok(r.with_float32_scores()))?;
        Ok(PyRun {
            inner: Arc::new(out),
        })
    }

    /// The run as Arrow data (`query_id`, `doc_id`, `score`; queries in id order, each
    /// ranked as trec_eval ranks it), which `pyarrow.table(...)` or
    /// `polars.DataFrame(...)` take as they are.
    fn arrow_data(&self, py: Python<'_>) -> PyResult<PyArrowData> {
        let r = self.inner.clone();
        heavy(py, move |_| arrow::run_rows(&r))
    }

    /// The run as a `pyarrow.Table` (`query_id`, `doc_id`, `score`).
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        arrow::to_frame(py, self.arrow_data(py)?, Frame::Arrow, "Run.to_arrow()")
    }

    /// The run as a `polars.DataFrame` (`query_id`, `doc_id`, `score`).
    fn to_polars<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        arrow::to_frame(py, self.arrow_data(py)?, Frame::Polars, "Run.to_polars()")
    }

    /// The run as a `pandas.DataFrame` (`query_id`, `doc_id`, `score`).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        arrow::to_frame(py, self.arrow_data(py)?, Frame::Pandas, "Run.to_pandas()")
    }

    /// Pickled as one flat `bytes` (no Python object per result), tag included.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pickle::reduce_run(py, &self.inner)
    }

    /// `{query_id: {doc_id: score}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        nested_dict(py, self.inner.queries().iter().map(|q| (q.id(), q.iter())))
    }

    /// Write the run to a file, atomically, ranked (ranks from 1), in `format` (trec,
    /// jsonl, json, tsv, parquet; None: as the file name implies, TREC otherwise).
    #[pyo3(signature = (path, format = None))]
    fn to_file(&self, py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<()> {
        let format = file_format(py, format)?;
        let r = self.inner.clone();
        heavy(py, move |_| r.to_file(&path, format))
    }

    /// Query ids, in byte order.
    fn query_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        id_list(py, self.inner.queries().iter().map(|q| q.id()))
    }

    /// The run tag (trec_eval's runid: the tag of the file's last line).
    #[getter]
    fn runid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        id_to_py(py, self.inner.runid())
    }

    /// Number of (query, document) results.
    #[getter]
    fn num_results(&self) -> usize {
        self.inner.num_results()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, qid: &Bound<'_, PyAny>) -> bool {
        match convert::id_bytes(qid, &|| "query id".into()) {
            Ok(b) => self.inner.query(&b).is_some(),
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Run(name={:?}, queries={}, results={})",
            String::from_utf8_lossy(self.inner.runid()),
            self.inner.len(),
            self.inner.num_results()
        )
    }
}

impl PyRun {
    /// A run from Arrow data, columns found by name unless `given`.
    pub(super) fn from_table(
        py: Python<'_>,
        table: &Table,
        given: [Option<&str>; 3],
        runid: Vec<u8>,
    ) -> PyResult<Self> {
        let cols = arrow_columns(py, table, given, core_arrow::SCORE)?;
        let r = heavy(py, |cancel| table.run(&cols, "run", &runid, cancel))?;
        Ok(PyRun { inner: Arc::new(r) })
    }
}

/// `{query_id: {doc_id: value}}` from the crate's per-query iterators.
fn nested_dict<'py, 'a, V: IntoPyObject<'py>>(
    py: Python<'py>,
    queries: impl Iterator<Item = (&'a [u8], impl Iterator<Item = (&'a [u8], V)>)>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (qid, docs) in queries {
        let inner = PyDict::new(py);
        for (doc, value) in docs {
            inner.set_item(id_to_py(py, doc)?, value)?;
        }
        out.set_item(id_to_py(py, qid)?, inner)?;
    }
    Ok(out)
}

/// A data frame's column labels, checked where the frame comes in: one level (a
/// MultiIndex is refused: its labels are tuples, which no column name matches).
fn frame_labels<'py>(df: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let py = df.py();
    let not_frame = || {
        errors::input_err(
            py,
            format!(
                "expected a pandas DataFrame (named columns), got {}",
                df.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ),
        )
    };
    let columns = df.getattr("columns").map_err(|_| not_frame())?;
    let levels: usize = columns
        .getattr("nlevels")
        .and_then(|n| n.extract())
        .unwrap_or(1);
    if levels > 1 {
        return Err(errors::input_err(
            py,
            format!(
                "the DataFrame's columns are a MultiIndex ({levels} levels, e.g. {}), so no \
                 column has a plain name; flatten them first, e.g. df.columns = \
                 ['_'.join(map(str, c)) for c in df.columns], or pass the flat columns",
                columns
                    .get_item(0)
                    .map_or_else(|_| "?".into(), |c| convert::short_repr(&c))
            ),
        ));
    }
    columns
        .try_iter()
        .map_err(|_| not_frame())?
        .collect::<PyResult<Vec<_>>>()
}

/// A DataFrame column given by name, or the first of `candidates` present; refused
/// (naming the column) when that name labels more than one column.
fn frame_column<'py>(
    df: &Bound<'py, PyAny>,
    given: Option<&str>,
    candidates: &[&str],
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let labels = frame_labels(df)?;
    let name = |l: &Bound<'py, PyAny>| l.cast::<PyString>().ok().map(|s| s.to_string());
    let names: Vec<Option<String>> = labels.iter().map(name).collect();
    let shown = || labels.iter().map(convert::short_repr).collect();
    let dedupe = ", e.g. df.loc[:, ~df.columns.duplicated()]";
    let pick = find_column(&names, &shown, given, candidates, what, dedupe)
        .map_err(|e| errors::input_err(df.py(), e + &index_hint(df, given, candidates)))?;
    df.get_item(&labels[pick])
}

/// When the column looked for is the frame's index (or a level of it: pandas'
/// `set_index`), the words that say so; empty otherwise.
fn index_hint(df: &Bound<'_, PyAny>, given: Option<&str>, candidates: &[&str]) -> String {
    let names: Vec<String> = (df.getattr("index").and_then(|i| i.getattr("names")))
        .and_then(|n| n.try_iter()?.map(|x| x?.extract::<String>()).collect())
        .unwrap_or_default();
    let wanted = |n: &String| given.map_or(candidates.contains(&n.as_str()), |g| g == n);
    match names.iter().find(|n| wanted(n)) {
        Some(n) => format!(
            "; '{}' is the frame's index, not a column: df.reset_index() makes it one",
            crate::error::show(n.as_bytes())
        ),
        None => String::new(),
    }
}

/// The columns of Arrow data holding the query ids, the document ids and the values
/// (`third`: [`core_arrow::SCORE`] or [`core_arrow::LABEL`]), found by name as in a
/// DataFrame unless given.
fn arrow_columns(
    py: Python<'_>,
    table: &Table,
    given: [Option<&str>; 3],
    third: (&[&str], &'static str),
) -> PyResult<Columns> {
    Columns::find(&table.names(), given, third).map_err(|e| errors::input_err(py, e))
}

/// A run frame's query id, document id and score columns (found by name unless given).
#[allow(clippy::type_complexity)]
pub(super) fn run_frame_columns<'py>(
    df: &Bound<'py, PyAny>,
    query: Option<&str>,
    doc: Option<&str>,
    score: Option<&str>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    Ok((
        frame_column(df, query, QUERY_COLUMNS, "query id")?,
        frame_column(df, doc, DOC_COLUMNS, "document id")?,
        frame_column(df, score, SCORE_COLUMNS, "score")?,
    ))
}

/// A frame's conversion failed: if the reason is a missing value (None, NaN, `pd.NA`,
/// a nullable dtype's null) in one of its columns (query id, document id, value), the
/// error says so, naming the column and the first such row by position (`df.iloc`)
/// in `source` ("qrels" or "run"); otherwise the conversion's own error stands (a
/// missing value always makes a conversion fail: ids must be `str`, labels integers,
/// scores not NaN). Looked for only on this error path: one vectorized `isna()` per
/// column, never a Python object per row, and no cost when the frame converts.
pub(super) fn explain_missing(
    source: &str,
    cols: [(&Bound<'_, PyAny>, &str); 3],
    err: PyErr,
) -> PyErr {
    let py = cols[0].0.py();
    if !err.is_instance_of::<pyo3::exceptions::PyValueError>(py) {
        return err; // KeyboardInterrupt and the like pass through
    }
    let first_missing = |col: &Bound<'_, PyAny>| -> PyResult<Option<usize>> {
        let mask = col.call_method0("isna")?.call_method0("to_numpy")?;
        if !mask.call_method0("any")?.is_truthy()? {
            return Ok(None);
        }
        Ok(Some(mask.call_method0("argmax")?.extract()?))
    };
    let mut found: Option<(usize, usize)> = None;
    for (i, (col, _)) in cols.iter().enumerate() {
        if let Ok(Some(row)) = first_missing(col) {
            if found.is_none_or(|(r, _)| row < r) {
                found = Some((row, i));
            }
        }
    }
    let Some((row, i)) = found else {
        return err;
    };
    let (col, what) = cols[i];
    let name = col
        .getattr("name")
        .map_or_else(|_| "?".into(), |n| convert::short_repr(&n));
    let value = col
        .getattr("iloc")
        .and_then(|l| l.get_item(row))
        .map_or_else(|_| "?".into(), |v| convert::short_repr(&v));
    errors::format_err(
        py,
        format!(
            "{source}, row {row}: the {what} column {name} holds a missing value ({value}); \
             drop or fill the rows with missing values first (rows are counted from 0, as \
             df.iloc)"
        ),
    )
}

fn text_bytes(text: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = text.extract::<Vec<u8>>() {
        if !text.is_instance_of::<PyString>() {
            return Ok(b);
        }
    }
    if !text.is_instance_of::<PyString>() {
        return Err(errors::format_err(
            text.py(),
            format!(
                "text must be a str or bytes in TREC format, got {}",
                text.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ),
        ));
    }
    Ok(convert::id_bytes(text, &|| "text".into())?.into_owned())
}

/// What kind of input a Python object is, decided in this one place: a file path
/// (`str` or `os.PathLike`), a dict (or any Mapping, copied; ranx's `Qrels` and `Run`
/// through their `to_dict()`, a ranx run's name kept as its tag), Arrow data, a data
/// frame (an object with `columns` and `to_numpy`; trectools' `TrecQrel` and `TrecRun`
/// through theirs), or rows (a list, a tuple or an
/// iterator of `(query_id, doc_id, value)`: ir_measures' and ir_datasets' named
/// tuples). `Qrels` and `Run` objects are recognized by callers.
pub(super) enum Input<'py> {
    Path(PathBuf),
    /// A dict and the run tag it carries (ranx's run name), as given.
    Dict(Bound<'py, PyDict>, Option<Bound<'py, PyAny>>),
    Arrow(Table),
    /// A data frame and the run tag it carries (trectools' run id), as given.
    Frame(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>),
    Rows(Bound<'py, PyAny>),
}

/// A peer's object read as a dict or a frame, with the run tag it carries as given
/// (checked where the run is built, as a `name=` argument is).
type Tagged<'py, T> = Option<(Bound<'py, T>, Option<Bound<'py, PyAny>>)>;

/// ranx's `Qrels` or `Run` (known by its module; ranx is never imported here) as the
/// dict its `to_dict()` gives, with the run's name.
fn ranx_dict<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Tagged<'py, PyDict>> {
    if !convert::of_package(obj, "ranx") || !obj.hasattr("to_dict")? {
        return Ok(None);
    }
    // a fresh dict (a defaultdict) of plain dicts: read as it is, not copied again
    let d = obj.call_method0("to_dict")?.cast_into::<PyDict>()?;
    Ok(Some((d, obj.getattr("name").ok())))
}

/// trectools' `TrecQrel` or `TrecRun` (known by its module) as its data frame
/// (`qrels_data`: `query`, `q0`, `docid`, `rel`; `run_data`: `query`, `q0`, `docid`,
/// `rank`, `score`, `system`), whose columns are found by name, with a run's id.
fn trectools_frame<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Tagged<'py, PyAny>> {
    if !convert::of_package(obj, "trectools") {
        return Ok(None);
    }
    if obj.hasattr("qrels_data")? {
        return Ok(Some((obj.getattr("qrels_data")?, None)));
    }
    if !obj.hasattr("run_data")? {
        return Ok(None);
    }
    Ok(Some((
        obj.getattr("run_data")?,
        obj.call_method0("get_runid").ok(),
    )))
}

impl<'py> Input<'py> {
    pub(super) fn of(obj: &Bound<'py, PyAny>, what: &str, class: &str) -> PyResult<Input<'py>> {
        let py = obj.py();
        if let Ok(d) = obj.cast::<PyDict>() {
            return Ok(Input::Dict(d.clone(), None));
        }
        let os = py.import("os")?;
        if obj.is_instance_of::<PyString>() || obj.is_instance(&os.getattr("PathLike")?)? {
            return Ok(Input::Path(obj.extract()?));
        }
        if let Some(table) = arrow::import(obj)? {
            return Ok(Input::Arrow(table));
        }
        if obj.hasattr("columns")? && obj.hasattr("to_numpy")? {
            return Ok(Input::Frame(obj.clone(), None));
        }
        let mapping = py.import("collections.abc")?.getattr("Mapping")?;
        if obj.is_instance(&mapping)? {
            let d = PyDict::new(py);
            d.update(obj.cast::<pyo3::types::PyMapping>()?)?;
            return Ok(Input::Dict(d, None));
        }
        if let Some((d, name)) = ranx_dict(obj)? {
            return Ok(Input::Dict(d, name));
        }
        if let Some((frame, tag)) = trectools_frame(obj)? {
            return Ok(Input::Frame(frame, tag));
        }
        // an open file iterates as lines of text, not rows: its path is what to give
        if obj.hasattr("read")? && obj.hasattr("__next__")? {
            return Err(input_err(
                py,
                format!(
                    "{what} is an open file ({}); pass its path instead (irmetrics reads \
                     files itself, in any format it knows)",
                    convert::short_repr(obj)
                ),
            ));
        }
        if obj.is_instance_of::<PyList>()
            || obj.is_instance_of::<pyo3::types::PyTuple>()
            || obj.hasattr("__next__")?
        {
            return Ok(Input::Rows(obj.clone()));
        }
        // ir_measures' calc_aggregate(measures, qrels, run) puts them first
        let hint = if convert::of_package(obj, "ir_measures") {
            " (a measure? measures come last: evaluate(qrels, run, measures))"
        } else {
            ""
        };
        Err(input_err(
            py,
            format!(
                "{what} must be a {class}, a dict, a DataFrame, Arrow data, rows or a file \
                 path, not {}{hint}",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ),
        ))
    }
}

/// Judgments from any input kind (see [`Input`]).
pub(super) fn qrels_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Qrels>> {
    let obj = &compat_data(obj)?;
    if let Ok(q) = obj.cast::<PyQrels>() {
        return Ok(q.get().inner.clone());
    }
    let py = obj.py();
    let q = match Input::of(obj, "qrels", "Qrels")? {
        Input::Path(p) => PyQrels::from_file(py, p, None)?,
        Input::Dict(d, _) => PyQrels::from_dict(d.as_any())?,
        Input::Arrow(t) => PyQrels::from_table(py, &t, [None; 3])?,
        Input::Frame(f, _) => PyQrels::from_dataframe(&f, None, None, None)?,
        Input::Rows(rows) => PyQrels::from_rows(&rows)?,
    };
    Ok(q.inner)
}

/// `obj`, or the irmetrics data it holds when it is an object of `irmetrics.compat`
/// (`irmetrics.compat.ranx`'s `Qrels` and `Run`: their `data`), so that irmetrics' own
/// functions take them.
pub(super) fn compat_data<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if convert::of_package(obj, "irmetrics.compat") && obj.hasattr("data")? {
        return obj.getattr("data");
    }
    Ok(obj.clone())
}

/// A run from any input kind (see [`Input`]).
pub(super) fn run_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Run>> {
    let obj = &compat_data(obj)?;
    if let Ok(r) = obj.cast::<PyRun>() {
        return Ok(r.get().inner.clone());
    }
    let py = obj.py();
    let r = match Input::of(obj, "run", "Run")? {
        Input::Path(p) => PyRun::from_file(py, p, None)?,
        Input::Dict(d, tag) => PyRun::from_dict(d.as_any(), tag.as_ref())?,
        Input::Arrow(t) => PyRun::from_table(py, &t, [None; 3], Vec::new())?,
        Input::Frame(f, tag) => PyRun::from_dataframe(&f, None, None, None, tag.as_ref())?,
        Input::Rows(rows) => PyRun::from_rows(&rows, None)?,
    };
    Ok(r.inner)
}

/// `Qrels` from a Qrels, a file path, a dict or a DataFrame.
#[pyfunction]
pub(super) fn as_qrels(obj: &Bound<'_, PyAny>) -> PyResult<PyQrels> {
    Ok(PyQrels {
        inner: qrels_of(obj)?,
    })
}

/// `Run` from a Run, a file path, a dict or a DataFrame.
#[pyfunction]
pub(super) fn as_run(obj: &Bound<'_, PyAny>) -> PyResult<PyRun> {
    Ok(PyRun {
        inner: run_of(obj)?,
    })
}

/// A `Run` from the bytes of its pickle (`Run.__reduce__`).
#[pyfunction]
pub(super) fn _run_from_pickle(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<PyRun> {
    let data = data.as_bytes();
    let run = heavy(py, |_| pickle::run_from_bytes(data))?;
    Ok(PyRun {
        inner: Arc::new(run),
    })
}

/// `Qrels` from the bytes of its pickle (`Qrels.__reduce__`).
#[pyfunction]
pub(super) fn _qrels_from_pickle(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<PyQrels> {
    let data = data.as_bytes();
    let qrels = heavy(py, |_| pickle::qrels_from_bytes(data))?;
    Ok(PyQrels {
        inner: Arc::new(qrels),
    })
}

/// Write `data` to `path` atomically, as every file irmetrics writes (see
/// `trec::write_atomically`): the Python layer's plots and HTML pages go through it.
#[pyfunction]
pub(super) fn _write_file(
    py: Python<'_>,
    path: PathBuf,
    data: &Bound<'_, PyBytes>,
) -> PyResult<()> {
    let data = data.as_bytes().to_vec();
    heavy(py, move |_| crate::trec::write_atomically(&path, &data))
}

/// Set the longest line accepted in TREC files, in bytes (default 1 MiB, or
/// `IRMETRICS_MAX_LINE_BYTES`); returns the previous limit.
#[pyfunction]
pub(super) fn set_max_line_bytes(n: &Bound<'_, PyAny>) -> PyResult<usize> {
    let n = convert::int_arg(n, "n", 0usize, None)?;
    let before = crate::trec::max_line_bytes();
    crate::trec::set_max_line_bytes(n);
    Ok(before)
}
