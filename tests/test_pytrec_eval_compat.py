"""irmetrics.compat.RelevanceEvaluator against pytrec_eval itself, run here on TREC DL
2019's judgments and a BM25 run: the same queries, the same measure names and the same
values (to 1e-12), pytrec_eval's quirks included (a judged query missing from the run
left out, per-query runid / num_q / gm_map, a family's parameters combined)."""

from __future__ import annotations

import math
from pathlib import Path

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


def _trec_eval_9(name: str) -> bool:
    """pytrec_eval embeds trec_eval 9, whose iprec_at_recall turns a recall level into a
    rank differently from trec_eval 10 (README, "Peer spellings"); 11pt_avg averages
    them."""
    return name.startswith("iprec_at_recall") or name == "11pt_avg"


def assert_same(theirs, ours):
    assert theirs.keys() == ours.keys()
    for q in theirs:
        assert theirs[q].keys() == ours[q].keys(), (q, set(theirs[q]) ^ set(ours[q]))
        for name, v in theirs[q].items():
            assert type(ours[q][name]) is float, (q, name)
            if not _trec_eval_9(name):
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
            if not _trec_eval_9(name):
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
