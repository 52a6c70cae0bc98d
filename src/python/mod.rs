//! The only place that knows Python: the `irmetrics._core` module. Heavy work runs
//! with the GIL released ([`heavy`]); Ctrl-C stops it promptly; a panic becomes an
//! `irmetrics.Error`, never a crash ([`guarded`]). One file per concept:
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the module, `heavy` / `guarded` (GIL release, Ctrl-C, panics), `heavy_progress` (`progress=`) |
//! | `data.rs` | `Qrels` and `Run` classes (files, text, dicts, columns, frames, Arrow data) |
//! | `arrow.rs` | Arrow data in (the PyCapsule interface, read in Rust) and out |
//! | `evaluate.rs` | `Evaluator`, which input kind a run is, results to numpy |
//! | `results.rs` | results to dicts (`evaluate`, `evaluate_file`, the stream's `finish`) |
//! | `convert.rs` | Python values to the intake's pieces (ids, labels, scores, columns) |
//! | `pickle.rs` | `Qrels`, `Run` (flat bytes) and `Evaluator` pickled |
//! | `stream.rs` | `QueryStream`: the push API (`Evaluator.stream()`) |
//! | `pipeline.rs` | conversion on the GIL thread overlapping evaluation on others |
//! | `errors.rs` | the exception hierarchy and the one mapping from crate errors |
//! | `cli.rs` | the command line, trec_eval's flags, the measure catalogue |
//! | `diversity.rs` | `diversity`: ndeval's diversity measures (`crate::diversity`) |
//! | `extras.rs` | statistics and rank correlation functions |
//! | `fusion.rs` | `normalize`, `fuse` (ranx's normalizations and fusion methods) |
//! | `online.rs` | `OnlineLog` and the online metrics of search logs (`crate::online`) |
//! | `stats.rs` | significance tests, corrections, effect sizes, comparing runs (`crate::compare`) |

mod arrow;
mod cli;
mod convert;
mod data;
mod dense;
mod diversity;
mod errors;
mod evaluate;
mod extras;
mod fusion;
mod online;
mod pickle;
mod pipeline;
mod results;
mod stats;
mod stream;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::prelude::*;

use crate::error::Result as CoreResult;
use crate::progress::Progress;
use cli::{canonical_names, cli_main, measures, parse_cli_args, parse_compare_args, trec_eval};
use data::{_write_file, as_qrels, as_run, set_max_line_bytes, PyQrels, PyRun};
use evaluate::PyEvaluator;

/// Run `f` without the GIL on a worker thread, checking for Ctrl-C meanwhile. Errors
/// map to the exception hierarchy; a panic becomes `irmetrics.Error`.
fn heavy<R: Send>(
    py: Python<'_>,
    f: impl FnOnce(&AtomicBool) -> CoreResult<R> + Send,
) -> PyResult<R> {
    let (interrupt, outcome) = run_on_worker(py, f, |_| Ok(()))?;
    if let Some(e) = interrupt {
        return Err(e);
    }
    finish(py, outcome)
}

/// What a `progress=` argument asks for: nothing (None, False), the package's own bar
/// (True: tqdm when importable, else a line on stderr, from `irmetrics._progress`), or
/// the user's callable, called as `callback(done, total)`.
pub(crate) struct Reporter<'py> {
    callback: Bound<'py, PyAny>,
    /// the package's bar, closed when the work ends
    owned: bool,
}

impl<'py> Reporter<'py> {
    /// Whether a `progress=` argument asks for nothing (None, False).
    pub(crate) fn none_asked(progress: Option<&Bound<'py, PyAny>>) -> bool {
        progress.is_none_or(|p| {
            p.is_none() || p.cast::<pyo3::types::PyBool>().is_ok_and(|b| !b.is_true())
        })
    }

    /// Read a `progress=` argument.
    fn of(progress: Option<&Bound<'py, PyAny>>) -> PyResult<Option<Reporter<'py>>> {
        let Some(p) = progress.filter(|_| !Self::none_asked(progress)) else {
            return Ok(None);
        };
        if p.cast::<pyo3::types::PyBool>().is_ok() {
            // True: the package's bar
            let bar = p
                .py()
                .import("irmetrics._progress")?
                .getattr("Bar")?
                .call0()?;
            return Ok(Some(Reporter {
                callback: bar,
                owned: true,
            }));
        }
        if !p.is_callable() {
            return Err(errors::input_err(
                p.py(),
                format!(
                    "progress must be True, False, None or a callable (done, total), got {}",
                    p.get_type()
                ),
            ));
        }
        Ok(Some(Reporter {
            callback: p.clone(),
            owned: false,
        }))
    }

    /// Call the callback with `(done, total)`.
    fn report(&self, done: u64, total: u64) -> PyResult<()> {
        self.callback.call1((done, total)).map(drop)
    }

    /// Close the package's bar (nothing for a user's callable).
    fn close(&self) -> PyResult<()> {
        if self.owned {
            self.callback.call_method0("close")?;
        }
        Ok(())
    }
}

/// [`heavy`] for long work that counts its progress: with a `progress=` argument asking
/// for it, `f` gets a [`Progress`] that this thread polls with the Ctrl-C check (about
/// ten times a second), calling the callback on this thread when the count moved, and
/// once more at the end (then `done == total`). An exception raised by the callback
/// (KeyboardInterrupt included) stops the work and propagates.
fn heavy_progress<R: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    f: impl FnOnce(&AtomicBool, Option<&Progress>) -> CoreResult<R> + Send,
) -> PyResult<R> {
    let Some(reporter) = Reporter::of(progress)? else {
        return heavy(py, move |cancel| f(cancel, None));
    };
    let counter = Progress::new();
    let shared = &counter;
    let mut last = None;
    let mut poll = |_py: Python<'_>| -> PyResult<()> {
        let now = shared.get();
        if last != Some(now) {
            last = Some(now);
            reporter.report(now.0, now.1)?;
        }
        Ok(())
    };
    let (interrupt, outcome) = run_on_worker(py, move |cancel| f(cancel, Some(shared)), &mut poll)?;
    let r = match interrupt {
        Some(e) => Err(e),
        None => finish(py, outcome).and_then(|r| poll(py).map(|()| r)),
    };
    let closed = reporter.close();
    let r = r?;
    closed?;
    Ok(r)
}

/// [`heavy`] for work whose completion is a commit (the command line: its output file
/// is renamed into place at the very end). A Ctrl-C noticed once the work had already
/// completed is dropped: the run is whole, and reporting it as interrupted would
/// leave a complete output behind a failing exit status.
fn heavy_committed<R: Send>(
    py: Python<'_>,
    f: impl FnOnce(&AtomicBool) -> CoreResult<R> + Send,
) -> PyResult<R> {
    let (interrupt, outcome) = run_on_worker(py, f, |_| Ok(()))?;
    match (interrupt, outcome) {
        (_, Ok(Ok(r))) => Ok(r),
        (Some(e), _) => Err(e),
        (None, outcome) => finish(py, outcome),
    }
}

type Outcome<R> = std::thread::Result<CoreResult<R>>;

/// The worker loop shared by [`heavy`] and [`heavy_committed`]: the Ctrl-C seen while
/// waiting (the work was then asked to stop and joined), and what the worker returned.
/// `poll` runs on this thread at each wake-up (the progress callback); its error stops
/// the work as Ctrl-C does.
fn run_on_worker<R: Send>(
    py: Python<'_>,
    f: impl FnOnce(&AtomicBool) -> CoreResult<R> + Send,
    mut poll: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<(Option<PyErr>, Outcome<R>)> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let cancel = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = channel();
        let rx = std::sync::Mutex::new(rx); // shared with the detached closure
        let cancel_flag = &cancel;
        let handle = std::thread::Builder::new()
            .name("irmetrics-worker".into())
            .spawn_scoped(s, move || {
                let r = f(cancel_flag);
                let _ = tx.send(());
                r
            })
            .map_err(|e| errors::input_err(py, format!("cannot start a thread: {e}")))?;
        loop {
            // Wake up as soon as the work is done, or every 100 ms to look for Ctrl-C.
            let waited = py.detach(|| match rx.lock() {
                Ok(rx) => rx.recv_timeout(Duration::from_millis(100)),
                Err(_) => Err(RecvTimeoutError::Disconnected),
            });
            match waited {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    break Ok((None, py.detach(|| handle.join())))
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals().and_then(|()| poll(py)) {
                        cancel.store(true, Ordering::Relaxed);
                        break Ok((Some(e), py.detach(|| handle.join())));
                    }
                }
            }
        }
    })
}

fn finish<R>(py: Python<'_>, outcome: Outcome<R>) -> PyResult<R> {
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

/// The measure names of a `measures=` argument (a name, an ir_measures measure or a
/// list of them), as every route reads it: the Python layer's routes that do not
/// build an `Evaluator` first (dense batches, Spark, the plots) read them here too.
/// With `one`, a `measure=` argument: one name or ir_measures measure, not a list.
#[pyfunction]
#[pyo3(signature = (measures, one = false))]
fn _measure_names(measures: &Bound<'_, PyAny>, one: bool) -> PyResult<Vec<String>> {
    if one {
        return Ok(vec![convert::measure_name(measures, "measure")?]);
    }
    convert::measure_names(measures)
}

/// Nothing when `module` imports, else `irmetrics.MissingDependencyError` naming what
/// to install: the Python layer's check for optional packages (the one in `errors`).
#[pyfunction]
fn _require(py: Python<'_>, module: &str, what: &str, install: &str) -> PyResult<()> {
    errors::require(py, module, what, install)
}

/// Called in a child process after `os.fork()` (registered by the Python package):
/// from then on work runs on the calling thread, as the parent's pool is gone.
#[pyfunction]
fn _after_fork_in_child() {
    crate::parallel::mark_forked();
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
    m.add_class::<arrow::PyArrowData>()?;
    m.add_class::<stream::PyQueryStream>()?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(measures, m)?)?;
    m.add_function(wrap_pyfunction!(parse_cli_args, m)?)?;
    m.add_function(wrap_pyfunction!(parse_compare_args, m)?)?;
    m.add_function(wrap_pyfunction!(trec_eval, m)?)?;
    m.add_function(wrap_pyfunction!(as_qrels, m)?)?;
    m.add_function(wrap_pyfunction!(as_run, m)?)?;
    m.add_function(wrap_pyfunction!(set_max_line_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_write_file, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    m.add_function(wrap_pyfunction!(_require, m)?)?;
    m.add_function(wrap_pyfunction!(_measure_names, m)?)?;
    // the names each column goes by (Spark's reader finds its columns with them)
    m.add("QUERY_COLUMNS", crate::intake::QUERY_COLUMNS.to_vec())?;
    m.add("DOC_COLUMNS", crate::intake::DOC_COLUMNS.to_vec())?;
    m.add("LABEL_COLUMNS", crate::intake::LABEL_COLUMNS.to_vec())?;
    m.add("SCORE_COLUMNS", crate::intake::SCORE_COLUMNS.to_vec())?;
    m.add_function(wrap_pyfunction!(canonical_names, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(data::_run_from_pickle, m)?)?;
    m.add_function(wrap_pyfunction!(data::_qrels_from_pickle, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    extras::register(m)?;
    dense::register(m)?;
    diversity::register(m)?;
    fusion::register(m)?;
    online::register(m)?;
    stats::register(m)?;
    Ok(())
}
