//! C/W/L user models (Moffat et al.: a user reads down the ranking and continues
//! from rank i to i + 1 with probability C(i)), as cwl_eval 1.0.12 computes them
//! (Azzopardi, Thomas and Moffat, SIGIR 2019; `cwl/ruler/measures/*.py`).
//!
//! Like cwl_eval, every model looks at the first [`CWL_DEPTH`] ranks: the ranking is
//! cut there, or padded with documents of gain 0. Every document costs 1 (cwl_eval
//! without a cost file). From the continuation vector C (one value per rank):
//! W(i) = Π_{j<i} C(j) / Σ_k Π_{j<k} C(j) (the chance of examining rank i, as a share
//! of the expected depth), L(i) = Π_{j<i} C(j) (1 − C(i)) (the chance of stopping at i),
//! and the five numbers cwl_eval prints: EU = Σ W(i) g(i) (expected utility per
//! document: the rate), ETU = Σ L(i) Σ_{j<=i} g(j), EC = Σ W(i) c(i), ETC =
//! Σ L(i) Σ_{j<=i} c(j), ED = 1 / W(1) (expected depth). A measure's value is its EU
//! unless its `stat` option picks another (`INST(T=3,stat=ETC)`); `stat=ResEU` and
//! the other residuals are cwl_eval's `-r`: the same statistic when every document
//! absent from the qrels, and every rank past the end of the ranking, gains 1 (its
//! "best case", continuation recomputed), minus the value above.
//!
//! Gains: cwl_eval reads the qrels' labels as gains (which must lie in [0, 1]; the
//! evaluator refuses larger labels, see `gain_overflow`); `rel=N` makes them binary
//! (label >= N gains 1) and `max_rel=M` (with `min_rel`, default 0) scales them to
//! (clamp(label, min_rel, M) − min_rel) / (M − min_rel): ir_measures' two ways. A
//! negative label counts as 0 (ir_measures'); a document absent from the qrels gains 0
//! (cwl_eval's "worst case", no residuals).

use super::{QueryCtx, NONPOOL, UNJUDGED};
use crate::measure::{Family, Measure, CWL_DEPTH};

/// How labels become gains ([module docs](self)).
#[derive(Clone, Copy, Debug)]
enum Scale {
    /// The label itself (cwl_eval).
    Label,
    /// 1 for a label >= the level, else 0 (ir_measures' `rel=N`).
    Binary(i64),
    /// From [min, max] to [0, 1] (ir_measures' `min_rel`, `max_rel`).
    Range(f64, f64),
}

impl Scale {
    fn of(m: &Measure, c: &QueryCtx) -> Scale {
        if m.opts.iter().any(|(n, _)| n == "max_rel") {
            Scale::Range(m.opt("min_rel", 0.0), m.opt("max_rel", 1.0))
        } else if m.rel_level.is_some() {
            Scale::Binary(c.rel_level)
        } else {
            Scale::Label
        }
    }

    #[inline]
    fn gain(self, r: i64) -> f64 {
        if r == NONPOOL {
            return 0.0;
        }
        // a negative label (UNJUDGED) is 0, as ir_measures clips it
        let label = if r == UNJUDGED { 0 } else { r.max(0) };
        match self {
            Scale::Label => label as f64,
            Scale::Binary(level) => f64::from(u8::from(label >= level)),
            Scale::Range(lo, hi) => ((label as f64).max(lo).min(hi) - lo) / (hi - lo),
        }
    }
}

/// Whether a C/W/L measure reads labels as gains unchanged (neither `rel` nor
/// `max_rel`): then every label must lie in [0, 1].
pub(super) fn labels_are_gains(m: &Measure) -> bool {
    m.rel_level.is_none() && !m.opts.iter().any(|(n, _)| n == "max_rel")
}

/// Compute a C/W/L measure for one query: one value per cut-off (or one).
pub(super) fn cwl(m: &Measure, c: &QueryCtx, out: &mut [f64]) {
    let scale = Scale::of(m, c);
    let mut gains = [0.0f64; CWL_DEPTH];
    for (g, &r) in gains.iter_mut().zip(c.rels) {
        *g = scale.gain(r);
    }
    let stat = m.opt("stat", 0.0) as usize;
    // the residuals' best case: unjudged documents and the padding gain 1
    let best = (stat >= 5).then(|| {
        let mut best = [1.0f64; CWL_DEPTH];
        for ((b, &g), &r) in best.iter_mut().zip(&gains).zip(c.rels) {
            if r != NONPOOL {
                *b = g;
            }
        }
        best
    });
    let mut cont = [0.0f64; CWL_DEPTH];
    let mut value = |k: u64| {
        continuation(m, k, &gains, &mut cont);
        let worst = statistics(&cont, &gains);
        match &best {
            None => worst[stat],
            Some(best) => {
                continuation(m, k, best, &mut cont);
                statistics(&cont, best)[stat - 5] - worst[stat - 5]
            }
        }
    };
    match m.cutoffs() {
        [] => out[0] = value(0),
        cuts => {
            for (o, &k) in out.iter_mut().zip(cuts) {
                *o = value(k);
            }
        }
    }
}

/// cwl_eval's `c_vector` of each model, for cut-off (or K) `k`, into `cont`. Ranks are
/// 0-based here (rank = i + 1); the expressions keep cwl_eval's order of operations.
fn continuation(m: &Measure, k: u64, gains: &[f64; CWL_DEPTH], cont: &mut [f64; CWL_DEPTH]) {
    use Family::*;
    let t = m.opt("T", 1.0);
    // positions before rank k - 1 (P, NERR8, NERR9: continue from ranks 1..k-1)
    let before = |i: usize| (i as u64).saturating_add(1) < k;
    let mut cum = 0.0;
    match m.family {
        CwlP => {
            for (i, x) in cont.iter_mut().enumerate() {
                *x = f64::from(u8::from(before(i)));
            }
        }
        CwlRr => {
            // continue until the first document with a positive gain
            let first = gains.iter().position(|&g| g > 0.0).unwrap_or(CWL_DEPTH);
            for (i, x) in cont.iter_mut().enumerate() {
                *x = f64::from(u8::from(i < first));
            }
        }
        CwlAp => {
            // C(i) = S(i + 1) / S(i) with S(i) = Σ_{j>=i} g(j) / rank(j); 0 when no
            // gain is left below rank i, and at the last rank
            let mut suffix = [0.0f64; CWL_DEPTH + 1];
            for i in (0..CWL_DEPTH).rev() {
                suffix[i] = suffix[i + 1] + gains[i] / (i as f64 + 1.0);
            }
            for (i, x) in cont.iter_mut().enumerate() {
                let (top, bot) = (suffix[i + 1], suffix[i]);
                *x = if i + 1 < CWL_DEPTH && top > 0.0 {
                    top / bot
                } else {
                    0.0
                };
            }
        }
        CwlRbp => cont.fill(m.opt("p", 0.9)),
        Inst => {
            for (i, (x, &g)) in cont.iter_mut().zip(gains).enumerate() {
                cum += g;
                let ti = t - cum;
                let r = i as f64 + 1.0;
                let q = (r + t + ti - 1.0) / (r + t + ti);
                *x = q * q;
            }
        }
        Insq => {
            for (i, x) in cont.iter_mut().enumerate() {
                let r = i as f64 + 1.0;
                let q = (r + 2.0 * t - 1.0) / (r + 2.0 * t);
                *x = q * q;
            }
        }
        Bpm | BpmDynamic => {
            // continue while the gain so far is below T and the cost so far (ranks
            // read, unit costs) below K; the dynamic model moves T by
            // hb * (gain - gain_med) after each document that passes the gain test
            // (cwl_eval's cost loop updates T, not K, after the gain loop has ended:
            // hc has no effect)
            let dynamic = m.family == BpmDynamic;
            let (hb, med) = (m.opt("hb", 1.0), m.opt("gain_med", 0.5));
            let mut goal = t;
            let mut gain_ok = true;
            for (i, (x, &g)) in cont.iter_mut().zip(gains).enumerate() {
                cum += g;
                gain_ok = gain_ok && cum < goal;
                if gain_ok && dynamic {
                    goal += hb * (g - med);
                }
                let cost_ok = (i as f64 + 1.0) < k as f64;
                *x = f64::from(u8::from(gain_ok && cost_ok));
            }
        }
        SdcgCut => {
            let ln2 = 2f64.ln();
            for (i, x) in cont.iter_mut().enumerate() {
                let r = i as f64 + 1.0;
                *x = if (i as u64).saturating_add(1) < k {
                    ((r + 1.0).ln() / ln2) / ((r + 2.0).ln() / ln2)
                } else {
                    0.0
                };
            }
        }
        Nerr8Cut => {
            for (i, (x, &g)) in cont.iter_mut().zip(gains).enumerate() {
                *x = if before(i) { 1.0 - g } else { 0.0 };
            }
        }
        Nerr9Cut => {
            for (i, (x, &g)) in cont.iter_mut().zip(gains).enumerate() {
                let r = i as f64 + 1.0;
                *x = if before(i) {
                    (r / (r + 1.0)) * (1.0 - g)
                } else {
                    0.0
                };
            }
        }
        Nerr10 => {
            let p = m.opt("p", 0.9);
            for (x, &g) in cont.iter_mut().zip(gains) {
                *x = p * (1.0 - g);
            }
        }
        Nerr11 => {
            for (i, (x, &g)) in cont.iter_mut().zip(gains).enumerate() {
                let r = i as f64 + 1.0;
                let q = (r + 2.0 * t - 1.0) / (r + 2.0 * t);
                *x = (q * q) * (1.0 - g);
            }
        }
        _ => cont.fill(0.0),
    }
}

/// cwl_eval's five statistics from the continuation vector and the gains (unit
/// costs): [EU, ETU, EC, ETC, ED].
fn statistics(cont: &[f64; CWL_DEPTH], gains: &[f64; CWL_DEPTH]) -> [f64; 5] {
    // examined(i) = Π_{j<i} C(j); once 0 it stays 0 and adds nothing
    let mut examined = 1.0;
    let (mut depth, mut eu, mut ec, mut etu, mut etc) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut cum_gain = 0.0;
    for (i, (&c, &g)) in cont.iter().zip(gains).enumerate() {
        if examined == 0.0 {
            break;
        }
        cum_gain += g;
        depth += examined;
        eu += examined * g;
        ec += examined;
        let stop = examined * (1.0 - c);
        etu += stop * cum_gain;
        etc += stop * (i as f64 + 1.0);
        examined *= c;
    }
    let w1 = 1.0 / depth;
    [eu * w1, etu, ec * w1, etc, 1.0 / w1]
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    // Hand-worked from the C/W/L definitions (W(i) = Π_{j<i} C(j) / Σ_k Π_{j<k} C(j),
    // L(i) = Π_{j<i} C(j) (1 − C(i))) over cwl_eval's 1000 ranks, unit costs.

    #[test]
    fn precision_reads_exactly_k_documents() {
        // P@4 with gains 1,0,1,0: EU = 2/4, ETU = the gain of the top 4, EC = 1,
        // ETC = ED = 4
        let rels = [1, 0, 1, 0, 1];
        close(eval("cwl_P@4", &rels, &[1, 1, 1, 0])[0], 0.5);
        close(eval("cwl_P(stat=ETU)@4", &rels, &[1])[0], 2.0);
        close(eval("cwl_P(stat=EC)@4", &rels, &[1])[0], 1.0);
        close(eval("cwl_P(stat=ETC)@4", &rels, &[1])[0], 4.0);
        close(eval("cwl_P(stat=ED)@4", &rels, &[1])[0], 4.0);
        // a short ranking is padded with gain 0
        close(eval("cwl_P_10", &[1], &[1])[0], 0.1);
    }

    #[test]
    fn reciprocal_rank_stops_at_the_first_gain() {
        // first relevant at rank 3: W = 1/3 on ranks 1..3, EU = 1/3, ED = 3, ETU = 1
        let rels = [0, -1, 1, 1];
        close(eval("cwl_rr", &rels, &[1, 1, 0])[0], 1.0 / 3.0);
        close(eval("cwl_rr(stat=ED)", &rels, &[1])[0], 3.0);
        close(eval("cwl_rr(stat=ETU)", &rels, &[1])[0], 1.0);
        // nothing relevant: the user reads all 1000 ranks
        close(eval("cwl_rr(stat=ED)", &[0, 0], &[1, 0])[0], 1000.0);
        close(eval("cwl_rr", &[0, 0], &[1, 0])[0], 0.0);
    }

    #[test]
    fn ap_is_precision_averaged_over_the_relevant_retrieved() {
        // relevant at ranks 1 and 3: (1 + 2/3) / 2, whatever the unretrieved ones
        close(
            eval("cwl_ap", &[1, 0, 1, 0], &[1, 1, 1, 1, 0])[0],
            (1.0 + 2.0 / 3.0) / 2.0,
        );
    }

    #[test]
    fn rbp_is_normalised_over_the_depth() {
        // p = 0.5: W(i) = 0.5^i / (2 (1 - 0.5^1000)) = 0.5^i up to rounding
        close(eval("cwl_rbp(p=0.5)", &[1, 0, 1], &[1, 1])[0], 0.5 + 0.125);
        // p = 1: every one of the 1000 ranks weighs 1/1000
        close(eval("cwl_rbp(p=1)", &[1, 0, 1], &[1, 1])[0], 2.0 / 1000.0);
    }

    #[test]
    fn insq_and_inst_by_hand() {
        // INSQ T = 1: C(i) = ((i + 1) / (i + 2))^2, so Π_{j<i} C(j) = (2 / (i + 1))^2
        // (i from 1): W(1) = 1 / Σ_{i=1}^{1000} 4 / (i + 1)^2
        let depth: f64 = (1..=1000).map(|i| 4.0 / ((i + 1) as f64).powi(2)).sum();
        close(eval("INSQ", &[1], &[1])[0], 1.0 / depth);
        close(eval("INSQ(stat=ED)", &[1], &[1])[0], depth);
        // INST T = 1, first document gains 1: T_1 = 0, C(1) = ((1 + 1 + 0 - 1) /
        // (1 + 1 + 0))^2 = 1/4; then T_i = 0, C(i) = (i / (i + 1))^2, so
        // Π_{j<i} C(j) = 1/4 * (2 / i)^2 = 1 / i^2 for i >= 2
        let depth: f64 = 1.0 + (2..=1000).map(|i| 1.0 / (i as f64).powi(2)).sum::<f64>();
        close(eval("INST(T=1)", &[1], &[1])[0], 1.0 / depth);
    }

    #[test]
    fn bpm_stops_at_the_goal_or_the_budget() {
        // T = 2, K = 10, gains 1,0,1,...: the gain reaches 2 at rank 3, so ranks 1..3
        // are read: EU = 2/3
        let rels = [1, 0, 1, 1, 1];
        close(eval("BPM(T=2)@10", &rels, &[1])[0], 2.0 / 3.0);
        close(eval("BPM(T=2,K=10)", &rels, &[1])[0], 2.0 / 3.0);
        // K = 2: the budget ends first (ranks 1 and 2)
        close(eval("bpm_2(T=2)", &rels, &[1])[0], 0.5);
        // gains 1,1,0,1: static T = 2 stops at rank 2 (gain 2); dynamic (hb = 1,
        // gain_med = 0.5) moves T to 2.5 after rank 1, 3 after rank 2, 2.5 after rank 3,
        // and stops at rank 4 (gain 3 >= 2.5)
        let rels = [1, 1, 0, 1, 1];
        close(eval("BPM(T=2)@10", &rels, &[1])[0], 1.0);
        close(eval("BPM_dynamic(T=2)@10", &rels, &[1])[0], 3.0 / 4.0);
        close(eval("BPM_dynamic(T=2,hc=7)@10", &rels, &[1])[0], 3.0 / 4.0);
    }

    #[test]
    fn sdcg_is_dcg_over_the_ideal_of_k_full_gains() {
        let ideal: f64 = (1..=3).map(|i| 1.0 / ((i + 1) as f64).log2()).sum();
        close(eval("SDCG@3", &[1, 0, 1, 1], &[1])[0], (1.0 + 0.5) / ideal);
        // graded: max_rel = 2 scales label 1 to 0.5
        close(
            eval("SDCG(max_rel=2)@3", &[2, 1], &[2, 1])[0],
            (1.0 + 0.5 / 3f64.log2()) / ideal,
        );
    }

    #[test]
    fn residuals_count_unjudged_and_missing_ranks_as_gain_1() {
        // P@4 over 1, unjudged, 0 (2 ranks short): best case 1, 1, 0, 1 -> 3/4 against
        // 1/4; the user reads 4 documents either way
        let rels = [1, -1, 0];
        close(eval("cwl_P(stat=ResEU)@4", &rels, &[1, 0])[0], 0.5);
        close(eval("cwl_P(stat=ResETU)@4", &rels, &[1, 0])[0], 2.0);
        close(eval("cwl_P(stat=ResED)@4", &rels, &[1, 0])[0], 0.0);
        // RR over 0, unjudged: the best case stops at rank 2 (EU 1/2, depth 2) instead
        // of reading all 1000 ranks (EU 0)
        close(eval("cwl_rr(stat=ResEU)", &[0, -1], &[1, 0])[0], 0.5);
        close(
            eval("cwl_rr(stat=ResED)", &[0, -1], &[1, 0])[0],
            2.0 - 1000.0,
        );
    }

    #[test]
    fn inst_with_a_tiny_goal_is_refused() {
        // i + T would round to i and the continuation to 0/0
        let set = crate::measure::MeasureSet::parse(&["INST(T=1e-20)"]);
        assert!(set.is_err());
        assert!(crate::measure::MeasureSet::parse(&["INST(T=1e-6)"]).is_ok());
    }

    #[test]
    fn nerr_by_hand() {
        // NERR8@3, gains 0.5, 0.5, 1: C = 0.5, 0.5, 0 -> examined 1, 0.5, 0.25;
        // EU = (0.5 + 0.25 + 0.25) / 1.75
        let rels = [1, 1, 2];
        close(
            eval("NERR8(max_rel=2)@3", &rels, &[2, 1])[0],
            (0.5 + 0.25 + 0.25) / 1.75,
        );
        // NERR9@2: C(1) = 1/2 * 0.5, then 0: examined 1, 0.25
        close(
            eval("NERR9(max_rel=2)@2", &rels, &[2, 1])[0],
            (0.5 + 0.25 * 0.5) / 1.25,
        );
        // NERR10 p = 0.5, a fully relevant first document stops the user there
        close(eval("NERR10(p=0.5)", &[1, 1], &[1])[0], 1.0);
        close(eval("NERR11(stat=ED)", &[1, 1], &[1])[0], 1.0);
    }

    #[test]
    fn gains_binary_scaled_and_negative() {
        // rel=2: label 1 gains 0, label 3 gains 1; a negative label counts as 0
        close(eval("cwl_P(rel=2)@2", &[1, 3], &[1, 3])[0], 0.5);
        close(eval("cwl_P(rel=0)@2", &[-2, -1], &[0])[0], 0.5);
        // min_rel = 1, max_rel = 3: label 2 -> 0.5, label 0 -> 0 (clamped to 1)
        close(
            eval("cwl_P(min_rel=1,max_rel=3)@2", &[2, 0], &[2, 0])[0],
            0.25,
        );
    }
}
