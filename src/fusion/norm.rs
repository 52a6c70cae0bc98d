//! The per-query normalizations, as ranx defines them (`ranx/normalization/`): one
//! run's list for one query in, the same list with new scores out. Denominators are
//! floored at 1e-9 as in ranx, so one document, or all scores equal, gives 0 for
//! min-max, sum and zmuv (and `s / 1e-9` for max when the largest score is <= 0).

use super::names::Norm;
use crate::ids::Ids;

/// Smallest denominator (ranx's `max(denominator, 1e-9)`).
const FLOOR: f64 = 1e-9;

/// One run's documents for one query: (candidate, score), best first.
pub(crate) type List = Vec<(u32, f64)>;

/// Normalize `list` in place. `n_cand` counts the query's candidates (every document
/// any run retrieved for it; Borda gives the ones missing from `list` a score and
/// appends them, by document id descending); `cands` holds their ids. The list stays
/// in rank order: a stable sort by the new scores, descending (only min-max-inverted
/// and Borda change the order; ties keep the order they had).
pub(crate) fn apply(norm: Norm, list: &mut List, n_cand: usize, cands: &Ids, seen: &mut Vec<bool>) {
    let n = list.len();
    let scores = list.iter().map(|&(_, s)| s);
    match norm {
        Norm::MinMax | Norm::Max => {
            let kind = match norm {
                Norm::MinMax => PointwiseNorm::MinMax,
                _ => PointwiseNorm::Max,
            };
            let p = Pointwise::of(kind, scores);
            for (_, s) in list.iter_mut() {
                *s = p.apply(*s);
            }
        }
        Norm::MinMaxInverted => {
            let (min, max) = min_max(scores);
            let den = floor(max - min);
            for (_, s) in list.iter_mut() {
                *s = (max - *s) / den;
            }
            list.sort_by_key(|&(_, s)| crate::run::descending_key(s));
        }
        Norm::Sum => {
            let (min, _) = min_max(scores.clone());
            let sum = scores.fold(0.0, |a, s| a + s);
            let den = floor(sum - min * n as f64);
            for (_, s) in list.iter_mut() {
                *s = (*s - min) / den;
            }
        }
        Norm::Zmuv => {
            let mean = if n == 0 {
                f64::NAN
            } else {
                scores.fold(0.0, |a, s| a + s) / n as f64
            };
            let ssd = list.iter().fold(0.0, |a, &(_, s)| {
                let d = s - mean;
                a + d * d
            });
            let den = floor((ssd / n as f64).sqrt());
            for (_, s) in list.iter_mut() {
                *s = (*s - mean) / den;
            }
        }
        Norm::Rank => {
            for (i, (_, s)) in list.iter_mut().enumerate() {
                *s = 1.0 - i as f64 / n as f64;
            }
        }
        Norm::Borda => {
            let c = n_cand as f64;
            seen.clear();
            seen.resize(n_cand, false);
            for (i, (d, s)) in list.iter_mut().enumerate() {
                *s = 1.0 - i as f64 / c;
                seen[*d as usize] = true;
            }
            let unranked = 0.5 - (n as f64 - 1.0) / (2.0 * c);
            let start = list.len();
            list.extend(
                (0..n_cand as u32)
                    .filter(|&d| !seen[d as usize])
                    .map(|d| (d, unranked)),
            );
            list[start..]
                .sort_unstable_by(|a, b| cands.get(b.0 as usize).cmp(cands.get(a.0 as usize)));
        }
    }
}

/// A normalization that maps each score by itself, `(s - sub) / den`, with `sub` and
/// `den` from the list's smallest and largest scores: none (0 and 1: `s` itself, to the
/// bit, -0.0 included), min-max, max. It keeps a list's order, and neither its
/// statistics nor a score's image depend on the order the scores are read in (a run
/// holds no NaN; of a -0.0 and a 0.0, which one is the minimum changes only the sign
/// of a zero, which a sum started at +0.0 drops), so lists can be normalized and fused
/// in storage order ([`PointwiseNorm::of`] names them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pointwise {
    sub: f64,
    den: f64,
}

/// The normalizations of a [`Pointwise`] map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PointwiseNorm {
    None,
    MinMax,
    Max,
}

impl PointwiseNorm {
    /// `norm` (`None`: no normalization) if it maps each score by itself.
    pub(crate) fn of(norm: Option<Norm>) -> Option<PointwiseNorm> {
        match norm {
            None => Some(PointwiseNorm::None),
            Some(Norm::MinMax) => Some(PointwiseNorm::MinMax),
            Some(Norm::Max) => Some(PointwiseNorm::Max),
            Some(_) => None,
        }
    }
}

impl Pointwise {
    /// The map of `norm` over a list of `scores`.
    pub(crate) fn of(norm: PointwiseNorm, scores: impl Iterator<Item = f64>) -> Self {
        let (sub, den) = match norm {
            PointwiseNorm::None => (0.0, 1.0),
            PointwiseNorm::MinMax => {
                let (min, max) = min_max(scores);
                (min, floor(max - min))
            }
            PointwiseNorm::Max => (0.0, floor(min_max(scores).1)),
        };
        Pointwise { sub, den }
    }

    #[inline(always)]
    pub(crate) fn apply(self, s: f64) -> f64 {
        (s - self.sub) / self.den
    }
}

/// ranx's `max(x, 1e-9)` (Python's `max` keeps its first argument unless the second
/// is larger: a NaN stays NaN).
fn floor(x: f64) -> f64 {
    if FLOOR > x {
        FLOOR
    } else {
        x
    }
}

/// The smallest and largest score (ranx's `safe_min` / `safe_max`: 0 for none).
fn min_max(scores: impl Iterator<Item = f64>) -> (f64, f64) {
    let mut it = scores;
    let Some(first) = it.next() else {
        return (0.0, 0.0);
    };
    it.fold((first, first), |(lo, hi), s| {
        (if s < lo { s } else { lo }, if s > hi { s } else { hi })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Ids {
        let mut ids = Ids::default();
        for i in 0..n {
            ids.push(format!("d{i}").as_bytes()).unwrap();
        }
        ids
    }

    fn norm(norm: Norm, scores: &[f64], n_cand: usize) -> List {
        let mut list: List = scores
            .iter()
            .enumerate()
            .map(|(i, &s)| (i as u32, s))
            .collect();
        apply(norm, &mut list, n_cand, &ids(n_cand), &mut Vec::new());
        list
    }

    #[test]
    fn formulas_by_hand() {
        let s = [4.0, 2.0, 1.0];
        let v = |l: List| l.iter().map(|x| x.1).collect::<Vec<_>>();
        assert_eq!(v(norm(Norm::MinMax, &s, 3)), [1.0, 1.0 / 3.0, 0.0]);
        assert_eq!(
            norm(Norm::MinMaxInverted, &s, 3),
            [(2, 1.0), (1, 2.0 / 3.0), (0, 0.0)]
        );
        assert_eq!(v(norm(Norm::Max, &s, 3)), [1.0, 0.5, 0.25]);
        assert_eq!(v(norm(Norm::Sum, &s, 3)), [0.75, 0.25, 0.0]);
        assert_eq!(
            v(norm(Norm::Rank, &s, 3)),
            [1.0, 1.0 - 1.0 / 3.0, 1.0 - 2.0 / 3.0]
        );
        // Borda over 5 candidates: the two missing get 0.5 - 2/10, by id descending
        let b = norm(Norm::Borda, &s, 5);
        assert_eq!(b[..3], [(0, 1.0), (1, 0.8), (2, 0.6)]);
        assert_eq!(b[3..], [(4, 0.3), (3, 0.3)]);
        let z = v(norm(Norm::Zmuv, &[1.0, 2.0, 3.0], 3));
        let sd = (2.0f64 / 3.0).sqrt();
        assert_eq!(z, [-1.0 / sd, 0.0, 1.0 / sd]);
    }

    #[test]
    fn one_document_and_equal_scores_follow_ranx_floor() {
        assert_eq!(norm(Norm::MinMax, &[3.0], 1), [(0, 0.0)]);
        assert_eq!(norm(Norm::MinMax, &[3.0, 3.0], 2), [(0, 0.0), (1, 0.0)]);
        assert_eq!(norm(Norm::Sum, &[3.0, 3.0], 2), [(0, 0.0), (1, 0.0)]);
        assert_eq!(norm(Norm::Zmuv, &[3.0, 3.0], 2), [(0, 0.0), (1, 0.0)]);
        assert_eq!(norm(Norm::Max, &[-2.0], 1), [(0, -2.0 / 1e-9)]);
        assert_eq!(norm(Norm::Rank, &[3.0], 1), [(0, 1.0)]);
    }
}
