//! Multiple-comparison corrections of a family of p-values, as
//! `statsmodels.stats.multitest.multipletests` computes them (same operations in the
//! same order), and the names of tests and corrections with suggestions for typos.

use crate::error::{Error, Result};

/// A correction of p-values for multiple comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Correction {
    /// No correction.
    None,
    /// Bonferroni: p * m.
    Bonferroni,
    /// Holm's step-down Bonferroni.
    Holm,
    /// Šidák: 1 - (1 - p)^m.
    Sidak,
    /// Holm's step-down with Šidák's adjustment: 1 - (1 - p)^(m - i), cumulative maximum.
    HolmSidak,
    /// Hochberg's step-up (statsmodels' `simes-hochberg`, R's `hochberg`): p (m - i),
    /// cumulative minimum from the largest p-value down.
    Hochberg,
    /// Benjamini-Hochberg false discovery rate.
    BenjaminiHochberg,
    /// Benjamini-Yekutieli false discovery rate (any dependence).
    BenjaminiYekutieli,
}

/// Pick `name` from `choices` (name, value), or an option error that lists them and
/// suggests the nearest.
pub(crate) fn choose<T: Copy>(what: &str, name: &str, choices: &[(&str, T)]) -> Result<T> {
    let key = name.trim().to_ascii_lowercase();
    if let Some((_, v)) = choices.iter().find(|(n, _)| *n == key) {
        return Ok(*v);
    }
    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
    let hint = crate::error::nearest(name, names.iter().copied())
        .map_or_else(String::new, |n| format!("; did you mean '{n}'?"));
    Err(Error::Option(format!(
        "unknown {what} '{name}'{hint} (one of: {})",
        names.join(", ")
    )))
}

impl Correction {
    /// The names (and aliases) a correction is known by.
    pub const NAMES: &'static [(&'static str, Correction)] = &[
        ("none", Correction::None),
        ("bonferroni", Correction::Bonferroni),
        ("holm", Correction::Holm),
        ("sidak", Correction::Sidak),
        ("holm-sidak", Correction::HolmSidak),
        ("hochberg", Correction::Hochberg),
        ("bh", Correction::BenjaminiHochberg),
        ("by", Correction::BenjaminiYekutieli),
        // statsmodels' and R's names
        ("holm_sidak", Correction::HolmSidak),
        ("simes-hochberg", Correction::Hochberg),
        ("fdr_bh", Correction::BenjaminiHochberg),
        ("fdr_by", Correction::BenjaminiYekutieli),
        ("fdr", Correction::BenjaminiHochberg),
    ];

    /// Parse `none`, `bonferroni`, `holm`, `sidak`, `holm-sidak` (`holm_sidak`),
    /// `hochberg` (`simes-hochberg`), `bh` (`fdr_bh`, `fdr`), `by` (`fdr_by`); any letter
    /// case (R's `BH`, `BY`).
    pub fn parse(name: &str) -> Result<Correction> {
        choose("correction", name, Correction::NAMES)
    }

    /// The short name (`"holm"`).
    pub fn name(self) -> &'static str {
        match self {
            Correction::None => "none",
            Correction::Bonferroni => "bonferroni",
            Correction::Holm => "holm",
            Correction::Sidak => "sidak",
            Correction::HolmSidak => "holm-sidak",
            Correction::Hochberg => "hochberg",
            Correction::BenjaminiHochberg => "bh",
            Correction::BenjaminiYekutieli => "by",
        }
    }

    /// The name in words, for captions.
    pub fn label(self) -> &'static str {
        match self {
            Correction::None => "no correction",
            Correction::Bonferroni => "Bonferroni correction",
            Correction::Holm => "Holm's correction",
            Correction::Sidak => "Šidák correction",
            Correction::HolmSidak => "Holm-Šidák correction",
            Correction::Hochberg => "Hochberg's correction",
            Correction::BenjaminiHochberg => "Benjamini-Hochberg correction",
            Correction::BenjaminiYekutieli => "Benjamini-Yekutieli correction",
        }
    }

    /// The corrected p-values, in the order given. NaN p-values are an error.
    pub fn apply(self, pvalues: &[f64]) -> Result<Vec<f64>> {
        if let Some(i) = pvalues.iter().position(|p| !(0.0..=1.0).contains(p)) {
            return Err(Error::Input(format!(
                "p-value {} at position {i} is not a number between 0 and 1",
                pvalues[i]
            )));
        }
        let m = pvalues.len();
        let mf = m as f64;
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| pvalues[a].total_cmp(&pvalues[b]));
        let sorted: Vec<f64> = order.iter().map(|&i| pvalues[i]).collect();
        let adjusted_sorted: Vec<f64> = match self {
            Correction::None => sorted,
            Correction::Bonferroni => sorted.iter().map(|p| (p * mf).min(1.0)).collect(),
            Correction::Holm => {
                let mut run = 0.0f64;
                sorted
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        run = run.max(p * (m - i) as f64);
                        run.min(1.0)
                    })
                    .collect()
            }
            // statsmodels: -expm1(k * log1p(-p)), exact for small p where 1 - (1 - p)^k
            // cancels
            Correction::Sidak => sorted.iter().map(|&p| sidak(p, mf)).collect(),
            Correction::HolmSidak => {
                let mut run = 0.0f64;
                sorted
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| {
                        run = run.max(sidak(p, (m - i) as f64));
                        run.min(1.0)
                    })
                    .collect()
            }
            Correction::Hochberg => {
                let mut out = vec![0.0; m];
                let mut run = f64::INFINITY;
                for i in (0..m).rev() {
                    run = run.min(sorted[i] * (m - i) as f64);
                    out[i] = run.min(1.0);
                }
                out
            }
            Correction::BenjaminiHochberg | Correction::BenjaminiYekutieli => {
                let cm = if self == Correction::BenjaminiYekutieli {
                    (1..=m).map(|i| 1.0 / i as f64).sum::<f64>()
                } else {
                    1.0
                };
                let mut out = vec![0.0; m];
                let mut run = f64::INFINITY;
                for i in (0..m).rev() {
                    // statsmodels: p / (ecdf / cm), ecdf = (i + 1) / m
                    let factor = ((i + 1) as f64 / mf) / cm;
                    run = run.min(sorted[i] / factor);
                    out[i] = run.min(1.0);
                }
                out
            }
        };
        let mut out = vec![0.0; m];
        for (k, &i) in order.iter().enumerate() {
            out[i] = adjusted_sorted[k];
        }
        Ok(out)
    }
}

/// Šidák's adjustment of `p` for `k` tests, 1 - (1 - p)^k.
fn sidak(p: f64, k: f64) -> f64 {
    -(k * (-p).ln_1p()).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrections_by_hand() {
        let p = [0.01, 0.04, 0.03, 0.005];
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-15);
        assert!(close(
            &Correction::Bonferroni.apply(&p).unwrap(),
            &[0.04, 0.16, 0.12, 0.02]
        ));
        // Holm: sorted 0.005 0.01 0.03 0.04 times 4 3 2 1 -> 0.02 0.03 0.06 0.06 (cummax)
        assert!(close(
            &Correction::Holm.apply(&p).unwrap(),
            &[0.03, 0.06, 0.06, 0.02]
        ));
        // Hochberg: sorted times 4 3 2 1 -> 0.02 0.03 0.06 0.04 -> 0.02 0.03 0.04 0.04
        // (reverse cummin)
        assert!(close(
            &Correction::Hochberg.apply(&p).unwrap(),
            &[0.03, 0.04, 0.04, 0.02]
        ));
        // BH: p * 4 / rank -> 0.02 0.02 0.04 0.04 (reverse cummin)
        assert!(close(
            &Correction::BenjaminiHochberg.apply(&p).unwrap(),
            &[0.02, 0.04, 0.04, 0.02]
        ));
        assert!(Correction::None.apply(&[f64::NAN]).is_err());
    }

    #[test]
    fn names_and_suggestions() {
        assert_eq!(Correction::parse("Holm").unwrap(), Correction::Holm);
        let e = Correction::parse("hlm").unwrap_err().to_string();
        assert!(e.contains("did you mean 'holm'"), "{e}");
        let e = Correction::parse("zzzzzzzz").unwrap_err().to_string();
        assert!(
            !e.contains("did you mean") && e.contains("bonferroni"),
            "{e}"
        );
    }
}
