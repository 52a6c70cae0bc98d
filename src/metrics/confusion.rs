//! Confusion-matrix measures of the top k as a retrieved set (beyond trec_eval).
//!
//! At cut-off k the retrieved set is the top min(k, retrieved) documents:
//! TP = relevant in it, FP = the others, FN = R - TP, TN = N - TP - FP - FN with N the
//! number of documents in the collection (`num_docs_in_collection`, trec_eval's -N,
//! required: the evaluator rejects these measures without it). A measure whose
//! denominator is 0 is 0 (sklearn's `zero_division=0`); so are LR+, LR- and the
//! diagnostic odds ratio when they would be infinite, and the prevalence threshold
//! when TPR = FPR.

use super::{rel_in_top, QueryCtx};
use crate::measure::Family;

/// The four counts at one cut-off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Counts {
    pub tp: f64,
    pub fp: f64,
    pub fn_: f64,
    pub tn: f64,
}

impl Counts {
    pub(super) fn at(c: &QueryCtx, k: u64) -> Counts {
        let k = (k.min(usize::MAX as u64) as usize).min(c.num_ret());
        let tp = rel_in_top(c, k) as f64;
        let fp = k as f64 - tp;
        let fn_ = c.num_rel as f64 - tp;
        let tn = (c.num_docs as f64 - tp - fp - fn_).max(0.0);
        Counts { tp, fp, fn_, tn }
    }
}

#[inline]
fn div(a: f64, b: f64) -> f64 {
    if b != 0.0 && (a / b).is_finite() {
        a / b
    } else {
        0.0
    }
}

/// The value of one confusion-matrix family from the counts.
pub(super) fn value(f: Family, m: Counts) -> f64 {
    let Counts { tp, fp, fn_, tn } = m;
    let n = tp + fp + fn_ + tn;
    let tpr = div(tp, tp + fn_);
    let tnr = div(tn, tn + fp);
    let fpr = div(fp, fp + tn);
    let fnr = div(fn_, fn_ + tp);
    let ppv = div(tp, tp + fp);
    let npv = div(tn, tn + fn_);
    use Family::*;
    match f {
        Tpr => tpr,
        Tnr => tnr,
        Ppv => ppv,
        Npv => npv,
        Fnr => fnr,
        Fpr | Fallout => fpr,
        Fdr => div(fp, fp + tp),
        FalseOmissionRate => div(fn_, fn_ + tn),
        LrPos => div(tpr, fpr),
        LrNeg => div(fnr, tnr),
        PrevalenceThreshold => div((tpr * fpr).sqrt() - fpr, tpr - fpr),
        ThreatScore => div(tp, tp + fn_ + fp),
        Prevalence => div(tp + fn_, n),
        Accuracy => div(tp + tn, n),
        BalancedAccuracy => (tpr + tnr) / 2.0,
        Mcc => div(
            tp * tn - fp * fn_,
            ((tp + fp) * (tp + fn_) * (tn + fp) * (tn + fn_)).sqrt(),
        ),
        FowlkesMallows => (ppv * tpr).sqrt(),
        Informedness => tpr + tnr - 1.0,
        Markedness => ppv + npv - 1.0,
        DiagnosticOddsRatio => div(div(tpr, fpr), div(fnr, tnr)),
        _ => 0.0,
    }
}

/// A confusion-matrix family at cut-offs.
pub(super) fn confusion_at(f: Family, c: &QueryCtx, cutoffs: &[u64], out: &mut [f64]) {
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        *o = value(f, Counts::at(c, k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::MeasureSet;
    use crate::metrics::compute;
    use crate::metrics::test_util::levels;

    /// Wikipedia, "Sensitivity and specificity", worked example (faecal occult blood
    /// screening of 2030 people): TP 20, FP 180, FN 10, TN 1820.
    #[test]
    fn wikipedia_worked_example() {
        // 200 retrieved, the first 20 relevant; 30 relevant in all; N = 2030.
        let mut rels = vec![1i64; 20];
        rels.extend(std::iter::repeat_n(0, 180));
        let mut judged = vec![1i64; 30];
        judged.extend(std::iter::repeat_n(0, 180));
        let lv = levels(&judged);
        let c = QueryCtx::new(&rels, &lv, 1, 2030, false);
        assert_eq!(
            Counts::at(&c, 200),
            Counts {
                tp: 20.0,
                fp: 180.0,
                fn_: 10.0,
                tn: 1820.0
            }
        );
        let get = |name: &str| {
            let set = MeasureSet::parse(&[name]).unwrap();
            let mut out = [0.0];
            compute(&set.measures()[0], &c, &mut out);
            out[0]
        };
        // published: sensitivity 66.67%, specificity 91%, PPV 10%, NPV 99.45%,
        // LR+ 7.41, LR- 0.37
        assert!((get("tpr@200") - 2.0 / 3.0).abs() < 1e-12);
        assert!((get("tnr@200") - 0.91).abs() < 1e-12);
        assert!((get("ppv@200") - 0.10).abs() < 1e-12);
        assert!((get("npv@200") - 0.9945).abs() < 5e-5);
        assert!((get("lr+@200") - 7.41).abs() < 5e-3);
        assert!((get("lr-@200") - 0.37).abs() < 5e-3);
        assert!((get("fallout@200") - 0.09).abs() < 1e-12);
        assert!((get("fpr@200") - 0.09).abs() < 1e-12);
        assert!((get("fnr@200") - 1.0 / 3.0).abs() < 1e-12);
        assert!((get("fdr@200") - 0.9).abs() < 1e-12);
        assert!((get("for@200") - 10.0 / 1830.0).abs() < 1e-12);
        assert!((get("accuracy@200") - 1840.0 / 2030.0).abs() < 1e-12);
        assert!((get("prevalence@200") - 30.0 / 2030.0).abs() < 1e-12);
        assert!((get("balanced_accuracy@200") - (2.0 / 3.0 + 0.91) / 2.0).abs() < 1e-12);
        assert!((get("threat_score@200") - 20.0 / 210.0).abs() < 1e-12);
        assert!((get("informedness@200") - (2.0 / 3.0 + 0.91 - 1.0)).abs() < 1e-12);
        assert!((get("markedness@200") - (0.1 + 1820.0 / 1830.0 - 1.0)).abs() < 1e-12);
        assert!((get("fowlkes_mallows@200") - (0.1f64 * 2.0 / 3.0).sqrt()).abs() < 1e-12);
        let dor = (20.0 * 1820.0) / (180.0 * 10.0);
        assert!((get("dor@200") - dor).abs() < 1e-9);
        let mcc = (20.0 * 1820.0 - 180.0 * 10.0) / (200.0f64 * 30.0 * 2000.0 * 1830.0).sqrt();
        assert!((get("mcc@200") - mcc).abs() < 1e-12);
        let (tpr, fpr) = (2.0f64 / 3.0, 0.09f64);
        let pt = ((tpr * fpr).sqrt() - fpr) / (tpr - fpr);
        assert!((get("prevalence_threshold@200") - pt).abs() < 1e-12);
    }

    #[test]
    fn zero_denominators_give_zero() {
        // nothing retrieved: PPV 0/0 -> 0; no relevant: TPR 0/0 -> 0
        let lv = levels(&[0, 0]);
        let c = QueryCtx::new(&[], &lv, 1, 10, false);
        assert_eq!(value(Family::Ppv, Counts::at(&c, 5)), 0.0);
        assert_eq!(value(Family::Tpr, Counts::at(&c, 5)), 0.0);
        assert_eq!(value(Family::LrPos, Counts::at(&c, 5)), 0.0);
        assert_eq!(value(Family::Tnr, Counts::at(&c, 5)), 1.0);
    }
}
