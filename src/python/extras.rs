//! Python functions beyond evaluation: statistics of per-query values and rank
//! correlation (thin wrappers over `crate::stats` and `crate::correlation`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::convert::{float_vec, id_to_py, int_arg, values_vec};
use super::{errors, PyQrels, PyRun};
use crate::correlation::{self, RunComparison};
use crate::stats::{self, Statistic};

/// A statistic of values: `mean`, `gmean` (trec_eval's 1e-5 floor), `median`, `std`
/// (sample, n - 1), `sum`, `count`. NaN for no values (or one, for `std`), except the
/// sum and count (0).
#[pyfunction]
#[pyo3(signature = (values, how = "mean"))]
fn aggregate(py: Python<'_>, values: &Bound<'_, PyAny>, how: &str) -> PyResult<f64> {
    let s = Statistic::parse(how).map_err(|e| errors::to_py(py, e))?;
    let values = values_vec(values, "values")?;
    Ok(py.detach(|| s.of(&values)))
}

/// Seeded percentile-bootstrap confidence interval `(low, high)` for the mean.
#[pyfunction]
#[pyo3(signature = (values, confidence = 0.95, resamples = None, seed = None))]
fn bootstrap_ci(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    confidence: f64,
    resamples: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<(f64, f64)> {
    let resamples: usize = match resamples {
        Some(r) if !r.is_none() => int_arg(r, "resamples", 1, None)?,
        _ => 10_000,
    };
    let seed: u64 = match seed {
        Some(s) if !s.is_none() => int_arg(s, "seed", 0, None)?,
        _ => 0,
    };
    let values = values_vec(values, "values")?;
    super::heavy(py, move |cancel| {
        stats::bootstrap_ci_cancellable(&values, confidence, resamples, seed, Some(cancel))
    })
}

/// Kendall's tau-b of two equally long score lists (NaN when one is constant).
#[pyfunction]
fn kendall_tau(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (x, y) = (float_vec(x, "x")?, float_vec(y, "y")?); // arrays in one copy each
    super::heavy(py, move |_| correlation::kendall_tau_b(&x, &y))
}

/// Spearman's rho of two equally long score lists (NaN when one is constant).
#[pyfunction]
fn spearman_rho(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (x, y) = (float_vec(x, "x")?, float_vec(y, "y")?);
    super::heavy(py, move |_| correlation::spearman_rho(&x, &y))
}

/// Normalized Kendall tau distance of two ranked lists over the pairs of the union of
/// their top k (0 identical, 1 reversed).
#[pyfunction]
#[pyo3(signature = (a, b, k = None, penalty = 0.5))]
fn kendall_topk_distance(
    py: Python<'_>,
    a: Vec<String>,
    b: Vec<String>,
    k: Option<usize>,
    penalty: f64,
) -> PyResult<f64> {
    correlation::kendall_topk_distance(&a, &b, k, penalty).map_err(|e| errors::to_py(py, e))
}

/// Extrapolated rank-biased overlap of two ranked lists with persistence p.
#[pyfunction]
#[pyo3(signature = (a, b, p = 0.9))]
fn rbo(py: Python<'_>, a: Vec<String>, b: Vec<String>, p: f64) -> PyResult<f64> {
    correlation::rbo(&a, &b, p).map_err(|e| errors::to_py(py, e))
}

/// Compare two runs query by query: `{query_id: value}` for the queries both hold.
#[pyfunction]
#[pyo3(signature = (a, b, method = "rbo", k = None, p = 0.9, penalty = 0.5))]
fn compare_runs<'py>(
    py: Python<'py>,
    a: &PyRun,
    b: &PyRun,
    method: &str,
    k: Option<&Bound<'py, PyAny>>,
    p: f64,
    penalty: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let k: Option<usize> = match k {
        Some(k) if !k.is_none() => Some(int_arg(k, "k", 1, None)?),
        _ => None,
    };
    let how = match method {
        "rbo" => RunComparison::Rbo(p),
        "kendall_topk" => RunComparison::KendallTopK(penalty),
        "kendall" => RunComparison::KendallTau,
        "spearman" => RunComparison::SpearmanRho,
        other => {
            return Err(errors::input_err(
                py,
                format!("unknown method '{other}' (rbo, kendall_topk, kendall, spearman)"),
            ))
        }
    };
    if k == Some(0) {
        return Err(errors::input_err(py, "k must be at least 1".into()));
    }
    let (ra, rb) = (a.inner.clone(), b.inner.clone());
    let rows = py
        .detach(move || correlation::compare_runs(&ra, &rb, how, k))
        .map_err(|e| errors::to_py(py, e))?;
    let out = PyDict::new(py);
    for (qid, v) in rows {
        out.set_item(id_to_py(py, &qid)?, v)?;
    }
    Ok(out)
}

/// AUROC pooled over the judged queries (`crate::pooled_auroc`).
#[pyfunction]
#[pyo3(signature = (qrels, run, rel = 1, max_fpr = None))]
fn pooled_auroc(
    py: Python<'_>,
    qrels: &PyQrels,
    run: &PyRun,
    rel: i64,
    max_fpr: Option<f64>,
) -> PyResult<f64> {
    let (q, r) = (qrels.inner.clone(), run.inner.clone());
    py.detach(move || crate::pooled_auroc(&q, &r, rel, max_fpr))
        .map_err(|e| errors::to_py(py, e))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_ci, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_tau, m)?)?;
    m.add_function(wrap_pyfunction!(spearman_rho, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_topk_distance, m)?)?;
    m.add_function(wrap_pyfunction!(rbo, m)?)?;
    m.add_function(wrap_pyfunction!(compare_runs, m)?)?;
    m.add_function(wrap_pyfunction!(pooled_auroc, m)?)?;
    Ok(())
}
