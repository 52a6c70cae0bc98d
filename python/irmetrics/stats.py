"""Significance tests, multiple-comparison corrections and effect sizes on per-query
values, scipy-style: each test takes two equally long arrays (numpy arrays or
sequences of numbers, one value per query, in the same query order) and returns a
:class:`TestResult` with ``.statistic``, ``.pvalue`` (two-sided), ``.method`` (how the
p-value was obtained) and ``.df``.

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
    "TestResult",
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


def ttest(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Paired Student's t-test (as ``scipy.stats.ttest_rel(x, y)``), ``df = n - 1``.

    Identical systems give ``statistic=0, pvalue=1`` (scipy: NaN).
    """
    return _core.ttest(x, y)


def wilcoxon(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Wilcoxon's signed-rank test with scipy's defaults (``scipy.stats.wilcoxon(x, y)``).

    Zero differences are dropped; the statistic is the smaller rank sum. ``method`` says
    how the p-value was had: ``"exact"`` (n <= 50, no ties or zeros), ``"exact
    (permutation)"`` (n <= 13 with ties or zeros), ``"asymptotic"`` (normal
    approximation with the tie correction, no continuity correction).
    """
    return _core.wilcoxon(x, y)


def sign_test(x: ArrayLike, y: ArrayLike) -> TestResult:
    """The sign test: ``x``'s wins among the queries where the systems differ, against
    Binomial(n, 1/2), two-sided (``scipy.stats.binomtest(wins, wins + losses)``)."""
    return _core.sign_test(x, y)


def randomization_test(
    x: ArrayLike, y: ArrayLike, n_resamples: int = 10_000, seed: int = 42
) -> TestResult:
    """Paired randomization (Fisher) test of the mean difference.

    Exact over all 2^n sign flips for n <= 20 (``method="exact"``, as
    ``scipy.stats.permutation_test(..., permutation_type="samples")``); else
    ``n_resamples`` random flips (``"Monte Carlo"``), p = (count + 1) / (n_resamples + 1).
    The same seed gives the same p-value on any machine and thread count.
    """
    return _core.randomization_test(x, y, n_resamples, seed)


def bootstrap_test(
    x: ArrayLike, y: ArrayLike, n_resamples: int = 10_000, seed: int = 42
) -> TestResult:
    """Paired bootstrap test shifted to the null (Sakai 2006): the differences are
    resampled with replacement around their mean; p = (count + 1) / (n_resamples + 1),
    count the resamples whose |t| reaches the observed one. Statistic: the mean
    difference."""
    return _core.bootstrap_test(x, y, n_resamples, seed)


def correct(pvalues: ArrayLike, method: str = "holm") -> list[float]:
    """Adjusted p-values: ``"bonferroni"``, ``"holm"``, ``"bh"`` (Benjamini-Hochberg),
    ``"by"`` (Benjamini-Yekutieli) or ``"none"``, as
    ``statsmodels.stats.multitest.multipletests`` computes them."""
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
    ``n_resamples`` its percentile-bootstrap ``bootstrap_ci``; paired Cohen's ``d_z``,
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
