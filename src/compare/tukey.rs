//! Tukey's HSD test of many systems at once, with the studentized range distribution
//! ([`ptukey_sf`]), and Carterette's (2012) randomized Tukey HSD.
//!
//! The studentized range's survival function is computed here rather than taken from a
//! crate (none of the well-kept ones has it): as a double integral by adaptive
//! Gauss-Kronrod (15 points) to a relative tolerance near 1e-12, the upper tail directly
//! (not 1 - cdf, which loses every digit of a small p-value). R's `ptukey` (Copenhaver &
//! Holland 1988) uses fixed Gauss-Legendre rules and reaches about 1e-8; scipy's
//! `studentized_range.sf` is 1 - cdf with an absolute tolerance of 1e-11.

use std::sync::atomic::{AtomicBool, Ordering};

use statrs::function::gamma::ln_gamma;

use super::paired::{check_finite, check_resamples, mean};
use super::rng::{below, Streams};
use crate::error::{Error, Result};

// Gauss-Kronrod 15-point nodes and weights (QUADPACK's qk15), with the embedded
// 7-point Gauss weights.
const XGK: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
const WGK: [f64; 8] = [
    0.022_935_322_010_529_22,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_2,
    0.140_653_259_715_525_9,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_8,
];
const WG: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// [`integrate`] to a relative tolerance `rel` of the whole integral: a first pass to
/// an absolute 1e-17 sizes it, and a small result is integrated again with the absolute
/// tolerance scaled to it (small p-values keep their relative accuracy).
fn integrate_rel(f: &dyn Fn(f64) -> f64, a: f64, b: f64, rel: f64) -> f64 {
    let mut budget = INTERVALS_MAX;
    let first = integrate(f, a, b, 1e-17, rel, &mut budget);
    if first.abs() * rel >= 1e-17 || first == 0.0 {
        return first;
    }
    let mut budget = INTERVALS_MAX;
    integrate(f, a, b, first.abs() * rel, rel, &mut budget)
}

/// The most intervals one [`integrate`] evaluates (15 points each). The integrals here
/// take from one to a few dozen; the bound keeps an integrand that is noisier than the
/// tolerance from splitting without end (a bisection 40 deep doubles its work at every
/// level).
const INTERVALS_MAX: u32 = 2_000;

/// Adaptive Gauss-Kronrod integral of `f` over [a, b]: an interval is split until its
/// Kronrod and Gauss estimates agree to `abs_tol` (halved at each split) or to `rel`
/// of the estimate, or no interval of the `budget` is left (depth first, left first).
fn integrate(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    abs_tol: f64,
    rel: f64,
    budget: &mut u32,
) -> f64 {
    *budget = budget.saturating_sub(1);
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let fc = f(c);
    let mut k = fc * WGK[7];
    let mut g = fc * WG[3];
    for j in 0..7 {
        let x = h * XGK[j];
        let s = f(c - x) + f(c + x);
        k += WGK[j] * s;
        if j % 2 == 1 {
            g += WG[j / 2] * s;
        }
    }
    let (k, g) = (k * h, g * h);
    let err = (k - g).abs();
    if err <= abs_tol.max(rel * k.abs()) || *budget < 2 {
        return k;
    }
    integrate(f, a, c, abs_tol / 2.0, rel, budget) + integrate(f, c, b, abs_tol / 2.0, rel, budget)
}

fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The standard normal cdf through erfc (accurate in the lower tail). `libm`'s erfc
/// (musl's, within 1 ulp) rather than statrs': statrs' is off by up to about 1e-10
/// relative (erfc(0.5) = 0.479500122236 for 0.479500122187), which the double integral
/// would carry into every p-value.
pub(crate) fn big_phi(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Groups from which [`range_sf`]'s difference of powers is taken in closed form.
const RANGE_SUM_MAX_K: usize = 64;

/// P(range of k standard normals >= w): k ∫ φ(z) (Φ(z)^(k-1) - (Φ(z) - Φ(z-w))^(k-1)) dz,
/// the difference of powers a^(k-1) - b^(k-1) (a = Φ(z), b = a - c, c = Φ(z-w)) without
/// cancellation: for few groups as c Σ a^j b^(k-2-j) (k - 2 products), for more as
/// a^(k-1) (-expm1((k-1) ln(1 - c/a))), a few ulps either way; the sum's loop made a
/// p-value for 10,000 groups take 23 s, and for 10^8 it never ended.
fn range_sf(w: f64, k: usize) -> f64 {
    if w <= 0.0 {
        return 1.0;
    }
    let f = |z: f64| {
        let a = big_phi(z);
        let c = big_phi(z - w);
        if k > RANGE_SUM_MAX_K {
            if a <= 0.0 {
                return 0.0;
            }
            let m = (k - 1) as f64;
            let gone = -(m * (-(c / a).min(1.0)).ln_1p()).exp_m1();
            return phi(z) * a.powf(m) * gone;
        }
        let b = (a - c).max(0.0);
        // S_m = Σ_{j=0}^{m} a^j b^(m-j) = a^m + b S_(m-1), m = k - 2
        let (mut sum, mut apow) = (1.0, 1.0);
        for _ in 0..k - 2 {
            apow *= a;
            sum = apow + b * sum;
        }
        phi(z) * c * sum
    };
    // the integrand lives where z is above about w/2 and below about 12
    (k as f64 * integrate_rel(&f, -12.0, 12.0 + w, 1e-13)).min(1.0)
}

/// Degrees of freedom from which the studentized range is taken as the range of
/// normals (`df` = infinity), as scipy's `studentized_range` does (`df < 100000`: the
/// double integral; else the single one). The two differ by O(1/df): just below 100,000
/// degrees of freedom by at most 2e-5 (0.77095 against 0.77097 at q = 4, k = 50; a test
/// holds it), relatively more in far tails (0.3% at p = 7e-7), so following scipy keeps
/// `tukey_hsd` equal to `scipy.stats.tukey_hsd` for systems with many queries.
pub const TUKEY_LARGE_DF: f64 = 100_000.0;

/// The most groups the studentized range is computed for: up to 10,000 it agrees with
/// scipy's to 1e-10 in at most 0.2 s a p-value at every df (measured at df 1 to
/// infinity, q 0.3 to 9); at 100,000 groups and one degree of freedom a p-value took
/// 229 s and was 2e-7 off.
pub const TUKEY_MAX_GROUPS: usize = 10_000;

/// Survival function of the studentized range: P(Q > q) for `k` groups and `df` degrees
/// of freedom of the error (`df` >= [`TUKEY_LARGE_DF`]: the range of normals, as scipy);
/// NaN for `k` above [`TUKEY_MAX_GROUPS`].
pub fn ptukey_sf(q: f64, k: usize, df: f64) -> f64 {
    if k > TUKEY_MAX_GROUPS {
        return f64::NAN;
    }
    studentized_range_sf(q, k, df, true)
}

/// ln(1 + u) - u for u > -1, to full relative precision: near 0 the two terms cancel
/// (at u = 1e-3 the direct difference keeps 13 of its 16 digits, and the density of
/// [`chi_ln_density`] multiplies it by df / 2), so there it is -u v + 2 (v^3/3 +
/// v^5/5 + ...) with v = u / (2 + u), whose terms all have the sign of u (ln(1 + u) =
/// 2 atanh(v)). Kept by hand: no well-kept crate has it (R's `log1pmx`).
fn ln_1p_minus(u: f64) -> f64 {
    let v = u / (2.0 + u);
    if v.abs() >= 0.3 {
        return u.ln_1p() - u;
    }
    let v2 = v * v;
    let (mut pow, mut sum) = (v * v2, 0.0);
    let mut j = 3.0;
    loop {
        let term = pow / j;
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
        pow *= v2;
        j += 2.0;
    }
    -u * v + 2.0 * sum
}

/// Stirling's error: ln Γ(x) - ((x - 1/2) ln x - x + ln(2π)/2), by its asymptotic
/// series from x = 15 (the next term below 3e-16 there), else from ln Γ directly.
fn stirling_error(x: f64) -> f64 {
    if x < 15.0 {
        return ln_gamma(x) - ((x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln());
    }
    let r = 1.0 / x;
    let r2 = r * r;
    r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 / 1188.0))))
}

/// ln of the density of s = sqrt(X / df), X ~ chi-squared(df), at s > 0: with x = df/2,
/// ln 2 + ln(x / 2π)/2 - stirling_error(x) + x ln_1p_minus(s^2 - 1) - ln s. Written so
/// that no two large terms cancel: the textbook (df/2) ln df - ln Γ(df/2) +
/// (df - 1) ln s - df s^2 / 2 adds terms of size df whose rounding (1e-16 df) left
/// the integrand noisy at the integral's 1e-12 tolerance from df of about 20,000 on
/// (the adaptive integral then split without end: a p-value at 500,000 degrees of
/// freedom never returned).
fn chi_ln_density(s: f64, df: f64) -> f64 {
    let x = 0.5 * df;
    let c =
        std::f64::consts::LN_2 + 0.5 * (x / (2.0 * std::f64::consts::PI)).ln() - stirling_error(x);
    c + x * ln_1p_minus(s * s - 1.0) - s.ln()
}

/// [`ptukey_sf`], the inner integral interpolated (`interpolate`) or not.
fn studentized_range_sf(q: f64, k: usize, df: f64, interpolate: bool) -> f64 {
    RangeTail::new(k, df, q, q, interpolate).sf(q)
}

/// The widest q_max / q_min of pairs that share one [`RangeTail`] in [`tukey_hsd`]: over
/// wider ranges the interpolant needs more points than it may have (257) when the
/// smallest q is near 0, and every pair then made its own.
const Q_RANGE_MAX: f64 = 4.0;

/// The largest w a shared interpolant of [`RangeTail`] reaches (the tail of the range of
/// k normals there is about k^2 e^(-w^2/4), 1e-174 at 40).
const SHARED_W_MAX: f64 = 40.0;

/// The studentized range's upper tail for one `k` and `df`, at any q: the inner
/// integral's interpolant ([`LogRangeSf`]) is made once, over the interval every q of
/// [q_min, q_max] needs, and shared (Tukey's HSD asks for a p-value of every pair of k
/// systems at one k and df: 1,225 pairs of 50 systems made 1,225 interpolants, 3.7 s).
/// A q outside that range, or any q when the shared interpolant did not converge, gets
/// its own, as a lone [`ptukey_sf`] does.
struct RangeTail {
    k: usize,
    df: f64,
    interpolate: bool,
    /// the outer integral's range of s = sqrt(chi2 / df), where its density lives
    lo: f64,
    hi: f64,
    /// the interpolant over [q_min lo, q_max hi] and that q range
    shared: Option<(LogRangeSf, f64, f64)>,
}

impl RangeTail {
    fn new(k: usize, df: f64, q_min: f64, q_max: f64, interpolate: bool) -> RangeTail {
        let nu = df;
        let mode = ((nu - 1.0).max(0.0) / nu).sqrt();
        let spread = 12.0 / (2.0 * nu).sqrt();
        let lo = (mode - spread).max(0.0);
        let hi = mode + spread.max(1.0 / nu.sqrt());
        // past w = SHARED_W_MAX the tail nears underflow, where an interpolant may fail
        // after costly nodes: those q make their own as before
        let usable =
            k >= 2 && nu > 0.0 && nu < TUKEY_LARGE_DF && q_min > 0.0 && q_max * hi <= SHARED_W_MAX;
        let shared = (interpolate && usable && q_min <= q_max)
            .then(|| LogRangeSf::new(k, q_min * lo, q_max * hi))
            .flatten()
            .map(|it| (it, q_min, q_max));
        RangeTail {
            k,
            df,
            interpolate,
            lo,
            hi,
            shared,
        }
    }

    fn sf(&self, q: f64) -> f64 {
        let (k, nu) = (self.k, self.df);
        if q.is_nan() || k < 2 || nu.is_nan() || nu <= 0.0 {
            return f64::NAN;
        }
        if q <= 0.0 {
            return 1.0;
        }
        if nu >= TUKEY_LARGE_DF {
            return range_sf(q, k);
        }
        let density = |s: f64| {
            if s <= 0.0 {
                // the density at 0: sqrt(2/π) for one degree of freedom, else 0
                return if nu == 1.0 {
                    (2.0 / std::f64::consts::PI).sqrt()
                } else {
                    0.0
                };
            }
            chi_ln_density(s, nu).exp()
        };
        let own;
        let ln_sf = match &self.shared {
            Some((it, q_min, q_max)) if (*q_min..=*q_max).contains(&q) => Some(it),
            _ if self.interpolate => {
                own = LogRangeSf::new(k, q * self.lo, q * self.hi);
                own.as_ref()
            }
            _ => None,
        };
        let inner = |w: f64| match ln_sf {
            Some(ln_sf) => ln_sf.at(w).exp(),
            None => range_sf(w, k),
        };
        let f = |s: f64| density(s) * inner(q * s);
        integrate_rel(&f, self.lo, self.hi, 1e-12).clamp(0.0, 1.0)
    }
}

/// ln [`range_sf`] over [a, b] as a Chebyshev interpolant (barycentric, at the points
/// of the second kind, doubled until the new points agree with the interpolant to
/// 2e-12: a relative 2e-12 on the tail, 20 times the inner integral's tolerance). The
/// outer integral of [`ptukey_sf`] evaluates the inner one a few hundred times on this
/// one interval: interpolated, 17 to 257 inner integrals do (measured: 30 ms -> 1.4 ms
/// a p-value at df = 25,000). `None` when it does not converge by 257 points or the
/// tail underflows: integrate directly.
struct LogRangeSf {
    nodes: Vec<f64>,
    values: Vec<f64>,
}

impl LogRangeSf {
    fn new(k: usize, a: f64, b: f64) -> Option<LogRangeSf> {
        let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
        let node =
            |j: usize, n: usize| mid + half * (std::f64::consts::PI * j as f64 / n as f64).cos();
        if half <= 0.0 {
            return None;
        }
        let ln_sf = |w: f64| range_sf(w, k).ln();
        let mut n = 16;
        let mut it = LogRangeSf {
            nodes: (0..=n).map(|j| node(j, n)).collect(),
            values: Vec::new(),
        };
        it.values = it.nodes.iter().map(|&w| ln_sf(w)).collect();
        if it.values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        while n < 256 {
            let m = 2 * n;
            let mut nodes = Vec::with_capacity(m + 1);
            let mut values = Vec::with_capacity(m + 1);
            let mut worst: f64 = 0.0;
            for j in 0..=m {
                if j % 2 == 0 {
                    nodes.push(it.nodes[j / 2]);
                    values.push(it.values[j / 2]);
                } else {
                    let w = node(j, m);
                    let v = ln_sf(w);
                    if !v.is_finite() {
                        return None;
                    }
                    worst = worst.max((v - it.at(w)).abs());
                    nodes.push(w);
                    values.push(v);
                }
            }
            it = LogRangeSf { nodes, values };
            n = m;
            if worst <= 2e-12 {
                return Some(it);
            }
        }
        None
    }

    /// The interpolant at `w` (barycentric formula; weights (-1)^j, halved at the ends).
    fn at(&self, w: f64) -> f64 {
        let last = self.nodes.len() - 1;
        let (mut num, mut den) = (0.0, 0.0);
        for (j, (&x, &y)) in self.nodes.iter().zip(&self.values).enumerate() {
            let d = w - x;
            if d == 0.0 {
                return y;
            }
            let mut c = if j % 2 == 0 { 1.0 } else { -1.0 } / d;
            if j == 0 || j == last {
                c *= 0.5;
            }
            num += c * y;
            den += c;
        }
        num / den
    }
}

/// Tukey's HSD on `groups` (one-way, as `scipy.stats.tukey_hsd(*groups)`): the pooled
/// within-group variance, q = |mean_i - mean_j| / sqrt(MSE/2 (1/n_i + 1/n_j)) and the
/// studentized range's upper tail with k groups and N - k degrees of freedom.
pub fn tukey_hsd(groups: &[&[f64]]) -> Result<TukeyHsd> {
    let k = groups.len();
    if k < 2 {
        return Err(Error::Input(format!(
            "Tukey's HSD needs at least 2 groups, got {k}"
        )));
    }
    if k > TUKEY_MAX_GROUPS {
        return Err(Error::Input(format!(
            "Tukey's HSD takes at most {TUKEY_MAX_GROUPS} groups (the studentized range is \
             not computed for more), got {k}"
        )));
    }
    for (i, g) in groups.iter().enumerate() {
        if g.len() < 2 {
            return Err(Error::Input(format!(
                "Tukey's HSD needs at least 2 values per group; group {i} has {}",
                g.len()
            )));
        }
        check_finite(g, &format!("group {i}"))?;
    }
    let means: Vec<f64> = groups.iter().map(|g| mean(g)).collect();
    let nobs: usize = groups.iter().map(|g| g.len()).sum();
    let df = (nobs - k) as f64;
    let ss: f64 = groups
        .iter()
        .zip(&means)
        .map(|(g, m)| g.iter().map(|v| (v - m) * (v - m)).sum::<f64>())
        .sum();
    let mse = ss / df;
    let mut out = TukeyHsd {
        df,
        diffs: vec![0.0; k * k],
        statistics: vec![0.0; k * k],
        pvalues: vec![1.0; k * k],
    };
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|i| (i + 1..k).map(move |j| (i, j)))
        .collect();
    // each pair's q (inf where the standard error is 0, NaN where the means are equal too)
    let qs: Vec<f64> = pairs
        .iter()
        .map(|&(i, j)| {
            let normalize = 1.0 / groups[i].len() as f64 + 1.0 / groups[j].len() as f64;
            (means[i] - means[j]).abs() / (normalize * mse / 2.0).sqrt()
        })
        .collect();
    // the pairs' q in ranges of at most a factor Q_RANGE_MAX, one interpolant each
    let mut sorted: Vec<f64> = qs
        .iter()
        .copied()
        .filter(|&q| q > 0.0 && q.is_finite())
        .collect();
    sorted.sort_by(f64::total_cmp);
    let mut ranges: Vec<(f64, f64)> = Vec::new();
    for q in sorted {
        match ranges.last_mut() {
            Some((lo, hi)) if q <= Q_RANGE_MAX * *lo => *hi = q,
            _ => ranges.push((q, q)),
        }
    }
    let starts: Vec<f64> = ranges.iter().map(|r| r.0).collect();
    let tails = crate::parallel::map_owned(ranges, |(lo, hi)| RangeTail::new(k, df, lo, hi, true));
    let ps = crate::parallel::map_owned(qs.clone(), |q| {
        if q == f64::INFINITY {
            0.0
        } else if q.is_nan() || q == 0.0 || tails.is_empty() {
            1.0
        } else {
            tails[starts.partition_point(|&s| s <= q).max(1) - 1].sf(q)
        }
    });
    for ((&(i, j), p), q) in pairs.iter().zip(ps).zip(qs) {
        out.diffs[i * k + j] = means[i] - means[j];
        out.diffs[j * k + i] = means[j] - means[i];
        out.statistics[i * k + j] = q;
        out.statistics[j * k + i] = q;
        out.pvalues[i * k + j] = p;
        out.pvalues[j * k + i] = p;
    }
    Ok(out)
}

/// A [`tukey_hsd`]: k x k matrices, row-major, of the pairs' mean differences (i - j),
/// studentized range statistics q (0 on the diagonal) and p-values (1 on the diagonal).
#[derive(Debug, Clone, PartialEq)]
pub struct TukeyHsd {
    /// the degrees of freedom of the pooled variance, N - k
    pub df: f64,
    /// mean_i - mean_j
    pub diffs: Vec<f64>,
    /// |mean_i - mean_j| / sqrt(MSE/2 (1/n_i + 1/n_j))
    pub statistics: Vec<f64>,
    /// the studentized range's upper tail at each statistic
    pub pvalues: Vec<f64>,
}

/// Carterette's (2012) randomized Tukey HSD on `systems` (equally long per-query
/// values): each resample permutes, query by query, the values among the systems and
/// takes the range of the systems' means; the p-value of a pair is
/// (count + 1) / (n_resamples + 1), count the resamples whose range reaches the pair's
/// |mean difference|. Resample r draws from stream r of `seed`. Returns the k x k
/// p-values (row-major, 1 on the diagonal).
pub fn randomized_tukey_hsd(
    systems: &[&[f64]],
    n_resamples: usize,
    seed: u64,
    cancel: Option<&AtomicBool>,
) -> Result<Vec<f64>> {
    check_resamples(n_resamples)?;
    let k = systems.len();
    if k < 2 {
        return Err(Error::Input(format!(
            "the randomized Tukey HSD needs at least 2 systems, got {k}"
        )));
    }
    let n = systems[0].len();
    if systems.iter().any(|s| s.len() != n) {
        return Err(Error::Input(
            "the systems have different numbers of values".into(),
        ));
    }
    if n < 2 {
        return Err(Error::Input(format!(
            "the randomized Tukey HSD needs at least 2 queries, got {n}"
        )));
    }
    for (i, s) in systems.iter().enumerate() {
        check_finite(s, &format!("system {i}"))?;
    }
    // row-major queries x systems
    let rows: Vec<f64> = (0..n)
        .flat_map(|q| systems.iter().map(move |s| s[q]))
        .collect();
    let scale: f64 = rows.iter().map(|v| v.abs()).sum::<f64>() / n as f64;
    // k! for one draw per query (k <= 20), else Fisher-Yates draw by draw
    let factorial: Option<u64> = (1..=k as u64).try_fold(1u64, |a, i| a.checked_mul(i));
    let streams = Streams::new(seed);
    let mut all = crate::stats::resample_room("n_resamples", n_resamples, n_resamples)?;
    let starts = super::paired::chunk_starts(n_resamples)?;
    let ranges = crate::parallel::map_with(
        &starts,
        || (vec![0.0f64; k], vec![0usize; k]),
        |(sums, perm), &start| -> Result<Vec<f64>> {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(Error::Interrupted);
            }
            let end = (start + super::paired::CHUNK).min(n_resamples);
            let mut out = Vec::with_capacity(end - start);
            for r in start..end {
                let mut rng = streams.stream(r as u64);
                sums.iter_mut().for_each(|s| *s = 0.0);
                for row in rows.chunks_exact(k) {
                    for (i, p) in perm.iter_mut().enumerate() {
                        *p = i;
                    }
                    match factorial {
                        Some(f) => {
                            let mut x = below(&mut rng, f as usize) as u64;
                            for i in (1..k).rev() {
                                let j = (x % (i as u64 + 1)) as usize;
                                x /= i as u64 + 1;
                                perm.swap(i, j);
                            }
                        }
                        None => {
                            for i in (1..k).rev() {
                                let j = below(&mut rng, i + 1);
                                perm.swap(i, j);
                            }
                        }
                    }
                    for (s, &p) in sums.iter_mut().zip(perm.iter()) {
                        *s += row[p];
                    }
                }
                let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                for s in sums.iter() {
                    lo = lo.min(*s);
                    hi = hi.max(*s);
                }
                out.push((hi - lo) / n as f64);
            }
            Ok(out)
        },
    );
    for r in ranges {
        all.extend(r?);
    }
    let means: Vec<f64> = systems.iter().map(|s| mean(s)).collect();
    let mut p = vec![1.0; k * k];
    for i in 0..k {
        for j in i + 1..k {
            let d = (means[i] - means[j]).abs() - super::paired::TIE_TOLERANCE * scale;
            let count = all.iter().filter(|r| **r >= d).count();
            let v = (count as f64 + 1.0) / (n_resamples as f64 + 1.0);
            p[i * k + j] = v;
            p[j * k + i] = v;
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpolated_inner_integral_changes_nothing() {
        // the direct double integral is the one checked against scipy (Python tests)
        for &df in &[4.0, 25_000.0] {
            for &k in &[3, 10] {
                for &q in &[1.0, 8.0, 40.0] {
                    let fast = ptukey_sf(q, k, df);
                    let direct = studentized_range_sf(q, k, df, false);
                    let rel = ((fast - direct) / direct).abs();
                    assert!(
                        rel < 1e-10 || (fast - direct).abs() < 1e-300,
                        "{q} {k} {df}: {fast} {direct}"
                    );
                }
            }
        }
    }

    #[test]
    fn range_of_two_normals_is_a_scaled_normal() {
        // the range of 2 standard normals is |X - Y| ~ sqrt(2) |N(0,1)|
        for w in [0.1, 1.0, 2.5, 6.0] {
            let want = 2.0 * big_phi(-w / std::f64::consts::SQRT_2);
            let got = range_sf(w, 2);
            assert!(
                (got - want).abs() <= 1e-12 * want.max(1e-300),
                "{w} {got} {want}"
            );
        }
    }

    #[test]
    fn two_groups_match_the_t_test() {
        // k = 2: q = sqrt(2) |t| and the studentized range tail is the two-sided t tail
        use statrs::distribution::{ContinuousCDF, StudentsT};
        for (t, df) in [
            (0.5, 3.0),
            (2.1, 10.0),
            (4.0, 57.0),
            (1.3, 1000.0),
            (3.0, 40_000.0),
        ] {
            let want = 2.0 * StudentsT::new(0.0, 1.0, df).unwrap().sf(t);
            let got = ptukey_sf(std::f64::consts::SQRT_2 * t, 2, df);
            assert!((got - want).abs() <= 1e-10 * want, "{t} {df} {got} {want}");
        }
    }

    #[test]
    fn ln_1p_minus_is_exact_near_zero_and_away_from_it() {
        // near 0 against the Taylor series in u (-u^2/2 + u^3/3 - ...), another formula
        for u in [1e-9f64, -1e-9, 1e-6, -1e-6, 1e-3, -1e-3, 0.05, -0.05] {
            let want: f64 = (2..40).map(|j| -(-u).powi(j) / j as f64).sum::<f64>();
            let got = ln_1p_minus(u);
            assert!(
                (got - want).abs() <= 1e-15 * want.abs(),
                "{u}: {got} {want}"
            );
        }
        // away from 0 the direct form has nothing to cancel
        for u in [3.0, 0.9, -0.6, -0.99] {
            let want = f64::ln_1p(u) - u;
            assert!((ln_1p_minus(u) - want).abs() <= 1e-15 * want.abs(), "{u}");
        }
    }

    #[test]
    fn chi_density_is_the_textbook_one_and_integrates_to_one() {
        for df in [1.0, 2.0, 7.0, 40.0] {
            let log_c = 0.5 * df * f64::ln(df) - ln_gamma(0.5 * df) - (0.5 * df - 1.0) * 2f64.ln();
            for s in [0.1, 0.7, 1.0, 1.9] {
                let want = log_c + (df - 1.0) * f64::ln(s) - 0.5 * df * s * s;
                let got = chi_ln_density(s, df);
                assert!(
                    (got - want).abs() <= 1e-13 * want.abs().max(1.0),
                    "{df} {s}"
                );
            }
        }
        for df in [3.0f64, 57.0, 25_000.0, 99_999.0, 1e7] {
            // 14 standard deviations (1 / sqrt(2 df)) each side of 1, from 0 at most
            let spread = 14.0 / (2.0 * df).sqrt();
            let (lo, hi) = ((1.0 - spread).max(0.0), 1.0 + spread);
            let total = integrate_rel(&|s| chi_ln_density(s, df).exp(), lo, hi, 1e-13);
            assert!((total - 1.0).abs() < 1e-12, "{df}: {total}");
        }
    }

    #[test]
    fn many_degrees_of_freedom_end_and_join_the_range_of_normals() {
        // 500,000 degrees of freedom (50 systems x 10,000 queries) never returned when
        // the chi density's large terms cancelled; from TUKEY_LARGE_DF on, scipy's
        // convention: the range of normals
        for (q, k) in [(0.5, 50), (4.0, 50), (6.0, 5), (3.0, 2)] {
            assert_eq!(ptukey_sf(q, k, 500_000.0), range_sf(q, k));
            assert_eq!(ptukey_sf(q, k, TUKEY_LARGE_DF), range_sf(q, k));
            // just below it the double integral, within O(1/df) of the limit (2e-5 at
            // most: 0.77095 against 0.77097 for q = 4, k = 50)
            let finite = ptukey_sf(q, k, TUKEY_LARGE_DF - 1.0);
            let limit = range_sf(q, k);
            assert!(finite != limit && (finite - limit).abs() <= 2e-5, "{q} {k}");
        }
    }

    #[test]
    fn pairs_sharing_one_interpolant_get_their_lone_p_values() {
        // tukey_hsd makes one interpolant for all pairs; each p-value as ptukey_sf alone
        let mut rng = crate::testing::Lcg::new(5);
        for (k, n) in [(3, 4), (12, 30), (20, 400)] {
            let groups: Vec<Vec<f64>> = (0..k)
                .map(|i| {
                    let shift = 0.3 * i as f64 / (n as f64).sqrt();
                    (0..n)
                        .map(|_| rng.below(1000) as f64 / 1000.0 + shift)
                        .collect()
                })
                .collect();
            let refs: Vec<&[f64]> = groups.iter().map(|g| &g[..]).collect();
            let t = tukey_hsd(&refs).unwrap();
            let df = (k * n - k) as f64;
            assert_eq!(t.df, df);
            for i in 0..k {
                for j in i + 1..k {
                    let lone = ptukey_sf(t.statistics[i * k + j], k, df);
                    let got = t.pvalues[i * k + j];
                    assert!(
                        (got - lone).abs() <= 1e-10 * lone,
                        "{k} {n} {i} {j}: {got} {lone}"
                    );
                }
            }
        }
    }

    #[test]
    fn randomized_tukey_is_seeded() {
        let a: Vec<f64> = (0..30).map(|i| (i % 5) as f64 / 5.0).collect();
        let b: Vec<f64> = a.iter().map(|v| v + 0.1).collect();
        let c = a.clone();
        let s = [&a[..], &b[..], &c[..]];
        let p = randomized_tukey_hsd(&s, 500, 3, None).unwrap();
        assert_eq!(p, randomized_tukey_hsd(&s, 500, 3, None).unwrap());
        // a and c are identical: every range reaches 0
        assert_eq!(p[2], 1.0);
        assert!(p[1] < 0.05, "{p:?}");
    }
}
