//! The command line and the catalogue: `cli_main`, trec_eval's flags parsed for the
//! compatibility layer, the measure families and canonical names.

use std::ffi::OsString;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::errors;
use super::{guarded, heavy, heavy_committed};
use crate::measure::Family;

/// Run the `irmetrics` command line with these arguments (`str`, as `os.fsdecode`
/// gives them: file names that are not UTF-8 come as surrogate escapes and reach the
/// command line as their bytes); returns the exit status.
/// A Ctrl-C that comes once the run is complete (its output file renamed into place)
/// does not make it an interrupted one. `last=True` (the console script): from then
/// on Ctrl-C is ignored for the rest of the process, so that no signal arriving
/// between here and the exit can either.
#[pyfunction]
#[pyo3(signature = (argv, last = false))]
pub(super) fn cli_main(py: Python<'_>, argv: Vec<OsString>, last: bool) -> PyResult<i32> {
    // the output goes to standard output as it is made (trec text of a large run is
    // not held whole first), and stops at Ctrl-C
    let r = heavy_committed(py, move |cancel| {
        let mut out = UntilCancelled {
            out: std::io::stdout().lock(),
            cancel,
        };
        let r = crate::cli::run_cancellable(&argv, &mut out, Some(cancel));
        Ok((r, std::io::Write::flush(&mut out.out)))
    })?;
    if last {
        ignore_ctrl_c_from_now_on(py)?;
    }
    let (result, flushed) = r;
    match result.and(flushed.map_err(crate::Error::stdout_write)) {
        Ok(()) => Ok(0),
        // the reader of a pipe has gone (`irmetrics -q ... | head`): status 1 and no
        // message, as Python's own advice for a closed pipe has it (trec_eval, killed
        // by SIGPIPE, says nothing either)
        Err(e) if e.is_broken_pipe() => Ok(1),
        Err(e) => {
            eprintln!("irmetrics: {e}");
            Ok(crate::cli::exit_code(&e))
        }
    }
}

/// A writer that fails once `cancel` is set (Ctrl-C while the output is written).
struct UntilCancelled<'a, W> {
    out: W,
    cancel: &'a std::sync::atomic::AtomicBool,
}

impl<W: std::io::Write> std::io::Write for UntilCancelled<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(std::io::Error::other("interrupted"));
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Set Ctrl-C to be ignored. Importing `signal` and calling `signal.signal` run Python
/// code, which first delivers any Ctrl-C still pending: one that came once the run was
/// complete, so it is dropped and the switch tried again (a bounded number of times).
fn ignore_ctrl_c_from_now_on(py: Python<'_>) -> PyResult<()> {
    let switch = || -> PyResult<()> {
        let signal = py.import("signal")?;
        let (sigint, ignore) = (signal.getattr("SIGINT")?, signal.getattr("SIG_IGN")?);
        signal.call_method1("signal", (sigint, ignore))?;
        Ok(())
    };
    let mut tries = 0;
    loop {
        match switch() {
            Err(e)
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
                    && tries < 1000 =>
            {
                tries += 1
            }
            r => return r,
        }
    }
}

/// Evaluate like `trec_eval ARGV` through the command line's own flow
/// ([`crate::cli::evaluate_args`]): `{measure: {query_id or "all": value}}` at full
/// precision for the first run (relstrings quoted as trec_eval prints them).
#[pyfunction]
pub(super) fn trec_eval<'py>(py: Python<'py>, argv: Vec<OsString>) -> PyResult<Bound<'py, PyDict>> {
    let args = guarded(py, || {
        crate::cli::parse_args(&argv).map_err(|e| errors::to_py(py, e))
    })?;
    let (per_query, summary) = (args.per_query, args.summary);
    let runs = heavy(py, move |cancel| {
        crate::cli::evaluate_args(&args, Some(cancel))
    })?;
    let out = PyDict::new(py);
    let Some((_, res)) = runs.first() else {
        return Ok(out);
    };
    let entry = |name: &str| -> PyResult<Bound<'py, PyDict>> {
        match out.get_item(name)? {
            Some(d) => Ok(d.cast_into::<PyDict>()?),
            None => {
                let d = PyDict::new(py);
                out.set_item(name, &d)?;
                Ok(d)
            }
        }
    };
    let cols = res.columns();
    if per_query {
        let ids: Vec<_> = res
            .query_ids()
            .iter()
            .map(|id| super::convert::id_to_py(py, id))
            .collect::<PyResult<_>>()?;
        for (c, col) in cols.iter().enumerate() {
            if !crate::results::Results::is_per_query(col) {
                continue;
            }
            let d = entry(&res.printed_name(col))?;
            for (q, id) in ids.iter().enumerate() {
                match col.family {
                    Family::Relstring => {
                        d.set_item(id, format!("'{}'", res.relstring(q).unwrap_or("")))?
                    }
                    _ if res.prints_integer(col) => d.set_item(id, res.value(q, c) as i64)?,
                    _ => d.set_item(id, res.value(q, c))?,
                }
            }
        }
    }
    if summary {
        for (c, col) in cols.iter().enumerate() {
            let d = || entry(&res.printed_name(col));
            match col.family {
                Family::Relstring => continue,
                Family::RunId => {
                    d()?.set_item("all", super::convert::id_to_py(py, res.runid())?)?
                }
                _ if res.prints_integer(col) => d()?.set_item("all", res.summary(c) as i64)?,
                _ => d()?.set_item("all", res.summary(c))?,
            }
        }
    }
    Ok(out)
}

/// Parse `irmetrics`/trec_eval command-line flags into a dict (`measures`, `options`,
/// `per_query`, `summary`, `qrels`, `runs`).
#[pyfunction]
pub(super) fn parse_cli_args<'py>(
    py: Python<'py>,
    argv: Vec<OsString>,
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
    d.set_item("options", options_dict(py, &a.options)?)?;
    Ok(d)
}

/// The evaluation options as `Evaluator`'s keyword arguments.
fn options_dict<'py>(
    py: Python<'py>,
    options: &crate::evaluate::Options,
) -> PyResult<Bound<'py, PyDict>> {
    let o = PyDict::new(py);
    o.set_item("complete", options.complete)?;
    o.set_item("relevance_level", options.relevance_level)?;
    o.set_item("max_docs", options.max_docs)?;
    o.set_item("judged_only", options.judged_only)?;
    o.set_item("num_docs_in_collection", options.num_docs_in_collection)?;
    o.set_item("n_threads", options.n_threads)?;
    Ok(o)
}

/// Parse `irmetrics compare` flags (for `irmetrics report`, which takes the same ones)
/// into a dict: `qrels`, `runs` (`[(name, path)]`, named as `compare` names them),
/// `measures`, `compare` (`compare()`'s keyword arguments), `options` (the
/// Evaluator's), `output`, `help`.
#[pyfunction]
#[pyo3(signature = (argv, command = "compare"))]
pub(super) fn parse_compare_args<'py>(
    py: Python<'py>,
    argv: Vec<OsString>,
    command: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let a = guarded(py, || {
        crate::cli::parse_compare_args_of(command, argv).map_err(|e| errors::to_py(py, e))
    })?;
    let d = PyDict::new(py);
    d.set_item("help", a.help)?;
    d.set_item("qrels", &a.qrels)?;
    let names = crate::cli::run_names(&a.runs);
    d.set_item("runs", names.into_iter().zip(a.runs).collect::<Vec<_>>())?;
    d.set_item("measures", a.measures)?;
    d.set_item("output", a.output)?;
    d.set_item("compare", super::stats::options_dict(py, &a.how)?)?;
    d.set_item("options", options_dict(py, &a.options)?)?;
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

/// The canonical names a measure request expands to (`"nDCG@10"` -> `["ndcg_cut_10"]`),
/// under the `names` switch of `Evaluator` (None, `"ranx"`, `"ir_measures"`).
#[pyfunction]
#[pyo3(signature = (measure, names = None))]
pub(super) fn canonical_names(
    py: Python<'_>,
    measure: &str,
    names: Option<&str>,
) -> PyResult<Vec<String>> {
    let dialect = names
        .map_or(
            Ok(crate::measure::Names::Irmetrics),
            crate::measure::Names::parse,
        )
        .map_err(|e| errors::to_py(py, e))?;
    let ms = guarded(py, || {
        crate::measure::parse_measure_as(measure, dialect).map_err(|e| errors::to_py(py, e))
    })?;
    Ok(ms.iter().flat_map(|m| m.column_names()).collect())
}
