//! Dense matrices (numpy 2-D float64 arrays, one row per query): thin wrappers over
//! `crate::dense`. The arrays are read in place; the work runs without the GIL.

use std::sync::Arc;

use numpy::{PyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

use super::data::{PyQrels, PyRun};
use super::errors;
use crate::dense::{self, Dcg, Matrix};

/// A C-contiguous float64 matrix (the Python layer makes it one).
fn matrix<'a>(
    py: Python<'_>,
    a: &'a PyReadonlyArray2<'_, f64>,
    what: &str,
) -> PyResult<Matrix<'a>> {
    let [rows, cols] = [a.shape()[0], a.shape()[1]];
    let values = a.as_slice().map_err(|_| {
        errors::input_err(py, format!("{what} must be a C-contiguous float64 matrix"))
    })?;
    Matrix::new(values, rows, cols).map_err(|e| errors::to_py(py, e))
}

/// Qrels and a run from a label matrix and a score matrix (see `crate::dense`).
#[pyfunction]
fn dense_inputs(
    py: Python<'_>,
    y_true: PyReadonlyArray2<'_, f64>,
    y_score: PyReadonlyArray2<'_, f64>,
) -> PyResult<(PyQrels, PyRun)> {
    let (t, s) = (
        matrix(py, &y_true, "y_true")?,
        matrix(py, &y_score, "y_score")?,
    );
    let (q, r) = super::heavy(py, move |_| dense::qrels_and_run(t, s))?;
    Ok((PyQrels { inner: Arc::new(q) }, PyRun { inner: Arc::new(r) }))
}

/// sklearn's DCG (`which="dcg"`) or nDCG (`"ndcg"`) of each row, as a float64 array.
#[pyfunction]
#[pyo3(signature = (which, y_true, y_score, k = None, log_base = 2.0, ignore_ties = false))]
fn dense_dcg<'py>(
    py: Python<'py>,
    which: &str,
    y_true: PyReadonlyArray2<'py, f64>,
    y_score: PyReadonlyArray2<'py, f64>,
    k: Option<usize>,
    log_base: f64,
    ignore_ties: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let which = match which {
        "dcg" => Dcg::Dcg,
        "ndcg" => Dcg::Ndcg,
        other => {
            return Err(errors::input_err(
                py,
                format!("which must be 'dcg' or 'ndcg', not {other:?}"),
            ))
        }
    };
    let (t, s) = (
        matrix(py, &y_true, "y_true")?,
        matrix(py, &y_score, "y_score")?,
    );
    let values = super::heavy(py, move |_| {
        dense::dcg_rows(which, t, s, k, log_base, ignore_ties)
    })?;
    Ok(PyArray1::from_vec(py, values))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dense_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(dense_dcg, m)?)?;
    Ok(())
}
