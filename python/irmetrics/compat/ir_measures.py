"""ir_measures' API on irmetrics' engine, for code written against ir_measures (PyTerrier
experiments, most retriever papers' evaluation scripts)::

    from irmetrics.compat import ir_measures
    from irmetrics.compat.ir_measures import nDCG, AP, P  # ir_measures' measure objects

    ir_measures.calc_aggregate([nDCG@10, AP, P(rel=2)@5], qrels, run)
    # {nDCG@10: 0.61, AP: 0.37, P(rel=2)@5: 0.52}
    for metric in ir_measures.iter_calc([nDCG@10], qrels, run):
        metric.query_id, metric.measure, metric.value

``calc_aggregate``, ``iter_calc``, ``calc`` and ``evaluator`` take ir_measures'
arguments (measures, qrels, run) and return its output: results keyed by the measures
as given (ir_measures' objects, or strings in any spelling ``irmetrics.evaluate``
takes), names read as ir_measures reads them (``names="ir_measures"``). The module has
ir_measures' measure objects (every one of ir_measures 0.4, aliases included: spelled,
built with ``@`` and parameters, compared and hashed as ir_measures' are, parameters
checked as it checks them), ``parse_measure`` and ``parse_trec_measure``, so code
written for ir_measures runs without it installed. As ir_measures
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

import ast
import math
import os
import warnings
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

from .. import _core
from .. import diversity as _diversity
from .._core import Evaluator as _Evaluator
from .._core import InputError, Qrels, Run

__all__ = [
    "BaseMeasure",
    "CalcResults",
    "Evaluator",
    "Measure",
    "Metric",
    "ParamInfo",
    "Qrel",
    "ScoredDoc",
    "calc",
    "calc_aggregate",
    "convert_trec_name",
    "evaluator",
    "iter_calc",
    "parse_measure",
    "parse_trec_measure",
    "read_trec_qrels",
    "read_trec_run",
    # the measures, as ir_measures names them (aliases included)
    "AP",
    "AP_IA",
    "Accuracy",
    "BPM",
    "BPref",
    "Bpref",
    "Compat",
    "ERR",
    "ERR_IA",
    "INSQ",
    "INST",
    "IPrec",
    "Judged",
    "MAP",
    "MAP_IA",
    "MRR",
    "NDCG",
    "NERR10",
    "NERR11",
    "NERR8",
    "NERR9",
    "NRBP",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "P_IA",
    "Precision",
    "R",
    "RBP",
    "RPrec",
    "RR",
    "Recall",
    "Rprec",
    "SDCG",
    "SetAP",
    "SetF",
    "SetP",
    "SetR",
    "SetRelP",
    "StRecall",
    "Success",
    "alpha_DCG",
    "alpha_nDCG",
    "infAP",
    "nDCG",
    "nERR_IA",
    "nNRBP",
    "α_DCG",
    "α_nDCG",
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


# ir_measures' measure objects ------------------------------------------------------
# The same names, parameters (types, defaults, required ones), spelling (``repr``) and
# equality as ir_measures' (0.4): a measure object is its name, which irmetrics reads
# (``names="ir_measures"``), so results are keyed by the objects given. Code that says
# ``ir_measures.nDCG@10`` or ``from ir_measures import *`` runs without ir_measures.

_UNSET: Any = object()  # a parameter without a default (ir_measures' "not provided")


class ParamInfo:
    """A measure's parameter (ir_measures' ``ParamInfo``): its type, whether it is
    required, its allowed values and its default."""

    def __init__(
        self,
        dtype: type | None = None,
        required: bool = False,
        choices: Any = _UNSET,
        default: Any = _UNSET,
        desc: str | None = None,
    ) -> None:
        self.dtype = dtype
        self.required = required
        self.choices = choices
        self.default = default
        self.desc = desc

    def validate(self, value: Any) -> bool:
        """Whether ``value`` suits the parameter (an int suits a float parameter:
        ir_measures refuses ``T=2`` for ``T=2.0``, irmetrics reads both)."""
        if value is _UNSET:
            return not self.required
        dtype = self.dtype
        if dtype is float and isinstance(value, int) and not isinstance(value, bool):
            dtype = int
        if dtype is int and isinstance(value, bool):
            return False
        if dtype is not None and not isinstance(value, dtype):
            return False
        return self.choices is _UNSET or value in self.choices


class Measure:
    """A measure with its parameters, as ir_measures' ``Measure``: ``nDCG@10`` sets
    the cutoff (the parameter ``AT_PARAM`` names), ``P(rel=2)`` the others;
    ``repr`` is ir_measures' spelling (parameters at their default left out), equal
    measures are those spelled alike. ``calc_aggregate(qrels, run)``,
    ``iter_calc(qrels, run)``, ``calc(qrels, run)`` and ``evaluator(qrels)`` evaluate
    the one measure."""

    DEFAULT = 0.0  # a judged query missing from the run

    def __init__(
        self,
        name: str,
        supported: dict[str, ParamInfo],
        at_param: str = "cutoff",
        **params: Any,
    ) -> None:
        self.__name__ = self.NAME = name
        self.SUPPORTED_PARAMS = supported
        self.AT_PARAM = at_param
        self.params = params

    def __call__(self, **params: Any) -> Measure:
        return Measure(self.NAME, self.SUPPORTED_PARAMS, self.AT_PARAM, **{**self.params, **params})

    def __matmul__(self, value: Any) -> Measure:
        return self(**{self.AT_PARAM: value})

    def __getitem__(self, key: str) -> Any:
        return self.params.get(key, self.SUPPORTED_PARAMS[key].default)

    def __repr__(self) -> str:
        shown = [
            f"{k}={_param_repr(v)}"
            for k, v in self.params.items()
            if k != self.AT_PARAM
            and (k not in self.SUPPORTED_PARAMS or v != self.SUPPORTED_PARAMS[k].default)
        ]
        text = f"{self.NAME}({','.join(shown)})" if shown else self.NAME
        if self.AT_PARAM in self.params:
            text += f"@{self.params[self.AT_PARAM]}"
        return text

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def validate_params(self) -> None:
        """An ``irmetrics.InputError`` naming the parameter that is unknown, missing or
        of the wrong type (ir_measures asserts when it evaluates)."""
        unknown = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise InputError(
                f"{self!r}: unknown parameter(s) {unknown}; {self.NAME} takes "
                f"{', '.join(self.SUPPORTED_PARAMS) or 'none'}"
            )
        for key, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(key, _UNSET)
            if info.validate(value):
                continue
            if value is _UNSET:
                example = f"{self.NAME}@10" if key == self.AT_PARAM else f"{self.NAME}({key}=...)"
                raise InputError(f"{self!r}: the parameter {key} is required (e.g. {example})")
            kind = info.dtype.__name__ if info.dtype else "any"
            allowed = "" if info.choices is _UNSET else f", one of {info.choices}"
            raise InputError(f"{self!r}: {key}={value!r} must be {kind}{allowed}")

    def iter_calc(self, qrels: Any, run: Any) -> Iterator[Metric]:
        return iter_calc([self], qrels, run)

    def calc_aggregate(self, qrels: Any, run: Any) -> float:
        return calc_aggregate([self], qrels, run)[self]

    def calc(self, qrels: Any, run: Any) -> CalcResults:
        aggregated, per_query = calc([self], qrels, run)
        return CalcResults(aggregated[self], per_query)  # type: ignore[arg-type]

    def evaluator(self, qrels: Any) -> Evaluator:
        return evaluator([self], qrels)


BaseMeasure = Measure


def _param_repr(value: Any) -> str:
    """A parameter as ir_measures spells it (a gain map without its identity entries)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in sorted(value.items()) if k != v) + "}"
    return repr(value)


_CUTOFF = ParamInfo(int, desc="ranking cutoff threshold")
_CUTOFF_NEEDED = ParamInfo(int, required=True, desc="ranking cutoff threshold")
_REL = ParamInfo(int, default=1, desc="minimum relevance label counted relevant")
_ANY_REL = ParamInfo(int, desc="minimum relevance label counted relevant (none: graded)")
_JUDGED = ParamInfo(bool, default=False, desc="leave out retrieved unjudged documents")
_MIN_REL = ParamInfo(int, default=0, desc="the label of gain 0")
_MAX_REL = ParamInfo(int, required=True, desc="the label of gain 1")
_T = ParamInfo(float, default=1.0, desc="the user's expected total gain")
_ALPHA = ParamInfo(float, default=0.5, desc="redundancy penalty")
_BETA = ParamInfo(float, default=0.5, desc="patience")
_DIVERSE = {"cutoff": _CUTOFF, "rel": _REL, "judged_only": _JUDGED}
_CWL = {"T": _T, "min_rel": _MIN_REL, "max_rel": _MAX_REL}

Accuracy = Measure("Accuracy", {"cutoff": _CUTOFF, "rel": _REL})
AP = MAP = Measure("AP", {"cutoff": _CUTOFF, "rel": _REL, "judged_only": _JUDGED})
BPM = Measure("BPM", {"cutoff": _CUTOFF_NEEDED, **_CWL})
Bpref = BPref = Measure("Bpref", {"rel": _REL})
Compat = Measure(
    "Compat",
    {"p": ParamInfo(float, default=0.95), "normalize": ParamInfo(bool, default=True)},
)
ERR_IA = Measure("ERR_IA", _DIVERSE)
nERR_IA = Measure("nERR_IA", _DIVERSE)
alpha_DCG = α_DCG = Measure("alpha_DCG", {**_DIVERSE, "alpha": _ALPHA})
alpha_nDCG = α_nDCG = Measure("alpha_nDCG", {**_DIVERSE, "alpha": _ALPHA})
NRBP = Measure("NRBP", {"rel": _REL, "alpha": _ALPHA, "beta": _BETA})
nNRBP = Measure("nNRBP", {"rel": _REL, "alpha": _ALPHA, "beta": _BETA})
AP_IA = MAP_IA = Measure("AP_IA", {"rel": _REL, "judged_only": _JUDGED})
P_IA = Measure("P_IA", _DIVERSE)
StRecall = Measure("StRecall", {"cutoff": _CUTOFF, "rel": _REL})
ERR = Measure("ERR", {"cutoff": _CUTOFF})
INST = Measure("INST", _CWL)
INSQ = Measure("INSQ", _CWL)
infAP = Measure("infAP", {"rel": _REL})
IPrec = Measure(
    "IPrec",
    {"recall": ParamInfo(float, required=True), "rel": _REL, "judged_only": _JUDGED},
    at_param="recall",
)
Judged = Measure("Judged", {"cutoff": _CUTOFF})
nDCG = NDCG = Measure(
    "nDCG",
    {
        "cutoff": _CUTOFF,
        "dcg": ParamInfo(str, choices=["log2", "exp-log2"], default="log2"),
        "gains": ParamInfo(dict, desc="gain of each label"),
        "judged_only": _JUDGED,
    },
)
NERR8 = Measure("NERR8", {"cutoff": _CUTOFF_NEEDED, "min_rel": _MIN_REL, "max_rel": _MAX_REL})
NERR9 = Measure("NERR9", {"cutoff": _CUTOFF_NEEDED, "min_rel": _MIN_REL, "max_rel": _MAX_REL})
NERR10 = Measure(
    "NERR10", {"p": ParamInfo(float, default=0.9), "min_rel": _MIN_REL, "max_rel": _MAX_REL}
)
NERR11 = Measure("NERR11", _CWL)
NumQ = Measure("NumQ", {})
NumRel = Measure("NumRel", {"rel": _REL})
NumRet = Measure("NumRet", {"rel": _ANY_REL})
NumRelRet = NumRet(rel=1)
P = Precision = Measure("P", {"cutoff": _CUTOFF_NEEDED, "rel": _REL, "judged_only": _JUDGED})
R = Recall = Measure("R", {"cutoff": _CUTOFF_NEEDED, "rel": _REL, "judged_only": _JUDGED})
RBP = Measure("RBP", {"cutoff": _CUTOFF, "p": ParamInfo(float, default=0.8), "rel": _ANY_REL})
Rprec = RPrec = Measure("Rprec", {"rel": _REL, "judged_only": _JUDGED})
RR = MRR = Measure("RR", {"cutoff": _CUTOFF, "rel": _REL, "judged_only": _JUDGED})
SDCG = Measure(
    "SDCG",
    {
        "cutoff": _CUTOFF_NEEDED,
        "dcg": ParamInfo(str, choices=["log2"], default="log2"),
        "min_rel": _MIN_REL,
        "max_rel": _MAX_REL,
    },
)
SetP = Measure(
    "SetP", {"rel": _REL, "relative": ParamInfo(bool, default=False), "judged_only": _JUDGED}
)
SetRelP = SetP(relative=True)
SetR = Measure("SetR", {"rel": _REL})
SetF = Measure("SetF", {"rel": _REL, "beta": ParamInfo(float, default=1.0), "judged_only": _JUDGED})
SetAP = Measure("SetAP", {"rel": _REL, "judged_only": _JUDGED})
Success = Measure("Success", {"cutoff": _CUTOFF_NEEDED, "rel": _REL, "judged_only": _JUDGED})

# every name ``parse_measure`` reads, aliases included (``NumRelRet`` is ``NumRet(rel=1)``)
_REGISTRY: dict[str, Measure] = {
    name: m for name, m in list(globals().items()) if isinstance(m, Measure) and name[0] != "_"
}


def _measure_name(measure: Any) -> str:
    """The name of a measure given to the evaluator, its parameters checked first."""
    if isinstance(measure, Measure):
        measure.validate_params()
    elif hasattr(measure, "validate_params"):  # ir_measures' own object
        try:
            measure.validate_params()
        except AssertionError as e:  # its repr may fail on an unknown parameter
            name = getattr(measure, "NAME", type(measure).__name__)
            raise InputError(f"ir_measures' {name} with {measure.params}: {e}") from None
    return str(measure)


# ir_measures' SumAgg measures: summed over the queries, not averaged
_SUMMED = {"NumQ", "NumRel", "NumRet"}
# ir_measures' diversity measures (its pyndeval provider): irmetrics.diversity's
_DIVERSITY = {"alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP"}
_DIVERSITY |= {"AP_IA", "P_IA", "StRecall"}


def _family(name: str) -> str:
    return name.split("(", 1)[0].split("@", 1)[0]


# How ir_measures' providers see the run, where that changes values. Its pytrec_eval
# provider (first in its default pipeline after the runtime measures) computes the
# measures below (its SUPPORTED_MEASURES in 0.4.3, some only at the parameter values
# `_convention` checks); pytrec_eval's trec_eval 9 holds each score in a C float, so for
# them the run's scores are rounded to 32 bits: scores closer than about 1e-7 relative
# tie, ranked by document id (P@1 of 0.1 against 0.1 + 1e-9 is 0 or 1 by that). Its
# msmarco provider (RR@k) and judged provider (Judged@k) rank by Python's sort of
# (-score, doc_id): tied scores by document id ascending. The others read the scores as
# given, ties in trec_eval's order.
_PYTREC_EVAL = {"P", "RR", "Rprec", "AP", "nDCG", "R", "Bpref", "NumRet", "NumQ", "NumRel"}
_PYTREC_EVAL |= {"SetAP", "SetF", "SetP", "SetR", "Success", "IPrec", "infAP"}
_FLOAT32, _ASCENDING, _AS_GIVEN = "float32", "ascending", "as given"


def _convention(name: str) -> str:
    """How ir_measures' provider of the measure spelled ``name`` sees the run (a name
    in another spelling, ``"ndcg_cut_10"``, is irmetrics' own: as given)."""
    m = _parse_expression(name)
    if m is None:
        return _AS_GIVEN
    if m.NAME == "Judged":
        return _ASCENDING
    if m.NAME == "RR" and m["cutoff"] is not _UNSET:
        return _AS_GIVEN if m["judged_only"] else _ASCENDING
    if m.NAME not in _PYTREC_EVAL:
        return _AS_GIVEN
    if (m.NAME == "nDCG" and m["dcg"] != "log2") or (m.NAME == "NumRel" and m["rel"] != 1):
        return _AS_GIVEN  # parameter values its pytrec_eval provider does not take
    return _FLOAT32


class Evaluator:
    """ir_measures' ``Evaluator``: the measures and judgments read once, then
    ``iter_calc(run)``, ``calc_aggregate(run)`` and ``calc(run)`` for each run."""

    def __init__(self, measures: Iterable[Any], qrels: Any) -> None:
        if isinstance(measures, str) or not isinstance(measures, Iterable):
            measures = [measures]
        # one measure per name (ir_measures' objects are equal by name)
        by_name: dict[str, Any] = {}
        for m in measures:
            by_name.setdefault(_measure_name(m), m)
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
        self._evaluators: list[tuple[Any, bool]] = []
        if self._diversity:
            if _is_rows(qrels):
                qrels = list(qrels)  # read twice when other measures come too
            self._subtopics = _subtopic_qrels(qrels)
        if len(self._diversity) == len(self._names):
            return  # subtopic judgments (a document once per subtopic) read only so
        computed = [n for n in self._names if _family(n) != "NumQ" and n not in self._diversity]
        self._qrels = _core.as_qrels(qrels)
        # complete: every judged query gets a value (replaced by 0 when the run lacks it);
        # an evaluator for each way ir_measures' providers see the run (`_convention`)
        computed = computed or ["NumRet"]
        for how in (_FLOAT32, _ASCENDING, _AS_GIVEN):
            names = [n for n in computed if _convention(n) == how]
            if names:
                ties = "ascending" if how == _ASCENDING else "descending"
                ev = _Evaluator(self._qrels, names, complete=True, names="ir_measures", ties=ties)
                self._evaluators.append((ev, how == _FLOAT32))

    def iter_calc(self, run: Any) -> Iterator[Metric]:
        """Each judged query's value of each measure, query by query."""
        run = _core.as_run(run)
        in_run = set(run.query_ids())
        values: dict[str, Any] = {}
        rounded = None
        for ev, float32 in self._evaluators:
            if float32 and rounded is None:
                rounded = run.with_float32_scores()
            values.update(ev.evaluate(rounded if float32 else run, per_query=True))
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
            if not self._evaluators:
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
        or type(qrels).__module__.split(".", 1)[0] == "polars"  # (a LazyFrame's columns warn)
        or hasattr(qrels, "columns")
        or hasattr(qrels, "__arrow_c_stream__")
        or hasattr(qrels, "__arrow_c_array__")
    )


def _subtopic_qrels(qrels: Any) -> Any:
    """Judgments as the diversity measures read them: ``(query_id, subtopic, doc_id,
    relevance)`` with ir_measures' ``iteration`` column as the subtopic. A path, a
    table with an ``iteration`` column and Arrow data go as they are; ``Qrel`` tuples
    (ir_measures' or these) become rows; a dict or irmetrics' ``Qrels``, which have no
    subtopics, one subtopic ``"0"`` a query, as ir_measures gives them; so does a
    table without an ``iteration`` (or ``subtopic_id``) column."""
    if not _is_rows(qrels) and not isinstance(qrels, (dict, Qrels)):
        return _with_subtopic(qrels)
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


def _with_subtopic(table: Any) -> Any:
    """A qrels table (pandas, polars, Arrow data) given the column ``iteration``
    ``"0"`` when it has neither it nor ``subtopic_id`` (ir_measures' default
    iteration); a path, or a table with subtopics, as it is."""
    if isinstance(table, (str, os.PathLike)):
        return table
    module = type(table).__module__.split(".", 1)[0]
    if module == "polars":
        import polars as pl

        names = table.collect_schema().names()
        if {"iteration", "subtopic_id"} & set(names):
            return table
        return table.with_columns(pl.lit("0").alias("iteration"))
    if hasattr(table, "columns") and hasattr(table, "assign"):  # pandas
        if {"iteration", "subtopic_id"} & set(table.columns):
            return table
        return table.assign(iteration="0")
    import pyarrow as pa

    arrow = table if isinstance(table, pa.Table) else pa.table(table)
    if {"iteration", "subtopic_id"} & set(arrow.column_names):
        return arrow
    return arrow.append_column("iteration", pa.repeat(pa.scalar("0"), arrow.num_rows))


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
    """ir_measures' ``parse_measure``: ``"nDCG(dcg='exp-log2')@10"`` -> that
    :class:`Measure` (a measure object is returned as it is). Another name irmetrics
    knows (a trec_eval or ranx spelling, ``"ndcg_cut_10"``) is returned unchanged, as
    ``calc_aggregate`` takes names too; an unknown one is an ``irmetrics.MeasureError``
    with the nearest names."""
    if isinstance(measure, Measure) or hasattr(measure, "SUPPORTED_PARAMS"):
        return measure
    parsed = _parse_expression(str(measure))
    if parsed is not None:
        return parsed
    _core.canonical_names(str(measure))
    return measure


def _parse_expression(text: str) -> Measure | None:
    """``Name``, ``Name(key=value, ...)`` and either with ``@value``, the name one of
    ir_measures' measures; None for any other text."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    at = _UNSET
    try:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            at, node = ast.literal_eval(node.right), node.left
        params = {}
        if isinstance(node, ast.Call) and not node.args:
            params = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            if len(params) != len(node.keywords):
                return None  # **kwargs
            node = node.func
    except ValueError:  # not a literal
        return None
    if not isinstance(node, ast.Name) or node.id not in _REGISTRY:
        return None
    measure = _REGISTRY[node.id](**params)
    return measure if at is _UNSET else measure @ at


# trec_eval's measures that ir_measures has: (measure, the parameter of trec_eval's
# ``name_value`` / ``name.value``)
_TREC: dict[str, tuple[Measure, str | None]] = {
    "map": (AP, None),
    "map_cut": (AP, "cutoff"),
    "P": (P, "cutoff"),
    "recall": (R, "cutoff"),
    "ndcg": (nDCG, None),
    "ndcg_cut": (nDCG, "cutoff"),
    "success": (Success, "cutoff"),
    "iprec_at_recall": (IPrec, "recall"),
    "set_map": (SetAP, None),
    "set_P": (SetP, None),
    "set_recall": (SetR, None),
    "set_relative_P": (SetRelP, None),
    "set_F": (SetF, "beta"),
    "infAP": (infAP, None),
    "bpref": (Bpref, None),
    "recip_rank": (RR, None),
    "Rprec": (Rprec, None),
    "num_q": (NumQ, None),
    "num_ret": (NumRet, None),
    "num_rel": (NumRel, None),
    "num_rel_ret": (NumRelRet, None),
}


def _trec_measure(name: str) -> Measure | None:
    """ir_measures' measure for one of trec_eval's canonical names (``P_5``)."""
    if name in _TREC:  # without a parameter, or at its default (set_F: beta = 1)
        return _TREC[name][0]
    family, _, value = name.rpartition("_")
    measure, param = _TREC.get(family, (None, None))
    if measure is None or param is None:
        return None
    dtype = measure.SUPPORTED_PARAMS[param].dtype
    return measure(**{param: int(value) if dtype is int else float(value)})


def _trec_family(name: str) -> str:
    """The trec_eval measure a canonical name is of (``P_5``: ``P``)."""
    return name if name in _TREC else name.rpartition("_")[0] or name


def parse_trec_measure(measure: str) -> list[Measure]:
    """ir_measures' ``parse_trec_measure``: the measures a trec_eval name stands for
    (``"P"``: ``[P@5, P@10, ..., P@1000]``, trec_eval's cutoffs; ``"ndcg_cut.10,20"``:
    ``[nDCG@10, nDCG@20]``). A measure group (``"official"``, ``"all_trec"``) gives
    those of its measures ir_measures has, and warns naming the others; a trec_eval
    measure without an ir_measures equivalent (``gm_map``) alone is an
    ``irmetrics.InputError``: give its name to ``calc_aggregate`` instead."""
    # by trec_eval measure in the order of their names, as ir_measures lists a group
    names = [n for n in _core.canonical_names(measure) if n != "runid"]
    names.sort(key=_trec_family)
    found = [(n, _trec_measure(n)) for n in names]
    missing = [n for n, m in found if m is None]
    if len(missing) == len(found):
        raise InputError(
            f"trec_eval's {measure!r} has no ir_measures equivalent; give the name itself "
            "to calc_aggregate (irmetrics evaluates it)"
        )
    if missing:
        warnings.warn(
            f"{measure!r}: left out {missing}, which ir_measures has no measures for",
            stacklevel=2,
        )
    return [m for _, m in found if m is not None]


def convert_trec_name(measure: str) -> list[Measure]:
    """ir_measures' deprecated name of :func:`parse_trec_measure`."""
    return parse_trec_measure(measure)


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
