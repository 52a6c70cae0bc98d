//! The ranking read as a scored classifier of relevance.
//!
//! * pair_accuracy (ir_measures' `Accuracy`): of the (relevant, non-relevant) pairs of
//!   retrieved documents in the top k, the share ranked relevant first. A document not
//!   in the qrels counts with label 0, as in ir_measures.
//! * auroc (sklearn's `roc_auc_score`), recall_at_precision and precision_at_recall
//!   (torchmetrics' `RecallAtFixedPrecision` / `PrecisionAtFixedRecall`, checked
//!   against sklearn's `precision_recall_curve`): on the retrieved *judged* documents
//!   (label >= 0; unjudged ones are left out), run scores against label >= the
//!   relevance level; tied scores form one threshold, as in sklearn.
//!
//! Queries with one class only, where the peers fail or give NaN: 0 without a relevant
//! document, 1 (pair_accuracy, auroc) without a non-relevant one.

use super::QueryCtx;

/// ir_measures' Accuracy over the top `k`: 1 - (non-relevant above each relevant,
/// summed) / (non-relevant x relevant), in its order of operations.
pub(super) fn pair_accuracy(c: &QueryCtx, k: usize) -> f64 {
    let (mut nonrel, mut rel, mut misordered) = (0u64, 0u64, 0u64);
    for &r in c.rels.iter().take(k) {
        // ir_measures: qrels.get(doc, 0) >= rel
        let label = if r == super::NONPOOL { 0 } else { r };
        if label >= c.rel_level && r != super::UNJUDGED {
            rel += 1;
            misordered += nonrel;
        } else {
            nonrel += 1;
        }
    }
    if rel == 0 {
        0.0
    } else if nonrel == 0 {
        1.0
    } else {
        1.0 - misordered as f64 / (nonrel as f64 * rel as f64)
    }
}

/// The ROC / precision-recall points of (score, positive) pairs given by score
/// descending (ties adjacent): cumulative (true, false) positives at each distinct
/// score, best first, and the totals (P, N).
pub(crate) fn thresholds(scored: impl Iterator<Item = (f64, bool)>) -> (Vec<(u64, u64)>, u64, u64) {
    let (mut tp, mut fp) = (0u64, 0u64);
    let mut pts = Vec::new();
    let mut last: Option<f64> = None;
    for (s, positive) in scored {
        if last.is_some_and(|l| l != s) {
            pts.push((tp, fp));
        }
        last = Some(s);
        if positive {
            tp += 1;
        } else {
            fp += 1;
        }
    }
    if last.is_some() {
        pts.push((tp, fp));
    }
    (pts, tp, fp)
}

/// The query's judged retrieved documents as (score, relevant), ranking order.
fn query_thresholds(c: &QueryCtx) -> (Vec<(u64, u64)>, u64, u64) {
    thresholds(
        c.rels
            .iter()
            .zip(c.scores)
            .filter(|(&r, _)| r >= 0)
            .map(|(&r, &s)| (s, r >= c.rel_level)),
    )
}

/// Area under the ROC curve of a query, or with `max_fpr < 1` sklearn's
/// McClish-standardized partial area up to that false positive rate.
pub(super) fn auroc(c: &QueryCtx, max_fpr: f64) -> f64 {
    roc_area(query_thresholds(c), max_fpr)
}

/// [`auroc`] of the points of [`thresholds`]: 0 without a positive, 1 without a
/// negative.
pub(crate) fn roc_area((pts, pos, neg): (Vec<(u64, u64)>, u64, u64), max_fpr: f64) -> f64 {
    if pos == 0 {
        return 0.0;
    }
    if neg == 0 {
        return 1.0;
    }
    if max_fpr >= 1.0 {
        // Mann-Whitney: pairs ordered right, ties half, counted exactly in halves
        let (mut twice_u, mut prev) = (0u128, (0u64, 0u64));
        for &(tp, fp) in &pts {
            let (dtp, dfp) = (tp - prev.0, fp - prev.1);
            twice_u += u128::from(dfp) * u128::from(2 * prev.0 + dtp);
            prev = (tp, fp);
        }
        return twice_u as f64 / (2.0 * pos as f64 * neg as f64);
    }
    let (p, n) = (pos as f64, neg as f64);
    let mut area = 0.0;
    let (mut x0, mut y0) = (0.0, 0.0);
    for &(tp, fp) in &pts {
        let (x1, y1) = (fp as f64 / n, tp as f64 / p);
        if x1 > max_fpr {
            // the curve interpolated at max_fpr (x0 <= max_fpr < x1)
            let y = y0 + (y1 - y0) * (max_fpr - x0) / (x1 - x0);
            area += (max_fpr - x0) * (y0 + y) / 2.0;
            break;
        }
        area += (x1 - x0) * (y0 + y1) / 2.0;
        (x0, y0) = (x1, y1);
    }
    let (min_area, max_area) = (0.5 * max_fpr * max_fpr, max_fpr);
    0.5 * (1.0 + (area - min_area) / (max_area - min_area))
}

/// For each minimum precision x: the highest recall at a threshold whose precision is
/// at least x (0 if none).
pub(super) fn recall_at_precision(c: &QueryCtx, levels: &[f64], out: &mut [f64]) {
    let (pts, pos, _) = query_thresholds(c);
    for (o, &x) in out.iter_mut().zip(levels) {
        *o = if pos == 0 {
            0.0
        } else {
            pts.iter()
                .filter(|&&(tp, fp)| tp as f64 / (tp + fp) as f64 >= x)
                .map(|&(tp, _)| tp as f64 / pos as f64)
                .fold(0.0, f64::max)
        };
    }
}

/// For each minimum recall x: the highest precision at a threshold whose recall is at
/// least x (0 if none).
pub(super) fn precision_at_recall(c: &QueryCtx, levels: &[f64], out: &mut [f64]) {
    let (pts, pos, _) = query_thresholds(c);
    for (o, &x) in out.iter_mut().zip(levels) {
        *o = if pos == 0 {
            0.0
        } else {
            pts.iter()
                .filter(|&&(tp, _)| tp as f64 / pos as f64 >= x)
                .map(|&(tp, fp)| tp as f64 / (tp + fp) as f64)
                .fold(0.0, f64::max)
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::test_util::{eval, eval_scored};
    use crate::metrics::{NONPOOL, UNJUDGED};

    #[test]
    fn pair_accuracy_by_hand() {
        // R N R N N: pairs 2 x 3 = 6; misordered: the second R is below one N
        assert_eq!(
            eval("Accuracy", &[1, 0, 1, 0, -1], &[1, 1, 0, 0])[0],
            1.0 - 1.0 / 6.0
        );
        // top 3: R N R -> 2 pairs, 1 misordered
        assert_eq!(
            eval("pair_accuracy@3", &[1, 0, 1, 0], &[1, 1, 0, 0])[0],
            0.5
        );
        // one class only: our conventions
        assert_eq!(eval("Accuracy", &[0, 0], &[1, 0, 0])[0], 0.0);
        assert_eq!(eval("Accuracy", &[1, 2], &[1, 2])[0], 1.0);
        // rel=2: label 1 is non-relevant
        assert_eq!(eval("Accuracy(rel=2)", &[1, 2], &[1, 2])[0], 0.0);
    }

    /// AUC by its definition: pairs of (positive, negative) judged documents, the
    /// higher-scored positive counting 1, a tie 1/2.
    #[test]
    fn auroc_is_the_mann_whitney_statistic() {
        let ranked = [
            (5.0, 1),
            (4.0, 0),
            (4.0, 2),
            (3.0, NONPOOL),
            (2.0, 0),
            (2.0, UNJUDGED),
            (1.0, 1),
        ];
        // positives 5, 4, 1; negatives 4, 2
        let (pos, neg) = ([5.0, 4.0, 1.0], [4.0, 2.0]);
        let mut u = 0.0;
        for p in pos {
            for n in neg {
                u += if p > n {
                    1.0
                } else if p == n {
                    0.5
                } else {
                    0.0
                };
            }
        }
        let v = eval_scored("AUROC", &ranked, &[])[0];
        assert!((v - u / 6.0).abs() < 1e-15, "{v}");
        // one class: 0 without positives, 1 without negatives
        assert_eq!(eval_scored("auroc", &[(1.0, 0)], &[1])[0], 0.0);
        assert_eq!(
            eval_scored("auroc", &[(1.0, 1), (0.5, NONPOOL)], &[])[0],
            1.0
        );
    }

    #[test]
    fn partial_auroc_by_hand() {
        // scores: P 0.9, N 0.8, P 0.7, N 0.6: ROC (0,0) (0,.5) (.5,.5) (.5,1) (1,1)
        // area up to fpr 0.5: 0.25; McClish: 0.5 (1 + (0.25 - 0.125) / (0.5 - 0.125))
        let r = [(0.9, 1), (0.8, 0), (0.7, 1), (0.6, 0)];
        let v = eval_scored("AUROC(max_fpr=0.5)", &r, &[])[0];
        assert!((v - 0.5 * (1.0 + 0.125 / 0.375)).abs() < 1e-15, "{v}");
        // max_fpr = 1 is the whole area
        assert_eq!(eval_scored("AUROC(max_fpr=1)", &r, &[])[0], 0.75);
        // up to 0.25: interpolated between (0, .5) and (.5, .5): area 0.125
        let v = eval_scored("AUROC(max_fpr=0.25)", &r, &[])[0];
        let (lo, hi) = (0.5 * 0.0625, 0.25);
        assert!(
            (v - 0.5 * (1.0 + (0.125 - lo) / (hi - lo))).abs() < 1e-15,
            "{v}"
        );
    }

    #[test]
    fn fixed_precision_and_recall_by_hand() {
        // P N P N: thresholds (precision, recall): (1, .5) (.5, .5) (2/3, 1) (.5, 1)
        let r = [(0.9, 1), (0.8, 0), (0.7, 1), (0.6, 0)];
        assert_eq!(eval_scored("R@P(0.6)", &r, &[])[0], 1.0);
        assert_eq!(eval_scored("R@P(0.9)", &r, &[])[0], 0.5);
        assert_eq!(eval_scored("recall_at_precision.0.5", &r, &[])[0], 1.0);
        assert_eq!(eval_scored("P@R(0.5)", &r, &[])[0], 1.0);
        assert_eq!(eval_scored("P@R(1)", &r, &[])[0], 2.0 / 3.0);
        // no threshold reaches precision 1 at recall > 0 here: ties make one threshold
        assert_eq!(eval_scored("R@P(1)", &[(1.0, 1), (1.0, 0)], &[])[0], 0.0);
        assert_eq!(eval_scored("P@R(0.5)", &[(1.0, 0)], &[1])[0], 0.0);
    }
}
