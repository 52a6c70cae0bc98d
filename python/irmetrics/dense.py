"""Dense batches, the shape ML code holds: ``y_true`` (relevance labels) and
``y_score`` as 2-D arrays, one row per query and one column per candidate document,
as sklearn's ``ndcg_score`` / ``dcg_score`` and torchmetrics' retrieval metrics take
them. A 1-D array is one query.

:func:`evaluate` gives every measure of the engine with trec_eval's definitions: row
``i`` is query ``i``, column ``j`` document ``j``, every cell a judgment (label 0:
judged non-relevant); equal scores rank the later column first (trec_eval's rule on
the column numbers). With ``ties="average"`` it gives sklearn's tie-averaged DCG and
nDCG instead. :func:`ndcg_score` and :func:`dcg_score` are sklearn's, argument for
argument, with real-valued gains.
"""

from __future__ import annotations

import re

import numpy as np

from . import _core
from ._core import Evaluator, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["dcg_score", "evaluate", "ndcg_score"]

_DCG_NAME = re.compile(r"(n?dcg)(?:(?:@|_cut[._])(\d+))?", re.IGNORECASE)


def _matrix(a: Any, name: str) -> np.ndarray:
    try:
        m = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} must hold numbers: {e}") from None
    if m.ndim == 1:
        m = m.reshape(1, -1)
    if m.ndim != 2:
        raise InputError(f"{name} must be a 2-D array (queries x documents), got {m.ndim}-D")
    return np.ascontiguousarray(m)


def _pair(y_true: Any, y_score: Any) -> tuple[np.ndarray, np.ndarray]:
    return _matrix(y_true, "y_true"), _matrix(y_score, "y_score")


def _cutoff(k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a whole number >= 1 (or None: every rank), got {k!r}")
    return int(k)


def _mean(values: np.ndarray, sample_weight: Any) -> float:
    if sample_weight is None:
        return float(np.mean(values))
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != values.shape:
        raise InputError(f"sample_weight has {w.size} values for {values.size} rows")
    return float(np.average(values, weights=w))


def ndcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """sklearn's ``ndcg_score``: the mean (weighted by ``sample_weight``) over rows of
    DCG / ideal DCG, gains ``y_true`` (non-negative reals), discount ``1 / log2(rank +
    1)`` up to rank ``k``; tied scores share their mean gain unless ``ignore_ties``
    (then equal scores rank the later column first). A row whose ideal DCG is 0 scores
    0."""
    t, s = _pair(y_true, y_score)
    return _mean(_core.dense_dcg("ndcg", t, s, _cutoff(k), 2.0, ignore_ties), sample_weight)


def dcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """sklearn's ``dcg_score``: the mean (weighted by ``sample_weight``) over rows of
    the DCG, gains ``y_true``, discount ``1 / log_base(rank + 1)`` up to rank ``k``;
    ties as in :func:`ndcg_score`."""
    t, s = _pair(y_true, y_score)
    return _mean(
        _core.dense_dcg("dcg", t, s, _cutoff(k), float(log_base), ignore_ties), sample_weight
    )


def evaluate(
    y_true: Any,
    y_score: Any,
    measures: _core._Measures,
    *,
    per_query: bool = False,
    ties: str = "break",
    **options: Any,
) -> dict[str, Any]:
    """Measures of a dense batch: ``{measure: mean}``, or with ``per_query=True``
    ``{measure: array of one value per row}``.

    ``ties="break"`` (default): any measure name of :func:`irmetrics.evaluate`, with
    trec_eval's definitions (labels must be whole numbers; options such as
    ``relevance_level`` pass through). ``ties="average"``: sklearn's tie-averaged
    ``DCG`` / ``nDCG`` (``"nDCG@10"``, ``"ndcg_cut.10"``, ``"dcg"``), real-valued gains.
    """
    names = _core._measure_names(measures)
    t, s = _pair(y_true, y_score)
    if ties == "average":
        if options:
            raise InputError(f"ties='average' takes no evaluation options, got {sorted(options)}")
        out: dict[str, Any] = {}
        for name in names:
            m = _DCG_NAME.fullmatch(name)
            if m is None:
                raise InputError(
                    f"ties='average' is sklearn's DCG and nDCG only; {name!r} needs ties='break'"
                )
            k = int(m.group(2)) if m.group(2) else None
            if k == 0:
                raise InputError(f"{name!r}: the cut-off must be at least 1")
            values = _core.dense_dcg(m.group(1).lower(), t, s, k, 2.0, False)
            out[name] = values if per_query else float(values.mean())
        return out
    if ties != "break":
        raise InputError(f"ties must be 'break' or 'average', not {ties!r}")
    qrels, run = _core.dense_inputs(t, s)
    ev = Evaluator(qrels, names, **options)
    if not per_query:
        return ev.evaluate(run)
    res = ev.evaluate(run, per_query=True)
    # query ids are zero-padded row numbers: their order is row order
    return {m: np.array([v[q] for q in sorted(v)]) for m, v in res.items()}
