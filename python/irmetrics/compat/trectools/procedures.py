"""trectools' ``procedures`` that evaluate runs."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["evaluate_runs", "list_of_runs_from_path"]


def list_of_runs_from_path(path: str, suffix: str = "*") -> list[Any]:
    """A :class:`TrecRun` of each file in ``path`` matching ``suffix`` (a glob)."""
    from . import TrecRun

    return [TrecRun(f) for f in sorted(glob.glob(os.path.join(path, suffix)))]


def evaluate_runs(trec_runs: Sequence[Any], trec_qrel: Any, per_query: bool) -> list[Any]:
    """``evaluate_all`` of each run: a list of :class:`TrecRes`."""
    return [r.evaluate_run(trec_qrel, per_query) for r in trec_runs]
