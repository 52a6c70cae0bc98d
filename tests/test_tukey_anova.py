"""Tukey's HSD, the studentized range, the randomized Tukey HSD and the two-way ANOVA
against scipy, statsmodels and ranx, run here on the same inputs.

scipy's ``studentized_range.sf`` is ``1 - cdf`` integrated to an absolute tolerance of
1e-11, so the p-values agree to 1e-9 absolute (relative agreement is about 1e-7 for
p-values above 1e-6, and less below); where an exact reference exists (k = 2, where the
studentized range is sqrt(2) |t|) they agree to 1e-9 relative.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

# the peers are test extras: missing, the module fails (never a silent skip)
import scipy.stats as scipy_stats
import statsmodels.api as sm
import statsmodels.formula.api as smf

# the runs and the ranx call of the compare tests
from test_compare import MEASURES, make_data, ranx_report

import irmetrics
from irmetrics import stats

# ranx's numba kernels warn about their own casts while compiling
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("df", [1, 3, 10, 57, 1000, 25_000, 99_999, 100_000, 500_000])
def test_studentized_range_matches_scipy(k, df):
    # from 100,000 degrees of freedom on, scipy takes the range of normals (df = inf), and
    # so do we; 500,000 never returned while the chi density lost digits to cancellation
    for q in (0.3, 1.0, 2.0, 3.5, 5.0, 7.0):
        ours = stats.studentized_range_sf(q, k, df)
        ref = float(scipy_stats.studentized_range.sf(q, k, df))
        assert abs(ours - ref) <= 1e-9, (q, k, df, ours, ref)


@pytest.mark.parametrize("k", [64, 65, 300, 10_000])
@pytest.mark.parametrize("df", [1, 10, 1000, 100_000])
def test_studentized_range_of_many_groups_matches_scipy(k, df):
    # above 64 groups the difference of powers is taken in closed form: 10,000 groups
    # took 23 s a p-value with the sum's loop, 10^8 never ended (now at most 10,000)
    for q in (0.3, 3.5, 7.0, 9.0):
        ours = stats.studentized_range_sf(q, k, df)
        ref = float(scipy_stats.studentized_range.sf(q, k, df))
        assert abs(ours - ref) <= 1e-9, (q, k, df, ours, ref)


@pytest.mark.parametrize("df", [2, 9, 40, 300, 20_000, 99_999])
def test_two_groups_is_the_t_distribution(df):
    for t in (0.2, 1.0, 2.5, 5.0, 9.0):
        ours = stats.studentized_range_sf(math.sqrt(2) * t, 2, df)
        ref = 2 * float(scipy_stats.t.sf(t, df))
        assert math.isclose(ours, ref, rel_tol=1e-9), (t, df, ours, ref)


def test_infinite_df_is_the_range_of_normals():
    # k = 2: the range of two standard normals is sqrt(2) |N(0, 1)|
    for w in (0.5, 1.5, 4.0, 8.0):
        ref = 2 * float(scipy_stats.norm.sf(w / math.sqrt(2)))
        assert math.isclose(stats.studentized_range_sf(w, 2, math.inf), ref, rel_tol=1e-9)


@pytest.mark.parametrize(
    "sizes",
    # the last two: 99,996 and 119,997 degrees of freedom, each side of scipy's switch
    [(20, 20, 20), (15, 30, 8, 22), (200,) * 5, (25_000,) * 4, (40_000,) * 3],
)
def test_tukey_hsd_matches_scipy(sizes):
    rng = np.random.default_rng(sum(sizes))
    # the shift shrinks with the groups' size, keeping the p-values away from 0
    shift = 0.04 * math.sqrt(20 / min(sizes))
    groups = [rng.random(n) + shift * i for i, n in enumerate(sizes)]
    ours = stats.tukey_hsd(*groups)
    ref = scipy_stats.tukey_hsd(*groups)
    assert ref.pvalue.min() > 1e-4, ref.pvalue  # p-values worth comparing
    # means of 25,000 values summed in another order: a few ulps of difference
    assert np.allclose(ours.statistic, ref.statistic, rtol=0, atol=1e-14)
    assert np.allclose(ours.pvalue, ref.pvalue, rtol=0, atol=1e-9), (ours.pvalue, ref.pvalue)


def _randomized_tukey_reference(systems, n, seed):
    """Carterette's randomized Tukey HSD, written independently with numpy."""
    m = np.array(systems)  # systems x queries
    k, q = m.shape
    rng = np.random.default_rng(seed)
    means = m.mean(axis=1)
    ranges = np.empty(n)
    for r in range(n):
        perm = np.argsort(rng.random((q, k)), axis=1)
        shuffled = np.take_along_axis(m.T, perm, axis=1)
        s = shuffled.mean(axis=0)
        ranges[r] = s.max() - s.min()
    p = np.ones((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                p[i, j] = (np.sum(ranges >= abs(means[i] - means[j]) - 1e-12) + 1) / (n + 1)
    return p


def test_randomized_tukey_within_monte_carlo_error():
    rng = np.random.default_rng(2)
    base = rng.random(40)
    systems = [np.clip(base + rng.normal(0.03 * i, 0.15, 40), 0, 1) for i in range(4)]
    n = 4000
    ours = stats.randomized_tukey_hsd(*systems, n_resamples=n, seed=1)
    ref = _randomized_tukey_reference(systems, n, 2)
    se = np.sqrt(np.maximum(ref * (1 - ref), 1 / n) / n)
    assert np.all(np.abs(ours.pvalue - ref) <= 4.5 * se + 2 / n), (ours.pvalue, ref)
    again = stats.randomized_tukey_hsd(*systems, n_resamples=n, seed=1)
    assert np.array_equal(again.pvalue, ours.pvalue)


@pytest.mark.parametrize(("k", "n"), [(2, 5), (3, 12), (5, 60)])
def test_anova2_matches_statsmodels(k, n):
    rng = np.random.default_rng(k * n)
    topic = rng.random(n)
    matrix = np.array([np.clip(topic + rng.normal(0.02 * i, 0.1, n), 0, 1) for i in range(k)])
    ours = stats.anova2(matrix)
    df = pd.DataFrame(
        [(f"s{i}", f"t{j}", matrix[i, j]) for i in range(k) for j in range(n)],
        columns=["system", "topic", "value"],
    )
    table = sm.stats.anova_lm(smf.ols("value ~ C(system) + C(topic)", data=df).fit(), typ=2)
    sys_row, top_row, res_row = (
        table.loc["C(system)"],
        table.loc["C(topic)"],
        table.loc["Residual"],
    )
    assert math.isclose(ours.statistic, sys_row["F"], rel_tol=1e-9)
    assert math.isclose(ours.pvalue, sys_row["PR(>F)"], rel_tol=1e-9)
    assert math.isclose(ours.table["f"][1], top_row["F"], rel_tol=1e-9)
    assert math.isclose(ours.table["pvalue"][1], top_row["PR(>F)"], rel_tol=1e-9)
    assert ours.df == (sys_row["df"], top_row["df"], res_row["df"])
    for got, want in zip(
        ours.table["ss"], (sys_row["sum_sq"], top_row["sum_sq"], res_row["sum_sq"])
    ):
        assert math.isclose(got, want, rel_tol=1e-9)


def test_compare_tukey_matches_ranx():
    qrels, runs = make_data(n_queries=50, n_systems=4, seed=3)
    theirs = ranx_report(qrels, runs, "tukey", max_p=0.05)
    ours = irmetrics.compare(qrels, runs, list(MEASURES), test="tukey")
    assert ours.to_dict()["correction"] == "none"
    for p in ours.pairs:
        ref = theirs.comparisons[p["system_a"], p["system_b"]][p["measure"]]["p_value"]
        assert abs(p["pvalue"] - ref) <= 1e-9, (p, ref)
        assert p["pvalue_corrected"] == p["pvalue"]
    r = irmetrics.compare(qrels, runs, "ndcg@10", test="randomized_tukey", n_resamples=500)
    assert all(p["method"] == "Monte Carlo" for p in r.pairs)


def test_compare_tukey_statistic_matches_statsmodels():
    # each pair's q = |mean difference| / its standard error and the df of the pooled
    # variance, as statsmodels' pairwise_tukeyhsd computes them
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    rng = np.random.default_rng(11)
    systems = {f"s{i}": rng.random(40) + 0.05 * i for i in range(5)}
    report = irmetrics.compare_values({"m": systems}, test="tukey")
    names = list(systems)
    values = np.concatenate([systems[s] for s in names])
    labels = np.repeat(names, 40)
    ref = pairwise_tukeyhsd(values, labels)
    assert ref.df_total == 5 * 40 - 5
    want = {}
    # its pairs in the order of its summary table: groups sorted, (0, 1), (0, 2), ...
    pairs = itertools.combinations(ref.groupsunique, 2)
    for (a, b), d, se, p in zip(pairs, ref.meandiffs, ref.std_pairs, ref.pvalues, strict=True):
        want[str(a), str(b)] = (abs(d) / se, p)
    assert len(report.pairs) == len(want) == 10
    for pair in report.pairs:
        q, p = want[pair["system_a"], pair["system_b"]]
        assert math.isclose(pair["statistic"], q, rel_tol=1e-12), (pair, q)
        assert pair["df"] == ref.df_total
        assert abs(pair["pvalue"] - p) <= 1e-3, (pair, p)  # statsmodels interpolates a table


def test_tukey_bad_input():
    with pytest.raises(irmetrics.InputError, match="at least 2 groups"):
        stats.tukey_hsd([1.0, 2.0])
    with pytest.raises(irmetrics.InputError, match="NaN"):
        stats.tukey_hsd([1.0, 2.0], [1.0, math.nan])
    with pytest.raises(irmetrics.InputError, match="n_resamples"):
        stats.randomized_tukey_hsd([1.0, 2.0], [2.0, 1.0], n_resamples=0)
    with pytest.raises(irmetrics.InputError, match="2 systems and 2 topics"):
        stats.anova2([[1.0, 2.0]])
