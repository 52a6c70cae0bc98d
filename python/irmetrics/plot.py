"""The pictures people look at: precision-recall curves, per-topic histograms and
differences, a measure against its cut-off, ROC curves and the confusion matrix; and
from search logs, CTR by position and queries per time bucket (:mod:`irmetrics.online`).

Every function evaluates through the engine (the numbers are ``evaluate``'s, hence
trec_eval's) and returns a :class:`Plot`: the matplotlib ``figure`` and ``ax``, and the
plotted ``data`` as plain Python values, so a test or a report can check what was drawn.
``ax=`` draws into a user's axes; ``Plot.save(path)`` writes PNG, SVG or PDF (by the
extension) atomically. Needs matplotlib: ``pip install 'irmetrics[plot]'``.

``runs`` (where several may be drawn) is one run (a :class:`~irmetrics.Run`, a path,
a dict or a DataFrame), a list of runs (named by their run tags) or a dict
``{name: run}``. Evaluation options (``relevance_level``, ``max_docs``,
``judged_only``, ``num_docs_in_collection``, ``complete``, ``n_threads``) pass
through to :class:`~irmetrics.Evaluator`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from . import _core
from ._core import Evaluator, InputError
from ._files import atomic_write
from .report import _named_runs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = [
    "Plot",
    "by_cutoff",
    "confusion_matrix",
    "ctr_by_position",
    "differences",
    "histogram",
    "precision_recall",
    "queries_per",
    "roc",
]

_RECALL_LEVELS = [i / 10 for i in range(11)]
_DEFAULT_CUTOFFS = (1, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000)


class Plot:
    """A drawn picture: ``figure``, ``ax`` (matplotlib) and ``data`` (what was drawn,
    as Python values; each function documents its layout)."""

    def __init__(self, figure: Any, ax: Any, data: dict[str, Any]) -> None:
        self.figure = figure
        self.ax = ax
        self.data = data

    def save(self, path: str | os.PathLike[str], *, dpi: int | None = None) -> None:
        """Write the figure to ``path`` (PNG, SVG or PDF, by its extension), atomically:
        a temporary file in the same folder, renamed over ``path`` once complete."""
        path = os.fspath(path)
        fmt = os.path.splitext(path)[1].lstrip(".").lower()
        if fmt not in ("png", "svg", "pdf"):
            raise InputError(f"{path}: the extension must be .png, .svg or .pdf")
        atomic_write(
            path, lambda f: self.figure.savefig(f, format=fmt, dpi=dpi, bbox_inches="tight")
        )

    def __repr__(self) -> str:
        return f"<irmetrics.plot.Plot {sorted(self.data)}>"


def _shown(name: str) -> str:
    """A run's name as matplotlib shows it as it is: each '$' escaped (two of them
    started mathtext: 'cost $5 and $6' came out as math italics), and a zero-width space
    before a leading '_' (matplotlib leaves a label starting with '_' out of the legend,
    even one given explicitly, so a run named '_bm25' lost its entry). Titles the user
    writes are theirs and are left as they are."""
    name = name.replace("$", r"\$")
    return "\u200b" + name if name.startswith("_") else name


def _pyplot() -> Any:
    _core._require("matplotlib", "irmetrics.plot", "'irmetrics[plot]'")
    import matplotlib.pyplot as plt

    return plt


def _axes(ax: Any) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    plt = _pyplot()
    fig, new = plt.subplots(figsize=(6.4, 4.2))
    return fig, new


def _runs(runs: Any) -> list[tuple[str, Any]]:
    """One run or several, named (see the module's docs)."""
    if isinstance(runs, Mapping) and runs and all(isinstance(v, Mapping) for v in runs.values()):
        # a dict of dicts is ambiguous: {name: {query: {doc: score}}} holds runs,
        # {query: {doc: score}} is one run
        first = next(iter(runs.values()))
        if not all(isinstance(v, Mapping) for v in first.values()):
            return [("run", _core.as_run(runs))]
    if isinstance(runs, (str, bytes, os.PathLike)):
        path = os.fsdecode(runs)
        return [(os.path.basename(path), _core.as_run(runs))]
    if isinstance(runs, (Mapping, list, tuple)):
        return _named_runs(runs)
    run = _core.as_run(runs)
    return [(run.runid or "run", run)]


def _one_run(run: Any) -> tuple[str, Any]:
    named = _runs(run)
    if len(named) != 1:
        raise InputError(f"give one run here, not {len(named)}")
    return named[0]


def _per_query(ev: Evaluator, run: Any) -> tuple[list[str], dict[str, Any]]:
    """Query ids and ``{column: numpy array}`` of one run's per-query values."""
    ids, columns, values, _ = ev.evaluate_table(run)
    return list(ids), {c: values[:, i] for i, c in enumerate(columns)}


def _finish(fig: Any, ax: Any, title: str | None, legend: bool) -> None:
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()


def precision_recall(
    qrels: Any,
    runs: Any,
    *,
    interpolated: bool = True,
    cutoffs: Sequence[int] | None = None,
    ax: Any = None,
    title: str | None = None,
    **options: Any,
) -> Plot:
    """Precision against recall, one curve per run.

    ``interpolated=True`` (default): trec_eval's 11-point interpolated precision
    (``iprec_at_recall``: at each recall level r, the highest precision at any rank whose
    recall is >= r), averaged over queries. ``interpolated=False``: the raw curve, mean
    recall@k against mean precision@k at each cut-off k of ``cutoffs`` (default every
    rank from 1 to 100).

    ``data``: ``{run: {"recall": [...], "precision": [...]}}``.
    """
    _pyplot()  # matplotlib first: a missing extra fails before any work
    data = _precision_recall_data(qrels, _runs(runs), interpolated, cutoffs, options)
    fig, ax = _axes(ax)
    _draw_precision_recall(ax, data, interpolated=interpolated, title=title)
    return Plot(fig, ax, data)


def _precision_recall_data(
    qrels: Any,
    named: Sequence[tuple[str, Any]],
    interpolated: bool,
    cutoffs: Sequence[int] | None,
    options: dict[str, Any],
) -> dict[str, Any]:
    """:func:`precision_recall`'s ``data`` (also the HTML report's curves)."""
    if interpolated and cutoffs is not None:
        raise InputError("cutoffs apply to the raw curve (interpolated=False) only")
    ks = list(cutoffs) if cutoffs is not None else list(range(1, 101))
    if not interpolated and (not ks or not all(_whole(k) and k >= 1 for k in ks)):
        raise InputError("cutoffs must be whole numbers >= 1")
    if interpolated:
        measures = ["iprec_at_recall"]
    else:
        spec = ",".join(str(int(k)) for k in ks)
        measures = [f"P.{spec}", f"recall.{spec}"]
    ev = Evaluator(qrels, measures, **options)
    data: dict[str, Any] = {}
    for name, run in named:
        means = ev.evaluate(run, keys="canonical")
        if interpolated:
            recall = list(_RECALL_LEVELS)
            precision = [means[f"iprec_at_recall_{r:.2f}"] for r in recall]
        else:
            recall = [means[f"recall_{int(k)}"] for k in ks]
            precision = [means[f"P_{int(k)}"] for k in ks]
        data[name] = {"recall": recall, "precision": precision}
    return data


def _draw_precision_recall(
    ax: Any, data: Mapping[str, Any], *, interpolated: bool = True, title: str | None = None
) -> None:
    """Draw :func:`precision_recall`'s ``data`` (``{run: {"recall", "precision"}}``)
    into ``ax`` (used by the HTML report, which has the curves already)."""
    for name, d in data.items():
        ax.plot(
            d["recall"], d["precision"], marker="o" if interpolated else None, label=_shown(name)
        )
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision" if interpolated else "precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    _finish(ax.figure, ax, title or "Precision-recall", legend=True)


def _measure_name(measure: Any) -> str:
    """One measure's name: a str, or an ir_measures measure object's name."""
    return _core._measure_names(measure, one=True)[0]


def _one_measure(ev: Evaluator, measure: str) -> str:
    columns = ev.columns()
    if len(columns) != 1:
        raise InputError(f"{measure!r} names {len(columns)} values; name one (e.g. 'P@10')")
    return columns[0]


# more bins than a figure has pixels across show nothing more
_MAX_BINS = 10_000


def _whole(v: Any) -> bool:
    """A whole number (Python's or numpy's), not a bool."""
    import numpy as np

    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)  # np.bool_ is neither


def histogram(
    qrels: Any,
    run: Any,
    measure: _core._Measure = "map",
    *,
    bins: int = 20,
    ax: Any = None,
    title: str | None = None,
    **options: Any,
) -> Plot:
    """The distribution over topics of one measure (average precision by default),
    as in TREC overviews. Values in [0, 1] are binned over [0, 1].

    ``data``: ``{"query_ids": [...], "values": [...], "counts": [...], "edges": [...]}``
    (``values`` in ``query_ids`` order; ``counts[i]`` values fall in ``edges[i]`` to
    ``edges[i + 1]``, the last bin closed).
    """
    _pyplot()  # matplotlib first: a missing extra fails before any work
    import numpy as np

    if not _whole(bins) or not 1 <= bins <= _MAX_BINS:
        raise InputError(f"bins must be a whole number from 1 to {_MAX_BINS}, not {bins!r:.80}")
    measure = _measure_name(measure)
    ev = Evaluator(qrels, [measure], **options)
    column = _one_measure(ev, measure)
    name, r = _one_run(run)
    ids, cols = _per_query(ev, r)
    values = cols[column]
    lo_hi = (0.0, 1.0) if values.size and values.min() >= 0 and values.max() <= 1 else None
    counts, edges = np.histogram(values, bins=bins, range=lo_hi)
    fig, ax = _axes(ax)
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", edgecolor="white")
    ax.set_xlabel(measure)
    ax.set_ylabel("topics")
    _finish(fig, ax, title or f"{measure} over {len(ids)} topics ({name})", legend=False)
    return Plot(
        fig,
        ax,
        {
            "query_ids": ids,
            "values": values.tolist(),
            "counts": counts.tolist(),
            "edges": edges.tolist(),
        },
    )


def differences(
    qrels: Any,
    run_a: Any,
    run_b: Any,
    measure: _core._Measure = "map",
    *,
    names: tuple[str, str] | None = None,
    ax: Any = None,
    title: str | None = None,
    **options: Any,
) -> Plot:
    """Per-topic differences of one measure between two systems (``a - b``), sorted
    from the largest gain to the largest loss, as in TREC overviews. Both runs must be
    evaluated on the same topics (``complete=True`` evaluates every judged topic).

    ``data``: ``{"query_ids": [...], "differences": [...], "wins": n, "losses": n,
    "ties": n}`` (sorted by difference, descending; equal differences by query id).
    """
    _pyplot()  # matplotlib first: a missing extra fails before any work
    measure = _measure_name(measure)
    ev = Evaluator(qrels, [measure], **options)
    column = _one_measure(ev, measure)
    (na, ra), (nb, rb) = _one_run(run_a), _one_run(run_b)
    if names is not None:
        na, nb = names
    ids_a, cols_a = _per_query(ev, ra)
    ids_b, cols_b = _per_query(ev, rb)
    if ids_a != ids_b:
        only = sorted(set(ids_a) ^ set(ids_b))
        raise InputError(
            f"the runs are evaluated on different topics (first: {only[0]!r}); "
            "pass complete=True to evaluate every judged topic in both"
        )
    diff = (cols_a[column] - cols_b[column]).tolist()
    fig, ax = _axes(ax)
    data = _draw_differences(ax, ids_a, diff, measure, (na, nb), title=title)
    return Plot(fig, ax, data)


def _draw_differences(
    ax: Any,
    query_ids: Sequence[str],
    differences: Sequence[float],
    measure: str,
    names: tuple[str, str],
    *,
    title: str | None = None,
) -> dict[str, Any]:
    """Draw per-topic differences (``a - b``, in ``query_ids`` order) into ``ax``,
    sorted from the largest gain to the largest loss; returns :func:`differences`'
    ``data`` (used by the HTML report, which has the per-topic values already)."""
    na, nb = (_shown(n) for n in names)
    order = sorted(range(len(query_ids)), key=lambda i: (-differences[i], query_ids[i]))
    ids = [query_ids[i] for i in order]
    values = [differences[i] for i in order]
    colors = ["tab:green" if v > 0 else "tab:red" for v in values]
    ax.bar(range(len(values)), values, color=colors, width=0.85)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"topic ({len(ids)}, sorted by difference)")
    ax.set_ylabel(f"{measure}: {na} - {nb}")
    ax.set_xlim(-0.5, len(values) - 0.5)
    _finish(ax.figure, ax, title or f"Per-topic {measure}, {na} vs {nb}", legend=False)
    return {
        "query_ids": ids,
        "differences": values,
        "wins": sum(v > 0 for v in values),
        "losses": sum(v < 0 for v in values),
        "ties": sum(v == 0 for v in values),
    }


def by_cutoff(
    qrels: Any,
    runs: Any,
    measure: _core._Measure = "P",
    *,
    cutoffs: Sequence[int] = _DEFAULT_CUTOFFS,
    ax: Any = None,
    title: str | None = None,
    **options: Any,
) -> Plot:
    """A measure against its cut-off k (``P``, ``recall``, ``ndcg_cut``, ``nDCG``,
    ``success``, ... any family taking ``@k``), one line per run, k on a log axis.

    ``data``: ``{run: {"k": [...], "values": [...]}}`` (mean over topics).
    """
    _pyplot()  # matplotlib first: a missing extra fails before any work
    measure = _measure_name(measure)
    # "P@5", or trec_eval's "P.5" (a parameter's decimal point, "RBP(p=0.8)", is not one)
    if "@" in measure or re.search(r"\.\d", measure.split("(", 1)[0]):
        raise InputError(
            f"by_cutoff takes a measure without its cut-off (such as 'P' or 'nDCG'), "
            f"not {measure!r}: the cut-offs are cutoffs="
        )
    ks = list(cutoffs) if isinstance(cutoffs, (list, tuple, range)) else None
    if not ks or not all(_whole(k) and k >= 1 for k in ks):
        raise InputError(f"cutoffs must be a list of whole numbers >= 1, got {cutoffs!r:.80}")
    ks = [int(k) for k in ks]
    names = [f"{measure}@{k}" for k in ks]
    ev = Evaluator(qrels, names, **options)
    data: dict[str, Any] = {}
    for name, run in _runs(runs):
        means = ev.evaluate(run)
        data[name] = {"k": ks, "values": [means[n] for n in names]}
    fig, ax = _axes(ax)
    for name, d in data.items():
        ax.plot(d["k"], d["values"], marker="o", label=_shown(name))
    ax.set_xscale("log")
    ax.set_xlabel("cut-off k")
    ax.set_ylabel(f"{measure}@k")
    _finish(fig, ax, title or f"{measure} by cut-off", legend=True)
    return Plot(fig, ax, data)


def _need_n(options: dict[str, Any], what: str) -> int:
    n = options.get("num_docs_in_collection")
    if not n:
        raise InputError(
            f"{what} needs num_docs_in_collection (trec_eval's -N): the number of "
            "documents in the collection, of which the unretrieved ones are the negatives"
        )
    return int(n)


def roc(
    qrels: Any,
    runs: Any,
    *,
    per_query: bool = False,
    ax: Any = None,
    title: str | None = None,
    **options: Any,
) -> Plot:
    """ROC curves of rankings: at each rank k, the true positive rate (relevant in the
    top k / relevant) against the false positive rate (non-relevant in the top k /
    non-relevant in the collection), from rank 0 to the run's depth, then to (1, 1):
    the unretrieved documents tie below every retrieved one. Needs
    ``num_docs_in_collection``. Ties among retrieved scores are broken as trec_eval
    ranks (score, then document id, descending), one document per step.

    The drawn curve is the mean over topics at each rank; ``per_query=True`` also draws
    each topic's curve. AUC per topic is the area under its curve (the trapezoid rule:
    sklearn's ``roc_auc_score`` over the collection); topics without a relevant
    document have no ROC curve and are left out (counted in ``data``).

    ``data``: ``{run: {"fpr": [...], "tpr": [...], "auc": mean AUC, "per_query_auc":
    {query: AUC}, "no_relevant": n}}``.
    """
    _pyplot()  # matplotlib first: a missing extra fails before any work
    import numpy as np

    _need_n(options, "roc")
    named = _runs(runs)
    count = Evaluator(qrels, ["num_ret", "num_rel"], **options)
    data: dict[str, Any] = {}
    curves: dict[str, Any] = {}
    for name, run in named:
        ids, cols = _per_query(count, run)
        depth = int(cols["num_ret"].max()) if ids else 0
        spec = ",".join(str(k) for k in range(1, depth + 1))
        ev = Evaluator(qrels, [f"tpr.{spec}", f"fpr.{spec}"] if depth else ["num_rel"], **options)
        ids2, c2 = _per_query(ev, run)
        keep = cols["num_rel"] > 0
        q = int(keep.sum())
        zeros = np.zeros((q, 1))
        ones = np.ones((q, 1))
        tpr = np.hstack([zeros, *[c2[f"tpr_{k}"][keep, None] for k in range(1, depth + 1)], ones])
        fpr = np.hstack([zeros, *[c2[f"fpr_{k}"][keep, None] for k in range(1, depth + 1)], ones])
        # the trapezoid rule (numpy's own is trapz or trapezoid, by numpy version)
        auc = (np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1]) / 2).sum(axis=1)
        kept = [i for i, k in zip(ids2, keep) if k]
        data[name] = {
            "fpr": fpr.mean(axis=0).tolist() if q else [],
            "tpr": tpr.mean(axis=0).tolist() if q else [],
            "auc": float(auc.mean()) if q else float("nan"),
            "per_query_auc": dict(zip(kept, auc.tolist())),
            "no_relevant": len(ids2) - q,
        }
        curves[name] = (fpr, tpr)
    fig, ax = _axes(ax)
    for name, d in data.items():
        (line,) = ax.plot(d["fpr"], d["tpr"], label=f"{_shown(name)} (AUC {d['auc']:.3f})")
        if per_query:
            fpr, tpr = curves[name]
            for i in range(fpr.shape[0]):
                ax.plot(fpr[i], tpr[i], color=line.get_color(), alpha=0.15, linewidth=0.6)
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    _finish(fig, ax, title or "ROC", legend=True)
    return Plot(fig, ax, data)


def confusion_matrix(
    qrels: Any,
    run: Any,
    k: int = 10,
    *,
    ax: Any = None,
    title: str | None = None,
    **options: Any,
) -> Plot:
    """The confusion matrix of "retrieved in the top k" against "relevant", summed
    over topics; the collection's other documents are the true negatives, so it needs
    ``num_docs_in_collection``. Relevant means a label >= ``relevance_level``.

    ``data``: ``{"tn", "fp", "fn", "tp": counts, "matrix": [[tn, fp], [fn, tp]]}``
    (sklearn's layout: rows the truth, columns the prediction, negative first).
    """
    _pyplot()  # matplotlib first: a missing extra fails before any work
    import numpy as np

    n = _need_n(options, "confusion_matrix")
    if not _whole(k) or k < 1:
        raise InputError(f"k must be a whole number >= 1, not {k!r:.80}")
    k = int(k)
    ev = Evaluator(qrels, [f"hits@{k}", "num_ret", "num_rel"], **options)
    name, r = _one_run(run)
    _, cols = _per_query(ev, r)
    tp_q = cols[f"hits_{k}"]
    predicted = np.minimum(cols["num_ret"], k)
    tp = int(tp_q.sum())
    fp = int((predicted - tp_q).sum())
    fn = int((cols["num_rel"] - tp_q).sum())
    tn = int((n - predicted - (cols["num_rel"] - tp_q)).sum())
    matrix = [[tn, fp], [fn, tp]]
    fig, ax = _axes(ax)
    ax.imshow(np.array(matrix, dtype=float), cmap="Blues")
    for i in range(2):
        for j in range(2):
            ax.text(j, i, f"{matrix[i][j]:,}", ha="center", va="center")
    ax.set_xticks([0, 1], [f"not in top {k}", f"in top {k}"])
    ax.set_yticks([0, 1], ["not relevant", "relevant"])
    ax.set_xlabel("retrieved")
    ax.set_ylabel("judged")
    ax.set_title(title or f"Confusion matrix at k={k} ({_shown(name)})")
    fig.tight_layout()
    return Plot(fig, ax, {"tn": tn, "fp": fp, "fn": fn, "tp": tp, "matrix": matrix})


def ctr_by_position(
    log: Any,
    max_position: int = 10,
    *,
    ax: Any = None,
    title: str | None = None,
    **read: Any,
) -> Plot:
    """Click-through rate by result position from a search log: clicks at position p
    over SERPs with at least p results (:func:`irmetrics.online.ctr_by_position`).

    ``data``: ``{"position": [1, ...], "ctr": [...]}``. ``read`` options (``columns``,
    ``success_events``, ...) go to :func:`irmetrics.online.read_log`.
    """
    _pyplot()
    from . import online

    ctr = online.ctr_by_position(log, max_position, **read)
    positions = list(ctr)
    values = [ctr[p] for p in positions]
    fig, ax = _axes(ax)
    ax.bar(positions, values, edgecolor="white")
    ax.set_xticks(positions)
    ax.set_xlabel("position")
    ax.set_ylabel("CTR")
    _finish(fig, ax, title or "Click-through rate by position", legend=False)
    return Plot(fig, ax, {"position": positions, "ctr": values})


def queries_per(
    log: Any,
    bucket: str = "hour",
    *,
    spike_k: float = 3.0,
    ax: Any = None,
    title: str | None = None,
    **read: Any,
) -> Plot:
    """Queries per time bucket from a search log, spikes marked and the spike threshold
    drawn (:func:`irmetrics.online.queries_per`); with latencies, their median on a
    second axis.

    ``data``: ``{"start": [datetime64, ...], "count": [...], "spike": [...],
    "threshold": float}`` plus ``"latency_p50"`` when the log has latencies.
    """
    _pyplot()
    from . import online

    t = online.queries_per(log, bucket, spike_k=spike_k, **read)
    start, count, spike = t["start"], t["count"], t["spike"]
    fig, ax = _axes(ax)
    ax.plot(start, count, drawstyle="steps-post", label="queries")
    if spike.any():
        ax.scatter(start[spike], count[spike], color="red", zorder=3, label="spike")
    ax.axhline(t["threshold"], color="gray", linestyle="--", linewidth=1, label="threshold")
    ax.set_xlabel(f"time (UTC, per {bucket})")
    ax.set_ylabel("queries")
    data: dict[str, Any] = {
        "start": start.tolist(),
        "count": count.tolist(),
        "spike": spike.tolist(),
        "threshold": t["threshold"],
    }
    if "latency_p50" in t:
        data["latency_p50"] = t["latency_p50"].tolist()
        twin = ax.twinx()
        twin.plot(start, t["latency_p50"], color="tab:orange", linewidth=1)
        twin.set_ylabel("median latency (ms)")
    fig.autofmt_xdate()
    _finish(fig, ax, title or f"Queries per {bucket}", legend=True)
    return Plot(fig, ax, data)
