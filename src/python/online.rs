//! Online metrics (`crate::online`): the `OnlineLog` class, read from a file or built
//! from columns (numpy arrays: text columns as codes into their distinct values, as
//! `pandas.factorize` gives, so no Python object per row crosses), and the metrics,
//! top queries and queries per bucket, computed without the GIL.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use super::convert::int_arg;
use super::{errors, heavy};
use crate::error::{Error, Unit};
use crate::online::{
    self, Bucket, Event, Log, LogBuilder, LogFormat, LogOptions, OnlineOptions, Resampling, Time,
    FIELDS,
};

/// A search log, read once (sessions sorted, dwell derived, checked).
#[pyclass(frozen, name = "OnlineLog", module = "irmetrics.online")]
pub struct PyOnlineLog {
    inner: Arc<Log>,
}

#[pymethods]
impl PyOnlineLog {
    /// Events kept (SERPs, clicks, success events).
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Number of sessions.
    #[getter]
    fn n_sessions(&self) -> usize {
        self.inner.n_sessions()
    }

    /// Events of unknown types, ignored: `{type: count}`.
    #[getter]
    fn ignored(&self) -> Vec<(String, u64)> {
        self.inner.ignored().to_vec()
    }

    /// Events that came before an earlier event of their session (sorted).
    #[getter]
    fn reordered(&self) -> u64 {
        self.inner.reordered()
    }

    /// How the timestamps are written (`numbers in seconds`, `text with a time zone`,
    /// ...), fixed by the first event; None without events.
    #[getter]
    fn time_style(&self) -> Option<String> {
        self.inner.time_style().map(str::to_string)
    }

    /// The variants, in order of first sight.
    #[getter]
    fn variants(&self) -> Vec<String> {
        self.inner.variants().to_vec()
    }

    /// Whether the log has a field (`"position"`, `"latency_ms"`, ...).
    fn has(&self, field: &str) -> bool {
        self.inner.has(field)
    }

    fn __repr__(&self) -> String {
        format!(
            "<irmetrics.online.OnlineLog: {} events, {} sessions>",
            self.inner.len(),
            self.inner.n_sessions()
        )
    }
}

fn options(
    columns: Option<&Bound<'_, PyDict>>,
    success_events: Vec<String>,
    dwell_cap: f64,
    time_unit: &str,
) -> crate::error::Result<LogOptions> {
    let mut o = LogOptions {
        success_events,
        dwell_cap,
        ..LogOptions::default()
    };
    o.set_time_unit(time_unit)?;
    if let Some(c) = columns {
        for (k, v) in c.iter() {
            let (Ok(k), Ok(v)) = (k.extract::<String>(), v.extract::<String>()) else {
                return Err(Error::Option(
                    "columns must map field names to column names (str to str)".into(),
                ));
            };
            o.map(&k, &v)?;
        }
    }
    Ok(o)
}

/// Read a log file (JSON Lines or CSV; `format="auto"`: by its extension).
#[pyfunction]
#[pyo3(signature = (path, *, format = "auto", columns = None, success_events = vec!["copy".to_string(), "purchase".to_string()], dwell_cap = online::DWELL_CAP, time_unit = "auto"))]
fn online_read(
    py: Python<'_>,
    path: PathBuf,
    format: &str,
    columns: Option<&Bound<'_, PyDict>>,
    success_events: Vec<String>,
    dwell_cap: f64,
    time_unit: &str,
) -> PyResult<PyOnlineLog> {
    let opts =
        options(columns, success_events, dwell_cap, time_unit).map_err(|e| errors::to_py(py, e))?;
    let format = LogFormat::of(format, &path).map_err(|e| errors::to_py(py, e))?;
    let log = heavy(py, move |_| online::read_log(&path, format, opts))?;
    Ok(PyOnlineLog {
        inner: Arc::new(log),
    })
}

/// One field's values: codes into distinct texts (-1: missing), or numbers (NaN:
/// missing).
enum Column<'py> {
    Coded(PyReadonlyArray1<'py, i64>, Vec<String>),
    Numbers(PyReadonlyArray1<'py, f64>),
}

impl Column<'_> {
    fn len(&self) -> usize {
        match self {
            Column::Coded(c, _) => c.len().unwrap_or(0),
            Column::Numbers(v) => v.len().unwrap_or(0),
        }
    }
}

fn column_of<'py>(name: &str, v: &Bound<'py, PyAny>) -> PyResult<Column<'py>> {
    let py = v.py();
    if let Ok(t) = v.cast::<PyTuple>() {
        if t.len() == 2 {
            let (first, second) = (t.get_item(0)?, t.get_item(1)?);
            let codes = first.extract::<PyReadonlyArray1<'py, i64>>();
            let names = second.extract::<Vec<String>>();
            if let (Ok(c), Ok(n)) = (codes, names) {
                return Ok(Column::Coded(c, n));
            }
        }
    }
    if let Ok(a) = v.extract::<PyReadonlyArray1<'py, f64>>() {
        return Ok(Column::Numbers(a));
    }
    Err(errors::input_err(
        py,
        format!("column '{name}' must be (int64 codes, list of str) or a float64 array"),
    ))
}

/// Build a log from columns: `{field: (codes, texts) | float64 array}` (the Python
/// layer's conversion of a DataFrame or a dict of columns); places are rows from 0.
#[pyfunction]
#[pyo3(signature = (columns, *, success_events = vec!["copy".to_string(), "purchase".to_string()], dwell_cap = online::DWELL_CAP, time_unit = "auto"))]
fn online_from_columns(
    py: Python<'_>,
    columns: &Bound<'_, PyDict>,
    success_events: Vec<String>,
    dwell_cap: f64,
    time_unit: &str,
) -> PyResult<PyOnlineLog> {
    let opts =
        options(None, success_events, dwell_cap, time_unit).map_err(|e| errors::to_py(py, e))?;
    let mut cols: Vec<Option<Column<'_>>> = (0..FIELDS.len()).map(|_| None).collect();
    for (k, v) in columns.iter() {
        let k: String = k.extract()?;
        let i = FIELDS.iter().position(|f| *f == k).ok_or_else(|| {
            errors::input_err(
                py,
                format!(
                    "unknown log field '{k}'; the fields are {}",
                    FIELDS.join(", ")
                ),
            )
        })?;
        cols[i] = Some(column_of(&k, &v)?);
    }
    let missing: Vec<&str> = online::REQUIRED
        .iter()
        .filter(|f| cols[FIELDS.iter().position(|x| x == *f).unwrap_or(0)].is_none())
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(errors::input_err(
            py,
            format!(
                "the log has no column {} (map yours with columns={{field: name}})",
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let n = cols.iter().flatten().map(Column::len).max().unwrap_or(0);
    if let Some((i, c)) = cols
        .iter()
        .enumerate()
        .find_map(|(i, c)| c.as_ref().filter(|c| c.len() != n).map(|c| (i, c)))
    {
        return Err(errors::input_err(
            py,
            format!("column '{}' has {} values, others {n}", FIELDS[i], c.len()),
        ));
    }
    // plain slices for the worker (numpy arrays may be non-contiguous: copied then)
    enum Plain<'a> {
        Coded(Cow<'a, [i64]>, &'a [String]),
        Numbers(Cow<'a, [f64]>),
    }
    let plain: Vec<Option<Plain<'_>>> = cols
        .iter()
        .map(|c| {
            c.as_ref().map(|c| match c {
                Column::Coded(a, names) => Plain::Coded(
                    a.as_slice()
                        .map_or_else(|_| Cow::Owned(a.as_array().to_vec()), Cow::Borrowed),
                    names.as_slice(),
                ),
                Column::Numbers(a) => Plain::Numbers(
                    a.as_slice()
                        .map_or_else(|_| Cow::Owned(a.as_array().to_vec()), Cow::Borrowed),
                ),
            })
        })
        .collect();
    let has: Vec<bool> = plain.iter().map(Option::is_some).collect();
    let log = heavy(py, move |_| {
        let mut b = LogBuilder::new(opts, "log", Unit::Row)?;
        for (i, h) in has.iter().enumerate() {
            if *h {
                b.declare(i);
            }
        }
        let text = |i: usize, row: usize| -> crate::error::Result<Option<Cow<'_, str>>> {
            Ok(match &plain[i] {
                None => None,
                Some(Plain::Coded(c, names)) => {
                    let code = c[row];
                    if code < 0 {
                        None
                    } else {
                        Some(Cow::Borrowed(
                            names
                                .get(code as usize)
                                .ok_or_else(|| {
                                    Error::Input(format!(
                                        "column '{}': code {code} has no text",
                                        FIELDS[i]
                                    ))
                                })?
                                .as_str(),
                        ))
                    }
                }
                Some(Plain::Numbers(v)) => {
                    let x = v[row];
                    (!x.is_nan()).then(|| {
                        Cow::Owned(if x.fract() == 0.0 && x.abs() < 9e15 {
                            format!("{}", x as i64)
                        } else {
                            x.to_string()
                        })
                    })
                }
            })
        };
        let number = |i: usize, row: usize| -> crate::error::Result<Option<f64>> {
            Ok(match &plain[i] {
                None => None,
                Some(Plain::Numbers(v)) => Some(v[row]).filter(|x| !x.is_nan()),
                Some(Plain::Coded(..)) => {
                    return Err(Error::Input(format!(
                        "column '{}' must hold numbers",
                        FIELDS[i]
                    )))
                }
            })
        };
        for row in 0..n {
            let time = match &plain[1] {
                Some(Plain::Numbers(v)) => Some(v[row]).filter(|x| !x.is_nan()).map(Time::Number),
                Some(Plain::Coded(c, names)) => {
                    let code = c[row];
                    (code >= 0)
                        .then(|| Time::Text(names.get(code as usize).map_or("", |s| s.as_str())))
                }
                None => None,
            };
            let code = |i: usize| match &plain[i] {
                Some(Plain::Coded(c, _)) => u32::try_from(c[row]).ok(),
                _ => None,
            };
            let e = Event {
                codes: [code(0), code(3), code(9), code(2)],
                session: text(0, row)?,
                time,
                kind: text(2, row)?,
                query: text(3, row)?,
                n_results: number(4, row)?,
                position: number(5, row)?,
                dwell: number(7, row)?,
                latency: number(8, row)?,
                variant: text(9, row)?,
            };
            b.push(e, row as u64)?;
        }
        b.finish()
    })?;
    Ok(PyOnlineLog {
        inner: Arc::new(log),
    })
}

/// Build a log from Arrow data (the PyCapsule interface: pyarrow tables and readers,
/// polars frames, DuckDB results, ...): each field's column found by its name (or
/// `columns={field: name}`), read in Rust with the GIL released, no Python object per
/// row; places are rows from 0 over the whole table.
#[pyfunction]
#[pyo3(signature = (data, *, columns = None, success_events = vec!["copy".to_string(), "purchase".to_string()], dwell_cap = online::DWELL_CAP, time_unit = "auto"))]
fn online_from_arrow(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    columns: Option<&Bound<'_, PyDict>>,
    success_events: Vec<String>,
    dwell_cap: f64,
    time_unit: &str,
) -> PyResult<PyOnlineLog> {
    let opts =
        options(columns, success_events, dwell_cap, time_unit).map_err(|e| errors::to_py(py, e))?;
    let table = super::arrow::required(data)?;
    let log = heavy(py, move |cancel| {
        crate::online::arrow::log_from_table(&table, opts, "log", cancel)
    })?;
    Ok(PyOnlineLog {
        inner: Arc::new(log),
    })
}

/// The metrics of a log file streamed in bounded memory (`online::evaluate_stream`):
/// `(names, values, sessions, events, ignored, reordered)`.
#[pyfunction]
#[pyo3(signature = (path, metrics = None, *, dwell_threshold = 30.0, session_timeout = 1800.0, time_slack = 0.0, format = "auto", columns = None, success_events = vec!["copy".to_string(), "purchase".to_string()], dwell_cap = online::DWELL_CAP, time_unit = "auto"))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn online_evaluate_stream(
    py: Python<'_>,
    path: PathBuf,
    metrics: Option<Vec<String>>,
    dwell_threshold: f64,
    session_timeout: f64,
    time_slack: f64,
    format: &str,
    columns: Option<&Bound<'_, PyDict>>,
    success_events: Vec<String>,
    dwell_cap: f64,
    time_unit: &str,
) -> PyResult<(Vec<String>, Vec<f64>, usize, usize, Vec<(String, u64)>, u64)> {
    let opts =
        options(columns, success_events, dwell_cap, time_unit).map_err(|e| errors::to_py(py, e))?;
    let format = LogFormat::of(format, &path).map_err(|e| errors::to_py(py, e))?;
    let how = OnlineOptions {
        dwell_threshold,
        ..OnlineOptions::default()
    };
    let stream = online::StreamOptions {
        session_timeout,
        time_slack,
    };
    let metrics = metrics.unwrap_or_default();
    let (r, s) = heavy(py, move |_| {
        online::evaluate_stream(&path, format, opts, &metrics, &how, &stream)
    })?;
    let values = r
        .groups
        .into_iter()
        .next()
        .map(|g| g.values)
        .unwrap_or_default();
    Ok((
        r.metrics,
        values,
        s.sessions,
        s.events,
        s.ignored,
        s.reordered,
    ))
}

/// The metrics' tuple of `online_evaluate` and `online_combine`: `(names, groups,
/// comparisons)`.
type Evaluated = (
    Vec<String>,
    Vec<(String, usize, Vec<f64>)>,
    Vec<(String, String, String, f64, f64, f64, f64)>,
);

fn evaluated(r: online::OnlineResults) -> Evaluated {
    (
        r.metrics,
        r.groups
            .into_iter()
            .map(|g| (g.name, g.sessions, g.values))
            .collect(),
        r.comparisons
            .into_iter()
            .map(|c| {
                (
                    c.metric,
                    c.baseline,
                    c.variant,
                    c.difference,
                    c.ci.0,
                    c.ci.1,
                    c.pvalue,
                )
            })
            .collect(),
    )
}

/// The options of `online_evaluate` and `online_combine`; `n_resamples` and `seed`
/// whole numbers, as the significance tests take them (default 1,000 and 42).
fn online_options(
    dwell_threshold: f64,
    by_variant: bool,
    baseline: Option<String>,
    n_resamples: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    confidence: f64,
) -> PyResult<OnlineOptions> {
    let n_resamples = n_resamples.map_or(Ok(1000), |n| int_arg(n, "n_resamples", 1, None))?;
    let seed = seed.map_or(Ok(42), |s| int_arg(s, "seed", 0, None))?;
    Ok(OnlineOptions {
        dwell_threshold,
        by_variant,
        baseline,
        resampling: Resampling {
            n_resamples,
            seed,
            confidence,
        },
    })
}

/// The metrics: `(names, groups, comparisons)`; a group is `(name, sessions, values)`,
/// a comparison `(metric, baseline, variant, difference, ci_low, ci_high, pvalue)`.
#[pyfunction]
#[pyo3(signature = (log, metrics = None, *, dwell_threshold = 30.0, by_variant = false, baseline = None, n_resamples = None, seed = None, confidence = 0.95))]
#[allow(clippy::too_many_arguments)]
fn online_evaluate(
    py: Python<'_>,
    log: &PyOnlineLog,
    metrics: Option<Vec<String>>,
    dwell_threshold: f64,
    by_variant: bool,
    baseline: Option<String>,
    n_resamples: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    confidence: f64,
) -> PyResult<Evaluated> {
    let log = log.inner.clone();
    let opts = online_options(
        dwell_threshold,
        by_variant,
        baseline,
        n_resamples,
        seed,
        confidence,
    )?;
    let metrics = metrics.unwrap_or_default();
    let r = heavy(py, move |_| online::evaluate(&log, &metrics, &opts))?;
    Ok(evaluated(r))
}

/// What each session of the log gives to the metrics (`crate::online::SessionParts`):
/// `(metrics, sessions, first_place, variant, variants, num, den, ttfc, ttfc_ends)`,
/// the numbers as numpy arrays (`num`, `den`: one row of `len(metrics)` per session,
/// flat; `variant`: 2**32 - 1 for none).
#[pyfunction]
#[pyo3(signature = (log, metrics = None, *, dwell_threshold = 30.0))]
fn online_session_parts<'py>(
    py: Python<'py>,
    log: &PyOnlineLog,
    metrics: Option<Vec<String>>,
    dwell_threshold: f64,
) -> PyResult<Bound<'py, PyTuple>> {
    let log = log.inner.clone();
    let metrics = metrics.unwrap_or_default();
    let p = heavy(py, move |_| {
        online::session_parts(&log, &metrics, dwell_threshold)
    })?;
    let ends: Vec<u64> = p.ttfc_ends.iter().map(|&e| e as u64).collect();
    (
        p.metrics,
        p.sessions,
        PyArray1::from_vec(py, p.first_place),
        PyArray1::from_vec(py, p.variant),
        p.variants,
        PyArray1::from_vec(py, p.num),
        PyArray1::from_vec(py, p.den),
        PyArray1::from_vec(py, p.ttfc),
        PyArray1::from_vec(py, ends),
    )
        .into_pyobject(py)
}

/// The metrics of sessions' parts put together in the whole log's session order (the
/// arrays of `online_session_parts`, concatenated): what `online_evaluate` gives on
/// the whole log. `sessions` (their names, for errors) may be left out.
#[pyfunction]
#[pyo3(signature = (metrics, sessions, variant, variants, num, den, ttfc, ttfc_ends, *, by_variant = false, baseline = None, n_resamples = None, seed = None, confidence = 0.95, source = "log".to_string()))]
#[allow(clippy::too_many_arguments)]
fn online_combine(
    py: Python<'_>,
    metrics: Vec<String>,
    sessions: Option<Vec<String>>,
    variant: PyReadonlyArray1<'_, u32>,
    variants: Vec<String>,
    num: PyReadonlyArray1<'_, f64>,
    den: PyReadonlyArray1<'_, f64>,
    ttfc: PyReadonlyArray1<'_, f64>,
    ttfc_ends: PyReadonlyArray1<'_, u64>,
    by_variant: bool,
    baseline: Option<String>,
    n_resamples: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    confidence: f64,
    source: String,
) -> PyResult<Evaluated> {
    let slice = |e: numpy::NotContiguousError| {
        errors::to_py(py, Error::Input(format!("online_combine: {e}")))
    };
    let variant = variant.as_slice().map_err(slice)?.to_vec();
    let parts = online::SessionParts {
        metrics,
        first_place: vec![0; variant.len()],
        sessions: sessions.unwrap_or_else(|| vec![String::new(); variant.len()]),
        variant,
        variants,
        num: num.as_slice().map_err(slice)?.to_vec(),
        den: den.as_slice().map_err(slice)?.to_vec(),
        ttfc: ttfc.as_slice().map_err(slice)?.to_vec(),
        ttfc_ends: ttfc_ends
            .as_slice()
            .map_err(slice)?
            .iter()
            .map(|&e| e as usize)
            .collect(),
    };
    let opts = online_options(
        30.0, // the sessions' parts hold its effect
        by_variant,
        baseline,
        n_resamples,
        seed,
        confidence,
    )?;
    let r = heavy(py, move |_| {
        online::evaluate_sessions(parts, &opts, &source)
    })?;
    Ok(evaluated(r))
}

/// The top `n` queries in `window` (`(start, end)` seconds): `[(query, count, share)]`.
#[pyfunction]
#[pyo3(signature = (log, n = None, window = None, normalize = false))]
fn online_top_queries(
    py: Python<'_>,
    log: &PyOnlineLog,
    n: Option<&Bound<'_, PyAny>>,
    window: Option<(f64, f64)>,
    normalize: bool,
) -> PyResult<Vec<(String, u64, f64)>> {
    let n = n.map_or(Ok(10), |n| int_arg(n, "n", 0usize, None))?;
    let log = log.inner.clone();
    heavy(py, move |_| online::top_queries(&log, n, window, normalize))
}

/// CTR per query: `[(query, serps, clicked, ctr)]`, most SERPs first, the first `n`.
#[pyfunction]
#[pyo3(signature = (log, n = None, normalize = false))]
fn online_ctr_by_query(
    py: Python<'_>,
    log: &PyOnlineLog,
    n: Option<&Bound<'_, PyAny>>,
    normalize: bool,
) -> PyResult<Vec<(String, u64, u64, f64)>> {
    let n = n.map_or(Ok(usize::MAX), |n| int_arg(n, "n", 0usize, None))?;
    let log = log.inner.clone();
    heavy(py, move |_| online::ctr_by_query(&log, n, normalize))
}

/// Queries per bucket: `{"start": seconds, "count", "latency" (n x 3 or None),
/// "spike", "threshold"}` as numpy arrays.
#[pyfunction]
#[pyo3(signature = (log, bucket = "hour", spike_k = 3.0))]
fn online_queries_per<'py>(
    py: Python<'py>,
    log: &PyOnlineLog,
    bucket: &str,
    spike_k: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let bucket = Bucket::parse(bucket).map_err(|e| errors::to_py(py, e))?;
    let log = log.inner.clone();
    let t = heavy(py, move |_| online::queries_per(&log, bucket, spike_k))?;
    let d = PyDict::new(py);
    d.set_item("start", PyArray1::from_vec(py, t.start))?;
    d.set_item("count", PyArray1::from_vec(py, t.count))?;
    match t.latency {
        Some(l) => {
            let rows: Vec<Vec<f64>> = l.iter().map(|r| r.to_vec()).collect();
            d.set_item("latency", PyList::new(py, rows)?)?
        }
        None => d.set_item("latency", py.None())?,
    }
    d.set_item("spike", PyArray1::from_vec(py, t.spike))?;
    d.set_item("threshold", t.threshold)?;
    Ok(d)
}

/// Parse ISO 8601 text to seconds since the epoch (None if it is not).
#[pyfunction]
fn online_parse_time(text: &str) -> Option<f64> {
    online::parse_time_text(text)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOnlineLog>()?;
    m.add_function(wrap_pyfunction!(online_read, m)?)?;
    m.add_function(wrap_pyfunction!(online_from_columns, m)?)?;
    m.add_function(wrap_pyfunction!(online_from_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(online_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(online_session_parts, m)?)?;
    m.add_function(wrap_pyfunction!(online_combine, m)?)?;
    m.add_function(wrap_pyfunction!(online_evaluate_stream, m)?)?;
    m.add_function(wrap_pyfunction!(online_top_queries, m)?)?;
    m.add_function(wrap_pyfunction!(online_queries_per, m)?)?;
    m.add_function(wrap_pyfunction!(online_ctr_by_query, m)?)?;
    m.add_function(wrap_pyfunction!(online_parse_time, m)?)?;
    m.add("ONLINE_FIELDS", FIELDS.to_vec())?;
    Ok(())
}
