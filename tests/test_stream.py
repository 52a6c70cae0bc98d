"""The push API: ``Evaluator.stream()`` takes queries one at a time and gives the
numbers of the whole-run evaluation, bit for bit, on every row of the conformance
suite's generated cases (the TREC-file route, checked against trec_eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from generated_cases import generated_cases, plain

import irmetrics

#: How a query's document ids and scores are handed over.
COLUMNS: dict[str, Callable[[list[str], list[float]], tuple[Any, Any]]] = {
    "lists": lambda d, s: (d, s),
    "numpy_objects": lambda d, s: (np.array(d, dtype=object), np.array(s)),
    "numpy_str": lambda d, s: (np.array(d, dtype=str), np.array(s, dtype=np.float64)),
    "tuples": lambda d, s: (tuple(d), tuple(s)),
}


@pytest.mark.parametrize("columns", sorted(COLUMNS))
def test_a_pushed_run_gives_the_file_routes_numbers(conformance: Path, columns: str) -> None:
    how = COLUMNS[columns]
    for case in generated_cases(conformance):
        ev = irmetrics.Evaluator(case.qrels, case.measures, **case.options)
        file_run = irmetrics.Run.from_file(case.run)
        stream = ev.stream(name=file_run.runid)
        for qid, docs in file_run.to_dict().items():
            stream.add(qid, *how(list(docs), list(docs.values())))
        got = stream.finish(per_query=True, keys="canonical")
        expected = ev.evaluate(file_run, per_query=True, keys="canonical")
        assert plain(got) == plain(expected), (case.name, columns)
        # the summary (the tag is the stream's name), from the same stream
        got_all = stream.finish(keys="canonical")
        assert plain(got_all) == plain(ev.evaluate(file_run, keys="canonical")), case.name


def test_as_a_context_manager(conformance: Path) -> None:
    d = conformance / "generated" / "v10_trec_like"
    run = irmetrics.Run.from_file(d / "run.txt")
    ev = irmetrics.Evaluator(d / "qrels.txt", ["map", "nDCG@10", "P@5"])
    with ev.stream() as s:
        for qid, docs in run.to_dict().items():
            s.add(qid, list(docs), list(docs.values()))
    assert s.finish() == ev.evaluate(run)
    with pytest.raises(irmetrics.InputError, match="finished"):
        s.add("q", ["d"], [1.0])


def test_an_exception_in_the_block_discards_the_stream() -> None:
    ev = irmetrics.Evaluator({"q1": {"a": 1}}, "map")
    with pytest.raises(RuntimeError, match="boom"):
        with ev.stream() as s:
            s.add("q1", ["a"], [1.0])
            raise RuntimeError("boom")
    with pytest.raises(irmetrics.InputError, match="discarded"):
        s.finish()


def test_bad_pushes_are_errors() -> None:
    ev = irmetrics.Evaluator({"q1": {"a": 1}, "q2": {"b": 1}}, "map")
    s = ev.stream()
    s.add("q1", ["a", "b"], [1.0, 0.5])
    with pytest.raises(irmetrics.FormatError, match="query 'q1' appears again"):
        s.add("q1", ["c"], [1.0])
    with pytest.raises(irmetrics.FormatError, match="differ in length"):
        s.add("q2", ["a", "b"], [1.0])
    with pytest.raises(irmetrics.FormatError, match="NaN"):
        s.add("q2", ["a"], [float("nan")])
    with pytest.raises(irmetrics.FormatError, match="must be a str"):
        s.add(2, ["a"], [1.0])
    # a query never pushed is missing, as in a run without it
    with pytest.raises(irmetrics.MissingQueryError, match="q2"):
        s.finish()
    s = ev.stream()
    s.add("q1", ["a", "a"], [1.0, 0.5])
    with pytest.raises(irmetrics.FormatError, match="document 'a' appears twice"):
        s.finish()
