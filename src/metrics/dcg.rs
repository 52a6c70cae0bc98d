//! DCG family beyond trec_eval: DCG and nDCG with linear or exponential (Burges) gains,
//! and Jarvelin and Kekalainen's original DCG with a log base b.
//!
//! Gains come from the labels; a label <= 0 (and every unjudged or unpooled document)
//! gains nothing. The relevance level does not apply (as for trec_eval's ndcg_cut).

use super::QueryCtx;

/// How a label becomes a gain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Gain<'a> {
    /// The label itself (trec_eval, ranx `dcg`/`ndcg`).
    Linear,
    /// 2^label - 1 (Burges et al. 2005; ranx `dcg_burges`, gdeval.pl).
    Exp,
    /// A user gain map `(label, gain)`; other labels gain their value. Gains are
    /// compared as floats (trec_eval compares some of them as integers).
    Map(&'a [(i64, f64)]),
}

impl Gain<'_> {
    #[inline]
    fn of(self, label: i64) -> f64 {
        if label < 0 {
            return 0.0;
        }
        match self {
            Gain::Linear => label as f64,
            Gain::Exp => (label as f64).exp2() - 1.0,
            Gain::Map(m) => m
                .iter()
                .find(|(l, _)| *l == label)
                .map_or(label as f64, |(_, g)| *g),
        }
    }
}

/// The gain map of a measure's `gN=x` options.
pub(super) fn gain_map(opts: &[(String, f64)]) -> Vec<(i64, f64)> {
    opts.iter()
        .filter_map(|(n, g)| {
            n.strip_prefix('g')
                .and_then(|d| d.parse::<i64>().ok())
                .map(|l| (l, *g))
        })
        .collect()
}

use super::discount;

/// DCG of the ranking at each cut-off (`u64::MAX` for the whole ranking).
pub(super) fn dcg_at(c: &QueryCtx, gain: Gain, cutoffs: &[u64], out: &mut [f64]) {
    let mut sum = 0.0;
    let mut next = 0;
    for (i, &r) in c.rels.iter().enumerate() {
        while next < cutoffs.len() && i as u64 == cutoffs[next] {
            out[next] = sum;
            next += 1;
        }
        if next == cutoffs.len() {
            return;
        }
        let g = gain.of(r);
        if g != 0.0 {
            sum += g / discount(i);
        }
    }
    for o in out.iter_mut().skip(next) {
        *o = sum;
    }
}

/// DCG of the ideal ranking (every judged document, highest gain first; only positive
/// gains) at each cut-off.
fn ideal_dcg_at(c: &QueryCtx, gain: Gain, cutoffs: &[u64], out: &mut [f64]) {
    let mut by_gain: Vec<(f64, u64)> = c
        .levels
        .iter()
        .map(|&(l, n)| (gain.of(l), n))
        .filter(|&(g, _)| g > 0.0)
        .collect();
    by_gain.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut sum = 0.0;
    let mut next = 0;
    let mut i = 0u64;
    for (g, count) in by_gain {
        for _ in 0..count {
            while next < cutoffs.len() && i == cutoffs[next] {
                out[next] = sum;
                next += 1;
            }
            if next == cutoffs.len() {
                return;
            }
            sum += g / discount(i as usize);
            i += 1;
        }
    }
    for o in out.iter_mut().skip(next) {
        *o = sum;
    }
}

/// DCG at cut-offs (`&[u64::MAX]` for the whole ranking).
pub(super) fn dcg(c: &QueryCtx, gain: Gain, cutoffs: &[u64], out: &mut [f64]) {
    dcg_at(c, gain, cutoffs, out);
}

/// nDCG at cut-offs: DCG@k / ideal DCG@k (or / the whole ideal DCG when `ideal_all`),
/// 0 when the ideal DCG is 0.
pub(super) fn ndcg(c: &QueryCtx, gain: Gain, cutoffs: &[u64], ideal_all: bool, out: &mut [f64]) {
    dcg_at(c, gain, cutoffs, out);
    let mut ideal = vec![0.0; cutoffs.len()];
    if ideal_all {
        let mut whole = [0.0];
        ideal_dcg_at(c, gain, &[u64::MAX], &mut whole);
        ideal.fill(whole[0]);
    } else {
        ideal_dcg_at(c, gain, cutoffs, &mut ideal);
    }
    for (o, i) in out.iter_mut().zip(ideal) {
        *o = if i > 0.0 { *o / i } else { 0.0 };
    }
}

/// Jarvelin and Kekalainen (2002) DCG with log base `b`: a document at rank i gains
/// label / max(1, log_b i), so ranks up to b are not discounted.
pub(super) fn dcg_jk(c: &QueryCtx, b: f64, cutoffs: &[u64], out: &mut [f64]) {
    let ln_b = b.ln();
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let mut sum = 0.0;
        for (i, &r) in c
            .rels
            .iter()
            .take(k.min(usize::MAX as u64) as usize)
            .enumerate()
        {
            let g = Gain::Linear.of(r);
            if g != 0.0 {
                let rank = (i + 1) as f64;
                sum += g / (rank.ln() / ln_b).max(1.0);
            }
        }
        *o = sum;
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    const JK: [i64; 10] = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0];

    #[test]
    fn jarvelin_kekalainen_worked_example() {
        // Jarvelin & Kekalainen (2002), base 2: DCG at ranks 1..10 of the judgments
        // 3,2,3,0,0,1,2,2,3,0 (published to two decimals).
        let want = [3.0, 5.0, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61];
        let got = eval("dcg_jk.1,2,3,4,5,6,7,8,9,10", &JK, &JK);
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 0.005, "{got:?}");
        }
        // base 3 leaves ranks 1..3 undiscounted
        let got = eval("dcg_jk_3(b=3)", &JK, &JK);
        assert_eq!(got, [8.0]);
    }

    #[test]
    fn linear_and_exponential_gains() {
        // DCG@3 = 3/log2 2 + 2/log2 3 + 3/log2 4
        let want = 3.0 + 2.0 / 3f64.log2() + 1.5;
        assert!((eval("dcg@3", &JK, &JK)[0] - want).abs() < 1e-12);
        // Burges: (2^3-1) + (2^2-1)/log2 3 + (2^3-1)/2
        let want = 7.0 + 3.0 / 3f64.log2() + 3.5;
        assert!((eval("dcg_burges@3", &JK, &JK)[0] - want).abs() < 1e-12);
        // ideal @3 is 3,3,3: 7 + 7/log2 3 + 3.5
        let ideal = 7.0 + 7.0 / 3f64.log2() + 3.5;
        assert!((eval("ndcg_burges@3", &JK, &JK)[0] - want / ideal).abs() < 1e-12);
        // a perfect ranking scores 1; nothing relevant scores 0
        let mut best = JK;
        best.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(eval("ndcg_burges", &best, &JK), [1.0]);
        assert_eq!(eval("ndcg_burges@5", &best, &JK), [1.0]);
        assert_eq!(eval("ndcg_burges@5", &[0, -1], &[0]), [0.0]);
        // unjudged / unpooled documents gain nothing
        assert_eq!(eval("dcg", &[-1, -2, 1], &[1, -1]), [0.5]);
    }

    #[test]
    fn gain_maps_and_ideal_choice() {
        // float gains: label 1 -> 0.5, label 2 -> 2.5, label 3 keeps 3
        let rels = [1, 2, 3];
        let want = 0.5 + 2.5 / 3f64.log2() + 3.0 / 2.0;
        let v = eval("dcg(g1=0.5,g2=2.5)@3", &rels, &rels)[0];
        assert!((v - want).abs() < 1e-12);
        // the ideal orders by gain, not label: with g1 = 5, label 1 comes first
        let v = eval("ndcg(g1=5)@1", &[1, 3], &[1, 3])[0];
        assert_eq!(v, 1.0);
        let v = eval("ndcg(g1=5)@1", &[3, 1], &[1, 3])[0];
        assert!((v - 3.0 / 5.0).abs() < 1e-15);
        // gains closer than 1 are told apart (no integer comparison)
        let v = eval("ndcg(g1=0.3,g2=0.4)@1", &[1, 2], &[1, 2])[0];
        assert!((v - 0.75).abs() < 1e-15);
        // ideal over all judged documents: DCG@1 / whole ideal DCG
        let all = eval("nDCG(ideal_all=1)@1", &[1], &[1, 1])[0];
        assert!((all - 1.0 / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-15);
        assert_eq!(eval("nDCG(ideal_all=0)@1", &[1], &[1, 1])[0], 1.0);
        // without options ndcg_gain_cut equals trec_eval's ndcg_cut
        let jk = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0];
        let a = eval("ndcg_gain_cut.3,10", &jk, &jk);
        let b = eval("ndcg_cut.3,10", &jk, &jk);
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-12));
    }
}
