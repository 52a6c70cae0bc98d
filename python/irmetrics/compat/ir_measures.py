"""ir_measures' API on irmetrics' engine, for code written against ir_measures (PyTerrier
experiments, most retriever papers' evaluation scripts)::

    from irmetrics.compat import ir_measures
    from ir_measures import nDCG, AP, P          # the measure objects (or their names)

    ir_measures.calc_aggregate([nDCG@10, AP, P(rel=2)@5], qrels, run)
    # {nDCG@10: 0.61, AP: 0.37, P(rel=2)@5: 0.52}
    for metric in ir_measures.iter_calc([nDCG@10], qrels, run):
        metric.query_id, metric.measure, metric.value

``calc_aggregate``, ``iter_calc``, ``calc`` and ``evaluator`` take ir_measures'
arguments (measures, qrels, run) and return its output: results keyed by the measures
as given (ir_measures' objects, or strings in any spelling ``irmetrics.evaluate``
takes), names read as ir_measures reads them (``names="ir_measures"``). As ir_measures
does, and ``irmetrics.evaluate`` does not: every judged query has a value, 0 for one
missing from the run (each measure's ``DEFAULT``), which the means count; queries of the
run without judgments are left out; ``NumQ``, ``NumRel`` and ``NumRet`` are summed over
the queries, not averaged (so a query missing from the run adds nothing to them, not
its relevant documents). Qrels and run may be anything ``irmetrics.evaluate`` takes,
ir_measures' ``Qrel`` / ``ScoredDoc`` namedtuples and file paths included.

The diversity measures (``alpha_nDCG``, ``alpha_DCG``, ``ERR_IA``, ``nERR_IA``,
``NRBP``, ``nNRBP``, ``AP_IA``, ``P_IA``, ``StRecall``) are ``irmetrics.diversity``'s,
with ir_measures' conventions (its pyndeval provider: ties by document id ascending,
every judged topic averaged): the qrels' ``iteration`` is the subtopic, in ``Qrel``
tuples, a table's ``iteration`` column or a subtopic qrels file's second column; a
dict has one subtopic a query. Asked with other measures, the judgments must also
suit those (a document once a query).

``read_trec_qrels`` / ``read_trec_run`` (a path, ``.gz`` too, an open file or the
text) yield ``Qrel`` / ``ScoredDoc`` tuples as ir_measures' do, read by irmetrics'
readers: a bad line is an ``irmetrics.FormatError`` naming it, and a blank line is one
(ir_measures skips blank lines; trec_eval refuses them). They come query by query
(queries sorted, documents in file order), and a qrels line's iteration column is not
kept (``"0"``, as ir_measures gives judgments read from a dict): for the diversity
measures give the file's path (or ir_measures' own reader's tuples), as a document
judged for several subtopics is a duplicate to this reader. Passing the path itself
to ``calc_aggregate`` reads it without a tuple per line. ``parse_measure`` checks a
name and returns it: names are measures here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

from .. import _core
from .. import diversity as _diversity
from .._core import Evaluator as _Evaluator
from .._core import InputError, Qrels, Run

__all__ = [
    "CalcResults",
    "Evaluator",
    "Metric",
    "Qrel",
    "ScoredDoc",
    "calc",
    "calc_aggregate",
    "evaluator",
    "iter_calc",
    "parse_measure",
    "read_trec_qrels",
    "read_trec_run",
]


class Qrel(NamedTuple):
    """One judgment (ir_measures' ``Qrel``)."""

    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


class ScoredDoc(NamedTuple):
    """One retrieved document (ir_measures' ``ScoredDoc``)."""

    query_id: str
    doc_id: str
    score: float


class Metric(NamedTuple):
    """One query's value of one measure (ir_measures' ``Metric``; equal to it as a
    tuple)."""

    query_id: str
    measure: Any
    value: float


class CalcResults(NamedTuple):
    """``calc``'s result: the aggregates and the per-query ``Metric``s."""

    aggregated: dict[Any, float]
    per_query: list[Metric]


# ir_measures' SumAgg measures: summed over the queries, not averaged
_SUMMED = {"NumQ", "NumRel", "NumRet"}
# ir_measures' diversity measures (its pyndeval provider): irmetrics.diversity's
_DIVERSITY = {"alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP"}
_DIVERSITY |= {"AP_IA", "P_IA", "StRecall"}


def _family(name: str) -> str:
    return name.split("(", 1)[0].split("@", 1)[0]


class Evaluator:
    """ir_measures' ``Evaluator``: the measures and judgments read once, then
    ``iter_calc(run)``, ``calc_aggregate(run)`` and ``calc(run)`` for each run."""

    def __init__(self, measures: Iterable[Any], qrels: Any) -> None:
        if isinstance(measures, str) or not isinstance(measures, Iterable):
            measures = [measures]
        # one measure per name (ir_measures' objects are equal by name)
        by_name: dict[str, Any] = {}
        for m in measures:
            by_name.setdefault(str(m), m)
        if not by_name:
            raise InputError("no measures given")
        for name in by_name:
            if _family(name) in _DIVERSITY:
                continue  # irmetrics.diversity reads these names (and refuses bad ones)
            if len(_core.canonical_names(name)) != 1 and _family(name) != "NumQ":
                raise InputError(
                    f"{name!r} names several values; ir_measures' measures name one each "
                    "(give 'P@5' and 'P@10', not 'P.5,10')"
                )
        self.measures = list(by_name.values())
        self._names = list(by_name)
        self._diversity = [n for n in self._names if _family(n) in _DIVERSITY]
        self._subtopics: Any = None
        self._qrels: Any = None
        self._evaluator: Any = None
        if self._diversity:
            if _is_rows(qrels):
                qrels = list(qrels)  # read twice when other measures come too
            self._subtopics = _subtopic_qrels(qrels)
        if len(self._diversity) == len(self._names):
            return  # subtopic judgments (a document once per subtopic) read only so
        computed = [n for n in self._names if _family(n) != "NumQ" and n not in self._diversity]
        self._qrels = _core.as_qrels(qrels)
        # complete: every judged query gets a value (replaced by 0 when the run lacks it)
        computed = computed or ["NumRet"]
        self._evaluator = _Evaluator(self._qrels, computed, complete=True, names="ir_measures")

    def iter_calc(self, run: Any) -> Iterator[Metric]:
        """Each judged query's value of each measure, query by query."""
        run = _core.as_run(run)
        in_run = set(run.query_ids())
        values: dict[str, Any] = {}
        if self._evaluator is not None:
            values = self._evaluator.evaluate(run, per_query=True)
            judged = self._qrels.query_ids()
        if self._diversity:
            # ir_measures' pyndeval: ties by document id ascending, every judged topic
            div = _diversity(
                self._subtopics,
                run,
                self._diversity,
                per_query=True,
                ties="ascending",
                complete=True,
            )
            values.update(div)
            if self._evaluator is None:
                judged = sorted(div[self._diversity[0]])
        for q in judged:
            present = q in in_run
            for m, name in zip(self.measures, self._names):
                if not present:
                    v = 0.0
                elif _family(name) == "NumQ":
                    v = 1.0
                else:
                    v = float(values[name][q])
                yield Metric(q, m, v)

    def calc_aggregate(self, run: Any) -> dict[Any, float]:
        """``{measure: value}``: the mean over the judged queries (the sum for
        ``NumQ``, ``NumRel``, ``NumRet``)."""
        return self.calc(run).aggregated

    def calc(self, run: Any) -> CalcResults:
        """The aggregates and the per-query values together."""
        per_query = list(self.iter_calc(run))
        # iter_calc goes query by query, the measures in order within each
        k = len(self.measures)
        aggregated: dict[Any, float] = {}
        for i, (m, name) in enumerate(zip(self.measures, self._names)):
            col = [metric.value for metric in per_query[i::k]]
            total = math.fsum(col)
            if _family(name) in _SUMMED:
                aggregated[m] = total
            else:
                aggregated[m] = total / len(col) if col else math.nan
        return CalcResults(aggregated, per_query)


def _is_rows(qrels: Any) -> bool:
    """Whether ``qrels`` is an iterable of rows (not a path, table, dict or Qrels)."""
    return not (
        isinstance(qrels, (str, os.PathLike, dict, Qrels))
        or hasattr(qrels, "columns")
        or hasattr(qrels, "__arrow_c_stream__")
        or hasattr(qrels, "__arrow_c_array__")
    )


def _subtopic_qrels(qrels: Any) -> Any:
    """Judgments as the diversity measures read them: ``(query_id, subtopic, doc_id,
    relevance)`` with ir_measures' ``iteration`` column as the subtopic. A path, a
    table with an ``iteration`` column and Arrow data go as they are; ``Qrel`` tuples
    (ir_measures' or these) become rows; a dict or irmetrics' ``Qrels``, which have no
    subtopics, one subtopic ``"0"`` a query, as ir_measures gives them."""
    if not _is_rows(qrels) and not isinstance(qrels, (dict, Qrels)):
        return qrels
    if isinstance(qrels, Qrels):
        qrels = qrels.to_dict()
    if isinstance(qrels, dict):
        return [(q, "0", d, rel) for q, docs in qrels.items() for d, rel in docs.items()]
    rows = []
    for r in qrels:
        if hasattr(r, "iteration") and hasattr(r, "relevance"):
            rows.append((r.query_id, r.iteration, r.doc_id, r.relevance))
        else:  # (query_id, doc_id, relevance): ir_measures' order, no subtopic
            q, d, rel = r
            rows.append((q, "0", d, rel))
    return rows


_Data = TypeVar("_Data", Qrels, Run)


def _read(file: Any, kind: type[_Data]) -> _Data:
    """``kind`` read from a path, an open file or the text itself (ir_measures' three)."""
    if hasattr(file, "read"):
        text = file.read()
        source = getattr(file, "name", None)
        if isinstance(text, bytes):
            text = text.decode()
        return kind.from_string(text, source if isinstance(source, str) else "<file>")
    if isinstance(file, str) and "\n" in file:
        return kind.from_string(file)
    if isinstance(file, (str, os.PathLike)):
        return kind.from_file(file)
    raise InputError(f"expected a path, an open file or the text, got {type(file).__name__}")


def read_trec_qrels(file: Any) -> Iterator[Qrel]:
    """The judgments of a TREC qrels file (``query_id iteration doc_id relevance``)."""
    for q, docs in _read(file, Qrels).to_dict().items():
        for d, rel in docs.items():
            yield Qrel(q, d, rel)


def read_trec_run(file: Any) -> Iterator[ScoredDoc]:
    """The documents of a TREC run file (``query_id Q0 doc_id rank score tag``)."""
    for q, docs in _read(file, Run).to_dict().items():
        for d, score in docs.items():
            yield ScoredDoc(q, d, score)


def parse_measure(measure: Any) -> Any:
    """``measure`` itself once irmetrics knows it (an unknown name is an
    ``irmetrics.MeasureError`` with the nearest names): a name, or ir_measures'
    object, is what ``calc_aggregate`` takes."""
    _core.canonical_names(str(measure))
    return measure


def evaluator(measures: Iterable[Any], qrels: Any) -> Evaluator:
    """An ``Evaluator`` of ``measures`` against ``qrels``, for several runs."""
    return Evaluator(measures, qrels)


def iter_calc(measures: Iterable[Any], qrels: Any, run: Any) -> Iterator[Metric]:
    """Each judged query's value of each measure (``Metric`` tuples)."""
    return Evaluator(measures, qrels).iter_calc(run)


def calc_aggregate(measures: Iterable[Any], qrels: Any, run: Any) -> dict[Any, float]:
    """``{measure: value}`` over the judged queries."""
    return Evaluator(measures, qrels).calc_aggregate(run)


def calc(measures: Iterable[Any], qrels: Any, run: Any) -> CalcResults:
    """``CalcResults(aggregated, per_query)``."""
    return Evaluator(measures, qrels).calc(run)
