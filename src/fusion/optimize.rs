//! ranx's `optimize_fusion`: a grid search over a method's parameters, every setting
//! fused and evaluated by the engine (no Python objects), the best kept with ranx's
//! tie-break (a later setting at least as good replaces the best, starting from 0).
//!
//! Grids, as ranx builds them: `k` of RRF 10, 20, ..., 100; `phi` (RBC), `gamma`
//! (GMNZ) and `sigma` (logN-ISR) `numpy.arange(0.01, 1.0 + step, step)` rounded to the
//! step's decimals (step 0.01); weights (wsum, wmnz, mixed, w_bordafuse, w_condorcet)
//! every tuple of `numpy.arange(0, 1 + step, step)` values (step 0.1), one per run,
//! whose sum, added left to right in floating point, is exactly 1.0; `n_segments`
//! (probfuse) and `w` (slidefuse) 1 to 100, trained on the same qrels.

use std::sync::atomic::{AtomicBool, Ordering};

use super::names::{Method, Norm, Params};
use crate::error::{Error, Result};
use crate::evaluate::{Evaluator, Options};
use crate::measure::MeasureSet;
use crate::progress::Progress;
use crate::qrels::Qrels;
use crate::run::Run;

/// One setting tried and the mean of the metric it reached.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The parameters.
    pub params: Params,
    /// The metric's mean over the qrels' queries.
    pub score: f64,
}

/// The outcome of a grid search.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimization {
    /// The best parameters (ranx's tie-break: the last of equally good settings).
    pub best: Params,
    /// Its score.
    pub score: f64,
    /// Every setting tried, in ranx's order.
    pub trials: Vec<Trial>,
}

/// The settings ranx tries for `method` over `n_runs` runs; `step` replaces ranx's
/// default step (10 for `k`, 0.01 for `phi` / `gamma` / `sigma`, 0.1 for weights).
pub fn grid(method: Method, n_runs: usize, step: Option<f64>) -> Result<Vec<Params>> {
    use Method::*;
    if let Some(s) = step {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::Option(format!(
                "step must be a positive number, got {s}"
            )));
        }
    }
    let scalar = |name: &str, values: Vec<f64>| -> Vec<Params> {
        values
            .into_iter()
            .map(|v| Params::new().set(name, v))
            .collect()
    };
    Ok(match method {
        Rrf => {
            let s = step.unwrap_or(10.0);
            if s.fract() != 0.0 {
                return Err(Error::Option(format!(
                    "the step of RRF's k must be a whole number, got {s}"
                )));
            }
            let mut ks = Vec::new();
            let mut k = 10.0;
            while k <= 100.0 {
                ks.push(k);
                k += s;
            }
            scalar("k", ks)
        }
        ProbFuse => scalar("n_segments", (1..=100).map(f64::from).collect()),
        SlideFuse => scalar("w", (1..=100).map(f64::from).collect()),
        Rbc => scalar("phi", arange_rounded(0.01, 1.0, step.unwrap_or(0.01))),
        Gmnz => scalar("gamma", arange_rounded(0.01, 1.0, step.unwrap_or(0.01))),
        LognIsr => scalar("sigma", arange_rounded(0.01, 1.0, step.unwrap_or(0.01))),
        Wsum | Wmnz | Mixed | WBordaFuse | WCondorcet => {
            let values = arange_rounded(0.0, 1.0, step.unwrap_or(0.1));
            weight_tuples(&values, n_runs)
                .into_iter()
                .map(|w| Params::new().with_weights(w))
                .collect()
        }
        _ => {
            return Err(Error::Option(format!(
                "fusion method '{method}' has no parameter to optimize (ranx optimizes \
                 gmnz, logn_isr, mixed, probfuse, rbc, rrf, slidefuse, w_bordafuse, \
                 w_condorcet, wmnz, wsum)"
            )))
        }
    })
}

/// `[round(x, d) for x in numpy.arange(start, stop + step, step)]` with `d` the
/// decimals of `step`: numpy's length `ceil((stop' - start) / step)` and its values
/// `start + i * ((start + step) - start)`.
fn arange_rounded(start: f64, stop: f64, step: f64) -> Vec<f64> {
    let end = stop + step;
    let n = ((end - start) / step).ceil();
    if n.is_nan() || n <= 0.0 || n > 1e7 {
        return Vec::new();
    }
    let delta = (start + step) - start;
    let digits = format!("{step}")
        .split_once('.')
        .map_or(0, |(_, frac)| frac.len());
    (0..n as usize)
        .map(|i| match i {
            0 => start,
            1 => start + step,
            _ => start + i as f64 * delta,
        })
        .map(|x| format!("{x:.digits$}").parse().unwrap_or(x))
        .collect()
}

/// `[w for w in itertools.product(values, repeat=n) if sum(w) == 1.0]`.
fn weight_tuples(values: &[f64], n: usize) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    if values.is_empty() || n == 0 {
        return out;
    }
    let mut idx = vec![0usize; n];
    loop {
        let w: Vec<f64> = idx.iter().map(|&i| values[i]).collect();
        if w.iter().fold(0.0, |a, x| a + x) == 1.0 {
            out.push(w);
        }
        // next tuple, last position fastest
        let mut p = n;
        loop {
            if p == 0 {
                return out;
            }
            p -= 1;
            idx[p] += 1;
            if idx[p] < values.len() {
                break;
            }
            idx[p] = 0;
        }
    }
}

/// Grid-search `method`'s parameters for `runs` (normalized with `norm` first), scoring
/// each fused run by the mean of `metric` over the qrels' queries (a query the fused
/// run lacks scores 0). `metric` must name one measure (`ndcg@10`, `map`, ...).
pub fn optimize_fusion(
    qrels: &Qrels,
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    metric: &str,
    step: Option<f64>,
) -> Result<Optimization> {
    optimize_fusion_with(qrels, runs, method, norm, metric, step, None, None)
}

/// [`optimize_fusion`], stopping with [`Error::Interrupted`] soon after `cancel` is set
/// (between settings) and counting each setting tried in `progress`.
#[allow(clippy::too_many_arguments)]
pub fn optimize_fusion_with(
    qrels: &Qrels,
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    metric: &str,
    step: Option<f64>,
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<Optimization> {
    let measures = MeasureSet::parse(&[metric])?;
    let options = Options {
        complete: true,
        ..Options::default()
    };
    let ev = Evaluator::new(qrels.clone(), measures, options)?;
    let settings = grid(method, runs.len(), step)?;
    let mut best: Option<Params> = None;
    let mut best_score = 0.0;
    let mut trials = Vec::with_capacity(settings.len());
    crate::progress::announce(progress, settings.len());
    for params in settings {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let fused = if method.needs_qrels() {
            super::fuse_trained(qrels, runs, method, norm, &params)?
        } else {
            super::fuse(runs, method, norm, &params)?
        };
        let res = ev.evaluate_cancellable(&fused, cancel)?;
        if res.columns().len() != 1 {
            return Err(Error::Measure(format!(
                "optimize_fusion needs one measure with one value, and '{metric}' gives {}",
                res.columns().len()
            )));
        }
        let score = res.summary(0);
        if score >= best_score {
            best_score = score;
            best = Some(params.clone());
        }
        trials.push(Trial { params, score });
        crate::progress::advance(progress, 1);
    }
    let Some(best) = best else {
        return Err(Error::Input(format!(
            "no setting of '{method}' reached a {metric} of 0 or more"
        )));
    };
    Ok(Optimization {
        best,
        score: best_score,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_ranx_grids() {
        let g = arange_rounded(0.01, 1.0, 0.01);
        assert_eq!(g.len(), 100);
        assert_eq!((g[0], g[1], g[99]), (0.01, 0.02, 1.0));
        let w = arange_rounded(0.0, 1.0, 0.1);
        assert_eq!(w.len(), 11);
        assert_eq!(weight_tuples(&w, 2).len(), 11);
        assert_eq!(weight_tuples(&w, 3).len(), 62);
        assert_eq!(weight_tuples(&w, 5).len(), 860);
        assert_eq!(grid(Method::Rrf, 2, None).unwrap().len(), 10);
        assert!(grid(Method::Sum, 2, None).is_err());
    }
}
