"""The Python API: values from worked examples and trec_eval's full-precision outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irmetrics

# ---------------------------------------------------------------- worked examples

# Relevant documents at ranks 1, 3, 5 of 3 relevant (Manning et al.-style example).
QRELS = {"q": {"d1": 1, "d3": 1, "d5": 1, "d2": 0, "d4": 0}}
RUN = {"q": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6, "d5": 0.5}}


def test_worked_example_precision_and_ap() -> None:
    res = irmetrics.evaluate(QRELS, RUN, ["P@3", "P@4", "P@5", "map", "recip_rank"])
    assert res["P@3"] == pytest.approx(2 / 3, abs=1e-15)
    assert res["P@4"] == 0.5
    assert res["P@5"] == pytest.approx(3 / 5, abs=1e-15)
    assert res["map"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3, abs=1e-15)
    assert round(res["map"], 3) == 0.756
    assert res["recip_rank"] == 1.0


def test_keys_follow_the_request_or_are_canonical() -> None:
    qrels = irmetrics.Qrels.from_dict(QRELS)
    run = irmetrics.Run.from_dict(RUN)
    ev = irmetrics.Evaluator(qrels, ["nDCG@3", "P.1,2", "AP"])
    assert set(ev.evaluate(run)) == {"nDCG@3", "P_1", "P_2", "AP"}
    assert set(ev.evaluate(run, keys="canonical")) == {"ndcg_cut_3", "P_1", "P_2", "map"}
    assert ev.columns() == ["map", "P_1", "P_2", "ndcg_cut_3"]
    assert irmetrics.canonical_names("P(rel=2)@5") == ["P_5-l2"]
    assert irmetrics.canonical_names("map@100-l2") == ["map_cut_100-l2"]


def test_per_measure_relevance_level() -> None:
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    res = irmetrics.evaluate(qrels, run, ["P@2", "P(rel=2)@2"])
    assert res == {"P@2": 1.0, "P(rel=2)@2": 0.5}
    assert irmetrics.evaluate(qrels, run, ["P@2"], relevance_level=2) == {"P@2": 0.5}


def test_ties_are_broken_by_doc_id_descending() -> None:
    # trec_eval ranks equal scores by document id descending: 'b' before 'a'.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    assert irmetrics.evaluate(qrels, run, "recip_rank") == {"recip_rank": 0.5}


def test_integer_and_string_measures() -> None:
    res = irmetrics.evaluate(QRELS, RUN, ["num_ret", "num_rel", "runid", "num_q"])
    assert res == {"num_ret": 5, "num_rel": 3, "runid": "", "num_q": 1}
    pq = irmetrics.evaluate(QRELS, RUN, ["relstring", "num_rel_ret"], per_query=True)
    assert pq == {"relstring": {"q": "10101"}, "num_rel_ret": {"q": 3}}


# ---------------------------------------------------------------- objects


def test_objects_round_trip(tmp_path: Path) -> None:
    qrels = irmetrics.Qrels.from_dict(QRELS)
    run = irmetrics.Run.from_dict(RUN, name="mine")
    assert repr(qrels) == "Qrels(queries=1, judgments=5)"
    assert repr(run) == 'Run(name="mine", queries=1, results=5)'
    assert len(qrels) == len(run) == 1 and "q" in run and "x" not in run
    assert qrels.to_dict() == QRELS and run.to_dict() == RUN
    qrels.to_file(tmp_path / "q.txt")
    run.to_file(tmp_path / "r.txt")
    assert irmetrics.Qrels.from_file(tmp_path / "q.txt").to_dict() == QRELS
    back = irmetrics.Run.from_file(tmp_path / "r.txt")
    assert back.to_dict() == RUN and back.runid == "mine"


def test_ids_are_bytes_exact_and_never_altered(tmp_path: Path) -> None:
    # '7' and '07' differ; NFC and NFD spellings differ; non-UTF-8 bytes survive.
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    raw = b"q\xff"
    (tmp_path / "q.txt").write_bytes(
        b"7 0 " + nfc.encode() + b" 1\n07 0 " + nfd.encode() + b" 1\n" + raw + b" 0 d 1\n"
    )
    qrels = irmetrics.Qrels.from_file(tmp_path / "q.txt")
    d = qrels.to_dict()
    bad = raw.decode("utf-8", "surrogateescape")
    assert d == {"07": {nfd: 1}, "7": {nfc: 1}, bad: {"d": 1}}
    assert irmetrics.Qrels.from_dict(d).to_dict() == d


def test_fork_child_evaluates() -> None:
    if not hasattr(os, "fork"):
        pytest.skip("platform: no os.fork")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: the parent's thread pool is gone; must still work
        try:
            res = irmetrics.evaluate(QRELS, RUN, "map")
            os.write(w, json.dumps(res).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    got = json.loads(os.read(r, 1000))
    assert got["map"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)


# ---------------------------------------------------------------- routes vs trec_eval


@pytest.fixture(scope="module")
def case(v10_trec_like: dict) -> dict:
    return v10_trec_like


MEASURES = ["map", "P.10", "recall.100", "ndcg_cut.10", "ndcg", "bpref", "recip_rank"]


CANONICAL = ["map", "P_10", "recall_100", "ndcg_cut_10", "ndcg", "bpref", "recip_rank"]


def check_against_trec_eval(res: dict, expected: dict) -> None:
    """Every requested measure, for exactly the queries trec_eval printed."""
    assert set(res) == set(CANONICAL), sorted(res)
    compared = 0
    for name, per_q in res.items():
        queries = set(expected[name]) - {"all"}
        assert set(per_q) == queries, (name, sorted(set(per_q) ^ queries))
        for qid in queries:
            assert per_q[qid] == pytest.approx(expected[name][qid], abs=1e-12), (name, qid)
            compared += 1
    assert compared == len(CANONICAL) * 50  # v10_trec_like: 50 queries


ROUTES = [
    "file",
    "dict",
    "columns",
    "object_arrays",
    "dataframe",
    "stream",
    "string",
    "dict_streamed",
    "dataframe_streamed",
    "dataframe_ungrouped",
    "read_csv",
]


@pytest.mark.parametrize("route", ROUTES)
def test_every_input_route_gives_trec_eval_values(case: dict, route: str) -> None:
    qrels = irmetrics.Qrels.from_file(case["qrels"])
    ev = irmetrics.Evaluator(qrels, MEASURES)
    loaded = irmetrics.Run.from_file(case["run"])
    rows = [(q, d, s) for q, docs in loaded.to_dict().items() for d, s in docs.items()]
    df = pd.DataFrame(rows, columns=["q_id", "doc_id", "score"])
    if route == "stream":
        res = ev.evaluate_file(case["run"], per_query=True, keys="canonical")
    elif route == "dict_streamed":  # converted and evaluated batch by batch
        res = ev.evaluate(loaded.to_dict(), per_query=True, keys="canonical")
    elif route == "dataframe_streamed":
        res = ev.evaluate(df, per_query=True, keys="canonical")
    elif route == "read_csv":  # TREC files as pandas reads them: int64 query ids
        names = ["q_id", "iter", "doc_id", "rank", "score", "tag"]
        rframe = pd.read_csv(case["run"], sep=r"\s+", header=None, names=names)
        qframe = pd.read_csv(
            case["qrels"], sep=r"\s+", header=None, names=["q_id", "iter", "doc_id", "rel"]
        )
        assert rframe.q_id.dtype == qframe.q_id.dtype == np.int64
        qrels_ints = irmetrics.Qrels.from_dataframe(qframe)
        ev = irmetrics.Evaluator(qrels_ints, MEASURES)
        res = ev.evaluate(rframe, per_query=True, keys="canonical")
    elif route == "dataframe_ungrouped":  # rows of a query apart: built whole first
        shuffled = df.sample(frac=1.0, random_state=7)
        assert shuffled.q_id.tolist() != sorted(shuffled.q_id.tolist())
        res = ev.evaluate(shuffled, per_query=True, keys="canonical")
    else:
        if route == "file":
            run = loaded
        elif route == "dict":
            run = irmetrics.Run.from_dict(loaded.to_dict())
        elif route == "string":
            run = irmetrics.Run.from_string(Path(case["run"]).read_bytes())
        elif route == "columns":
            run = irmetrics.Run.from_columns(
                df.q_id.tolist(), df.doc_id.tolist(), df.score.to_numpy()
            )
        elif route == "object_arrays":
            run = irmetrics.Run.from_columns(
                np.array(df.q_id.tolist(), dtype=object),
                np.array(df.doc_id.tolist(), dtype=object),
                df.score.tolist(),
            )
        else:
            run = irmetrics.Run.from_dataframe(df)
        res = ev.evaluate(run, per_query=True, keys="canonical")
    check_against_trec_eval(res, case["expected"])


def test_integer_id_columns_are_their_decimal_text() -> None:
    """Integer ids (numpy of any width, pandas int64, unsigned) stand for their decimal
    text, as a TREC file holds them: a worked example (P@1 = 1, AP = (1 + 2/3) / 2) and
    trec_eval's tie-break (doc id descending, as text: "9" before "10")."""
    qrels = irmetrics.Qrels.from_columns(
        np.array([7, 7, 7], dtype=np.int32), np.array([10, 20, 9], dtype=np.uint16), [1, 0, 1]
    )
    run = irmetrics.Run.from_columns(
        pd.Series([7, 7, 7, 7]), np.array([10, 20, 30, 9], dtype=np.uint64), [4.0, 3.0, 3.0, 1.0]
    )
    assert sorted(run.to_dict()["7"]) == ["10", "20", "30", "9"]
    got = irmetrics.evaluate(qrels, run, ["P.1", "map"], per_query=True)
    # ranking: 10 (rel), then the tie 30 > 20 as text, then 9 (rel): AP = (1 + 2/4) / 2
    assert got == {"P.1": {"7": 1.0}, "map": {"7": pytest.approx((1 + 2 / 4) / 2, abs=1e-15)}}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint32])
def test_numeric_score_columns_are_widened_exactly_and_left_as_given(dtype) -> None:
    """A score column of any numeric dtype is read as float64 (numpy's exact widening);
    the caller's array keeps its dtype and values, a float64 one is read in place. A
    worked example: d2 ranks first (P@1 = 0), the relevant d3 second (RR = 1/2)."""
    scores = np.array([1, 3, 2], dtype=dtype)
    before = scores.copy()
    frame = pd.DataFrame({"q_id": ["q"] * 3, "doc_id": ["d1", "d2", "d3"], "score": scores})
    run = irmetrics.Run.from_columns(["q"] * 3, ["d1", "d2", "d3"], scores)
    assert run.to_dict() == {"q": {d: float(v) for d, v in zip(["d1", "d2", "d3"], before)}}
    qrels = {"q": {"d3": 1, "d1": 0}}
    for given in (run, frame):
        got = irmetrics.evaluate(qrels, given, ["P.1", "recip_rank"], per_query=True)
        assert got == {"P.1": {"q": 0.0}, "recip_rank": {"q": 0.5}}
    assert scores.dtype == dtype and np.array_equal(scores, before)
    assert frame["score"].dtype == dtype and np.array_equal(frame["score"].to_numpy(), before)


MISSING_PACKAGE_PROBE = """
import sys
for name in sys.argv[1:]:
    sys.modules[name] = None  # as if not installed
import irmetrics
q, r = {"q1": {"d1": 1}}, {"q1": {"d1": 0.5, "d2": 0.1}}
calls = {
    "dict": lambda: irmetrics.evaluate(q, r, "map"),
    "numpy": lambda: irmetrics.evaluate(q, r, "map", output="numpy"),
    "pandas": lambda: irmetrics.evaluate(q, r, "map", output="pandas"),
    "run columns": lambda: irmetrics.Run.from_columns(["q1"], ["d1"], [1.0]),
    "qrels columns": lambda: irmetrics.Qrels.from_columns(["q1"], ["d1"], [1]),
}
for name, call in calls.items():
    try:
        call()
        print(f"{name}: works")
    except irmetrics.MissingDependencyError as e:
        assert isinstance(e, ImportError)
        print(f"{name}: {e}")
"""


@pytest.mark.parametrize("missing", [["numpy", "pandas"], ["pandas"]])
def test_missing_packages_raise_an_error_naming_what_to_install(missing: list[str]) -> None:
    """Without numpy (a dependency) or pandas (an extra), the routes that need them raise
    irmetrics.MissingDependencyError (an ImportError too), never a panic; the others
    work."""
    out = subprocess.run(
        [sys.executable, "-c", MISSING_PACKAGE_PROBE, *missing],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "Panic" not in out.stderr, out.stderr
    got = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    need_numpy = "needs numpy, which is not installed: pip install numpy"
    if "numpy" in missing:
        assert got["numpy"].startswith("per-query values as arrays " + need_numpy)
        assert got["pandas"] == got["numpy"]  # arrays come first
        assert got["run columns"].startswith("reading columns " + need_numpy)
        assert got["qrels columns"] == got["run columns"]
    else:
        assert got["numpy"] == got["run columns"] == got["qrels columns"] == "works"
        assert got["pandas"] == (
            "output='pandas' needs pandas, which is not installed: pip install 'irmetrics[pandas]'"
        )
    assert got["dict"] == "works"


SUBMODULE_PROBE = """
import sys
import irmetrics
lazy = ("compat", "dense", "online", "plot", "spark")
print(sorted(m for m in sys.modules if m.split(".")[1:2] and m.split(".")[1] in lazy))
print(sorted(m for m in ("matplotlib", "pyspark", "sklearn") if m in sys.modules))
for name in lazy:
    mod = getattr(irmetrics, name)
    assert mod is sys.modules["irmetrics." + name] and name in dir(irmetrics), name
print(irmetrics.online.evaluate.__module__, irmetrics.compat.RelevanceEvaluator.__name__)
from irmetrics import plot
assert plot is irmetrics.plot
try:
    irmetrics.onlin
except AttributeError as e:
    print(e)
"""


def test_submodules_are_attributes_imported_on_first_use() -> None:
    """`import irmetrics; irmetrics.online.evaluate(...)` works as scipy's submodules do,
    without `import irmetrics.online`: the issue's spelling. `import irmetrics` itself
    loads none of the five (nor matplotlib, pyspark, scikit-learn); a misspelt name is
    still an AttributeError naming it."""
    out = subprocess.run(
        [sys.executable, "-c", SUBMODULE_PROBE], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "[]",
        "[]",
        "irmetrics.online RelevanceEvaluator",
        "module 'irmetrics' has no attribute 'onlin'",
    ]


def test_streamed_python_routes_span_many_batches(tmp_path: Path) -> None:
    """Dicts and frames are evaluated in batches of 2**18 results while they are
    converted; 600k results make three batches (buffers reused), which must give the
    numbers of the file route exactly, grouped or not."""
    rng = np.random.default_rng(5)
    nq, depth = 600, 1000
    lines, qlines, run = [], [], {}
    for q in range(nq):
        docs = rng.choice(5000, size=depth, replace=False)
        scores = np.round(rng.normal(size=depth), 2)  # ties
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        lines += [f"q{q} Q0 {d} 0 {s!r} t\n" for d, s in run[f"q{q}"].items()]
        judged = rng.choice(5000, size=40, replace=False)
        qlines += [f"q{q} 0 d{d} {rng.integers(0, 3)}\n" for d in judged]
    (tmp_path / "r").write_text("".join(lines))
    (tmp_path / "q").write_text("".join(qlines))
    ev = irmetrics.Evaluator(irmetrics.Qrels.from_file(tmp_path / "q"), ["all_trec", "ndcg@10"])
    want = ev.evaluate(irmetrics.Run.from_file(tmp_path / "r"), per_query=True)
    assert len(want["map"]) == nq and sum(want["num_rel_ret"].values()) > 1000
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    df = pd.DataFrame(rows, columns=["query_id", "docno", "score"])
    for name, given in [
        ("dict", run),
        ("frame", df),
        ("frame ungrouped", df.sample(frac=1.0, random_state=1)),
    ]:
        got = ev.evaluate(given, per_query=True)
        assert got == want, name
    one = irmetrics.Evaluator(
        ev_qrels := irmetrics.Qrels.from_file(tmp_path / "q"), "map", n_threads=1
    )
    assert one.evaluate(run) == irmetrics.Evaluator(ev_qrels, "map", n_threads=3).evaluate(df)


def test_numpy_and_pandas_outputs(case: dict) -> None:
    ids, cols, values, summary = irmetrics.evaluate(
        case["qrels"], case["run"], MEASURES, output="numpy"
    )
    assert values.dtype == np.float64 and values.shape == (len(ids), len(cols))
    exp = case["expected"]
    assert sorted(cols) == sorted(CANONICAL)
    assert sorted(ids) == sorted(set(exp["map"]) - {"all"}) and len(ids) == 50
    for j, c in enumerate(cols):
        assert summary[j] == pytest.approx(exp[c]["all"], abs=1e-12)
        for i, q in enumerate(ids):
            assert values[i, j] == pytest.approx(exp[c][q], abs=1e-12)
    df = irmetrics.evaluate(case["qrels"], case["run"], MEASURES, output="pandas", stream=True)
    assert list(df.columns) == cols and list(df.index) == ids
    assert df.attrs["all"]["map"] == pytest.approx(exp["map"]["all"], abs=1e-12)


def test_summary_matches_trec_eval_all_row(case: dict) -> None:
    res = irmetrics.evaluate(case["qrels"], case["run"], MEASURES, n_threads=1)
    assert list(res) == MEASURES and len(MEASURES) == len(CANONICAL)
    for key, canon in zip(MEASURES, CANONICAL):
        assert res[key] == pytest.approx(case["expected"][canon]["all"], abs=1e-12)


def test_thread_counts_agree_exactly(case: dict) -> None:
    qrels = irmetrics.Qrels.from_file(case["qrels"])
    run = irmetrics.Run.from_file(case["run"])
    outs = [
        irmetrics.Evaluator(qrels, "all_trec", n_threads=n).evaluate(run, per_query=True)
        for n in (1, 2, 4)
    ]
    assert outs[0] == outs[1] == outs[2]


def test_evaluator_many_runs(case: dict) -> None:
    qrels = irmetrics.Qrels.from_file(case["qrels"])
    ev = irmetrics.Evaluator(qrels, ["map"])
    run = irmetrics.Run.from_file(case["run"])
    first = ev.evaluate(run)
    assert all(ev.evaluate(run) == first for _ in range(20))


def test_a_set_of_measures_gives_one_column_order_in_every_process(tmp_path):
    """A set of measure names (pytrec_eval's habit) iterates in string-hash order, which
    PYTHONHASHSEED changes from process to process; the columns come out sorted by
    name, the same in each (the values are checked against trec_eval elsewhere)."""
    import subprocess
    import sys

    code = (
        "import irmetrics\n"
        "q = {'q1': {'a': 1, 'b': 0}, 'q2': {'c': 2}}\n"
        "r = {'q1': {'a': 1.0, 'b': 0.5}, 'q2': {'c': 0.3, 'd': 0.9}}\n"
        "m = {'map', 'P.5', 'ndcg', 'recip_rank', 'bpref', 'Rprec', 'recall.10'}\n"
        "print(list(irmetrics.evaluate(q, r, m)))\n"
    )
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
        )
        assert out.returncode == 0, out.stderr
        seen.add(out.stdout)
    assert seen == {
        str(sorted(["map", "P.5", "ndcg", "recip_rank", "bpref", "Rprec", "recall.10"])) + "\n"
    }
