"""irmetrics: fast, exact evaluation of ranked retrieval.

The numbers are NIST trec_eval 10's, to the last digit (same tie-breaking, same
definitions, full double precision), computed in parallel by a Rust engine.

>>> import irmetrics
>>> qrels = irmetrics.Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 1}})
>>> run = irmetrics.Run.from_dict({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}})
>>> irmetrics.evaluate(qrels, run, ["P@2", "map"])
{'P@2': 0.5, 'map': 0.8333333333333333}
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from . import _core
from ._core import (
    Error,
    Evaluator,
    FileError,
    FormatError,
    InputError,
    MeasureError,
    MissingQueryError,
    Qrels,
    Run,
    __version__,
    canonical_names,
    measures,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)

__all__ = [
    "Error",
    "Evaluator",
    "FileError",
    "FormatError",
    "InputError",
    "MeasureError",
    "MissingQueryError",
    "Qrels",
    "Run",
    "__version__",
    "canonical_names",
    "evaluate",
    "measures",
]

# The Rust thread pool does not survive fork(): a forked child computes on its own
# thread (multiprocessing already spreads the work over processes).
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_core._after_fork_in_child)

if TYPE_CHECKING:  # typing is not imported at run time: it costs start-up time
    from collections.abc import Sequence
    from typing import Any, Union

    QrelsLike = Union[Qrels, Mapping[str, Mapping[str, int]], str, os.PathLike[str]]
    RunLike = Union[Run, Mapping[str, Mapping[str, float]], str, os.PathLike[str]]


def _as_qrels(qrels: QrelsLike) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return Qrels.from_file(qrels)
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(dict(qrels))
    raise TypeError(f"qrels must be a Qrels, a dict or a file path, not {type(qrels).__name__}")


def _as_run(run: RunLike) -> Run:
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return Run.from_file(run)
    if isinstance(run, Mapping):
        return Run.from_dict(dict(run))
    raise TypeError(f"run must be a Run, a dict or a file path, not {type(run).__name__}")


def evaluate(
    qrels: QrelsLike,
    run: RunLike,
    measures: str | Sequence[str],
    *,
    per_query: bool = False,
    output: str = "dict",
    stream: bool = False,
    **options: Any,
) -> Any:
    """Evaluate ``run`` against ``qrels``.

    ``qrels`` and ``run`` may be :class:`Qrels` / :class:`Run` objects, nested dicts
    (``{query_id: {doc_id: label_or_score}}``) or file paths. ``measures`` uses
    trec_eval (``"P.5,10"``, ``"ndcg_cut.10"``, ``"all_trec"``), ir_measures
    (``"nDCG@10"``, ``"P(rel=2)@5"``) or ranx (``"ndcg@10"``, ``"mrr"``) names.

    ``output="dict"`` (default) returns ``{measure: value}``, or with
    ``per_query=True`` ``{measure: {query_id: value}}``; a request naming one value
    keeps its spelling as the key, one naming several (``"P.5,10"``) gives canonical
    names (``"P_5"``, ``"P_10"``). ``output="numpy"`` returns
    ``(query_ids, columns, values, summary)`` with a float64 ``values`` array of shape
    ``(queries, columns)``; ``output="pandas"`` a DataFrame indexed by query id (its
    ``attrs["all"]`` holds trec_eval's summary values). Both use canonical names.

    ``stream=True`` (``run`` a path) evaluates the file query by query without
    loading it; the file must be grouped by query.

    Options (trec_eval flag): ``complete`` (-c), ``relevance_level`` (-l),
    ``max_docs`` (-M), ``judged_only`` (-J), ``num_docs_in_collection`` (-N),
    ``n_threads`` (0 = all cores).
    """
    ev = Evaluator(_as_qrels(qrels), measures, **options)
    if stream and not isinstance(run, (str, os.PathLike)):
        raise TypeError("stream=True needs the run as a file path")
    if output == "dict":
        if stream:
            return ev.evaluate_file(run, per_query=per_query)
        return ev.evaluate(_as_run(run), per_query=per_query)
    if output not in ("numpy", "pandas"):
        raise ValueError(f"output must be 'dict', 'numpy' or 'pandas', not {output!r}")
    table = ev.evaluate_table(run if stream else _as_run(run), stream=stream)
    if output == "numpy":
        return table
    import pandas as pd

    ids, columns, values, summary = table
    df = pd.DataFrame(values, index=pd.Index(ids, name="query_id"), columns=columns)
    df.attrs["all"] = dict(zip(columns, summary.tolist()))
    return df
