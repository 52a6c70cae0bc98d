"""trectools' ``fusion`` module on irmetrics' fusion kernels: each fused run a
:class:`~irmetrics.compat.trectools.TrecRun` whose ``run_data`` is trectools' (rank 1 up
per query, ties by document id ascending, the same ``system`` names)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import irmetrics

from ..._core import InputError

__all__ = ["combos", "rank_biased_precision_fusion", "reciprocal_rank_fusion"]

# trectools' strategies and ranx's (irmetrics') methods of the same definition
_COMBOS = {"sum": "sum", "max": "max", "min": "min", "anz": "anz", "mnz": "mnz", "med": "med"}


def _fused(
    runs: Sequence[Any], method: str, params: dict[str, float], system: str, max_docs: Any
) -> Any:
    import numpy as np

    from . import TrecRun, _pandas, _query_starts, _ties_ascending

    # irmetrics' fused run by query, ranked (score descending, ties by id descending),
    # reordered to trectools' order (ties by id ascending)
    fused = irmetrics.fuse(runs, method, params=params or None).to_pandas()
    starts = _query_starts(fused["query_id"])
    to, rank = _ties_ascending(starts, fused["score"].to_numpy())
    order = np.empty(len(to), dtype=np.int64)
    order[to] = np.arange(len(to))
    rank = rank[order] + 1
    if isinstance(max_docs, dict):
        queries = fused["query_id"].iloc[np.flatnonzero(starts)].tolist()
        missing = [q for q in queries if q not in max_docs]
        if missing:
            raise InputError(f"max_docs has no value for query {missing[0]!r}")
        limit: Any = np.array([_max_docs(max_docs[q]) for q in queries])
        limit = limit[np.cumsum(starts) - 1]  # (starts stay where they are)
    else:
        limit = _max_docs(max_docs)
    keep = rank <= limit
    fused = fused.iloc[order[keep]].reset_index(drop=True)
    pd = _pandas()
    out = pd.DataFrame(
        {
            "query": fused["query_id"],
            "q0": "Q0",
            "docid": fused["doc_id"],
            "rank": rank[keep],
            "score": fused["score"],
            "system": system,
        }
    )
    run = TrecRun()
    run._set_frame(out)  # irmetrics' run: no duplicate to look for
    return run


def _max_docs(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise InputError(f"max_docs must be a whole number of at least 1, not {n!r}")
    return int(n)


def _ranked(trec_runs: Sequence[Any], depth: int = 1000) -> list[Any]:
    """Each run's top ``depth`` in its stored order (trectools' ``get_top_documents``)."""
    from . import _stored_order

    if not trec_runs:
        raise InputError("no runs to fuse")
    return [_stored_order(r, depth) for r in trec_runs]


def reciprocal_rank_fusion(trec_runs: Sequence[Any], k: int = 60, max_docs: int = 1000) -> Any:
    """Cormack et al.'s RRF: sum over the runs of 1 / (k + rank), each run's top 1,000."""
    return _fused(
        _ranked(trec_runs), "rrf", {"k": k}, f"reciprocal_rank_fusion_k={int(k)}", max_docs
    )


def rank_biased_precision_fusion(
    trec_runs: Sequence[Any], p: float = 0.80, max_docs: int = 1000
) -> Any:
    """Sum over the runs of (1 - p) p^(rank - 1), each run's top 1,000 (ranx's ``rbc``)."""
    name = f"rank_biased_precision_fusion_p={p:.3f}"
    return _fused(_ranked(trec_runs), "rbc", {"phi": p}, name, max_docs)


def combos(trec_runs: Sequence[Any], strategy: str = "sum", max_docs: Any = 1000) -> Any:
    """Score fusion of every document of the runs: ``strategy`` ``"sum"``, ``"max"``,
    ``"min"``, ``"anz"`` (mean of the present scores), ``"mnz"`` (sum times the
    number of runs holding it) or ``"med"`` (median of the present scores);
    ``max_docs`` an int or ``{query: int}``. Any number of runs (trectools' merge keeps
    two score columns, so it fuses two runs right and no more). None for fewer than
    two runs, as trectools."""
    from . import _scores

    if strategy not in _COMBOS:
        raise InputError(f"Unknown strategy {strategy!r}. Options are: {', '.join(_COMBOS)}")
    if len(trec_runs) < 2:
        return None
    return _fused(
        [_scores(r) for r in trec_runs], _COMBOS[strategy], {}, f"comb_{strategy}", max_docs
    )
