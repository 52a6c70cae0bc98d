"""irmetrics.stats against scipy and statsmodels, run here on the same inputs.

Deterministic values (t, Wilcoxon, sign, exact randomization, Kendall's tau, the
corrections, the t interval) must agree to 1e-9 (relative); Monte Carlo p-values must
lie within a few standard errors of the exact ones.
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

# the peers are test extras: missing, the module fails (never a silent skip)
import scipy.stats as scipy_stats
import statsmodels.stats.multitest as multitest

import irmetrics
from irmetrics import stats

RTOL = 1e-9


def close(a: float, b: float, rtol: float = RTOL, atol: float = 1e-300) -> bool:
    return abs(a - b) <= max(rtol * abs(b), atol)


def cases():
    """Pairs of per-query arrays: continuous, IR-like (few levels: ties and zeros), one
    system a shifted copy of the other, small and large n."""
    rng = np.random.default_rng(7)
    out = []
    for n in (5, 8, 13, 14, 20, 30, 50, 51, 200, 2000):
        x = rng.random(n)
        out.append((f"continuous-{n}", x, np.clip(x + rng.normal(0.05, 0.2, n), 0, 1)))
        a = rng.integers(0, 5, n) / 4
        out.append((f"levels-{n}", a, rng.integers(0, 5, n) / 4))
        out.append((f"ap-like-{n}", rng.random(n).round(2), rng.random(n).round(2)))
    return out


CASES = cases()
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "x", "y"), CASES, ids=IDS)
def test_ttest_matches_scipy(name, x, y):
    ours = stats.ttest(x, y)
    ref = scipy_stats.ttest_rel(x, y)
    assert close(ours.statistic, float(ref.statistic)), (ours, ref)
    assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)
    assert ours.df == len(x) - 1
    lo, hi = ref.confidence_interval(0.95)
    e = stats.effect_size(x, y, 0.95)
    assert close(e["ci"][0], float(lo)) and close(e["ci"][1], float(hi)), (e, lo, hi)


@pytest.mark.parametrize(("name", "x", "y"), CASES, ids=IDS)
def test_wilcoxon_matches_scipy(name, x, y):
    if np.all(x == y):
        pytest.skip("identical inputs: scipy gives NaN, we give p = 1 (tested below)")
    ours = stats.wilcoxon(x, y)
    ref = scipy_stats.wilcoxon(x, y)
    assert close(ours.statistic, float(ref.statistic)), (ours, ref)
    assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)
    d = x - y
    ties = len(np.unique(np.abs(d[d != 0]))) < np.count_nonzero(d)
    if len(x) > 50:
        assert ours.method == "asymptotic"
    elif not ties and np.all(d != 0):
        assert ours.method == "exact"


@pytest.mark.parametrize(("name", "x", "y"), CASES, ids=IDS)
def test_sign_test_matches_binomtest(name, x, y):
    ours = stats.sign_test(x, y)
    wins, losses = int(np.sum(x > y)), int(np.sum(x < y))
    ref = scipy_stats.binomtest(wins, wins + losses) if wins + losses else None
    assert ours.statistic == wins
    assert close(ours.pvalue, 1.0 if ref is None else ref.pvalue), (ours, ref)


def _scipy_randomization(x, y):
    return scipy_stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )


@pytest.mark.parametrize(("name", "x", "y"), [c for c in CASES if len(c[1]) <= 14], ids=str)
def test_exact_randomization_matches_permutation_test(name, x, y):
    ours = stats.randomization_test(x, y)
    ref = _scipy_randomization(x, y)
    assert ours.method == "exact"
    assert close(ours.statistic, float(ref.statistic), atol=1e-15)
    assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)


def _brute_force_randomization(x, y):
    """The exact two-sided randomization p-value by listing all 2^n sign vectors with
    numpy (written here, independently of irmetrics): the share whose |sum| reaches
    the observed |sum| (up to 1e-9 for rounding)."""
    d = np.asarray(x) - np.asarray(y)
    n = len(d)
    obs = abs(d.sum())
    count = 0
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, 1 << n, 1 << 16):
        masks = np.arange(start, min(start + (1 << 16), 1 << n), dtype=np.int64)
        signs = 1 - 2 * ((masks[:, None] >> bits) & 1)
        count += int(np.sum(np.abs(signs @ d) >= obs - 1e-9))
    return count / (1 << n)


def test_exact_randomization_at_twenty_queries():
    rng = np.random.default_rng(3)
    x, y = rng.random(20), np.clip(rng.random(20) - 0.1, 0, 1)
    ours = stats.randomization_test(x, y)
    assert ours.method == "exact"
    assert close(ours.pvalue, _brute_force_randomization(x, y)), ours
    # and scipy agrees with the brute force on a smaller case
    x, y = x[:12], y[:12]
    assert close(float(_scipy_randomization(x, y).pvalue), _brute_force_randomization(x, y))


ONE_SIDED = ("greater", "less")


@pytest.mark.parametrize("alternative", ONE_SIDED)
@pytest.mark.parametrize(("name", "x", "y"), CASES, ids=IDS)
def test_one_sided_tests_match_scipy(name, x, y, alternative):
    """scipy's alternative= of ttest_rel, wilcoxon, binomtest and permutation_test
    (exact enumeration where irmetrics enumerates)."""
    ours = stats.ttest(x, y, alternative)
    ref = scipy_stats.ttest_rel(x, y, alternative=alternative)
    assert close(ours.statistic, float(ref.statistic)), (ours, ref)
    assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)
    if not np.all(x == y):
        ours = stats.wilcoxon(x, y, alternative=alternative)
        ref = scipy_stats.wilcoxon(x, y, alternative=alternative)
        # one-sided, scipy's statistic is the rank sum of the positive differences
        assert close(ours.statistic, float(ref.statistic)), (ours, ref)
        assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)
    wins, losses = int(np.sum(x > y)), int(np.sum(x < y))
    if wins + losses:
        ours = stats.sign_test(x, y, alternative=alternative)
        ref = scipy_stats.binomtest(wins, wins + losses, alternative=alternative)
        assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)
    if len(x) <= 14:
        ours = stats.randomization_test(x, y, alternative=alternative)
        ref = scipy_stats.permutation_test(
            (x, y),
            lambda a, b, axis: np.mean(a - b, axis=axis),
            permutation_type="samples",
            n_resamples=np.inf,
            vectorized=True,
            alternative=alternative,
        )
        assert ours.method == "exact"
        assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)


# n = 13 left out: scipy's permutation path takes 17 s there (n = 5 and 8 take it too)
WILCOXON_CASES = [c for c in CASES if len(c[1]) <= 200 and len(c[1]) != 13]


@pytest.mark.parametrize(("name", "x", "y"), WILCOXON_CASES, ids=[c[0] for c in WILCOXON_CASES])
def test_wilcoxon_options_match_scipy(name, x, y):
    """Every zero_method, continuity correction, method and alternative of scipy's
    wilcoxon (R's wilcox.test corrects for continuity by default)."""
    if np.all(x == y):
        pytest.skip("identical inputs: scipy gives NaN, we give p = 1 (tested below)")
    for zero_method in ("wilcox", "pratt", "zsplit"):
        for correction in (False, True):
            for method in ("auto", "exact", "asymptotic"):
                for alternative in ("two-sided", "greater", "less"):
                    kw = dict(zero_method=zero_method, correction=correction, method=method)
                    with warnings.catch_warnings():
                        # scipy warns that "exact" is not exact with ties or zeros
                        warnings.simplefilter("ignore")
                        ref = scipy_stats.wilcoxon(x, y, alternative=alternative, **kw)
                    ours = stats.wilcoxon(x, y, alternative, **kw)
                    where = (kw, alternative, ours, ref)
                    assert close(ours.statistic, float(ref.statistic)), where
                    assert close(ours.pvalue, float(ref.pvalue), atol=1e-15), where


def test_wilcoxon_bad_options():
    x, y = np.arange(1001.0), np.arange(1001.0)[::-1]
    # one difference is zero: 1,000 remain (the limit), or 1,001 ranked with pratt
    assert stats.wilcoxon(x, y, method="exact").method == "exact"
    with pytest.raises(irmetrics.Error, match="up to 1000 differences, got 1001"):
        stats.wilcoxon(x, y, method="exact", zero_method="pratt")
    with pytest.raises(irmetrics.Error, match="did you mean 'pratt'"):
        stats.wilcoxon([0.1, 0.2], [0.2, 0.1], zero_method="prat")
    with pytest.raises(irmetrics.Error, match="unknown method 'exakt'"):
        stats.wilcoxon([0.1, 0.2], [0.2, 0.1], method="exakt")


def _brute_force_one_sided(x, y, alternative):
    """The exact one-sided randomization p-value by listing all 2^n sign vectors."""
    d = np.asarray(x) - np.asarray(y)
    n, obs = len(d), d.sum()
    count = 0
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, 1 << n, 1 << 16):
        masks = np.arange(start, min(start + (1 << 16), 1 << n), dtype=np.int64)
        sums = (1 - 2 * ((masks[:, None] >> bits) & 1)) @ d
        hit = sums >= obs - 1e-9 if alternative == "greater" else sums <= obs + 1e-9
        count += int(np.sum(hit))
    return count / (1 << n)


@pytest.mark.parametrize("alternative", ONE_SIDED)
def test_one_sided_resampling_tests_within_monte_carlo_error(alternative):
    rng = np.random.default_rng(5)
    x = rng.random(21)
    y = np.clip(x - rng.normal(0.06, 0.2, 21), 0, 1)
    n = 20_000
    exact = _brute_force_one_sided(x, y, alternative)
    ours = stats.randomization_test(x, y, n_resamples=n, seed=3, alternative=alternative)
    assert ours.method == "Monte Carlo"
    se = math.sqrt(exact * (1 - exact) / n)
    assert abs(ours.pvalue - exact) <= 3 * se + 1 / n, (ours, exact, se)
    # exact enumeration at 20 queries, against the same brute force
    ours = stats.randomization_test(x[:20], y[:20], alternative=alternative)
    assert ours.method == "exact"
    assert close(ours.pvalue, _brute_force_one_sided(x[:20], y[:20], alternative))
    # the bootstrap against an independent implementation of the one-sided count
    d = x - y
    t0 = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    w = d - d.mean()
    s = w[np.random.default_rng(2).integers(0, len(d), (n, len(d)))]
    t = s.mean(axis=1) / (s.std(axis=1, ddof=1) / math.sqrt(len(d)))
    hits = t >= t0 if alternative == "greater" else t <= t0
    ref = (np.sum(hits) + 1) / (n + 1)
    ours = stats.bootstrap_test(x, y, n_resamples=n, seed=1, alternative=alternative)
    se = math.sqrt(ref * (1 - ref) / n)
    assert abs(ours.pvalue - ref) <= 4.5 * se + 2 / n, (ours, ref)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(("name", "x", "y"), CASES[:12], ids=IDS[:12])
def test_ttest_confidence_interval_is_scipys(name, x, y, alternative):
    ours = stats.ttest(x, y, alternative)
    ref = scipy_stats.ttest_rel(x, y, alternative=alternative)
    # a pickled result (joblib, multiprocessing, copy) keeps its interval
    back = pickle.loads(pickle.dumps(ours))
    assert type(back) is type(ours)
    assert (back.statistic, back.pvalue, back.method, back.df) == (
        ours.statistic,
        ours.pvalue,
        ours.method,
        ours.df,
    )
    for level in (0.95, 0.5, 0.999):
        assert back.confidence_interval(level) == ours.confidence_interval(level)
        lo, hi = ours.confidence_interval(level)
        want = ref.confidence_interval(level)
        for a, b in ((lo, want.low), (hi, want.high)):
            assert a == b if math.isinf(b) else close(a, float(b), atol=1e-15), (level, lo, hi)
    with pytest.raises(irmetrics.InputError, match="confidence must lie strictly between"):
        ours.confidence_interval(1.0)
    with pytest.raises(irmetrics.InputError, match="comes with a t-test's result"):
        stats.sign_test(x, y).confidence_interval()
    sign = copy.deepcopy(stats.sign_test(x, y, alternative))
    assert sign.pvalue == pytest.approx(
        scipy_stats.binomtest(
            int(np.sum(np.asarray(x) > np.asarray(y))),
            int(np.sum(np.asarray(x) != np.asarray(y))),
            alternative=alternative,
        ).pvalue,
        abs=1e-12,
    )
    with pytest.raises(irmetrics.InputError, match="comes with a t-test's result"):
        sign.confidence_interval()


def test_arrays_of_several_dimensions_are_refused_as_such():
    m = np.array([[0.1, 0.5], [0.3, 0.7]])
    with pytest.raises(irmetrics.InputError, match="x must be one-dimensional .* got 2 dim"):
        stats.ttest(m, m)
    with pytest.raises(irmetrics.InputError, match="y must be one-dimensional .* got 0 dim"):
        stats.wilcoxon([0.1, 0.2], np.float64(0.3))


def test_alternative_names_are_checked():
    x, y = [0.2, 0.5, 0.4], [0.1, 0.3, 0.5]
    # R's spelling is taken too
    assert stats.ttest(x, y, "two.sided").pvalue == stats.ttest(x, y).pvalue
    for call in (stats.ttest, stats.wilcoxon, stats.sign_test):
        with pytest.raises(irmetrics.Error, match="did you mean 'greater'"):
            call(x, y, "grater")
    with pytest.raises(irmetrics.Error, match="unknown alternative 'up'"):
        stats.bootstrap_test(x, y, n_resamples=10, alternative="up")


@pytest.mark.parametrize("seed", [1, 2])
def test_monte_carlo_within_three_standard_errors_of_exact(seed):
    # 21 queries: just past exact enumeration, so the Monte Carlo path runs, and still
    # small enough to enumerate the 2^21 assignments
    rng = np.random.default_rng(seed)
    x = rng.random(21)
    y = np.clip(x - rng.normal(0.08, 0.2, 21), 0, 1)
    exact = _brute_force_randomization(x, y)
    n = 20_000
    ours = stats.randomization_test(x, y, n_resamples=n, seed=seed)
    assert ours.method == "Monte Carlo"
    se = math.sqrt(exact * (1 - exact) / n)
    assert abs(ours.pvalue - exact) <= 3 * se + 1 / n, (ours, exact, se)
    # same seed, same p-value
    assert stats.randomization_test(x, y, n_resamples=n, seed=seed).pvalue == ours.pvalue


def _sakai_bootstrap(x, y, n, seed):
    """Sakai's shifted bootstrap test, written independently with numpy."""
    d = np.asarray(x) - np.asarray(y)
    t0 = abs(d.mean() / (d.std(ddof=1) / math.sqrt(len(d))))
    w = d - d.mean()
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), (n, len(d)))
    s = w[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = s.mean(axis=1) / (s.std(axis=1, ddof=1) / math.sqrt(len(d)))
    return (np.sum(np.abs(t) >= t0) + 1) / (n + 1)


@pytest.mark.parametrize("n_queries", [15, 40])
def test_bootstrap_test_agrees_with_an_independent_implementation(n_queries):
    rng = np.random.default_rng(n_queries)
    x = rng.random(n_queries)
    y = np.clip(x - rng.normal(0.05, 0.2, n_queries), 0, 1)
    n = 20_000
    ours = stats.bootstrap_test(x, y, n_resamples=n, seed=1)
    ref = _sakai_bootstrap(x, y, n, 2)
    se = math.sqrt(ref * (1 - ref) / n)
    # two Monte Carlo estimates: their difference has sd sqrt(2) se
    assert abs(ours.pvalue - ref) <= 4.5 * se + 2 / n, (ours, ref)
    assert close(ours.statistic, float(np.mean(x - y)), atol=1e-15)


@pytest.mark.parametrize(("name", "x", "y"), CASES, ids=IDS)
def test_kendall_tau_matches_scipy(name, x, y):
    ours = stats.kendall_tau(x, y)
    ref = scipy_stats.kendalltau(x, y)
    assert close(ours.statistic, float(ref.statistic)), (ours, ref)
    assert close(ours.pvalue, float(ref.pvalue)), (ours, ref)
    # the plain function is the same implementation
    assert close(irmetrics.kendall_tau(list(x), list(y)), float(ref.statistic))


def test_kendall_tau_large_is_fast_and_exact():
    rng = np.random.default_rng(0)
    x = rng.random(20_000)
    y = x + rng.normal(0, 0.5, 20_000)
    ours = stats.kendall_tau(x, y)
    ref = scipy_stats.kendalltau(x, y)
    assert close(ours.statistic, float(ref.statistic))
    assert close(ours.pvalue, float(ref.pvalue), atol=1e-300)


def _tau_ap_reference(x, y):
    """tau_ap from its definition (Yilmaz et al. 2008, eq. 1), O(n^2)."""
    order = sorted(range(len(y)), key=lambda i: -y[i])
    n = len(order)
    total = 0.0
    for pos in range(1, n):
        i = order[pos]
        correct = sum(1 for j in order[:pos] if x[j] > x[i])
        total += correct / pos
    return 2 / (n - 1) * total - 1


@pytest.mark.parametrize("n", [2, 3, 10, 57])
def test_tau_ap_matches_its_definition(n):
    rng = np.random.default_rng(n)
    x, y = rng.permutation(n).astype(float), rng.permutation(n).astype(float)
    assert close(stats.tau_ap(x, y).statistic, _tau_ap_reference(x, y), atol=1e-15)


P_SETS = [
    [0.01, 0.04, 0.03, 0.005],
    [0.2, 0.2, 0.01, 0.5, 0.049, 0.9, 0.0001],
    list(np.random.default_rng(5).random(40) ** 3),
    [1.0, 1.0],
    [0.05],
]


@pytest.mark.parametrize("pvalues", P_SETS)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("bonferroni", "bonferroni"),
        ("holm", "holm"),
        ("bh", "fdr_bh"),
        ("by", "fdr_by"),
        ("sidak", "sidak"),
        ("holm-sidak", "holm-sidak"),
        ("hochberg", "simes-hochberg"),
        ("simes-hochberg", "simes-hochberg"),
        ("hommel", "hommel"),
        ("fdr", "fdr_bh"),
        ("BY", "fdr_by"),
        ("none", None),
    ],
)
def test_corrections_match_statsmodels(pvalues, ours, theirs):
    got = stats.correct(np.array(pvalues), ours)
    # statsmodels' adjusted p-values are a float64 array: so are ours, from any input
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (len(pvalues),)
    assert isinstance(stats.correct(list(pvalues), ours), np.ndarray)
    if theirs is None:
        assert got.tolist() == list(pvalues)
        return
    # (statsmodels' Šidák takes log1p(-1) for a p-value of 1, with numpy's warning)
    with np.errstate(divide="ignore"):
        ref = multitest.multipletests(pvalues, method=theirs)[1]
    assert all(close(a, float(b), atol=1e-15) for a, b in zip(got, ref)), (got, ref)


@pytest.mark.parametrize("kind", ["uniform", "small", "tenths", "few values"])
def test_hommel_matches_statsmodels_on_ties_zeros_and_ones(kind):
    # Hommel's is found on a convex hull here, by a loop over every set size in
    # statsmodels: tied, zero, one and exactly proportional p-values are where the two
    # could part
    rng = np.random.default_rng(17)
    exact = total = 0
    for n in [*range(1, 40), 100, 333, 1000]:
        for _ in range(3 if n < 100 else 1):
            u = rng.random(n)
            p = {
                "uniform": u,
                "small": u**6,
                "tenths": np.round(u, 1),
                "few values": rng.choice([0.0, 0.001, 0.01, 0.02, 0.05, 0.5, 1.0], n),
            }[kind]
            got = np.array(stats.correct(p, "hommel"))
            ref = multitest.multipletests(p, method="hommel")[1]
            # the same products, so equal but where rounding splits an exact tie
            np.testing.assert_allclose(got, ref, rtol=4.5e-16, atol=0)
            exact += int(np.array_equal(got, ref))
            total += 1
    assert exact >= 0.95 * total, (exact, total)
    # linear p-values: every point of the hull collinear with the origin
    p = np.arange(1, 201) / 200
    np.testing.assert_allclose(
        stats.correct(p, "hommel"), multitest.multipletests(p, method="hommel")[1], rtol=4.5e-16
    )


@pytest.mark.parametrize("n", [2, 3, 25])
def test_effect_sizes_against_their_formulas(n):
    from scipy.special import gamma

    rng = np.random.default_rng(11)
    x, y = rng.random(n), rng.random(n)
    e = stats.effect_size(x, y, 0.9, n_resamples=2000, seed=3)
    d = x - y
    dz = d.mean() / d.std(ddof=1)
    df = len(d) - 1
    j = gamma(df / 2) / (math.sqrt(df / 2) * gamma((df - 1) / 2))  # gamma(0) = inf: J(1) = 0
    assert close(e["d_z"], dz) and close(e["g_z"], dz * j)
    x2 = stats.effect_size(x[:2], x[:2])  # identical systems over 2 queries
    assert (x2["d_z"], x2["g_z"]) == (0.0, 0.0)
    assert (e["wins"], e["ties"], e["losses"]) == (
        int(np.sum(d > 0)),
        int(np.sum(d == 0)),
        int(np.sum(d < 0)),
    )
    lo, hi = scipy_stats.ttest_rel(x, y).confidence_interval(0.9)
    assert close(e["ci"][0], float(lo)) and close(e["ci"][1], float(hi))
    # the percentile bootstrap against scipy's, within Monte Carlo error
    ref = scipy_stats.bootstrap(
        (d,), np.mean, confidence_level=0.9, method="percentile", n_resamples=20_000, rng=1
    ).confidence_interval
    width = hi - lo
    assert abs(e["bootstrap_ci"][0] - ref.low) < 0.05 * width
    assert abs(e["bootstrap_ci"][1] - ref.high) < 0.05 * width


@pytest.mark.parametrize("seed", [4, 5])
def test_bca_interval_agrees_with_scipy_within_monte_carlo_error(seed):
    rng = np.random.default_rng(seed)
    x = rng.random(30) ** 2  # skewed: BCa and percentile differ
    y = rng.random(30) ** 3
    e = stats.effect_size(x, y, 0.95, n_resamples=20_000, seed=seed)
    ref = scipy_stats.bootstrap(
        (x - y,), np.mean, confidence_level=0.95, method="BCa", n_resamples=20_000, rng=seed
    ).confidence_interval
    width = ref.high - ref.low
    assert abs(e["bca_ci"][0] - ref.low) < 0.04 * width, (e, ref)
    assert abs(e["bca_ci"][1] - ref.high) < 0.04 * width, (e, ref)
    same = stats.effect_size(x, x, 0.95, n_resamples=100)
    assert same["bca_ci"] == (0.0, 0.0)


def test_identical_systems_give_p_one():
    x = np.random.default_rng(1).random(30)
    for r in (
        stats.ttest(x, x),
        stats.wilcoxon(x, x),
        stats.sign_test(x, x),
        stats.randomization_test(x, x, n_resamples=100),
        stats.bootstrap_test(x, x, n_resamples=100),
    ):
        assert r.pvalue == 1.0, r
    e = stats.effect_size(x, x)
    assert (e["mean_diff"], e["d_z"], e["g_z"]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: stats.ttest([1.0], [2.0]), "at least 2"),
        (lambda: stats.ttest([1.0, 2.0, 3.0], [2.0, 1.0]), "different numbers"),
        (lambda: stats.wilcoxon([1.0, math.nan], [2.0, 1.0]), "NaN at position 1"),
        (lambda: stats.randomization_test([1.0, 2.0], [2.0, 1.0], n_resamples=0), "n_resamples"),
        (lambda: stats.bootstrap_test([1.0, 2.0], [2.0, 1.0], n_resamples=-5), "n_resamples"),
        (lambda: stats.correct([0.1, 0.2], "hlm"), "did you mean 'holm'"),
        (lambda: stats.correct([0.1, math.nan], "holm"), "not a number"),
        (lambda: stats.tau_ap([1.0, 1.0, 2.0], [1.0, 2.0, 3.0]), "ties"),
        (lambda: stats.studentized_range_sf(3.0, -1, 5.0), "k must be a whole number"),
        (lambda: stats.studentized_range_sf(3.0, 2.5, 5.0), "k must be a whole number"),
        # one system's values, not a matrix (was a TypeError: 'int' object is not iterable)
        (
            lambda: stats.anova2([1.0, 2.0, 3.0]),
            "sample 0 must be a sequence of numbers, got float",
        ),
        (lambda: stats.tukey_hsd(1, 2), "sample 0 must be a sequence of numbers, got int"),
        # bytes were their byte values (a t-test of b"abc" against b"abd")
        (lambda: stats.ttest(b"abc", b"abd"), "x must be a sequence of numbers, got bytes"),
        (lambda: stats.ttest([1.0, 2.0], "12"), "y must be a sequence of numbers, got str"),
        # the room for 2^62 resamples was asked of the allocator, which aborted the process
        (
            lambda: stats.bootstrap_test([1.0, 2.0, 3.0], [2.0, 2.0, 1.0], n_resamples=2**62),
            "n_resamples = 4611686018427387904 needs more memory than can be had",
        ),
        (
            lambda: stats.randomization_test(
                [float(i) for i in range(40)], [1.1 * i for i in range(40)], n_resamples=2**62
            ),
            "n_resamples = 4611686018427387904 needs more memory",
        ),
        (
            lambda: stats.randomized_tukey_hsd(
                *[[float(i * s % 7) for i in range(40)] for s in (1, 2, 3)], n_resamples=2**62
            ),
            "n_resamples = 4611686018427387904 needs more memory",
        ),
        (
            lambda: irmetrics.compare_values(
                {"ap": {"a": [i / 40 for i in range(40)], "b": [0.5] * 40}},
                test="fisher",
                n_resamples=2**62,
            ),
            "n_resamples = 4611686018427387904 needs more memory",
        ),
        # terabytes: reserved (mimalloc reserves address space) and filled until the kernel
        # killed the process; refused now against the memory available
        (
            lambda: stats.bootstrap_test([1.0, 2.0, 3.0], [2.0, 2.0, 1.0], n_resamples=10**13),
            r"n_resamples = 10000000000000 needs more memory than can be had \(1250\.0 GB; ",
        ),
        (
            lambda: stats.randomization_test(
                [float(i) for i in range(40)], [1.1 * i for i in range(40)], n_resamples=10**12
            ),
            r"n_resamples = 1000000000000 needs more memory than can be had \(16000\.0 GB; ",
        ),
        (
            lambda: stats.effect_size([1.0, 2.0, 3.0], [2.0, 2.0, 1.0], n_resamples=10**12),
            r"^n_resamples = 1000000000000 needs more memory than can be had \(8000\.0 GB; ",
        ),
        (lambda: stats.studentized_range_sf(3.0, 10_001, 5.0), "from 0 to 10000, got 10001"),
        (
            lambda: irmetrics.compare_values({"ap": [0.1, 0.2]}),
            r"values\['ap'\] must be a mapping \{system: per-query values\}, got list",
        ),
    ],
)
def test_bad_input_is_an_irmetrics_error(call, match):
    with pytest.raises(irmetrics.Error, match=match):
        call()


# values whose squares overflow: a variance of inf gave t = 0 and p = 1 (scipy: NaN), or a
# NaN statistic that the t and F distributions refused with an "internal error"
HUGE = [0.0, 0.4355, 0.5, 0.0], [1e308, 1e308, 0.5, 1e308]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, y: stats.ttest(x, y),
        lambda x, y: stats.wilcoxon(x, y),
        lambda x, y: stats.sign_test(x, y),
        lambda x, y: stats.randomization_test(x, y, n_resamples=10),
        lambda x, y: stats.bootstrap_test(x, y, n_resamples=10),
        lambda x, y: stats.effect_size(x, y),
        lambda x, y: stats.tukey_hsd(x, y),
        lambda x, y: stats.randomized_tukey_hsd(x, y, n_resamples=10),
        lambda x, y: stats.anova2([x, y]),
        lambda x, y: irmetrics.compare_values({"m": {"a": x, "b": y}}),
    ],
)
def test_values_beyond_1e100_are_refused_by_every_test(call):
    with pytest.raises(irmetrics.InputError, match=r"1e308 at position 0: .*up to 1e100"):
        call(*HUGE)


def test_values_up_to_1e100_agree_with_scipy_and_statsmodels():
    """The limit leaves room: values of magnitude 1e99 give scipy's t and Tukey's
    p-values, and statsmodels' two-way ANOVA F (scale-free: fitted on the values / 1e99,
    where OLS is well conditioned)."""
    import pandas as pd
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(3)
    unit = rng.normal(0, 1, (3, 12))
    x, y, z = unit * 1e99
    ours = stats.ttest(x, y)
    theirs = scipy_stats.ttest_rel(x, y)
    assert close(ours.statistic, theirs.statistic) and close(ours.pvalue, theirs.pvalue)
    assert np.allclose(
        stats.tukey_hsd(x, y, z).pvalue, scipy_stats.tukey_hsd(x, y, z).pvalue, rtol=1e-6
    )
    frame = pd.DataFrame(
        [(f"s{i}", f"t{j}", unit[i, j]) for i in range(3) for j in range(12)],
        columns=["system", "topic", "value"],
    )
    table = sm.stats.anova_lm(smf.ols("value ~ C(system) + C(topic)", data=frame).fit(), typ=2)
    a = stats.anova2([x, y, z])
    assert close(a.statistic, table.loc["C(system)", "F"])
    assert close(a.pvalue, table.loc["C(system)", "PR(>F)"])


def test_bootstrap_ci_of_values_holding_nan_is_nan_as_scipy():
    import warnings

    values = np.array([math.nan, 1.0, 2.0])
    with warnings.catch_warnings():  # scipy warns that the data are degenerate
        warnings.simplefilter("ignore")
        ref = scipy_stats.bootstrap(
            (values,), np.mean, method="percentile", n_resamples=100, random_state=0
        ).confidence_interval
    assert math.isnan(ref.low) and math.isnan(ref.high)
    low, high = irmetrics.bootstrap_ci(values.tolist())
    assert math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.float32])
def test_integer_and_float32_arrays_are_read_as_numbers(dtype):
    # graded per-query values (relevance counts, clicks) in numpy's smaller dtypes
    rng = np.random.default_rng(7)
    x = rng.integers(0, 90, 40).astype(dtype)
    y = rng.integers(0, 90, 40).astype(dtype)
    for ours, ref in (
        (stats.ttest(x, y), scipy_stats.ttest_rel(x.astype(float), y.astype(float))),
        (stats.wilcoxon(x, y), scipy_stats.wilcoxon(x.astype(float), y.astype(float))),
    ):
        assert close(ours.statistic, float(ref.statistic), atol=1e-12)
        assert close(ours.pvalue, float(ref.pvalue), atol=1e-12)
    # a strided view of an integer array too
    assert close(
        stats.ttest(x[::2], y[::2]).pvalue,
        float(scipy_stats.ttest_rel(x[::2].astype(float), y[::2].astype(float)).pvalue),
        atol=1e-12,
    )


def test_results_print_their_numbers_as_python_does():
    """A result's repr writes its numbers as Python's repr does (it wrote Rust's: `1`,
    `NaN`, and a p-value of 1e-30 as 0.000...0001 with 30 digits)."""
    x = np.linspace(1.0, 2.0, 60)
    y = x - 1.0 - 1e-3 * np.cos(np.arange(60.0))
    tiny = stats.ttest(x, y)
    none = stats.tau_ap([0.6, 0.4, 0.8], [0.5, 0.3, 0.7])
    for r in (tiny, none, stats.wilcoxon(x, y)):
        df = "" if r.df is None else f", df={r.df!r}"
        want = (
            f"TestResult(statistic={r.statistic!r}, pvalue={r.pvalue!r}, method={r.method!r}{df})"
        )
        assert repr(r) == want
    assert tiny.pvalue < 1e-30 and "e-" in repr(tiny)
    assert repr(none).startswith("TestResult(statistic=1.0, pvalue=nan,")
