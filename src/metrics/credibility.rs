//! Relevance and credibility together: the measures of Lioma, Simonsen and Larsen,
//! "Evaluation Measures for Relevance and Credibility in Ranked Lists" (ICTIR 2017,
//! arXiv 1708.07157).
//!
//! Each ranked document has a relevance label (from the qrels) and a credibility label
//! (from the credibility judgments, [`QueryCtx::cred`]); a document absent from either,
//! or unjudged there, counts as 0. The paper's "ranked list" is the retrieved list: its
//! ideal relevance (credibility) ranking re-sorts the same documents by decreasing label,
//! equal labels keeping the run's order (so two neighbours with equal labels are never
//! an error).
//!
//! * Type I (rank positions): with r_i and c_i the positions of the document at rank i
//!   in the ideal relevance and credibility rankings and e^r_i = r_i ∸ r_{i+1},
//!   e^c_i = c_i ∸ c_{i+1} (monus: a - b if a > b, else 0),
//!   LRE = Σ_{i=1}^{n-1} ((μ + e^r_i)(ν + e^c_i) - μν) / log2(1 + i) and
//!   GRE = (1 + μ Σ e^r_i / log2(1 + i)) (1 + ν Σ e^c_i / log2(1 + i)) - 1, normalised
//!   by the error of the ranking that interleaves the ideal ranking's ends
//!   (n, 1, n - 1, 2, ...: errors n - 2j - 1 at ranks 2j + 1), where both ideal
//!   rankings agree: NLRE = 1 - LRE / C_LRE, NGRE = 1 - GRE / C_GRE.
//! * Type II (labels as scores): WCS = Σ_i (λ rel_i + (1 - λ) cred_i) / log2(1 + i),
//!   NWCS = WCS / the WCS of the same documents sorted by λ rel + (1 - λ) cred.
//! * Aggregates of a relevance measure M computed on each kind of label:
//!   CAM = λ M_r + (1 - λ) M_c, WHAM = 1 / (λ / M_r + (1 - λ) / M_c) (0 when M_r or M_c
//!   is 0).

use std::cmp::Reverse;
use std::sync::OnceLock;

use super::{ap, by_rank, dcg, discount, Gains, QueryCtx};

/// A label as the paper's measures read it: a negative code (absent, unjudged) is 0.
#[inline]
fn score(l: i64) -> i64 {
    l.max(0)
}

/// At most this many distinct keys (labels 0 .. FEW - 1) are counted; more are sorted.
const FEW: usize = 32;

/// The distinct keys with how many times each occurs, largest key first; None when
/// there are more than [`FEW`] (then a sort is the cheaper way).
fn groups<K: Copy + PartialEq>(
    keys: impl Iterator<Item = K>,
    desc: impl Fn(&K, &K) -> std::cmp::Ordering,
) -> Option<Vec<(K, usize)>> {
    let mut groups: Vec<(K, usize)> = Vec::new();
    for k in keys {
        match groups.iter().position(|g| g.0 == k) {
            Some(i) => groups[i].1 += 1,
            None if groups.len() == FEW => return None,
            None => groups.push((k, 1)),
        }
    }
    groups.sort_unstable_by(|a, b| desc(&a.0, &b.0));
    Some(groups)
}

/// The position of each ranked document in the ranking re-sorted by decreasing
/// `label`, equal labels in the run's order: counted (labels below [`FEW`], the usual
/// grades), or by a stable sort when a label is larger.
fn ideal_positions(labels: &[i64]) -> Vec<usize> {
    let mut next = [0usize; FEW];
    for &l in labels {
        match next.get_mut(score(l) as usize) {
            Some(n) => *n += 1,
            None => return ideal_positions_sorted(labels),
        }
    }
    // the first position of each label: the documents with a larger label come first
    let mut start = 0;
    for n in next.iter_mut().rev() {
        (*n, start) = (start, start + *n);
    }
    labels
        .iter()
        .map(|&l| {
            let n = &mut next[score(l) as usize];
            *n += 1;
            *n - 1
        })
        .collect()
}

/// [`ideal_positions`] by a stable sort.
fn ideal_positions_sorted(labels: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by_key(|&i| Reverse(score(labels[i])));
    let mut pos = vec![0; labels.len()];
    for (p, &i) in order.iter().enumerate() {
        pos[i] = p;
    }
    pos
}

/// 1 / log2(i + 2), the rank discount of the 0-based position `i`: from a table for the
/// first ranks (each query walks its whole ranking once per measure), else computed.
#[inline]
fn inv_discount(i: usize) -> f64 {
    static INV: OnceLock<Box<[f64]>> = OnceLock::new();
    by_rank(&INV, |i| 1.0 / discount(i), i)
}

/// Monus: `a - b` when `a > b`, else 0.
#[inline]
fn monus(a: usize, b: usize) -> f64 {
    a.saturating_sub(b) as f64
}

/// The rank errors (e^r_i, e^c_i) between ranks i and i + 1 (0-based `i`), with the
/// discount 1 / log2(i + 2), for each i < n - 1.
fn rank_errors(c: &QueryCtx) -> impl Iterator<Item = (f64, f64, f64)> {
    let r = ideal_positions(c.rels);
    let cr = ideal_positions(c.cred);
    (0..c.rels.len().saturating_sub(1)).map(move |i| {
        (
            monus(r[i], r[i + 1]),
            monus(cr[i], cr[i + 1]),
            inv_discount(i),
        )
    })
}

/// The interleaved worst ranking's errors x_j = n - 2j - 1 at ranks 2j + 1, with their
/// discounts 1 / log2(2j + 2) = 1 / (1 + log2(1 + j)), j = 0 .. floor(n/2) - 1.
fn worst_errors(n: usize) -> impl Iterator<Item = (f64, f64)> {
    (0..n / 2).map(move |j| {
        (
            (n - 2 * j - 1) as f64,
            1.0 / (1.0 + ((1 + j) as f64).log2()),
        )
    })
}

/// NLRE: 1 for fewer than 2 documents (no neighbours, no error).
pub fn nlre(c: &QueryCtx, mu: f64, nu: f64) -> f64 {
    if c.rels.len() < 2 {
        return 1.0;
    }
    let lre: f64 = rank_errors(c)
        .map(|(er, ec, d)| ((mu + er) * (nu + ec) - mu * nu) * d)
        .sum();
    let norm: f64 = worst_errors(c.rels.len())
        .map(|(x, d)| (x * x + (mu + nu) * x) * d)
        .sum();
    1.0 - lre / norm
}

/// NGRE: 1 for fewer than 2 documents.
pub fn ngre(c: &QueryCtx, mu: f64, nu: f64) -> f64 {
    if c.rels.len() < 2 {
        return 1.0;
    }
    let (mut sr, mut sc) = (0.0, 0.0);
    for (er, ec, d) in rank_errors(c) {
        sr += er * d;
        sc += ec * d;
    }
    let gre = (1.0 + mu * sr) * (1.0 + nu * sc) - 1.0;
    let s: f64 = worst_errors(c.rels.len()).map(|(x, d)| x * d).sum();
    let norm = mu * nu * s * s + (mu + nu) * s;
    1.0 - gre / norm
}

/// NWCS: 0 when every retrieved document scores 0 (no ideal).
pub fn nwcs(c: &QueryCtx, lambda: f64) -> f64 {
    fn wcs(z: impl Iterator<Item = f64>) -> f64 {
        z.enumerate().map(|(i, x)| x * inv_discount(i)).sum()
    }
    let z: Vec<f64> = c
        .rels
        .iter()
        .zip(c.cred)
        .map(|(&r, &k)| lambda * score(r) as f64 + (1.0 - lambda) * score(k) as f64)
        .collect();
    let actual = wcs(z.iter().copied());
    let best = match groups(z.iter().copied(), |a, b| b.total_cmp(a)) {
        // the ideal ranking: each score as many times as it occurs, largest first
        Some(groups) => wcs(groups
            .into_iter()
            .flat_map(|(x, n)| std::iter::repeat_n(x, n))),
        None => {
            let mut ideal = z;
            ideal.sort_by(|a, b| b.total_cmp(a));
            wcs(ideal.into_iter())
        }
    };
    if best > 0.0 {
        actual / best
    } else {
        0.0
    }
}

/// The relevance measure (`m`, by [`CAM_MEASURES`](crate::measure::CAM_MEASURES)) on
/// the relevance labels and on the credibility labels: (M_r, M_c).
fn both(c: &QueryCtx, m: f64) -> (f64, f64) {
    let cred = QueryCtx::new(
        c.cred,
        c.cred_levels,
        c.rel_level,
        c.num_docs,
        c.judged_only,
    );
    let one = |q: &QueryCtx| {
        if m == 1.0 {
            ap::average_precision(q)
        } else {
            let mut out = [0.0];
            dcg::ndcg(q, &Gains::linear(q), &[u64::MAX], false, &mut out);
            out[0]
        }
    };
    (one(c), one(&cred))
}

/// CAM: λ M_r + (1 - λ) M_c.
pub fn cam(c: &QueryCtx, m: f64, lambda: f64) -> f64 {
    let (r, k) = both(c, m);
    lambda * r + (1.0 - lambda) * k
}

/// WHAM: the weighted harmonic mean of M_r and M_c; 0 when either is 0.
pub fn wham(c: &QueryCtx, m: f64, lambda: f64) -> f64 {
    let (r, k) = both(c, m);
    if r == 0.0 || k == 0.0 {
        return 0.0;
    }
    1.0 / (lambda / r + (1.0 - lambda) / k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels of a label vector (what the qrels would hold if they judged exactly the
    /// ranked documents).
    fn levels(labels: &[i64]) -> Vec<(i64, u64)> {
        let mut v: Vec<(i64, u64)> = Vec::new();
        let mut s: Vec<i64> = labels.iter().copied().filter(|&l| l >= 0).collect();
        s.sort_unstable();
        for l in s {
            match v.last_mut() {
                Some((x, n)) if *x == l => *n += 1,
                _ => v.push((l, 1)),
            }
        }
        v
    }

    fn with<R>(rel: &[i64], cred: &[i64], f: impl FnOnce(&QueryCtx) -> R) -> R {
        let (lr, lc) = (levels(rel), levels(cred));
        let c = QueryCtx::new(rel, &lr, 1, 0, false).with_credibility(cred, &lc);
        f(&c)
    }

    #[test]
    fn ideal_orders_score_one_and_no_error() {
        // already in both ideal orders: no rank error, NWCS = CAM = WHAM = 1
        let (rel, cred) = ([3, 2, 2, 1, 0], [4, 3, 3, 1, 1]);
        with(&rel, &cred, |c| {
            assert_eq!(nlre(c, 0.5, 0.5), 1.0);
            assert_eq!(ngre(c, 0.5, 0.5), 1.0);
            assert_eq!(nwcs(c, 0.5), 1.0);
            assert!((cam(c, 0.0, 0.3) - 1.0).abs() < 1e-15);
            assert!((wham(c, 1.0, 0.3) - 1.0).abs() < 1e-15);
        });
    }

    #[test]
    fn the_interleaved_worst_ranking_scores_zero() {
        // n = 5, ideal positions 4, 0, 3, 1, 2 in both orders: errors 4 and 2 at ranks
        // 1 and 3, which is the normaliser's ranking, so NLRE = NGRE = 0
        let labels = [0, 4, 1, 3, 2];
        with(&labels, &labels, |c| {
            assert!(nlre(c, 0.5, 0.5).abs() < 1e-15);
            assert!(ngre(c, 0.5, 0.5).abs() < 1e-15);
            assert!(nlre(c, 2.0, 0.0).abs() < 1e-15);
        });
    }

    #[test]
    fn hand_computed_values() {
        // rel 1, 2, 0: ideal relevance positions 1, 0, 2; cred 0, 0, 1: positions 1, 2, 0
        // e^r = (1, 0), e^c = (0, 2); discounts 1, 1/log2(3)
        let (rel, cred) = ([1, 2, 0], [0, 0, 1]);
        let d2 = 1.0 / 3f64.log2();
        let (mu, nu) = (0.5, 0.5);
        let lre = ((mu + 1.0) * nu - mu * nu) + (mu * (nu + 2.0) - mu * nu) * d2;
        let clre = 2.0 * 2.0 + (mu + nu) * 2.0; // n = 3: j = 0 only, x = 2
        let gre = (1.0 + mu * 1.0) * (1.0 + nu * 2.0 * d2) - 1.0;
        let cgre = mu * nu * 4.0 + (mu + nu) * 2.0;
        // z = 0.5, 1, 0.5; ideal 1, 0.5, 0.5
        let wcs = 0.5 + 1.0 / 3f64.log2() + 0.5 / 2.0;
        let iwcs = 1.0 + 0.5 / 3f64.log2() + 0.5 / 2.0;
        with(&rel, &cred, |c| {
            assert!((nlre(c, mu, nu) - (1.0 - lre / clre)).abs() < 1e-15);
            assert!((ngre(c, mu, nu) - (1.0 - gre / cgre)).abs() < 1e-15);
            assert!((nwcs(c, 0.5) - wcs / iwcs).abs() < 1e-15);
        });
    }

    #[test]
    fn counted_and_sorted_ideal_positions_agree() {
        // few labels (counted), many labels (sorted), negative codes as 0
        let few = [2, -1, 0, 2, 1, 0, -2, 2, 1];
        let many: Vec<i64> = (0..200).map(|i| (i * 37 % 101) - 5).collect();
        for labels in [&few[..], &many[..]] {
            assert_eq!(ideal_positions(labels), ideal_positions_sorted(labels));
        }
        assert_eq!(ideal_positions(&few), [0, 5, 6, 1, 3, 7, 8, 2, 4]);
    }

    #[test]
    fn wham_is_zero_when_one_side_is() {
        // no credible document: M_c = 0
        with(&[1, 0], &[0, 0], |c| {
            assert_eq!(wham(c, 0.0, 0.5), 0.0);
            assert!((cam(c, 0.0, 0.25) - 0.25).abs() < 1e-15);
        });
    }
}
