"""ranx's API on irmetrics' engine, for code written against ranx (retriever and RAG
evaluation scripts, hybrid-search fusion notebooks)::

    from irmetrics.compat.ranx import Qrels, Run, evaluate, compare, fuse

    qrels = Qrels.from_file("qrels.txt")
    run = Run.from_file("bm25.txt", name="bm25")
    evaluate(qrels, run, "ndcg@10")                  # 0.4795 (a float, as ranx's)
    evaluate(qrels, run, ["map@100", "mrr"])         # {"map@100": ..., "mrr": ...}
    report = compare(qrels, [run, other], ["ndcg@10"], stat_test="fisher", max_p=0.01)

``Qrels`` and ``Run`` take ranx's constructors (a dict, ``from_dict``, ``from_file``,
``from_df``, ``from_parquet``) and methods (``to_dict``, ``to_dataframe``, ``save``,
``keys``, ``get_query_ids``, ``size``, ``add``, ``add_multi``, ``add_score``,
``make_comparable``, the qrels' ``set_relevance_level`` and ``from_ir_datasets``;
negative labels judged non-relevant, as ranx reads them; irmetrics' own functions take
these objects too; a run's ``name``, ``mean_scores``, ``std_scores`` and ``scores``,
which ``evaluate`` fills as ranx's does). ``evaluate`` reads names as ranx does
(``names="ranx"``), returns a float for one metric, ``{metric: mean}`` for several,
``{"mean": ..., "std": ...}`` with ``return_std=True`` (the population standard
deviation, as numpy's) and per-query numpy arrays (queries in sorted order) with
``return_mean=False``. As ranx does, the run and the qrels must have the same queries
unless ``make_comparable=True`` (a judged query the run lacks scores 0; a query
nobody judged is left out). ``compare`` is ranx's: no correction for multiple
comparisons, ``max_p=0.01``, ``n_permutations=1000``, ``stat_test`` ``"student"``,
``"fisher"`` or ``"tukey"``; it returns irmetrics' ``Report``, whose tables default to
``rounding_digits`` and ``show_percentages``. ``fuse`` and ``optimize_fusion`` are
irmetrics' with ranx's argument order and defaults (``norm="min-max"``,
``method="wsum"``), and so is ``normalize``. ``plot`` draws ranx's precision-recall
curves with ``irmetrics.plot`` (matplotlib; ranx needs seaborn) and, with
``return_graph=False``, returns ranx's DataFrame of them.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import irmetrics

from .._core import InputError
from . import _TREC_EVAL_9  # ranx's interpolated precision is trec_eval 9's

__all__ = ["Qrels", "Run", "compare", "evaluate", "fuse", "normalize", "optimize_fusion", "plot"]


class _Ranked:
    """What ranx's ``Qrels`` and ``Run`` share: irmetrics' data, or (after ``add``...)
    a dict made into it when next used."""

    _kind: Any  # irmetrics.Qrels or irmetrics.Run
    _value = "score"

    def __init__(
        self, data: Mapping[str, Mapping[str, Any]] | None = None, name: str | None = None
    ):
        self.name = name
        self._data: Any = None
        self._dict: dict[str, dict[str, Any]] | None = None
        self._seen: dict[str, dict[str, Any]] | None = None
        self._judged: Any = None  # Qrels: the data as ranx's measures read it
        if data:
            self._dict = {q: dict(docs) for q, docs in data.items()}

    @classmethod
    def _of(cls, data: Any, name: str | None = None) -> Any:
        out = cls(name=name)
        out._data = data
        return out

    @property
    def data(self) -> Any:
        """The irmetrics ``Qrels`` / ``Run`` (what irmetrics' functions take)."""
        if self._data is None:
            if not self._dict:
                raise InputError(f"the {type(self).__name__} is empty")
            self._data = self._from_dict(self._dict)
            self._seen, self._dict = self._dict, None
        return self._data

    def _from_dict(self, d: dict[str, dict[str, Any]]) -> Any:
        return self._kind.from_dict(d)

    def _mutable(self) -> dict[str, dict[str, Any]]:
        if self._dict is None:
            self._dict = self._view() if self._data is not None else {}
            self._data = self._seen = self._judged = None
        return self._dict

    def _view(self) -> dict[str, dict[str, Any]]:
        """The data as a dict, made once while it is unchanged (``q in run``,
        ``run[q]``)."""
        if self._dict is not None:
            return self._dict
        if self._seen is None:
            self._seen = self.data.to_dict()
        return self._seen

    # ranx's constructors
    @classmethod
    def from_dict(cls, d: Mapping[str, Mapping[str, Any]], name: str | None = None) -> Any:
        return cls(d, name)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], kind: str | None = None, name: str | None = None
    ) -> Any:
        """Read a file (TREC, ranx's JSON, JSONL, parquet...; gzip too): ``kind`` is
        ranx's ``"trec"`` or ``"json"``, else known from the file."""
        return cls._of(cls._kind.from_file(path, kind), name)

    @classmethod
    def from_df(
        cls,
        df: Any,
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        name: str | None = None,
    ) -> Any:
        cols = {"query": q_id_col, "doc": doc_id_col, cls._value: score_col}
        return cls._of(cls._kind.from_dataframe(df, **cols), name)

    @classmethod
    def from_parquet(
        cls,
        path: str | os.PathLike[str],
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        name: str | None = None,
    ) -> Any:
        import pyarrow.parquet as pq

        return cls.from_df(pq.read_table(path), q_id_col, doc_id_col, score_col, name)

    # ranx's methods
    def to_dict(self) -> dict[str, dict[str, Any]]:
        if self._data is None:
            return {q: dict(docs) for q, docs in (self._dict or {}).items()}
        return self._data.to_dict()

    def to_dataframe(self) -> Any:
        """A pandas DataFrame with ranx's columns ``q_id``, ``doc_id``, ``score``."""
        df = self.data.to_pandas()
        return df.rename(
            columns={df.columns[0]: "q_id", df.columns[1]: "doc_id", df.columns[2]: "score"}
        )

    def save(self, path: str | os.PathLike[str] = "run.json", kind: str | None = None) -> None:
        """Write the file (atomically): ``kind`` ``"trec"`` or ``"json"`` (ranx's JSON),
        else known from the extension."""
        self.data.to_file(path, kind)

    def keys(self) -> list[str]:
        return self.get_query_ids()

    def get_query_ids(self) -> list[str]:
        if self._data is None:
            return list(self._dict or {})
        return list(self._data.query_ids())

    @property
    def size(self) -> int:
        return len(self.get_query_ids())

    def __len__(self) -> int:
        return self.size

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._view()

    def __getitem__(self, query_id: str) -> dict[str, Any]:
        return self._view()[query_id]

    def add_score(self, q_id: str, doc_id: str, score: Any) -> None:
        self._mutable().setdefault(q_id, {})[doc_id] = score

    def add(self, q_id: str, doc_ids: Sequence[str], scores: Sequence[Any]) -> None:
        docs = self._mutable().setdefault(q_id, {})
        docs.update(zip(doc_ids, scores))

    def add_multi(
        self,
        q_ids: Sequence[str],
        doc_ids: Sequence[Sequence[str]],
        scores: Sequence[Sequence[Any]],
    ) -> None:
        for q, ds, ss in zip(q_ids, doc_ids, scores):
            self.add(q, ds, ss)


class Qrels(_Ranked):
    """ranx's ``Qrels`` (``Qrels(dict)``, ``Qrels.from_file(path)``, ...)."""

    _kind = irmetrics.Qrels
    _value = "label"

    def __repr__(self) -> str:
        return f"Qrels({self.size} queries)"

    @classmethod
    def from_ir_datasets(cls, dataset_id: str) -> Qrels:
        """ranx's ``Qrels.from_ir_datasets``: the qrels of an ``ir_datasets`` id (loaded
        with ``ir_datasets.load``, downloaded by it if missing), named by the id."""
        return cls._of(irmetrics.Qrels.from_ir_datasets(dataset_id), dataset_id)

    def _judgments(self) -> Any:
        """The data as ranx's measures read it (made once while unchanged): a negative
        label is a judged non-relevant document, as 0 is, where irmetrics reads it as
        trec_eval does (pooled but not judged: left out of bpref's non-relevant, a
        query of only such labels refused)."""
        if self._judged is None:
            self._judged = _nonnegative(self._view()) or self.data
        return self._judged

    def set_relevance_level(self, rel_lvl: int = 1) -> None:
        """ranx's ``set_relevance_level``: every label lowered by ``rel_lvl - 1``, so
        that labels below ``rel_lvl`` count as not relevant and graded measures gain
        the label less the shift (ranx's own arithmetic; the measures' ``-lN`` suffix
        instead keeps the gains and zeroes those below the level)."""
        shift = int(rel_lvl) - 1
        if shift:
            # a qrels' judgments (thousands, not a run's millions): a Python loop
            for docs in self._mutable().values():
                for doc in docs:
                    docs[doc] -= shift


class Run(_Ranked):
    """ranx's ``Run`` (``Run(dict, name="bm25")``, ``Run.from_file(path)``, ...), with
    the ``mean_scores``, ``std_scores`` and ``scores`` ``evaluate`` fills."""

    _kind = irmetrics.Run

    def __init__(
        self, run: Mapping[str, Mapping[str, float]] | None = None, name: str | None = None
    ):
        super().__init__(run, name)
        self.mean_scores: dict[str, float] = {}
        self.std_scores: dict[str, float] = {}
        self.scores: defaultdict[str, dict[str, float]] = defaultdict(dict)
        # set by make_comparable: the judged queries it lacks score 0
        self._complete = False

    def _from_dict(self, d: dict[str, dict[str, Any]]) -> Any:
        return irmetrics.Run.from_dict(d, name=self.name)

    @classmethod
    def _of(cls, data: Any, name: str | None = None) -> Any:
        out = super()._of(data, name)
        if out.name is None:
            out.name = data.runid or None
        return out

    def make_comparable(self, qrels: Qrels) -> Run:
        """As ranx's: the queries not in ``qrels`` removed, the judged ones it lacks
        scored 0 when evaluated (this run, changed and returned)."""
        judged = set(_qrels(qrels).query_ids())
        if any(q not in judged for q in self.get_query_ids()):
            d = self._mutable()
            for q in [q for q in d if q not in judged]:
                del d[q]
        self._complete = True
        return self

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.size} queries)"


def _nonnegative(d: Mapping[str, Mapping[str, Any]]) -> Any:
    """irmetrics' ``Qrels`` of ``d`` with its negative labels made 0 (ranx's reading:
    below the relevance level, judged), or None when it has none."""
    try:
        if not any(label < 0 for docs in d.values() for label in docs.values()):
            return None
    except TypeError:
        return None  # a label that is no number: irmetrics names it
    return irmetrics.Qrels.from_dict(
        {q: {doc: max(label, 0) for doc, label in docs.items()} for q, docs in d.items()}
    )


def _qrels(qrels: Any) -> Any:
    """irmetrics' qrels as ranx's measures read them (negative labels judged)."""
    if isinstance(qrels, Qrels):
        return qrels._judgments()
    if isinstance(qrels, Mapping):
        judged = _nonnegative(qrels)
        if judged is not None:
            return judged
    return irmetrics._core.as_qrels(qrels)


def _run(run: Any) -> Any:
    return run.data if isinstance(run, Run) else irmetrics._core.as_run(run)


def _check_keys(
    qrels: Any, run: Any, make_comparable: bool, run_name: str | None
) -> tuple[Any, bool]:
    """The run and whether judged queries it lacks score 0 (under ``make_comparable``);
    ranx's refusal of different query sets."""
    complete = make_comparable or (isinstance(run, Run) and run._complete)
    data = _run(run)
    judged, ran = set(qrels.query_ids()), set(data.query_ids())
    if judged == ran:
        return data, complete
    # a query given without documents (irmetrics' Run holds none of it): ranx scores
    # it as an empty ranking
    given = (run._dict or run._seen) if isinstance(run, Run) else run
    if isinstance(given, Mapping):
        empty = {q for q, docs in given.items() if isinstance(docs, Mapping) and not docs}
        if empty and judged == ran | empty:
            return data, True
    if not complete:
        missing = sorted(judged - ran)[:1] or sorted(ran - judged)[:1]
        raise InputError(
            f"Qrels and Run{f' {run_name!r}' if run_name else ''} query ids do not match "
            f"(first: {missing[0]!r}). Pass make_comparable=True to score the judged "
            "queries the run lacks 0 and leave out those nobody judged (ranx's rule)"
        )
    # (the queries nobody judged are left out by the evaluation itself)
    return data, True


def _metric_names(metrics: Any) -> list[str]:
    """ranx's ``metrics``: one name or a list of names."""
    if isinstance(metrics, str):
        return [metrics]
    if not isinstance(metrics, Iterable) or isinstance(metrics, Mapping):
        raise InputError(f"metrics must be a name or a list of names, got {metrics!r}")
    return list(metrics)


def evaluate(
    qrels: Any,
    run: Any,
    metrics: str | Sequence[str],
    return_mean: bool = True,
    return_std: bool = False,
    threads: int = 0,
    save_results_in_run: bool = True,
    make_comparable: bool = False,
) -> Any:
    """ranx's ``evaluate``: a float for one metric, else ``{metric: mean}``; see the
    module's documentation."""
    names = _metric_names(metrics)
    q = _qrels(qrels)
    data, complete = _check_keys(q, run, make_comparable, getattr(run, "name", None))
    per_query = irmetrics.Evaluator(
        q, names, complete=complete, names="ranx", n_threads=threads
    ).evaluate(data, per_query=True)
    qids = sorted(q.query_ids())
    arrays = {m: np.array([per_query[m][i] for i in qids], dtype=np.float64) for m in names}
    if isinstance(run, Run) and save_results_in_run:
        for m, a in arrays.items():
            run.mean_scores[m] = float(a.mean())
            if return_std and return_mean:
                run.std_scores[m] = float(a.std())
            run.scores[m] = dict(zip(qids, map(float, a)))
    out: dict[str, Any]
    if not return_mean:
        out = arrays
    elif return_std:
        out = {m: {"mean": float(a.mean()), "std": float(a.std())} for m, a in arrays.items()}
    else:
        out = {m: float(a.mean()) for m, a in arrays.items()}
    return out[names[0]] if len(names) == 1 else out


_STAT_TESTS = {"student": "t", "fisher": "randomization", "tukey": "tukey"}


def _named_runs(
    qrels: Any, runs: Iterable[Any], make_comparable: bool, one: str | None = None
) -> tuple[dict[str, Any], bool]:
    """``{name: irmetrics run}`` of ranx's runs as ranx names them (their ``name``, else
    ``run_1``, ``run_2``, ...; ``one``: the name of a lone run without one), two alike
    refused, and whether judged queries a run lacks score 0 (ranx's rule,
    :func:`_check_keys`)."""
    named: dict[str, Any] = {}
    complete = make_comparable
    for i, r in enumerate(runs):
        name = getattr(r, "name", None) or one or f"run_{i + 1}"
        if name in named:
            raise InputError(f"two runs are named {name!r}; give each run its own name")
        named[name], c = _check_keys(qrels, r, make_comparable, name)
        complete = complete or c
    return named, complete


def compare(
    qrels: Any,
    runs: Iterable[Any],
    metrics: str | Sequence[str],
    stat_test: str = "student",
    n_permutations: int = 1000,
    max_p: float = 0.01,
    random_seed: int = 42,
    threads: int = 0,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    make_comparable: bool = False,
) -> irmetrics.Report:
    """ranx's ``compare``: every pair of runs tested per metric, no correction; the
    runs named by their ``name``."""
    if stat_test not in _STAT_TESTS:
        raise InputError(f"unknown stat_test {stat_test!r} (ranx's: {', '.join(_STAT_TESTS)})")
    q = _qrels(qrels)
    named, complete = _named_runs(q, runs, make_comparable)
    report = irmetrics.compare(
        q,
        named,
        _metric_names(metrics),
        test=_STAT_TESTS[stat_test],
        correction="none",
        alpha=max_p,
        n_resamples=n_permutations,
        seed=random_seed,
        complete=complete,
        names="ranx",
        n_threads=threads,
    )
    report._style = (rounding_digits, show_percentages)
    return report


def fuse(
    runs: Sequence[Any],
    norm: str | None = "min-max",
    method: str = "wsum",
    params: Mapping[str, Any] | None = None,
) -> Run:
    """ranx's ``fuse``: irmetrics' fusion with ranx's defaults (min-max, wsum)."""
    fused = irmetrics.fuse([_run(r) for r in runs], method=method, norm=norm, params=params)
    return Run._of(fused, name=fused.runid or "fused")


def optimize_fusion(
    qrels: Any,
    runs: Sequence[Any],
    norm: str | None = "min-max",
    method: str = "wsum",
    metric: str = "ndcg",
    return_optimization_report: bool = False,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    step: float | None = None,
    **_ignored: Any,
) -> Any:
    """ranx's ``optimize_fusion``: the best parameters of ``method`` on ``qrels``. For
    the methods trained on qrels, what ranx returns: the trained tables
    (``{"probs": [...]}``, slidefuse's with its best ``w``, ``{"log_odds": [...]}``,
    ``{"map_scores": [...]}``, by ``irmetrics.train_fusion``), which ``fuse`` takes
    as ``params``; probfuse's ``n_segments`` (1 to 100) and slidefuse's ``w`` (1 to
    100) searched first, as ranx searches them. With ``return_optimization_report``:
    ``(best, report)``, ``report`` ranx's :class:`OptimizationReport` of every setting
    tried."""
    q, rs = _qrels(qrels), [_run(r) for r in runs]
    if method in _TRAINED and method not in _SEARCHED:
        if return_optimization_report:
            raise InputError(f"{method} does not support optimization report (as in ranx)")
        return irmetrics.train_fusion(q, rs, method, norm)
    best, trials = irmetrics.optimize_fusion(
        q, rs, method, norm, metric, step=step, return_optimization_report=True
    )
    if method in _TRAINED:
        best = irmetrics.train_fusion(q, rs, method, norm, best)
    if not return_optimization_report:
        return best
    report = OptimizationReport(
        method=method,
        configs=[_config(params) for params, _ in trials],
        results=[score for _, score in trials],
        metric=metric,
        rounding_digits=rounding_digits,
        show_percentages=show_percentages,
    )
    return best, report


def _config(params: Mapping[str, Any]) -> str:
    """A setting as ranx's report names it: ``str`` of its value as ranx's grid holds it
    (an int ``k``, ``n_segments`` or ``w``; numpy floats, a tuple of them for weights)."""
    ((name, value),) = params.items()
    if name == "weights":
        return str(tuple(np.float64(w) for w in value))
    if name in ("k", "n_segments", "w"):
        return str(int(value))
    return str(np.float64(value))


class OptimizationReport:
    """ranx's ``OptimizationReport``: the settings ``optimize_fusion`` tried
    (``configs``, as ranx spells them) and their scores (``results``), printed as a
    table with the best one marked (ranx prints it with rich)."""

    def __init__(
        self,
        method: str,
        configs: list[str],
        results: list[float],
        metric: str,
        rounding_digits: int = 3,
        show_percentages: bool = False,
    ) -> None:
        self.method = method
        self.configs = configs
        self.results = results
        self.metric = metric
        self.rounding_digits = rounding_digits
        self.show_percentages = show_percentages

    def format_score(self, score: float) -> str:
        """A score at ``rounding_digits`` (as a percentage with ``show_percentages``)."""
        if self.show_percentages:
            digits = max(0, self.rounding_digits - 2)
            return f"{round(score * 100, digits):.{digits}f}"
        return f"{round(score, self.rounding_digits):.{self.rounding_digits}f}"

    def __str__(self) -> str:
        best = int(np.argmax(self.results)) if self.results else -1
        rows = [(c, self.format_score(s)) for c, s in zip(self.configs, self.results)]
        head = ("setting", str(self.metric))
        width = [max(len(x) for x in col) for col in zip(head, *rows)]
        lines = [self.method, "  ".join(h.ljust(w) for h, w in zip(head, width))]
        for i, row in enumerate(rows):
            mark = "  <- best" if i == best else ""
            lines.append("  ".join(x.ljust(w) for x, w in zip(row, width)).rstrip() + mark)
        return "\n".join(lines)

    __repr__ = __str__


# ranx's methods trained on qrels, and those whose parameter its optimize_fusion searches
_TRAINED = {"probfuse", "segfuse", "posfuse", "slidefuse", "bayesfuse", "mapfuse"}
_SEARCHED = {"probfuse", "slidefuse"}


def normalize(run: Any, norm: str = "min-max") -> Run:
    """ranx's ``normalize``: a new run, each query's scores normalized
    (``irmetrics.normalize``: ranx's methods and names), the run's name kept."""
    return Run._of(irmetrics.normalize(_run(run), norm), name=getattr(run, "name", None))


def plot(
    qrels: Any,
    runs: Any,
    graph: str = "iprec_at_recall",
    return_graph: bool = True,
    figsize: tuple[float, float] | None = None,
    seaborn_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """ranx's ``plot``: each run's 11-point interpolated precision-recall curve, the
    mean over the queries of ranx's interpolated precision (trec_eval 9's
    ``iprec_at_recall``, ``iprec_at_recall_0.70(trec_eval9=1)`` in irmetrics: trec_eval 10's
    differs on some queries). The run and the qrels must have the same queries unless
    ``Run.make_comparable`` was called, as for ``evaluate``. ``return_graph=False``:
    ranx's DataFrame (columns ``Model``, ``recall``, ``precision``; 11 rows a run, runs
    without a name ``run`` or ``run_1``, ``run_2``, ...). Otherwise the curves are drawn
    with matplotlib as ``irmetrics.plot.precision_recall`` draws them (ranx draws with
    seaborn) in a figure of ``figsize`` (ranx's (8, 5)), ``seaborn_kwargs`` set on each
    curve's line (ranx's ``{"linewidth": 2.5}``; matplotlib's line properties), shown
    with ``plt.show()`` as ranx does, and the Figure is returned (ranx returns None)."""
    from .. import plot as _plot

    if graph != "iprec_at_recall":
        raise InputError(f"graph must be 'iprec_at_recall' (ranx's one graph), got {graph!r}")
    q = _qrels(qrels)
    several = isinstance(runs, (list, tuple))
    named, complete = _named_runs(q, runs if several else [runs], False, None if several else "run")
    recall = _plot._RECALL_LEVELS
    levels = ",".join(f"{r:g}" for r in recall)
    ev = irmetrics.Evaluator(q, [f"iprec_at_recall.{levels}{_TREC_EVAL_9}"], complete=complete)
    # the 11 levels' means, in order
    curves = {
        name: {"recall": recall, "precision": list(ev.evaluate(data).values())}
        for name, data in named.items()
    }
    if not return_graph:
        import pandas as pd

        return pd.DataFrame(
            {
                "Model": [name for name in curves for _ in recall],
                "recall": recall * len(curves),
                "precision": [y for c in curves.values() for y in c["precision"]],
            }
        )
    plt = _plot._pyplot()
    fig, ax = plt.subplots(figsize=figsize or (8, 5))
    _plot._draw_precision_recall(ax, curves, title="Precision-Recall Curve")
    style = {"linewidth": 2.5} if seaborn_kwargs is None else dict(seaborn_kwargs)
    for line in ax.get_lines():
        try:
            line.set(**style)
        except AttributeError as e:
            raise InputError(
                f"seaborn_kwargs: {e} (matplotlib's line properties are taken)"
            ) from None
    ax.set_xticks(recall)
    ax.set_yticks(recall)
    plt.show()
    return fig
