//! The methods trained on qrels (ranx's `*_train` functions, then the fusion): what is
//! learnt from each run's hit lists (1.0 where the document at a rank is relevant,
//! label >= 1), and the score a run gives the document at a rank. Training covers the
//! qrels' queries (a run without one has an empty hit list there, as ranx's with an
//! empty result dict); fusion covers every query of the runs, so a model trained on
//! some queries' judgments fuses the others.
//!
//! | method | learnt per run | score of the document at 0-based rank `i` of `n` |
//! |---|---|---|
//! | probfuse | `n_segments` segment probabilities | `p[k] / (k + 1)`, `k = i / ceil(n / n_segments)` |
//! | segfuse | probabilities of segments 5, 10, 20, ... long | `p[k] * (score + 1)` (0 from rank 5115) |
//! | posfuse | the precision at each rank | `p[i]` (0 past the longest list) |
//! | slidefuse | as posfuse | the mean of `p` over `i - w ..= i + w` within `0..n` |
//! | bayesfuse | log-odds of the precision over ranks 0-5, 5-10, ..., 500-1000 | `odds[i]`; missing: `log(0.001 / 0.999)` |
//! | mapfuse | the run's MAP | `map / (i + 1)` |
//!
//! bayesfuse gives a document ranked past 1000 the missing score (ranx reads past the
//! end of its array there).

use super::names::{Method, Norm, Params};
use super::Work;
use crate::error::{Error, Result};
use crate::qrels::Qrels;
use crate::run::Run;

/// What a trained method learnt, per run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Model {
    Prob(Vec<Vec<f64>>),
    Seg(Vec<Vec<f64>>),
    Pos(Vec<Vec<f64>>),
    Slide(Vec<Vec<f64>>, usize),
    Bayes(Vec<Vec<f64>>),
    Map(Vec<f64>),
}

/// What a method trained on qrels learnt, per run: ranx's `*_train` output (the `probs`
/// of probfuse, segfuse, posfuse and slidefuse, bayesfuse's `log_odds`, mapfuse's
/// `map_scores`). Made by [`train_fusion`](super::train_fusion) on some runs' judged
/// queries, or from such tables ([`FusionModel::from_tables`]), it fuses those runs'
/// queries without the qrels ([`fuse_with_model`](super::fuse_with_model)).
#[derive(Clone, Debug, PartialEq)]
pub struct FusionModel {
    pub(crate) method: Method,
    pub(crate) model: Model,
}

impl FusionModel {
    /// The method it was trained for.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The number of runs it holds a table for (the runs it fuses, in order).
    pub fn n_runs(&self) -> usize {
        self.tables().len()
    }

    /// Per run, what was learnt: probfuse's probability of each of its `n_segments`
    /// segments, segfuse's of its 10 segments (5, 10, 20, ... documents long),
    /// posfuse's and slidefuse's precision at each rank, bayesfuse's log-odds at ranks
    /// 1 to 1,000, mapfuse's MAP (a table of one value).
    pub fn tables(&self) -> Vec<Vec<f64>> {
        match &self.model {
            Model::Prob(p)
            | Model::Seg(p)
            | Model::Pos(p)
            | Model::Slide(p, _)
            | Model::Bayes(p) => p.clone(),
            Model::Map(m) => m.iter().map(|&x| vec![x]).collect(),
        }
    }

    /// slidefuse's window `w` (None for the other methods).
    pub fn window(&self) -> Option<usize> {
        match self.model {
            Model::Slide(_, w) => Some(w),
            _ => None,
        }
    }

    /// A model of `method` from its tables ([`FusionModel::tables`]' shapes: segfuse's
    /// 10 values a run, bayesfuse's 1,000, mapfuse's 1, probfuse's at least 1) and, for
    /// slidefuse only, its window. Every value must be finite.
    pub fn from_tables(
        method: Method,
        tables: Vec<Vec<f64>>,
        window: Option<usize>,
    ) -> Result<FusionModel> {
        let bad = |m: String| Err(Error::Option(format!("fusion method '{method}': {m}")));
        if !method.needs_qrels() {
            return bad("it is not trained on qrels, so it takes no trained tables".into());
        }
        if tables.is_empty() {
            return bad("no tables given (one a run)".into());
        }
        let shape = match method {
            Method::SegFuse => Some(SEG_BOUNDS.len() - 1),
            Method::BayesFuse => Some(BAYES_CUTS[BAYES_CUTS.len() - 1]),
            Method::MapFuse => Some(1),
            _ => None,
        };
        for (r, t) in tables.iter().enumerate() {
            if shape.is_some_and(|n| t.len() != n) || (method == Method::ProbFuse && t.is_empty()) {
                let want = shape.map_or("at least 1".to_string(), |n| n.to_string());
                return bad(format!(
                    "the table of run {} has {} values, not {want}",
                    r + 1,
                    t.len()
                ));
            }
            if let Some(x) = t.iter().find(|x| !x.is_finite()) {
                return bad(format!(
                    "the table of run {} holds {x}; values must be finite",
                    r + 1
                ));
            }
        }
        let model = match (method, window) {
            (Method::SlideFuse, Some(w)) => Model::Slide(tables, w),
            (Method::SlideFuse, None) => return bad("slidefuse's tables need its window w".into()),
            (_, Some(_)) => return bad("only slidefuse takes a window w".into()),
            (Method::ProbFuse, None) => Model::Prob(tables),
            (Method::SegFuse, None) => Model::Seg(tables),
            (Method::PosFuse, None) => Model::Pos(tables),
            (Method::BayesFuse, None) => Model::Bayes(tables),
            (_, None) => Model::Map(tables.into_iter().map(|t| t[0]).collect()),
        };
        Ok(FusionModel { method, model })
    }

    /// [`FusionModel::from_tables`] with the window given as ranx's `fuse` takes it,
    /// among the method's parameters: slidefuse's `w` (a whole number), and nothing
    /// else (what the other parameters decide, the tables hold).
    pub fn from_params(
        method: Method,
        tables: Vec<Vec<f64>>,
        params: &Params,
    ) -> Result<FusionModel> {
        if params.weights.is_some() {
            return Err(Error::Option(format!(
                "fusion method '{method}' takes no weights"
            )));
        }
        if let Some((name, _)) =
            (params.values().iter()).find(|(n, _)| !(method == Method::SlideFuse && n == "w"))
        {
            return Err(Error::Option(format!(
                "with trained tables, '{name}' is not a parameter of '{method}'"
            )));
        }
        let given = !params.values().is_empty();
        let window = given.then(|| whole(params, method, "w")).transpose()?;
        FusionModel::from_tables(method, tables, window)
    }
}

/// ranx's `min_odd`: the log-odds of a document a run did not retrieve (bayesfuse).
pub(crate) fn min_odd() -> f64 {
    (0.001f64 / 0.999).ln()
}

/// segfuse's segment bounds: 0, then `10 * 2^(k-1) - 5` for k = 1..=10.
const SEG_BOUNDS: [usize; 11] = [0, 5, 15, 35, 75, 155, 315, 635, 1275, 2555, 5115];
/// bayesfuse's cut-offs.
const BAYES_CUTS: [usize; 10] = [0, 5, 10, 15, 20, 30, 100, 200, 500, 1000];

/// The most segments probfuse learns a probability for: a table of 8 MiB a run (ranx's
/// grid goes to 100; 10^9 made a table of 8 GB a run).
const MAX_SEGMENTS: usize = 1 << 20;

/// A whole-number parameter of a trained method: probfuse's `n_segments` (1 to
/// [`MAX_SEGMENTS`]) or slidefuse's window `w` (0 to 10^9, clipped to each ranking).
fn whole(params: &Params, method: Method, name: &str) -> Result<usize> {
    let (min, max) = if name == "n_segments" {
        (1, MAX_SEGMENTS)
    } else {
        (0, 1_000_000_000)
    };
    let v = params.get(method, name)?;
    if v.fract() != 0.0 || v < min as f64 || v > max as f64 {
        return Err(Error::Option(format!(
            "parameter '{name}' of fusion method '{method}' must be a whole number from \
             {min} to {max}, got {v}"
        )));
    }
    Ok(v as usize)
}

/// Train `method` on the qrels' judgments of `runs` (each normalized with `norm`, as
/// the method will see them).
pub(crate) fn train(
    qrels: &Qrels,
    runs: &[&Run],
    method: Method,
    norm: Option<Norm>,
    params: &Params,
) -> Result<Model> {
    let n_runs = runs.len();
    // hits[q][r]: the hit list of run r for the q-th qrels query; num_rel[q]
    let per_query = crate::parallel::map_with(qrels.queries(), Work::default, |w, q| {
        w.gather(runs, q.id())?;
        w.normalize(norm);
        let hits: Vec<Vec<f64>> = w
            .lists
            .iter()
            .map(|list| {
                list.iter()
                    .map(|&(c, _)| {
                        let rel = q.label(w.cands.get(c as usize)).is_some_and(|l| l >= 1);
                        if rel {
                            1.0
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        Ok((hits, q.num_rel(1)))
    });
    let per_query = per_query.into_iter().collect::<Result<Vec<_>>>()?;
    let n_q = per_query.len() as f64;
    let runs_hits = |r: usize| per_query.iter().map(move |(h, _)| &h[r]);
    let model = match method {
        Method::ProbFuse => {
            let n_seg = whole(params, method, "n_segments")?;
            Model::Prob(
                (0..n_runs)
                    .map(|r| {
                        let mut p = vec![0.0; n_seg];
                        for hits in runs_hits(r) {
                            // the segments that hold a document of the list (the others
                            // add nothing): O(documents) a query, not O(n_segments)
                            let size = hits.len().div_ceil(n_seg).max(1);
                            for (k, seg) in hits.chunks(size).enumerate() {
                                p[k] += sum(seg) / seg.len() as f64;
                            }
                        }
                        p.iter().map(|x| x / n_q).collect()
                    })
                    .collect(),
            )
        }
        Method::SegFuse => Model::Seg(
            (0..n_runs)
                .map(|r| {
                    let mut p = vec![0.0; SEG_BOUNDS.len() - 1];
                    for hits in runs_hits(r) {
                        for (k, pk) in p.iter_mut().enumerate() {
                            let (a, b) = (SEG_BOUNDS[k], SEG_BOUNDS[k + 1]);
                            *pk += sum(slice(hits, a, b)) / (b - a) as f64;
                        }
                    }
                    p.iter().map(|x| x / n_q).collect()
                })
                .collect(),
        ),
        Method::PosFuse | Method::SlideFuse => {
            let probs = (0..n_runs)
                .map(|r| {
                    let len = runs_hits(r).map(|h| h.len()).max().unwrap_or(0);
                    let (mut num, mut den) = (vec![0.0; len], vec![0.0; len]);
                    for hits in runs_hits(r) {
                        for (i, h) in hits.iter().enumerate() {
                            den[i] += 1.0;
                            num[i] += h;
                        }
                    }
                    num.iter().zip(&den).map(|(n, d)| n / d).collect()
                })
                .collect();
            if method == Method::SlideFuse {
                Model::Slide(probs, whole(params, method, "w")?)
            } else {
                Model::Pos(probs)
            }
        }
        Method::BayesFuse => Model::Bayes(
            (0..n_runs)
                .map(|r| {
                    let mut odds = vec![0.0; BAYES_CUTS[BAYES_CUTS.len() - 1]];
                    for w in BAYES_CUTS.windows(2) {
                        let (a, b) = (w[0], w[1]);
                        let mut avg = 0.0;
                        for hits in runs_hits(r) {
                            let precision = sum(slice(hits, a, b)) / (b - a) as f64;
                            avg += precision / n_q;
                        }
                        if avg == 0.0 {
                            avg += 0.001;
                        }
                        let mut neg = 1.0 - avg;
                        if neg == 0.0 {
                            neg += 0.001;
                        }
                        let v = (avg / neg).ln();
                        odds[a..b].iter_mut().for_each(|o| *o = v);
                    }
                    odds
                })
                .collect(),
        ),
        Method::MapFuse => Model::Map(
            (0..n_runs)
                .map(|r| {
                    let total = per_query.iter().fold(0.0, |acc, (h, num_rel)| {
                        acc + average_precision(&h[r], *num_rel)
                    });
                    total / n_q
                })
                .collect(),
        ),
        _ => {
            return Err(Error::Option(format!(
                "fusion method '{method}' is not trained on qrels"
            )))
        }
    };
    Ok(model)
}

/// trec_eval's (and ranx's) average precision of a hit list.
fn average_precision(hits: &[f64], num_rel: u64) -> f64 {
    if num_rel == 0 {
        return 0.0;
    }
    let mut found = 0.0;
    let mut ap = 0.0;
    for (i, &h) in hits.iter().enumerate() {
        if h > 0.0 {
            found += 1.0;
            ap += found / (i + 1) as f64;
        }
    }
    ap / num_rel as f64
}

/// `x[a:b]` as numpy slices: clipped to the list.
fn slice(x: &[f64], a: usize, b: usize) -> &[f64] {
    let b = b.min(x.len());
    if a >= b {
        &[]
    } else {
        &x[a..b]
    }
}

fn sum(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |a, v| a + v)
}

impl Model {
    /// The score run `r` gives the document at 0-based rank `i` of its list of `n`,
    /// whose (normalized) score is `score`.
    #[inline]
    pub(crate) fn score(&self, r: usize, i: usize, n: usize, score: f64) -> f64 {
        let get = |p: &[f64], i: usize| p.get(i).copied().unwrap_or(0.0);
        match self {
            Model::Prob(p) => {
                let p = &p[r];
                let size = n.div_ceil(p.len().max(1)).max(1);
                let k = i / size;
                get(p, k) / (k + 1) as f64
            }
            Model::Seg(p) => {
                let k = SEG_BOUNDS.windows(2).position(|w| i >= w[0] && i < w[1]);
                k.map_or(0.0, |k| get(&p[r], k)) * (score + 1.0)
            }
            Model::Pos(p) => get(&p[r], i),
            Model::Slide(p, w) => {
                let a = i.saturating_sub(*w);
                let b = (i + w).min(n.saturating_sub(1));
                sum(slice(&p[r], a, b + 1)) / (b - a + 1) as f64
            }
            Model::Bayes(odds) => odds[r].get(i).copied().unwrap_or_else(min_odd),
            Model::Map(m) => m[r] / (i + 1) as f64,
        }
    }

    /// The score of a document missing from a run.
    pub(crate) fn absent(&self) -> f64 {
        match self {
            Model::Bayes(_) => min_odd(),
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_by_hand() {
        let m = Model::Prob(vec![vec![0.6, 0.2]]);
        // 5 documents, 2 segments: size 3
        assert_eq!(m.score(0, 2, 5, 0.0), 0.6);
        assert_eq!(m.score(0, 3, 5, 0.0), 0.1);
        let s = Model::Slide(vec![vec![1.0, 0.5, 0.0]], 1);
        assert_eq!(s.score(0, 0, 3, 0.0), 0.75);
        assert_eq!(s.score(0, 1, 3, 0.0), 0.5);
        // past the probabilities: the slice is clipped, the divisor is not
        assert_eq!(s.score(0, 3, 5, 0.0), 0.0 / 3.0);
        let g = Model::Seg(vec![vec![0.5; 10]]);
        assert_eq!(g.score(0, 4, 10, 1.0), 1.0);
        assert_eq!(g.score(0, 6000, 7000, 1.0), 0.0);
        assert_eq!(
            average_precision(&[1.0, 0.0, 1.0], 3),
            (1.0 + 2.0 / 3.0) / 3.0
        );
    }

    /// More segments than documents: a segment a rank, the rest 0, learnt in time
    /// linear in the documents (n_segments = 2^20 over 200 queries took seconds when
    /// every segment of every query was visited); past the bound, refused by name.
    #[test]
    fn probfuse_segments_past_the_rankings() {
        let mut text = String::new();
        for q in 0..200 {
            for d in 0..3 {
                text += &format!("q{q} Q0 d{d} {} {} r\n", d + 1, 3 - d);
            }
        }
        let run = Run::from_bytes(text.as_bytes(), "r").unwrap();
        let qrels = Qrels::from_bytes(b"q0 0 d0 1\nq1 0 d2 1\n", "q").unwrap();
        let train = |n: f64| {
            let p = Params::new().set("n_segments", n);
            crate::fusion::train_fusion(&qrels, &[&run, &run], Method::ProbFuse, None, &p)
        };
        let three = train(3.0).unwrap().tables();
        let many = train(MAX_SEGMENTS as f64).unwrap().tables();
        assert_eq!(many[0].len(), MAX_SEGMENTS);
        assert_eq!(many[0][..3], three[0][..]);
        // trained on the two judged queries: d0 relevant at rank 1 of q0, d2 at rank 3 of q1
        assert_eq!(three[0], [0.5, 0.0, 0.5]);
        assert!(many[0][3..].iter().all(|&x| x == 0.0));
        let e = train(MAX_SEGMENTS as f64 + 1.0).unwrap_err().to_string();
        assert!(
            e.contains("must be a whole number from 1 to 1048576"),
            "{e}"
        );
    }
}
