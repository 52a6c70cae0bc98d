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
    /// Hommel's closed test with Simes' local tests (statsmodels' and R's `hommel`):
    /// at least as powerful as Hochberg's.
    Hommel,
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
        ("hommel", Correction::Hommel),
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
    /// `hochberg` (`simes-hochberg`), `hommel`, `bh` (`fdr_bh`, `fdr`), `by` (`fdr_by`);
    /// any letter case (R's `BH`, `BY`).
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
            Correction::Hommel => "hommel",
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
            Correction::Hommel => "Hommel's correction",
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
        // the single-step ones p by p, in the order given
        match self {
            Correction::None => return Ok(pvalues.to_vec()),
            Correction::Bonferroni => {
                return Ok(pvalues.iter().map(|p| (p * mf).min(1.0)).collect())
            }
            Correction::Sidak => return Ok(pvalues.iter().map(|&p| sidak(p, mf)).collect()),
            _ => {}
        }
        // ascending; a p-value in [0, 1] orders as its bits do (-0.0 made 0.0), and tied
        // p-values get one adjusted value whatever their order (so an unstable sort)
        let mut keyed: Vec<(u64, usize)> = pvalues
            .iter()
            .enumerate()
            .map(|(i, p)| ((p + 0.0).to_bits(), i))
            .collect();
        keyed.sort_unstable();
        let order: Vec<usize> = keyed.iter().map(|&(_, i)| i).collect();
        let sorted: Vec<f64> = keyed.iter().map(|&(b, _)| f64::from_bits(b)).collect();
        let adjusted_sorted: Vec<f64> = match self {
            Correction::None | Correction::Bonferroni | Correction::Sidak => {
                unreachable!("single-step corrections are made above")
            }
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
            Correction::Hommel => hommel(&sorted),
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

/// Hommel's adjusted p-values of `p`, sorted ascending.
///
/// statsmodels and R loop over every set size, O(m²) (minutes at m = 10^5); this is
/// O(m log m), from two facts:
/// 1. Simes' p-value of the `s` largest p-values, `c_s = min_k s·p_(m-s+k) / k`, is `s`
///    times the least slope from the point (m - s, 0) to the points (t, p_(t)) right of
///    it: a tangent to their lower convex hull, which grows by one point per size.
/// 2. Hommel (1988): H_(j) is rejected at level α iff `p_(j)·h(α) <= α`, `h(α)` being
///    the largest `s` whose `c_s` (or that of a larger set) exceeds α; the adjusted
///    p-value is the least such α. `h` falls as α grows and `s·p_(j)` with it, so the
///    `s` that answers each p-value moves one way as the p-values grow.
///
/// Every value is one of statsmodels' products (`s·p / k` or `s·p`), computed the same
/// way. Where several points of a hull edge are exactly collinear with (m - s, 0) their
/// products, equal in exact arithmetic, can differ in the last bit after rounding, and
/// the one taken here may then be an ulp above statsmodels' minimum (a few sets in a
/// thousand of random p-values rounded to one decimal).
fn hommel(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    // c[s], s = 1..=m; hull: ranks t (1-based) of the lower hull, the leftmost last
    let mut c = vec![0.0f64; m + 1];
    let mut hull: Vec<usize> = Vec::with_capacity(m);
    let y = |t: usize| p[t - 1];
    for l in (0..m).rev() {
        let a = l + 1;
        while let [.., far, near] = hull[..] {
            // `near` stays only strictly below the line from `a` to `far`
            let cross = (near - a) as f64 * (y(far) - y(a)) - (y(near) - y(a)) * (far - a) as f64;
            if cross > 0.0 {
                break;
            }
            hull.pop();
        }
        hull.push(a);
        let s = (m - l) as f64;
        let value = |t: usize| s * y(t) / (t - l) as f64;
        // along the hull from the left the values fall to the tangent, then rise
        let h = hull.len();
        let vertex = |i: usize| hull[h - 1 - i];
        let (mut lo, mut hi) = (0, h - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if value(vertex(mid)) <= value(vertex(mid + 1)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        // the tangent's neighbours: equal in exact arithmetic when collinear with it
        c[m - l] = (lo.saturating_sub(1)..(lo + 2).min(h))
            .map(|i| value(vertex(i)))
            .fold(f64::INFINITY, f64::min);
    }
    // d[s] = max of c over the sizes from s up, d[m + 1] = 0: statsmodels' running max
    // for a p-value in the s largest (c falls with s in exact arithmetic, not always
    // after rounding)
    let mut d = vec![0.0f64; m + 2];
    for s in (1..=m).rev() {
        d[s] = d[s + 1].max(c[s]);
    }
    // h(α) = s for α in [d[s + 1], d[s]); the least α with p·h(α) <= α is found at
    // top, the largest s with s·p < d[s] (where d is flat past some s' <= top, the
    // interval of s' gives the same d[top]), which only falls as p grows
    let mut top = m;
    p.iter()
        .map(|&pj| {
            while top >= 1 && top as f64 * pj >= d[top] {
                top -= 1;
            }
            match top {
                0 => d[1],
                s => d[s + 1].max(s as f64 * pj),
            }
        })
        .collect()
}

/// Šidák's adjustment of `p` for `k` tests, 1 - (1 - p)^k, as statsmodels makes it:
/// -expm1(k * log1p(-p)), exact for small p where 1 - (1 - p)^k cancels.
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
        // -0.0 is the smallest p-value, not (by its bits) the largest
        assert_eq!(
            Correction::Holm.apply(&[0.5, -0.0, 0.01]).unwrap(),
            vec![0.5, 0.0, 0.02]
        );
    }

    /// statsmodels' O(m²) loop over set sizes, transcribed (the definition the fast
    /// path must agree with).
    fn hommel_by_sizes(p: &[f64]) -> Vec<f64> {
        let n = p.len();
        let mut a = p.to_vec();
        for m in (2..=n).rev() {
            let cim = (1..=m)
                .map(|k| m as f64 * p[n - m + k - 1] / k as f64)
                .fold(f64::INFINITY, f64::min);
            for (i, ai) in a.iter_mut().enumerate() {
                let x = if i >= n - m {
                    cim
                } else {
                    (m as f64 * p[i]).min(cim)
                };
                *ai = ai.max(x);
            }
        }
        a
    }

    #[test]
    fn hommel_agrees_with_the_loop_over_set_sizes() {
        // Hommel is Hochberg's at m = 2 and Bonferroni's product at the smallest p
        let got = Correction::Hommel.apply(&[0.04, 0.01]).unwrap();
        assert_eq!(got, vec![0.04, 0.02]);
        let mut rng = crate::testing::Lcg::new(7);
        for n in 1..60usize {
            for kind in 0..4 {
                let mut p: Vec<f64> = (0..n)
                    .map(|_| {
                        let u = rng.below(1_000_000) as f64 / 1e6;
                        match kind {
                            0 => u,
                            1 => u.powi(4),
                            2 => (u * 10.0).round() / 10.0, // ties and collinear points
                            _ => [0.0, 0.01, 0.02, 0.05, 0.5, 1.0][rng.below(6) as usize],
                        }
                    })
                    .collect();
                p.sort_by(f64::total_cmp);
                let (fast, slow) = (hommel(&p), hommel_by_sizes(&p));
                for (a, b) in fast.iter().zip(&slow) {
                    // equal, or an ulp apart where the products tie in exact arithmetic
                    assert!((a - b).abs() <= 2.0 * f64::EPSILON * b, "{p:?}: {a} {b}");
                }
            }
        }
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
