//! Combining per-query values: [`Statistic`] (trec_eval's mean and geometric mean with
//! its 1e-5 floor, sums and counts for the `all` row; median and standard deviation for
//! users), and a seeded percentile-bootstrap confidence interval for the mean.

use crate::error::{Error, Result};

/// trec_eval's floor for geometric means (GMAP): values below it count as 1e-5, so one
/// zero does not make the mean zero.
pub const MIN_GEO_MEAN: f64 = 0.00001;

/// How to combine per-query values into one number: the one statistic type, used by
/// the measure catalogue (each family's `all` value: [`Family::summary_statistic`]),
/// by [`Results`] (the `all` row, [`Results::column_statistic`],
/// [`Results::summaries`]) and by users ([`aggregate`], Python's `aggregate`).
///
/// [`Family::summary_statistic`]: crate::measure::Family::summary_statistic
/// [`Results`]: crate::results::Results
/// [`Results::column_statistic`]: crate::results::Results::column_statistic
/// [`Results::summaries`]: crate::results::Results::summaries
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// Arithmetic mean: the sum in order, divided once by the count (trec_eval's `all`).
    Mean,
    /// exp(mean(ln(max(v, 1e-5)))), trec_eval's gm_map / gm_bpref.
    GeoMean,
    /// Middle value (mean of the two middle values for an even count).
    Median,
    /// Sample standard deviation (divisor n - 1, numpy's `ddof=1`).
    Std,
    /// Population standard deviation (divisor n, numpy's `ddof=0`; ranx's and elinor's).
    StdPop,
    /// Sum in order (the `all` value of counts: num_ret, num_rel, ...).
    Sum,
    /// Number of values (the `all` value of num_q).
    Count,
}

impl Statistic {
    /// Parse `mean`, `gmean` (`geomean`, `gm`), `median`, `std` (sample), `std_pop`
    /// (population), `sum`, `count`.
    pub fn parse(name: &str) -> Result<Statistic> {
        match name {
            "mean" => Ok(Statistic::Mean),
            "gmean" | "geomean" | "gm" => Ok(Statistic::GeoMean),
            "median" => Ok(Statistic::Median),
            "std" => Ok(Statistic::Std),
            "std_pop" => Ok(Statistic::StdPop),
            "sum" => Ok(Statistic::Sum),
            "count" => Ok(Statistic::Count),
            other => Err(Error::Option(format!(
                "unknown statistic '{other}' (mean, gmean, median, std, std_pop, sum, count)"
            ))),
        }
    }

    /// The statistic of `values`, in the order given. NaN when there are no values (or
    /// one, for `Std`), except `Sum` (the empty sum) and `Count` (0).
    ///
    /// `Mean` and `GeoMean` keep trec_eval's order of operations exactly (sum in order,
    /// one division; the geometric mean as exp of that mean of logs), so the `all` row
    /// built from them equals trec_eval's to the last bit. That order is why these are
    /// written here rather than taken from a statistics crate (which may sum pairwise or
    /// compensated, and differ in the last bit).
    pub fn of(self, values: &[f64]) -> f64 {
        let n = values.len();
        match self {
            Statistic::Count => n as f64,
            Statistic::Sum => values.iter().sum(),
            _ if n == 0 => f64::NAN,
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
            Statistic::StdPop => {
                let mean = values.iter().sum::<f64>() / n as f64;
                let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
                (ss / n as f64).sqrt()
            }
        }
    }
}

/// The statistic of `values` (the same as `how.of(values)`).
pub fn aggregate(values: &[f64], how: Statistic) -> f64 {
    how.of(values)
}

/// Upper tail of the standard normal, P(Z > z), through `libm`'s erfc (musl's, within
/// 1 ulp): statrs' `Normal::sf` uses an erfc that is off by up to about 1e-10 relative.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// SplitMix64: a small, well-mixed generator, so that a seed gives the same interval
/// on every platform. Hand-written rather than taken from `rand`: `rand`'s `StdRng`
/// does not promise the same stream across its versions, and the interval a seed gives
/// is part of our interface; the generator is eight lines.
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

/// Linear-interpolation quantile of sorted values (numpy's default method). Hand-written:
/// four lines, where a statistics crate would bring its own conventions to check.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
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
    bootstrap_ci_cancellable(values, confidence, resamples, seed, None)
}

/// [`bootstrap_ci`], stopping with [`Error::Interrupted`] soon after `cancel` is set.
/// NaN values give a NaN interval; a resample count that cannot be allocated is an
/// error, not an abort.
pub fn bootstrap_ci_cancellable(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<(f64, f64)> {
    check_bootstrap(values, confidence, "resamples", resamples)?;
    if values.iter().any(|v| v.is_nan()) {
        // as scipy.stats.bootstrap gives for data holding NaN
        return Ok((f64::NAN, f64::NAN));
    }
    let means = bootstrap_means(values, "resamples", resamples, seed, cancel)?;
    let a = (1.0 - confidence) / 2.0;
    Ok((quantile(&means, a), quantile(&means, 1.0 - a)))
}

/// An error for a confidence level outside (0, 1) (the bootstrap intervals, the t
/// interval, the online arms' differences).
pub(crate) fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 {
        return Ok(());
    }
    Err(Error::Option(format!(
        "confidence must lie strictly between 0 and 1, got {confidence}"
    )))
}

/// An error for a resample count of 0; `name` is the caller's parameter
/// (`resamples`, `n_resamples`).
pub(crate) fn check_resamples(name: &str, n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::Option(format!("{name} must be at least 1")));
    }
    Ok(())
}

fn check_bootstrap(values: &[f64], confidence: f64, name: &str, resamples: usize) -> Result<()> {
    if values.is_empty() {
        return Err(Error::Input("no values to bootstrap".into()));
    }
    check_confidence(confidence)?;
    check_resamples(name, resamples)
}

/// An empty list with room for `len` values kept for `n` resamples (the parameter
/// `name`), or an error asking for fewer: never the allocator's abort of the process
/// (2^63 resamples asked 2^60 bytes of it), nor the kernel's OOM killer. The room is
/// also refused when it passes the memory the system has available: mimalloc reserves
/// address space without committing it, so a reservation of terabytes succeeds and the
/// process is killed as the room fills (`bootstrap_test(x, y, n_resamples=10**13)`
/// was, at 24 GB, after 20 s).
pub(crate) fn resample_room<T>(name: &str, n: usize, len: usize) -> Result<Vec<T>> {
    let refuse = |more: String| {
        Error::Option(format!(
            "{name} = {n} needs more memory than can be had{more}; use fewer"
        ))
    };
    let bytes = len.saturating_mul(std::mem::size_of::<T>()) as u64;
    if let Some(free) = available_memory().filter(|&free| bytes > free) {
        let gb = |b: u64| b as f64 / 1e9;
        return Err(refuse(format!(
            " ({:.1} GB; {:.1} GB available)",
            gb(bytes),
            gb(free)
        )));
    }
    let mut room = Vec::new();
    room.try_reserve_exact(len)
        .map_err(|_| refuse(String::new()))?;
    Ok(room)
}

/// The memory the system has available now (Linux: `MemAvailable` of /proc/meminfo),
/// or `None` where that cannot be read. Read from the file rather than through a crate
/// for one number: no well-kept crate of the field's list gives it without pulling in a
/// system-information library.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The sorted means of `resamples` resamples of `values` with replacement (the seeded
/// SplitMix64 stream of [`bootstrap_ci`]); `name` is the caller's parameter, for
/// messages.
fn bootstrap_means(
    values: &[f64],
    name: &str,
    resamples: usize,
    seed: u64,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<f64>> {
    let n = values.len();
    let mut rng = SplitMix64(seed);
    let mut means: Vec<f64> = resample_room(name, resamples, resamples)?;
    for r in 0..resamples {
        if r % 1024 == 0 && cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let s: f64 = (0..n).map(|_| values[rng.below(n)]).sum();
        means.push(s / n as f64);
    }
    means.sort_by(f64::total_cmp);
    Ok(means)
}

/// The percentile and the bias-corrected and accelerated (BCa; Efron and Tibshirani
/// 1993, 14.3) bootstrap intervals of the mean, from the same resamples as
/// [`bootstrap_ci`] (whose interval is the first). BCa as `scipy.stats.bootstrap(...,
/// method="BCa")` computes it: z0 from the share of resampled means below the mean
/// (ties counted half), the acceleration from the jackknife means. Values without
/// spread give the value itself, twice, for both.
pub fn bootstrap_intervals(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Result<((f64, f64), (f64, f64))> {
    intervals_named(values, confidence, "resamples", resamples, seed)
}

/// [`bootstrap_intervals`], its messages naming the resample count `name`.
pub(crate) fn intervals_named(
    values: &[f64],
    confidence: f64,
    name: &str,
    resamples: usize,
    seed: u64,
) -> Result<((f64, f64), (f64, f64))> {
    check_bootstrap(values, confidence, name, resamples)?;
    if values.iter().any(|v| v.is_nan()) {
        return Ok(((f64::NAN, f64::NAN), (f64::NAN, f64::NAN)));
    }
    let means = bootstrap_means(values, name, resamples, seed, None)?;
    let a = (1.0 - confidence) / 2.0;
    let percentile = (quantile(&means, a), quantile(&means, 1.0 - a));
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let theta = sum / n;
    // jackknife means and their spread
    let jack: Vec<f64> = values.iter().map(|v| (sum - v) / (n - 1.0)).collect();
    let jack_mean = jack.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for j in &jack {
        let u = (n - 1.0) * (jack_mean - j);
        num += u * u * u;
        den += u * u;
    }
    if den == 0.0 || values.len() < 2 {
        return Ok((percentile, (theta, theta)));
    }
    let accel = (num / (n * n * n)) / 6.0 / (den / (n * n)).powf(1.5);
    let below = means.iter().filter(|m| **m < theta).count();
    let at_most = means.iter().filter(|m| **m <= theta).count();
    let share = (below + at_most) as f64 / (2.0 * means.len() as f64);
    use statrs::distribution::{ContinuousCDF, Normal};
    let z = |p: f64| Normal::standard().inverse_cdf(p);
    let cdf = |x: f64| 1.0 - normal_sf(x);
    let z0 = z(share);
    let alpha = (1.0 - confidence) / 2.0;
    let adjusted = |za: f64| {
        let num = z0 + za;
        cdf(z0 + num / (1.0 - accel * num))
    };
    let (a1, a2) = (adjusted(z(alpha)), adjusted(-z(alpha)));
    if !(a1.is_finite() && a2.is_finite()) {
        return Ok((percentile, (f64::NAN, f64::NAN)));
    }
    Ok((percentile, (quantile(&means, a1), quantile(&means, a2))))
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
        // population: divisor n (numpy ddof=0); one value has spread 0
        assert!((aggregate(&w, Statistic::StdPop) - 2.0).abs() < 1e-12);
        assert_eq!(aggregate(&[1.0], Statistic::StdPop), 0.0);
        assert!(aggregate(&[], Statistic::StdPop).is_nan());
        assert!(Statistic::parse("mode").is_err());
    }

    #[test]
    fn statistics_match_numpy_and_scipy() {
        // Reference values from numpy 2.4.6 / scipy 1.17.1 for
        // v = [0.2, 0.0, 0.5, 0.1, 0.35, 1.0, 0.75]:
        //   np.mean(v) = 0.41428571428571426
        //   scipy.stats.gmean(np.maximum(v, 1e-5)) = 0.08260730855039204
        //   np.median(v) = 0.35, np.std(v, ddof=1) = 0.36137963154449937
        //   np.sum(v) = 2.9, v.size = 7
        let v = [0.2, 0.0, 0.5, 0.1, 0.35, 1.0, 0.75];
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-15 * b.abs().max(1.0);
        assert!(close(Statistic::Mean.of(&v), 0.41428571428571426));
        assert!(close(Statistic::GeoMean.of(&v), 0.08260730855039204));
        assert_eq!(Statistic::Median.of(&v), 0.35);
        assert!(close(Statistic::Std.of(&v), 0.36137963154449937));
        assert!(close(Statistic::Sum.of(&v), 2.9));
        assert_eq!(Statistic::Count.of(&v), 7.0);
        // the empty sum and count are 0; the other statistics of nothing are NaN
        assert_eq!(Statistic::Sum.of(&[]), 0.0);
        assert_eq!(Statistic::Count.of(&[]), 0.0);
        assert!(Statistic::GeoMean.of(&[]).is_nan());
        assert!(Statistic::Median.of(&[]).is_nan());
        for (name, stat) in [
            ("mean", Statistic::Mean),
            ("gmean", Statistic::GeoMean),
            ("gm", Statistic::GeoMean),
            ("median", Statistic::Median),
            ("std", Statistic::Std),
            ("std_pop", Statistic::StdPop),
            ("sum", Statistic::Sum),
            ("count", Statistic::Count),
        ] {
            assert_eq!(Statistic::parse(name).unwrap(), stat);
        }
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
