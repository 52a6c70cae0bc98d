//! Conversions between Python values and the crate's inputs and outputs.
//!
//! Ids are bytes in the crate. From Python they come as `str` (UTF-8, surrogate escapes
//! kept); back to Python valid UTF-8 becomes `str` directly and other bytes are decoded
//! with `surrogateescape`, so nothing the user gave is lost or altered.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString};

use super::errors::{format_err, input_err, to_py};
use crate::error::Unit;
use crate::evaluate::Evaluator;
use crate::ids::{same_id, RepeatFinder};
use crate::intake::{find_duplicate, whole_label, Grouper, PieceSink, Place};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::results::Results;
use crate::run::{Run, RunQuery};

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
                // ids decoded with surrogateescape come back as their bytes; any other
                // lone surrogate has no bytes to stand for
                let b = s
                    .call_method1("encode", ("utf-8", "surrogateescape"))
                    .map_err(|_| {
                        format_err(
                            py,
                            format!(
                                "{} {} holds a lone surrogate that is not an escaped byte: \
                                 it has no UTF-8 form",
                                what(),
                                short_repr(obj)
                            ),
                        )
                    })?;
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

/// A run's `name` (its tag, trec_eval's runid) as bytes: absent is no tag; a `str`
/// (surrogate escapes as their bytes) must be one a TREC run can carry, the last field
/// of a line: no whitespace, no NUL; anything else is an `irmetrics.InputError`.
pub(crate) fn runid_arg(name: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
    let Some(name) = name.filter(|n| !n.is_none()) else {
        return Ok(Vec::new());
    };
    let py = name.py();
    if !name.is_instance_of::<PyString>() {
        return Err(super::errors::input_err(
            py,
            format!(
                "name (the run tag) must be a str, got {} ({})",
                type_name(name),
                short_repr(name)
            ),
        ));
    }
    let tag = id_bytes(name, &|| "name (the run tag)".into())
        .map_err(|e| super::errors::input_err(py, e.value(py).to_string()))?
        .into_owned();
    crate::run::check_runid(&tag).map_err(|e| to_py(py, e))?;
    Ok(tag)
}

/// An integer argument as `T`, at least `low` and at most `high` (when given), or an
/// `irmetrics.InputError` naming it and its range (never a bare OverflowError or
/// TypeError); bools are refused.
pub(crate) fn int_arg<T: TryFrom<i128> + std::fmt::Display + PartialOrd + Copy>(
    obj: &Bound<'_, PyAny>,
    name: &str,
    low: T,
    high: Option<T>,
) -> PyResult<T> {
    let py = obj.py();
    let bad = || {
        let range = match high {
            Some(h) => format!("from {low} to {h}"),
            None => format!("of at least {low}"),
        };
        super::errors::input_err(
            py,
            format!(
                "{name} must be a whole number {range}, got {}",
                short_repr(obj)
            ),
        )
    };
    let wide = wide_int(obj).ok_or_else(bad)?;
    match T::try_from(wide) {
        Ok(v) if v >= low && high.is_none_or(|h| v <= h) => Ok(v),
        _ => Err(bad()),
    }
}

/// An integer argument within 64 bits (signed or not), or None for anything else
/// (bools included).
pub(crate) fn wide_int(obj: &Bound<'_, PyAny>) -> Option<i128> {
    if is_bool_like(obj) {
        return None;
    }
    // i64 and u64 cover every argument; i128 holds both
    match obj.extract::<i64>() {
        Ok(v) => Some(v.into()),
        Err(_) => obj.extract::<u64>().ok().map(i128::from),
    }
}

/// A truth-value argument, or an `irmetrics.InputError` naming it.
pub(crate) fn bool_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(b.is_true());
    }
    if is_bool_like(obj) {
        return obj.is_truthy();
    }
    Err(super::errors::input_err(
        obj.py(),
        format!("{name} must be True or False, got {}", short_repr(obj)),
    ))
}

/// Bytes id to a Python `str`.
pub(crate) fn id_to_py<'py>(py: Python<'py>, id: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(id) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(_) => PyBytes::new(py, id).call_method1("decode", ("utf-8", "surrogateescape")),
    }
}

/// A list of ids as Python strings (see [`id_to_py`]).
pub(crate) fn id_list<'py, 'a>(
    py: Python<'py>,
    ids: impl Iterator<Item = &'a [u8]>,
) -> PyResult<Bound<'py, PyList>> {
    let ids: PyResult<Vec<_>> = ids.map(|id| id_to_py(py, id)).collect();
    PyList::new(py, ids?)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

pub(crate) fn short_repr(obj: &Bound<'_, PyAny>) -> String {
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

/// Whether `obj`'s type comes from the Python package `package` (a peer's objects are
/// known so, without importing the peer).
pub(crate) fn of_package(obj: &Bound<'_, PyAny>, package: &str) -> bool {
    let module = obj
        .get_type()
        .module()
        .map(|m| m.to_string())
        .unwrap_or_default();
    module == package
        || module
            .strip_prefix(package)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// A measure given as an object of ir_measures (`nDCG@10`, `AP(rel=2)`), or of
/// `irmetrics.compat.ir_measures`, which has the same objects: its name, `str(m)`,
/// which the measure parser reads in ir_measures' spelling. The type is known by its
/// module, so ir_measures is never imported here.
fn ir_measures_name(m: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if !(of_package(m, "ir_measures") || of_package(m, "irmetrics.compat.ir_measures")) {
        return Ok(None);
    }
    Ok(Some(m.str()?.to_str()?.to_string()))
}

/// One measure: a name (`str`) or an ir_measures measure object.
pub(crate) fn measure_name(m: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(s) = m.cast::<PyString>() {
        return Ok(s.to_str()?.to_string());
    }
    ir_measures_name(m)?.ok_or_else(|| {
        input_err(
            m.py(),
            format!(
                "{what} must be a str (or an ir_measures measure), got {}",
                type_name(m)
            ),
        )
    })
}

/// The measure names of every route that takes measures: a name, an ir_measures
/// measure object, or an iterable of those (a list, a tuple, ...).
pub(crate) fn measure_names(measures: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(s) = measures.cast::<PyString>() {
        return Ok(vec![s.to_str()?.to_string()]);
    }
    // an ir_measures measure is iterable by its parameters (`m[0]` raises KeyError):
    // it is one measure, taken before iterating
    if let Some(name) = ir_measures_name(measures)? {
        return Ok(vec![name]);
    }
    let not_a_list = || {
        input_err(
            measures.py(),
            format!(
                "measures must be a str or a list of str, got {}",
                type_name(measures)
            ),
        )
    };
    // bytes iterate as numbers, not as a name
    if measures.is_instance_of::<PyBytes>() {
        return Err(not_a_list());
    }
    let mut out = Vec::new();
    for m in measures.try_iter().map_err(|_| not_a_list())? {
        out.push(measure_name(&m?, "measure names")?);
    }
    // a set (as pytrec_eval takes them) iterates in its hash order, which varies from
    // process to process with string hashing: its names sorted, the columns come out in
    // one order everywhere
    if measures.is_instance_of::<PySet>() || measures.is_instance_of::<PyFrozenSet>() {
        out.sort();
    }
    Ok(out)
}

/// `bool` or numpy's `bool_`: truth values, never labels or scores.
fn is_bool_like(v: &Bound<'_, PyAny>) -> bool {
    if v.is_instance_of::<PyBool>() {
        return true;
    }
    let ty = v.get_type();
    let module = ty.module().map(|m| m.to_string()).unwrap_or_default();
    let name = ty.name().map(|n| n.to_string()).unwrap_or_default();
    module == "numpy" && (name == "bool" || name == "bool_")
}

/// A relevance label: an integer (Python int or numpy integer); bools and floats refused.
pub(crate) fn label_value(v: &Bound<'_, PyAny>, what: &dyn Fn() -> String) -> PyResult<i64> {
    let py = v.py();
    let too_large = || {
        format_err(
            py,
            format!("{} is too large for a label ({})", what(), short_repr(v)),
        )
    };
    // the usual case first: an exact int (never a bool, whose type is a subclass)
    if v.cast_exact::<PyInt>().is_ok() {
        return v.extract::<i64>().map_err(|_| too_large());
    }
    let not_integer = || {
        format_err(
            py,
            format!(
                "{} must be an integer label, got {} ({})",
                what(),
                type_name(v),
                short_repr(v)
            ),
        )
    };
    if is_bool_like(v) {
        return Err(not_integer());
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map_err(|_| too_large());
    }
    // numpy integers and other objects with __index__
    if let Ok(i) = v.extract::<i64>() {
        return Ok(i);
    }
    // floats (Python, numpy) holding a whole number, as pandas gives for a label column
    // with missing values: 1.0 is 1; 1.5, NaN and infinities are refused
    if v.is_instance_of::<PyFloat>() || v.hasattr("is_integer").unwrap_or(false) {
        if let Ok(f) = v.extract::<f64>() {
            return whole_label(f).ok_or_else(|| {
                format_err(
                    py,
                    format!(
                        "{} must be a whole-number label, got {}",
                        what(),
                        short_repr(v)
                    ),
                )
            });
        }
    }
    Err(not_integer())
}

/// A score: int or float (numpy scalars included); bools refused. NaN is refused by the
/// intake's one score policy, where the piece enters.
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
    } else if v.cast_exact::<PyInt>().is_ok() {
        // an exact int (never a bool), perhaps beyond a double's range
        return v.extract::<f64>().map_err(|_| {
            format_err(
                py,
                format!("{} is too large for a score ({})", what(), short_repr(v)),
            )
        });
    } else {
        if is_bool_like(v) || v.is_instance_of::<PyString>() {
            return Err(bad());
        }
        if v.is_instance_of::<PyInt>() {
            // an int beyond a double's range
            return v.extract::<f64>().map_err(|_| {
                format_err(
                    py,
                    format!("{} is too large for a score ({})", what(), short_repr(v)),
                )
            });
        }
        v.extract::<f64>().map_err(|_| bad())?
    };
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

/// The document id key `dk` of query `qk`'s inner dict, as bytes.
fn doc_key<'a>(dk: &'a Bound<'_, PyAny>, qk: &Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    id_bytes(dk, &|| {
        format!("document id {} of query {}", short_repr(dk), short_repr(qk))
    })
}

/// The entries of a dict, taken at once: converting them may run Python code (a numpy
/// scalar's `__index__`, a thread switch while the GIL is released), during which the
/// dict could change; a walk over this snapshot is undisturbed (no internal "dictionary
/// changed size" panic, no mixture of old and new entries). Cheaper than `dict.copy()`:
/// references are taken, nothing is hashed again.
fn snapshot<'py>(d: &Bound<'py, PyDict>) -> Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    // no Python code runs during this walk: `iter` only takes new references
    d.iter().collect()
}

/// `{qid: {doc: label}}` to [`Qrels`].
pub(crate) fn qrels_from_dict(d: &Bound<'_, PyDict>) -> PyResult<Qrels> {
    let py = d.py();
    let mut b = QrelsBuilder::default();
    let mut pairs = Vec::new();
    let mut labels = Vec::new();
    for (qk, qv) in snapshot(d) {
        let qid = id_bytes(&qk, &|| format!("query id {}", short_repr(&qk)))?;
        let inner = inner_dict(&qv, &qk, "qrels")?;
        if add_exact_labels(inner, &qid, &mut b, &mut pairs, &mut labels)
            .map_err(|e| to_py(py, e))?
        {
            continue;
        }
        for (dk, dv) in snapshot(inner) {
            let doc = doc_key(&dk, &qk)?;
            let what = || format!("qrels[{}][{}]", short_repr(&qk), short_repr(&dk));
            let label = label_value(&dv, &what)?;
            b.add(&qid, &doc, label).map_err(|e| to_py(py, e))?;
        }
    }
    b.build().map_err(|e| to_py(py, e))
}

/// Each query of `{qid: {doc: score}}` into `sink`. The outer dict is walked on a
/// [`snapshot`], so that another thread changing it while the GIL is released (between
/// batches) cannot disturb the walk.
///
/// Distinct `str` keys are distinct ids, so the documents of a query need no duplicate
/// check, except where keys were decoded with `surrogateescape` (`'\udcc3\udcbf'` and
/// `'ÿ'` are the same bytes): such a query is checked here. Returns whether any query
/// id was such a key (two of them can then name one query).
fn dict_queries(d: &Bound<'_, PyDict>, sink: &mut dyn PieceSink<f64>) -> PyResult<bool> {
    let py = d.py();
    let mut escaped_qid = false;
    let mut last_qid: Vec<u8> = Vec::new();
    let mut last_escaped = false;
    let mut finder = RepeatFinder::default();
    let mut id_bytes_per_doc = 16usize;
    let mut pairs = Vec::new();
    let mut taken = 0usize;
    for (qk, qv) in snapshot(d) {
        let qid = id_bytes(&qk, &|| format!("query id {}", short_repr(&qk)))?;
        let owned = matches!(qid, Cow::Owned(_));
        // two keys, one query, one after the other (possible only with escaped keys): the
        // evaluation route would join them unchecked, so they are refused here
        if (owned || last_escaped) && *qid == *last_qid {
            return Err(format_err(
                py,
                format!(
                    "run: query id {} is the same bytes as the key before it; two keys \
                     cannot name one query",
                    short_repr(&qk)
                ),
            ));
        }
        escaped_qid |= owned;
        last_escaped = owned;
        last_qid.clear();
        last_qid.extend_from_slice(&qid);
        let inner = inner_dict(&qv, &qk, "run")?;
        if inner.is_empty() {
            continue; // as in a run file: a query without results is absent
        }
        let mut q = sink.spare();
        q.qid = qid.as_ref().into();
        // room for this query, ids sized like the previous query's
        let n = inner.len();
        q.docs.reserve(n, n * id_bytes_per_doc.max(8));
        q.values.reserve(n);
        if push_exact_entries(inner, &mut q, &mut pairs) {
            id_bytes_per_doc = q.docs.byte_len() / q.len().max(1) + 1;
        } else {
            // converting a value may run Python code: walk a snapshot
            let mut escaped = false;
            for (dk, dv) in snapshot(inner) {
                let doc = doc_key(&dk, &qk)?;
                escaped |= matches!(doc, Cow::Owned(_));
                let what = || format!("run[{}][{}]", short_repr(&qk), short_repr(&dk));
                let score = score_value(&dv, &what)?;
                q.push(&doc, score).map_err(|e| to_py(py, e))?;
            }
            if escaped {
                if let Some(dup) = find_duplicate(&q.docs, &mut finder) {
                    let place = Place::new("run", Unit::None);
                    return Err(to_py(py, place.duplicate(&q, None, dup)));
                }
            }
        }
        sink.piece(q, 0).map_err(|e| to_py(py, e))?;
        taken += 1;
        if taken % 4096 == 0 {
            py.check_signals()?;
        }
    }
    Ok(escaped_qid)
}

/// `{qid: {doc: score}}` to [`Run`].
pub(crate) fn run_from_dict(d: &Bound<'_, PyDict>, runid: Vec<u8>) -> PyResult<Run> {
    let mut rows = Grouper::new(Place::new("run", Unit::None));
    if dict_queries(d, &mut rows)? {
        // two keys may have named one query: check its documents as a whole
        Run::from_grouper(rows, runid).map_err(|e| to_py(d.py(), e))
    } else {
        Ok(Run::from_unique(rows.finish().0, runid))
    }
}

/// Evaluate `{qid: {doc: score}}` as it is converted: batches of converted queries are
/// evaluated on other threads (without the GIL) while this one converts the next; the
/// run is never held whole.
pub(crate) fn evaluate_dict(
    ev: &Evaluator,
    d: &Bound<'_, PyDict>,
    runid: Vec<u8>,
) -> PyResult<Results> {
    let py = d.py();
    let res = ev.evaluate_pipelined(
        Place::new("run", Unit::None),
        runid,
        true, // dict keys: no document twice (dict_queries checks escaped keys)
        |b| dict_queries(d, b).map(|_| true),
        |f| py.detach(f),
    )?;
    res.unwrap_or(Err(crate::Error::Interrupted))
        .map_err(|e| to_py(py, e))
}

/// The common case of `{doc_id: score}`, fast: every key an exact `str` and every value
/// an exact `float` or `int`, read through borrowed references. Returns false,
/// having added nothing, when any entry needs the general path (which validates it and
/// reports errors).
fn push_exact_entries(
    inner: &Bound<'_, PyDict>,
    q: &mut RunQuery,
    pairs: &mut Vec<(*mut pyo3::ffi::PyObject, *mut pyo3::ffi::PyObject)>,
) -> bool {
    use pyo3::ffi;
    let start = q.len();
    let dict = inner.as_ptr();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    let mut ok = true;
    pairs.clear();
    // SAFETY: we hold the GIL (through `inner`) and run no Python code until the end of
    // this function (only exact str/float/int are read, by functions that call no user
    // code), so the dict cannot change and the borrowed references it hands out stay
    // valid; each UTF-8 buffer is copied before the next call.
    unsafe {
        // First the (key, value) pointers, a sequential walk of the dict's entries;
        // then the objects themselves, fetched ahead: they lie all over the heap, and
        // reading them one by one would wait on memory for every entry.
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            pairs.push((key, value));
        }
        for (i, &(key, value)) in pairs.iter().enumerate() {
            if let Some(&(k, v)) = pairs.get(i + PREFETCH_AHEAD) {
                prefetch_object(k);
                prefetch_object(v);
            }
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
            let Some(doc) = exact_str_bytes(key) else {
                ok = false;
                break;
            };
            if q.push(doc, score).is_err() {
                ok = false;
                break;
            }
        }
    }
    if !ok {
        q.truncate(start);
    }
    ok
}

/// The common case of `{doc_id: label}`, fast: every key an exact `str` and every value
/// an exact `int` within 64 bits, read through borrowed references and added to `b`.
/// Returns Ok(false), having added nothing, when any entry needs the general path
/// (which validates it and reports errors).
fn add_exact_labels(
    inner: &Bound<'_, PyDict>,
    qid: &[u8],
    b: &mut QrelsBuilder,
    pairs: &mut Vec<(*mut pyo3::ffi::PyObject, *mut pyo3::ffi::PyObject)>,
    labels: &mut Vec<i64>,
) -> crate::Result<bool> {
    use pyo3::ffi;
    let dict = inner.as_ptr();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    pairs.clear();
    labels.clear();
    // SAFETY: as in `push_exact_entries`: the GIL is held and no Python code runs until
    // the end (only exact str and int objects are read, by functions that call no user
    // code), so the dict cannot change and its borrowed references stay valid.
    unsafe {
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            pairs.push((key, value));
        }
        // every label first: nothing is added unless every entry takes this path
        for &(key, value) in pairs.iter() {
            if ffi::PyUnicode_CheckExact(key) == 0 || ffi::PyLong_CheckExact(value) == 0 {
                return Ok(false);
            }
            let mut overflow: std::os::raw::c_int = 0;
            let l = ffi::PyLong_AsLongLongAndOverflow(value, &mut overflow);
            if overflow != 0 || (l == -1 && !ffi::PyErr_Occurred().is_null()) {
                ffi::PyErr_Clear();
                return Ok(false);
            }
            labels.push(l);
        }
        let mut piece = crate::intake::Rows::new(qid);
        for (&(key, _), &label) in pairs.iter().zip(labels.iter()) {
            let Some(doc) = exact_str_bytes(key) else {
                return Ok(false); // a lone surrogate: the general path escapes it
            };
            piece.push(doc, label)?;
        }
        if !piece.is_empty() {
            b.add_rows(piece)?;
        }
    }
    Ok(true)
}

/// The UTF-8 bytes of an exact `str`, borrowed from the string itself; None for other
/// objects and for strings that do not encode (lone surrogates: the general path
/// encodes them with `surrogateescape`).
///
/// # Safety
/// The GIL is held, `obj` is a live object, and the bytes are used only while no Python
/// code runs and `obj` stays alive.
#[inline]
unsafe fn exact_str_bytes<'a>(obj: *mut pyo3::ffi::PyObject) -> Option<&'a [u8]> {
    use pyo3::ffi;
    if obj.is_null() || ffi::PyUnicode_CheckExact(obj) == 0 {
        return None;
    }
    let mut size: ffi::Py_ssize_t = 0;
    let data = ffi::PyUnicode_AsUTF8AndSize(obj, &mut size);
    if data.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    Some(std::slice::from_raw_parts(data.cast::<u8>(), size as usize))
}

/// How many entries ahead the objects are fetched into the cache.
const PREFETCH_AHEAD: usize = 16;

/// Ask the CPU to bring a Python object's first bytes (header and, for a short str, its
/// characters) into the cache.
#[inline(always)]
fn prefetch_object(p: *mut pyo3::ffi::PyObject) {
    crate::parallel::prefetch(p, 49);
}

/// A float64 view of a numeric column: numpy arrays are read in place, pandas Series
/// and other array-likes are converted once with `to_numpy()` / `numpy.asarray`.
fn numeric_array<'py>(col: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let is_float64 =
        |a: &Bound<'py, PyAny>| a.extract::<numpy::PyReadonlyArray1<'_, f64>>().is_ok();
    if is_float64(col) {
        return Some(col.clone());
    }
    // a numpy array of another dtype is cast as it is; a pandas / polars column turned
    // into one first (an int64 array of a million values was read value by value)
    let arr = if col.cast::<numpy::PyUntypedArray>().is_ok() {
        col.clone()
    } else {
        col.call_method0("to_numpy").ok()?
    };
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
    let f = astype(&arr, "float64")?;
    is_float64(&f).then_some(f)
}

/// `arr.astype(dtype, copy=False)`: the array itself when it has the dtype already
/// (numpy's `astype` copies by default: 80 MB of fresh pages for a 10 M-row score
/// column, a quarter of a cold evaluation of a DataFrame).
fn astype<'py>(arr: &Bound<'py, PyAny>, dtype: &str) -> Option<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(arr.py());
    kwargs.set_item("copy", false).ok()?;
    arr.call_method("astype", (dtype,), Some(&kwargs)).ok()
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
    super::errors::require_numpy(py, "reading columns")?;
    let (q, d) = (IdColumn::of(qids)?, IdColumn::of(docs)?);
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
    } else if let Some(floats) = numeric_array(labels) {
        // a float column (pandas' for labels with missing values): whole numbers only
        let a = floats.extract::<numpy::PyReadonlyArray1<'_, f64>>()?;
        let mut out = Vec::with_capacity(a.len()?);
        for (row, &f) in a.as_array().iter().enumerate() {
            out.push(whole_label(f).ok_or_else(|| {
                let shown = PyFloat::new(py, f)
                    .repr()
                    .map_or(f.to_string(), |r| r.to_string());
                format_err(
                    py,
                    format!("label at row {row} must be a whole-number label, got {shown}"),
                )
            })?);
        }
        out
    } else {
        let mut out = Vec::new();
        for (row, v) in labels.try_iter()?.enumerate() {
            out.push(label_value(&v?, &|| format!("label at row {row}"))?);
        }
        out
    };
    let mut b = QrelsBuilder::default();
    column_queries(&q, &d, &labels, &mut b)?;
    b.build().map_err(|e| to_py(py, e))
}

/// Rows from any iterable of `(query_id, doc_id, value, ...)`: tuples and named tuples
/// (ir_datasets' `TrecQrel` / `ScoredDoc`, ir_measures' `Qrel` / `ScoredDoc`) by
/// position, other objects by the attributes `query_id`, `doc_id` and `relevance` (or
/// `score`). Consecutive rows of one query go to `sink` as one piece, so a stream of
/// any length is grouped without a Python object kept per row.
fn iterable_rows<V: crate::intake::Value>(
    rows: &Bound<'_, PyAny>,
    source: &str,
    sink: &mut dyn PieceSink<V>,
    value_attr: &str,
    value: fn(&Bound<'_, PyAny>, &dyn Fn() -> String) -> PyResult<V>,
) -> PyResult<()> {
    let py = rows.py();
    let iter = rows.try_iter().map_err(|_| {
        format_err(
            py,
            format!(
                "{source}: expected an iterable of (query_id, doc_id, {value_attr}) rows, \
                 got {}",
                type_name(rows)
            ),
        )
    })?;
    let mut pieces = crate::intake::RowPieces::default();
    for (row, item) in iter.enumerate() {
        let item = item?;
        let at = |what: &str| format!("{source}, row {row}: {what}");
        let (q, d, v) = if let Ok(t) = item.cast::<pyo3::types::PyTuple>() {
            if t.len() < 3 {
                return Err(format_err(
                    py,
                    format!(
                        "{source}, row {row}: {} fields; expected (query_id, doc_id, \
                         {value_attr})",
                        t.len()
                    ),
                ));
            }
            (t.get_item(0)?, t.get_item(1)?, t.get_item(2)?)
        } else {
            let get = |name: &str| {
                item.getattr(name).map_err(|_| {
                    // ir_measures' calc_aggregate(measures, qrels, run) puts them first
                    // (a measure name has no blank; a line of a TREC file has)
                    let name = item
                        .cast::<PyString>()
                        .is_ok_and(|t| t.to_str().is_ok_and(|t| !t.contains(char::is_whitespace)));
                    let measure = name || of_package(&item, "ir_measures");
                    let hint = if measure && row == 0 {
                        " (a measure? they come last: evaluate(qrels, run, measures))"
                    } else {
                        ""
                    };
                    format_err(
                        py,
                        format!(
                            "{source}, row {row} ({}) is not a tuple and has no attribute \
                             {name:?}{hint}",
                            type_name(&item)
                        ),
                    )
                })
            };
            (get("query_id")?, get("doc_id")?, get(value_attr)?)
        };
        let qid = id_bytes(&q, &|| at("query id"))?;
        let doc = id_bytes(&d, &|| at("document id"))?;
        let v = value(&v, &|| at(value_attr))?;
        pieces
            .push(sink, &qid, &doc, v, row as u64)
            .map_err(|e| to_py(py, e))?;
        if row % 65_536 == 65_535 {
            py.check_signals()?;
        }
    }
    pieces.flush(sink).map_err(|e| to_py(py, e))
}

/// Judgments from an iterable of rows (see [`iterable_rows`]).
pub(crate) fn qrels_from_rows(rows: &Bound<'_, PyAny>) -> PyResult<Qrels> {
    let mut b = QrelsBuilder::default();
    iterable_rows(rows, "qrels", &mut b, "relevance", label_value)?;
    b.build().map_err(|e| to_py(rows.py(), e))
}

/// A run from an iterable of rows (see [`iterable_rows`]).
pub(crate) fn run_from_rows(rows: &Bound<'_, PyAny>, runid: Vec<u8>) -> PyResult<Run> {
    let mut g = Grouper::new(Place::new("run", Unit::Row));
    iterable_rows(rows, "run", &mut g, "score", score_value)?;
    Run::from_grouper(g, runid).map_err(|e| to_py(rows.py(), e))
}

/// One query's results from two parallel columns (document ids and scores: lists or
/// numpy arrays), as an owned piece (the push API's `add`).
pub(crate) fn query_rows(
    qid: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    scores: &Bound<'_, PyAny>,
) -> PyResult<RunQuery> {
    let py = qid.py();
    super::errors::require_numpy(py, "reading columns")?;
    let q = id_bytes(qid, &|| format!("query id {}", short_repr(qid)))?;
    let floats = Floats::of(scores, "score")?;
    let d = IdColumn::of(docs)?;
    let s = floats.as_slice();
    if d.len() != s.len() {
        return Err(format_err(
            py,
            format!(
                "query {}: the document ids and scores differ in length ({}, {})",
                short_repr(qid),
                d.len(),
                s.len()
            ),
        ));
    }
    let mut rq = RunQuery::new(&q);
    for (i, &score) in s.iter().enumerate() {
        rq.push(&d.bytes(i, "document id")?, score)
            .map_err(|e| to_py(py, e))?;
    }
    Ok(rq)
}

/// Numbers as a vector: a float64 numpy array copied once, other array-likes converted
/// once by numpy, anything else value by value.
pub(crate) fn float_vec(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    Ok(Floats::of(obj, what)?.as_slice().to_vec())
}

/// Per-query values: a dict's values (a bad one named by its key), or any sequence of
/// numbers as [`float_vec`] takes it (a float64 array copied once, not value by value:
/// `aggregate` of a million-value array took 0.44 s in a Python loop before).
pub(crate) fn values_vec(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    let Ok(d) = obj.cast::<PyDict>() else {
        return float_vec(obj, what);
    };
    let mut out = Vec::with_capacity(d.len());
    for (k, v) in snapshot(d) {
        out.push(score_value(&v, &|| format!("{what}[{}]", short_repr(&k)))?);
    }
    Ok(out)
}

/// A float64 column: a numpy array read in place, or the values converted one by one.
enum Floats<'py> {
    Array(numpy::PyReadonlyArray1<'py, f64>),
    Owned(Vec<f64>),
}

impl Floats<'_> {
    fn of<'py>(col: &Bound<'py, PyAny>, what: &str) -> PyResult<Floats<'py>> {
        if let Some(arr) = numeric_array(col) {
            if let Ok(a) = arr.extract::<numpy::PyReadonlyArray1<'py, f64>>() {
                if a.as_slice().is_ok() {
                    return Ok(Floats::Array(a));
                }
                return Ok(Floats::Owned(a.as_array().to_vec()));
            }
        }
        let not_numbers = || {
            input_err(
                col.py(),
                format!(
                    "{what} must be a sequence of numbers, got {}",
                    type_name(col)
                ),
            )
        };
        // an array of several dimensions (a systems x queries matrix) holds no numbers
        // directly: said so, not "row 0 must be a number, got ndarray"
        if let Some(ndim) = col
            .getattr("ndim")
            .ok()
            .and_then(|n| n.extract::<usize>().ok())
            .filter(|n| *n != 1)
        {
            return Err(input_err(
                col.py(),
                format!(
                    "{what} must be one-dimensional (one value per query), got {ndim} dimensions"
                ),
            ));
        }
        // text is no sequence of numbers (bytes iterate as their byte values: the mean
        // of b"abc" was 98)
        if col.is_instance_of::<PyBytes>()
            || col.is_instance_of::<pyo3::types::PyByteArray>()
            || col.is_instance_of::<PyString>()
        {
            return Err(not_numbers());
        }
        let items = col.try_iter().map_err(|_| not_numbers())?;
        let mut out = Vec::new();
        for (row, v) in items.enumerate() {
            out.push(score_value(&v?, &|| format!("{what} at row {row}"))?);
        }
        Ok(Floats::Owned(out))
    }

    fn as_slice(&self) -> &[f64] {
        match self {
            Floats::Array(a) => a.as_slice().unwrap_or(&[]),
            Floats::Owned(v) => v,
        }
    }
}

/// A column of ids read in place, item by item: a list, or a numpy object array (what
/// pandas keeps for an object column); other columns are turned into a list once.
enum IdColumn<'py> {
    List(Bound<'py, PyList>),
    /// An integer column (numpy or pandas: MS MARCO and TREC DL ids read by
    /// `read_csv` come as int64): each id is its decimal text, as a TREC file holds it.
    Ints(Python<'py>, Vec<i128>),
    /// The array (kept alive and borrowed: numpy cannot resize it meanwhile) and its
    /// contiguous item pointers.
    Objects(
        numpy::PyReadonlyArray1<'py, Py<PyAny>>,
        *const *mut pyo3::ffi::PyObject,
        usize,
    ),
}

impl<'py> IdColumn<'py> {
    fn of(col: &Bound<'py, PyAny>) -> PyResult<IdColumn<'py>> {
        if let Ok(l) = col.cast::<PyList>() {
            return Ok(IdColumn::List(l.clone()));
        }
        // a pandas (or polars) column becomes an array once: for a string column each
        // call of to_numpy makes a Python object per row
        let converted = if col.hasattr("to_numpy").unwrap_or(false) {
            col.call_method0("to_numpy").ok()
        } else {
            None
        };
        let arr = converted.as_ref().unwrap_or(col);
        if let Some(ints) = Self::integers(arr) {
            return Ok(IdColumn::Ints(col.py(), ints));
        }
        if let Ok(a) = arr.extract::<numpy::PyReadonlyArray1<'py, Py<PyAny>>>() {
            if let Some((items, len)) = a
                .as_slice()
                .ok()
                .map(|s| (s.as_ptr().cast::<*mut pyo3::ffi::PyObject>(), s.len()))
            {
                return Ok(IdColumn::Objects(a, items, len));
            }
        }
        if let Ok(l) = col.call_method0("tolist") {
            if let Ok(l) = l.cast_into::<PyList>() {
                return Ok(IdColumn::List(l));
            }
        }
        let items: Vec<Bound<'py, PyAny>> = col.try_iter()?.collect::<PyResult<_>>()?;
        Ok(IdColumn::List(PyList::new(col.py(), items)?))
    }

    /// The values of a numpy array of integers (any width, signed or not), if it is one.
    fn integers(arr: &Bound<'py, PyAny>) -> Option<Vec<i128>> {
        let dtype = arr.getattr("dtype").ok()?;
        let kind: String = dtype.getattr("kind").ok()?.extract().ok()?;
        match kind.as_str() {
            "i" => {
                let a = astype(arr, "int64")?;
                let a = a.extract::<numpy::PyReadonlyArray1<'_, i64>>().ok()?;
                Some(a.as_array().iter().map(|&v| i128::from(v)).collect())
            }
            "u" => {
                let a = astype(arr, "uint64")?;
                let a = a.extract::<numpy::PyReadonlyArray1<'_, u64>>().ok()?;
                Some(a.as_array().iter().map(|&v| i128::from(v)).collect())
            }
            _ => None,
        }
    }

    fn py(&self) -> Python<'py> {
        match self {
            IdColumn::List(l) => l.py(),
            IdColumn::Ints(py, _) => *py,
            IdColumn::Objects(a, ..) => a.py(),
        }
    }

    fn len(&self) -> usize {
        match self {
            IdColumn::List(l) => l.len(),
            IdColumn::Ints(_, v) => v.len(),
            IdColumn::Objects(_, _, len) => *len,
        }
    }

    /// Borrowed pointer to item `i` (null when out of range).
    #[inline(always)]
    fn ptr(&self, i: usize) -> *mut pyo3::ffi::PyObject {
        match self {
            // SAFETY: PyList_GetItem checks the index (null and an IndexError, cleared,
            // when out of range) and returns a borrowed reference; the GIL is held.
            IdColumn::List(l) => unsafe {
                let p = pyo3::ffi::PyList_GetItem(l.as_ptr(), i as pyo3::ffi::Py_ssize_t);
                if p.is_null() {
                    pyo3::ffi::PyErr_Clear();
                }
                p
            },
            // SAFETY: i < len, and the array (alive, not resizable while borrowed) holds
            // `len` item pointers at `items`; the GIL is held.
            IdColumn::Objects(_, items, len) if i < *len => unsafe { *items.add(i) },
            IdColumn::Objects(..) | IdColumn::Ints(..) => std::ptr::null_mut(),
        }
    }

    /// The id at row `i` as bytes: an exact `str` of an object array read in place here,
    /// inlined into the loops over rows; everything else by [`IdColumn::bytes_other`].
    /// (Called out of line, with the other cases' branches, this was 44 instructions a
    /// row beside `PyUnicode_AsUTF8AndSize`'s 27, for a frame's query and document ids.)
    #[inline(always)]
    fn bytes(&self, i: usize, what: &str) -> PyResult<Cow<'_, [u8]>> {
        if let IdColumn::Objects(..) = self {
            // SAFETY: the GIL is held and the column keeps the item alive (null past the
            // end: not a str); callers use the bytes before any Python code runs.
            if let Some(b) = unsafe { exact_str_bytes(self.ptr(i)) } {
                return Ok(Cow::Borrowed(b));
            }
        }
        self.bytes_other(i, what)
    }

    /// [`IdColumn::bytes`] of a list's item, an integer column's, or an item that is not
    /// an exact `str` (checked, converted, or refused).
    #[inline(never)]
    fn bytes_other(&self, i: usize, what: &str) -> PyResult<Cow<'_, [u8]>> {
        if let IdColumn::Ints(_, v) = self {
            if let Some(n) = v.get(i) {
                return Ok(Cow::Owned(n.to_string().into_bytes()));
            }
        }
        let p = self.ptr(i);
        // SAFETY: the GIL is held and the column keeps the item alive; callers use the
        // bytes before any Python code runs.
        if let Some(b) = unsafe { exact_str_bytes(p) } {
            return Ok(Cow::Borrowed(b));
        }
        let py = self.py();
        if p.is_null() {
            return Err(format_err(py, format!("{what} at row {i} is missing")));
        }
        // SAFETY: a live object kept alive by the column; a new strong reference.
        let item = unsafe { Bound::from_borrowed_ptr(py, p) };
        Ok(Cow::Owned(
            id_bytes(&item, &|| format!("{what} at row {i}"))?.into_owned(),
        ))
    }
}

/// The rows as pieces (consecutive rows of one query id) into `sink`, each marked with
/// its first row. Returns false, having stopped early, when `sink` would refuse a
/// query that comes back after another (the rows are not grouped by query).
fn column_queries<V: crate::intake::Value>(
    q: &IdColumn<'_>,
    d: &IdColumn<'_>,
    scores: &[V],
    sink: &mut dyn PieceSink<V>,
) -> PyResult<bool> {
    let py = q.py();
    let n = scores.len();
    check_lengths(py, [q.len(), d.len(), n], V::NAME)?;
    let mut i = 0;
    let mut taken = 0usize;
    while i < n {
        let qp = q.ptr(i);
        let (rq, end) = {
            let qid = q.bytes(i, "query id")?;
            let mut end = i + 1;
            while end < n {
                prefetch_object(q.ptr(end + PREFETCH_AHEAD));
                let p = q.ptr(end);
                // the same object is the same id (null: no object to compare); other
                // objects compared without a call to memcmp (a frame's query ids are
                // often a str object a row: 6.7% of the samples, on the GIL's thread)
                if (p.is_null() || p != qp) && !same_id(&q.bytes(end, "query id")?, &qid) {
                    break;
                }
                end += 1;
            }
            if sink.comes_back(&qid) {
                return Ok(false);
            }
            let mut rq = sink.spare();
            rq.qid = qid.as_ref().into();
            rq.docs.reserve(end - i, (end - i) * 16);
            rq.values.reserve(end - i);
            for (k, &score) in scores.iter().enumerate().take(end).skip(i) {
                prefetch_object(d.ptr(k + PREFETCH_AHEAD));
                let doc = d.bytes(k, "document id")?;
                rq.push(&doc, score).map_err(|e| to_py(py, e))?;
            }
            (rq, end)
        };
        sink.piece(rq, i as u64).map_err(|e| to_py(py, e))?;
        i = end;
        taken += 1;
        if taken % 4096 == 0 {
            py.check_signals()?;
        }
    }
    Ok(true)
}

/// Three parallel columns (query ids, doc ids, scores) to [`Run`]; the rows of a query
/// may lie apart (the intake joins them).
pub(crate) fn run_from_columns(
    qids: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    scores: &Bound<'_, PyAny>,
    runid: Vec<u8>,
) -> PyResult<Run> {
    let py = qids.py();
    super::errors::require_numpy(py, "reading columns")?;
    let scores = Floats::of(scores, "score")?;
    let (q, d) = (IdColumn::of(qids)?, IdColumn::of(docs)?);
    let mut rows = Grouper::new(Place::new("run", Unit::Row));
    column_queries(&q, &d, scores.as_slice(), &mut rows)?;
    Run::from_grouper(rows, runid).map_err(|e| to_py(py, e))
}

/// Evaluate three parallel columns as they are converted (see [`evaluate_dict`]) when
/// the rows of each query are together (as in run files and most frames); otherwise
/// the run is gathered whole first (the intake joins each query's rows).
pub(crate) fn evaluate_columns(
    ev: &Evaluator,
    qids: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    scores: &Bound<'_, PyAny>,
    runid: Vec<u8>,
) -> PyResult<Results> {
    let py = qids.py();
    super::errors::require_numpy(py, "reading columns")?;
    let floats = Floats::of(scores, "score")?;
    let (q, d) = (IdColumn::of(qids)?, IdColumn::of(docs)?);
    let res = ev.evaluate_pipelined(
        Place::new("run", Unit::Row),
        runid.clone(),
        false,
        |b| column_queries(&q, &d, floats.as_slice(), b),
        |f| py.detach(f),
    )?;
    let res = match res {
        Some(r) => r,
        None => {
            let mut rows = Grouper::new(Place::new("run", Unit::Row));
            column_queries(&q, &d, floats.as_slice(), &mut rows)?;
            let run = Run::from_grouper(rows, runid).map_err(|e| to_py(py, e))?;
            py.detach(|| ev.evaluate(&run))
        }
    };
    res.map_err(|e| to_py(py, e))
}
