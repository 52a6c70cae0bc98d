//! `Evaluator`: judgments and measures prepared once; runs of any kind evaluated with
//! the GIL released; results as dicts or one numpy table.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::PyArrayMethods;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use super::convert::{self, bool_arg, id_to_py, int_arg, measure_names, short_repr, wide_int};
use super::data::{explain_missing, qrels_of, run_frame_columns, Input, PyQrels, PyRun};
use super::errors;
use super::results::DictShape;
use super::stream::PyQueryStream;
use super::{guarded, heavy, heavy_progress};
use crate::evaluate::{Evaluator, Options};
use crate::measure::{Family, MeasureSet, Names};
use crate::results::Results;
use crate::run::Ties;

use crate::parallel;

/// Evaluate a Run, a file path, a dict `{query_id: {doc_id: score}}` or a data frame
/// (dicts and frames converted and evaluated batch by batch, never held whole).
/// `progress` (a `progress=` argument) counts the evaluated queries of a Run, a path
/// (and the KiB of a TREC file read: [`Evaluator::evaluate_path`]) or Arrow data (then
/// built whole first); dicts and frames, evaluated as they are converted on this
/// thread, report once, at the end.
fn evaluate_any(
    py: Python<'_>,
    ev: &Arc<Evaluator>,
    run: &Bound<'_, PyAny>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<crate::results::Results> {
    let run = &super::data::compat_data(run)?;
    if let Ok(r) = run.cast::<PyRun>() {
        let (ev, r) = (ev.clone(), r.get().inner.clone());
        return heavy_progress(py, progress, move |cancel, p| {
            ev.evaluate_with(&r, Some(cancel), p)
        });
    }
    let res = match Input::of(run, "run", "Run")? {
        Input::Path(path) => {
            let ev = ev.clone();
            return heavy_progress(py, progress, move |cancel, p| {
                ev.evaluate_path(&path, Some(cancel), p)
            });
        }
        Input::Dict(d, _) => guarded(py, || convert::evaluate_dict(ev, &d, Vec::new()))?,
        Input::Rows(rows) => {
            let run = Arc::new(guarded(py, || convert::run_from_rows(&rows, Vec::new()))?);
            let ev = ev.clone();
            return heavy_progress(py, progress, move |cancel, p| {
                ev.evaluate_with(&run, Some(cancel), p)
            });
        }
        Input::Arrow(t) => {
            // evaluated as its rows are taken in, unless progress is asked for (counted
            // over the queries of a run built whole) or a query's rows lie apart
            let quiet = super::Reporter::none_asked(progress);
            if quiet {
                if let Some(res) = guarded(py, || super::arrow::evaluate_table(py, ev, &t))? {
                    return Ok(res);
                }
            }
            // a streamed table was read in part: imported again (a held one is read again)
            let t = if quiet && t.is_streamed() {
                super::arrow::required(run)?
            } else {
                t
            };
            let run = PyRun::from_table(py, &t, [None; 3], Vec::new())?.inner;
            let ev = ev.clone();
            return heavy_progress(py, progress, move |cancel, p| {
                ev.evaluate_with(&run, Some(cancel), p)
            });
        }
        Input::Frame(f, _) => {
            let (q, d, s) = run_frame_columns(&f, None, None, None)?;
            guarded(py, || convert::evaluate_columns(ev, &q, &d, &s, Vec::new())).map_err(|e| {
                explain_missing(
                    "run",
                    [(&q, "query id"), (&d, "document id"), (&s, "score")],
                    e,
                )
            })?
        }
    };
    // converted and evaluated on this thread: one report, at the end
    heavy_progress(py, progress, move |_, p| {
        crate::progress::announce(p, res.num_queries());
        crate::progress::advance(p, res.num_queries());
        Ok(res)
    })
}

/// The evaluation options (`Evaluator`'s keywords, which `evaluate`, `compare`, the
/// plots and Spark pass on).
const OPTIONS: [&str; 9] = [
    "complete",
    "relevance_level",
    "max_docs",
    "judged_only",
    "num_docs_in_collection",
    "n_threads",
    "names",
    "credibility",
    "ties",
];

/// The peers' option names a user brings, and what they are called here.
const PEER_OPTIONS: [(&str, &str); 10] = [
    ("stat_test", "ranx's stat_test is compare's test= ('student' is 't', 'fisher' is 'randomization')"),
    ("max_p", "ranx's max_p is compare's alpha="),
    ("n_permutations", "ranx's n_permutations is compare's n_resamples="),
    ("random_seed", "ranx's random_seed is compare's seed="),
    ("threads", "ranx's threads is n_threads="),
    ("make_comparable", "ranx's make_comparable=True is complete=True (a judged query the run lacks scores 0, as trec_eval -c)"),
    ("return_mean", "ranx's return_mean=False is per_query=True"),
    ("rel", "ir_measures' rel= belongs to a measure ('P(rel=2)@5'); relevance_level= applies to all"),
    ("rounding_digits", "ranx's rounding_digits is the report's: report.to_latex(digits=3) (also to_markdown, to_table; the CLI's --digits)"),
    ("show_percentages", "ranx's show_percentages is the report's: report.to_latex(percentages=True) (the CLI's --percent)"),
];

/// The error for a keyword that is no evaluation option: the peer's name explained, or
/// the nearest option suggested.
fn unknown_option(name: &str) -> crate::error::Error {
    let hint = match PEER_OPTIONS.iter().find(|(n, _)| *n == name) {
        Some((_, h)) => format!(": {h}"),
        None => crate::error::nearest(name, OPTIONS.iter().copied())
            .map_or_else(String::new, |n| format!("; did you mean '{n}'?")),
    };
    crate::error::Error::Option(format!(
        "unknown option '{name}'{hint} (evaluation options: {})",
        OPTIONS.join(", ")
    ))
}

#[pyclass(frozen, name = "Evaluator", module = "irmetrics")]
pub struct PyEvaluator {
    pub(super) inner: Arc<Evaluator>,
    /// What it was made of, for pickling: the judgments, the measure names as given
    /// and whose meaning they take.
    qrels: Arc<crate::qrels::Qrels>,
    measures: Vec<String>,
    names: Option<String>,
}

#[pymethods]
impl PyEvaluator {
    /// Judgments and measures prepared once. `names` picks whose meaning a measure
    /// name takes where the peers differ: None (trec_eval's names keep trec_eval's
    /// meaning), `"ranx"` (bare `recall`, `hits`: the whole ranking) or `"ir_measures"`
    /// (`ERR@k`: gdeval's gmax 4).
    #[new]
    #[pyo3(signature = (qrels, measures, *, complete = None, relevance_level = None,
                        max_docs = None, judged_only = None, num_docs_in_collection = None,
                        n_threads = None, names = None, credibility = None, ties = None,
                        **unknown))]
    #[pyo3(
        text_signature = "(qrels, measures, *, complete=None, relevance_level=None, max_docs=None, judged_only=None, num_docs_in_collection=None, n_threads=None, names=None, credibility=None, ties=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        qrels: &Bound<'_, PyAny>,
        measures: &Bound<'_, PyAny>,
        complete: Option<&Bound<'_, PyAny>>,
        relevance_level: Option<&Bound<'_, PyAny>>,
        max_docs: Option<&Bound<'_, PyAny>>,
        judged_only: Option<&Bound<'_, PyAny>>,
        num_docs_in_collection: Option<&Bound<'_, PyAny>>,
        n_threads: Option<&Bound<'_, PyAny>>,
        names: Option<&str>,
        credibility: Option<&Bound<'_, PyAny>>,
        ties: Option<&Bound<'_, PyAny>>,
        unknown: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        if let Some((name, _)) = unknown.and_then(|u| u.iter().next()) {
            let name = name.str()?.to_string();
            return Err(errors::to_py(py, unknown_option(&name)));
        }
        // every option checked here, by name: an irmetrics error, never a bare
        // OverflowError or TypeError (None: the default)
        let d = Options::default();
        let flag = |o, name| given(o).map_or(Ok(false), |v| bool_arg(v, name));
        let complete = flag(complete, "complete")?;
        let judged_only = flag(judged_only, "judged_only")?;
        let relevance_level = given(relevance_level).map_or(Ok(d.relevance_level), |v| {
            // the engine says why a negative level is refused
            int_arg(v, "relevance_level", i64::MIN, None)
        })?;
        let num_docs_in_collection =
            given(num_docs_in_collection).map_or(Ok(d.num_docs_in_collection), |v| {
                // the engine's check_num_docs says why a value is refused
                int_arg(v, "num_docs_in_collection", i64::MIN, None)
            })?;
        // the one rule of every route (parallel::check_threads), same message
        let n_threads = given(n_threads).map_or(Ok(d.n_threads), |v| {
            match wide_int(v) {
                Some(n) => parallel::check_threads(n, "n_threads"),
                None => Err(parallel::threads_error("n_threads", &short_repr(v))),
            }
            .map_err(|e| errors::to_py(py, e))
        })?;
        let max_docs = given(max_docs)
            .map(|v| int_arg(v, "max_docs", 1, None))
            .transpose()?;
        let qrels = qrels_of(qrels)?;
        let credibility = given(credibility)
            .map(|c| credibility_of(py, c))
            .transpose()?;
        let dialect = names
            .map_or(Ok(Names::Irmetrics), Names::parse)
            .map_err(|e| errors::to_py(py, e))?;
        let measures = measure_names(measures)?;
        let set = guarded(py, || {
            MeasureSet::parse_as(&measures, dialect).map_err(|e| errors::to_py(py, e))
        })?;
        let ties = match given(ties) {
            None => d.ties,
            Some(t) => {
                let name = (t.extract::<String>())
                    .unwrap_or_else(|_| format!("{} (not a str)", short_repr(t)));
                Ties::parse(&name).map_err(|e| errors::to_py(py, e))?
            }
        };
        let options = Options {
            relevance_level,
            max_docs,
            judged_only,
            complete,
            num_docs_in_collection,
            n_threads,
            ties,
        };
        let ev = guarded(py, || {
            Evaluator::new_with_credibility(qrels.clone(), set, options, credibility)
                .map_err(|e| errors::to_py(py, e))
        })?;
        Ok(PyEvaluator {
            inner: Arc::new(ev),
            qrels,
            measures,
            names: names.map(str::to_string),
        })
    }

    /// Evaluate a run: `{measure: value}`, or with `per_query=True`
    /// `{measure: {query_id: value}}`. `run` is a Run, a dict `{query_id: {doc_id: score}}`
    /// or a pandas DataFrame (query id, document id and score columns); dicts and
    /// frames grouped by query are evaluated as they are read, never held whole.
    /// `keys="canonical"` names every value canonically (`P_5`) instead of as
    /// requested (`P@5`). `aggregate` combines the per-query values: `"mean"`
    /// (trec_eval's `all`), `"gmean"`, `"median"`, `"std"`, `"sum"`, `"count"`.
    /// `progress`: True (a tqdm bar, or a line on stderr, once the work has run 2 s),
    /// a callable called as `progress(done, total)` (queries evaluated) about ten times a
    /// second and once at the end, or None / False (silent).
    #[pyo3(signature = (run, *, per_query = false, keys = "requested", aggregate = "mean", progress = None))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyAny>,
        per_query: bool,
        keys: &str,
        aggregate: &str,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shape = DictShape::parse(py, per_query, keys, aggregate)?;
        let res = evaluate_any(py, &self.inner, run, progress)?;
        guarded(py, || shape.to_py(py, &res))
    }

    /// Evaluate a run file query by query without loading it (bounded memory); the
    /// file must be grouped by query. Same return value as `evaluate`.
    #[pyo3(signature = (path, *, per_query = false, keys = "requested", aggregate = "mean"))]
    fn evaluate_file<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        per_query: bool,
        keys: &str,
        aggregate: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shape = DictShape::parse(py, per_query, keys, aggregate)?;
        let ev = self.inner.clone();
        let res = heavy(py, move |cancel| {
            ev.evaluate_file_cancellable(&path, Some(cancel))
        })?;
        shape.to_py(py, &res)
    }

    /// Per-query values as one float64 array: `(query_ids, columns, values)` with
    /// `values.shape == (len(query_ids), len(columns))`, plus `summary` (the `all`
    /// values of the same columns). `run` is a Run or, with `stream=True`, a path.
    /// `progress` as in `evaluate` (not with `stream=True`).
    #[pyo3(signature = (run, *, stream = false, progress = None))]
    fn evaluate_table<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyAny>,
        stream: bool,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        super::errors::require_numpy(py, "per-query values as arrays")?;
        let ev = self.inner.clone();
        let res = if stream {
            if let Some(p) = progress.filter(|p| p.is_truthy().unwrap_or(true)) {
                return Err(errors::input_err(
                    p.py(),
                    "progress is not reported with stream=True".into(),
                ));
            }
            let path: PathBuf = run.extract()?;
            heavy(py, move |cancel| {
                ev.evaluate_file_cancellable(&path, Some(cancel))
            })?
        } else {
            evaluate_any(py, &ev, run, progress)?
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

    /// Every column's per-query values (summary-only columns such as `gm_map`
    /// included), for parts of a qrels split by query that `combine` puts together
    /// (`irmetrics.spark`): `(query_ids, values, num_rel_1)`, `values` float64 of shape
    /// `(len(query_ids), len(columns()))`, `num_rel_1` each query's judged documents
    /// with label >= 1 (trec_eval's `all` value of num_rel under `complete`).
    /// `max_label` is the largest label of the whole qrels (ERR's default gmax).
    #[pyo3(signature = (run, *, max_label = None))]
    fn evaluate_parts<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyAny>,
        max_label: Option<i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        super::errors::require_numpy(py, "per-query values as arrays")?;
        let ev = match max_label {
            Some(l) => Arc::new(
                (*self.inner)
                    .clone()
                    .with_max_label(l)
                    .map_err(|e| errors::to_py(py, e))?,
            ),
            None => self.inner.clone(),
        };
        let res = evaluate_any(py, &ev, run, None)?;
        let (nq, ncols) = (res.num_queries(), res.columns().len());
        let mut values = Vec::with_capacity(nq * ncols);
        let mut rel1 = Vec::with_capacity(nq);
        for (q, id) in res.query_ids().iter().enumerate() {
            values.extend((0..ncols).map(|c| res.value(q, c)));
            rel1.push(ev.qrels().query(id).map_or(0, |qq| qq.num_rel(1)));
        }
        let arr = numpy::PyArray1::from_vec(py, values).reshape([nq, ncols])?;
        let ids: Vec<Bound<'py, PyAny>> = res
            .query_ids()
            .iter()
            .map(|id| id_to_py(py, id))
            .collect::<PyResult<_>>()?;
        PyTuple::new(
            py,
            [
                PyList::new(py, ids)?.into_any(),
                arr.into_any(),
                numpy::PyArray1::from_vec(py, rel1).into_any(),
            ],
        )
    }

    /// The results of parts evaluated apart by `evaluate_parts` (their rows
    /// concatenated in any order): the same dict as `evaluate` on the whole run, the
    /// rows put in query-id order and the `all` row computed from them as one
    /// evaluation does. `num_rel_1` is the sum of the parts' `num_rel_1` (used under
    /// `complete`); a query in two parts is refused.
    #[pyo3(signature = (query_ids, values, num_rel_1 = 0, *, per_query = false,
                        keys = "requested", aggregate = "mean"))]
    #[allow(clippy::too_many_arguments)]
    fn combine<'py>(
        &self,
        py: Python<'py>,
        query_ids: &Bound<'py, PyAny>,
        values: numpy::PyReadonlyArray2<'py, f64>,
        num_rel_1: u64,
        per_query: bool,
        keys: &str,
        aggregate: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shape = DictShape::parse(py, per_query, keys, aggregate)?;
        let mut ids: Vec<Box<[u8]>> = Vec::new();
        for (i, id) in query_ids.try_iter()?.enumerate() {
            let id = id?;
            ids.push(convert::id_bytes(&id, &|| format!("query id {i}"))?.into());
        }
        let values = values.as_slice().map_err(|_| {
            errors::input_err(py, "values must be a C-contiguous float64 array".into())
        })?;
        let mut res = Results::from_parts(self.inner.measures().clone(), ids, values, Vec::new())
            .map_err(|e| errors::to_py(py, e))?;
        if self.inner.options().complete {
            // as Evaluator::finish: trec_eval counts labels >= 1 whatever -l says
            res.set_summary(Family::NumRel, num_rel_1 as f64);
        }
        guarded(py, || shape.to_py(py, &res))
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

    /// A push stream (see `QueryStream`): queries added one at a time, evaluated as
    /// they come, with the numbers of `evaluate` on the whole run; `name` is its tag.
    #[pyo3(signature = (name = None))]
    fn stream(&self, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyQueryStream> {
        let runid = convert::runid_arg(name)?;
        Ok(PyQueryStream::new(self.inner.clone(), runid))
    }

    /// Pickled as `Evaluator(qrels, measures, **options)` (the qrels as flat bytes).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let o = self.inner.options();
        let kw = PyDict::new(py);
        kw.set_item("complete", o.complete)?;
        kw.set_item("relevance_level", o.relevance_level)?;
        kw.set_item("max_docs", o.max_docs)?;
        kw.set_item("judged_only", o.judged_only)?;
        kw.set_item("num_docs_in_collection", o.num_docs_in_collection)?;
        kw.set_item("n_threads", o.n_threads)?;
        kw.set_item("names", self.names.as_deref())?;
        kw.set_item("ties", o.ties.name())?;
        if let Some(c) = self.inner.credibility() {
            kw.set_item("credibility", PyQrels { inner: c.clone() })?;
        }
        let cls = py.get_type::<PyEvaluator>();
        let make = py
            .import("functools")?
            .getattr("partial")?
            .call((cls,), Some(&kw))?;
        let qrels = PyQrels {
            inner: self.qrels.clone(),
        };
        Ok((make, (qrels, self.measures.clone()))
            .into_pyobject(py)?
            .into_any())
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

/// Credibility judgments (`credibility=`): a Qrels, a file path (read by
/// [`read_credibility`](crate::evaluate::read_credibility): a label below 0 is named by
/// file and line), or any other qrels input.
fn credibility_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Arc<crate::qrels::Qrels>> {
    if obj.cast::<PyQrels>().is_err() {
        if let Input::Path(path) = Input::of(obj, "credibility", "Qrels")? {
            return heavy(py, move |_| crate::evaluate::read_credibility(&path)).map(Arc::new);
        }
    }
    qrels_of(obj)
}

/// An optional argument that was given (None means the default).
fn given<'a, 'py>(o: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    o.filter(|v| !v.is_none())
}
