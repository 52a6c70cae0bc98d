//! Significance tests, corrections, effect sizes and the comparison of runs (thin
//! wrappers over `crate::compare` and `crate::correlation`). Arrays come in as numpy
//! arrays (copied once) or sequences; the work runs without the GIL.

use std::sync::atomic::AtomicBool;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyString};

use super::convert::{float_vec, int_arg};
use super::data::PyRun;
use super::errors;
use super::evaluate::PyEvaluator;
use crate::compare::{
    self, Alternative, CompareOptions, Correction, Format, Report, Test, TestResult,
};
use crate::correlation;

/// The outcome of a test: `statistic`, `pvalue` (two-sided unless asked otherwise), `method` (how the p-value was
/// had: "exact", "asymptotic", "Monte Carlo", ...), `df` (or None).
#[pyclass(frozen, name = "TestResult", module = "irmetrics.stats")]
pub struct PyTestResult {
    #[pyo3(get)]
    statistic: f64,
    #[pyo3(get)]
    pvalue: f64,
    #[pyo3(get)]
    method: String,
    #[pyo3(get)]
    df: Option<f64>,
    /// For a t-test: the mean difference, its standard error and the alternative, of
    /// which `confidence_interval` is made.
    t: Option<(f64, f64, Alternative)>,
}

#[pymethods]
impl PyTestResult {
    #[new]
    #[pyo3(signature = (statistic, pvalue, method, df = None))]
    fn new(statistic: f64, pvalue: f64, method: String, df: Option<f64>) -> Self {
        PyTestResult {
            statistic,
            pvalue,
            method,
            df,
            t: None,
        }
    }

    /// The t-based confidence interval `(low, high)` of the mean difference at
    /// `confidence_level`, as scipy's `TtestResult.confidence_interval`: one-sided for a
    /// one-sided test. Only a t-test's result has one.
    #[pyo3(signature = (confidence_level = 0.95))]
    fn confidence_interval(&self, py: Python<'_>, confidence_level: f64) -> PyResult<(f64, f64)> {
        let to_py = |e| errors::to_py(py, e);
        let Some((mean, se, alt)) = self.t else {
            return Err(to_py(crate::Error::Option(format!(
                "a confidence interval comes with a t-test's result, not with this one \
                 ({}); see irmetrics.stats.effect_size",
                self.method
            ))));
        };
        let df = self.df.unwrap_or(f64::NAN);
        compare::t_interval(mean, se, df, confidence_level, alt).map_err(to_py)
    }

    /// Pickled (for joblib, multiprocessing, copy) as its fields, a t-test's interval
    /// data included, rebuilt by `_test_result_from_pickle`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.t.map(|(mean, se, alt)| (mean, se, alt.name()));
        let args = (self.statistic, self.pvalue, self.method.clone(), self.df, t);
        let make = py
            .import("irmetrics._core")?
            .getattr("_test_result_from_pickle")?;
        Ok((make, args).into_pyobject(py)?.into_any())
    }

    /// Not a test class (for pytest, which collects classes named Test*).
    #[classattr]
    fn __test__() -> bool {
        false
    }

    /// The numbers as Python writes them (`1.0`, `nan`, `1e-07`; Rust's `1`, `NaN` and
    /// `0.0000001` before), the method as a Python string.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let num = |v: f64| -> PyResult<String> { Ok(PyFloat::new(py, v).repr()?.to_string()) };
        let df = match self.df {
            Some(d) => format!(", df={}", num(d)?),
            None => String::new(),
        };
        let method = PyString::new(py, &self.method).repr()?;
        Ok(format!(
            "TestResult(statistic={}, pvalue={}, method={method}{df})",
            num(self.statistic)?,
            num(self.pvalue)?
        ))
    }

    /// `(statistic, pvalue)`, as scipy's results unpack.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (self.statistic, self.pvalue)
            .into_pyobject(py)?
            .into_any()
            .try_iter()
            .map(|i| i.into_any())
    }
}

impl From<TestResult> for PyTestResult {
    fn from(r: TestResult) -> Self {
        PyTestResult {
            statistic: r.statistic,
            pvalue: r.pvalue,
            method: r.method.to_string(),
            df: r.df,
            t: None,
        }
    }
}

/// A `TestResult` from its pickle (`TestResult.__reduce__`).
#[pyfunction]
fn _test_result_from_pickle(
    py: Python<'_>,
    statistic: f64,
    pvalue: f64,
    method: String,
    df: Option<f64>,
    t: Option<(f64, f64, String)>,
) -> PyResult<PyTestResult> {
    let t = match t {
        Some((mean, se, alt)) => Some((mean, se, alternative(py, &alt)?)),
        None => None,
    };
    Ok(PyTestResult {
        statistic,
        pvalue,
        method,
        df,
        t,
    })
}

fn pair(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<(Vec<f64>, Vec<f64>)> {
    Ok((float_vec(x, "x")?, float_vec(y, "y")?))
}

fn resamples_and_seed(
    n_resamples: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
) -> PyResult<(usize, u64)> {
    Ok((
        int_arg(n_resamples, "n_resamples", 1, None)?,
        int_arg(seed, "seed", 0, None)?,
    ))
}

fn alternative(py: Python<'_>, name: &str) -> PyResult<Alternative> {
    Alternative::parse(name).map_err(|e| errors::to_py(py, e))
}

/// A paired test of x against y under `alternative`, run off the GIL (the cancel flag
/// passed on to the resampling tests).
fn paired<R: Send>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    alternative: &str,
    test: impl FnOnce(&[f64], &[f64], Alternative, &AtomicBool) -> crate::Result<R> + Send,
) -> PyResult<R> {
    let alt = self::alternative(py, alternative)?;
    let (x, y) = pair(x, y)?;
    super::heavy(py, move |cancel| test(&x, &y, alt, cancel))
}

/// Paired Student's t-test of x against y.
#[pyfunction]
#[pyo3(signature = (x, y, alternative = "two-sided"))]
fn ttest(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    alternative: &str,
) -> PyResult<PyTestResult> {
    paired(py, x, y, alternative, |x, y, alt, _| {
        let r = compare::ttest(x, y, alt)?;
        // the mean difference and its standard error, for confidence_interval()
        let d: Vec<f64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
        let (m, v) = (compare::paired::mean(&d), compare::paired::variance(&d));
        Ok(PyTestResult {
            t: Some((m, (v / d.len() as f64).sqrt(), alt)),
            ..r.into()
        })
    })
}

/// Wilcoxon's signed-rank test of x against y, with scipy's options.
#[pyfunction]
#[pyo3(signature = (x, y, alternative = "two-sided", *, zero_method = "wilcox", correction = false, method = "auto"))]
fn wilcoxon(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    alternative: &str,
    zero_method: &str,
    correction: bool,
    method: &str,
) -> PyResult<PyTestResult> {
    let to_py = |e| errors::to_py(py, e);
    let options = compare::WilcoxonOptions {
        zero_method: compare::ZeroMethod::parse(zero_method).map_err(to_py)?,
        correction,
        method: compare::WilcoxonMethod::parse(method).map_err(to_py)?,
    };
    paired(py, x, y, alternative, |x, y, alt, _| {
        compare::wilcoxon_with(x, y, alt, options).map(Into::into)
    })
}

/// The sign test of x against y.
#[pyfunction]
#[pyo3(signature = (x, y, alternative = "two-sided"))]
fn sign_test(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    alternative: &str,
) -> PyResult<PyTestResult> {
    paired(py, x, y, alternative, |x, y, alt, _| {
        compare::sign_test(x, y, alt).map(Into::into)
    })
}

/// The paired randomization (Fisher) test of x against y.
#[pyfunction]
#[pyo3(signature = (x, y, n_resamples, seed, alternative = "two-sided"))]
fn randomization_test(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    n_resamples: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    alternative: &str,
) -> PyResult<PyTestResult> {
    let (r, s) = resamples_and_seed(n_resamples, seed)?;
    paired(py, x, y, alternative, move |x, y, alt, c| {
        compare::randomization_test(x, y, r, s, alt, Some(c)).map(Into::into)
    })
}

/// The paired bootstrap test (shifted to the null) of x against y.
#[pyfunction]
#[pyo3(signature = (x, y, n_resamples, seed, alternative = "two-sided"))]
fn bootstrap_test(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    n_resamples: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    alternative: &str,
) -> PyResult<PyTestResult> {
    let (r, s) = resamples_and_seed(n_resamples, seed)?;
    paired(py, x, y, alternative, move |x, y, alt, c| {
        compare::bootstrap_test(x, y, r, s, alt, Some(c)).map(Into::into)
    })
}

/// Kendall's tau-b with its p-value (scipy's `kendalltau`).
#[pyfunction]
fn kendall_tau_test(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<PyTestResult> {
    let (x, y) = pair(x, y)?;
    let (tau, p, method) = super::heavy(py, move |_| correlation::kendall_tau_test(&x, &y))?;
    Ok(PyTestResult {
        statistic: tau,
        pvalue: p,
        method: method.to_string(),
        df: None,
        t: None,
    })
}

/// AP correlation tau_ap of the ranking by y against the reference ranking by x.
#[pyfunction]
fn tau_ap(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (x, y) = pair(x, y)?;
    super::heavy(py, move |_| correlation::tau_ap(&x, &y))
}

/// Corrected p-values, a float64 array as statsmodels' `multipletests` gives them (a
/// list of 10^5 floats took longer to build than the correction: 0.6-0.8x statsmodels'
/// speed there). Made without the GIL but on this thread: a millisecond for 10^5
/// p-values, less than the worker thread [`super::heavy`] would cost at small sizes.
#[pyfunction]
fn correct<'py>(
    py: Python<'py>,
    pvalues: &Bound<'py, PyAny>,
    method: &str,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let p = float_vec(pvalues, "pvalues")?;
    let c = Correction::parse(method).map_err(|e| errors::to_py(py, e))?;
    let adjusted = py
        .detach(|| c.apply(&p))
        .map_err(|e| errors::to_py(py, e))?;
    Ok(numpy::PyArray1::from_vec(py, adjusted))
}

/// Effect sizes of x against y: a dict.
#[pyfunction]
#[pyo3(signature = (x, y, confidence = 0.95, n_resamples = None, seed = None))]
fn effect_size<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    confidence: f64,
    n_resamples: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (x, y) = pair(x, y)?;
    let boot = match n_resamples.filter(|r| !r.is_none()) {
        None => None,
        Some(r) => {
            let s = match seed.filter(|s| !s.is_none()) {
                Some(s) => int_arg(s, "seed", 0, None)?,
                None => 42,
            };
            Some((int_arg(r, "n_resamples", 1, None)?, s))
        }
    };
    let e = super::heavy(py, move |_| compare::effect_size(&x, &y, confidence, boot))?;
    let d = PyDict::new(py);
    d.set_item("mean_diff", e.mean_diff)?;
    d.set_item("ci", e.ci)?;
    d.set_item("bootstrap_ci", e.bootstrap_ci)?;
    d.set_item("bca_ci", e.bca_ci)?;
    d.set_item("d_z", e.d_z)?;
    d.set_item("g_z", e.g_z)?;
    d.set_item("wins", e.wins)?;
    d.set_item("ties", e.ties)?;
    d.set_item("losses", e.losses)?;
    Ok(d)
}

fn groups_of(groups: &[Bound<'_, PyAny>]) -> PyResult<Vec<Vec<f64>>> {
    groups
        .iter()
        .enumerate()
        .map(|(i, g)| float_vec(g, &format!("sample {i}")))
        .collect()
}

/// Tukey's HSD of the samples: (mean differences, p-values), k x k row-major.
#[pyfunction]
fn tukey_hsd(py: Python<'_>, samples: Vec<Bound<'_, PyAny>>) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let g = groups_of(&samples)?;
    super::heavy(py, move |_| {
        let refs: Vec<&[f64]> = g.iter().map(|v| v.as_slice()).collect();
        compare::tukey_hsd(&refs).map(|t| (t.diffs, t.pvalues))
    })
}

/// Carterette's randomized Tukey HSD: k x k p-values, row-major.
#[pyfunction]
fn randomized_tukey_hsd(
    py: Python<'_>,
    samples: Vec<Bound<'_, PyAny>>,
    n_resamples: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
) -> PyResult<Vec<f64>> {
    let g = groups_of(&samples)?;
    let (r, s) = resamples_and_seed(n_resamples, seed)?;
    super::heavy(py, move |c| {
        let refs: Vec<&[f64]> = g.iter().map(|v| v.as_slice()).collect();
        compare::randomized_tukey_hsd(&refs, r, s, Some(c))
    })
}

/// The studentized range's upper tail P(Q > q) for k groups and df degrees of freedom.
#[pyfunction]
fn studentized_range_sf(q: f64, k: &Bound<'_, PyAny>, df: f64) -> PyResult<f64> {
    let k = int_arg(k, "k", 0usize, Some(compare::TUKEY_MAX_GROUPS))?;
    Ok(compare::ptukey_sf(q, k, df))
}

/// Two-way ANOVA without replication of the rows (systems) x columns (topics).
#[pyfunction]
fn anova2<'py>(py: Python<'py>, rows: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    let g = groups_of(&rows)?;
    let a = super::heavy(py, move |_| {
        let refs: Vec<&[f64]> = g.iter().map(|v| v.as_slice()).collect();
        compare::anova2(&refs)
    })?;
    let d = PyDict::new(py);
    d.set_item("ss", a.ss.to_vec())?;
    d.set_item("df", a.df.to_vec())?;
    d.set_item("f", a.f.to_vec())?;
    d.set_item("pvalue", a.pvalue.to_vec())?;
    Ok(d)
}

/// A comparison of systems (see `irmetrics.compare`).
#[pyclass(frozen, name = "_Report", module = "irmetrics")]
pub struct PyReport {
    inner: Report,
}

#[pymethods]
impl PyReport {
    /// The report rendered as `table`, `markdown`, `latex`, `csv` or `json`, the means
    /// with `digits` decimal places, as percentages with `percent`.
    #[pyo3(signature = (format, digits = None, percent = false))]
    fn render(
        &self,
        py: Python<'_>,
        format: &str,
        digits: Option<&Bound<'_, PyAny>>,
        percent: bool,
    ) -> PyResult<String> {
        let to_py = |e| errors::to_py(py, e);
        let f = Format::parse(format).map_err(to_py)?;
        let digits = match digits {
            Some(d) => int_arg(d, "digits", 0usize, None)?,
            None => compare::Style::default().digits,
        };
        let style = compare::Style::new(digits, percent).map_err(to_py)?;
        Ok(self.inner.render_styled(f, style))
    }

    /// Everything as JSON text (the per-query values too with `per_query=True`).
    #[pyo3(signature = (per_query = false))]
    fn to_json(&self, per_query: bool) -> String {
        self.inner.to_json(per_query).to_string()
    }

    /// Pickled as the per-query values and the options it was computed from
    /// (`compare_values_report` makes the same report again: the tests are seeded).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = &self.inner;
        let measures: Vec<(String, Vec<Vec<f64>>)> = r
            .measures
            .iter()
            .map(|m| (m.name.clone(), m.values.clone()))
            .collect();
        let args = (
            r.systems.clone(),
            r.query_ids.clone(),
            measures,
            options_dict(py, &r.options)?,
        );
        let make = py
            .import("irmetrics._core")?
            .getattr("compare_values_report")?;
        Ok((make, args).into_pyobject(py)?.into_any())
    }
}

/// A comparison's options as the keywords of `irmetrics.compare` (`test`, `correction`,
/// `alpha`, `baseline`, `alternative`, `n_resamples`, `seed`), as [`options`] reads them.
pub(super) fn options_dict<'py>(
    py: Python<'py>,
    o: &CompareOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("test", o.test.name())?;
    d.set_item("correction", o.correction.name())?;
    d.set_item("alpha", o.alpha)?;
    d.set_item("baseline", &o.baseline)?;
    d.set_item("alternative", o.alternative.name())?;
    d.set_item("n_resamples", o.n_resamples)?;
    d.set_item("seed", o.seed)?;
    Ok(d)
}

/// The comparison's options from `how`, a dict of `irmetrics.compare`'s keywords (the
/// ones left out take their defaults), checked as `compare` checks them.
fn options(py: Python<'_>, how: &Bound<'_, PyDict>) -> PyResult<CompareOptions> {
    use crate::error::Error;
    let to_py = |e| errors::to_py(py, e);
    // a value of the wrong type, named (pyo3's own error names no option)
    let typed = |key: &str, value: &Bound<'_, PyAny>, what: &str| {
        to_py(Error::Option(format!(
            "{key} must be {what}, got {}",
            value
                .get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        )))
    };
    let mut o = CompareOptions::default();
    for (key, value) in how.iter() {
        let key: String = key.extract()?;
        let text = || {
            value
                .extract::<String>()
                .map_err(|_| typed(&key, &value, "a str"))
        };
        match key.as_str() {
            "test" => o.test = Test::parse(&text()?).map_err(to_py)?,
            "correction" => o.correction = Correction::parse(&text()?).map_err(to_py)?,
            "alternative" => o.alternative = Alternative::parse(&text()?).map_err(to_py)?,
            "baseline" if value.is_none() => o.baseline = None,
            "baseline" => o.baseline = Some(text()?),
            "alpha" => {
                o.alpha = value
                    .extract()
                    .map_err(|_| typed(&key, &value, "a number"))?
            }
            "n_resamples" => o.n_resamples = int_arg(&value, "n_resamples", 1, None)?,
            "seed" => o.seed = int_arg(&value, "seed", 0, None)?,
            other => {
                return Err(to_py(Error::Option(format!(
                    "unknown comparison option '{other}'"
                ))))
            }
        }
    }
    o.check().map_err(to_py)?;
    Ok(o)
}

/// Check a comparison's options (a dict of `compare`'s keywords) before any work (the
/// Spark glue, whose evaluation runs as jobs first): the errors `compare` would give.
#[pyfunction]
fn check_compare_options(py: Python<'_>, how: &Bound<'_, PyDict>) -> PyResult<()> {
    options(py, how).map(|_| ())
}

/// Evaluate the runs `[(name, Run)]` with the evaluator and compare them with the
/// options `how` (a dict of `compare`'s keywords). `progress` as in
/// `Evaluator.evaluate`: the evaluated queries of every run, then the resamples of a
/// Monte Carlo randomization test (else one unit per measure).
#[pyfunction]
#[pyo3(signature = (evaluator, runs, how, progress = None))]
fn compare_runs_report(
    py: Python<'_>,
    evaluator: &PyEvaluator,
    runs: Vec<(String, PyRef<'_, PyRun>)>,
    how: &Bound<'_, PyDict>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyReport> {
    let how = options(py, how)?;
    let ev = evaluator.inner.clone();
    let names: Vec<String> = runs.iter().map(|(n, _)| n.clone()).collect();
    let runs: Vec<_> = runs.iter().map(|(_, r)| r.inner.clone()).collect();
    let inner = super::heavy_progress(py, progress, move |cancel, p| {
        let refs: Vec<&crate::Run> = runs.iter().map(|r| &**r).collect();
        let results = compare::report::evaluate_runs(&ev, &names, &refs, Some(cancel), p)?;
        compare::report::from_results(&names, &results, &how, Some(cancel), p)
    })?;
    Ok(PyReport { inner })
}

/// Compare systems on per-query values: `measures` holds (measure, one array per
/// system), `how` the options (a dict of `compare`'s keywords).
#[pyfunction]
fn compare_values_report(
    py: Python<'_>,
    names: Vec<String>,
    query_ids: Vec<String>,
    measures: Vec<(String, Vec<Bound<'_, PyAny>>)>,
    how: &Bound<'_, PyDict>,
) -> PyResult<PyReport> {
    let how = options(py, how)?;
    // names first: a pandas frame's twin columns are a frame, not values
    compare::report::distinct(&names).map_err(|e| errors::to_py(py, e))?;
    let mut values = Vec::with_capacity(measures.len());
    for (name, rows) in measures {
        let rows = rows
            .iter()
            .map(|r| float_vec(r, &name))
            .collect::<PyResult<Vec<_>>>()?;
        values.push((name, rows));
    }
    let inner = super::heavy(py, move |cancel| {
        compare::compare_values(&names, query_ids, values, &how, Some(cancel))
    })?;
    Ok(PyReport { inner })
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTestResult>()?;
    m.add_class::<PyReport>()?;
    m.add_function(wrap_pyfunction!(_test_result_from_pickle, m)?)?;
    m.add_function(wrap_pyfunction!(ttest, m)?)?;
    m.add_function(wrap_pyfunction!(wilcoxon, m)?)?;
    m.add_function(wrap_pyfunction!(sign_test, m)?)?;
    m.add_function(wrap_pyfunction!(randomization_test, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_test, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_tau_test, m)?)?;
    m.add_function(wrap_pyfunction!(tau_ap, m)?)?;
    m.add_function(wrap_pyfunction!(correct, m)?)?;
    m.add_function(wrap_pyfunction!(effect_size, m)?)?;
    m.add_function(wrap_pyfunction!(compare_runs_report, m)?)?;
    m.add_function(wrap_pyfunction!(tukey_hsd, m)?)?;
    m.add_function(wrap_pyfunction!(randomized_tukey_hsd, m)?)?;
    m.add_function(wrap_pyfunction!(studentized_range_sf, m)?)?;
    m.add_function(wrap_pyfunction!(anova2, m)?)?;
    m.add_function(wrap_pyfunction!(compare_values_report, m)?)?;
    m.add_function(wrap_pyfunction!(check_compare_options, m)?)?;
    Ok(())
}
