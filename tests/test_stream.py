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


def test_a_run_file_streamed_or_read_whole_gives_pytrec_evals_numbers(tmp_path: Path) -> None:
    """``evaluate(qrels, path)`` streams a file whose queries' lines are together and
    reads one whose queries come back whole: both give pytrec_eval's per-query values
    (through ir_measures), and the command line compares the same runs alike."""
    import json
    import subprocess
    import sys

    import ir_measures

    data = Path(__file__).parent / "data"
    qrels, run = data / "dl19-passage.qrels", data / "dl19-bm25.run"
    lines = run.read_text().splitlines(keepends=True)
    # a query's lines apart: every query's first line, then every second line, ...
    by_query: dict[str, list[str]] = {}
    for line in lines:
        by_query.setdefault(line.split()[0], []).append(line)
    qids = [line.split()[0] for line in lines]
    assert sum(a != b for a, b in zip(qids, qids[1:])) == len(by_query) - 1  # grouped
    rounds = max(map(len, by_query.values()))
    apart = tmp_path / "apart.run"
    apart.write_text(
        "".join(ls[i] for i in range(rounds) for ls in by_query.values() if i < len(ls))
    )
    measures = [ir_measures.AP, ir_measures.nDCG @ 10, ir_measures.P @ 5]
    want: dict[str, dict[str, float]] = {"map": {}, "ndcg_cut_10": {}, "P_5": {}}
    names = dict(zip(measures, want))
    peer = ir_measures.iter_calc(
        measures,
        list(ir_measures.read_trec_qrels(str(qrels))),
        list(ir_measures.read_trec_run(str(run))),
    )
    for m in peer:
        want[names[m.measure]][m.query_id] = m.value
    ev = irmetrics.Evaluator(qrels, ["map", "ndcg_cut.10", "P.5"])
    for path in (run, apart):
        got = ev.evaluate(str(path), per_query=True, keys="canonical")
        for key, values in want.items():
            assert got[key].keys() == values.keys(), (path.name, key)
            for q, v in values.items():
                assert got[key][q] == pytest.approx(v, abs=1e-12), (path.name, key, q)
    with pytest.raises(irmetrics.FormatError, match="apart.run:44: query .* appears again"):
        irmetrics.evaluate(qrels, str(apart), ["map"], stream=True)
    cli = [sys.executable, "-m", "irmetrics", "compare", "-m", "map", "--format", "json"]
    outs = [
        subprocess.run(
            [*cli, str(qrels), str(a), str(b)], capture_output=True, text=True, check=True
        ).stdout
        for a, b in ((run, data / "dl19-dense.run"), (apart, data / "dl19-dense.run"))
    ]
    assert outs[1].replace("apart.run", "dl19-bm25.run") == outs[0]
    means = json.loads(outs[1])["measures"][0]["means"]
    assert means["apart.run"] == pytest.approx(
        sum(want["map"].values()) / len(want["map"]), abs=1e-12
    )
