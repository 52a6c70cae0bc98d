"""trec_eval and pytrec_eval compatibility through the Python API.

``trec_eval(qrels_path, run_path, flags)`` evaluates with trec_eval's command-line
flags, through the command line's own flow (flags, reading, evaluation: one place, in
Rust), and returns ``{measure: {query_id_or_"all": value}}`` at full precision, the
form the conformance checker's ``--python`` target takes::

    python3 check_conformance.py --python irmetrics.compat:trec_eval

``RelevanceEvaluator`` and ``compute_aggregated_measure`` are pytrec_eval's, on
irmetrics' engine, for code written against pytrec_eval (BEIR's evaluation, most
retriever training loops)::

    from irmetrics.compat import RelevanceEvaluator
    evaluator = RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P.5"})
    scores = evaluator.evaluate(run)      # {query_id: {"map": ..., "ndcg_cut_10": ...}}

and so are ``parse_qrel`` / ``parse_run`` (lines in, nested dicts out, through
irmetrics' readers: a bad line is an ``irmetrics.FormatError`` naming it),
``supported_measures`` and ``supported_nicknames``.

``irmetrics.compat.ir_measures`` is ir_measures' API (``calc_aggregate``,
``iter_calc``, ``calc``, ``evaluator``, the measure objects ``nDCG``, ``AP``, ...) the
same way, ``irmetrics.compat.ranx`` ranx's
and ``irmetrics.compat.trectools`` trectools' (``TrecQrel``, ``TrecRun``, ``TrecEval``,
``TrecRes``, ``fusion``).
"""

from __future__ import annotations

import math
import operator
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import _core
from .._core import Evaluator, InputError, Qrels, Run


def trec_eval(qrels_path: str, run_path: str, flags: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Evaluate like ``trec_eval FLAGS QRELS RUN``; raises on inputs it rejects."""
    return _core.trec_eval([*flags, qrels_path, run_path])


# trec_eval's measures that have no per-query value of their own; pytrec_eval reports
# one per query: 0 for the run's tag and the relevance string, 1 for the query count,
# and for the geometric means the logarithm trec_eval averages (of the arithmetic
# measure, floored at trec_eval's MIN_GEO_MEAN, 1e-5)
_PER_QUERY_CONSTANTS = {"runid": 0.0, "relstring": 0.0, "num_q": 1.0}
_GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}
_MIN_GEO_MEAN = 1e-5
# trec_eval 9's iprec_at_recall and 11pt_avg (a recall level x is the (long)(x R +
# 0.9)-th relevant document; trec_eval 10 rounds x R), as pytrec_eval, which embeds
# trec_eval 9, and ranx compute them
_TREC_EVAL_9 = "(trec_eval9=1)"


def _as_trec_eval_9(name: str) -> str:
    return name + _TREC_EVAL_9 if name.startswith(("iprec_at_recall", "11pt_avg")) else name


# pytrec_eval's nicknames (trec_eval 9's): its "all_trec" lacks the measures trec_eval
# 10 added (rbp, rbp_resid, unj), which irmetrics' "all_trec" holds
_OFFICIAL = "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank"
_NICKNAMES = {
    "official": f"{_OFFICIAL} iprec_at_recall P".split(),
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall "
    "set_relative_P set_map set_F".split(),
    "all_trec": f"{_OFFICIAL} iprec_at_recall P relstring recall infAP gm_bpref utility "
    "11pt_avg ndcg relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G "
    "set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret".split(),
}
# pytrec_eval's module constants: trec_eval 9's measures (every one irmetrics computes
# too; RelevanceEvaluator also takes irmetrics' own) and the nicknames for qrels files
# (pytrec_eval's prefs and qrels_jg nicknames need preference judgments, which
# RelevanceEvaluator's {query: {doc: relevance}} cannot hold)
supported_measures: frozenset[str] = frozenset(_NICKNAMES["all_trec"])
supported_nicknames: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in _NICKNAMES.items()}

# a family's parameters as pytrec_eval writes them: "ndcg_cut.10", "P_5,10"
_PARAMS = re.compile(r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)")
# a single-valued family's parameters after "_" (after "." any text is its parameters)
_NUMBERS = re.compile(r"[-+0-9.,=]+")


def _outputs(measures: Iterable[str]) -> list[tuple[str, str]]:
    """pytrec_eval's output names of ``measures``, each with the spelling irmetrics
    computes it by, combined as pytrec_eval combines them: the nicknames expanded into
    families, each family's parameters gathered from all its spellings, and a family
    given with parameters anywhere computed at those only (``{"P", "P.5"}`` is
    ``P_5``, as in trec_eval 10 and ``irmetrics.evaluate``). A single-valued family
    given parameters keeps its bare name, as in trec_eval 9 (``set_F.0.5`` is
    ``set_F``; trec_eval 10 prints ``set_F_0.5``)."""
    families = sorted((f for f, _, _ in _core.measures()), key=len, reverse=True)
    known = set(families)
    params: dict[str, set[str]] = {}
    single: dict[str, str] = {}  # single-valued family -> its parameter text
    for m in (n for given in measures for n in _NICKNAMES.get(given, [given])):
        if m in known:
            params.setdefault(m, set())
            continue
        # the longest family the name starts with, then its parameters
        f = next((f for f in families if m.startswith(f) and m[len(f)] in "._"), "")
        found = _PARAMS.fullmatch(m, len(f)) if f else None
        text = m[len(f) + 1 :]
        if f and _core.canonical_names(f) == [f] and (m[len(f)] == "." or _NUMBERS.fullmatch(text)):
            # one value (set_F.0.5, utility_1,-1,0,0, ndcg.1=2,2=5)
            if single.setdefault(f, text) != text:
                raise InputError(
                    f"measure '{f}' is asked for with two parameter lists "
                    f"('{single[f]}', '{text}'): pytrec_eval names both '{f}'"
                )
            params.setdefault(f, set())
        elif found:
            params.setdefault(f, set()).update(found.group(1).split(","))
        else:  # irmetrics' own spellings (or a name canonical_names refuses)
            params.setdefault(m, set())
    out: list[tuple[str, str]] = []
    for f, ps in params.items():
        if f in single:
            _core.canonical_names(f"{f}.{single[f]}")  # refuses bad parameters here
            out.append((f, f"{f}.{single[f]}"))
            continue
        out += [(n, n) for n in _core.canonical_names(f"{f}.{','.join(sorted(ps))}" if ps else f)]
    return list(dict.fromkeys(out))


def _truth(value: object, name: str) -> bool:
    """A flag as pytrec_eval takes it (a C int: ``bool``, ``int``, numpy integers);
    anything else is an ``InputError`` (pytrec_eval's ``TypeError``)."""
    if isinstance(value, bool):
        return value
    try:
        return operator.index(value) != 0  # type: ignore[arg-type]
    except TypeError:
        raise InputError(f"{name} must be True or False, got {value!r}") from None


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator`` (same arguments, same output) on irmetrics'
    engine: ``RelevanceEvaluator(query_relevance, measures, relevance_level=1,
    judged_docs_only_flag=False).evaluate(scores)`` returns ``{query_id: {measure:
    value}}`` for the queries both judged and in ``scores``, the measures under
    pytrec_eval's output names (``"P_5"``, ``"ndcg_cut_10"``), as floats.

    ``measures``: pytrec_eval's spellings (``"map"``, ``"ndcg_cut.10"``,
    ``"ndcg_cut_10"``, ``"P.5,10"``, ``"set_F.0.5"``, a family such as ``"ndcg_cut"``
    for trec_eval's cut-offs, the nicknames ``"official"``, ``"set"``, ``"all_trec"``),
    or any name irmetrics takes. As pytrec_eval: a query judged but absent from
    ``scores`` is left out (``irmetrics.evaluate`` refuses it), one in ``scores`` with
    no documents is scored as an empty ranking, a query without judgments is dropped,
    ``runid``, ``relstring``, ``num_q``, ``gm_map`` and ``gm_bpref`` get a value per
    query (0, 0, 1, and the logarithm of map / bpref floored at 1e-5), scores are
    rounded to 32-bit floats (pytrec_eval's trec_eval 9 holds them in a C ``float``, so
    scores closer than that tie), and ``iprec_at_recall_*`` and ``11pt_avg`` are
    trec_eval 9's (a recall level is turned into a rank as trec_eval 9 does).
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        if isinstance(measures, str):
            measures = [measures]
        asked = list(dict.fromkeys(measures))
        if not asked:
            raise InputError("no measures given")
        # each measure's output names (a family or nickname expands); an unknown
        # measure is refused here, as pytrec_eval does
        self._outputs = _outputs(asked)
        computed = [how for name, how in self._outputs if name not in _PER_QUERY_CONSTANTS]
        computed += [_GEOMETRIC[n] for n, _ in self._outputs if n in _GEOMETRIC]
        self._computed = [_as_trec_eval_9(n) for n in dict.fromkeys(computed)] or ["num_ret"]
        self._judgments = {q: rel for q, rel in query_relevance.items() if len(rel) > 0}
        self._relevance_level = relevance_level
        self._judged_only = _truth(judged_docs_only_flag, "judged_docs_only_flag")
        # no judgment at all: every evaluation is empty, as in pytrec_eval
        self._evaluator = self._evaluator_of(self._judgments) if self._judgments else None

    def _evaluator_of(self, judgments: Mapping[str, Mapping[str, int]]) -> Evaluator:
        # complete: a query of the run without documents is an empty ranking (the
        # judged queries missing from the run are left out before this)
        return Evaluator(
            judgments,
            self._computed,
            relevance_level=self._relevance_level,
            judged_only=self._judged_only,
            complete=True,
        )

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` of the run ``scores`` (``{query_id:
        {doc_id: score}}``) over the queries judged and in it; ``{}`` without any."""
        common = [q for q in self._judgments if q in scores]
        if self._evaluator is None or not common:
            return {}
        ev = self._evaluator
        if len(common) < len(self._judgments):
            subset = {q: self._judgments[q] for q in common}
            ev = self._evaluator_of(subset)
        run = _core.as_run(scores).with_float32_scores()
        columns = ev.evaluate(run, per_query=True)
        # the results are keyed as the names were given: the spellings computed
        by_name = {label.removesuffix(_TREC_EVAL_9): values for label, values in columns.items()}
        out: dict[str, dict[str, float]] = {q: {} for q in common}
        for name, how in self._outputs:
            if name in _PER_QUERY_CONSTANTS:
                for q in common:
                    out[q][name] = _PER_QUERY_CONSTANTS[name]
            elif name in _GEOMETRIC:
                base = by_name[_GEOMETRIC[name]]
                for q in common:
                    out[q][name] = math.log(max(float(base[q]), _MIN_GEO_MEAN))
            else:
                values = by_name[how]
                for q in common:
                    out[q][name] = float(values[q])
        return out


def _text(lines: Iterable[str]) -> tuple[str, str]:
    """The text of ``lines`` (an open file, a list of lines with or without their line
    ends) and the name errors give it: the file's, else ``<lines>``."""
    if isinstance(lines, str):
        raise InputError("expected the lines of a file (an open file, a list of str), got a str")
    source = getattr(lines, "name", None)
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text, source if isinstance(source, str) else "<lines>"


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """pytrec_eval's ``parse_qrel``: ``{query_id: {doc_id: relevance}}`` of the lines
    of a qrels file (``query_id iteration doc_id relevance``), read by irmetrics' qrels
    reader (a document twice for a query, a short line or a blank one is refused, naming
    its line)."""
    text, source = _text(f_qrel)
    return Qrels.from_string(text, source).to_dict()


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """pytrec_eval's ``parse_run``: ``{query_id: {doc_id: score}}`` of the lines of a
    run file (``query_id Q0 doc_id rank score tag``), read by irmetrics' run reader."""
    text, source = _text(f_run)
    return Run.from_string(text, source).to_dict()


def compute_aggregated_measure(measure: str, values: Sequence[float]) -> float:
    """pytrec_eval's aggregate of per-query values: the sum for ``num_*``, the
    geometric mean of the logarithms ``RelevanceEvaluator`` gives for ``gm_*``, else the
    mean. No values: 0 for ``num_*``, else NaN with a ``RuntimeWarning``, as pytrec_eval
    (numpy's mean of nothing)."""
    if len(values) == 0 and not measure.startswith("num_"):
        warnings.warn(f"no values to aggregate for {measure!r}: NaN", RuntimeWarning, 2)
        return math.nan
    total = math.fsum(values)
    if measure.startswith("num_"):
        return total
    if measure.startswith("gm_"):
        return math.exp(total / len(values))
    return total / len(values)
