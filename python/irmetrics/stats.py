"""Significance tests, multiple-comparison corrections and effect sizes on per-query
values, scipy-style: each test takes two equally long arrays (numpy arrays or
sequences of numbers, one value per query, in the same query order) and returns a
:class:`TestResult` with ``.statistic``, ``.pvalue``, ``.method`` (how the p-value was
obtained) and ``.df``. The paired tests take scipy's ``alternative``:
``"two-sided"`` (default), ``"greater"`` (``x`` scores higher than ``y``) or
``"less"``.

>>> from irmetrics import stats
>>> r = stats.ttest([0.61, 0.42, 0.80, 0.33, 0.57], [0.52, 0.40, 0.71, 0.35, 0.43])
>>> round(r.pvalue, 4)
0.0872

To evaluate runs and compare them in one step, see :func:`irmetrics.compare`.
"""

from __future__ import annotations

import math

from . import _core
from ._core import TestResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Union

    ArrayLike = Union[Sequence[float], Any]

__all__ = [
    "Anova2Result",
    "TestResult",
    "TukeyResult",
    "anova2",
    "randomized_tukey_hsd",
    "studentized_range_sf",
    "tukey_hsd",
    "bootstrap_test",
    "correct",
    "effect_size",
    "kendall_tau",
    "randomization_test",
    "sign_test",
    "tau_ap",
    "ttest",
    "wilcoxon",
]


def ttest(x: ArrayLike, y: ArrayLike, alternative: str = "two-sided") -> TestResult:
    """Paired Student's t-test (as ``scipy.stats.ttest_rel(x, y, alternative=...)``),
    ``df = n - 1``; its result's ``confidence_interval(confidence_level=0.95)`` is the t
    interval of the mean difference (one-sided for a one-sided test), as scipy's.

    Identical systems give ``statistic=0, pvalue=1`` (scipy: NaN).
    """
    return _core.ttest(x, y, alternative)


def wilcoxon(
    x: ArrayLike,
    y: ArrayLike,
    alternative: str = "two-sided",
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str = "auto",
) -> TestResult:
    """Wilcoxon's signed-rank test, as ``scipy.stats.wilcoxon(x, y, zero_method=,
    correction=, alternative=, method=)`` with the same defaults.

    ``zero_method``: ``"wilcox"`` drops zero differences, ``"pratt"`` ranks them and
    leaves them out of both rank sums, ``"zsplit"`` splits their ranks between the two.
    ``correction=True``: the continuity correction of the normal approximation (R's
    ``wilcox.test`` default). The statistic is the smaller rank sum (two-sided) or the
    rank sum of the positive differences ``x - y`` (one-sided), as scipy's. ``method``:
    ``"auto"`` gives ``"exact"`` for n <= 50 without ties or zeros, ``"exact
    (permutation)"`` (the exact distribution of the tied ranks) for n <= 13 with them,
    else ``"asymptotic"`` (normal approximation with the tie correction); ``"exact"``
    (up to 1,000 differences; with ties or zeros a non-integral statistic is rounded to
    the conservative side, as scipy) and ``"asymptotic"`` force one. The result's
    ``method`` says which was used.
    """
    return _core.wilcoxon(
        x, y, alternative, zero_method=zero_method, correction=correction, method=method
    )


def sign_test(x: ArrayLike, y: ArrayLike, alternative: str = "two-sided") -> TestResult:
    """The sign test: ``x``'s wins among the queries where the systems differ, against
    Binomial(n, 1/2) (``scipy.stats.binomtest(wins, wins + losses, alternative=...)``)."""
    return _core.sign_test(x, y, alternative)


def randomization_test(
    x: ArrayLike,
    y: ArrayLike,
    n_resamples: int = 10_000,
    seed: int = 42,
    alternative: str = "two-sided",
) -> TestResult:
    """Paired randomization (Fisher) test of the mean difference.

    Exact over all 2^n sign flips for n <= 20 (``method="exact"``, as
    ``scipy.stats.permutation_test(..., permutation_type="samples", alternative=...)``); else
    ``n_resamples`` random flips (``"Monte Carlo"``), p = (count + 1) / (n_resamples + 1).
    The same seed gives the same p-value on any machine and thread count.
    """
    return _core.randomization_test(x, y, n_resamples, seed, alternative)


def bootstrap_test(
    x: ArrayLike,
    y: ArrayLike,
    n_resamples: int = 10_000,
    seed: int = 42,
    alternative: str = "two-sided",
) -> TestResult:
    """Paired bootstrap test shifted to the null (Sakai 2006): the differences are
    resampled with replacement around their mean; p = (count + 1) / (n_resamples + 1),
    count the resamples whose |t| reaches the observed one (one-sided: whose t is at
    least the observed t for ``"greater"``, at most for ``"less"``). Statistic: the
    mean difference."""
    return _core.bootstrap_test(x, y, n_resamples, seed, alternative)


def correct(pvalues: ArrayLike, method: str = "holm") -> Any:
    """Adjusted p-values, a float64 numpy array in the order given (statsmodels'
    ``multipletests(...)[1]``): ``"bonferroni"``, ``"holm"``, ``"sidak"``, ``"holm-sidak"``,
    ``"hochberg"`` (step-up; statsmodels' ``"simes-hochberg"``), ``"hommel"``, ``"bh"``
    (Benjamini-Hochberg; ``"fdr_bh"``, R's ``"fdr"``), ``"by"`` (Benjamini-Yekutieli)
    or ``"none"``, in any letter case, as ``statsmodels.stats.multitest.multipletests``
    computes them (R's ``p.adjust`` agrees). Hommel's takes O(m log m) for m p-values
    where statsmodels' and R's loops take O(m²); its values are theirs to the bit but
    for rare exact ties between Simes products that rounding splits (an ulp or two)."""
    return _core.correct(pvalues, method)


def effect_size(
    x: ArrayLike,
    y: ArrayLike,
    confidence: float = 0.95,
    n_resamples: int | None = None,
    seed: int = 42,
) -> dict[str, Any]:
    """Effect sizes of ``x`` against ``y``: ``mean_diff``, its t-based ``ci`` (as
    ``scipy.stats.ttest_rel(x, y).confidence_interval(confidence)``), with
    ``n_resamples`` its percentile-bootstrap ``bootstrap_ci`` and BCa ``bca_ci`` (from the
    same seeded resamples, as ``scipy.stats.bootstrap`` defines them); paired Cohen's ``d_z``,
    Hedges' ``g_z`` (exact small-sample correction), ``wins`` / ``ties`` / ``losses``.
    Identical systems: ``d_z = g_z = 0``."""
    return _core.effect_size(x, y, confidence, n_resamples, seed)


def kendall_tau(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Kendall's tau-b in O(n log n) with scipy's two-sided p-value
    (``scipy.stats.kendalltau``: ``method`` is ``"exact"`` without ties for n <= 33,
    else ``"asymptotic"``). NaN when either list is constant."""
    return _core.kendall_tau_test(x, y)


def tau_ap(x: ArrayLike, y: ArrayLike) -> TestResult:
    """AP correlation (Yilmaz, Aslam and Robertson 2008) of the ranking by ``y`` against
    the reference ranking by ``x`` (higher scores first; no ties allowed). No p-value is
    defined: ``pvalue`` is NaN."""
    return TestResult(_core.tau_ap(x, y), math.nan, "no p-value")


class TukeyResult:
    """Tukey's HSD of k samples: ``statistic`` (k x k numpy array of mean differences
    ``mean_i - mean_j``, as scipy's ``TukeyHSDResult``), ``pvalue`` (k x k, 1 on the
    diagonal) and ``method``."""

    def __init__(self, statistic: Any, pvalue: Any, method: str) -> None:
        self.statistic = statistic
        self.pvalue = pvalue
        self.method = method

    def __repr__(self) -> str:
        return f"TukeyResult(method={self.method!r}, pvalue=\n{self.pvalue})"


def _square(values: list[float], k: int) -> Any:
    import numpy as np

    return np.array(values, dtype=float).reshape(k, k)


def _mean_diffs(samples: tuple[ArrayLike, ...]) -> Any:
    import numpy as np

    means = np.array([np.mean(np.asarray(s, dtype=float)) for s in samples])
    return means[:, None] - means[None, :]


def tukey_hsd(*samples: ArrayLike) -> TukeyResult:
    """Tukey's HSD test of k samples (one-way, as ``scipy.stats.tukey_hsd``): pooled
    within-group variance, the studentized range with k groups and N - k degrees of
    freedom. The upper tail is integrated directly (adaptive Gauss-Kronrod), so small
    p-values keep their digits (scipy computes 1 - cdf to an absolute 1e-11). Needs
    numpy.

    Samples without any spread within them (pooled variance 0): ``pvalue`` 1 for equal
    means, 0 for different ones, as the t-test does for identical systems (scipy: NaN)."""
    diffs, p = _core.tukey_hsd(list(samples))
    k = len(samples)
    return TukeyResult(_square(diffs, k), _square(p, k), "studentized range")


def randomized_tukey_hsd(
    *samples: ArrayLike, n_resamples: int = 10_000, seed: int = 42
) -> TukeyResult:
    """Carterette's (2012) randomized Tukey HSD of k systems' per-query values (equally
    long, same query order): each resample permutes the values of every query among the
    systems; a pair's p-value is the share of resamples (plus one, over n_resamples + 1)
    whose range of means reaches the pair's difference. Needs numpy."""
    p = _core.randomized_tukey_hsd(list(samples), n_resamples, seed)
    return TukeyResult(_mean_diffs(samples), _square(p, len(samples)), "Monte Carlo")


def studentized_range_sf(q: float, k: int, df: float) -> float:
    """P(Q > q) of the studentized range with ``k`` groups and ``df`` degrees of freedom
    (``math.inf`` for the range of k normals). As scipy's ``studentized_range``, ``df``
    of 100,000 or more is taken as infinite (the two differ by at most 2e-5 there).
    ``k`` is at most 10,000 (computed to 1e-10 of scipy's up to there)."""
    return _core.studentized_range_sf(q, k, df)


class Anova2Result:
    """Two-way ANOVA without replication: ``statistic`` and ``pvalue`` (the systems'
    F test), ``df`` (systems, topics, residual), and ``table`` with the sums of squares,
    F values and p-values of systems and topics."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.statistic = table["f"][0]
        self.pvalue = table["pvalue"][0]
        self.df = tuple(table["df"])

    def __repr__(self) -> str:
        return f"Anova2Result(statistic={self.statistic}, pvalue={self.pvalue}, df={self.df})"


def anova2(matrix: Any) -> Anova2Result:
    """Two-way ANOVA without replication of a systems x topics matrix (one row per
    system, one column per topic), as statsmodels' ``anova_lm`` of
    ``value ~ C(system) + C(topic)``.

    Without any residual (every value is its system's effect plus its topic's): F is
    infinite and ``pvalue`` 0 where the systems differ; where they do not, F is 0/0,
    NaN, with ``pvalue`` 1. statsmodels computes such cases from rounding noise (F of
    0.1 or 1e29)."""
    return Anova2Result(_core.anova2(list(matrix)))
