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

use super::metrics::{median, Metric, SessionTable};

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
    let arms = [Arm::new(table, base), Arm::new(table, arm)];
    let streams = Streams::new(how.seed);
    let rows: Vec<u64> = (0..how.n_resamples as u64).collect();
    let diffs: Vec<Vec<f64>> = crate::parallel::map_with(
        &rows,
        || (Vec::new(), Vec::new()),
        |(counts, scratch): &mut (Vec<f64>, Vec<f64>), &r| {
            let mut rng = streams.stream(r);
            // a resample as counts: draw |arm| sessions of the arm with replacement
            let mut resample = |a: &Arm, counts: &mut Vec<f64>, scratch: &mut Vec<f64>| {
                let n = a.members.len();
                counts.clear();
                counts.resize(n, 0.0);
                for _ in 0..n {
                    counts[below(&mut rng, n)] += 1.0;
                }
                a.values(counts, scratch)
            };
            let a = resample(&arms[0], counts, scratch);
            let b = resample(&arms[1], counts, scratch);
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

/// One arm's sessions as columns, each distinct numerator or denominator column once
/// (several metrics share the SERP count), so that a resample is a few dot products of
/// its counts with contiguous columns.
struct Arm<'t> {
    table: &'t SessionTable,
    members: &'t [usize],
    columns: Vec<Vec<f64>>,
    /// Per metric, its numerator and denominator columns; `None`: the median.
    parts: Vec<Option<(usize, usize)>>,
}

impl<'t> Arm<'t> {
    fn new(table: &'t SessionTable, members: &'t [usize]) -> Arm<'t> {
        let w = table.metrics.len();
        let mut columns: Vec<Vec<f64>> = Vec::new();
        let mut add = |col: Vec<f64>| match columns.iter().position(|c| *c == col) {
            Some(i) => i,
            None => {
                columns.push(col);
                columns.len() - 1
            }
        };
        let parts = (0..w)
            .map(|m| {
                if table.metrics[m] == Metric::TimeToFirstClick {
                    return None;
                }
                let num = members.iter().map(|&s| table.num[s * w + m]).collect();
                let den = members.iter().map(|&s| table.den[s * w + m]).collect();
                Some((add(num), add(den)))
            })
            .collect();
        Arm {
            table,
            members,
            columns,
            parts,
        }
    }

    /// The metrics over the arm's sessions, each counted `counts[j]` times.
    fn values(&self, counts: &[f64], scratch: &mut Vec<f64>) -> Vec<f64> {
        let sums: Vec<f64> = self.columns.iter().map(|c| dot(counts, c)).collect();
        let median = if self.parts.iter().any(Option::is_none) {
            scratch.clear();
            let t = self.table;
            for (&c, &s) in counts.iter().zip(self.members) {
                let times = &t.ttfc[t.ttfc_ends[s]..t.ttfc_ends[s + 1]];
                for _ in 0..c as usize {
                    scratch.extend_from_slice(times);
                }
            }
            median(scratch)
        } else {
            f64::NAN
        };
        self.parts
            .iter()
            .map(|p| match p {
                None => median,
                Some((_, d)) if sums[*d] == 0.0 => f64::NAN,
                Some((n, d)) => sums[*n] / sums[*d],
            })
            .collect()
    }
}

/// The dot product, in four running sums (the same order every time).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}
