//! Aggregating per-query values beyond the mean: geometric mean with trec_eval's floor,
//! median, standard deviation, and a seeded percentile-bootstrap confidence interval
//! for the mean.

use crate::error::{Error, Result};

/// trec_eval's floor for geometric means (GMAP).
pub const MIN_GEO_MEAN: f64 = 0.00001;

/// How to combine per-query values into one number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// Arithmetic mean (sum in order, divided once, as trec_eval).
    Mean,
    /// exp(mean(ln(max(v, 1e-5)))), trec_eval's gm_map / gm_bpref.
    GeoMean,
    /// Middle value (mean of the two middle values for an even count).
    Median,
    /// Sample standard deviation (divisor n - 1).
    Std,
}

impl Statistic {
    /// Parse `mean`, `gmean` (`geomean`, `gm`), `median`, `std`.
    pub fn parse(name: &str) -> Result<Statistic> {
        match name {
            "mean" => Ok(Statistic::Mean),
            "gmean" | "geomean" | "gm" => Ok(Statistic::GeoMean),
            "median" => Ok(Statistic::Median),
            "std" => Ok(Statistic::Std),
            other => Err(Error::Option(format!(
                "unknown statistic '{other}' (mean, gmean, median, std)"
            ))),
        }
    }
}

/// The statistic of `values`; NaN when there are none (or one, for `Std`).
pub fn aggregate(values: &[f64], how: Statistic) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    match how {
        Statistic::Mean => values.iter().sum::<f64>() / n as f64,
        Statistic::GeoMean => {
            (values.iter().map(|v| v.max(MIN_GEO_MEAN).ln()).sum::<f64>() / n as f64).exp()
        }
        Statistic::Median => {
            let mut v = values.to_vec();
            v.sort_by(f64::total_cmp);
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        }
        Statistic::Std => {
            if n < 2 {
                return f64::NAN;
            }
            let mean = values.iter().sum::<f64>() / n as f64;
            let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        }
    }
}

/// SplitMix64: a small, well-mixed generator, so that a seed gives the same interval
/// on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// Linear-interpolation quantile of sorted values (numpy's default method).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Percentile-bootstrap confidence interval for the mean: `resamples` resamples of the
/// values with replacement, the interval between the (1 - confidence)/2 and
/// (1 + confidence)/2 quantiles of their means. Same seed, same interval.
pub fn bootstrap_ci(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Result<(f64, f64)> {
    if values.is_empty() {
        return Err(Error::Input("no values to bootstrap".into()));
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(Error::Option(format!(
            "confidence must lie strictly between 0 and 1, got {confidence}"
        )));
    }
    if resamples == 0 {
        return Err(Error::Option("resamples must be at least 1".into()));
    }
    let n = values.len();
    let mut rng = SplitMix64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let s: f64 = (0..n).map(|_| values[rng.below(n)]).sum();
            s / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let a = (1.0 - confidence) / 2.0;
    Ok((quantile(&means, a), quantile(&means, 1.0 - a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        let v = [0.2, 0.0, 0.5, 0.1];
        assert!((aggregate(&v, Statistic::Mean) - 0.2).abs() < 1e-15);
        assert!((aggregate(&v, Statistic::Median) - 0.15).abs() < 1e-15);
        assert_eq!(aggregate(&[3.0, 1.0, 2.0], Statistic::Median), 2.0);
        // sample std of 2, 4, 4, 4, 5, 5, 7, 9 is sqrt(32 / 7)
        let w = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!((aggregate(&w, Statistic::Std) - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // GMAP floors zeros at 1e-5: geometric mean of 0.2, 1e-5, 0.5, 0.1
        let g = (0.2f64 * 1e-5 * 0.5 * 0.1).powf(0.25);
        assert!((aggregate(&v, Statistic::GeoMean) - g).abs() < 1e-12);
        assert!(aggregate(&[], Statistic::Mean).is_nan());
        assert!(aggregate(&[1.0], Statistic::Std).is_nan());
        assert!(Statistic::parse("mode").is_err());
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let v: Vec<f64> = (0..50).map(|i| (i % 7) as f64 / 7.0).collect();
        let mean = aggregate(&v, Statistic::Mean);
        let a = bootstrap_ci(&v, 0.95, 2000, 42).unwrap();
        let b = bootstrap_ci(&v, 0.95, 2000, 42).unwrap();
        assert_eq!(a, b);
        assert!(a.0 < mean && mean < a.1, "{a:?} {mean}");
        let c = bootstrap_ci(&v, 0.95, 2000, 7).unwrap();
        assert_ne!(a, c);
        // a wider confidence gives a wider interval
        let w = bootstrap_ci(&v, 0.99, 2000, 42).unwrap();
        assert!(w.0 <= a.0 && w.1 >= a.1);
        // constant values: the interval is that value
        assert_eq!(bootstrap_ci(&[0.5; 10], 0.9, 100, 1).unwrap(), (0.5, 0.5));
        assert!(bootstrap_ci(&[], 0.9, 100, 1).is_err());
        assert!(bootstrap_ci(&v, 1.0, 100, 1).is_err());
    }
}
