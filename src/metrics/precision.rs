//! Precision-like measures: P, recall, relative_P, success, Rprec, Rprec_mult,
//! recip_rank, and the set measures (set_P, set_recall, set_relative_P, set_map,
//! set_F, utility).

use super::{rel_counts_at, rel_in_top, QueryCtx};
use crate::measure::Family;

/// P@k = relevant in top k / k (a short ranking counts as padded with non-relevant).
pub(super) fn precision_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    rel_counts_at(c, cutoffs, out);
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        *o /= k as f64;
    }
}

/// Recall@k = relevant in top k / R (0 when R = 0).
pub(super) fn recall_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    rel_counts_at(c, cutoffs, out);
    for o in out.iter_mut() {
        *o = if c.num_rel > 0 {
            *o / c.num_rel as f64
        } else {
            0.0
        };
    }
}

/// relative_P@k = relevant in top k / min(k, R) (0 when R = 0).
pub(super) fn relative_precision_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    rel_counts_at(c, cutoffs, out);
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let denom = k.min(c.num_rel);
        *o = if denom > 0 { *o / denom as f64 } else { 0.0 };
    }
}

/// success@k = 1 if a relevant document is in the top k.
pub(super) fn success_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    rel_counts_at(c, cutoffs, out);
    for o in out.iter_mut() {
        *o = if *o > 0.0 { 1.0 } else { 0.0 };
    }
}

/// F-measure of the top k with weight `beta`: (1+b^2) P R / (b^2 P + R), where
/// P = hits/k and R = hits/num_rel; 0 when no relevant document is in the top k.
pub(super) fn f_at(c: &QueryCtx, beta: f64, cutoffs: &[u64], out: &mut [f64]) {
    let b2 = beta * beta;
    rel_counts_at(c, cutoffs, out);
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let hits = *o;
        *o = if hits > 0.0 && c.num_rel > 0 {
            let p = hits / k as f64;
            let r = hits / c.num_rel as f64;
            (1.0 + b2) * p * r / (b2 * p + r)
        } else {
            0.0
        };
    }
}

/// Precision after R documents.
pub(super) fn r_precision(c: &QueryCtx) -> f64 {
    if c.num_rel == 0 {
        return 0.0;
    }
    rel_in_top(c, c.num_rel as usize) as f64 / c.num_rel as f64
}

/// Precision at ranks m*R for each multiple m, ranks rounded as trec_eval does
/// (`(long)(m*R + 0.9)`); a rank beyond the ranking divides by the rank.
pub(super) fn r_precision_mult(c: &QueryCtx, mults: &[f64], out: &mut [f64]) {
    for (o, &m) in out.iter_mut().zip(mults) {
        let cut = (m * c.num_rel as f64 + 0.9) as i64;
        *o = if cut <= 0 {
            0.0
        } else {
            let k = cut as usize;
            if k > c.num_ret() {
                c.num_rel_ret as f64 / k as f64
            } else {
                rel_in_top(c, k) as f64 / k as f64
            }
        };
    }
}

/// 1 / rank of the first relevant document within the top `k` (0 if none).
pub(super) fn reciprocal_rank(c: &QueryCtx, k: usize) -> f64 {
    match c.rels.iter().take(k).position(|&r| r >= c.rel_level) {
        Some(i) => 1.0 / (i as f64 + 1.0),
        None => 0.0,
    }
}

/// Measures of the retrieved set as a whole.
pub(super) fn set_measure(f: Family, c: &QueryCtx, params: &[f64]) -> f64 {
    let ret = c.num_ret() as f64;
    let rel = c.num_rel as f64;
    let rel_ret = c.num_rel_ret as f64;
    match f {
        Family::SetP => {
            if c.num_ret() > 0 {
                rel_ret / ret
            } else {
                0.0
            }
        }
        Family::SetRecall => {
            if c.num_rel > 0 {
                rel_ret / rel
            } else {
                0.0
            }
        }
        Family::SetRelativeP => {
            let d = c.num_rel.min(c.num_ret() as u64);
            if d > 0 {
                rel_ret / d as f64
            } else {
                0.0
            }
        }
        Family::SetMap => {
            if c.num_ret() > 0 && c.num_rel > 0 {
                // trec_eval: relret^2 / (ret * rel), products taken exactly
                (c.num_rel_ret * c.num_rel_ret) as f64 / (c.num_ret() as u64 * c.num_rel) as f64
            } else {
                0.0
            }
        }
        Family::SetF => {
            if c.num_ret() > 0 && c.num_rel > 0 && c.num_rel_ret > 0 {
                let p = rel_ret / ret;
                let r = rel_ret / rel;
                let x = params.first().copied().unwrap_or(1.0);
                (x + 1.0) * p * r / (x * p + r)
            } else {
                0.0
            }
        }
        _ => {
            // utility: a*relret + b*nonrelret + c*relnotret + d*nonrelnotret
            let p = |i: usize| params.get(i).copied().unwrap_or(0.0);
            p(0) * rel_ret
                + p(1) * (ret - rel_ret)
                + p(2) * (rel - rel_ret)
                + p(3) * (c.num_docs as f64 + rel_ret - ret - rel)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    const RELS: [i64; 5] = [1, 0, 1, 0, 1]; // relevant at ranks 1, 3, 5
    const JUDGED: [i64; 5] = [1, 1, 1, 0, 0];

    #[test]
    fn precision_worked_example() {
        // Relevant at ranks 1, 3, 5 of 3 relevant: P@3 = 2/3, P@4 = 1/2, P@5 = 3/5.
        assert_eq!(
            eval("P.3,4,5,10", &RELS, &JUDGED),
            [2.0 / 3.0, 0.5, 0.6, 0.3]
        );
        assert_eq!(
            eval("recall.1,3,5", &RELS, &JUDGED),
            [1.0 / 3.0, 2.0 / 3.0, 1.0]
        );
        assert_eq!(eval("Rprec", &RELS, &JUDGED), [2.0 / 3.0]);
        assert_eq!(eval("recip_rank", &[0, 0, 1], &JUDGED), [1.0 / 3.0]);
        assert_eq!(eval("success.1,2,3", &[0, 0, 1], &JUDGED), [0.0, 0.0, 1.0]);
        assert_eq!(eval("relative_P.2", &RELS, &JUDGED), [0.5]);
    }

    #[test]
    fn f_measure_at_k() {
        // top 4 of the worked example: P = 1/2, R = 2/3, F1 = 2PR/(P+R) = 4/7
        let f1 = eval("f1@4", &RELS, &JUDGED)[0];
        assert!((f1 - 4.0 / 7.0).abs() < 1e-15);
        // beta = 2 weighs recall: 5PR/(4P+R) = (5/3)/(8/3) = 5/8
        let f2 = eval("F(beta=2)@4", &RELS, &JUDGED)[0];
        assert!((f2 - 0.625).abs() < 1e-15);
        // beta = 0 is precision
        assert_eq!(eval("F_cut_4(beta=0)", &RELS, &JUDGED), [0.5]);
        // nothing relevant in the top k, or nothing relevant at all
        assert_eq!(eval("f1@1", &[0, 1], &[1]), [0.0]);
        assert_eq!(eval("f1@1", &[0], &[0]), [0.0]);
    }

    #[test]
    fn set_measures() {
        assert_eq!(eval("set_P", &RELS, &JUDGED), [0.6]);
        assert_eq!(eval("set_recall", &RELS, &JUDGED), [1.0]);
        // F1 of P = 0.6, R = 1: 2*0.6/1.6 = 0.75
        assert!((eval("set_F", &RELS, &JUDGED)[0] - 0.75).abs() < 1e-15);
        // utility default 1,-1,0,0: 3 - 2 = 1
        assert_eq!(eval("utility", &RELS, &JUDGED), [1.0]);
        // no relevant document anywhere: defined as 0, not NaN
        assert_eq!(eval("set_F", &[0, 0], &[0, 0]), [0.0]);
        // relevant documents judged, none retrieved: P = R = 0, F is 0 (trec_eval), not 0/0
        assert_eq!(eval("set_F", &[0, 0], &[1, 0]), [0.0]);
    }
}
