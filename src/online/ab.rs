//! Metrics per variant (A/B arm) and the difference of each arm from the baseline: a
//! percentile-bootstrap interval over sessions and its p-value.
//!
//! Resample r draws, from stream r of the seed (the compare module's ChaCha8 streams, so
//! the numbers do not depend on the thread count), as many sessions with replacement
//! from each arm as it has (as counts per session), and recomputes every metric of each arm from the drawn
//! sessions' numerators and denominators (a cluster bootstrap: a session's SERPs stay
//! together). The interval holds the (1 - confidence)/2 and (1 + confidence)/2 quantiles
//! of the resampled differences (numpy's linear quantiles); the two-sided p-value is
//! min(1, 2 · (min(#{d* <= 0}, #{d* >= 0}) + 1) / (R + 1)), which is below 1 - confidence
//! exactly when the interval leaves out 0. Resamples where a metric is undefined (an
//! arm without SERPs drawn) are left out of that metric's quantiles and count.

use crate::compare::rng::{below, Streams};
use crate::error::{Error, Result};

use super::metrics::SessionTable;

/// How to compare arms.
#[derive(Clone, Debug)]
pub struct Resampling {
    /// Bootstrap resamples (default 1000).
    pub n_resamples: usize,
    /// The seed (default 42).
    pub seed: u64,
    /// The interval's confidence (default 0.95).
    pub confidence: f64,
}

impl Default for Resampling {
    fn default() -> Self {
        Resampling {
            n_resamples: 1000,
            seed: 42,
            confidence: 0.95,
        }
    }
}

/// One arm against the baseline on one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The metric.
    pub metric: String,
    /// The baseline arm.
    pub baseline: String,
    /// The other arm.
    pub variant: String,
    /// The arm's value less the baseline's.
    pub difference: f64,
    /// The bootstrap interval of the difference.
    pub ci: (f64, f64),
    /// The two-sided bootstrap p-value.
    pub pvalue: f64,
}

/// A difference, its interval and its p-value.
pub(crate) type ArmDifference = (f64, (f64, f64), f64);

/// The differences of `arm` from `base` (session lists into `table`), with their
/// intervals and p-values, one per metric.
pub(crate) fn compare_arms(
    table: &SessionTable,
    base: &[usize],
    arm: &[usize],
    observed: (&[f64], &[f64]),
    how: &Resampling,
) -> Result<Vec<ArmDifference>> {
    if how.n_resamples == 0 {
        return Err(Error::Option("n_resamples must be at least 1".into()));
    }
    if !(how.confidence > 0.0 && how.confidence < 1.0) {
        return Err(Error::Option(format!(
            "confidence must lie strictly between 0 and 1, got {}",
            how.confidence
        )));
    }
    let w = table.metrics.len();
    let streams = Streams::new(how.seed);
    let rows: Vec<u64> = (0..how.n_resamples as u64).collect();
    let diffs: Vec<Vec<f64>> = crate::parallel::map_with(
        &rows,
        || (Vec::new(), Vec::new()),
        |(counts, scratch): &mut (Vec<u32>, Vec<f64>), &r| {
            let mut rng = streams.stream(r);
            // a resample as counts: draw |arm| sessions of the arm with replacement
            let mut resample = |from: &[usize], counts: &mut Vec<u32>, scratch: &mut Vec<f64>| {
                counts.clear();
                counts.resize(from.len(), 0);
                for _ in 0..from.len() {
                    counts[below(&mut rng, from.len())] += 1;
                }
                table.values(from, Some(counts), scratch)
            };
            let a = resample(base, counts, scratch);
            let b = resample(arm, counts, scratch);
            b.iter().zip(&a).map(|(x, y)| x - y).collect()
        },
    );
    let alpha = (1.0 - how.confidence) / 2.0;
    Ok((0..w)
        .map(|m| {
            let difference = observed.1[m] - observed.0[m];
            let mut d: Vec<f64> = diffs
                .iter()
                .map(|row| row[m])
                .filter(|v| !v.is_nan())
                .collect();
            if d.is_empty() || difference.is_nan() {
                return (difference, (f64::NAN, f64::NAN), f64::NAN);
            }
            d.sort_by(f64::total_cmp);
            let q = |p| crate::stats::quantile(&d, p);
            let low = d.iter().filter(|v| **v <= 0.0).count();
            let high = d.iter().filter(|v| **v >= 0.0).count();
            let p = (2.0 * (low.min(high) as f64 + 1.0) / (d.len() as f64 + 1.0)).min(1.0);
            (difference, (q(alpha), q(1.0 - alpha)), p)
        })
        .collect())
}
