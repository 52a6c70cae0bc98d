//! Paired tests of two systems' per-query values `x` and `y` (differences `x - y`):
//! Student's t, Wilcoxon's signed rank, the sign test, the randomization (Fisher) test and
//! the bootstrap test, each two-sided or one-sided ([`Alternative`], as scipy's
//! `alternative=`). Each gives a [`TestResult`] that names the method it used (exact,
//! asymptotic, Monte Carlo), and p = 1 for two identical systems.

use std::sync::atomic::{AtomicBool, Ordering};

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

use super::rng::{below, fill_signs, Streams};
use crate::error::{Error, Result};
use crate::stats::resample_room;

/// The alternative hypothesis of a paired test of `x` against `y`, as scipy's
/// `alternative=` of `ttest_rel`, `wilcoxon`, `binomtest` and `permutation_test`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Alternative {
    /// `x` and `y` differ (either way).
    #[default]
    TwoSided,
    /// `x` is greater than `y` (differences `x - y` above zero).
    Greater,
    /// `x` is less than `y`.
    Less,
}

impl Alternative {
    /// The names (and aliases: R's `two.sided`) an alternative is known by.
    pub const NAMES: &'static [(&'static str, Alternative)] = &[
        ("two-sided", Alternative::TwoSided),
        ("greater", Alternative::Greater),
        ("less", Alternative::Less),
        ("two_sided", Alternative::TwoSided),
        ("two.sided", Alternative::TwoSided),
    ];

    /// Parse `two-sided`, `greater` or `less`.
    pub fn parse(name: &str) -> Result<Alternative> {
        super::correct::choose("alternative", name, Alternative::NAMES)
    }

    /// The name (`"two-sided"`), as scipy spells it.
    pub fn name(self) -> &'static str {
        match self {
            Alternative::TwoSided => "two-sided",
            Alternative::Greater => "greater",
            Alternative::Less => "less",
        }
    }

    /// The p-value of this alternative from the two one-sided tail probabilities
    /// `less` = P(S <= s) and `greater` = P(S >= s) of the observed statistic `s`: twice
    /// the smaller tail for a two-sided test (capped at 1), as scipy's exact tests.
    fn of_tails(self, less: f64, greater: f64) -> f64 {
        match self {
            Alternative::TwoSided => (2.0 * less.min(greater)).min(1.0),
            Alternative::Greater => greater.min(1.0),
            Alternative::Less => less.min(1.0),
        }
    }
}

/// The outcome of a test.
#[derive(Clone, Debug, PartialEq)]
pub struct TestResult {
    /// The test statistic (t; Wilcoxon's smaller rank sum; the wins of the sign test; the
    /// mean difference for the randomization and bootstrap tests).
    pub statistic: f64,
    /// The p-value (two-sided, or one-sided as the test was asked).
    pub pvalue: f64,
    /// How the p-value was obtained, in words (`"exact"`, `"asymptotic"`, ...).
    pub method: &'static str,
    /// Degrees of freedom, for tests that have them.
    pub df: Option<f64>,
}

impl TestResult {
    fn identical(method: &'static str) -> TestResult {
        TestResult {
            statistic: 0.0,
            pvalue: 1.0,
            method,
            df: None,
        }
    }
}

/// Randomization tests enumerate all 2^n sign assignments up to this many queries (in
/// two halves of 2^(n/2) sums each); beyond, they draw random ones.
pub const EXACT_RANDOMIZATION_MAX: usize = 20;

/// Two values of a resampled statistic closer than this, relative to the sum of the
/// absolute values involved, count as equal: sums of the same numbers in another order
/// differ in the last bits, and a resample equal to the observed value must count as at
/// least as extreme (as scipy's `permutation_test`, which allows 100 ulp of the
/// statistic; ours scales with the inputs, so it holds for sums of thousands of values).
pub const TIE_TOLERANCE: f64 = 1e-10;

/// Check a pair of per-query arrays and return their differences `x - y`.
pub fn differences(x: &[f64], y: &[f64]) -> Result<Vec<f64>> {
    if x.len() != y.len() {
        return Err(Error::Input(format!(
            "the two systems have different numbers of values ({} and {})",
            x.len(),
            y.len()
        )));
    }
    if x.len() < 2 {
        return Err(Error::Input(format!(
            "a paired test needs at least 2 queries, got {}",
            x.len()
        )));
    }
    check_finite(x, "x")?;
    check_finite(y, "y")?;
    Ok(x.iter().zip(y).map(|(a, b)| a - b).collect())
}

/// The largest magnitude of a value a test takes. The tests sum squares of values and
/// of their differences (variances, sums of squares): below 1e100 those sums stay
/// finite in double precision for any number of values (4 n 1e200 < 1.8e308 while n <
/// 4e107). Beyond it a variance became infinite or NaN: a t statistic of 0 (a wrong
/// p-value of 1), or a NaN that the t and F distributions refuse.
pub const MAX_MAGNITUDE: f64 = 1e100;

/// An error for the first value that is not a finite number, or whose magnitude passes
/// [`MAX_MAGNITUDE`].
pub(crate) fn check_finite(v: &[f64], what: &str) -> Result<()> {
    match v.iter().position(|v| v.is_nan() || v.abs() > MAX_MAGNITUDE) {
        None => Ok(()),
        Some(i) if v[i].is_finite() => Err(Error::Input(format!(
            "{what} holds {:e} at position {i}: significance tests take values of magnitude \
             up to 1e100 (their squares are summed in double precision)",
            v[i]
        ))),
        Some(i) => Err(Error::Input(format!(
            "{what} holds {} at position {i}: significance tests need a number for every \
             query (a geometric-mean measure of a zero gives NaN: compare its arithmetic \
             counterpart instead)",
            v[i]
        ))),
    }
}

pub(crate) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sample variance (divisor n - 1).
pub(crate) fn variance(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (v.len() - 1) as f64
}

fn student(df: f64) -> Result<StudentsT> {
    StudentsT::new(0.0, 1.0, df).map_err(|e| Error::Input(format!("t distribution: {e}")))
}

/// Paired Student's t-test (as `scipy.stats.ttest_rel(x, y, alternative=...)`): t =
/// mean(d) / (sd(d) / sqrt(n)), n - 1 degrees of freedom. Identical systems give t = 0,
/// p = 1 (scipy: NaN); a constant non-zero difference t = ±inf, p = 0 (or 1 for the
/// one-sided alternative it contradicts).
pub fn ttest(x: &[f64], y: &[f64], alternative: Alternative) -> Result<TestResult> {
    let d = differences(x, y)?;
    let n = d.len() as f64;
    let (m, v) = (mean(&d), variance(&d));
    let df = n - 1.0;
    if v == 0.0 {
        if m == 0.0 {
            return Ok(TestResult {
                df: Some(df),
                ..TestResult::identical("t (all differences zero)")
            });
        }
        let t = m.signum() * f64::INFINITY;
        let (less, greater) = if t > 0.0 { (1.0, 0.0) } else { (0.0, 1.0) };
        return Ok(TestResult {
            statistic: t,
            pvalue: alternative.of_tails(less, greater),
            method: "t (constant difference)",
            df: Some(df),
        });
    }
    let t = m / (v / n).sqrt();
    let dist = student(df)?;
    // each tail from its own side: sf(-t) = cdf(t) without the cancellation of 1 - sf
    let p = match alternative {
        Alternative::TwoSided => (2.0 * dist.sf(t.abs())).min(1.0),
        Alternative::Greater => dist.sf(t),
        Alternative::Less => dist.sf(-t),
    };
    Ok(TestResult {
        statistic: t,
        pvalue: p,
        method: "t",
        df: Some(df),
    })
}

/// How Wilcoxon's test treats zero differences (scipy's `zero_method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZeroMethod {
    /// Wilcoxon's: zero differences are dropped before ranking.
    #[default]
    Wilcox,
    /// Pratt's: zeros are ranked with the others, then left out of both rank sums (the
    /// normal approximation adjusted as Cureton 1967).
    Pratt,
    /// Zeros are ranked with the others and their ranks split evenly between the two
    /// rank sums.
    Zsplit,
}

/// How Wilcoxon's test gets its p-value (scipy's `method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WilcoxonMethod {
    /// Exact for n <= 50 without ties or zeros, the exact permutation distribution for
    /// n <= 13 with them, else the normal approximation (scipy's `"auto"`).
    #[default]
    Auto,
    /// The distribution of the rank sum of ranks 1..n without ties (scipy's `"exact"`:
    /// with ties or zeros a non-integral statistic is rounded to the conservative side).
    Exact,
    /// The normal approximation with the tie correction of the variance.
    Asymptotic,
}

/// Wilcoxon's options beyond the alternative, scipy's keywords (default: scipy's
/// defaults, `zero_method="wilcox"`, `correction=False`, `method="auto"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WilcoxonOptions {
    /// The treatment of zero differences.
    pub zero_method: ZeroMethod,
    /// The continuity correction of the normal approximation (R's `wilcox.test`
    /// applies it by default, scipy does not).
    pub correction: bool,
    /// How the p-value is had.
    pub method: WilcoxonMethod,
}

impl ZeroMethod {
    /// Parse `wilcox`, `pratt` or `zsplit`.
    pub fn parse(name: &str) -> Result<ZeroMethod> {
        super::correct::choose(
            "zero_method",
            name,
            &[
                ("wilcox", ZeroMethod::Wilcox),
                ("pratt", ZeroMethod::Pratt),
                ("zsplit", ZeroMethod::Zsplit),
            ],
        )
    }
}

impl WilcoxonMethod {
    /// Parse `auto`, `exact` or `asymptotic` (`approx`, scipy's older name).
    pub fn parse(name: &str) -> Result<WilcoxonMethod> {
        super::correct::choose(
            "method",
            name,
            &[
                ("auto", WilcoxonMethod::Auto),
                ("exact", WilcoxonMethod::Exact),
                ("asymptotic", WilcoxonMethod::Asymptotic),
                ("approx", WilcoxonMethod::Asymptotic),
            ],
        )
    }
}

/// The largest number of differences whose exact Wilcoxon distribution is computed
/// on request (`method` exact): its table grows as n^2 and its computation as n^3.
pub const WILCOXON_EXACT_MAX: usize = 1000;

/// The probabilities of every sum of a random subset of `weights` (each in with
/// probability 1/2): entry s is P(sum = s). Halving at each step keeps them finite
/// for any number of weights (counts overflow past 2^1023); for up to 53 weights the
/// values are exactly the counts over 2^n.
fn subset_sum_distribution(weights: &[usize]) -> Vec<f64> {
    let total: usize = weights.iter().sum();
    let mut p = vec![0.0f64; total + 1];
    p[0] = 1.0;
    let mut reach = 0;
    for &w in weights {
        for s in (0..=reach).rev() {
            let c = p[s];
            if c != 0.0 {
                p[s + w] += c;
            }
        }
        reach += w;
        for v in &mut p[..=reach] {
            *v *= 0.5;
        }
    }
    p
}

/// Wilcoxon's signed-rank test with scipy's defaults (`scipy.stats.wilcoxon(x, y,
/// alternative=...)`: zero differences dropped, no continuity correction,
/// `method="auto"`); [`wilcoxon_with`] takes scipy's other options.
pub fn wilcoxon(x: &[f64], y: &[f64], alternative: Alternative) -> Result<TestResult> {
    wilcoxon_with(x, y, alternative, WilcoxonOptions::default())
}

/// Wilcoxon's signed-rank test as `scipy.stats.wilcoxon(x, y, zero_method=,
/// correction=, alternative=, method=)`: the statistic is the smaller of the two rank
/// sums for a two-sided test, the rank sum of the positive differences for a one-sided
/// one (as scipy). `method` "auto" gives the exact p-value for n <= 50 without ties or
/// zeros (`method` "exact"), the exact permutation distribution of the rank sum for
/// n <= 13 with ties or zeros ("exact (permutation)"), else the normal approximation
/// with the tie correction of the variance ("asymptotic"). No non-zero difference:
/// statistic 0, p = 1 (scipy: NaN).
pub fn wilcoxon_with(
    x: &[f64],
    y: &[f64],
    alternative: Alternative,
    options: WilcoxonOptions,
) -> Result<TestResult> {
    let d = differences(x, y)?;
    let n = d.len();
    let zeros = d.iter().filter(|v| **v == 0.0).count();
    if zeros == n {
        return Ok(TestResult::identical("all differences zero"));
    }
    // the ranks of |d|: of the non-zero differences alone (wilcox), or of all, the
    // zeros taking the lowest (pratt, zsplit)
    let ranked: Vec<f64> = match options.zero_method {
        ZeroMethod::Wilcox => d.iter().filter(|v| **v != 0.0).map(|v| v.abs()).collect(),
        _ => d.iter().map(|v| v.abs()).collect(),
    };
    let ranks = crate::correlation::average_ranks(&ranked);
    let signs: Vec<f64> = match options.zero_method {
        ZeroMethod::Wilcox => d.iter().copied().filter(|v| *v != 0.0).collect(),
        _ => d.clone(),
    };
    let rank_sum = |positive: bool| -> f64 {
        signs
            .iter()
            .zip(&ranks)
            .filter(|(v, _)| if positive { **v > 0.0 } else { **v < 0.0 })
            .map(|(_, r)| r)
            .sum()
    };
    let (r_plus_nz, r_minus_nz) = (rank_sum(true), rank_sum(false));
    // zsplit: half the zeros' ranks (1..=zeros, summing to zeros (zeros + 1) / 2) to each
    let split = match options.zero_method {
        ZeroMethod::Zsplit => (zeros * (zeros + 1)) as f64 / 4.0,
        _ => 0.0,
    };
    let (r_plus, r_minus) = (r_plus_nz + split, r_minus_nz + split);
    let statistic = match alternative {
        Alternative::TwoSided => r_plus.min(r_minus),
        _ => r_plus,
    };
    let mut sorted = ranked.clone();
    sorted.sort_by(f64::total_cmp);
    let (mut tie_term, mut has_ties) = (0.0, false);
    for g in sorted.chunk_by(|a, b| a == b) {
        // Pratt's variance leaves the zeros' tie out
        if options.zero_method == ZeroMethod::Pratt && g[0] == 0.0 {
            continue;
        }
        let t = g.len() as f64;
        has_ties |= g.len() > 1;
        tie_term += t * t * t - t;
    }
    let count = ranked.len();
    let method = match options.method {
        WilcoxonMethod::Auto if n > 50 => WilcoxonMethod::Asymptotic,
        WilcoxonMethod::Auto if !has_ties && zeros == 0 => WilcoxonMethod::Exact,
        WilcoxonMethod::Auto if n <= 13 => {
            // the permutation distribution of the non-zero differences' signs (the
            // zeros' share, if any, is the same under every sign assignment)
            let nz_ranks: Vec<usize> = signs
                .iter()
                .zip(&ranks)
                .filter(|(v, _)| **v != 0.0)
                .map(|(_, r)| (2.0 * r).round() as usize)
                .collect();
            let dist = subset_sum_distribution(&nz_ranks);
            let obs = (2.0 * r_plus_nz).round() as usize;
            let less: f64 = dist[..=obs].iter().sum();
            let greater: f64 = dist[obs..].iter().sum();
            return Ok(TestResult {
                statistic,
                pvalue: alternative.of_tails(less, greater),
                method: "exact (permutation)",
                df: None,
            });
        }
        WilcoxonMethod::Auto => WilcoxonMethod::Asymptotic,
        m => m,
    };
    if method == WilcoxonMethod::Exact {
        if count > WILCOXON_EXACT_MAX {
            return Err(Error::Option(format!(
                "the exact Wilcoxon distribution is computed for up to {WILCOXON_EXACT_MAX} \
                 differences, got {count}: use method='asymptotic' (or 'auto')"
            )));
        }
        let ones: Vec<usize> = (1..=count).collect();
        let dist = subset_sum_distribution(&ones);
        // a non-integral statistic (ties, zsplit) rounded to the conservative side, as scipy
        let less: f64 = dist[..=(r_plus.ceil() as usize).min(dist.len() - 1)]
            .iter()
            .sum();
        let greater: f64 = dist[(r_plus.floor() as usize).min(dist.len())..]
            .iter()
            .sum();
        return Ok(TestResult {
            statistic,
            pvalue: alternative.of_tails(less, greater),
            method: "exact",
            df: None,
        });
    }
    let c = count as f64;
    let z0 = zeros as f64;
    let (mut mn, mut var) = (c * (c + 1.0) * 0.25, c * (c + 1.0) * (2.0 * c + 1.0));
    if options.zero_method == ZeroMethod::Pratt {
        mn -= z0 * (z0 + 1.0) * 0.25;
        var -= z0 * (z0 + 1.0) * (2.0 * z0 + 1.0);
    }
    let se = ((var - tie_term / 2.0) / 24.0).sqrt();
    let mut z = (r_plus - mn) / se;
    if options.correction {
        let sign = match alternative {
            Alternative::TwoSided => z.signum() * f64::from(u8::from(z != 0.0)),
            Alternative::Greater => 1.0,
            Alternative::Less => -1.0,
        };
        z -= sign * 0.5 / se;
    }
    let p = match alternative {
        Alternative::TwoSided => (2.0 * crate::stats::normal_sf(z.abs())).min(1.0),
        Alternative::Greater => crate::stats::normal_sf(z),
        Alternative::Less => crate::stats::normal_sf(-z),
    };
    Ok(TestResult {
        statistic,
        pvalue: p,
        method: "asymptotic",
        df: None,
    })
}

/// The sign test: the queries `x` wins, out of those where `x` and `y` differ, against
/// Binomial(n, 1/2) (`scipy.stats.binomtest(wins, wins + losses, alternative=...)`;
/// two-sided: the outcomes at most as likely as `wins`, which for p = 1/2 are the two
/// tails). Ties are left out; no difference at all gives p = 1.
pub fn sign_test(x: &[f64], y: &[f64], alternative: Alternative) -> Result<TestResult> {
    let d = differences(x, y)?;
    let wins = d.iter().filter(|v| **v > 0.0).count() as u64;
    let losses = d.iter().filter(|v| **v < 0.0).count() as u64;
    let n = wins + losses;
    let p = if n == 0 || (alternative == Alternative::TwoSided && 2 * wins == n) {
        1.0
    } else {
        let b = Binomial::new(0.5, n).map_err(|e| Error::Input(format!("binomial: {e}")))?;
        // P(W <= wins) and P(W >= wins) = P(W <= losses) (symmetric), each summed over
        // its own tail
        alternative.of_tails(b.cdf(wins), b.cdf(losses))
    };
    Ok(TestResult {
        statistic: wins as f64,
        pvalue: p,
        method: "exact binomial",
        df: None,
    })
}

/// Sums of the values of every system under random sign flips, shared by all pairs:
/// the randomization statistic of a pair (a, b) under resample r is
/// `sums[r][a] - sums[r][b]` (the sum of sign-flipped differences), so one pass over the
/// queries serves every pair.
pub(crate) struct SignFlips {
    /// `n_resamples` rows of one sum per system.
    sums: Vec<f64>,
    systems: usize,
    /// Each system's plain sum (every sign +1), computed as the resampled ones.
    observed: Vec<f64>,
    /// Each system's sum of absolute values (the scale of [`TIE_TOLERANCE`]).
    scale: Vec<f64>,
    n_resamples: usize,
}

/// Sum of `signs[i] * v[i]` with four accumulators in a fixed order (deterministic, and
/// fast: the compiler may not reorder one accumulator's sums).
#[inline]
fn signed_sum(signs: &[f64], v: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (sc, vc) = (signs.chunks_exact(4), v.chunks_exact(4));
    let (sr, vr) = (sc.remainder(), vc.remainder());
    for (s, x) in sc.zip(vc) {
        acc[0] += s[0] * x[0];
        acc[1] += s[1] * x[1];
        acc[2] += s[2] * x[2];
        acc[3] += s[3] * x[3];
    }
    let mut tail = 0.0;
    for (s, x) in sr.iter().zip(vr) {
        tail += s * x;
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + tail
}

/// Resamples per work item of the parallel loops.
pub(crate) const CHUNK: usize = 64;

/// The first resample of each work item.
pub(crate) fn chunk_starts(n_resamples: usize) -> Result<Vec<usize>> {
    let mut starts: Vec<usize> =
        resample_room("n_resamples", n_resamples, n_resamples.div_ceil(CHUNK))?;
    starts.extend((0..n_resamples).step_by(CHUNK));
    Ok(starts)
}

fn interrupted(cancel: Option<&AtomicBool>) -> bool {
    cancel.is_some_and(|c| c.load(Ordering::Relaxed))
}

pub(crate) fn check_resamples(n_resamples: usize) -> Result<()> {
    crate::stats::check_resamples("n_resamples", n_resamples)
}

impl SignFlips {
    /// Draw `n_resamples` sign vectors (resample r from stream r of `seed`) and sum every
    /// system under each. All systems have the same number of values.
    pub(crate) fn new(
        systems: &[&[f64]],
        n_resamples: usize,
        seed: u64,
        cancel: Option<&AtomicBool>,
        progress: Option<&crate::progress::Progress>,
    ) -> Result<SignFlips> {
        check_resamples(n_resamples)?;
        let n = systems.first().map_or(0, |s| s.len());
        let ones = vec![1.0; n];
        let observed = systems.iter().map(|s| signed_sum(&ones, s)).collect();
        let scale = systems
            .iter()
            .map(|s| s.iter().map(|v| v.abs()).sum())
            .collect();
        // the room for every resample's sums first: too many are refused before any
        // is drawn
        let per = n_resamples.saturating_mul(systems.len());
        let mut sums = resample_room("n_resamples", n_resamples, per)?;
        let streams = Streams::new(seed);
        let chunks = crate::parallel::map_with(
            &chunk_starts(n_resamples)?,
            || vec![0.0f64; n],
            |signs, &start| -> Result<Vec<f64>> {
                if interrupted(cancel) {
                    return Err(Error::Interrupted);
                }
                let end = (start + CHUNK).min(n_resamples);
                let mut out = Vec::with_capacity((end - start) * systems.len());
                for r in start..end {
                    fill_signs(&mut streams.stream(r as u64), signs);
                    out.extend(systems.iter().map(|s| signed_sum(signs, s)));
                }
                crate::progress::advance(progress, end - start);
                Ok(out)
            },
        );
        for c in chunks {
            sums.extend(c?);
        }
        Ok(SignFlips {
            sums,
            systems: systems.len(),
            observed,
            scale,
            n_resamples,
        })
    }

    /// The Monte Carlo p-value of systems `a` and `b`: (count + 1) / (n_resamples + 1),
    /// count the resamples whose statistic is at least as extreme as the observed one in
    /// the direction of `alternative` (|statistic| for a two-sided test).
    pub(crate) fn pvalue(&self, a: usize, b: usize, alternative: Alternative) -> f64 {
        let obs = self.observed[a] - self.observed[b];
        let tol = TIE_TOLERANCE * (self.scale[a] + self.scale[b]);
        let rows = self.sums.chunks_exact(self.systems);
        let count = match alternative {
            Alternative::TwoSided => {
                let threshold = obs.abs() - tol;
                rows.filter(|row| (row[a] - row[b]).abs() >= threshold)
                    .count()
            }
            Alternative::Greater => rows.filter(|row| row[a] - row[b] >= obs - tol).count(),
            Alternative::Less => rows.filter(|row| row[a] - row[b] <= obs + tol).count(),
        };
        (count as f64 + 1.0) / (self.n_resamples as f64 + 1.0)
    }
}

/// Subset sums of `v`: entry `mask` is the sum of the values whose bit is set.
fn subset_sums(v: &[f64]) -> Vec<f64> {
    let mut sums = vec![0.0f64; 1 << v.len()];
    for mask in 1usize..sums.len() {
        let low = mask.trailing_zeros() as usize;
        sums[mask] = sums[mask & (mask - 1)] + v[low];
    }
    sums
}

/// Exact randomization p-value of differences `d` (n <= [`EXACT_RANDOMIZATION_MAX`]):
/// the share of the 2^n sign assignments whose sum is at least as extreme as sum(d) in
/// the direction of `alternative` (|sum| reaching |sum(d)| for a two-sided test),
/// counted by meeting in the middle (the sums of each half, one half sorted and
/// searched).
fn exact_randomization(d: &[f64], scale: f64, alternative: Alternative) -> f64 {
    let h = d.len() / 2;
    // sum over flips = sum(d) - 2 * (sum of the flipped values)
    let (left, right) = (subset_sums(&d[..h]), subset_sums(&d[h..]));
    let total: f64 = d.iter().sum();
    let tol = TIE_TOLERANCE * scale;
    let threshold = total.abs() - tol;
    if alternative == Alternative::TwoSided && threshold <= 0.0 {
        return 1.0;
    }
    let mut right_sorted = right;
    right_sorted.sort_by(f64::total_cmp);
    let at_most = |v: f64| right_sorted.partition_point(|r| *r <= v);
    let at_least = |v: f64| right_sorted.len() - right_sorted.partition_point(|r| *r < v);
    let mut count: u64 = 0;
    for l in &left {
        // statistic s = total - 2 (l + r)
        count += match alternative {
            // |s| >= t  <=>  r <= (total - t)/2 - l  or  r >= (total + t)/2 - l
            Alternative::TwoSided => {
                at_most((total - threshold) / 2.0 - l) + at_least((total + threshold) / 2.0 - l)
            }
            // s >= total - tol  <=>  r <= tol/2 - l
            Alternative::Greater => at_most(tol / 2.0 - l),
            // s <= total + tol  <=>  r >= -tol/2 - l
            Alternative::Less => at_least(-tol / 2.0 - l),
        } as u64;
    }
    count as f64 / (1u64 << d.len()) as f64
}

/// The paired randomization (Fisher) test, statistic the mean difference: exact over all
/// 2^n sign assignments for n <= [`EXACT_RANDOMIZATION_MAX`] (`method` "exact"; the share
/// of assignments at least as extreme, as `scipy.stats.permutation_test` with
/// `permutation_type="samples"` and the same `alternative`), else `n_resamples` random
/// ones ("Monte Carlo"; p = (count + 1) / (n_resamples + 1), which counts the observed
/// assignment, as scipy does; ranx divides count by n_resamples). Resample r draws from
/// stream r of `seed`.
pub fn randomization_test(
    x: &[f64],
    y: &[f64],
    n_resamples: usize,
    seed: u64,
    alternative: Alternative,
    cancel: Option<&AtomicBool>,
) -> Result<TestResult> {
    let d = differences(x, y)?;
    check_resamples(n_resamples)?;
    let statistic = mean(&d);
    if d.len() <= EXACT_RANDOMIZATION_MAX {
        return Ok(TestResult {
            statistic,
            pvalue: exact_randomization_pvalue(x, y, alternative),
            method: "exact",
            df: None,
        });
    }
    let flips = SignFlips::new(&[x, y], n_resamples, seed, cancel, None)?;
    Ok(TestResult {
        statistic,
        pvalue: flips.pvalue(0, 1, alternative),
        method: "Monte Carlo",
        df: None,
    })
}

/// The exact randomization p-value of one pair (for [`super::report`]).
pub(crate) fn exact_randomization_pvalue(x: &[f64], y: &[f64], alternative: Alternative) -> f64 {
    let d: Vec<f64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
    let scale = x.iter().chain(y).map(|v| v.abs()).sum();
    exact_randomization(&d, scale, alternative)
}

/// The paired bootstrap test shifted to the null (Sakai 2006, "Evaluating evaluation
/// metrics based on the bootstrap"): resample the differences with replacement, center
/// them on their mean, and count the resamples whose t is at least as extreme as the
/// observed t in the direction of `alternative` (|t| reaching |t| for a two-sided test,
/// t at least t for `Greater`, at most for `Less`); p = (count + 1) / (n_resamples + 1).
/// Statistic: the mean difference. Resample r draws from stream r of `seed`. Identical
/// systems: p = 1.
pub fn bootstrap_test(
    x: &[f64],
    y: &[f64],
    n_resamples: usize,
    seed: u64,
    alternative: Alternative,
    cancel: Option<&AtomicBool>,
) -> Result<TestResult> {
    let mut out = bootstrap_tests(&[(x, y)], n_resamples, seed, alternative, cancel)?;
    Ok(out.remove(0))
}

/// [`bootstrap_test`] of several pairs of systems over the same queries, each with the
/// p-value it has alone. Resample r of every pair draws the same queries (stream r of
/// `seed`), so the queries are drawn once per resample for all pairs, and each drawn
/// query adds one row of the pairs' centred differences (pairs side by side: the sums
/// of all pairs vectorize); per pair the additions are those of one pair alone, in the
/// same order, so the p-values are the same bits. Measured on the workload (10
/// pairs x 4 measures x 5,000 queries x 10,000 resamples): see the README.
pub fn bootstrap_tests(
    pairs: &[(&[f64], &[f64])],
    n_resamples: usize,
    seed: u64,
    alternative: Alternative,
    cancel: Option<&AtomicBool>,
) -> Result<Vec<TestResult>> {
    check_resamples(n_resamples)?;
    let mut out = Vec::with_capacity(pairs.len());
    // per pair tested: (its index in `out`, t observed, the tie scale)
    let mut tested: Vec<(usize, f64, f64)> = Vec::new();
    let mut centred: Vec<Vec<f64>> = Vec::new();
    let mut n = 0;
    for &(x, y) in pairs {
        let d = differences(x, y)?;
        if !tested.is_empty() && d.len() != n {
            return Err(Error::Input(format!(
                "the pairs have different numbers of values ({n} and {})",
                d.len()
            )));
        }
        n = d.len();
        let nf = n as f64;
        let (m, v) = (mean(&d), variance(&d));
        if v == 0.0 && m == 0.0 {
            out.push(TestResult::identical("bootstrap (all differences zero)"));
            continue;
        }
        let w: Vec<f64> = d.iter().map(|a| a - m).collect();
        let scale: f64 = w.iter().map(|a| a.abs()).sum::<f64>() / nf;
        tested.push((out.len(), m / (v / nf).sqrt(), scale));
        centred.push(w);
        out.push(TestResult {
            statistic: m,
            pvalue: f64::NAN,
            method: "bootstrap (Monte Carlo)",
            df: None,
        });
    }
    let k = tested.len();
    if k == 0 {
        return Ok(out);
    }
    // row i: the centred difference of query i for every tested pair
    let mut rows = vec![0.0; n * k];
    for (p, w) in centred.iter().enumerate() {
        for (i, &a) in w.iter().enumerate() {
            rows[i * k + p] = a;
        }
    }
    let nf = n as f64;
    let streams = Streams::new(seed);
    let counts = crate::parallel::map_with(
        &chunk_starts(n_resamples)?,
        || (vec![0.0; k], vec![0.0; k]),
        |(s, ss), &start| -> Result<Vec<usize>> {
            if interrupted(cancel) {
                return Err(Error::Interrupted);
            }
            let end = (start + CHUNK).min(n_resamples);
            let mut count = vec![0usize; k];
            for r in start..end {
                let mut rng = streams.stream(r as u64);
                s.fill(0.0);
                ss.fill(0.0);
                for _ in 0..n {
                    let i = below(&mut rng, n);
                    let row = &rows[i * k..(i + 1) * k];
                    for ((s, ss), &a) in s.iter_mut().zip(ss.iter_mut()).zip(row) {
                        *s += a;
                        *ss += a * a;
                    }
                }
                for (p, &(_, t_obs, scale)) in tested.iter().enumerate() {
                    let mean_r = s[p] / nf;
                    let var_r = ((ss[p] - s[p] * mean_r) / (nf - 1.0)).max(0.0);
                    // a resample of one repeated value has no spread: t is 0/0 when its
                    // mean is 0 (taken as 0); a non-zero mean gives t = ±inf
                    let t = if var_r <= TIE_TOLERANCE * scale * scale {
                        if mean_r.abs() <= TIE_TOLERANCE * scale {
                            0.0
                        } else {
                            mean_r.signum() * f64::INFINITY
                        }
                    } else {
                        mean_r / (var_r / nf).sqrt()
                    };
                    // (an infinite observed t, of a constant difference, has none)
                    let slack = if t_obs.is_finite() {
                        TIE_TOLERANCE * t_obs.abs()
                    } else {
                        0.0
                    };
                    let extreme = match alternative {
                        Alternative::TwoSided => t.abs() >= t_obs.abs() - slack,
                        Alternative::Greater => t >= t_obs - slack,
                        Alternative::Less => t <= t_obs + slack,
                    };
                    if extreme {
                        count[p] += 1;
                    }
                }
            }
            Ok(count)
        },
    );
    let mut total = vec![0usize; k];
    for c in counts {
        for (t, c) in total.iter_mut().zip(c?) {
            *t += c;
        }
    }
    for (&(at, _, _), count) in tested.iter().zip(total) {
        out[at].pvalue = (count as f64 + 1.0) / (n_resamples as f64 + 1.0);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_of_several_pairs_is_each_pair_alone() {
        let a: Vec<f64> = (0..57).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
        let b: Vec<f64> = (0..57).map(|i| ((i * 13) % 7) as f64 / 6.0).collect();
        let c: Vec<f64> = a.iter().map(|v| v * 0.9 + 0.05).collect();
        let pairs: Vec<(&[f64], &[f64])> = vec![(&a, &b), (&a, &a), (&b, &c), (&a, &c)];
        let together = bootstrap_tests(&pairs, 300, 7, Alternative::TwoSided, None).unwrap();
        for (&(x, y), t) in pairs.iter().zip(&together) {
            assert_eq!(
                &bootstrap_test(x, y, 300, 7, Alternative::TwoSided, None).unwrap(),
                t
            );
        }
        assert_eq!(together[1].pvalue, 1.0);
        assert!(together[0].pvalue < 1.0 && together[0].pvalue > 0.0);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    const X: [f64; 10] = [0.61, 0.42, 0.80, 0.33, 0.57, 0.71, 0.25, 0.49, 0.66, 0.38];
    const Y: [f64; 10] = [0.52, 0.40, 0.71, 0.35, 0.43, 0.69, 0.21, 0.50, 0.52, 0.30];

    #[test]
    fn identical_systems_give_p_one() {
        for r in [
            ttest(&X, &X, Alternative::TwoSided).unwrap(),
            wilcoxon(&X, &X, Alternative::TwoSided).unwrap(),
            sign_test(&X, &X, Alternative::TwoSided).unwrap(),
            randomization_test(&X, &X, 100, 1, Alternative::TwoSided, None).unwrap(),
            bootstrap_test(&X, &X, 100, 1, Alternative::TwoSided, None).unwrap(),
        ] {
            assert_eq!(r.pvalue, 1.0, "{r:?}");
        }
        let long: Vec<f64> = (0..100).map(|i| (i % 9) as f64 / 9.0).collect();
        assert_eq!(
            randomization_test(&long, &long, 100, 1, Alternative::TwoSided, None)
                .unwrap()
                .pvalue,
            1.0
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(ttest(&[1.0], &[2.0], Alternative::TwoSided).is_err());
        assert!(ttest(&[1.0, 2.0], &[2.0], Alternative::TwoSided).is_err());
        assert!(wilcoxon(&[1.0, f64::NAN], &[2.0, 1.0], Alternative::TwoSided).is_err());
        assert!(randomization_test(&X, &Y, 0, 1, Alternative::TwoSided, None).is_err());
        // squares that overflow: before, a NaN t reached the t distribution (a panic)
        let e = ttest(
            &[0.0, 0.4, 0.5, 0.0],
            &[1e308, 1e308, 0.5, 1e308],
            Alternative::TwoSided,
        )
        .unwrap_err();
        assert!(e.to_string().contains("1e308 at position 0"), "{e}");
        assert!(ttest(
            &[1e100, 0.0, 2.0],
            &[-1e100, 1.0, 0.0],
            Alternative::TwoSided
        )
        .is_ok());
        assert!(ttest(
            &[1.1e100, 0.0, 2.0],
            &[0.0, 1.0, 0.0],
            Alternative::TwoSided
        )
        .is_err());
    }

    /// The sums of `d` under each of the 2^n sign assignments, listed one by one.
    fn every_flip(d: &[f64]) -> Vec<f64> {
        (0u32..(1 << d.len()))
            .map(|mask| {
                d.iter()
                    .enumerate()
                    .map(|(i, v)| if mask >> i & 1 == 1 { -v } else { *v })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn exact_randomization_matches_brute_force() {
        let d: Vec<f64> = X.iter().zip(&Y).map(|(a, b)| a - b).collect();
        let total: f64 = d.iter().sum();
        let sums = every_flip(&d);
        let count = sums
            .iter()
            .filter(|s| s.abs() >= total.abs() - 1e-12)
            .count();
        let p = exact_randomization(&d, 1.0, Alternative::TwoSided);
        assert!(close(p, count as f64 / 1024.0, 1e-15), "{p} {count}");
    }

    #[test]
    fn monte_carlo_is_deterministic_and_near_exact() {
        let x: Vec<f64> = (0..30).map(|i| ((i * 37) % 11) as f64 / 11.0).collect();
        let y: Vec<f64> = (0..30).map(|i| ((i * 17 + 3) % 13) as f64 / 13.0).collect();
        let a = randomization_test(&x, &y, 4000, 9, Alternative::TwoSided, None).unwrap();
        let b = randomization_test(&x, &y, 4000, 9, Alternative::TwoSided, None).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.method, "Monte Carlo");
        // exact over 2^30 by meeting in the middle
        let exact = exact_randomization_pvalue(&x, &y, Alternative::TwoSided);
        let se = (exact * (1.0 - exact) / 4000.0).sqrt();
        assert!((a.pvalue - exact).abs() < 4.0 * se + 1e-3, "{a:?} {exact}");
        // the thread count does not change the numbers
        let c = crate::parallel::with_threads(1, || {
            randomization_test(&x, &y, 4000, 9, Alternative::TwoSided, None).unwrap()
        });
        assert_eq!(a, c);
    }

    #[test]
    fn sign_test_counts() {
        let r = sign_test(&X, &Y, Alternative::TwoSided).unwrap();
        // 8 wins of 10: 2 P(X <= 2) = 2 (1 + 10 + 45) / 1024
        assert_eq!(r.statistic, 8.0);
        assert!(close(r.pvalue, 112.0 / 1024.0, 1e-12), "{r:?}");
    }

    #[test]
    fn wilcoxon_exact_small() {
        // d = 0.09 0.02 0.09 -0.02 0.14 0.02 0.04 -0.01 0.14 0.08: ties -> permutation;
        // distinct differences -> exact. Here: W+ and W- sum to n(n+1)/2.
        let r = wilcoxon(&X, &Y, Alternative::TwoSided).unwrap();
        assert!(r.statistic >= 0.0 && r.pvalue > 0.0 && r.pvalue <= 1.0);
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [0.5, 0.0, 0.5, 0.5, 1.0];
        // all five positive with distinct |d|: exact p = 2 / 32
        let r = wilcoxon(&x, &y, Alternative::TwoSided).unwrap();
        assert_eq!(r.method, "exact");
        assert!(close(r.pvalue, 0.0625, 1e-15), "{r:?}");
    }

    #[test]
    fn one_sided_tails() {
        use Alternative::{Greater, Less, TwoSided};
        // 8 wins of 10: P(W >= 8) = 56 / 1024, P(W <= 8) = 1 - P(W >= 9) = 1013 / 1024
        let g = sign_test(&X, &Y, Greater).unwrap().pvalue;
        assert!(close(g, 56.0 / 1024.0, 1e-12), "{g}");
        let l = sign_test(&X, &Y, Less).unwrap().pvalue;
        assert!(close(l, 1013.0 / 1024.0, 1e-12), "{l}");
        // all five differences positive, distinct: R+ = 15 is reached by 1 of 32
        let (x, y) = ([1.0, 2.0, 3.0, 4.0, 5.0], [0.5, 0.0, 0.5, 0.5, 1.0]);
        let r = wilcoxon(&x, &y, Greater).unwrap();
        assert_eq!((r.statistic, r.pvalue), (15.0, 1.0 / 32.0));
        assert_eq!(wilcoxon(&x, &y, Less).unwrap().pvalue, 1.0);
        // the t distribution's tails add to 1, and the two-sided p is twice the smaller
        let (g, l) = (
            ttest(&X, &Y, Greater).unwrap(),
            ttest(&X, &Y, Less).unwrap(),
        );
        assert!(close(g.pvalue + l.pvalue, 1.0, 1e-14));
        assert!(close(
            ttest(&X, &Y, TwoSided).unwrap().pvalue,
            2.0 * g.pvalue,
            1e-12
        ));
        // a constant positive difference: p = 0 above, 1 below
        let (c, b) = ([1.0, 2.0, 3.0], [0.5, 1.5, 2.5]);
        assert_eq!(ttest(&c, &b, Greater).unwrap().pvalue, 0.0);
        assert_eq!(ttest(&c, &b, Less).unwrap().pvalue, 1.0);
        // exact randomization by brute force over the 1,024 assignments
        let d: Vec<f64> = X.iter().zip(&Y).map(|(a, b)| a - b).collect();
        let total: f64 = d.iter().sum();
        let sums = every_flip(&d);
        let above = sums.iter().filter(|s| **s >= total - 1e-12).count();
        let below = sums.iter().filter(|s| **s <= total + 1e-12).count();
        let g = exact_randomization(&d, 1.0, Greater);
        let l = exact_randomization(&d, 1.0, Less);
        assert_eq!((g, l), (above as f64 / 1024.0, below as f64 / 1024.0));
        // Monte Carlo near the exact one-sided values (2^30 assignments, met in the middle)
        let x: Vec<f64> = (0..30).map(|i| ((i * 37) % 11) as f64 / 11.0).collect();
        let y: Vec<f64> = (0..30).map(|i| ((i * 17 + 3) % 13) as f64 / 13.0).collect();
        for alt in [Greater, Less] {
            let mc = randomization_test(&x, &y, 4000, 9, alt, None).unwrap();
            let exact = exact_randomization_pvalue(&x, &y, alt);
            let se = (exact * (1.0 - exact) / 4000.0).sqrt();
            assert!(
                (mc.pvalue - exact).abs() < 4.0 * se + 1e-3,
                "{mc:?} {exact}"
            );
        }
        // the bootstrap's one-sided counts split its resamples (no t equals the observed)
        let g = bootstrap_test(&x, &y, 2000, 3, Greater, None)
            .unwrap()
            .pvalue;
        let l = bootstrap_test(&x, &y, 2000, 3, Less, None).unwrap().pvalue;
        assert!(close((g + l) * 2001.0, 2002.0, 1e-12), "{g} {l}");
        assert!(Alternative::parse("grater")
            .unwrap_err()
            .to_string()
            .contains("'greater'"));
    }
}
