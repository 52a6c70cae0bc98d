//! Counting measures: num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, unj,
//! and beyond trec_eval hits and judged.

use super::{counts_at, rel_counts_at, QueryCtx, NONPOOL, UNJUDGED};
use crate::measure::Family;

/// The integer counts (as f64).
pub(super) fn count(f: Family, c: &QueryCtx, out: &mut [f64]) {
    out[0] = match f {
        Family::NumRet => c.num_ret() as f64,
        Family::NumRel => c.num_rel as f64,
        Family::NumRelRet => c.num_rel_ret as f64,
        _ => c
            .rels
            .iter()
            .filter(|&&r| r >= 0 && r < c.rel_level)
            .count() as f64,
    };
}

/// Fraction of the top k that is unjudged (not in the qrels, or negative label); a
/// ranking shorter than k is padded with judged documents.
pub(super) fn unjudged_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    counts_at(c.rels, cutoffs, |r| r == NONPOOL || r == UNJUDGED, out);
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        *o /= k as f64;
    }
}

/// hits@k: number of relevant documents in the top k.
pub(super) fn hits_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    rel_counts_at(c, cutoffs, out);
}

/// judged@k (ir_measures): fraction of the top min(k, retrieved) documents present in
/// the qrels with any label (negative labels included); 0 for an empty ranking.
pub(super) fn judged_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let n = (k.min(usize::MAX as u64) as usize).min(c.num_ret());
        let judged = c.rels[..n].iter().filter(|&&r| r != NONPOOL).count();
        *o = if n > 0 { judged as f64 / n as f64 } else { 0.0 };
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    /// The whole ranking as a set: ranx's hits / hit_rate and ir_measures' Judged
    /// without a cut-off.
    #[test]
    fn whole_ranking_sets() {
        let rels = [2, -1, 0, -2, 1];
        let judged = [2, 0, 1, 1, -1, 0];
        assert_eq!(eval("set_hits", &rels, &judged), [2.0]);
        assert_eq!(eval("set_hits(rel=2)", &rels, &judged), [1.0]);
        assert_eq!(eval("hit_rate", &rels, &judged), [1.0]);
        assert_eq!(eval("set_success", &[0, -1, -2], &judged), [0.0]);
        // 4 of the 5 retrieved are in the qrels (a negative label too)
        assert_eq!(eval("Judged", &rels, &judged), [0.8]);
        assert_eq!(eval("set_judged", &[], &judged), [0.0]);
    }

    #[test]
    fn hits_and_judged() {
        let rels = [2, -1, 0, -2, 1];
        let judged = [2, 0, 1, 1, -1, 0];
        assert_eq!(eval("hits@1", &rels, &judged), [1.0]);
        assert_eq!(eval("hits.3,5,10", &rels, &judged), [1.0, 2.0, 2.0]);
        assert_eq!(eval("hits(rel=2)@5", &rels, &judged), [1.0]);
        // judged counts every qrels document (negative label too); a short ranking
        // divides by its length
        assert_eq!(eval("Judged@2", &rels, &judged), [0.5]);
        assert_eq!(eval("judged.4,10", &rels, &judged), [0.75, 0.8]);
        assert_eq!(eval("judged_5", &[], &judged), [0.0]);
    }

    #[test]
    fn counts() {
        // ranked: rel 2, not pooled, judged 0, unjudged(-2), rel 1
        let rels = [2, -1, 0, -2, 1];
        let judged = [2, 0, 1, 1, -1, 0];
        assert_eq!(eval("num_ret", &rels, &judged), [5.0]);
        assert_eq!(eval("num_rel", &rels, &judged), [3.0]);
        assert_eq!(eval("num_rel_ret", &rels, &judged), [2.0]);
        assert_eq!(eval("num_nonrel_judged_ret", &rels, &judged), [1.0]);
        // unj: top 5 has 2 unjudged; top 10 pads with judged docs.
        assert_eq!(eval("unj.5,10", &rels, &judged), [0.4, 0.2]);
    }
}
