//! The DCG family: every measure that sums gains discounted by rank, all on the one
//! gain model of gain.rs.
//!
//! * trec_eval: ndcg, dcg and ideal_dcg (user gains `ndcg.1=3`), ndcg_cut (linear
//!   gains, ideal = the top k of the judged documents), ndcg_rel, Rndcg, G and binG;
//! * beyond trec_eval: dcg's gN options, dcg_cut, ndcg_gain / ndcg_gain_cut (`gN=x` gains),
//!   dcg_burges / ndcg_burges (2^label - 1), and Jarvelin and Kekalainen's original
//!   DCG with log base b.
//!
//! The discount is log2(rank + 1) (0-based `discount(i)`); loops keep trec_eval's order
//! of floating-point operations.

use super::gain::Gains;
use super::{discount, sums_at, QueryCtx, Ranks, NONPOOL};

/// DCG of the ranking at each cut-off (`u64::MAX` for the whole ranking).
pub(super) fn dcg(c: &QueryCtx, gains: &Gains, cutoffs: &[u64], out: &mut [f64]) {
    sums_at(gaining_ranks(c, gains), cutoffs, out, |i| {
        let g = gains.gain(c.rels[i]);
        (g != 0.0).then(|| g / discount(i))
    });
}

/// The ranks whose documents may have a gain: the pooled ones, unless the table gives
/// unpooled documents a gain.
fn gaining_ranks<'a>(c: &QueryCtx<'a>, gains: &Gains) -> Ranks<'a> {
    c.pooled_ranks(gains.gain(NONPOOL) != 0.0)
}

/// DCG of the ideal ranking (the judged documents by decreasing gain, positive gains
/// only) at each cut-off; trec_eval's ideal_dcg is the whole ranking's.
pub(super) fn ideal_dcg(gains: &Gains, cutoffs: &[u64], out: &mut [f64]) {
    let mut ideal = gains.ideal();
    let mut sum = 0.0;
    let mut next = 0;
    let mut i = 0u64;
    loop {
        while next < cutoffs.len() && i == cutoffs[next] {
            out[next] = sum;
            next += 1;
        }
        if next == cutoffs.len() {
            return;
        }
        let g = ideal.step();
        if g <= 0.0 {
            break;
        }
        sum += g / discount(i as usize);
        i += 1;
    }
    for o in out.iter_mut().skip(next) {
        *o = sum;
    }
}

/// nDCG at cut-offs (`&[u64::MAX]` for the whole ranking): DCG@k / ideal DCG@k, or /
/// the whole ideal DCG when `ideal_all`; 0 when the ideal DCG is 0. trec_eval's ndcg
/// (whole ranking, user gains) and ndcg_cut (linear gains) are this.
pub(super) fn ndcg(c: &QueryCtx, gains: &Gains, cutoffs: &[u64], ideal_all: bool, out: &mut [f64]) {
    dcg(c, gains, cutoffs, out);
    let mut ideal = vec![0.0; cutoffs.len()];
    if ideal_all {
        let mut whole = [0.0];
        ideal_dcg(gains, &[u64::MAX], &mut whole);
        ideal.fill(whole[0]);
    } else {
        ideal_dcg(gains, cutoffs, &mut ideal);
    }
    for (o, i) in out.iter_mut().zip(ideal) {
        *o = if i > 0.0 { *o / i } else { 0.0 };
    }
}

/// nDCG averaged over the relevant documents (trec_eval's experimental ndcg_rel).
pub(super) fn ndcg_rel(c: &QueryCtx, g: &Gains) -> f64 {
    let mut ideal = g.ideal();
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let (mut num_rel, mut num_rel_ret) = (0u64, 0u64);
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = g.gain(c.rels[i]);
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        let ig = ideal.step();
        if ig > 0.0 {
            num_rel += 1;
            idcg += ig / discount(i);
        }
        if rg > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    // the rest of the ranking: its documents without a gain change nothing
    for j in gaining_ranks(c, g).skip_while(|&j| j < i) {
        let rg = g.gain(c.rels[j]);
        if rg != 0.0 {
            dcg += rg / discount(j);
        }
        if rg > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
    }
    i = n;
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            num_rel += 1;
            idcg += ig / discount(i);
        }
        i += 1;
    }
    sum += (num_rel as f64 - num_rel_ret as f64) * dcg / idcg;
    if sum > 0.0 {
        sum / num_rel as f64
    } else {
        0.0
    }
}

/// nDCG averaged at the points where the ideal gain changes (trec_eval's Rndcg).
pub(super) fn r_ndcg(c: &QueryCtx, g: &Gains) -> f64 {
    if c.num_rel == 0 {
        return 0.0;
    }
    let mut ideal = g.ideal();
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let mut old_gain = ideal.gain;
    let mut changes = 0u64;
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = g.gain(c.rels[i]);
        let ig = ideal.step();
        if old_gain != ig {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if rg != 0.0 {
            dcg += rg / discount(i);
        }
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    if i < n {
        // the rest of the ranking: its documents without a gain change nothing
        for j in gaining_ranks(c, g).skip_while(|&j| j < i) {
            let rg = g.gain(c.rels[j]);
            if rg != 0.0 {
                dcg += rg / discount(j);
            }
        }
        i = n;
        if idcg > 0.0 {
            sum += dcg / idcg;
            changes += 1;
        }
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if old_gain != ig {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    sum / changes as f64
}

/// G: gain discounted by log2(2 + cost so far - gain so far), over the ideal gain sum.
pub(super) fn g(c: &QueryCtx, gains: &Gains) -> f64 {
    let mut ideal = gains.ideal();
    let (mut results_g, mut sum_results, mut sum_ideal, mut sum_cost) = (0.0, 0.0, 0.0, 0.0);
    let min_cost = 1.0;
    let n = c.num_ret();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let rg = gains.gain(c.rels[i]);
        sum_results += rg;
        let ig = ideal.step();
        if ig > 0.0 {
            sum_ideal += ig;
        }
        sum_cost += if ig >= min_cost { ig } else { min_cost };
        if rg != 0.0 {
            results_g += rg / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while i < n {
        let rg = gains.gain(c.rels[i]);
        sum_results += rg;
        sum_cost += min_cost;
        if rg != 0.0 {
            results_g += rg / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            sum_ideal += ig;
        }
    }
    if sum_ideal > 0.0 {
        results_g / sum_ideal
    } else {
        0.0
    }
}

/// binG: average over relevant documents of 1 / log2(2 + non-relevant ranked above).
pub(super) fn bin_g(c: &QueryCtx) -> f64 {
    let mut rel_so_far = 0u64;
    let mut sum = 0.0;
    for i in c.pooled_ranks(false) {
        if c.is_rel(i) {
            rel_so_far += 1;
            sum += 1.0 / ((3 + i as u64 - rel_so_far) as f64).log2();
        }
    }
    if rel_so_far > 0 {
        sum / c.num_rel as f64
    } else {
        0.0
    }
}

/// Jarvelin and Kekalainen (2002) DCG with log base `b`: a document at rank i gains
/// label / max(1, log_b i), so ranks up to b are not discounted.
pub(super) fn dcg_jk(c: &QueryCtx, gains: &Gains, b: f64, cutoffs: &[u64], out: &mut [f64]) {
    let ln_b = b.ln();
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let mut sum = 0.0;
        for (i, &r) in c
            .rels
            .iter()
            .take(k.min(usize::MAX as u64) as usize)
            .enumerate()
        {
            let g = gains.gain(r);
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
    }

    #[test]
    fn ndcg_linear_gains() {
        // ranked labels 3,2,3,0,0,1,2,2,3,0; judged labels the same multiset
        let rels = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0];
        let dcg: f64 = rels
            .iter()
            .enumerate()
            .map(|(i, &r)| r as f64 / (i as f64 + 2.0).log2())
            .sum();
        let mut ideal = rels.to_vec();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f64 = ideal
            .iter()
            .enumerate()
            .map(|(i, &r)| r as f64 / (i as f64 + 2.0).log2())
            .sum();
        let v = eval("ndcg", &rels, &rels)[0];
        assert!((v - dcg / idcg).abs() < 1e-12);
        let v = eval("ndcg_cut.10", &rels, &rels)[0];
        assert!((v - dcg / idcg).abs() < 1e-12);
        // a perfect ranking scores 1
        assert_eq!(eval("ndcg", &ideal, &rels)[0], 1.0);
        assert_eq!(eval("ndcg_cut.3", &ideal, &rels)[0], 1.0);
    }

    #[test]
    fn burges_ndcg_by_hand() {
        // Burges et al. (2005): NDCG@k = N * sum_{j<=k} (2^r(j) - 1) / log2(1 + j).
        // Ranking 2,3,0 with judgments {3,2,1,0}:
        //   DCG@3  = 3/1 + 7/log2 3 + 0           = 7.4165082750
        //   IDCG@3 = 7/1 + 3/log2 3 + 1/log2 4     = 9.3927892607  (ideal 3,2,1)
        //   NDCG@3 = 0.7895959410
        let v = eval("ndcg_burges_cut.3", &[2, 3, 0], &[3, 2, 1, 0])[0];
        assert!((v - 0.789_595_941_0).abs() < 1e-10, "{v}");
        // @1: 3 / 7 (the ideal is cut at k too)
        let v = eval("ndcg_burges_cut.1", &[2, 3, 0], &[3, 2, 1, 0])[0];
        assert!((v - 3.0 / 7.0).abs() < 1e-15, "{v}");
        // whole ranking: the ideal holds all judged documents, the same 3,2,1 here
        let v = eval("ndcg_burges", &[2, 3, 0], &[3, 2, 1, 0])[0];
        assert!((v - 0.789_595_941_0).abs() < 1e-10, "{v}");
    }

    #[test]
    fn trec_ndcg_ideal_and_user_gains() {
        // ndcg (whole ranking) with two relevant documents judged, one retrieved at
        // rank 2: DCG = 1/log2 3, IDCG = 1 + 1/log2 3 -> 0.3868528072
        let v = eval("ndcg", &[0, 1], &[1, 1, 0])[0];
        assert!((v - 0.386_852_807_2).abs() < 1e-10, "{v}");
        // ndcg_cut.1 cuts the ideal at 1 as well: 0 / 1, and @2: 0.6309 / 1.6309
        assert_eq!(eval("ndcg_cut.1", &[0, 1], &[1, 1, 0]), [0.0]);
        let v = eval("ndcg_cut.2", &[0, 1], &[1, 1, 0])[0];
        assert!((v - 0.386_852_807_2).abs() < 1e-10, "{v}");
        // trec_eval's pairs: label 1 gains 3, so ranking 2,1 scores
        // (2 + 3/log2 3) / (3 + 2/log2 3) = 3.892789 / 4.261860 = 0.9134016
        let v = eval("ndcg.1=3", &[2, 1], &[1, 2])[0];
        assert!((v - 0.913_401_6).abs() < 1e-7, "{v}");
    }
}
