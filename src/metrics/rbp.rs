//! Rank-biased precision (Moffat and Zobel 2008): (1 - p) * sum over ranks i of
//! gain_i * p^(i-1). trec_eval's graded rbp (gains of gain.rs, rescaled to [0, 1]),
//! its residual rbp_resid, and rbp_bin with binary gains (ir_measures' RBP(rel=1)).

use super::gain::Gains;
use super::QueryCtx;

/// The persistence `p` of trec_eval's `rbp.p=0.8` pairs (the last one wins).
pub(super) fn persistence(pairs: &[(String, f64)]) -> f64 {
    pairs
        .iter()
        .rev()
        .find(|(n, _)| n == "p")
        .map_or(0.9, |(_, v)| *v)
}

/// Graded RBP with trec_eval's gains: when any gain lies outside [0, 1] all gains are
/// rescaled by (g - min) / (max - min) over the query's levels 0..max (and any user
/// gains). `user` are the labels the user set a gain for.
pub(super) fn rbp(c: &QueryCtx, mut gains: Gains, user: &[(i64, f64)], p: f64) -> f64 {
    let (mut min, mut max) = gains.gain_range();
    // trec_eval's table also holds every level 0..max_label (gain = level) that the
    // user did not set: the smallest and largest of those can move min and max.
    if let Some(&(top, _)) = c.levels.last() {
        let set = |lvl: i64| user.iter().any(|&(l, _)| l == lvl);
        let lo = (0..=top).find(|&l| !set(l));
        let hi = (0..=top).rev().find(|&l| !set(l));
        for v in [lo, hi].into_iter().flatten() {
            min = min.min(v as f64);
            max = max.max(v as f64);
        }
    }
    if min < 0.0 || max > 1.0 {
        gains.rescale(min, max);
    }
    let mut sum = 0.0;
    let mut cur_p = 1.0;
    for &r in c.rels {
        let g = gains.gain(r);
        if g != 0.0 {
            sum += g * cur_p;
        }
        cur_p *= p;
    }
    (1.0 - p) * sum
}

/// The RBP residual: what RBP would gain if every unjudged document were relevant,
/// plus the weight beyond the end of the ranking (0 when nothing is unjudged).
pub(super) fn rbp_resid(c: &QueryCtx, p: f64) -> f64 {
    let mut unj = 0u64;
    let mut sum = 0.0;
    let mut cur_p = 1.0;
    for &r in c.rels {
        if r < 0 {
            unj += 1;
            sum += cur_p;
        }
        cur_p *= p;
    }
    if unj > 0 {
        cur_p + (1.0 - p) * sum
    } else {
        0.0
    }
}

/// RBP with binary gains: (1 - p) * sum of p^(rank - 1) over relevant documents.
pub(super) fn rbp_binary(c: &QueryCtx, p: f64) -> f64 {
    let mut sum = 0.0;
    let mut w = 1.0;
    for i in 0..c.num_ret() {
        if c.is_rel(i) {
            sum += w;
        }
        w *= p;
    }
    (1.0 - p) * sum
}

/// RBP with the labels themselves as gains (ranx's `rbp.X`): (1 - p) * sum of
/// label * p^(rank - 1) over relevant documents (label >= the relevance level).
pub(super) fn rbp_labels(c: &QueryCtx, p: f64) -> f64 {
    let mut sum = 0.0;
    let mut w = 1.0;
    for i in 0..c.num_ret() {
        if c.is_rel(i) {
            sum += c.rels[i] as f64 * w;
        }
        w *= p;
    }
    (1.0 - p) * sum
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    // Moffat and Zobel (2008): RBP = (1 - p) * sum_{i>=1} r_i * p^(i-1); the residual
    // of a ranking of depth d is what unjudged documents in the top d could still add
    // plus p^d for everything below d.

    #[test]
    fn label_gain_rbp_by_hand() {
        // ranx's rbp.5: the labels of relevant documents are the gains, not rescaled:
        // 0.5 * (2 + 0.25 * 1); unjudged and non-relevant gain 0
        let v = eval("rbp.5", &[2, 0, 1, -1], &[2, 1, 0])[0];
        assert_eq!(v, 0.5 * (2.0 + 0.25));
        // at level 2 only the label 2 counts
        let v = eval("rbp.5-l2", &[2, 0, 1], &[2, 1, 0])[0];
        assert_eq!(v, 0.5 * 2.0);
        // p = 0.9 by default
        let v = eval("rbp_label", &[3], &[3])[0];
        assert!((v - 0.3).abs() < 1e-15, "{v}");
    }

    #[test]
    fn binary_rbp_by_hand() {
        // p = 0.5, relevant at ranks 1, 3, 4: 0.5 * (1 + 0.25 + 0.125) = 0.6875
        let v = eval("RBP(rel=1,p=0.5)", &[1, 0, 2, 1, 0], &[2, 1, 1, 0, 0])[0];
        assert_eq!(v, 0.6875);
        // the relevance level applies: with rel=2 only rank 3 counts: 0.5 * 0.25
        let v = eval("RBP(rel=2,p=0.5)", &[1, 0, 2, 1, 0], &[2, 1, 1, 0, 0])[0];
        assert_eq!(v, 0.125);
        // p = 0.8 (the default), relevant at rank 2: 0.2 * 0.8 = 0.16
        let v = eval("rbp_bin", &[0, 1], &[1])[0];
        assert!((v - 0.16).abs() < 1e-15, "{v}");
    }

    #[test]
    fn trec_eval_rbp_by_hand() {
        // binary labels keep gains 0/1: p = 0.5, relevant at ranks 1 and 3
        let v = eval("rbp.p=0.5", &[1, 0, 1], &[1, 1, 0])[0];
        assert_eq!(v, 0.5 * (1.0 + 0.25));
        // graded, labels 0..2 rescaled to gains 0, 0.5, 1; ranking 2,0,1 at p = 0.8:
        // 0.2 * (1 + 0.64 * 0.5) = 0.264
        let v = eval("rbp.p=0.8", &[2, 0, 1], &[2, 1, 0])[0];
        assert!((v - 0.264).abs() < 1e-15, "{v}");
        // the default p is 0.9: 0.1 * 1
        let v = eval("rbp", &[1], &[1])[0];
        assert!((v - 0.1).abs() < 1e-15, "{v}");
        // labels 0..4 without a judged 0: the range is still 0..4, so label 2 gains
        // 0.5: p = 0.5, ranking 2 -> 0.5 * 0.5
        let v = eval("rbp.p=0.5", &[2], &[2, 4])[0];
        assert_eq!(v, 0.25);
    }

    #[test]
    fn trec_eval_rbp_user_gains() {
        // gains already in [0, 1] are not rescaled: label 1 worth 0.5, p = 0.5 -> 0.25
        let v = eval("rbp.p=0.5,1=0.5", &[1], &[1, 0])[0];
        assert_eq!(v, 0.25);
        // label 2 worth 0.3 but label 3 worth 3: the range 0..3 (label 0 is in
        // trec_eval's table although nobody judged it) rescales 2 -> 0.1, 3 -> 1;
        // ranking 2,3 at p = 0.5: 0.5 * (0.1 + 0.5 * 1) = 0.3
        let v = eval("rbp.p=0.5,2=0.3", &[2, 3], &[3, 2])[0];
        assert!((v - 0.3).abs() < 1e-15, "{v}");
        // a negative user gain moves the minimum: label 1 worth -2, range -2..3, so
        // gains 0 -> 0.4, 1 -> 0, 2 -> 0.8, 3 -> 1; ranking 2,1,0,3 at p = 0.9.
        // trec_eval 10 (`-m rbp.1=-2`, printed with %.17g): 0.18529999999999999, the
        // double nearest 0.1853
        let v = eval("rbp.1=-2", &[2, 1, 0, 3], &[2, 1, 0, 3])[0];
        assert!((v - 0.1853).abs() < 1e-15, "{v}");
    }

    #[test]
    fn residual_by_hand() {
        // p = 0.5, depth 3, unjudged at ranks 2 and 3: 0.5 * (0.5 + 0.25) + 0.5^3
        let v = eval("rbp_resid.p=0.5", &[1, -1, -2], &[1])[0];
        assert_eq!(v, 0.375 + 0.125);
        // nothing unjudged: trec_eval reports 0, not p^d
        assert_eq!(eval("rbp_resid.p=0.5", &[1, 0], &[1, 0])[0], 0.0);
    }
}
