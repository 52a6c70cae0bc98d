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
//!
//! The runs' lists of the judged queries are gathered, normalized and looked up in the
//! qrels once ([`Judged`]); each setting then runs its kernel, ranks each query's
//! candidates (only as deep as the measure reads: the top 10 for nDCG@10) and computes
//! the measure from the judgments found once. The numbers are
//! those of fusing each setting into a run and evaluating it (tested to the bit).

use std::sync::atomic::{AtomicBool, Ordering};

use super::kernels::Setting;
use super::names::{Method, Norm, Params};
use super::norm::List;
use super::{Combiner, Work};
use crate::error::{Error, Result};
use crate::evaluate::{Evaluator, Options, Scratch};
use crate::ids::Ids;
use crate::measure::MeasureSet;
use crate::metrics::NOT_JUDGED;
use crate::progress::Progress;
use crate::qrels::{Qrels, QrelsQuery};
use crate::results::Results;
use crate::run::{rank_top_into, Run};

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
            let tuples = weight_tuples(&values, n_runs);
            if tuples.is_empty() {
                return Err(Error::Option(format!(
                    "a step of {} gives no {n_runs} weights summing to 1 (ranx's grid: \
                     the tuples of numpy.arange(0, 1 + step, step), rounded to the \
                     step's decimals, whose sum is exactly 1); try a step such as 0.1, \
                     0.05 or 0.25",
                    step.unwrap_or(0.1)
                )));
            }
            tuples
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
    super::check_runs(runs)?;
    crate::progress::announce(progress, settings.len());
    let judged = Judged::gather(&ev, runs, norm)?;
    let mut best: Option<Params> = None;
    let mut best_score = 0.0;
    let mut trials = Vec::with_capacity(settings.len());
    for params in settings {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let model = if method.needs_qrels() {
            Some(super::train(qrels, runs, method, norm, &params)?)
        } else {
            params.check(method, runs.len())?;
            None
        };
        let setting = super::setting(method, &params, model.as_ref());
        let res = judged.evaluate(&ev, &setting)?;
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

/// The runs' lists of every query of the qrels, gathered and normalized once, each
/// candidate with its place in the qrels: what every setting of the grid fuses and
/// ranks. A setting then costs its kernel, a ranking and the measure, with no id
/// hashed or copied and no run built (the same numbers as fusing and evaluating the
/// run: the queries outside the qrels, which cannot change a score, are not fused).
struct Judged {
    /// One per query of the qrels, in their order.
    queries: Vec<JudgedQuery>,
}

struct JudgedQuery {
    /// Per run: (candidate, normalized score), best first.
    lists: Vec<List>,
    /// The candidates' ids (the ranking's tie-break, and messages).
    ids: Ids,
    /// Per candidate: its place in the query's judgments ([`NOT_JUDGED`]: absent).
    qrels_pos: Vec<u32>,
}

/// A thread's work area for one setting.
#[derive(Default)]
struct TrialWork {
    combiner: Combiner,
    /// The candidates in ranking order (as deep as the measure reads).
    order: Vec<u32>,
    keyed: Vec<(u64, u32)>,
    scratch: Scratch,
}

impl Judged {
    fn gather(ev: &Evaluator, runs: &[&Run], norm: Option<Norm>) -> Result<Judged> {
        let qrels = ev.qrels().queries();
        let queries = crate::parallel::map_with(qrels, Work::default, |w, qq| {
            w.gather_normalized(runs, qq.id(), norm)?;
            Ok(JudgedQuery {
                qrels_pos: (w.cands.iter())
                    .map(|doc| qq.position(doc).map_or(NOT_JUDGED, |p| p as u32))
                    .collect(),
                lists: std::mem::take(&mut w.lists),
                ids: std::mem::take(&mut w.cands),
            })
        });
        Ok(Judged {
            queries: queries.into_iter().collect::<Result<_>>()?,
        })
    }

    /// The evaluation of the run `setting` fuses (as `Evaluator::evaluate` of it).
    fn evaluate(&self, ev: &Evaluator, setting: &Setting<'_>) -> Result<Results> {
        let qrels = ev.qrels().queries();
        let depth = ev.ranking_depth().unwrap_or(usize::MAX);
        let pairs: Vec<(&QrelsQuery, &JudgedQuery)> = qrels.iter().zip(&self.queries).collect();
        let rows = crate::parallel::with_threads(ev.options().n_threads, || {
            crate::parallel::map_with(&pairs, TrialWork::default, |w, &(qq, jq)| {
                let lists = jq.lists.iter().map(|l| l.as_slice());
                w.combiner.combine(setting, lists, jq.ids.len());
                let fused = &w.combiner.fused;
                if let Some(c) = fused.iter().position(|v| v.is_nan()) {
                    return Err(super::nan_fused(jq.ids.get(c), qq.id()));
                }
                rank_top_into(fused, &jq.ids, depth, &mut w.keyed, &mut w.order);
                let ranked = w.order.iter().map(|&c| {
                    let pos = jq.qrels_pos[c as usize];
                    (
                        (pos != NOT_JUDGED).then_some(pos as usize),
                        fused[c as usize],
                    )
                });
                ev.eval_positions(qq, ranked, &mut w.scratch)
                    .ok_or_else(|| {
                        Error::Option("optimize_fusion does not take credibility judgments".into())
                    })
            })
        });
        let rows = rows.into_iter().collect::<Result<Vec<_>>>()?;
        let queries: Vec<&QrelsQuery> = qrels.iter().collect();
        Ok(ev.finish(&queries, rows, setting.method.name().as_bytes().to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded runs over overlapping pools with tied scores, queries only some runs
    /// retrieve, one-document queries, a query the qrels lack and one the runs lack.
    fn data() -> (Qrels, Vec<Run>) {
        let mut rng = crate::testing::Lcg::new(7);
        let mut next = |m: u64| rng.below(m);
        let mut qrels = String::new();
        let mut runs = [String::new(), String::new(), String::new()];
        for q in 0..40 {
            let pool = if q % 7 == 3 { 1 } else { 3 + next(30) };
            if q != 5 {
                qrels += &format!("q{q} 0 d0 1\n");
                for d in 1..pool {
                    if next(3) > 0 {
                        let label = next(5) as i64 - 1; // -1 (pooled, not judged) to 3
                        qrels += &format!("q{q} 0 d{d} {label}\n");
                    }
                }
            }
            for (r, text) in runs.iter_mut().enumerate() {
                if q == 39 || (q % 5 == r as u64 + 1) {
                    continue; // q39 in no run; others missing from one run
                }
                for d in 0..pool {
                    if next(4) > 0 || d == 0 {
                        let score = next(8); // few values: ties
                        *text += &format!("q{q} Q0 d{d} 0 {score} r{r}\n");
                    }
                }
            }
        }
        let qrels = Qrels::from_bytes(qrels.as_bytes(), "qrels").unwrap();
        let runs = runs
            .iter()
            .map(|t| Run::from_bytes(t.as_bytes(), "run").unwrap())
            .collect();
        (qrels, runs)
    }

    /// Every setting's score equals the fused run's evaluation (to the bit), for
    /// methods plain and trained, with and without normalization, and measures reading
    /// unjudged documents, scores and their own judged_only.
    #[test]
    fn each_setting_scores_as_its_fused_run() {
        let (qrels, runs) = data();
        let cases: &[(Method, Option<Norm>, &str, usize)] = &[
            (Method::Wsum, Some(Norm::MinMax), "ndcg_cut.10", 3),
            (Method::Wmnz, Some(Norm::Zmuv), "map", 2),
            (Method::Rrf, None, "bpref", 3),
            (Method::Rbc, None, "P(judged_only=True)@5", 2),
            (Method::Mixed, Some(Norm::Sum), "recip_rank", 2),
            (Method::WBordaFuse, None, "AUROC", 2),
            (Method::WCondorcet, None, "P@R(0.5)", 2),
            (Method::Gmnz, Some(Norm::Max), "ERR@5", 2),
            (Method::ProbFuse, None, "ndcg", 2),
            (Method::SlideFuse, Some(Norm::MinMax), "infAP", 2),
        ];
        for &(method, norm, metric, n) in cases {
            let rs: Vec<&Run> = runs.iter().take(n).collect();
            let step = match method {
                Method::Rbc | Method::Gmnz => Some(0.2),
                _ => None,
            };
            let mut opt = optimize_fusion(&qrels, &rs, method, norm, metric, step).unwrap();
            if matches!(method, Method::ProbFuse | Method::SlideFuse) {
                opt.trials.truncate(12);
            }
            let options = Options {
                complete: true,
                ..Options::default()
            };
            let ev = Evaluator::new(
                qrels.clone(),
                MeasureSet::parse(&[metric]).unwrap(),
                options,
            )
            .unwrap();
            for t in &opt.trials {
                let fused = if method.needs_qrels() {
                    super::super::fuse_trained(&qrels, &rs, method, norm, &t.params)
                } else {
                    super::super::fuse(&rs, method, norm, &t.params)
                }
                .unwrap();
                let want = ev.evaluate(&fused).unwrap().summary(0);
                assert_eq!(
                    t.score.to_bits(),
                    want.to_bits(),
                    "{method} {norm:?} {metric} {:?}: {} vs {want}",
                    t.params,
                    t.score
                );
            }
        }
    }

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
        // no pair of 0, 0.3, 0.6, 0.9, 1.2 sums to 1: said so, not "no setting reached"
        let e = grid(Method::Wsum, 2, Some(0.3)).unwrap_err().to_string();
        assert!(
            e.contains("a step of 0.3 gives no 2 weights summing to 1"),
            "{e}"
        );
    }
}
