//! The only place that knows Python: the `irmetrics._core` module, its classes, and
//! the conversions. Heavy work runs with the GIL released; Ctrl-C stops it promptly;
//! a panic becomes an `irmetrics.Error`, never a crash.

mod convert;
mod errors;
mod extras;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use numpy::PyArrayMethods;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::error::Result as CoreResult;
use crate::evaluate::{Evaluator, Options};
use crate::measure::{Family, MeasureSet};
use crate::qrels::Qrels;
use crate::results::Results;
use crate::run::Run;
use convert::id_to_py;

/// Run `f` without the GIL on a worker thread, checking for Ctrl-C meanwhile. Errors
/// map to the exception hierarchy; a panic becomes `irmetrics.Error`.
fn heavy<R: Send>(
    py: Python<'_>,
    f: impl FnOnce(&AtomicBool) -> CoreResult<R> + Send,
) -> PyResult<R> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let cancel = AtomicBool::new(false);
    let outcome = std::thread::scope(|s| {
        let (tx, rx) = channel();
        let rx = std::sync::Mutex::new(rx); // shared with the detached closure
        let cancel_flag = &cancel;
        let handle = s.spawn(move || {
            let r = f(cancel_flag);
            let _ = tx.send(());
            r
        });
        loop {
            // Wake up as soon as the work is done, or every 100 ms to look for Ctrl-C.
            let waited = py.detach(|| match rx.lock() {
                Ok(rx) => rx.recv_timeout(Duration::from_millis(100)),
                Err(_) => Err(RecvTimeoutError::Disconnected),
            });
            match waited {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    break Ok(py.detach(|| handle.join()))
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        cancel.store(true, Ordering::Relaxed);
                        let _ = py.detach(|| handle.join());
                        break Err(e);
                    }
                }
            }
        }
    })?;
    match outcome {
        Ok(r) => r.map_err(|e| errors::to_py(py, e)),
        Err(panic) => Err(panic_to_py(py, panic)),
    }
}

/// An unexpected panic as `irmetrics.Error` (never a crash or a `PanicException`).
fn panic_to_py(py: Python<'_>, panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown".into());
    errors::internal(py, format!("internal error (please report it): {msg}"))
}

/// Run `f` on this thread (work too small for [`heavy`]), turning a panic into
/// `irmetrics.Error`.
fn guarded<R>(py: Python<'_>, f: impl FnOnce() -> PyResult<R>) -> PyResult<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(panic_to_py(py, panic)))
}

/// Relevance judgments: for each query, document ids with integer labels.
#[pyclass(frozen, name = "Qrels", module = "irmetrics")]
pub struct PyQrels {
    inner: Arc<Qrels>,
}

#[pymethods]
impl PyQrels {
    /// Read a TREC qrels file (`qid iter docno rel`); gzip is detected, "-" is stdin.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let q = heavy(py, |_| Qrels::from_file(&path))?;
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

    /// Build from a pandas DataFrame. Columns are found by name: query
    /// (`q_id`, `query_id`, `qid`), document (`doc_id`, `docno`, `docid`) and label
    /// (`relevance`, `label`, `rel`, `score`), or given explicitly.
    #[staticmethod]
    #[pyo3(signature = (df, *, query = None, doc = None, label = None))]
    fn from_dataframe(
        df: &Bound<'_, PyAny>,
        query: Option<&str>,
        doc: Option<&str>,
        label: Option<&str>,
    ) -> PyResult<Self> {
        let q = frame_column(df, query, QUERY_COLUMNS, "query id")?;
        let d = frame_column(df, doc, DOC_COLUMNS, "document id")?;
        let l = frame_column(df, label, LABEL_COLUMNS, "label")?.call_method0("to_numpy")?;
        Ok(PyQrels {
            inner: Arc::new(convert::qrels_from_columns(&q, &d, &l)?),
        })
    }

    /// `{query_id: {doc_id: label}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        nested_dict(py, self.inner.queries().iter().map(|q| (q.id(), q.iter())))
    }

    /// Write TREC qrels text to a file.
    fn to_file(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let q = self.inner.clone();
        heavy(py, move |_| {
            let mut buf = Vec::new();
            let _ = crate::trec::write_qrels(&q, &mut buf);
            crate::cli::write_atomically(&path, &buf)
        })
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

/// A run: for each query, document ids with scores (ranked at evaluation time, score
/// descending with ties broken by document id descending, as trec_eval does).
#[pyclass(frozen, name = "Run", module = "irmetrics")]
pub struct PyRun {
    inner: Arc<Run>,
}

#[pymethods]
impl PyRun {
    /// Read a TREC run file (`qid iter docno rank score tag`); gzip is detected, "-" is stdin.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let r = heavy(py, |cancel| {
            crate::trec::read_run_cancellable(&path, Some(cancel))
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
    fn from_dict(d: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<Self> {
        let d = d.cast::<PyDict>().map_err(|_| {
            errors::format_err(
                d.py(),
                "Run.from_dict expects a dict {query_id: {doc_id: score}}".into(),
            )
        })?;
        Ok(PyRun {
            inner: Arc::new(guarded(d.py(), || convert::run_from_dict(d, name))?),
        })
    }

    /// Build from three equally long columns: query ids, doc ids, scores.
    #[staticmethod]
    #[pyo3(signature = (query_ids, doc_ids, scores, name = None))]
    fn from_columns(
        query_ids: &Bound<'_, PyAny>,
        doc_ids: &Bound<'_, PyAny>,
        scores: &Bound<'_, PyAny>,
        name: Option<&str>,
    ) -> PyResult<Self> {
        Ok(PyRun {
            inner: Arc::new(guarded(query_ids.py(), || {
                convert::run_from_columns(query_ids, doc_ids, scores, name)
            })?),
        })
    }

    /// Build from a pandas DataFrame. Columns are found by name: query
    /// (`q_id`, `query_id`, `qid`), document (`doc_id`, `docno`, `docid`) and score
    /// (`score`), or given explicitly.
    #[staticmethod]
    #[pyo3(signature = (df, *, query = None, doc = None, score = None, name = None))]
    fn from_dataframe(
        df: &Bound<'_, PyAny>,
        query: Option<&str>,
        doc: Option<&str>,
        score: Option<&str>,
        name: Option<&str>,
    ) -> PyResult<Self> {
        let (q, d, s) = run_frame_columns(df, query, doc, score)?;
        Ok(PyRun {
            inner: Arc::new(convert::run_from_columns(&q, &d, &s, name)?),
        })
    }

    /// `{query_id: {doc_id: score}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        nested_dict(py, self.inner.queries().iter().map(|q| (q.id(), q.iter())))
    }

    /// Write TREC run text to a file (ranked, ranks from 1).
    fn to_file(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let r = self.inner.clone();
        heavy(py, move |_| {
            let mut buf = Vec::new();
            let _ = crate::trec::write_run(&r, &mut buf);
            crate::cli::write_atomically(&path, &buf)
        })
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

/// A list of ids as Python strings.
fn id_list<'py, 'a>(
    py: Python<'py>,
    ids: impl Iterator<Item = &'a [u8]>,
) -> PyResult<Bound<'py, PyList>> {
    let ids: PyResult<Vec<_>> = ids.map(|id| id_to_py(py, id)).collect();
    PyList::new(py, ids?)
}

const QUERY_COLUMNS: &[&str] = &["q_id", "query_id", "qid"];
const DOC_COLUMNS: &[&str] = &["doc_id", "docno", "docid"];
const LABEL_COLUMNS: &[&str] = &["relevance", "label", "rel", "score"];

/// A DataFrame column given by name, or the first of `candidates` present.
fn frame_column<'py>(
    df: &Bound<'py, PyAny>,
    given: Option<&str>,
    candidates: &[&str],
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = df.py();
    let columns: Vec<String> = df
        .getattr("columns")
        .and_then(|c| c.call_method0("tolist"))
        .and_then(|c| c.extract())
        .map_err(|_| errors::input_err(py, "expected a pandas DataFrame".into()))?;
    let pick = match given {
        Some(g) => columns.iter().find(|c| *c == g),
        None => columns.iter().find(|c| candidates.contains(&c.as_str())),
    };
    match pick {
        Some(c) => df.get_item(c),
        None => Err(errors::input_err(
            py,
            format!(
                "no {what} column: looked for {} among the columns {columns:?}; name it \
                 explicitly",
                given.map_or_else(|| format!("{candidates:?}"), |g| format!("'{g}'"))
            ),
        )),
    }
}

/// A run frame's query id, document id and score columns (found by name unless given).
#[allow(clippy::type_complexity)]
fn run_frame_columns<'py>(
    df: &Bound<'py, PyAny>,
    query: Option<&str>,
    doc: Option<&str>,
    score: Option<&str>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    Ok((
        frame_column(df, query, QUERY_COLUMNS, "query id")?,
        frame_column(df, doc, DOC_COLUMNS, "document id")?,
        frame_column(df, score, &["score"], "score")?,
    ))
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

fn measure_names(measures: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(s) = measures.cast::<PyString>() {
        return Ok(vec![s.to_str()?.to_string()]);
    }
    let mut out = Vec::new();
    for m in measures.try_iter().map_err(|_| {
        errors::input_err(
            measures.py(),
            "measures must be a str or a list of str".into(),
        )
    })? {
        let m = m?;
        let s = m.cast::<PyString>().map_err(|_| {
            errors::input_err(
                m.py(),
                format!("measure names must be str, got {}", m.get_type()),
            )
        })?;
        out.push(s.to_str()?.to_string());
    }
    Ok(out)
}

/// The most threads an evaluator may ask for (beyond, thread creation itself fails).
const MAX_THREADS: usize = 4096;

/// Evaluates runs against fixed judgments and measures (prepared once).
/// Evaluate a Run, a dict `{query_id: {doc_id: score}}` or a pandas DataFrame (both
/// converted and evaluated batch by batch).
fn evaluate_any(
    py: Python<'_>,
    ev: &Arc<Evaluator>,
    run: &Bound<'_, PyAny>,
) -> PyResult<crate::results::Results> {
    if let Ok(r) = run.cast::<PyRun>() {
        let (ev, r) = (ev.clone(), r.get().inner.clone());
        return heavy(py, move |cancel| ev.evaluate_cancellable(&r, Some(cancel)));
    }
    if let Ok(d) = run.cast::<PyDict>() {
        return guarded(py, || convert::evaluate_dict(ev, d, None));
    }
    if run.hasattr("columns")? && run.hasattr("to_numpy")? {
        let (q, d, s) = run_frame_columns(run, None, None, None)?;
        return guarded(py, || convert::evaluate_columns(ev, &q, &d, &s, None));
    }
    let is_mapping = py
        .import("collections.abc")?
        .getattr("Mapping")
        .and_then(|m| run.is_instance(&m))?;
    if is_mapping {
        let d = PyDict::new(py);
        d.update(&run.cast::<pyo3::types::PyMapping>()?.clone())?;
        return guarded(py, || convert::evaluate_dict(ev, &d, None));
    }
    Err(errors::input_err(
        py,
        format!(
            "run must be a Run, a dict {{query_id: {{doc_id: score}}}} or a pandas DataFrame, \
             got {}",
            run.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ),
    ))
}

#[pyclass(frozen, name = "Evaluator", module = "irmetrics")]
pub struct PyEvaluator {
    inner: Arc<Evaluator>,
}

#[pymethods]
impl PyEvaluator {
    #[new]
    #[pyo3(signature = (qrels, measures, *, complete = false, relevance_level = 1, max_docs = None,
                        judged_only = false, num_docs_in_collection = 0, n_threads = 0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        qrels: &PyQrels,
        measures: &Bound<'_, PyAny>,
        complete: bool,
        relevance_level: i64,
        max_docs: Option<i64>,
        judged_only: bool,
        num_docs_in_collection: i64,
        n_threads: i64,
    ) -> PyResult<Self> {
        let n_threads = match usize::try_from(n_threads) {
            Ok(n) if n <= MAX_THREADS => n,
            _ => {
                return Err(errors::input_err(
                    py,
                    format!(
                        "n_threads must be between 0 (all cores) and {MAX_THREADS}, got {n_threads}"
                    ),
                ))
            }
        };
        let names = measure_names(measures)?;
        let set = guarded(py, || {
            MeasureSet::parse(&names).map_err(|e| errors::to_py(py, e))
        })?;
        let max_docs = match max_docs {
            Some(m) if m <= 0 => {
                return Err(errors::input_err(
                    py,
                    format!("max_docs must be a positive number of documents, got {m}"),
                ))
            }
            m => m.map(|m| m as u64),
        };
        let options = Options {
            relevance_level,
            max_docs,
            judged_only,
            complete,
            num_docs_in_collection,
            n_threads,
        };
        let ev = guarded(py, || {
            Evaluator::new(qrels.inner.clone(), set, options).map_err(|e| errors::to_py(py, e))
        })?;
        Ok(PyEvaluator {
            inner: Arc::new(ev),
        })
    }

    /// Evaluate a run: `{measure: value}`, or with `per_query=True`
    /// `{measure: {query_id: value}}`. `run` is a Run, a dict `{query_id: {doc_id: score}}`
    /// or a pandas DataFrame (query id, document id and score columns); dicts and
    /// frames grouped by query are evaluated as they are read, never held whole.
    /// `keys="canonical"` names every value canonically (`P_5`) instead of as
    /// requested (`P@5`).
    #[pyo3(signature = (run, *, per_query = false, keys = "requested"))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyAny>,
        per_query: bool,
        keys: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let canonical = keys_canonical(py, keys)?;
        let res = evaluate_any(py, &self.inner, run)?;
        guarded(py, || results_to_py(py, &res, per_query, canonical))
    }

    /// Evaluate a run file query by query without loading it (bounded memory); the
    /// file must be grouped by query. Same return value as `evaluate`.
    #[pyo3(signature = (path, *, per_query = false, keys = "requested"))]
    fn evaluate_file<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        per_query: bool,
        keys: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let canonical = keys_canonical(py, keys)?;
        let ev = self.inner.clone();
        let res = heavy(py, move |cancel| {
            ev.evaluate_file_cancellable(&path, Some(cancel))
        })?;
        results_to_py(py, &res, per_query, canonical)
    }

    /// Per-query values as one float64 array: `(query_ids, columns, values)` with
    /// `values.shape == (len(query_ids), len(columns))`, plus `summary` (the `all`
    /// values of the same columns). `run` is a Run or, with `stream=True`, a path.
    #[pyo3(signature = (run, *, stream = false))]
    fn evaluate_table<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyAny>,
        stream: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ev = self.inner.clone();
        let res = if stream {
            let path: PathBuf = run.extract()?;
            heavy(py, move |cancel| {
                ev.evaluate_file_cancellable(&path, Some(cancel))
            })?
        } else {
            evaluate_any(py, &ev, run)?
        };
        let cols: Vec<usize> = (0..res.columns().len())
            .filter(|&c| {
                let col = &res.columns()[c];
                Results::is_per_query(col) && col.family != Family::Relstring
            })
            .collect();
        let nq = res.num_queries();
        let mut values = Vec::with_capacity(nq * cols.len());
        for q in 0..nq {
            values.extend(cols.iter().map(|&c| res.value(q, c)));
        }
        let arr = numpy::PyArray1::from_vec(py, values).reshape([nq, cols.len()])?;
        let summary = numpy::PyArray1::from_vec(py, cols.iter().map(|&c| res.summary(c)).collect());
        let ids: Vec<Bound<'py, PyAny>> = res
            .query_ids()
            .iter()
            .map(|id| id_to_py(py, id))
            .collect::<PyResult<_>>()?;
        let names: Vec<String> = cols
            .iter()
            .map(|&c| res.columns()[c].name.clone())
            .collect();
        PyTuple::new(
            py,
            [
                PyList::new(py, ids)?.into_any(),
                PyList::new(py, names)?.into_any(),
                arr.into_any(),
                summary.into_any(),
            ],
        )
    }

    /// trec_eval's text output for a run.
    #[pyo3(signature = (run, *, per_query = false, summary = true))]
    fn trec_text(
        &self,
        py: Python<'_>,
        run: &PyRun,
        per_query: bool,
        summary: bool,
    ) -> PyResult<String> {
        let ev = self.inner.clone();
        let r = run.inner.clone();
        let res = heavy(py, move |cancel| ev.evaluate_cancellable(&r, Some(cancel)))?;
        Ok(String::from_utf8_lossy(&res.to_trec(per_query, summary)).into_owned())
    }

    /// The canonical names of the values computed, in trec_eval's order.
    fn columns(&self) -> Vec<String> {
        self.inner
            .measures()
            .measures()
            .iter()
            .flat_map(|m| m.column_names())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Evaluator(queries={}, columns={:?})",
            self.inner.qrels().len(),
            self.columns()
        )
    }
}

fn keys_canonical(py: Python<'_>, keys: &str) -> PyResult<bool> {
    match keys {
        "requested" => Ok(false),
        "canonical" => Ok(true),
        other => Err(errors::input_err(
            py,
            format!("keys must be 'requested' or 'canonical', got '{other}'"),
        )),
    }
}

/// The keys of a result dict: each request naming one value keeps its spelling,
/// a request naming several values (`P.5,10`, `all_trec`) gives canonical names.
fn keyed_columns(res: &Results) -> Vec<(String, usize)> {
    let cols = res.columns();
    let mut offsets = Vec::new();
    let mut at = 0;
    for m in res.measures().measures() {
        offsets.push(at);
        at += m.width();
    }
    let mut out: Vec<(String, usize)> = Vec::new();
    for (name, picks) in res.measures().requests() {
        let idx: Vec<usize> = picks.iter().map(|&(m, c)| offsets[m] + c).collect();
        if idx.len() == 1 {
            out.push((name.clone(), idx[0]));
        } else {
            out.extend(idx.iter().map(|&i| (cols[i].name.clone(), i)));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|(k, _)| seen.insert(k.clone()));
    out
}

fn results_to_py<'py>(
    py: Python<'py>,
    res: &Results,
    per_query: bool,
    canonical: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let cols = res.columns();
    let ids: Vec<Bound<'py, PyAny>> = res
        .query_ids()
        .iter()
        .map(|id| id_to_py(py, id))
        .collect::<PyResult<_>>()?;
    let keyed = if canonical {
        cols.iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect()
    } else {
        keyed_columns(res)
    };
    for (key, c) in keyed {
        let col = &cols[c];
        if per_query {
            if !Results::is_per_query(col) {
                continue;
            }
            let d = PyDict::new(py);
            for (q, id) in ids.iter().enumerate() {
                if col.family == Family::Relstring {
                    d.set_item(id, res.relstring(q).unwrap_or(""))?;
                } else if col.family.is_integer() {
                    d.set_item(id, res.value(q, c) as i64)?;
                } else {
                    d.set_item(id, res.value(q, c))?;
                }
            }
            out.set_item(key, d)?;
        } else {
            match col.family {
                Family::Relstring => continue,
                Family::RunId => out.set_item(key, id_to_py(py, res.runid())?)?,
                f if f.is_integer() => out.set_item(key, res.summary(c) as i64)?,
                _ => out.set_item(key, res.summary(c))?,
            }
        }
    }
    Ok(out)
}

/// Run the `irmetrics` command line with these arguments; returns the exit status.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<i32> {
    let r = heavy(py, move |_| {
        let mut out = Vec::new();
        let r = crate::cli::run(&argv, &mut out);
        Ok((r, out))
    })?;
    let (result, out) = r;
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let _ = lock.write_all(&out);
    let _ = lock.flush();
    match result {
        Ok(()) => Ok(0),
        Err(e) => {
            let code = if matches!(e, crate::Error::Option(_)) {
                2
            } else {
                1
            };
            eprintln!("irmetrics: {e}");
            Ok(code)
        }
    }
}

/// Parse `irmetrics`/trec_eval command-line flags into a dict (`measures`, `options`,
/// `per_query`, `summary`, `qrels`, `runs`).
#[pyfunction]
fn parse_cli_args<'py>(py: Python<'py>, argv: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    let a = guarded(py, || {
        crate::cli::parse_args(&argv).map_err(|e| errors::to_py(py, e))
    })?;
    let d = PyDict::new(py);
    d.set_item("measures", a.measures)?;
    d.set_item("per_query", a.per_query)?;
    d.set_item("summary", a.summary)?;
    d.set_item("qrels", a.qrels)?;
    d.set_item("runs", a.runs)?;
    let o = PyDict::new(py);
    o.set_item("complete", a.options.complete)?;
    o.set_item("relevance_level", a.options.relevance_level)?;
    o.set_item("max_docs", a.options.max_docs)?;
    o.set_item("judged_only", a.options.judged_only)?;
    o.set_item("num_docs_in_collection", a.options.num_docs_in_collection)?;
    o.set_item("n_threads", a.options.n_threads)?;
    d.set_item("options", o)?;
    Ok(d)
}

/// Called in a child process after `os.fork()` (registered by the Python package):
/// from then on work runs on the calling thread, as the parent's pool is gone.
#[pyfunction]
fn _after_fork_in_child() {
    crate::parallel::mark_forked();
}

/// Every measure family: (name, parameters, definition).
#[pyfunction]
fn measures() -> Vec<(String, String, String)> {
    Family::ALL
        .iter()
        .map(|f| {
            let params = match f.param_kind() {
                crate::measure::ParamKind::None => String::new(),
                _ => f
                    .defaults()
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            };
            (f.name().to_string(), params, f.doc().to_string())
        })
        .collect()
}

/// The canonical names a measure request expands to (`"nDCG@10"` -> `["ndcg_cut_10"]`).
#[pyfunction]
fn canonical_names(py: Python<'_>, measure: &str) -> PyResult<Vec<String>> {
    let ms = guarded(py, || {
        crate::measure::parse_measure(measure).map_err(|e| errors::to_py(py, e))
    })?;
    Ok(ms.iter().flat_map(|m| m.column_names()).collect())
}

/// Deliberately panics, in a worker (`"heavy"`) or on the calling thread (`"direct"`):
/// lets the tests prove that a panic reaches Python as `irmetrics.Error`.
#[pyfunction]
#[allow(clippy::panic)] // the one deliberate panic, for the test of the conversion
fn _panic_for_tests(py: Python<'_>, where_: &str) -> PyResult<()> {
    let msg = format!("deliberate test panic ({where_})");
    match where_ {
        "heavy" => heavy(py, move |_| -> CoreResult<()> { panic!("{msg}") }),
        _ => guarded(py, move || -> PyResult<()> { panic!("{msg}") }),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyQrels>()?;
    m.add_class::<PyRun>()?;
    m.add_class::<PyEvaluator>()?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(measures, m)?)?;
    m.add_function(wrap_pyfunction!(parse_cli_args, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_names, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    extras::register(m)?;
    Ok(())
}
