"""irmetrics.compat.trectools against trectools itself (and pytrec_eval where trectools'
numbers are not trec_eval's), on TREC DL 2019 judgments and runs, every value computed
by the peer inside the test."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import scipy.stats
import trectools
from trectools import fusion as tt_fusion
from trectools import procedures as tt_procedures

import irmetrics
from irmetrics.compat import trectools as ct

DATA = Path(__file__).parent / "data"
QRELS = str(DATA / "dl19-passage.qrels")
RUNS = [str(DATA / f"dl19-{n}.run") for n in ("bm25", "dense", "synthetic")]


@pytest.fixture(autouse=True)
def _quiet_trectools():
    # trectools' pandas code warns (FutureWarning, SettingWithCopyWarning) on its own
    # frames; those warnings are trectools', not irmetrics'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _untied(path: Path, src: str) -> str:
    """The run with its ties broken in its own order (each line's score lowered by a
    millionth of its line number), so that every convention ranks it alike."""
    lines = Path(src).read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        q, q0, d, r, s, tag = line.split()
        out.append(f"{q} {q0} {d} {r} {float(s) - i * 1e-6:.6f} {tag}")
    path.write_text("\n".join(out) + "\n")
    return str(path)


def _pair(run: str, qrels: str = QRELS) -> tuple[object, object]:
    return (
        trectools.TrecEval(trectools.TrecRun(run), trectools.TrecQrel(qrels)),
        ct.TrecEval(ct.TrecRun(run), ct.TrecQrel(qrels)),
    )


def _same_frame(theirs: pd.DataFrame, ours: pd.DataFrame) -> None:
    """The same per-query values; trectools leaves out some queries whose value is 0
    (no relevant document retrieved), which trec_eval lists."""
    theirs = theirs.set_axis([str(q) for q in theirs.index]).sort_index()
    assert list(ours.index) == sorted(ours.index)
    assert set(theirs.index) <= set(ours.index)
    missing = ours.loc[~ours.index.isin(theirs.index)]
    assert (missing.to_numpy() == 0).all()
    theirs = theirs.reindex(ours.index, fill_value=0.0)
    assert list(ours.columns) == list(theirs.columns)
    np.testing.assert_allclose(ours.to_numpy(float), theirs.to_numpy(float), rtol=1e-12, atol=0)


# (method, arguments): where trectools computes trec_eval's value on any run
AGREE = [
    ("get_map", {}),
    ("get_map", {"depth": 10}),
    ("get_map", {"depth": 100, "trec_eval": False}),
    ("get_precision", {"depth": 5}),
    ("get_precision", {"depth": 10, "removeUnjudged": True}),
    ("get_precision", {"depth": 20, "trec_eval": False}),
    ("get_recall", {"depth": 100}),
    ("get_recall", {"depth": 10, "removeUnjudged": True}),
    ("get_bpref", {}),
    ("get_rprec", {}),
    ("get_reciprocal_rank", {}),
    ("get_reciprocal_rank", {"depth": 3}),
    ("get_unjudged", {"depth": 10}),
    ("get_unjudged", {"depth": 30}),
    ("get_ndcg", {"depth": 10, "trec_eval": False}),
    ("get_ndcg", {"depth": 100, "trec_eval": False, "removeUnjudged": True}),
]


@pytest.mark.parametrize("run", RUNS, ids=lambda p: Path(p).stem)
@pytest.mark.parametrize(("method", "kwargs"), AGREE, ids=lambda x: str(x))
def test_measures_as_trectools(run, method, kwargs):
    theirs, ours = _pair(run)
    expected = getattr(theirs, method)(**kwargs)
    got = getattr(ours, method)(**kwargs)
    assert isinstance(got, float)
    assert got == pytest.approx(float(expected), rel=1e-12, abs=0)
    _same_frame(
        getattr(theirs, method)(per_query=True, **kwargs),
        getattr(ours, method)(per_query=True, **kwargs),
    )


@pytest.mark.parametrize("run", RUNS, ids=lambda p: Path(p).stem)
def test_counts_and_geometric_map_as_trectools(run):
    theirs, ours = _pair(run)
    for method in (
        "get_retrieved_documents",
        "get_relevant_documents",
        "get_relevant_retrieved_documents",
    ):
        assert getattr(ours, method)() == getattr(theirs, method)()
        t, o = getattr(theirs, method)(per_query=True), getattr(ours, method)(per_query=True)
        assert o.name == t.name
        assert o.to_dict() == {str(q): v for q, v in t.to_dict().items()}
    assert ours.get_geometric_map() == pytest.approx(theirs.get_geometric_map(), rel=1e-12)


def test_ndcg_ranks_ties_as_trec_eval(tmp_path):
    """trectools' get_ndcg keeps the stored order (ties by id ascending) even with
    trec_eval=True; ours is trec_eval's ndcg_cut (pytrec_eval), and trectools' own on a
    run without ties."""
    run = RUNS[0]
    theirs, ours = _pair(run)
    qrels = {}
    for line in Path(QRELS).read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    scores = {}
    for line in Path(run).read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        scores.setdefault(q, {})[d] = float(s)
    pte = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,100"}).evaluate(scores)
    for k in (10, 100):
        per_query = ours.get_ndcg(depth=k, per_query=True)[f"NDCG@{k}"]
        expected = {q: v[f"ndcg_cut_{k}"] for q, v in pte.items()}
        assert per_query.to_dict() == pytest.approx(expected, rel=1e-12)
        assert ours.get_ndcg(depth=k) == pytest.approx(np.mean(list(expected.values())), rel=1e-12)
        # the run has ties across which trectools' order differs: not the same numbers
        assert abs(theirs.get_ndcg(depth=k) - ours.get_ndcg(depth=k)) > 1e-5
    theirs, ours = _pair(_untied(tmp_path / "untied.run", run))
    for k in (5, 10, 100, 1000):
        assert ours.get_ndcg(depth=k) == pytest.approx(theirs.get_ndcg(depth=k), rel=1e-12)
        _same_frame(
            theirs.get_ndcg(depth=k, per_query=True), ours.get_ndcg(depth=k, per_query=True)
        )


def test_unjudged_query_left_out_as_trec_eval(tmp_path):
    """A query of the run that nobody judged: trec_eval (pytrec_eval) leaves it out;
    trectools divides its sums by the run's query count."""
    run = tmp_path / "extra.run"
    run.write_text(Path(RUNS[0]).read_text() + "999999 Q0 d1 1 9.0 bm25\n999999 Q0 d2 2 8.0 bm25\n")
    theirs, ours = _pair(str(run))
    qrels = {}
    for line in Path(QRELS).read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    scores = {}
    for line in run.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        scores.setdefault(q, {})[d] = float(s)
    pte = pytrec_eval.RelevanceEvaluator(qrels, {"P.10", "map_cut.1000"}).evaluate(scores)
    assert "999999" not in pte
    for method, measure in (("get_precision", "P_10"), ("get_map", "map_cut_1000")):
        kwargs = {"depth": 10} if method == "get_precision" else {}
        expected = np.mean([v[measure] for v in pte.values()])
        assert getattr(ours, method)(**kwargs) == pytest.approx(expected, rel=1e-12)
        assert "999999" not in getattr(ours, method)(per_query=True, **kwargs).index
        assert getattr(theirs, method)(**kwargs) == pytest.approx(expected * 43 / 44, rel=1e-12)


def test_rprec_and_bpref_as_trec_eval(tmp_path):
    """Two cases where trectools (0.0.50 under pandas 3) is not trec_eval: its Rprec
    matches a document relevant to another query (query 2's d2 at the top of query 1;
    it gives NaN and 2.0) and its bpref is 0 for a query without judged non-relevant
    documents (every MS MARCO query). pytrec_eval's values here."""
    qrels = {"1": {"d1": 1, "d9": 0}, "2": {"d2": 1, "d8": 0}, "3": {"d3": 1}}
    run = {"1": {"d2": 2.0, "d1": 1.0}, "2": {"d2": 2.0, "d8": 1.0}, "3": {"d3": 1.0}}
    q_path, r_path = tmp_path / "q.qrels", tmp_path / "r.run"
    q_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, j in qrels.items() for d, r in j.items()))
    r_path.write_text(
        "".join(f"{q} Q0 {d} 1 {s} x\n" for q, docs in run.items() for d, s in docs.items())
    )
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"Rprec", "bpref"}).evaluate(run)
    ours = ct.TrecEval(ct.TrecRun(str(r_path)), ct.TrecQrel(str(q_path)))
    for method, measure, label in (
        ("get_rprec", "Rprec", "RPrec@1000"),
        ("get_bpref", "bpref", "Bpref@1000"),
    ):
        per_query = getattr(ours, method)(per_query=True)[label].to_dict()
        assert per_query == pytest.approx({q: v[measure] for q, v in expected.items()})
        mean = np.mean([v[measure] for v in expected.values()])
        assert getattr(ours, method)() == pytest.approx(mean)


@pytest.mark.parametrize("run", RUNS, ids=lambda p: Path(p).stem)
def test_evaluate_all_as_trectools(tmp_path, run):
    untied = _untied(tmp_path / "untied.run", run)
    theirs, ours = _pair(untied)
    for per_query in (False, True):
        t = theirs.evaluate_all(per_query=per_query).data
        o = ours.evaluate_all(per_query=per_query).data
        assert list(o.columns) == list(t.columns) == ["metric", "query", "value"]
        assert o[["metric", "query"]].astype(str).values.tolist() == (
            t[["metric", "query"]].astype(str).values.tolist()
        )
        numeric = (t["metric"] != "runid").to_numpy()
        t_values = t["value"][numeric].to_numpy(float)
        o_values = o["value"][numeric].to_numpy(float)
        # trectools' nDCG of a query without a relevant document in the top k is NaN
        # where trec_eval's is 0
        nan = np.isnan(t_values)
        assert set(t["metric"][numeric][nan]) <= {f"NDCG_{k}" for k in (5, 10, 15, 20, 30)}
        assert (o_values[nan] == 0).all()
        np.testing.assert_allclose(o_values[~nan], t_values[~nan], rtol=1e-12)
        assert o["value"][~numeric].tolist() == t["value"][~numeric].tolist()
    # the same through trectools' procedures, and the TrecRes methods
    [t_res] = tt_procedures.evaluate_runs([trectools.TrecRun(untied)], theirs.qrels, True)
    [o_res] = ct.procedures.evaluate_runs([ct.TrecRun(untied)], ours.qrels, True)
    for metric in ("P_10", "map", "NDCG_10", "num_rel_ret"):
        expected = {str(q): v for q, v in t_res.get_results_for_metric(metric).items()}
        assert o_res.get_results_for_metric(metric) == pytest.approx(expected, rel=1e-12)
        assert o_res.get_result(metric) == pytest.approx(t_res.get_result(metric), rel=1e-12)
    assert o_res.get_result("P_10", "no such query") is None
    for metric in ("P_10", "map"):
        [(t_name, t_mean, t_ci)] = tt_procedures.extract_metric_from_results([t_res], metric)
        [(o_name, o_mean, o_ci)] = ct.procedures.extract_metric_from_results([o_res], metric)
        assert o_name == t_name
        assert o_mean == pytest.approx(t_mean, rel=1e-12)
        assert o_ci == pytest.approx(t_ci, rel=1e-9)


def test_trec_res_compare_and_files(tmp_path):
    a = ct.TrecRun(RUNS[0]).evaluate_run(ct.TrecQrel(QRELS), per_query=True)
    b = ct.TrecRun(RUNS[1]).evaluate_run(ct.TrecQrel(QRELS), per_query=True)
    x, y = a.get_results_for_metric("map"), b.get_results_for_metric("map")
    expected = scipy.stats.ttest_rel([x[q] for q in x], [y[q] for q in x])
    got = a.compare_with(b, metric="map")
    assert got.statistic == pytest.approx(expected.statistic, rel=1e-9)
    assert got.pvalue == pytest.approx(expected.pvalue, rel=1e-9)
    out = tmp_path / "res.csv"
    a.printresults(out)
    table = pd.read_csv(out, index_col=0, dtype={"query": str})
    expected_table = a.data.pivot(index="query", columns="metric", values="value")
    assert table.shape == expected_table.shape
    assert table.loc["1037798", "P_10"] == pytest.approx(a.get_result("P_10", "1037798"))
    # trec_eval's output (-q) read back as trectools reads it
    path = tmp_path / "trec_eval.txt"
    evaluator = irmetrics.Evaluator(QRELS, ["P.10", "map"])
    path.write_text(evaluator.trec_text(irmetrics.Run.from_file(RUNS[0]), per_query=True))
    t_res, o_res = trectools.TrecRes(str(path)), ct.TrecRes(str(path))
    for metric in ("P_10", "map"):
        assert o_res.get_results_for_metric(metric) == pytest.approx(
            {str(q): v for q, v in t_res.get_results_for_metric(metric).items()}, rel=1e-12
        )
        assert o_res.get_result(metric) == t_res.get_result(metric)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"average_ties": False},
        {"p": 0.95, "depth": 100},
        {"p": 0.5, "depth": 5},
        {"depth": 100, "binary_topical_relevance": False},
        {"depth": 100, "removeUnjudged": True},
    ],
    ids=str,
)
def test_rbp_as_trectools(kwargs):
    """RBP and its residual with trectools' tie averaging; the residual where trectools'
    p^depth is the weight past the ranking (depth = the 100 documents a query has) and
    where trectools' is right (not for graded labels: its residual subtracts the graded
    sum from a binary one; it goes negative)."""
    theirs, ours = _pair(RUNS[2])
    (t_rbp, t_res), (o_rbp, o_res) = theirs.get_rbp(**kwargs), ours.get_rbp(**kwargs)
    assert o_rbp == pytest.approx(float(t_rbp), rel=1e-12)
    (t_pq, t_rq), (o_pq, o_rq) = (
        theirs.get_rbp(per_query=True, **kwargs),
        ours.get_rbp(per_query=True, **kwargs),
    )
    _same_frame(t_pq, o_pq)
    if kwargs.get("removeUnjudged"):
        # no unjudged document is left: the residual is p^n past a ranking of n judged
        # documents (trectools adds p^depth, the weight past rank 100)
        judged = theirs.qrels.qrels_data[["query", "docid"]]
        kept = theirs.run.run_data.merge(judged, on=["query", "docid"])
        n = kept.groupby("query").size().clip(upper=100)
        expected = (0.8**n).rename(o_rq.columns[0]).to_frame()
        _same_frame(expected, o_rq)
    elif kwargs.get("depth") == 100 and "binary_topical_relevance" not in kwargs:
        assert o_res == pytest.approx(float(t_res), rel=1e-12)
        _same_frame(t_rq, o_rq)
    if kwargs.get("binary_topical_relevance") is False:
        assert float(t_res) < 0 < o_res


def test_rbp_ties_stay_within_a_query(tmp_path):
    """Tied scores share their weights within a query: query 1's relevant document at
    rank 2 weighs (1 - p) p = 0.16 and query 2's at rank 1 weighs 1 - p = 0.2 (p =
    0.8). trectools groups equal neighbouring scores across the frame, so the last
    document of query 1 and the first of query 2 (both scored 1.0) share 0.18."""
    run, qrels = tmp_path / "r.run", tmp_path / "q.qrels"
    run.write_text("1 Q0 a1 1 2.0 x\n1 Q0 a2 2 1.0 x\n2 Q0 b1 1 1.0 x\n")
    qrels.write_text("1 0 a1 0\n1 0 a2 1\n2 0 b1 1\n")
    theirs, ours = _pair(str(run), str(qrels))
    values, _ = ours.get_rbp(per_query=True)
    assert values["RBP(0.80)@1000"].to_dict() == pytest.approx({"1": 0.16, "2": 0.2}, rel=1e-15)
    t_values, _ = theirs.get_rbp(per_query=True)
    assert t_values["RBP(0.80)@1000"].tolist() == pytest.approx([0.18, 0.18], rel=1e-15)


@pytest.mark.parametrize("strategy", ["sum", "max", "min", "anz", "mnz", "med"])
def test_combos_as_trectools(strategy):
    t_runs = [trectools.TrecRun(r) for r in RUNS[1:]]
    o_runs = [ct.TrecRun(r) for r in RUNS[1:]]
    t = tt_fusion.combos(t_runs, strategy=strategy, max_docs=50).run_data
    o = ct.fusion.combos(o_runs, strategy=strategy, max_docs=50).run_data
    _same_run_data(t, o)
    # max_docs per query
    limits = {q: 5 + 7 * (i % 3) for i, q in enumerate(t_runs[0].topics())}
    t = tt_fusion.combos(t_runs, strategy=strategy, max_docs=limits).run_data
    o = ct.fusion.combos(o_runs, strategy=strategy, max_docs=limits).run_data
    _same_run_data(t, o)
    assert o.groupby("query").size().to_dict() == limits


def _same_run_data(t: pd.DataFrame, o: pd.DataFrame) -> None:
    assert list(o.columns) == list(t.columns)
    for col in ("query", "q0", "docid", "rank", "system"):
        assert o[col].astype(str).tolist() == t[col].astype(str).tolist(), col
    np.testing.assert_allclose(o["score"].to_numpy(), t["score"].to_numpy(), rtol=1e-12)


def test_combos_of_three_runs_and_fewer_than_two():
    """trectools' merge cannot take a third run (pandas refuses its suffixes); ours
    fuses any number: the sum of three runs is the sum of their scores (ranx's sum)."""
    from ranx import Run as RanxRun
    from ranx import fuse as ranx_fuse

    with pytest.raises(Exception, match="suffixes"):
        tt_fusion.combos([trectools.TrecRun(r) for r in RUNS], strategy="sum")
    fused = ct.fusion.combos([ct.TrecRun(r) for r in RUNS], strategy="sum").run_data
    ranx_runs = [RanxRun.from_file(r, kind="trec") for r in RUNS]
    expected = ranx_fuse(ranx_runs, method="sum", norm=None).to_dict()
    got = {}
    for q, d, s in zip(fused["query"], fused["docid"], fused["score"]):
        got.setdefault(q, {})[d] = s
    assert got.keys() == expected.keys()
    for q in expected:
        assert got[q] == pytest.approx(expected[q], rel=1e-12)
    assert ct.fusion.combos([ct.TrecRun(RUNS[0])]) is None
    assert tt_fusion.combos([trectools.TrecRun(RUNS[0])]) is None
    runs = [ct.TrecRun(r) for r in RUNS[:2]]
    for bad in (0, -1, "10", 2.5):
        with pytest.raises(irmetrics.InputError, match="max_docs must be a whole number"):
            ct.fusion.combos(runs, max_docs=bad)
    with pytest.raises(irmetrics.InputError, match="max_docs has no value for query '1037798'"):
        ct.fusion.reciprocal_rank_fusion(runs, max_docs={"104861": 5})
    with pytest.raises(irmetrics.InputError, match="Unknown strategy"):
        ct.fusion.combos([ct.TrecRun(r) for r in RUNS], strategy="wsum")


@pytest.mark.parametrize("max_docs", [1000, 10])
def test_rank_fusion_as_trectools(max_docs):
    t_runs = [trectools.TrecRun(r) for r in RUNS]
    o_runs = [ct.TrecRun(r) for r in RUNS]
    for t_fn, o_fn, kwargs in (
        (tt_fusion.reciprocal_rank_fusion, ct.fusion.reciprocal_rank_fusion, {"k": 60}),
        (tt_fusion.reciprocal_rank_fusion, ct.fusion.reciprocal_rank_fusion, {"k": 10}),
        (tt_fusion.rank_biased_precision_fusion, ct.fusion.rank_biased_precision_fusion, {}),
        (
            tt_fusion.rank_biased_precision_fusion,
            ct.fusion.rank_biased_precision_fusion,
            {"p": 0.95},
        ),
    ):
        t = t_fn(t_runs, max_docs=max_docs, **kwargs).run_data
        o = o_fn(o_runs, max_docs=max_docs, **kwargs).run_data
        _same_run_data(t, o)
    # a fused run is a TrecRun: evaluated as trectools evaluates it
    fused_t = tt_fusion.reciprocal_rank_fusion(t_runs, max_docs=max_docs)
    fused_o = ct.fusion.reciprocal_rank_fusion(o_runs, max_docs=max_docs)
    theirs = trectools.TrecEval(fused_t, trectools.TrecQrel(QRELS))
    ours = ct.TrecEval(fused_o, ct.TrecQrel(QRELS))
    assert ours.get_map() == pytest.approx(theirs.get_map(), rel=1e-12)


def test_data_objects_as_trectools():
    for path in RUNS:
        t, o = trectools.TrecRun(path), ct.TrecRun(path)
        assert o.get_runid() == t.get_runid()
        assert o.topics() == t.topics()
        assert o.get_top_documents(o.topics()[5], n=7) == t.get_top_documents(t.topics()[5], n=7)
        assert o.get_filename() == t.get_filename()
        assert str(o) == str(t)
        # the frame, made on first use, is trectools' frame
        _same_run_data(t.run_data, o.run_data)
        assert list(o.run_data.index) == list(t.run_data.index)
        o.rename_runid("renamed")
        t.rename_runid("renamed")
        assert o.get_runid() == t.get_runid() == "renamed"
    t, o = trectools.TrecQrel(QRELS), ct.TrecQrel(QRELS)
    assert o.topics() == t.topics()
    assert o.get_number_of(2) == t.get_number_of(2)
    assert o.get_number_of(3, topics=["1037798", "104861"]) == t.get_number_of(
        3, topics=["1037798", "104861"]
    )
    assert o.get_judgement("1085628", "1037798") == t.get_judgement("1085628", "1037798")
    assert o.get_judgement("nope", "1037798") == t.get_judgement("nope", "1037798") == -1
    assert o.get_document_names_for_topic("104861") == t.get_document_names_for_topic("104861")
    assert o.qrels_data.astype(str).values.tolist() == t.qrels_data.astype(str).values.tolist()


def test_frames_edited_and_loaded_are_what_is_evaluated():
    """Once made, the frame is the data (trectools' users edit it); a data frame
    loaded with load_run_from_dataframe keeps its row order for trec_eval=False."""
    t_run, o_run = trectools.TrecRun(RUNS[0]), ct.TrecRun(RUNS[0])
    for run in (t_run, o_run):
        run.run_data = run.run_data[run.run_data["rank"] <= 20]
    t_qrels, o_qrels = trectools.TrecQrel(QRELS), ct.TrecQrel(QRELS)
    for qrels in (t_qrels, o_qrels):
        qrels.qrels_data = qrels.qrels_data[qrels.qrels_data["query"] != "1037798"]
    theirs, ours = trectools.TrecEval(t_run, t_qrels), ct.TrecEval(o_run, o_qrels)
    assert ours.get_precision(depth=30) == pytest.approx(
        theirs.get_precision(depth=30) * 43 / 42, rel=1e-12
    )  # trectools divides by the run's 43 queries, one of them no longer judged
    _same_frame(theirs.get_map(per_query=True).dropna(), ours.get_map(per_query=True))
    frame = trectools.TrecRun(RUNS[1]).run_data.sample(frac=1.0, random_state=7)
    frame = frame.sort_values("query", kind="stable")  # queries together, rows shuffled
    t_run, o_run = trectools.TrecRun(), ct.TrecRun()
    t_run.load_run_from_dataframe(frame)
    o_run.load_run_from_dataframe(frame)
    theirs = trectools.TrecEval(t_run, trectools.TrecQrel(QRELS))
    ours = ct.TrecEval(o_run, ct.TrecQrel(QRELS))
    assert ours.get_map(trec_eval=False) == pytest.approx(
        theirs.get_map(trec_eval=False), rel=1e-12
    )
    assert ours.get_map() == pytest.approx(theirs.get_map(), rel=1e-12)
    assert ours.get_map() != pytest.approx(ours.get_map(trec_eval=False))


def test_gzipped_files_as_trectools(tmp_path):
    import gzip

    run, qrels = tmp_path / "run.gz", tmp_path / "qrels.gz"
    run.write_bytes(gzip.compress(Path(RUNS[0]).read_bytes()))
    qrels.write_bytes(gzip.compress(Path(QRELS).read_bytes()))
    theirs = trectools.TrecEval(trectools.TrecRun(str(run)), trectools.TrecQrel(str(qrels)))
    ours = ct.TrecEval(ct.TrecRun(str(run)), ct.TrecQrel(str(qrels)))
    assert ours.run.get_runid() == theirs.run.get_runid() == "bm25"
    assert ours.get_map() == pytest.approx(theirs.get_map(), rel=1e-12)
    _same_run_data(theirs.run.run_data, ours.run.run_data)


def test_files_are_evaluated_without_making_frames():
    """Evaluating reads the parsed files; the pandas frames are made only when asked
    for (trectools' pandas reading is what a large run pays for)."""
    run, qrels = ct.TrecRun(RUNS[0]), ct.TrecQrel(QRELS)
    te = ct.TrecEval(run, qrels)
    expected = trectools.TrecEval(trectools.TrecRun(RUNS[0]), trectools.TrecQrel(QRELS))
    assert te.get_map() == pytest.approx(expected.get_map(), rel=1e-12)
    te.evaluate_all(per_query=True)
    assert run.topics() == expected.run.topics()
    assert run._frame is None and qrels._frame is None
    run.run_data  # noqa: B018  (made on first use)
    assert run._frame is not None


def test_list_of_runs_from_path(tmp_path, capsys):
    for path in RUNS:
        (tmp_path / Path(path).name).write_bytes(Path(path).read_bytes())
    (tmp_path / "notes.txt").write_text("not a run\n")
    theirs = tt_procedures.list_of_runs_from_path(str(tmp_path), "*.run")
    ours = ct.procedures.list_of_runs_from_path(str(tmp_path), "*.run")
    assert sorted(r.get_filename() for r in theirs) == [r.get_filename() for r in ours]
    assert {r.get_runid() for r in theirs} == {r.get_runid() for r in ours}


def test_objects_cross_over():
    """irmetrics' functions take these objects; TrecEval takes trectools' own."""
    expected = trectools.TrecEval(trectools.TrecRun(RUNS[1]), trectools.TrecQrel(QRELS)).get_map()
    got = irmetrics.evaluate(ct.TrecQrel(QRELS), ct.TrecRun(RUNS[1]), ["map"])["map"]
    assert got == pytest.approx(expected, rel=1e-12)
    mixed = ct.TrecEval(trectools.TrecRun(RUNS[1]), ct.TrecQrel(QRELS))
    assert mixed.get_map() == pytest.approx(expected, rel=1e-12)


def test_bad_input(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 2.0 x\n1 Q0 b 2 oops x\n")
    with pytest.raises(irmetrics.FormatError, match=r"bad\.run:2: score 'oops'"):
        ct.TrecRun(str(bad))
    dup = tmp_path / "dup.run"
    dup.write_text("1 Q0 a 1 2.0 x\n1 Q0 a 2 1.0 x\n")
    with pytest.raises(irmetrics.FormatError, match=r"dup\.run:2"):
        ct.TrecRun(str(dup))
    with pytest.raises(TypeError, match="TrecRun"):
        ct.TrecEval("run.txt", ct.TrecQrel(QRELS))
    with pytest.raises(irmetrics.InputError, match="Duplicated docid"):
        ct.TrecRun().load_run_from_dataframe(
            pd.DataFrame(
                {
                    "query": ["1", "1"],
                    "q0": "Q0",
                    "docid": ["a", "a"],
                    "rank": [1, 2],
                    "score": [2.0, 1.0],
                    "system": "x",
                }
            )
        )
    with pytest.raises(irmetrics.InputError, match="Required column"):
        ct.TrecRun().load_run_from_dataframe(pd.DataFrame({"query": ["1"]}))
    te = ct.TrecEval(ct.TrecRun(RUNS[0]), ct.TrecQrel(QRELS))
    for p in (1.0, 0.0, "0.5", None):
        with pytest.raises(irmetrics.InputError, match="p must be a number in"):
            te.get_rbp(p=p)
    for depth in (0, -3, 2.5):
        with pytest.raises(irmetrics.InputError, match="depth must be a whole number"):
            te.get_rbp(depth=depth)
    with pytest.raises(irmetrics.MeasureError, match="'0' is not a positive whole number"):
        te.get_precision(depth=0)
    with pytest.raises(irmetrics.InputError, match="no data"):
        irmetrics.evaluate(QRELS, ct.TrecRun(), ["map"])
