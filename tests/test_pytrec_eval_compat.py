"""irmetrics.compat.RelevanceEvaluator against pytrec_eval itself, run here on TREC DL
2019's judgments and a BM25 run: the same queries, the same measure names and the same
values (to 1e-12), pytrec_eval's quirks included (a judged query missing from the run
left out, per-query runid / num_q / gm_map, a family's parameters combined)."""

from __future__ import annotations

import math
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

# the peer is a test extra: missing, the module fails (never a silent skip)
import pytrec_eval

import irmetrics
from irmetrics.compat import RelevanceEvaluator, compute_aggregated_measure

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def dl19():
    with open(DATA / "dl19-passage.qrels") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(DATA / "dl19-bm25.run") as f:
        run = pytrec_eval.parse_run(f)
    return qrels, run


def assert_same(theirs, ours):
    assert theirs.keys() == ours.keys()
    for q in theirs:
        assert theirs[q].keys() == ours[q].keys(), (q, set(theirs[q]) ^ set(ours[q]))
        for name, v in theirs[q].items():
            assert type(ours[q][name]) is float, (q, name)
            assert math.isclose(ours[q][name], v, rel_tol=1e-12, abs_tol=1e-15), (q, name)


@pytest.mark.parametrize(
    ("measures", "options"),
    [
        ({"all_trec"}, {}),
        ({"official", "P.5,7", "ndcg_cut_3"}, {"relevance_level": 2}),
        ({"set", "success", "map_cut.3"}, {"judged_docs_only_flag": True}),
        # BEIR's EvaluateRetrieval
        ({"map_cut.1,3,5,10", "ndcg_cut.1,3,5,10", "recall.1,3,5,10", "P.1,3,5,10"}, {}),
        ({"recip_rank", "gm_map", "gm_bpref", "runid", "num_q", "relstring"}, {}),
    ],
)
def test_relevance_evaluator_is_pytrec_evals(dl19, measures, options):
    qrels, run = dl19
    # a third of the queries left out of the run: pytrec_eval skips them
    partial = {q: docs for i, (q, docs) in enumerate(run.items()) if i % 3}
    for r in (run, partial):
        theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(r)
        ours = RelevanceEvaluator(qrels, measures, **options).evaluate(r)
        assert_same(theirs, ours)
        for name in next(iter(theirs.values())):
            values = [theirs[q][name] for q in theirs]
            ref = pytrec_eval.compute_aggregated_measure(name, values)
            got = compute_aggregated_measure(name, [ours[q][name] for q in ours])
            assert math.isclose(got, ref, rel_tol=1e-12, abs_tol=1e-15), name


def test_edge_cases_as_pytrec_eval(dl19):
    qrels, run = dl19
    with_empty = {**qrels, "nothing-judged": {}}
    for scores in ({}, {"unjudged": {"d": 1.0}}):
        assert pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(scores) == {}
        assert RelevanceEvaluator(qrels, {"map"}).evaluate(scores) == {}
    # a query without judgments is dropped, even when the run has it
    r = {**run, "nothing-judged": {"d": 1.0}}
    theirs = pytrec_eval.RelevanceEvaluator(with_empty, {"P.5"}).evaluate(r)
    assert_same(theirs, RelevanceEvaluator(with_empty, {"P.5"}).evaluate(r))
    with pytest.raises(ValueError):
        pytrec_eval.RelevanceEvaluator(qrels, {"nosuch"})
    with pytest.raises(irmetrics.MeasureError):
        RelevanceEvaluator(qrels, {"nosuch"})
    with pytest.raises(irmetrics.InputError, match="no measures"):
        RelevanceEvaluator(qrels, set())


def test_scores_are_pytrec_evals_32_bit_floats():
    # pytrec_eval's trec_eval 9 holds a score in a C float: 0.1 + 1e-9 ties with 0.1
    # (then the document ids order them), where trec_eval 10's double tells them apart
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1, "c": 1}}
    run = {"q1": {"a": 0.1 + 1e-9, "b": 0.1}, "q2": {"a": 1e-300, "c": 0.0, "d": 1e39}}
    measures = {"P.1", "map", "recip_rank"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert theirs["q1"]["P_1"] == 0.0  # b's id ranks it first in the tie
    assert_same(theirs, RelevanceEvaluator(qrels, measures).evaluate(run))
    # irmetrics.evaluate reads doubles, as trec_eval 10: a is first, P@1 is 1
    assert irmetrics.evaluate(qrels, run, ["P.1"], per_query=True)["P.1"]["q1"] == 1.0
    # scores a float's precision apart, as a retriever's float64 scores can be
    rng = random.Random(7)
    qrels = {f"q{i}": {f"d{j}": rng.randrange(3) for j in range(40)} for i in range(30)}
    run = {q: {f"d{j}": 0.85 + rng.randrange(-200, 200) * 1e-10 for j in range(60)} for q in qrels}
    measures = {"map", "ndcg_cut.10", "P.5", "recip_rank", "bpref"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert_same(theirs, RelevanceEvaluator(qrels, measures).evaluate(run))


def test_a_query_without_documents_is_pytrec_evals_empty_ranking():
    # a retriever that returns nothing for a query: pytrec_eval scores an empty ranking
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1, "d3": 2}}
    measures = {"map", "num_rel", "num_ret", "P.5", "recall.10", "ndcg_cut.3"}
    for run in ({"q1": {"d1": 1.0}, "q2": {}}, {"q1": {}, "q2": {}}):
        theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert theirs["q2"]["num_ret"] == 0.0
        assert_same(theirs, RelevanceEvaluator(qrels, measures).evaluate(run))
    # judgments without any judged document: nothing to evaluate, as in pytrec_eval
    for empty in ({}, {"q1": {}}):
        theirs = pytrec_eval.RelevanceEvaluator(empty, {"map"}).evaluate({"q1": {"d1": 1.0}})
        assert theirs == {}
        assert RelevanceEvaluator(empty, {"map"}).evaluate({"q1": {"d1": 1.0}}) == theirs


def test_single_valued_measures_with_parameters_keep_pytrec_evals_names(dl19):
    # pytrec_eval (trec_eval 9) keys set_F.0.5 as set_F; trec_eval 10 prints set_F_0.5
    qrels, run = dl19
    for measures in (
        {"set_F.0.5"},
        {"set_F_0.25", "map"},
        {"11pt_avg.0.5"},
        {"11pt_avg_0.2,0.7", "P.5"},
        {"relstring.3", "num_q"},
    ):
        theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert_same(theirs, RelevanceEvaluator(qrels, measures).evaluate(run))
    # two parameter lists of one such family would both be named set_F
    with pytest.raises(irmetrics.InputError, match="two parameter lists"):
        RelevanceEvaluator(qrels, {"set_F.0.5", "set_F.2"})


def test_judged_docs_only_flag_is_pytrec_evals_int(dl19):
    qrels, run = dl19
    want = pytrec_eval.RelevanceEvaluator(qrels, {"P.10"}, judged_docs_only_flag=True)
    for flag in (1, 2, np.int64(1)):
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"P.10"}, judged_docs_only_flag=flag)
        assert theirs.evaluate(run) == want.evaluate(run)
        ours = RelevanceEvaluator(qrels, {"P.10"}, judged_docs_only_flag=flag)
        assert_same(theirs.evaluate(run), ours.evaluate(run))
    # pytrec_eval's TypeError: a string, a float, None, numpy's bool are no C int
    for flag in ("False", 1.0, None):
        with pytest.raises(TypeError):
            pytrec_eval.RelevanceEvaluator(qrels, {"P.10"}, judged_docs_only_flag=flag)
        with pytest.raises(irmetrics.InputError, match="judged_docs_only_flag"):
            RelevanceEvaluator(qrels, {"P.10"}, judged_docs_only_flag=flag)


def test_parse_qrel_and_parse_run_are_pytrec_evals(tmp_path):
    from irmetrics.compat import parse_qrel, parse_run

    for name, ours, theirs in (
        ("dl19-passage.qrels", parse_qrel, pytrec_eval.parse_qrel),
        ("dl19-bm25.run", parse_run, pytrec_eval.parse_run),
    ):
        with open(DATA / name) as f:
            expected = theirs(f)
        with open(DATA / name) as f:
            got = ours(f)
        assert got == expected
        assert all(type(v) is type(expected[q][d]) for q in got for d, v in got[q].items())
        # a list of lines without their line ends, as well
        lines = (DATA / name).read_text().splitlines()
        assert ours(lines) == expected
    # a bad line is named by its file and line (pytrec_eval: AssertionError, no line)
    bad = tmp_path / "dup.qrels"
    bad.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n")
    with open(bad) as f, pytest.raises(AssertionError):
        pytrec_eval.parse_qrel(f)
    with open(bad) as f, pytest.raises(irmetrics.FormatError, match=r"dup\.qrels:3: .*'d1'"):
        parse_qrel(f)
    with pytest.raises(irmetrics.FormatError, match=r"<lines>:1: "):
        parse_run(["q1 Q0 d1 1"])
    with pytest.raises(irmetrics.InputError, match="got a str"):
        parse_run("q1 Q0 d1 1 1.0 tag\n")


def test_supported_measures_are_pytrec_evals(dl19):
    from irmetrics import compat

    assert compat.supported_measures == pytrec_eval.supported_measures
    for nick, members in compat.supported_nicknames.items():
        assert members == pytrec_eval.supported_nicknames[nick], nick
    assert set(compat.supported_nicknames) == {"official", "set", "all_trec"}
    # the idiom of evaluating every supported measure
    qrels, run = dl19
    assert_same(
        pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures).evaluate(run),
        RelevanceEvaluator(qrels, compat.supported_measures).evaluate(run),
    )


NINE_LEVELS = "iprec_at_recall.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1(trec_eval9=1)"


def test_trec_eval9_option_is_pytrec_evals_iprec_at_recall():
    """``iprec_at_recall_x(trec_eval9=1)`` and ``11pt_avg(trec_eval9=1)``: trec_eval 9's
    rank of a recall level, as pytrec_eval computes it, on seeded queries of 1 to 40
    relevant documents (3 relevant and level 0.7: trec_eval 9 stops at the second)."""
    import random

    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(600):
        n_rel = rng.randint(1, 40)
        docs = [f"d{i}" for i in range(rng.randint(n_rel, 80))]
        qrels[f"q{q}"] = {d: (rng.choice([1, 2]) if i < n_rel else 0) for i, d in enumerate(docs)}
        ranked = rng.sample(docs, rng.randint(1, len(docs)))
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"}).evaluate(run)
    q, r = irmetrics.Qrels.from_dict(qrels), irmetrics.Run.from_dict(run)
    nine = irmetrics.evaluate(q, r, [NINE_LEVELS, "11pt_avg(trec_eval9=1)"], per_query=True)
    ten = irmetrics.evaluate(q, r, ["iprec_at_recall", "11pt_avg"], per_query=True)
    assert len(nine) == len(ten) == 12
    differ = 0
    for (name9, values9), (name10, values10) in zip(nine.items(), ten.items()):
        assert name9.startswith(name10.split("(")[0])
        level = name10.removeprefix("iprec_at_recall_")
        key = "11pt_avg" if name10 == "11pt_avg" else f"iprec_at_recall_{level}"
        for qid, v in values9.items():
            assert math.isclose(v, theirs[qid][key], rel_tol=1e-12, abs_tol=1e-15), (qid, key)
            differ += values10[qid] != theirs[qid][key]
    assert differ > 50  # trec_eval 10's rounding differs: the option is what matches


def test_aggregate_of_no_values_is_pytrec_evals():
    # pytrec_eval: 0 for a count, NaN (numpy's RuntimeWarning) for a mean or gm_
    for name in ("map", "gm_map", "P_5", "num_ret", "num_rel_ret"):
        with warnings.catch_warnings(record=True) as theirs_warned:
            warnings.simplefilter("always")
            theirs = pytrec_eval.compute_aggregated_measure(name, [])
        with warnings.catch_warnings(record=True) as ours_warned:
            warnings.simplefilter("always")
            ours = compute_aggregated_measure(name, [])
        assert (math.isnan(ours) and math.isnan(theirs)) or ours == theirs, name
        assert {w.category for w in ours_warned} == {w.category for w in theirs_warned}, name
