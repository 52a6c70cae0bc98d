//! Two-way ANOVA without replication (systems x topics): does the system explain the
//! per-query values beyond the topic? As statsmodels' `anova_lm` of
//! `value ~ C(system) + C(topic)` (one value per cell: type I and II sums of squares
//! agree on this balanced design).

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use super::paired::check_finite;
use crate::error::{Error, Result};

/// The ANOVA table.
#[derive(Clone, Debug, PartialEq)]
pub struct Anova2 {
    /// Sums of squares of systems, topics and the residual.
    pub ss: [f64; 3],
    /// Their degrees of freedom: k - 1, n - 1, (k - 1)(n - 1).
    pub df: [f64; 3],
    /// F of systems and of topics (against the residual mean square).
    pub f: [f64; 2],
    /// Their p-values.
    pub pvalue: [f64; 2],
}

/// Two-way ANOVA of `systems` (k rows of n per-query values, the same queries).
pub fn anova2(systems: &[&[f64]]) -> Result<Anova2> {
    let k = systems.len();
    let n = systems.first().map_or(0, |s| s.len());
    if k < 2 || n < 2 {
        return Err(Error::Input(format!(
            "two-way ANOVA needs at least 2 systems and 2 topics, got {k} x {n}"
        )));
    }
    if systems.iter().any(|s| s.len() != n) {
        return Err(Error::Input(
            "the systems have different numbers of values".into(),
        ));
    }
    for (i, s) in systems.iter().enumerate() {
        check_finite(s, &format!("system {i}"))?;
    }
    let (kf, nf) = (k as f64, n as f64);
    let grand: f64 = systems.iter().flat_map(|s| s.iter()).sum::<f64>() / (kf * nf);
    let row_means: Vec<f64> = systems.iter().map(|s| s.iter().sum::<f64>() / nf).collect();
    let col_means: Vec<f64> = (0..n)
        .map(|q| systems.iter().map(|s| s[q]).sum::<f64>() / kf)
        .collect();
    let ss_sys = nf
        * row_means
            .iter()
            .map(|m| (m - grand) * (m - grand))
            .sum::<f64>();
    let ss_top = kf
        * col_means
            .iter()
            .map(|m| (m - grand) * (m - grand))
            .sum::<f64>();
    // the residual directly (not total minus the others: no cancellation)
    let mut ss_err = 0.0;
    for (s, rm) in systems.iter().zip(&row_means) {
        for (v, cm) in s.iter().zip(&col_means) {
            let e = v - rm - cm + grand;
            ss_err += e * e;
        }
    }
    let df = [kf - 1.0, nf - 1.0, (kf - 1.0) * (nf - 1.0)];
    let ms_err = ss_err / df[2];
    let mut f = [0.0; 2];
    let mut pvalue = [1.0; 2];
    for (i, ss) in [ss_sys, ss_top].into_iter().enumerate() {
        f[i] = (ss / df[i]) / ms_err;
        pvalue[i] = if ms_err == 0.0 {
            if ss == 0.0 {
                f[i] = f64::NAN;
                1.0
            } else {
                0.0
            }
        } else {
            FisherSnedecor::new(df[i], df[2])
                .map_err(|e| Error::Input(format!("F distribution: {e}")))?
                .sf(f[i])
        };
    }
    Ok(Anova2 {
        ss: [ss_sys, ss_top, ss_err],
        df,
        f,
        pvalue,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_of_squares_add_up() {
        let a = [0.2, 0.5, 0.9, 0.4];
        let b = [0.3, 0.7, 0.8, 0.6];
        let c = [0.1, 0.4, 0.6, 0.5];
        let r = anova2(&[&a, &b, &c]).unwrap();
        let all: Vec<f64> = a.iter().chain(&b).chain(&c).copied().collect();
        let m = all.iter().sum::<f64>() / 12.0;
        let total: f64 = all.iter().map(|v| (v - m) * (v - m)).sum();
        assert!((r.ss.iter().sum::<f64>() - total).abs() < 1e-12);
        assert_eq!(r.df, [2.0, 3.0, 6.0]);
        assert!(r.pvalue[0] > 0.0 && r.pvalue[0] < 1.0);
    }
}
