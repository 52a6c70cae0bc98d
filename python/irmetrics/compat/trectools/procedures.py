"""trectools' ``procedures`` that evaluate runs."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["evaluate_runs", "extract_metric_from_results", "list_of_runs_from_path"]


def list_of_runs_from_path(path: str, suffix: str = "*") -> list[Any]:
    """A :class:`TrecRun` of each file in ``path`` matching ``suffix`` (a glob)."""
    from . import TrecRun

    return [TrecRun(f) for f in sorted(glob.glob(os.path.join(path, suffix)))]


def evaluate_runs(trec_runs: Sequence[Any], trec_qrel: Any, per_query: bool) -> list[Any]:
    """``evaluate_all`` of each run: a list of :class:`TrecRes`."""
    return [r.evaluate_run(trec_qrel, per_query) for r in trec_runs]


def extract_metric_from_results(trec_ress: Sequence[Any], metric: str) -> list[Any]:
    """``(run id, mean, half-width of the 95% t interval of the mean)`` of ``metric``'s
    per-query values in each :class:`TrecRes` (trectools' ``misc.confidence_interval``:
    the standard error times Student's t quantile, n - 1 degrees of freedom)."""
    from ... import stats

    out = []
    for res in trec_ress:
        values = list(res.get_results_for_metric(metric).values())
        low, high = stats.ttest(values, [0.0] * len(values)).confidence_interval(0.95)
        out.append((res.get_runid(), sum(values) / len(values), (high - low) / 2))
    return out
