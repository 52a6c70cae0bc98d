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

import math
import os
from collections.abc import Mapping

from . import _core, stats
from ._core import (
    ArrowData,
    Error,
    Evaluator,
    FileError,
    FormatError,
    InputError,
    MeasureError,
    MissingDependencyError,
    MissingQueryError,
    Qrels,
    QueryStream,
    Run,
    __version__,
    canonical_names,
    fuse,
    fusion_methods,
    kendall_tau,
    kendall_topk_distance,
    measures,
    normalize,
    optimize_fusion,
    rbo,
    set_max_line_bytes,
    spearman_rho,
    train_fusion,
)
from ._frames import is_lazy_frame as _is_lazy_frame
from .report import Report, compare, compare_values, html_report

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)

__all__ = [
    "Report",
    "aggregate",
    "compare",
    "compare_values",
    "diversity",
    "html_report",
    "stats",
    "bootstrap_ci",
    "compare_runs",
    "pooled_auroc",
    "fuse",
    "fusion_methods",
    "kendall_tau",
    "kendall_topk_distance",
    "normalize",
    "optimize_fusion",
    "rbo",
    "set_max_line_bytes",
    "spearman_rho",
    "train_fusion",
    "system_correlation",
    "ArrowData",
    "Error",
    "Evaluator",
    "FileError",
    "FormatError",
    "InputError",
    "MeasureError",
    "MissingDependencyError",
    "MissingQueryError",
    "Qrels",
    "QueryStream",
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

# Submodules reached as attributes of the package without an import of their own, as
# scipy's are (`import irmetrics; irmetrics.online.evaluate(log)`), each imported on its
# first use: `import irmetrics` loads none of them (nor matplotlib or pyspark, which
# plot and spark import only when called).
_SUBMODULES = ("compat", "dense", "online", "plot", "spark")

if TYPE_CHECKING:
    from . import compat as compat
    from . import dense as dense
    from . import online as online
    from . import plot as plot
    from . import spark as spark
else:

    def __getattr__(name):
        if name in _SUBMODULES:
            import importlib

            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))


if TYPE_CHECKING:  # typing is not imported at run time: it costs start-up time
    from collections.abc import Callable, Iterable
    from typing import Any, Union

    # the inner mappings must be dicts (Qrels.from_dict / Run.from_dict refuse others)
    QrelsLike = Union[Qrels, Mapping[str, dict[str, int]], str, os.PathLike[str]]
    RunLike = Union[Run, Mapping[str, dict[str, float]], str, os.PathLike[str]]


def evaluate(
    qrels: QrelsLike,
    run: RunLike,
    measures: _core._Measures,
    *,
    per_query: bool = False,
    output: str = "dict",
    stream: bool = False,
    aggregate: str = "mean",
    ddof: int | None = None,
    progress: bool | Callable[[int, int], object] | None = None,
    **options: Any,
) -> Any:
    """Evaluate ``run`` against ``qrels``.

    ``qrels`` and ``run`` may be :class:`Qrels` / :class:`Run` objects, nested dicts
    (``{query_id: {doc_id: label_or_score}}``), pandas DataFrames (columns found by
    name, as in ``from_dataframe``), Arrow data (a polars DataFrame, a pyarrow Table or
    anything with ``__arrow_c_stream__``, read in Rust as in ``from_arrow``), file
    paths, rows (a list or iterator of ``(query_id, doc_id, value)``, as ``from_rows``)
    or ranx's ``Qrels`` / ``Run`` and trectools' ``TrecQrel`` / ``TrecRun``. ``measures`` uses
    trec_eval (``"P.5,10"``, ``"ndcg_cut.10"``, ``"all_trec"``), ir_measures
    (``"nDCG@10"``, ``"P(rel=2)@5"``, or its measure objects) or ranx (``"ndcg@10"``,
    ``"mrr"``) names; a list keeps its order, a set is sorted by name.
    Measures beyond trec_eval use the same spellings: ``"hits@10"``, ``"f1@10"``,
    ``"F(beta=0.5)@10"``, ``"dcg@10"``, ``"ndcg_burges@10"``,
    ``"nDCG(dcg='exp-log2')@10"``, ``"ERR@20"`` (maximum grade from the qrels, in any
    letter case; gdeval's fixed grade 4 is ``"ERR(gmax=4)@20"``), ``"nERR@20"``,
    ``"Judged@10"``,
    ``"RBP(rel=1,p=0.8)"``, ``"relative_map@100"``, ``"fallout@100"`` (needs
    ``num_docs_in_collection``), ...; ``measures()`` lists every family. Names are
    case-insensitive (``"MAP"``, ``"NDCG@10"``). ``names`` picks whose meaning a name
    takes where the peers differ: ``None`` (trec_eval's names keep trec_eval's meaning:
    ``"recall"`` is ``recall_5`` ... ``recall_1000``), ``"ranx"`` (``"recall"`` and
    ``"hits"`` without ``@k`` are ranx's whole ranking) or ``"ir_measures"``
    (``"ERR@k"`` is gdeval's, maximum grade 4).

    ``output="dict"`` (default) returns ``{measure: value}``, or with
    ``per_query=True`` ``{measure: {query_id: value}}``; a request naming one value
    keeps its spelling as the key, one naming several (``"P.5,10"``) gives canonical
    names (``"P_5"``, ``"P_10"``). ``output="numpy"`` returns
    ``(query_ids, columns, values, summary)`` with a float64 ``values`` array of shape
    ``(queries, columns)``; ``output="pandas"`` a DataFrame indexed by query id (its
    ``attrs["all"]`` holds trec_eval's summary values); ``output="arrow"`` a pyarrow
    Table and ``output="polars"`` a polars DataFrame, each with a ``query_id`` column
    and one float64 column per value. All use canonical names.

    A TREC run file (``run`` a path) whose queries' lines are together is evaluated as
    it is read, without loading the run; one where a query comes back after others is
    then read whole (the same numbers either way). ``stream=True`` refuses such a file
    instead.

    ``aggregate`` combines the per-query values: ``"mean"`` (trec_eval's ``all``, the
    default), ``"gmean"`` (1e-5 floor, as GMAP), ``"median"`` or ``"std"`` (``ddof=1``,
    the sample standard deviation, by default; ``ddof=0`` the population one, as ranx
    and elinor report); with a statistic other than the mean, summary-only values
    (``num_q``, ``runid``, ``gm_map``) and ``relstring`` are left out.

    ``progress``: ``True`` shows a bar (tqdm's when installed, else a line on stderr)
    once the evaluation has run 2 seconds (``IRMETRICS_PROGRESS_DELAY``); a callable
    is called as ``progress(done, total)`` (queries evaluated) about ten times a second
    and once at the end, on this thread; an exception it raises (KeyboardInterrupt
    included) stops the work. ``None`` (default) or ``False``: silent. Not with
    ``stream=True``.

    Options (trec_eval flag): ``complete`` (-c), ``relevance_level`` (-l),
    ``max_docs`` (-M), ``judged_only`` (-J), ``num_docs_in_collection`` (-N),
    ``n_threads`` (0 = all cores); ``names`` (see above); ``credibility``: credibility
    judgments (a path, Qrels, dict or DataFrame, labels 0 or more) for ``nlre``,
    ``ngre``, ``nwcs``, ``cam`` and ``wham`` (Lioma et al. 2017); ``ties``: the order of
    equal scores, ``"descending"`` by document id (trec_eval's, the default) or
    ``"ascending"`` (ir_measures' ``RR@k`` and ``Judged@k``, from its msmarco and judged
    providers, and pyndeval).
    """
    aggregate = _statistic(aggregate, ddof)
    ev = Evaluator(qrels, measures, **options)
    if stream and not isinstance(run, (str, os.PathLike)):
        raise InputError("stream=True needs the run as a file path")

    if stream and progress:
        raise InputError("progress is not reported with stream=True")
    if output == "dict":
        if stream:
            # a path, checked above
            return ev.evaluate_file(run, per_query=per_query, aggregate=aggregate)  # type: ignore[arg-type]
        return ev.evaluate(run, per_query=per_query, aggregate=aggregate, progress=progress)
    if output not in _TABLES:
        raise InputError(f"output must be 'dict', {', '.join(map(repr, _TABLES))}, not {output!r}")
    table = ev.evaluate_table(run, stream=stream, progress=progress)
    return _TABLES[output](*table)


def diversity(
    qrels: Any,
    run: RunLike,
    measures: _core._Measures | None = None,
    *,
    per_query: bool = False,
    output: str = "dict",
    alpha: float = 0.5,
    beta: float = 0.5,
    relevance_level: int = 1,
    judged_only: bool = False,
    complete: bool = False,
    max_docs: int | None = None,
    ties: str = "descending",
    n_threads: int | None = None,
) -> Any:
    """Diversity measures with ndeval's exact conventions (what pyndeval and
    ir_measures report): alpha-nDCG@k, alpha-DCG@k, ERR-IA@k, nERR-IA@k, NRBP, nNRBP,
    AP-IA (ndeval's MAP-IA per topic), P-IA@k and subtopic recall@k.

    ``qrels``: subtopic judgments, a file path (``topic subtopic docno rel`` lines, as
    ndeval reads), ``(query_id, subtopic_id, doc_id, relevance)`` rows (pyndeval's
    ``SubtopicQrel``) or a table (pandas, polars, a polars LazyFrame, pyarrow) with
    columns ``query_id``, ``subtopic_id`` (or ir_measures' ``iteration``), ``doc_id``,
    ``relevance``. ``run``: anything
    :func:`evaluate` takes (a :class:`Run`, a path, a dict, a DataFrame, Arrow data, rows).

    ``measures``: ir_measures' names (``"alpha_nDCG@20"``, ``"alpha_DCG@20"``,
    ``"ERR_IA@20"``, ``"nERR_IA@20"``, ``"NRBP"``, ``"nNRBP"``, ``"AP_IA"``,
    ``"P_IA@10"``, ``"StRecall@20"``, with options such as
    ``"alpha_nDCG(alpha=0.3,rel=2,judged_only=True)@10"`` or ``"NRBP(beta=0.8)"``) or
    ndeval's (``"alpha-nDCG@20"``, ``"MAP-IA"``, ``"strec@20"``); None: ndeval's 21
    columns (cut-offs 5, 10, 20) in ir_measures' names.

    Returns ``{measure: mean}``, or with ``per_query=True`` ``{measure: {query_id:
    value}}``; ``output="numpy"`` returns ``(query_ids, names, values, means)`` and
    ``output="pandas"`` a DataFrame indexed by query id (``attrs["all"]``: the means).
    Topics are those both judged and in the run; the mean is over them (ndeval's
    ``amean``), or with ``complete=True`` over every judged topic (ndeval's ``-c``;
    ir_measures' ``calc_aggregate`` averages so).

    Options (ndeval's flag): ``alpha`` (``-alpha``, redundancy intolerance),
    ``beta`` (``-beta``, NRBP's patience), ``max_docs`` (``-M``), ``complete``
    (``-c``), ``relevance_level`` (a label at least this is relevant; ndeval: 1),
    ``judged_only`` (ir_measures': unjudged documents left out), ``ties``: the order of
    equal scores, ``"descending"`` by document id (trec_eval, ndeval ``-traditional``)
    or ``"ascending"`` (pyndeval and ir_measures), ``n_threads`` (0 = all cores).
    """
    qrels = _subtopic_rows(qrels)
    names, ids, values, means = _core.diversity(
        qrels,
        run,
        measures,
        alpha=alpha,
        beta=beta,
        relevance_level=relevance_level,
        judged_only=judged_only,
        complete=complete,
        max_docs=max_docs,
        ties=ties,
        n_threads=n_threads,
    )
    if output == "numpy":
        return ids, names, values, means
    if output == "pandas":
        _core._require("pandas", "output='pandas'", "'irmetrics[pandas]'")
        import pandas as pd

        df = pd.DataFrame(values, index=pd.Index(ids, name="query_id"), columns=names)
        df.attrs["all"] = dict(zip(names, means))
        return df
    if output != "dict":
        raise InputError(f"output must be 'dict', 'numpy' or 'pandas', not {output!r}")
    if per_query:
        return {n: dict(zip(ids, values[:, i].tolist())) for i, n in enumerate(names)}
    return dict(zip(names, means))


def _subtopic_rows(qrels: Any) -> Any:
    """Subtopic judgments given as a table (pandas, polars, a polars LazyFrame, Arrow)
    as ``(query_id, subtopic_id, doc_id, relevance)`` rows; anything else as given."""
    if _is_lazy_frame(qrels):
        qrels = qrels.collect()
    if hasattr(qrels, "column_names") and hasattr(qrels, "to_pylist"):  # pyarrow
        cols = list(qrels.column_names)
    elif hasattr(qrels, "columns") and (
        hasattr(qrels, "itertuples") or hasattr(qrels, "iter_rows")
    ):
        cols = list(qrels.columns)
    else:
        return qrels
    sub = "subtopic_id" if "subtopic_id" in cols else "iteration"
    need = ("query_id", sub, "doc_id", "relevance")
    missing = [c for c in need if c not in cols]
    if missing:
        raise InputError(
            f"subtopic qrels table lacks the column(s) {missing} (it has {cols}); it "
            "needs query_id, subtopic_id (or iteration), doc_id, relevance"
        )

    def values(name: str) -> list[Any]:
        column = qrels[name]
        for method in ("tolist", "to_list", "to_pylist"):  # pandas, polars, pyarrow
            if hasattr(column, method):
                return list(getattr(column, method)())
        return list(column)

    return list(zip(*(values(c) for c in need)))


def _numpy_table(ids: list[str], columns: list[str], values: Any, summary: Any) -> Any:
    return ids, columns, values, summary


def _pandas_table(ids: list[str], columns: list[str], values: Any, summary: Any) -> Any:
    _core._require("pandas", "output='pandas'", "'irmetrics[pandas]'")
    import pandas as pd

    df = pd.DataFrame(values, index=pd.Index(ids, name="query_id"), columns=columns)
    df.attrs["all"] = dict(zip(columns, summary.tolist()))
    return df


def _arrow_table(ids: list[str], columns: list[str], values: Any, summary: Any) -> Any:
    _core._require("pyarrow", "output='arrow'", "'irmetrics[arrow]'")
    import pyarrow as pa

    return pa.table({"query_id": ids, **{c: values[:, i] for i, c in enumerate(columns)}})


def _polars_table(ids: list[str], columns: list[str], values: Any, summary: Any) -> Any:
    _core._require("polars", "output='polars'", "'irmetrics[polars]'")
    import polars as pl

    return pl.DataFrame({"query_id": ids, **{c: values[:, i] for i, c in enumerate(columns)}})


#: The tables that ``evaluate(..., output=...)`` returns, built from the one numpy table.
_TABLES = {
    "numpy": _numpy_table,
    "pandas": _pandas_table,
    "arrow": _arrow_table,
    "polars": _polars_table,
}


def _values(values: Mapping[Any, float] | Iterable[float]) -> Any:
    """Per-query values as ``_core`` reads them (a dict, an array or a sequence, converted
    there at once); text is refused, not parsed (a str of digits was taken as its
    number, and bytes as their byte values: b"ab" had a mean of 97.5)."""
    if isinstance(values, (str, bytes, bytearray)) or not hasattr(values, "__iter__"):
        raise InputError(
            f"values must be a dict {{query_id: value}} or a list of numbers, got "
            f"{type(values).__name__}"
        )
    if isinstance(values, Mapping) and not isinstance(values, dict):
        return dict(values)
    return values


def _statistic(how: str, ddof: int | None) -> str:
    """``how`` with ``ddof`` folded in: ``"std"`` with ``ddof=0`` is ``"std_pop"``."""
    if ddof is None:
        return how
    if how != "std":
        raise InputError(f"ddof applies to how='std' only, not {how!r}")
    if isinstance(ddof, bool) or ddof not in (0, 1):
        raise InputError(f"ddof must be 0 (population) or 1 (sample), not {ddof!r}")
    return "std" if ddof == 1 else "std_pop"


def aggregate(
    values: Mapping[Any, float] | Iterable[float], how: str = "mean", *, ddof: int | None = None
) -> float:
    """Combine per-query values (a ``{query_id: value}`` dict or a list).

    ``how``: ``"mean"``, ``"gmean"`` (geometric mean with trec_eval's 1e-5 floor, as
    in GMAP), ``"median"``, ``"std"`` (standard deviation: ``ddof=1``, the sample one
    with divisor n - 1, by default; ``ddof=0`` the population one with divisor n, as
    ranx and elinor report; ``"std_pop"`` is ``"std"`` with ``ddof=0``).
    Returns NaN for no values (and for one value with the sample ``"std"``).
    """
    return _core.aggregate(_values(values), _statistic(how, ddof))


def bootstrap_ci(
    values: Mapping[Any, float] | Iterable[float],
    confidence: float = 0.95,
    resamples: int = 10000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval ``(low, high)`` for the mean.

    Resamples the per-query values with replacement ``resamples`` times; the same
    ``seed`` always gives the same interval. Values holding NaN give ``(nan, nan)``,
    as ``scipy.stats.bootstrap`` does.
    """
    return _core.bootstrap_ci(_values(values), confidence, resamples, seed)


def compare_runs(
    a: RunLike,
    b: RunLike,
    method: str = "rbo",
    *,
    k: int | None = None,
    p: float = 0.9,
    penalty: float = 0.5,
    per_query: bool = False,
) -> float | dict[str, float]:
    """Rank correlation between two runs, query by query, on the queries both hold.

    ``method``: ``"rbo"`` (extrapolated rank-biased overlap, persistence ``p``),
    ``"kendall_topk"`` (normalized Kendall tau distance over the union of the two
    top-k lists, ``penalty`` for pairs missing from one list), ``"kendall"``
    (tau-b of the scores of the documents both retrieved), ``"spearman"`` (rho of
    those scores). Rankings are trec_eval's (score descending, ties by doc id
    descending), cut at ``k`` when given. Returns the mean over queries (NaN values
    left out), or ``{query_id: value}`` with ``per_query=True``.
    """
    out = _core.compare_runs(_core.as_run(a), _core.as_run(b), method, k, p, penalty)
    if per_query:
        return out
    vals = [v for v in out.values() if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def pooled_auroc(
    qrels: QrelsLike, run: RunLike, *, max_fpr: float | None = None, rel: int = 1
) -> float:
    """AUROC pooled over queries: one ROC curve of every judged query's retrieved
    judged documents (label >= 0) together, run scores against label >= ``rel``
    (sklearn's ``roc_auc_score`` on the concatenation, ties as one threshold).
    ``max_fpr`` gives sklearn's McClish-standardized partial AUC. 0 without a relevant
    document, 1 without a non-relevant one. The per-query AUC is the measure
    ``"AUROC"`` (``"AUROC(max_fpr=0.1)"``).
    """
    return _core.pooled_auroc(_core.as_qrels(qrels), _core.as_run(run), rel, max_fpr)


def system_correlation(
    scores_a: Mapping[str, float], scores_b: Mapping[str, float], method: str = "kendall"
) -> float:
    """Correlation of two orderings of systems, e.g. by two measures or two qrels.

    ``scores_a`` and ``scores_b`` map system names to scores (``{"bm25": 0.31, ...}``);
    systems in only one of them are ignored. ``method``: ``"kendall"`` (tau-b) or
    ``"spearman"`` (rho).
    """
    if not isinstance(method, str) or method not in ("kendall", "spearman"):
        raise InputError(f"method must be 'kendall' or 'spearman', not {method!r:.80}")
    for which, scores in (("scores_a", scores_a), ("scores_b", scores_b)):
        if not isinstance(scores, Mapping):
            raise InputError(
                f"{which} must map system names to scores, got {type(scores).__name__}"
            )
    common = [s for s in scores_a if s in scores_b]

    def score(which: str, scores: Mapping[str, float], system: str) -> float:
        v = scores[system]
        if isinstance(v, (str, bytes)):
            raise InputError(f"{which}[{system!r}] must be a number, got {v!r:.80}")
        try:
            return float(v)
        except (TypeError, ValueError):
            raise InputError(
                f"{which}[{system!r}] must be a number, got {type(v).__name__}"
            ) from None

    x = [score("scores_a", scores_a, s) for s in common]
    y = [score("scores_b", scores_b, s) for s in common]
    if method == "kendall":
        return kendall_tau(x, y)
    return spearman_rho(x, y)
