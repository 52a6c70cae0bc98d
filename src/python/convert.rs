//! Conversions between Python values and the crate's inputs and outputs.
//!
//! Ids are bytes in the crate. From Python they come as `str` (UTF-8, surrogate escapes
//! kept); back to Python valid UTF-8 becomes `str` directly and other bytes are decoded
//! with `surrogateescape`, so nothing the user gave is lost or altered.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString};

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
            Ok(t) => Ok(Cow::Owned(t.as_bytes().to_vec())),
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
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() {
        return Err(bad());
    }
    let x = v.extract::<f64>().map_err(|_| bad())?;
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
    Ok(b.build())
}

/// `{qid: {doc: score}}` to [`Run`].
pub(crate) fn run_from_dict(d: &Bound<'_, PyDict>, name: Option<&str>) -> PyResult<Run> {
    let py = d.py();
    let mut b = RunBuilder::default();
    for (qk, qv) in d.iter() {
        let qid = id_bytes(&qk, &|| format!("query id {}", short_repr(&qk)))?;
        let inner = inner_dict(&qv, &qk, "run")?;
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
            b.add(&qid, &doc, score)
                .map_err(|e| super::errors::to_py(py, e))?;
        }
    }
    if let Some(n) = name {
        b.runid(n.as_bytes());
    }
    b.build().map_err(|e| super::errors::to_py(py, e))
}

/// Three parallel columns (query ids, doc ids, labels) to [`Qrels`].
pub(crate) fn qrels_from_columns(
    qids: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
) -> PyResult<Qrels> {
    let py = qids.py();
    let mut b = QrelsBuilder::default();
    let (mut qi, mut di, mut li) = (qids.try_iter()?, docs.try_iter()?, labels.try_iter()?);
    let mut row = 0usize;
    loop {
        match (qi.next(), di.next(), li.next()) {
            (None, None, None) => break,
            (Some(q), Some(d), Some(l)) => {
                let (q, d, l) = (q?, d?, l?);
                let qid = id_bytes(&q, &|| format!("query id at row {row}"))?;
                let doc = id_bytes(&d, &|| format!("document id at row {row}"))?;
                let label = label_value(&l, &|| format!("label at row {row}"))?;
                b.add(&qid, &doc, label)
                    .map_err(|e| super::errors::to_py(py, e))?;
            }
            _ => {
                return Err(format_err(
                    py,
                    "the query, document and label columns differ in length".into(),
                ))
            }
        }
        row += 1;
    }
    Ok(b.build())
}

/// Three parallel columns (query ids, doc ids, scores) to [`Run`].
pub(crate) fn run_from_columns(
    qids: &Bound<'_, PyAny>,
    docs: &Bound<'_, PyAny>,
    scores: &Bound<'_, PyAny>,
    name: Option<&str>,
) -> PyResult<Run> {
    let py = qids.py();
    let mut b = RunBuilder::default();
    let (mut qi, mut di, mut si) = (qids.try_iter()?, docs.try_iter()?, scores.try_iter()?);
    let mut row = 0usize;
    loop {
        match (qi.next(), di.next(), si.next()) {
            (None, None, None) => break,
            (Some(q), Some(d), Some(s)) => {
                let (q, d, s) = (q?, d?, s?);
                let qid = id_bytes(&q, &|| format!("query id at row {row}"))?;
                let doc = id_bytes(&d, &|| format!("document id at row {row}"))?;
                let score = score_value(&s, &|| format!("score at row {row}"))?;
                b.add(&qid, &doc, score)
                    .map_err(|e| super::errors::to_py(py, e))?;
            }
            _ => {
                return Err(format_err(
                    py,
                    "the query, document and score columns differ in length".into(),
                ))
            }
        }
        row += 1;
    }
    if let Some(n) = name {
        b.runid(n.as_bytes());
    }
    b.build().map_err(|e| super::errors::to_py(py, e))
}
