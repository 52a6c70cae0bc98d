//! Expected reciprocal rank (Chapelle, Metzler, Zhang and Grinspan 2009) and its
//! normalised form nERR (ERR over the ERR of the ideal ranking), at cut-offs.

use super::QueryCtx;

/// Chapelle et al. (2009) stop probability of a label: (2^g - 1) / 2^gmax, labels
/// above gmax counting as gmax, labels <= 0 (and unjudged documents) as 0.
#[inline]
fn stop_prob(label: i64, gmax: f64) -> f64 {
    if label <= 0 {
        return 0.0;
    }
    let g = (label as f64).min(gmax);
    (g.exp2() - 1.0) / gmax.exp2()
}

/// ERR over the first `k` labels of `labels`.
fn err_of(labels: impl Iterator<Item = i64>, gmax: f64, k: u64) -> f64 {
    let mut err = 0.0;
    let mut not_stopped = 1.0;
    for (i, l) in labels.take(k.min(usize::MAX as u64) as usize).enumerate() {
        let r = stop_prob(l, gmax);
        if r != 0.0 {
            err += not_stopped * r / (i as f64 + 1.0);
            not_stopped *= 1.0 - r;
        }
    }
    err
}

/// The judged labels of the query, best first (the ideal ranking).
fn ideal_labels<'a>(c: &'a QueryCtx) -> impl Iterator<Item = i64> + 'a {
    c.levels
        .iter()
        .rev()
        .flat_map(|&(l, n)| std::iter::repeat_n(l, n.min(usize::MAX as u64) as usize))
}

/// ERR at cut-offs.
pub(super) fn err(c: &QueryCtx, gmax: f64, cutoffs: &[u64], out: &mut [f64]) {
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        *o = err_of(c.rels.iter().copied(), gmax, k);
    }
}

/// nERR at cut-offs: ERR@k / ERR@k of the ideal ranking (0 when that is 0).
pub(super) fn nerr(c: &QueryCtx, gmax: f64, cutoffs: &[u64], out: &mut [f64]) {
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        let ideal = err_of(ideal_labels(c), gmax, k);
        *o = if ideal > 0.0 {
            err_of(c.rels.iter().copied(), gmax, k) / ideal
        } else {
            0.0
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::eval;

    #[test]
    fn err_by_hand() {
        // gmax 1: R(1) = 1/2. Relevant at ranks 1 and 3:
        // ERR = 1/2 + (1/2)(1)(1/2)/3 = 1/2 + 1/12
        let v = eval("err_cut_10(gmax=1)", &[1, 0, 1], &[1, 1, 0])[0];
        assert!((v - (0.5 + 1.0 / 12.0)).abs() < 1e-15);
        // ir_measures' ERR is gdeval's (gmax 4): R(1) = 1/16
        let r: f64 = 1.0 / 16.0;
        let v = eval("ERR(gmax=4)@10", &[1, 0, 1], &[1, 1, 0])[0];
        assert!((v - (r + (1.0 - r) * r / 3.0)).abs() < 1e-15);
        // cut-off 1 stops after the first document
        assert_eq!(eval("err_cut_1(gmax=1)", &[1, 0, 1], &[1])[0], 0.5);
        // labels above gmax count as gmax; negative and unjudged count as 0
        assert_eq!(eval("err_cut_1(gmax=1)", &[3], &[3])[0], 0.5);
        assert_eq!(eval("err_cut_2(gmax=1)", &[-2, -1], &[-1])[0], 0.0);
    }

    #[test]
    fn chapelle_err_by_hand() {
        // Chapelle et al. (2009), eq. 4: ERR = sum_r (1/r) R_r prod_{i<r} (1 - R_i) with
        // R = (2^g - 1) / 2^gmax. Grades 4,0,2 at gmax 4 (their 5-point scale):
        // R = 15/16, 0, 3/16 -> ERR = 15/16 + (1/16)(1)(3/16)/3 = 241/256 exactly
        let v = eval("err_cut_3(gmax=4)", &[4, 0, 2], &[4, 2, 1, 0])[0];
        assert_eq!(v, 241.0 / 256.0);
        // at k = 1 only the first document counts: 15/16
        assert_eq!(eval("err_cut_1(gmax=4)", &[4, 0, 2], &[4])[0], 15.0 / 16.0);
    }

    #[test]
    fn nerr_by_hand() {
        // ideal of the judgments {4,2,1,0} at k = 3 is 4,2,1:
        // 15/16 + (1/16)(3/16)/2 + (1/16)(13/16)(1/16)/3 = 11605/12288, so
        // nERR@3 of 4,0,2 = (241/256) / (11605/12288) = 11568/11605
        let v = eval("nerr_cut_3(gmax=4)", &[4, 0, 2], &[4, 2, 1, 0])[0];
        assert!((v - 11568.0 / 11605.0).abs() < 1e-15, "{v}");
        // the ideal is cut at k too: nERR@1 of 2 = (3/16) / (15/16) = 0.2
        let v = eval("nerr_cut_1(gmax=4)", &[2, 4], &[4, 2])[0];
        assert!((v - 0.2).abs() < 1e-15, "{v}");
        // a perfect ranking scores 1, nothing relevant judged scores 0
        let judged = [2, 1, 0, 1];
        assert_eq!(eval("nerr_cut_3(gmax=2)", &[2, 1, 1], &judged)[0], 1.0);
        assert_eq!(eval("nerr_cut_3(gmax=2)", &[0, 0], &[0])[0], 0.0);
    }

    #[test]
    fn default_gmax_is_the_largest_label() {
        // without gmax the query's largest label (here 2) is gmax: R(2) = 3/4
        assert_eq!(eval("err_cut_1", &[2], &[2, 1])[0], 0.75);
    }
}
