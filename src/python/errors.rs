//! The Python exception hierarchy and the one mapping from crate errors to it.
//!
//! ```text
//! irmetrics.Error (Exception)
//! ├── irmetrics.FileError    (Error, OSError)     a file cannot be read
//! ├── irmetrics.FormatError  (Error, ValueError)  a line or value is malformed, duplicates
//! ├── irmetrics.InputError   (Error, ValueError)  inputs cannot be evaluated together
//! │   ├── irmetrics.MissingQueryError              a judged query has no results (use complete=True)
//! │   └── irmetrics.MeasureError                   unknown measure, parameter outside its domain
//! └── irmetrics.MissingDependencyError (Error, ImportError)  a package this call needs is absent
//! ```

use pyo3::exceptions::{PyException, PyImportError, PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::error::Error;

struct Hierarchy {
    error: Py<PyType>,
    file: Py<PyType>,
    format: Py<PyType>,
    input: Py<PyType>,
    missing: Py<PyType>,
    measure: Py<PyType>,
    dependency: Py<PyType>,
}

static HIERARCHY: PyOnceLock<Hierarchy> = PyOnceLock::new();

fn make(
    py: Python<'_>,
    name: &str,
    doc: &str,
    bases: &[&Bound<'_, PyType>],
) -> PyResult<Py<PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__doc__", doc)?;
    dict.set_item("__module__", "irmetrics")?;
    let bases = PyTuple::new(py, bases)?;
    let ty = py
        .get_type::<PyType>()
        .call1((name, bases, dict))?
        .cast_into::<PyType>()?;
    Ok(ty.unbind())
}

fn hierarchy(py: Python<'_>) -> PyResult<&Hierarchy> {
    HIERARCHY.get_or_try_init(py, || {
        let exc = py.get_type::<PyException>();
        let value = py.get_type::<PyValueError>();
        let os = py.get_type::<PyOSError>();
        let error = make(py, "Error", "Base class of every irmetrics error.", &[&exc])?;
        let e = error.bind(py).clone();
        let file = make(py, "FileError", "A file cannot be read.", &[&e, &os])?;
        let format = make(
            py,
            "FormatError",
            "A line or value of the input is malformed (names the file and line), or a \
             document occurs twice for one query.",
            &[&e, &value],
        )?;
        let input = make(
            py,
            "InputError",
            "The inputs cannot be evaluated together (empty, no query in common, ...).",
            &[&e, &value],
        )?;
        let i = input.bind(py).clone();
        let missing = make(
            py,
            "MissingQueryError",
            "A judged query has no results in the run; pass complete=True (trec_eval -c) \
             to score it as an empty ranking.",
            &[&i],
        )?;
        // a bad measure is a bad input like any other (bad -m exits 2 as bad options):
        // catching InputError catches it too
        let measure = make(
            py,
            "MeasureError",
            "An unknown measure name, malformed measure parameters or a parameter \
             outside its domain (an InputError).",
            &[&i],
        )?;
        let import = py.get_type::<PyImportError>();
        let dependency = make(
            py,
            "MissingDependencyError",
            "A package that this call needs (numpy, or the one of an extra such as \
             irmetrics[pandas]) is not installed; the message says what to install.",
            &[&e, &import],
        )?;
        Ok(Hierarchy {
            error,
            file,
            format,
            input,
            missing,
            measure,
            dependency,
        })
    })
}

/// Add the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let h = hierarchy(py)?;
    m.add("Error", h.error.bind(py))?;
    m.add("FileError", h.file.bind(py))?;
    m.add("FormatError", h.format.bind(py))?;
    m.add("InputError", h.input.bind(py))?;
    m.add("MissingQueryError", h.missing.bind(py))?;
    m.add("MeasureError", h.measure.bind(py))?;
    m.add("MissingDependencyError", h.dependency.bind(py))?;
    Ok(())
}

/// The one conversion from a crate error to a Python exception.
pub(crate) fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let h = match hierarchy(py) {
        Ok(h) => h,
        Err(err) => return err,
    };
    let msg = e.to_string();
    let ty = match &e {
        Error::Io { .. } | Error::Write { .. } => &h.file,
        Error::Format { .. } | Error::DuplicateEntry { .. } => &h.format,
        Error::Input(_) => &h.input,
        Error::MissingQuery { .. } | Error::RunMissingQuery { .. } => &h.missing,
        Error::Measure(_) => &h.measure,
        Error::Option(_) => &h.input,
        Error::Interrupted => return PyKeyboardInterrupt::new_err("evaluation interrupted"),
    };
    PyErr::from_type(ty.bind(py).clone(), msg)
}

/// A plain `irmetrics.Error` with a message (internal failures, panics).
pub(crate) fn internal(py: Python<'_>, msg: String) -> PyErr {
    match hierarchy(py) {
        Ok(h) => PyErr::from_type(h.error.bind(py).clone(), msg),
        Err(e) => e,
    }
}

/// `irmetrics.FormatError` for bad Python values.
pub(crate) fn format_err(py: Python<'_>, msg: String) -> PyErr {
    match hierarchy(py) {
        Ok(h) => PyErr::from_type(h.format.bind(py).clone(), msg),
        Err(e) => e,
    }
}

/// `irmetrics.InputError` for bad Python arguments.
pub(crate) fn input_err(py: Python<'_>, msg: String) -> PyErr {
    match hierarchy(py) {
        Ok(h) => PyErr::from_type(h.input.bind(py).clone(), msg),
        Err(e) => e,
    }
}

/// Nothing when `module` imports, else `irmetrics.MissingDependencyError` saying that
/// `what` needs it and what to install (`install`, e.g. `'irmetrics[pandas]'`). The one
/// check for packages that are imported only when used (numpy by the array routes in
/// Rust; pandas and the others by the Python layer, through `_core._require`).
pub(crate) fn require(py: Python<'_>, module: &str, what: &str, install: &str) -> PyResult<()> {
    match py.import(module) {
        Ok(_) => Ok(()),
        Err(_) => Err(match hierarchy(py) {
            Ok(h) => PyErr::from_type(
                h.dependency.bind(py).clone(),
                format!("{what} needs {module}, which is not installed: pip install {install}"),
            ),
            Err(e) => e,
        }),
    }
}

/// numpy, which the array routes need (a dependency of the package, so only a broken
/// environment lacks it).
pub(crate) fn require_numpy(py: Python<'_>, what: &str) -> PyResult<()> {
    require(py, "numpy", what, "numpy (a dependency of irmetrics)")
}
