//! Conversions between Python values and the crate's inputs and outputs.
//!
//! Ids are bytes in the crate. From Python they come as `str` (UTF-8, surrogate escapes
//! kept); back to Python valid UTF-8 becomes `str` directly and other bytes are decoded
//! with `surrogateescape`, so nothing the user gave is lost or altered.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use super::errors::format_err;
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::{Run, RunBuilder};

/// A Python `str` id as bytes.
pub(crate) fn id_bytes<'a>(
    obj: &'a Bound<'_, PyAny>,
    what: &dyn Fn() -> String,
) -> PyResult<Cow<'a, [u8]>> {
    let py = obj.py();
    match obj.cast::<PyString>() {
        Ok(s) => match s.to_str() {
            Ok(t) => Ok(Cow::Borrowed(t.as_bytes())),
            Err(_) => {
                let b = s.call_method1("encode", ("utf-8", "surrogateescape"))?;
                Ok(Cow::Owned(b.cast::<PyBytes>()?.as_bytes().to_vec()))
            }
        },
        Err(_) => Err(format_err(
            py,
            format!(
                "{} must be a str, got {} ({}); convert ids with str() first",
                what(),
                type_name(obj),
                short_repr(obj)
            ),
        )),
    }
}

/// Bytes id to a Python `str`.
pub(crate) fn id_to_py<'py>(py: Python<'py>, id: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(id) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(_) => PyBytes::new(py, id).call_method1("decode", ("utf-8", "surrogateescape")),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn short_repr(obj: &Bound<'_, PyAny>) -> String {
    let r = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    if r.chars().count() > 60 {
        format!("{}...", r.chars().take(60).collect::<String>())
    } else {
        r
    }
}

/// A relevance label: an integer (Python int or numpy integer); bools and floats refused.
fn label_value(v: &Bound<'_, PyAny>, what: &dyn Fn() -> String) -> PyResult<i64> {
    let py = v.py();
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyFloat>() {
        return Err(format_err(
            py,
            format!(
                "{} must be an integer label, got {} ({})",
                what(),
                type_name(v),
                short_repr(v)
            ),
        ));
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map_err(|_| {
            format_err(
                py,
                format!("{} is too large for a label ({})", what(), short_repr(v)),
            )
        });
    }
    // numpy integers and other objects with __index__
    v.extract::<i64>().map_err(|_| {
        format_err(
            py,
            format!(
                "{} must be an integer label, got {} ({})",
                what(),
                type_name(v),
                short_repr(v)
            ),
        )
    })
}

/// A score: int or float (numpy scalars included); bools and NaN refused.
fn score_value(v: &Bound<'_, PyAny>, what: &dyn Fn() -> String) -> PyResult<f64> {
    let py = v.py();
    let bad = || {
        format_err(
            py,
            format!(
                "{} must be a number, got {} ({})",
                what(),
                type_name(v),
                short_repr(v)
            ),
        )
    };
    let x = if let Ok(f) = v.cast_exact::<PyFloat>() {
        f.value()
    } else {
        if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() {
            return Err(bad());
        }
        v.extract::<f64>().map_err(|_| bad())?
    };
    if x.is_nan() {
        return Err(format_err(
            py,
            format!("{} is NaN; a ranking needs comparable scores", what()),
        ));
    }
    Ok(x)
}

fn inner_dict<'a, 'py>(
    v: &'a Bound<'py, PyAny>,
    qid: &Bound<'_, PyAny>,
    kind: &str,
) -> PyResult<&'a Bound<'py, PyDict>> {
    v.cast::<PyDict>().map_err(|_| {
        format_err(
            v.py(),
            format!(
                "{kind}[{}] must be a dict of {{doc_id: {}}}, got {}",
                short_repr(qid),
                if kind == "qrels" { "label" } else { "score" },
                type_name(v)
            ),
        )
    })
}

/// `{qid: {doc: label}}` to [`Qrels`].
pub(crate) fn qrels_from_dict(d: &Bound<'_, PyDict>) -> PyResult<Qrels> {
    let py = d.py();
    let mut b = QrelsBuilder::default();
    for (qk, qv) in d.iter() {
        let qid = id_bytes(&qk, &|| format!("query id {}", short_repr(&qk)))?;
        let inner = inner_dict(&qv, &qk, "qrels")?;
        for (dk, dv) in inner.iter() {
            let doc = id_bytes(&dk, &|| {
                format!(
                    "document id {} of query {}",
                    short_repr(&dk),
                    short_repr(&qk)
                )
            })?;
            let what = || format!("qrels[{}][{}]", short_repr(&qk), short_repr(&dk));
            let label = label_value(&dv, &what)?;
            b.add(&qid, &doc, label)
                .map_err(|e| super::errors::to_py(py, e))?;
        }
    }
    b.build().map_err(|e| super::errors::to_py(py, e))
}

/// `{qid: {doc: score}}` to [`Run`].
pub(crate) fn run_from_dict(d: &Bound<'_, PyDict>, name: Option<&str>) -> PyResult<Run> {
    let py = d.py();
    let mut b = RunBuilder::default();
    let mut id_bytes_per_doc = 16usize;
    for (qk, qv) in d.iter() {
        let qid = id_bytes(&qk, &|| format!("query id {}", short_repr(&qk)))?;
        let inner = inner_dict(&qv, &qk, "run")?;
        if inner.is_empty() {
            continue; // as in a run file: a query without results is absent
        }
        let slot = b.query(&qid);
        // room for this query, ids sized like the previous query's
        let n = inner.len();
        b.reserve(slot, n, n * id_bytes_per_doc.max(8));
        if push_exact_entries(inner, &mut b, slot) {
            id_bytes_per_doc = b.slot_bytes(slot) / b.slot_len(slot).max(1) + 1;
            continue;
        }
        for (dk, dv) in inner.iter() {
            let doc = id_bytes(&dk, &|| {
                format!(
                    "document id {} of query {}",
                    short_repr(&dk),
                    short_repr(&qk)
                )
            })?;
            let what = || format!("run[{}][{}]", short_repr(&qk), short_repr(&dk));
            let score = score_value(&dv, &what)?;
            b.push(slot, &doc, score)
                .map_err(|e| super::errors::to_py(py, e))?;
        }
    }
    if let Some(n) = name {
        b.runid(n.as_bytes());
    }
    // A dict cannot hold a document twice, and each query is one dict.
    Ok(b.build_unique())
}

/// The common case of `{doc_id: score}`, fast: every key an exact `str` and every value
/// an exact `float` or `int` (not NaN), read through borrowed references. Returns false,
/// having added nothing, when any entry needs the general path (which validates it and
/// reports errors).
fn push_exact_entries(inner: &Bound<'_, PyDict>, b: &mut RunBuilder, slot: usize) -> bool {
    use pyo3::ffi;
    let start = b.slot_len(slot);
    let dict = inner.as_ptr();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    let mut ok = true;
    // SAFETY: we hold the GIL (through `inner`) and run no Python code in this loop
    // (only exact str/float/int are read, by functions that call no user code), so the
    // dict cannot change while PyDict_Next hands out borrowed references, and each
    // UTF-8 buffer is read before the next call.
    unsafe {
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            if ffi::PyUnicode_CheckExact(key) == 0 {
                ok = false;
                break;
            }
            let score = if ffi::PyFloat_CheckExact(value) != 0 {
                ffi::PyFloat_AsDouble(value)
            } else if ffi::PyLong_CheckExact(value) != 0 {
                let x = ffi::PyLong_AsDouble(value);
                if x == -1.0 && !ffi::PyErr_Occurred().is_null() {
                    ffi::PyErr_Clear();
                    ok = false;
                    break;
                }
                x
            } else {
                ok = false;
                break;
            };
            if score.is_nan() {
                ok = false;
                break;
            }
            let mut size: ffi::Py_ssize_t = 0;
            let data = ffi::PyUnicode_AsUTF8AndSize(key, &mut size);
            if data.is_null() {
                ffi::PyErr_Clear(); // e.g. lone surrogates: the general path encodes them
                ok = false;
                break;
            }
            let doc = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
            if b.push(slot, doc, score).is_err() {
                ok = false;
                break;
            }
        }
    }
    if !ok {
        b.truncate_slot(slot, start);
    }
    ok
}

/// A column of ids: a list, or anything with `tolist()` (numpy arrays, pandas Series:
/// one C-level conversion), or any iterable.
fn id_column<'py>(col: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = col.cast::<PyList>() {
        return Ok(l.iter().collect());
    }
    if let Ok(l) = col.call_method0("tolist") {
        if let Ok(l) = l.cast::<PyList>() {
            return Ok(l.iter().collect());
        }
    }
    col.try_iter()?.collect()
}

/// A float64 view of a numeric column: numpy arrays are read in place, pandas Series
/// and other array-likes are converted once with `to_numpy()` / `numpy.asarray`.
fn numeric_array<'py>(col: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let is_float64 =
        |a: &Bound<'py, PyAny>| a.extract::<numpy::PyReadonlyArray1<'_, f64>>().is_ok();
    if is_float64(col) {
        return Some(col.clone());
    }
    let arr = col.call_method0("to_numpy").ok()?;
    // only real numbers: bool and object columns are checked value by value
    let kind: String = arr
        .getattr("dtype")
        .ok()?
        .getattr("kind")
        .ok()?
        .extract()
        .ok()?;
    if !matches!(kind.as_str(), "f" | "i" | "u") {
        return None;
    }
    let f = arr.call_method1("astype", ("float64",)).ok()?;
    is_float64(&f).then_some(f)
}

/// A column of numbers: a float64 array read in place (numpy, pandas), or any iterable.
fn number_column(
    col: &Bound<'_, PyAny>,
    what: &str,
    value: impl Fn(&Bound<'_, PyAny>, &dyn Fn() -> String) -> PyResult<f64>,
) -> PyResult<Vec<f64>> {
    if let Some(arr) = numeric_array(col) {
        if let Ok(a) = arr.extract::<numpy::PyReadonlyArray1<'_, f64>>() {
            return Ok(a.as_array().iter().copied().collect());
        }
    }
    let mut out = Vec::new();
    for (row, v) in col.try_iter()?.enumerate() {
        out.push(value(&v?, &|| format!("{what} at row {row}"))?);
    }
    Ok(out)
}

fn check_lengths(py: Python<'_>, lens: [usize; 3], third: &str) -> PyResult<()> {
    if lens[0] != lens[1] || lens[0] != lens[2] {
        return Err(format_err(
            py,
            format!(
                "the query, document and {third} columns differ in length ({}, {}, {})",
                lens[0], lens[1], lens[2]
            ),
        ));
    }
    Ok(())
}

/// Three parallel columns (query ids, doc ids, labels) to [`Qrels`].
pub(crate) fn qrels_from_columns(
    qids: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
) -> PyResult<Qrels> {
    let py = qids.py();
    let (q, d) = (id_column(qids)?, id_column(docs)?);
    let int_array = labels
        .extract::<numpy::PyReadonlyArray1<'_, i64>>()
        .map(|a| a.as_array().to_vec())
        .or_else(|_| {
            labels.call_method0("to_numpy").and_then(|a| {
                Ok(a.extract::<numpy::PyReadonlyArray1<'_, i64>>()?
                    .as_array()
                    .to_vec())
            })
        });
    let labels: Vec<i64> = if let Ok(v) = int_array {
        v
    } else {
        let mut out = Vec::new();
        for (row, v) in labels.try_iter()?.enumerate() {
            out.push(label_value(&v?, &|| format!("label at row {row}"))?);
        }
        out
    };
    check_lengths(py, [q.len(), d.len(), labels.len()], "label")?;
    let mut b = QrelsBuilder::default();
    for (row, ((q, d), l)) in q.iter().zip(&d).zip(labels).enumerate() {
        let qid = id_bytes(q, &|| format!("query id at row {row}"))?;
        let doc = id_bytes(d, &|| format!("document id at row {row}"))?;
        b.add(&qid, &doc, l)
            .map_err(|e| super::errors::to_py(py, e))?;
    }
    b.build().map_err(|e| super::errors::to_py(py, e))
}

/// Three parallel columns (query ids, doc ids, scores) to [`Run`].
pub(crate) fn run_from_columns(
    qids: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    scores: &Bound<'_, PyAny>,
    name: Option<&str>,
) -> PyResult<Run> {
    let py = qids.py();
    // Everything that may run Python code first: the fast path below reads borrowed
    // string buffers, which stay valid only while no Python code runs.
    let scores = number_column(scores, "score", score_value)?;
    let (q, d) = (id_list(qids)?, id_list(docs)?);
    check_lengths(py, [q.len(), d.len(), scores.len()], "score")?;
    if let Some(i) = scores.iter().position(|s| s.is_nan()) {
        return Err(format_err(
            py,
            format!("score at row {i} is NaN; a ranking needs comparable scores"),
        ));
    }
    let mut b = RunBuilder::default();
    if let (Some(qs), Some(ds)) = (exact_str_items(&q), exact_str_items(&d)) {
        let mut slot = usize::MAX;
        let mut prev: &[u8] = &[];
        for ((qid, doc), &score) in qs.iter().zip(&ds).zip(&scores) {
            if slot == usize::MAX || *qid != prev {
                slot = b.query(qid);
                prev = qid;
            }
            b.push(slot, doc, score)
                .map_err(|e| super::errors::to_py(py, e))?;
        }
    } else {
        for (row, ((q, d), &score)) in q.iter().zip(d.iter()).zip(&scores).enumerate() {
            let qid = id_bytes(&q, &|| format!("query id at row {row}"))?;
            let slot = b.query(&qid);
            let doc = id_bytes(&d, &|| format!("document id at row {row}"))?;
            b.push(slot, &doc, score)
                .map_err(|e| super::errors::to_py(py, e))?;
        }
    }
    if let Some(n) = name {
        b.runid(n.as_bytes());
    }
    b.build().map_err(|e| super::errors::to_py(py, e))
}

/// A column as a list: itself, `tolist()` (numpy, pandas) or `list(column)`.
fn id_list<'py>(col: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    if let Ok(l) = col.cast::<PyList>() {
        return Ok(l.clone());
    }
    if let Ok(l) = col.call_method0("tolist") {
        if let Ok(l) = l.cast_into::<PyList>() {
            return Ok(l);
        }
    }
    let items: Vec<Bound<'py, PyAny>> = col.try_iter()?.collect::<PyResult<_>>()?;
    PyList::new(col.py(), items)
}

/// The UTF-8 bytes of every item of `list` when all are exact `str` (None otherwise).
/// The slices borrow the strings' own buffers: valid while the list holds them and no
/// Python code runs (callers do nothing but Rust work with them).
fn exact_str_items<'a>(list: &'a Bound<'_, PyList>) -> Option<Vec<&'a [u8]>> {
    use pyo3::ffi;
    let n = list.len();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: i < len and the list is not modified (no Python code runs here);
        // PyList_GetItem returns a borrowed reference kept alive by the list, and the
        // UTF-8 buffer of an exact str lives as long as the str.
        unsafe {
            let item = ffi::PyList_GetItem(list.as_ptr(), i as ffi::Py_ssize_t);
            if item.is_null() || ffi::PyUnicode_CheckExact(item) == 0 {
                ffi::PyErr_Clear();
                return None;
            }
            let mut size: ffi::Py_ssize_t = 0;
            let data = ffi::PyUnicode_AsUTF8AndSize(item, &mut size);
            if data.is_null() {
                ffi::PyErr_Clear(); // lone surrogates: the general path encodes them
                return None;
            }
            out.push(std::slice::from_raw_parts(data.cast::<u8>(), size as usize));
        }
    }
    Some(out)
}
