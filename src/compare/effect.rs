//! Effect sizes of a paired comparison: the mean difference with its t-based (and
//! optionally percentile-bootstrap) confidence interval, paired Cohen's d_z and Hedges'
//! g_z, and the wins, ties and losses over queries.

use statrs::distribution::ContinuousCDF;
use statrs::function::gamma::ln_gamma;

use super::paired::{differences, mean, variance, Alternative};
use crate::error::{Error, Result};

/// Effect sizes of `x` against `y` (differences `x - y`).
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// mean(x) - mean(y).
    pub mean_diff: f64,
    /// The t-based confidence interval of the mean difference (as
    /// `scipy.stats.ttest_rel(x, y).confidence_interval(confidence)`); the difference
    /// itself, twice, when the differences are constant.
    pub ci: (f64, f64),
    /// The percentile-bootstrap interval of the mean difference, when asked for.
    pub bootstrap_ci: Option<(f64, f64)>,
    /// The BCa bootstrap interval of the mean difference (same resamples), when asked
    /// for.
    pub bca_ci: Option<(f64, f64)>,
    /// Paired Cohen's d_z: mean(d) / sd(d). 0 for identical systems, NaN for a constant
    /// non-zero difference (no spread to scale by).
    pub d_z: f64,
    /// Hedges' g_z: d_z times the exact small-sample correction
    /// J(n - 1) = Γ((n-1)/2) / (sqrt((n-1)/2) Γ((n-2)/2)).
    pub g_z: f64,
    /// Queries where x > y.
    pub wins: usize,
    /// Queries where x == y.
    pub ties: usize,
    /// Queries where x < y.
    pub losses: usize,
}

/// Hedges' correction factor J(df) = Γ(df/2) / (sqrt(df/2) Γ((df-1)/2)), through
/// log-gamma (the gammas overflow beyond df ≈ 340). J(1) = 0: Γ(0) is a pole (R's
/// effectsize and the formula in floating point, Γ(0) = inf, give 0 too), so two
/// queries give g_z = 0.
pub fn hedges_correction(df: f64) -> f64 {
    if df == 1.0 {
        return 0.0;
    }
    if df < 1.0 {
        return f64::NAN;
    }
    (ln_gamma(df / 2.0) - ln_gamma((df - 1.0) / 2.0)).exp() / (df / 2.0).sqrt()
}

/// The t-based confidence interval of a mean difference `mean` with standard error
/// `se` and `df` degrees of freedom at level `confidence`, as scipy's
/// `ttest_rel(...).confidence_interval(confidence)`: two-sided, or one-sided (`Greater`:
/// `(low, inf)`, `Less`: `(-inf, high)`) for a one-sided test. No spread: `(mean,
/// mean)` (the infinite side kept for a one-sided interval).
pub fn t_interval(
    mean: f64,
    se: f64,
    df: f64,
    confidence: f64,
    alternative: Alternative,
) -> Result<(f64, f64)> {
    crate::stats::check_confidence(confidence)?;
    let half = |p: f64| -> Result<f64> {
        if se == 0.0 {
            return Ok(0.0);
        }
        let t = statrs::distribution::StudentsT::new(0.0, 1.0, df)
            .map_err(|e| Error::Input(format!("t distribution: {e}")))?;
        Ok(t.inverse_cdf(p) * se)
    };
    Ok(match alternative {
        Alternative::TwoSided => {
            let h = half(0.5 + confidence / 2.0)?;
            (mean - h, mean + h)
        }
        Alternative::Greater => (mean - half(confidence)?, f64::INFINITY),
        Alternative::Less => (f64::NEG_INFINITY, mean + half(confidence)?),
    })
}

/// Effect sizes of `x` against `y`, with a `confidence` interval (0 < confidence < 1);
/// `bootstrap` = Some((resamples, seed)) adds the percentile and BCa bootstrap
/// intervals ([`crate::stats::bootstrap_intervals`] of the differences).
pub fn effect_size(
    x: &[f64],
    y: &[f64],
    confidence: f64,
    bootstrap: Option<(usize, u64)>,
) -> Result<Effect> {
    crate::stats::check_confidence(confidence)?;
    let d = differences(x, y)?;
    let n = d.len() as f64;
    let (m, v) = (mean(&d), variance(&d));
    let sd = v.sqrt();
    let ci = t_interval(m, sd / n.sqrt(), n - 1.0, confidence, Alternative::TwoSided)?;
    let d_z = if sd == 0.0 {
        if m == 0.0 {
            0.0
        } else {
            f64::NAN
        }
    } else {
        m / sd
    };
    let (bootstrap_ci, bca_ci) = match bootstrap {
        Some((resamples, seed)) => {
            let (p, b) =
                crate::stats::intervals_named(&d, confidence, "n_resamples", resamples, seed)?;
            (Some(p), Some(b))
        }
        None => (None, None),
    };
    Ok(Effect {
        mean_diff: mean(x) - mean(y),
        ci,
        bootstrap_ci,
        bca_ci,
        d_z,
        g_z: d_z * hedges_correction(n - 1.0),
        wins: d.iter().filter(|a| **a > 0.0).count(),
        ties: d.iter().filter(|a| **a == 0.0).count(),
        losses: d.iter().filter(|a| **a < 0.0).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effect_sizes_by_hand() {
        let x = [0.5, 0.7, 0.2, 0.9];
        let y = [0.4, 0.7, 0.3, 0.5];
        let e = effect_size(&x, &y, 0.95, None).unwrap();
        assert_eq!((e.wins, e.ties, e.losses), (2, 1, 1));
        // d = 0.1 0 -0.1 0.4: mean 0.1, sd sqrt(0.14 / 3)
        assert!((e.mean_diff - 0.1).abs() < 1e-15);
        assert!((e.d_z - 0.1 / (0.14f64 / 3.0).sqrt()).abs() < 1e-12);
        // J(3) = Γ(1.5) / (sqrt(1.5) Γ(1)) = (sqrt(pi)/2) / sqrt(1.5)
        let j = std::f64::consts::PI.sqrt() / 2.0 / 1.5f64.sqrt();
        assert!((hedges_correction(3.0) - j).abs() < 1e-13);
        assert!(e.ci.0 < 0.1 && e.ci.1 > 0.1);
        let same = effect_size(&x, &x, 0.95, Some((100, 1))).unwrap();
        assert_eq!((same.d_z, same.g_z, same.ci), (0.0, 0.0, (0.0, 0.0)));
    }
}
