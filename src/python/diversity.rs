//! `diversity`: ndeval's diversity measures (`crate::diversity`) from Python. The run
//! comes through the one run intake (`data::run_of`: a Run, a path, a dict, a frame,
//! Arrow data); subtopic judgments are a file path or `(query_id, subtopic_id,
//! doc_id, relevance)` rows (pyndeval's `SubtopicQrel`).

use numpy::PyArrayMethods;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

use super::convert::{bool_arg, id_bytes, id_list, int_arg, label_value, short_repr, wide_int};
use super::data::run_of;
use super::{errors, heavy};
use crate::diversity::{evaluate, Options, SubtopicQrels, Ties};
use crate::parallel;

fn given<'a, 'py>(o: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    o.filter(|v| !v.is_none())
}

/// Subtopic judgments from a path or from rows.
fn subtopic_qrels(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<SubtopicQrels> {
    let os = py.import("os")?;
    if obj.is_instance_of::<PyString>() || obj.is_instance(&os.getattr("PathLike")?)? {
        let path: std::path::PathBuf = obj.extract()?;
        return heavy(py, move |_| SubtopicQrels::from_file(&path));
    }
    let rows = obj.try_iter().map_err(|_| {
        errors::input_err(
            py,
            format!(
                "subtopic qrels must be a file path or (query_id, subtopic_id, doc_id, \
                 relevance) rows, got {}",
                short_repr(obj)
            ),
        )
    })?;
    // (topic, subtopic, document, label)
    type Owned = (Vec<u8>, Vec<u8>, Vec<u8>, i64);
    let mut owned: Vec<Owned> = Vec::new();
    for (n, row) in rows.enumerate() {
        let row = row?;
        let what = |field: &str| format!("subtopic qrels row {}: {field}", n + 1);
        let fields: Vec<Bound<'_, PyAny>> = match row.try_iter() {
            Ok(it) if !row.is_instance_of::<PyString>() => it.collect::<PyResult<_>>()?,
            _ => Vec::new(),
        };
        if fields.len() != 4 {
            return Err(errors::format_err(
                py,
                format!(
                    "{} must be (query_id, subtopic_id, doc_id, relevance), got {}",
                    what("the row"),
                    short_repr(&row)
                ),
            ));
        }
        let q = id_bytes(&fields[0], &|| what("query_id"))?.into_owned();
        // subtopic numbers (ndeval's) may come as ints
        let s = if fields[1].is_instance_of::<PyInt>() {
            fields[1].str()?.to_str()?.as_bytes().to_vec()
        } else {
            id_bytes(&fields[1], &|| what("subtopic_id"))?.into_owned()
        };
        let d = id_bytes(&fields[2], &|| what("doc_id"))?.into_owned();
        let l = label_value(&fields[3], &|| what("relevance"))?;
        owned.push((q, s, d, l));
    }
    heavy(py, move |_| {
        SubtopicQrels::from_rows(
            owned
                .iter()
                .map(|(q, s, d, l)| (&q[..], &s[..], &d[..], *l)),
            "subtopic qrels",
        )
    })
}

/// ndeval's measures: `(names, query_ids, values[topics, measures], means)`.
#[pyfunction]
#[pyo3(signature = (qrels, run, measures = None, *, alpha = None, beta = None,
                    relevance_level = None, judged_only = None, complete = None,
                    max_docs = None, ties = "descending", n_threads = None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)] // pyo3 arguments; the 4-tuple Python gets
fn diversity<'py>(
    py: Python<'py>,
    qrels: &Bound<'py, PyAny>,
    run: &Bound<'py, PyAny>,
    measures: Option<&Bound<'py, PyAny>>,
    alpha: Option<&Bound<'py, PyAny>>,
    beta: Option<&Bound<'py, PyAny>>,
    relevance_level: Option<&Bound<'py, PyAny>>,
    judged_only: Option<&Bound<'py, PyAny>>,
    complete: Option<&Bound<'py, PyAny>>,
    max_docs: Option<&Bound<'py, PyAny>>,
    ties: &str,
    n_threads: Option<&Bound<'py, PyAny>>,
) -> PyResult<(
    Vec<String>,
    Bound<'py, pyo3::types::PyList>,
    Bound<'py, PyAny>,
    Vec<f64>,
)> {
    let d = Options::default();
    let unit = |v: Option<&Bound<'py, PyAny>>, what: &str, dflt: f64| -> PyResult<f64> {
        match given(v) {
            None => Ok(dflt),
            Some(v) => v.extract::<f64>().map_err(|_| {
                errors::input_err(
                    py,
                    format!("{what} must be a number from 0 to 1, got {}", short_repr(v)),
                )
            }),
        }
    };
    let opts = Options {
        alpha: unit(alpha, "alpha", d.alpha)?,
        beta: unit(beta, "beta", d.beta)?,
        relevance_level: given(relevance_level).map_or(Ok(d.relevance_level), |v| {
            int_arg(v, "relevance_level", 0, None)
        })?,
        judged_only: given(judged_only).map_or(Ok(false), |v| bool_arg(v, "judged_only"))?,
        complete: given(complete).map_or(Ok(false), |v| bool_arg(v, "complete"))?,
        max_docs: given(max_docs)
            .map(|v| int_arg(v, "max_docs", 1, None))
            .transpose()?,
        ties: Ties::parse(ties).map_err(|e| errors::to_py(py, e))?,
    };
    let n_threads = given(n_threads).map_or(Ok(0), |v| {
        match wide_int(v) {
            Some(n) => parallel::check_threads(n, "n_threads"),
            None => Err(parallel::threads_error("n_threads", &short_repr(v))),
        }
        .map_err(|e| errors::to_py(py, e))
    })?;
    let run = run_of(run)?;
    let qrels = subtopic_qrels(py, qrels)?;
    let names = match given(measures) {
        Some(m) => super::convert::measure_names(m)?,
        None => Vec::new(),
    };
    let res = heavy(py, move |_| {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        parallel::with_threads(n_threads, || evaluate(&qrels, &run, &names, &opts))
    })?;
    let ncols = res.names().len();
    let nq = res.query_ids().len();
    let mut values = Vec::with_capacity(nq * ncols);
    for q in 0..nq {
        values.extend((0..ncols).map(|m| res.value(q, m)));
    }
    let arr = numpy::PyArray1::from_vec(py, values).reshape([nq, ncols])?;
    let ids = id_list(py, res.query_ids().iter().map(|q| &q[..]))?;
    let means = (0..ncols).map(|m| res.mean(m)).collect();
    Ok((res.names().to_vec(), ids, arr.into_any(), means))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(diversity, m)?)?;
    Ok(())
}
