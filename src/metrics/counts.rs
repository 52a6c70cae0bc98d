//! Counting measures: num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, unj.

use super::{QueryCtx, NONPOOL, UNJUDGED};
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
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let unj = c
            .rels
            .iter()
            .take(k as usize)
            .filter(|&&r| r == NONPOOL || r == UNJUDGED)
            .count();
        *o = unj as f64 / k as f64;
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

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
