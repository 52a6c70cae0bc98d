//! `normalize` and `fuse`: thin wrappers over `crate::fusion` (the runs are converted
//! once, the work runs without the GIL).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use super::convert::runid_arg;
use super::data::{run_of, PyRun};
use super::{errors, heavy};
use crate::fusion::{self, FusionModel, Method, Norm, Params};
use crate::run::Run;

/// One parameter value: a real number (not a bool).
fn number(v: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    let py = v.py();
    let bad = || {
        errors::input_err(
            py,
            format!(
                "{what} must be a number, got {}",
                v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ),
        )
    };
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() {
        return Err(bad());
    }
    v.extract::<f64>().map_err(|_| bad())
}

/// A sequence of numbers (a list, a numpy array; not a str): `seq` says what it must
/// be, `each` names an item in the error of one that is no number.
fn numbers(v: &Bound<'_, PyAny>, seq: &str, each: &str) -> PyResult<Vec<f64>> {
    items(v, seq)?.iter().map(|x| number(x, each)).collect()
}

/// The items of a sequence (not a str); `seq` says what it must be.
fn items<'py>(v: &Bound<'py, PyAny>, seq: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let bad = || errors::input_err(v.py(), seq.to_string());
    if v.is_instance_of::<PyString>() {
        return Err(bad());
    }
    v.try_iter().map_err(|_| bad())?.collect()
}

/// ranx's names of a trained method's tables in `params` (what its `*_train` returns).
const TABLES: [&str; 3] = ["probs", "log_odds", "map_scores"];

/// ranx's key of the tables of `method` (`probs`, bayesfuse's `log_odds`, mapfuse's
/// `map_scores`).
fn tables_key(method: Method) -> &'static str {
    match method {
        Method::BayesFuse => "log_odds",
        Method::MapFuse => "map_scores",
        _ => "probs",
    }
}

/// Trained tables as ranx gives them (`probs` and `log_odds` a sequence of arrays,
/// `map_scores` of numbers): a table per run.
fn tables_of(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<f64>>> {
    let seq = format!("{key} must be a sequence with one entry per run");
    if key == "map_scores" {
        let m = numbers(v, &seq, "each of map_scores")?;
        return Ok(m.into_iter().map(|x| vec![x]).collect());
    }
    (items(v, &seq)?.iter().enumerate())
        .map(|(r, t)| {
            let what = format!("{key}' table of run {}", r + 1);
            numbers(
                t,
                &format!("{what} must be a sequence of numbers"),
                &format!("each value of {what}"),
            )
        })
        .collect()
}

/// The trained tables of `params` ([`params_of`]): their key and a table per run.
type Tables = Option<(String, Vec<Vec<f64>>)>;

/// ranx's `params` dict: scalars by name, `weights` a sequence of numbers, and a
/// trained method's tables (`probs`, `log_odds`, `map_scores`: [`Tables`]).
fn params_of(params: Option<&Bound<'_, PyAny>>) -> PyResult<(Params, Tables)> {
    let (mut p, mut tables) = (Params::new(), None);
    let Some(params) = params.filter(|p| !p.is_none()) else {
        return Ok((p, tables));
    };
    let py = params.py();
    let d = params
        .cast::<PyDict>()
        .map_err(|_| errors::input_err(py, "params must be a dict {name: value}".to_string()))?;
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| errors::input_err(py, "params keys must be str".to_string()))?;
        if TABLES.contains(&name.as_str()) {
            if let Some((other, _)) = &tables {
                return Err(errors::input_err(
                    py,
                    format!("params hold both '{other}' and '{name}'; a method has one of them"),
                ));
            }
            tables = Some((name.clone(), tables_of(&name, &v)?));
        } else if name == "weights" {
            let seq = "weights must be a sequence of numbers, one per run";
            p = p.with_weights(numbers(&v, seq, "each weight")?);
        } else {
            let x = number(&v, &format!("parameter '{name}'"))?;
            p = p.set(&name, x);
        }
    }
    Ok((p, tables))
}

fn method_of(py: Python<'_>, s: &str) -> PyResult<Method> {
    Method::parse(s).map_err(|e| errors::to_py(py, e))
}

fn norm_of(py: Python<'_>, s: Option<&str>) -> PyResult<Option<Norm>> {
    s.map(Norm::parse)
        .transpose()
        .map_err(|e| errors::to_py(py, e))
}

/// The runs of `fuse`, `train_fusion` and `optimize_fusion`: a list of runs, or a dict
/// `{name: run}` (as `compare` takes them) whose values are taken in the dict's order
/// (the order of `weights`).
fn runs_of(runs: &Bound<'_, PyAny>) -> PyResult<Vec<Arc<Run>>> {
    let py = runs.py();
    let wrong = || {
        errors::input_err(
            py,
            "runs must be a list of runs (Run objects, dicts, DataFrames or file paths) or a \
             dict {name: run}"
                .into(),
        )
    };
    if runs.is_instance_of::<PyString>() {
        return Err(wrong());
    }
    if let Ok(d) = runs.cast::<PyDict>() {
        let mut out = Vec::with_capacity(d.len());
        for (name, run) in d.iter() {
            let Ok(name) = name.cast::<PyString>() else {
                return Err(errors::input_err(
                    py,
                    format!(
                        "runs as a dict must be {{name: run}} with str names, got the key {}",
                        name.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                    ),
                ));
            };
            if looks_like_results(&run) {
                return Err(errors::input_err(
                    py,
                    format!(
                        "runs['{name}'] is a dict of scores, not a run: runs looks like one \
                         run {{query: {{doc: score}}}}; fusion takes several, as a list or a \
                         dict {{name: run}}"
                    ),
                ));
            }
            out.push(run_of(&run)?);
        }
        return Ok(out);
    }
    let it = runs.try_iter().map_err(|_| wrong())?;
    it.map(|r| run_of(&r?)).collect()
}

/// Whether `v` is a dict whose first value is a number: a query's `{doc: score}`, as
/// the values of one run given where runs are expected.
fn looks_like_results(v: &Bound<'_, PyAny>) -> bool {
    v.cast::<PyDict>().is_ok_and(|d| {
        d.values().iter().next().is_some_and(|x| {
            x.is_instance_of::<pyo3::types::PyFloat>() || x.is_instance_of::<pyo3::types::PyInt>()
        })
    })
}

fn with_name(mut run: Run, name: Vec<u8>) -> crate::error::Result<Run> {
    if !name.is_empty() {
        run.set_runid(&name)?;
    }
    Ok(run)
}

/// Normalize every query of a run (ranx's normalizations; see the README).
#[pyfunction]
#[pyo3(signature = (run, method = "min-max", *, name = None))]
fn normalize(
    run: &Bound<'_, PyAny>,
    method: &str,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyRun> {
    let py = run.py();
    let name = runid_arg(name)?;
    let norm = Norm::parse(method).map_err(|e| errors::to_py(py, e))?;
    let run = run_of(run)?;
    let out = heavy(py, move |_| with_name(fusion::normalize(&run, norm)?, name))?;
    Ok(PyRun {
        inner: Arc::new(out),
    })
}

/// Fuse runs with one of ranx's methods (after a normalization, if given).
#[pyfunction]
#[pyo3(signature = (runs, method = "rrf", norm = None, params = None, *, qrels = None, name = None))]
fn fuse(
    runs: &Bound<'_, PyAny>,
    method: &str,
    norm: Option<&str>,
    params: Option<&Bound<'_, PyAny>>,
    qrels: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyRun> {
    let py = runs.py();
    let method = method_of(py, method)?;
    let norm = norm_of(py, norm)?;
    let (params, tables) = params_of(params)?;
    let name = runid_arg(name)?;
    let qrels = match qrels.filter(|q| !q.is_none()) {
        Some(q) => Some(super::data::qrels_of(q)?),
        None => None,
    };
    let model = match tables {
        Some(_) if qrels.is_some() => {
            return Err(errors::input_err(
                py,
                "give qrels (to train on) or trained tables in params, not both".into(),
            ))
        }
        Some((key, tables)) => Some(model_of(py, method, &params, &key, tables)?),
        None => None,
    };
    let runs = runs_of(runs)?;
    let out = heavy(py, move |_| {
        let refs: Vec<&Run> = runs.iter().map(|r| r.as_ref()).collect();
        let fused = match (&qrels, &model) {
            (_, Some(m)) => fusion::fuse_with_model(&refs, norm, m)?,
            (Some(q), None) => fusion::fuse_trained(q, &refs, method, norm, &params)?,
            (None, None) => fusion::fuse(&refs, method, norm, &params)?,
        };
        with_name(fused, name)
    })?;
    Ok(PyRun {
        inner: Arc::new(out),
    })
}

/// The model of trained tables given to `fuse` (ranx's `probfuse(runs, probs)`, ...):
/// under the method's own key, beside it only slidefuse's window `w`
/// ([`FusionModel::from_params`]).
fn model_of(
    py: Python<'_>,
    method: Method,
    params: &Params,
    key: &str,
    tables: Vec<Vec<f64>>,
) -> PyResult<FusionModel> {
    let want = tables_key(method);
    if !method.needs_qrels() || key != want {
        let takes = if method.needs_qrels() {
            format!("takes its tables as '{want}'")
        } else {
            "is not trained on qrels".to_string()
        };
        return Err(errors::input_err(
            py,
            format!("params hold '{key}', but fusion method '{method}' {takes}"),
        ));
    }
    FusionModel::from_params(method, tables, params).map_err(|e| errors::to_py(py, e))
}

/// Train a fusion method on qrels (ranx's `*_train`): its tables in ranx's shape,
/// `{"probs": [array, ...]}` (probfuse, segfuse, posfuse; slidefuse with its `w`),
/// `{"log_odds": [...]}` (bayesfuse), `{"map_scores": [float, ...]}` (mapfuse), which
/// `fuse(runs, method, norm, params=tables)` takes to fuse without the qrels.
#[pyfunction]
#[pyo3(signature = (qrels, runs, method, norm = None, params = None))]
fn train_fusion<'py>(
    py: Python<'py>,
    qrels: &Bound<'py, PyAny>,
    runs: &Bound<'py, PyAny>,
    method: &str,
    norm: Option<&str>,
    params: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let method = method_of(py, method)?;
    let norm = norm_of(py, norm)?;
    let (params, tables) = params_of(params)?;
    if let Some((key, _)) = tables {
        let m = format!("params hold '{key}', trained tables: train_fusion makes them");
        return Err(errors::input_err(py, m));
    }
    let qrels = super::data::qrels_of(qrels)?;
    let runs = runs_of(runs)?;
    let model = heavy(py, move |_| {
        let refs: Vec<&Run> = runs.iter().map(|r| r.as_ref()).collect();
        fusion::train_fusion(&qrels, &refs, method, norm, &params)
    })?;
    let d = PyDict::new(py);
    let tables = model.tables();
    if method == Method::MapFuse {
        let m: Vec<f64> = tables.iter().map(|t| t[0]).collect();
        d.set_item("map_scores", m)?;
    } else {
        let arrays = pyo3::types::PyList::empty(py);
        for t in tables {
            arrays.append(numpy::PyArray1::from_vec(py, t))?;
        }
        d.set_item(tables_key(method), arrays)?;
    }
    if let Some(w) = model.window() {
        d.set_item("w", w)?;
    }
    Ok(d)
}

/// A `Params` as ranx's dict (`k`, `n_segments` and `w` as ints, as ranx's grids give them).
fn params_dict<'py>(py: Python<'py>, p: &Params) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, v) in p.values() {
        if matches!(name.as_str(), "k" | "n_segments" | "w") && v.fract() == 0.0 && v.abs() < 1e15 {
            d.set_item(name, *v as i64)?;
        } else {
            d.set_item(name, *v)?;
        }
    }
    if let Some(w) = &p.weights {
        d.set_item("weights", w.clone())?;
    }
    Ok(d)
}

/// ranx's `optimize_fusion`: the grid search of a method's parameters; the best
/// parameters, and with `return_optimization_report` also every setting tried with its
/// score.
#[pyfunction]
/// `progress` as in `Evaluator.evaluate`, counting the settings tried.
#[pyo3(signature = (qrels, runs, method = "wsum", norm = Some("min-max"), metric = None, *, step = None, return_optimization_report = false, progress = None))]
#[pyo3(
    text_signature = "(qrels, runs, method='wsum', norm='min-max', metric='ndcg', *, step=None, return_optimization_report=False, progress=None)"
)]
#[allow(clippy::too_many_arguments)]
fn optimize_fusion<'py>(
    py: Python<'py>,
    qrels: &Bound<'py, PyAny>,
    runs: &Bound<'py, PyAny>,
    method: &str,
    norm: Option<&str>,
    metric: Option<&Bound<'py, PyAny>>,
    step: Option<f64>,
    return_optimization_report: bool,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let method = method_of(py, method)?;
    let norm = norm_of(py, norm)?;
    // a name or an ir_measures measure; nDCG over the whole ranking by default
    let metric = metric.map_or(Ok("ndcg".into()), |m| {
        super::convert::measure_name(m, "metric")
    })?;
    let qrels = super::data::qrels_of(qrels)?;
    let runs = runs_of(runs)?;
    let opt = super::heavy_progress(py, progress, move |cancel, p| {
        let refs: Vec<&Run> = runs.iter().map(|r| r.as_ref()).collect();
        if refs.len() < 2 {
            return Err(crate::error::Error::Input(format!(
                "fusion needs at least two runs, got {}",
                refs.len()
            )));
        }
        fusion::optimize_fusion_with(&qrels, &refs, method, norm, &metric, step, Some(cancel), p)
    })?;
    let best = params_dict(py, &opt.best)?;
    if !return_optimization_report {
        return Ok(best.into_any());
    }
    let table = pyo3::types::PyList::empty(py);
    for t in &opt.trials {
        table.append((params_dict(py, &t.params)?, t.score))?;
    }
    Ok((best, table).into_pyobject(py)?.into_any())
}

/// The fusion methods and normalizations: `(methods, norms)`, ranx's names.
#[pyfunction]
fn fusion_methods() -> (Vec<&'static str>, Vec<&'static str>) {
    (
        Method::all().map(|m| m.name()).collect(),
        Norm::ALL.iter().map(|n| n.name()).collect(),
    )
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(fuse, m)?)?;
    m.add_function(wrap_pyfunction!(train_fusion, m)?)?;
    m.add_function(wrap_pyfunction!(fusion_methods, m)?)?;
    m.add_function(wrap_pyfunction!(optimize_fusion, m)?)?;
    Ok(())
}
