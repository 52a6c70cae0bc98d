"""Pickling: Qrels, Run and Evaluator cross process boundaries (multiprocessing with
spawn, joblib, Ray) as flat bytes, and evaluate there to the TREC-file route's numbers
on the conformance suite's generated cases."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path
from typing import Any

import pytest
from generated_cases import plain

import irmetrics

CASES = ["v01_binary_basic", "v03_score_ties", "v06_exotic_ids", "v10_trec_like"]
MEASURES = ["all_trec"]


def evaluate_in_child(args: tuple[Any, Any]) -> dict[str, Any]:
    """Runs in a spawned process: the Evaluator and the Run arrive pickled."""
    ev, run = args
    return ev.evaluate(run, per_query=True, keys="canonical")


@pytest.mark.parametrize("case", CASES)
def test_pickled_inputs_round_trip_exactly(conformance: Path, case: str) -> None:
    d = conformance / "generated" / case
    qrels = irmetrics.Qrels.from_file(d / "qrels.txt")
    run = irmetrics.Run.from_file(d / "run.txt")
    for obj in (qrels, run):
        data = pickle.dumps(obj)
        back = pickle.loads(data)
        assert type(back) is type(obj)
        assert back.to_dict() == obj.to_dict()
        assert len(back) == len(obj)
    assert pickle.loads(pickle.dumps(run)).runid == run.runid
    ev = irmetrics.Evaluator(qrels, MEASURES, complete=True, relevance_level=2)
    ev2 = pickle.loads(pickle.dumps(ev))
    assert ev2.columns() == ev.columns()
    expected = ev.evaluate(run, keys="canonical")
    assert plain(ev2.evaluate(pickle.loads(pickle.dumps(run)), keys="canonical")) == plain(expected)


def test_pickles_are_flat_buffers(conformance: Path) -> None:
    """A pickled run is one bytes object about the size of its ids and values, not a
    Python object per row (which would be several times the TREC text)."""
    d = conformance / "generated" / "v10_trec_like"
    run = irmetrics.Run.from_file(d / "run.txt")
    qrels = irmetrics.Qrels.from_file(d / "qrels.txt")
    text = (d / "run.txt").stat().st_size
    assert len(pickle.dumps(run)) < text
    assert len(pickle.dumps(qrels)) < (d / "qrels.txt").stat().st_size * 2
    reduced = run.__reduce__()
    assert len(reduced[1]) == 1 and isinstance(reduced[1][0], bytes)


def test_the_evaluator_keeps_its_options_and_spellings() -> None:
    qrels = irmetrics.Qrels.from_dict({"q1": {"a": 2, "b": 1}, "q2": {"c": 1}})
    run = irmetrics.Run.from_dict({"q1": {"a": 0.5, "b": 0.9}})
    ev = irmetrics.Evaluator(qrels, ["recall", "P@1"], complete=True, names="ranx")
    ev2 = pickle.loads(pickle.dumps(ev))
    assert ev2.evaluate(run) == ev.evaluate(run)
    assert set(ev2.evaluate(run)) == {"recall", "P@1"}


def test_corrupt_pickles_are_errors_not_crashes() -> None:
    run = irmetrics.Run.from_dict({"q1": {"a": 0.5, "b": 0.9}})
    f, (data,) = run.__reduce__()
    for bad in (data[:-3], data + b"x", b"nonsense", data[:20]):
        with pytest.raises(irmetrics.Error):
            f(bad)
    g, (qdata,) = irmetrics.Qrels.from_dict({"q": {"d": 1}}).__reduce__()
    with pytest.raises(irmetrics.Error, match="not a pickled irmetrics object"):
        g(data)  # a run's bytes are not qrels


def test_results_pickle(conformance: Path) -> None:
    d = conformance / "generated" / "v10_trec_like"
    for output in ("dict", "pandas", "arrow", "polars"):
        res = irmetrics.evaluate(d / "qrels.txt", d / "run.txt", ["map", "P.10"], output=output)
        back = pickle.loads(pickle.dumps(res))
        if output == "dict":
            assert back == res
        else:
            assert back.equals(res)


def test_a_spawn_pool_evaluates_to_the_file_routes_numbers(conformance: Path) -> None:
    jobs = []
    expected = []
    for case in CASES:
        d = conformance / "generated" / case
        qrels = irmetrics.Qrels.from_file(d / "qrels.txt")
        run = irmetrics.Run.from_file(d / "run.txt")
        ev = irmetrics.Evaluator(qrels, MEASURES)
        jobs.append((ev, run))
        expected.append(ev.evaluate(run, per_query=True, keys="canonical"))
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.map(evaluate_in_child, jobs)
    assert [plain(g) for g in got] == [plain(e) for e in expected]


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_reports_pickle(conformance: Path, test: str) -> None:
    d = conformance / "generated" / "v10_trec_like"
    runs = {"a": d / "run.txt", "b": irmetrics.Run.from_dict(_shifted(d / "run.txt"))}
    report = irmetrics.compare(
        d / "qrels.txt", runs, ["map", "P@10"], test=test, n_resamples=500, seed=3
    )
    back = pickle.loads(pickle.dumps(report))
    assert back.to_dict() == report.to_dict()
    assert back.to_markdown() == report.to_markdown()


def _shifted(path: Path) -> dict[str, dict[str, float]]:
    """Another system: the run with each query's last document moved to the top."""
    run = irmetrics.Run.from_file(path).to_dict()
    out = {}
    for q, docs in run.items():
        last = min(docs, key=lambda doc: (docs[doc], doc))
        out[q] = {**docs, last: max(docs.values()) + 1.0}
    return out
