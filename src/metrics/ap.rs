//! Average-precision family: AP (map, gm_map), AP at cut-offs (map_cut), bpref,
//! infAP, interpolated precision at recall levels and its average (11pt_avg).

use super::{sums_at, QueryCtx, NONPOOL, UNJUDGED};

/// Sum of precision at each relevant retrieved document / number of relevant.
pub(super) fn average_precision(c: &QueryCtx) -> f64 {
    let sum = precision_sum(c);
    if c.num_rel > 0 {
        sum / c.num_rel as f64
    } else {
        0.0
    }
}

/// The sum over the relevant retrieved documents of the precision at their ranks: AP's
/// numerator, and yaap's S.
fn precision_sum(c: &QueryCtx) -> f64 {
    let mut whole = [0.0];
    precision_sums_at(c, &[u64::MAX], &mut whole);
    whole[0]
}

/// [`precision_sum`] of the top k for each cut-off k (ascending), into `out`: AP@k's
/// numerator, whatever it is divided by.
fn precision_sums_at(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    let mut rel_so_far = 0u64;
    sums_at(c.pooled_ranks(false), cutoffs, out, |i| {
        c.is_rel(i).then(|| {
            rel_so_far += 1;
            rel_so_far as f64 / (i as f64 + 1.0)
        })
    });
}

/// Robertson's "yet another average precision" (trec_eval 10's yaap, ECIR 2012):
/// ln((1 + S) / (1 + R - S)), S = [`precision_sum`]. S <= R, so the ratio is positive
/// and finite: an empty ranking gives ln(1 / (1 + R)), no relevant document ln 1 = 0.
pub(super) fn yaap(c: &QueryCtx) -> f64 {
    let sum = precision_sum(c);
    ((1.0 + sum) / (1.0 + c.num_rel as f64 - sum)).ln()
}

/// AP over the top k, still divided by all relevant documents (trec_eval's map_cut).
pub(super) fn average_precision_cut(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    precision_sums_at(c, cutoffs, out);
    for o in out.iter_mut() {
        *o = if c.num_rel > 0 {
            *o / c.num_rel as f64
        } else {
            0.0
        };
    }
}

/// AP over the top k divided by min(R, k) (0 when R = 0): the convention of libraries
/// that normalise by the most relevant documents the top k can hold.
pub(super) fn relative_average_precision_cut(c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    precision_sums_at(c, cutoffs, out);
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let d = c.num_rel.min(k);
        *o = if d > 0 { *o / d as f64 } else { 0.0 };
    }
}

/// Precision at each relevant retrieved document, with its recall: (recall, precision).
fn recall_precision_points(c: &QueryCtx) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    if c.num_rel == 0 {
        return out;
    }
    let mut rel_so_far = 0u64;
    for i in c.pooled_ranks(false) {
        if c.is_rel(i) {
            rel_so_far += 1;
            out.push((
                rel_so_far as f64 / c.num_rel as f64,
                rel_so_far as f64 / (i as f64 + 1.0),
            ));
        }
    }
    out
}

/// Interpolated precision at recall levels, the textbook definition: the highest
/// precision at any rank whose recall is at least the level (0 if recall never gets
/// there). trec_eval's iprec_at_recall rounds the level to a rank first.
pub(super) fn interpolated_precision_standard(c: &QueryCtx, levels: &[f64], out: &mut [f64]) {
    let pts = recall_precision_points(c);
    for (o, &t) in out.iter_mut().zip(levels) {
        *o = pts
            .iter()
            .filter(|(r, _)| *r >= t)
            .map(|(_, p)| *p)
            .fold(0.0, f64::max);
    }
}

/// 11-point interpolated AP as in PASCAL VOC 2007: the mean of the interpolated
/// precision at recall 0, 0.1, ..., 1.
pub(super) fn eleven_point_voc(c: &QueryCtx) -> f64 {
    let levels: Vec<f64> = (0..=10).map(|i| i as f64 / 10.0).collect();
    let mut out = [0.0; 11];
    interpolated_precision_standard(c, &levels, &mut out);
    out.iter().sum::<f64>() / 11.0
}

/// Binary preference (Buckley and Voorhees 2004), trec_eval's variant.
pub(super) fn bpref(c: &QueryCtx) -> f64 {
    let num_nonrel: u64 = c
        .levels
        .iter()
        .filter(|(l, _)| *l < c.rel_level)
        .map(|(_, n)| n)
        .sum();
    let mut nonrel_so_far = 0u64;
    let mut sum = 0.0;
    for i in c.pooled_ranks(false) {
        let r = c.rels[i];
        if r == NONPOOL || r == UNJUDGED {
            continue;
        }
        if r >= 0 && r < c.rel_level {
            nonrel_so_far += 1;
        } else if nonrel_so_far > 0 {
            sum += 1.0 - nonrel_so_far.min(c.num_rel) as f64 / num_nonrel.min(c.num_rel) as f64;
        } else {
            sum += 1.0;
        }
    }
    if c.num_rel > 0 {
        sum / c.num_rel as f64
    } else {
        sum
    }
}

const INFAP_EPSILON: f64 = 0.00001;

/// Inferred AP (Yilmaz and Aslam, CIKM 2006), as computed by trec_eval.
pub(super) fn inf_ap(c: &QueryCtx) -> f64 {
    let mut nonrel_so_far = 0i64;
    let mut rel_so_far = 0i64;
    let mut pool_unjudged_so_far = 0i64;
    let mut inf_ap = 0.0;
    for j in c.pooled_ranks(false) {
        let r = c.rels[j];
        if r == NONPOOL {
            continue;
        }
        if r == UNJUDGED {
            pool_unjudged_so_far += 1;
            continue;
        }
        if r >= 0 && r < c.rel_level {
            nonrel_so_far += 1;
        } else {
            rel_so_far += 1;
            if j == 0 {
                inf_ap += 1.0;
            } else {
                let fj = j as f64;
                inf_ap += 1.0 / (fj + 1.0)
                    + (fj / (fj + 1.0))
                        * ((rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) as f64 / fj)
                        * (((rel_so_far - 1) as f64 + INFAP_EPSILON)
                            / ((rel_so_far - 1 + nonrel_so_far) as f64 + 2.0 * INFAP_EPSILON));
            }
        }
    }
    if c.num_rel > 0 {
        inf_ap / c.num_rel as f64
    } else {
        inf_ap
    }
}

/// Visit interpolated precision at each recall fraction (recall cut-offs are
/// `round(p * R)` documents, trec_eval 10; with `nine`, trec_eval 9's `(long)(p * R +
/// 0.9)`, kept to the bit with its rounding: 0.7 * 3 + 0.9 is 2.9999999999999996,
/// so recall 0.7 of 3 relevant documents is reached at the second, as in pytrec_eval
/// and ranx). `visit(index, value)` is called for every fraction, in descending index
/// order.
fn interpolated(c: &QueryCtx, fractions: &[f64], nine: bool, mut visit: impl FnMut(usize, f64)) {
    // An empty ranking (a judged query missing from the run, with -c): trec_eval prints
    // 0 for it, except under -J, where its 0/0 gives NaN.
    if c.num_ret() == 0 && !c.judged_only {
        for i in (0..fractions.len()).rev() {
            visit(i, 0.0);
        }
        return;
    }
    let cutoffs: Vec<i64> = fractions
        .iter()
        .map(|&p| {
            let at = p * c.num_rel as f64;
            if nine {
                (at + 0.9) as i64
            } else {
                at.round() as i64
            }
        })
        .collect();
    let num_rel_ret = c.num_rel_ret as i64;
    let mut cur: isize = cutoffs.len() as isize - 1;
    while cur >= 0 && cutoffs[cur as usize] > num_rel_ret {
        cur -= 1;
    }
    let mut int_precis = num_rel_ret as f64 / c.num_ret() as f64;
    let mut rel_so_far = num_rel_ret;
    // trec_eval walks up from the bottom of the ranking, taking the precision at every
    // rank i (rel_so_far / i) into the running maximum. Between two relevant documents
    // rel_so_far stays put while i falls, so the precision grows (a correctly rounded
    // division is monotone): the stretch's largest value, the only one the maximum can
    // take from it, is at the relevant document that ends it. Only those are visited.
    for p in c.pooled_ranks(false).rev() {
        if rel_so_far == 0 {
            break;
        }
        if c.rels[p] >= c.rel_level {
            let precis = rel_so_far as f64 / (p + 1) as f64;
            if int_precis < precis {
                int_precis = precis;
            }
            while cur >= 0 && rel_so_far == cutoffs[cur as usize] {
                visit(cur as usize, int_precis);
                cur -= 1;
            }
            rel_so_far -= 1;
        }
    }
    while cur >= 0 {
        visit(cur as usize, int_precis);
        cur -= 1;
    }
}

/// Interpolated precision at recall fractions (iprec_at_recall).
pub(super) fn interpolated_precision(c: &QueryCtx, fractions: &[f64], nine: bool, out: &mut [f64]) {
    out.fill(0.0);
    interpolated(c, fractions, nine, |i, v| out[i] = v);
}

/// Average interpolated precision over recall fractions (11pt_avg).
pub(super) fn eleven_point(c: &QueryCtx, fractions: &[f64], nine: bool) -> f64 {
    let mut sorted: Vec<f64> = fractions.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut sum = 0.0;
    interpolated(c, &sorted, nine, |_, v| sum += v);
    sum / fractions.len() as f64
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    #[test]
    fn trec_eval_9_and_10_rank_a_recall_level_differently() {
        // 13 relevant, found at ranks 1 and 6: level 0.1 is 1.3 relevant documents,
        // the first by trec_eval 10 (round), the second by trec_eval 9 ((long)(x + 0.9))
        let ranking = [1, 0, 0, 0, 0, 1];
        let judged = [1; 13];
        assert_eq!(eval("iprec_at_recall_0.10", &ranking, &judged)[0], 1.0);
        let nine = eval("iprec_at_recall_0.10(trec_eval9=1)", &ranking, &judged)[0];
        assert!((nine - 2.0 / 6.0).abs() < 1e-15);
        // 3 relevant at ranks 1, 3, 6: level 0.7 is 2.1 documents, the second for both
        // (trec_eval 9's 0.7 * 3 + 0.9 falls just below 3), where the textbook's recall
        // >= 0.7 needs the third
        let (ranking, judged) = ([1, 0, 1, 0, 0, 1], [1, 1, 1]);
        for name in ["iprec_at_recall_0.70", "iprec_at_recall_0.70(trec_eval9=1)"] {
            assert!((eval(name, &ranking, &judged)[0] - 2.0 / 3.0).abs() < 1e-15);
        }
        assert_eq!(eval("iprec_0.7", &ranking, &judged)[0], 0.5);
    }

    #[test]
    fn ap_worked_example() {
        // Relevant at ranks 1, 3, 5 of 3 relevant: AP = (1 + 2/3 + 3/5) / 3.
        let ap = eval("map", &[1, 0, 1, 0, 1], &[1, 1, 1, 0, 0])[0];
        assert!((ap - (1.0 + 2.0 / 3.0 + 0.6) / 3.0).abs() < 1e-15);
        assert!((ap - 0.756).abs() < 1e-3);
        // map_cut at 3: (1 + 2/3) / 3
        let c = eval("map_cut.3", &[1, 0, 1, 0, 1], &[1, 1, 1, 0, 0])[0];
        assert!((c - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-15);
        // a relevant document never retrieved lowers AP
        let ap = eval("map", &[1], &[1, 1])[0];
        assert_eq!(ap, 0.5);
        // divided by min(R, k) instead of R: at 2, (1) / 2; at 3, (1 + 2/3) / 3
        let v = eval(
            "relative_map_cut.2,3,10",
            &[1, 0, 1, 0, 1],
            &[1, 1, 1, 0, 0],
        );
        assert_eq!(v[0], 0.5);
        assert!((v[1] - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-15);
        assert!((v[2] - (1.0 + 2.0 / 3.0 + 0.6) / 3.0).abs() < 1e-15);
        // a query judged but with nothing relevant scores 0, never 0 / 0
        assert_eq!(eval("relative_map_cut.10", &[0, 0], &[0, 0]), [0.0]);
    }

    #[test]
    fn eleven_point_voc_worked_example() {
        // Relevant at ranks 1, 3, 5 of 3: (recall, precision) = (1/3, 1), (2/3, 2/3),
        // (1, 3/5). Interpolated: 1 at recall 0..0.3, 2/3 at 0.4..0.6, 3/5 at 0.7..1.
        let (rels, judged) = ([1, 0, 1, 0, 1], [1, 1, 1, 0, 0]);
        let ip = eval("iprec.0,0.3,0.4,0.6,0.7,1", &rels, &judged);
        assert_eq!(ip, [1.0, 1.0, 2.0 / 3.0, 2.0 / 3.0, 0.6, 0.6]);
        let ap = eval("ap_11pt", &rels, &judged)[0];
        assert!((ap - (4.0 + 2.0 + 2.4) / 11.0).abs() < 1e-15);
        // recall 1 never reached: 0 there
        assert_eq!(eval("iprec.1", &[1, 0], &[1, 1]), [0.0]);
        // exact recall levels count: R = 10, 3 relevant found reaches 0.3
        let mut r10 = vec![1i64; 3];
        r10.extend([0; 7]);
        assert_eq!(eval("iprec.0.3", &r10, &[1; 10]), [1.0]);
    }

    #[test]
    fn bpref_counts_judged_nonrelevant_above() {
        // ranks: rel, nonrel, rel; R = 2, N = 1: (1 + (1 - 1/1)) / 2 = 0.5
        assert_eq!(eval("bpref", &[1, 0, 1], &[1, 1, 0])[0], 0.5);
        // unjudged documents are ignored
        assert_eq!(eval("bpref", &[1, -1, -2, 1], &[1, 1, 0])[0], 1.0);
    }

    #[test]
    fn interpolated_precision_takes_max_to_the_right() {
        // rel at 1 and 3 of 2 relevant: recall .5 at rank 1 (P=1), 1.0 at rank 3 (P=2/3)
        let v = eval("iprec_at_recall.0,.5,1", &[1, 0, 1], &[1, 1])[..].to_vec();
        assert_eq!(v, [1.0, 1.0, 2.0 / 3.0]);
    }
}
