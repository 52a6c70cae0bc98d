//! The command line and the catalogue: `cli_main`, trec_eval's flags parsed for the
//! compatibility layer, the measure families and canonical names.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::errors;
use super::{guarded, heavy};
use crate::measure::Family;

/// Run the `irmetrics` command line with these arguments; returns the exit status.
#[pyfunction]
pub(super) fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<i32> {
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
pub(super) fn parse_cli_args<'py>(
    py: Python<'py>,
    argv: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
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

/// Every measure family: (name, parameters, definition).
#[pyfunction]
pub(super) fn measures() -> Vec<(String, String, String)> {
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
pub(super) fn canonical_names(py: Python<'_>, measure: &str) -> PyResult<Vec<String>> {
    let ms = guarded(py, || {
        crate::measure::parse_measure(measure).map_err(|e| errors::to_py(py, e))
    })?;
    Ok(ms.iter().flat_map(|m| m.column_names()).collect())
}
