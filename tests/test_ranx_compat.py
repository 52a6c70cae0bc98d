"""irmetrics.compat.ranx against ranx itself, run here on TREC DL 2019's judgments
and two runs (BM25 and a dense retriever) whose score ties are broken in trec_eval's
order (ranx's order of tied documents hangs on Python's string hashes): evaluate in
each of its return shapes, the scores it leaves in the run, make_comparable, compare's
p-values (Student's t, Tukey's HSD) and significance, fusion, and the constructors and
writers, values to 1e-12."""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# the peer is a test extra: missing, the module fails (never a silent skip)
import ranx

import irmetrics
from irmetrics.compat import ranx as rx

# ranx's numba kernels warn about their own casts
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")

DATA = Path(__file__).resolve().parent / "data"
METRICS = ["ndcg@10", "map@100", "mrr", "recall@100", "precision@5", "hits@10", "r-precision"]


def untied(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The run with trec_eval's order written into distinct scores."""
    out = {}
    for q, docs in run.items():
        order = sorted(docs, key=lambda d: (-docs[d], tuple(-ord(c) for c in d)))
        out[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


@pytest.fixture(scope="module")
def data():
    qrels = irmetrics.Qrels.from_file(DATA / "dl19-passage.qrels").to_dict()
    bm25 = untied(irmetrics.Run.from_file(DATA / "dl19-bm25.run").to_dict())
    dense = untied(irmetrics.Run.from_file(DATA / "dl19-dense.run").to_dict())
    return qrels, bm25, dense


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def test_evaluate_is_ranxs_in_every_shape(data):
    qrels, bm25, _ = data
    theirs_run = ranx.Run(bm25, name="bm25")
    ours_run = rx.Run(bm25, name="bm25")
    Q, q = ranx.Qrels(qrels), rx.Qrels(qrels)
    # one metric: a float
    a, b = ranx.evaluate(Q, theirs_run, "ndcg@10"), rx.evaluate(q, ours_run, "ndcg@10")
    assert isinstance(b, float) and close(b, float(a))
    # several: a dict
    a, b = ranx.evaluate(Q, theirs_run, METRICS), rx.evaluate(q, ours_run, METRICS)
    assert list(b) == METRICS
    assert all(close(b[m], float(a[m])) for m in METRICS), (a, b)
    # what evaluate leaves in the run
    assert ours_run.mean_scores.keys() == theirs_run.mean_scores.keys()
    for m in METRICS:
        assert close(ours_run.mean_scores[m], float(theirs_run.mean_scores[m]))
        assert ours_run.scores[m].keys() == theirs_run.scores[m].keys()
        assert all(close(v, float(theirs_run.scores[m][k])) for k, v in ours_run.scores[m].items())
    # per query: numpy arrays in ranx's query order
    a = ranx.evaluate(Q, ranx.Run(bm25), METRICS, return_mean=False)
    b = rx.evaluate(q, rx.Run(bm25), METRICS, return_mean=False)
    for m in METRICS:
        assert isinstance(b[m], np.ndarray) and b[m].shape == a[m].shape
        assert np.allclose(b[m], a[m], rtol=1e-12, atol=0)
    # with the (population) standard deviation
    a = ranx.evaluate(Q, ranx.Run(bm25), ["ndcg@10", "map"], return_std=True)
    b = rx.evaluate(q, rx.Run(bm25), ["ndcg@10", "map"], return_std=True)
    for m in ("ndcg@10", "map"):
        assert close(b[m]["mean"], float(a[m]["mean"])) and close(b[m]["std"], float(a[m]["std"]))
    # plain dicts, as ranx takes them
    assert close(rx.evaluate(qrels, bm25, "map"), float(ranx.evaluate(qrels, bm25, "map")))


# a metric's own relevance level: labels below it are not relevant, and for the graded
# metrics gain 0 (ranx drops those judgments; trec_eval's global -l leaves nDCG alone)
LEVELED = [
    "ndcg@10-l2",
    "ndcg-l2",
    "dcg@10-l2",
    "ndcg_burges@10-l2",
    "dcg_burges@10-l3",
    "map@100-l2",
    "precision@5-l2",
    "mrr-l3",
    "recall@100-l2",
]


def test_relevance_levels_are_ranxs(data):
    qrels, bm25, _ = data
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(bm25), LEVELED)
    ours = rx.evaluate(rx.Qrels(qrels), rx.Run(bm25), LEVELED)
    direct = irmetrics.evaluate(qrels, bm25, LEVELED, names="ranx")
    for m in LEVELED:
        assert close(ours[m], float(theirs[m])), (m, ours[m], theirs[m])
        assert close(direct[m], float(theirs[m])), m
    # the global level stays trec_eval's: nDCG unchanged by it
    plain = irmetrics.evaluate(qrels, bm25, ["ndcg_cut.10"])["ndcg_cut.10"]
    assert (
        irmetrics.evaluate(qrels, bm25, ["ndcg_cut.10"], relevance_level=2)["ndcg_cut.10"] == plain
    )
    assert not close(direct["ndcg@10-l2"], plain)


# ranx's k = 0: the whole ranking (what the bare name means in ranx)
WHOLE = ["ndcg@0", "map@0", "mrr@0", "recall@0", "precision@0", "hits@0", "f1@0"]
WHOLE += ["hit_rate@0", "ndcg_burges@0", "dcg@0", "map@0-l2"]


def test_a_cutoff_of_zero_is_ranxs_whole_ranking(data):
    qrels, bm25, _ = data
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(bm25), WHOLE)
    ours = rx.evaluate(rx.Qrels(qrels), rx.Run(bm25), WHOLE)
    direct = irmetrics.evaluate(qrels, bm25, WHOLE, names="ranx")
    assert list(ours) == WHOLE and list(direct) == WHOLE
    for m in WHOLE:
        assert close(ours[m], float(theirs[m])), (m, ours[m], theirs[m])
        assert close(direct[m], float(theirs[m])), m
    # trec_eval's and ir_measures' readings refuse it, naming the cut-off
    with pytest.raises(irmetrics.MeasureError, match="'0' is not a positive whole number"):
        irmetrics.evaluate(qrels, bm25, ["ndcg@0"])


SHIFTED = ["ndcg@10", "ndcg_burges@10", "dcg@10", "map", "mrr", "precision@10", "recall@100"]
SHIFTED += ["r-precision", "hit_rate@5", "f1@10", "bpref"]


@pytest.mark.parametrize("level", [2, 3, 4])  # DL19's labels: 0 to 3
def test_set_relevance_level_is_ranxs(data, level):
    # ranx lowers every label by level - 1: negative labels are judged, not relevant
    qrels, bm25, _ = data
    theirs, ours = ranx.Qrels(qrels), rx.Qrels(qrels)
    theirs.set_relevance_level(level)
    ours.set_relevance_level(level)
    assert ours.to_dict() == {q: dict(d) for q, d in theirs.to_dict().items()}
    # ranx's bpref of a query without relevant documents raises inside numba's prange,
    # which leaves the rest of that thread's queries at 0 (0.0397 at level 3 with 2
    # threads, 0.0116 with 1, against 0.1635): bpref is compared on the queries with
    # one; the other measures everywhere
    a = ranx.evaluate(theirs, ranx.Run(bm25), SHIFTED[:-1], return_mean=False)
    b = rx.evaluate(ours, rx.Run(bm25), SHIFTED[:-1], return_mean=False)
    for m in SHIFTED[:-1]:
        np.testing.assert_allclose(b[m], a[m], rtol=1e-12, atol=1e-15, err_msg=m)
    some = {q: d for q, d in qrels.items() if max(d.values()) >= level}
    if level > 3:
        assert not some and not any(b["recall@100"])  # nothing relevant left
        return
    theirs, ours = ranx.Qrels(some), rx.Qrels(some)
    theirs.set_relevance_level(level)
    ours.set_relevance_level(level)
    run = {q: bm25[q] for q in some}
    a = ranx.evaluate(theirs, ranx.Run(run), "bpref", return_mean=False)
    b = rx.evaluate(ours, rx.Run(run), "bpref", return_mean=False)
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)
    # irmetrics' own reading of the same labels stays trec_eval's (a negative label
    # pooled but not judged): bpref counts fewer non-relevant documents
    direct = irmetrics.evaluate(ours.to_dict(), run, ["bpref"], names="ranx")["bpref"]
    assert not close(direct, float(b.mean()))


def test_negative_labels_are_judged_as_in_ranx(data):
    qrels, bm25, _ = data
    # the non-relevant judgments written -1, and a query judged only so
    neg = {
        q: {d: (label if label > 0 else -1) for d, label in docs.items()}
        for q, docs in qrels.items()
    }
    q0 = next(iter(neg))
    neg[q0] = dict.fromkeys(neg[q0], -1)
    metrics = ["ndcg@10", "map", "mrr", "precision@10", "recall@100", "r-precision"]
    a = ranx.evaluate(ranx.Qrels(neg), ranx.Run(bm25), metrics, return_mean=False)
    for qrels_in in (rx.Qrels(neg), neg):  # a ranx-like Qrels or a plain dict
        b = rx.evaluate(qrels_in, rx.Run(bm25), metrics, return_mean=False)
        for m in metrics:
            np.testing.assert_allclose(b[m], a[m], rtol=1e-12, atol=1e-15, err_msg=m)
    # without that query bpref too
    del neg[q0]
    run = {q: bm25[q] for q in neg}
    a = ranx.evaluate(ranx.Qrels(neg), ranx.Run(run), "bpref")
    assert close(rx.evaluate(rx.Qrels(neg), rx.Run(run), "bpref"), float(a))


def test_query_sets_as_ranx(data):
    qrels, bm25, _ = data
    part = {k: v for i, (k, v) in enumerate(bm25.items()) if i % 4}
    part["nobody-judged"] = {"d1": 1.0}
    with pytest.raises(AssertionError, match="make_comparable"):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(part), "map")
    with pytest.raises(irmetrics.InputError, match="make_comparable=True"):
        rx.evaluate(rx.Qrels(qrels), rx.Run(part), "map")
    for m in ("map", "ndcg@10", "mrr"):
        a = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(part), m, make_comparable=True)
        b = rx.evaluate(rx.Qrels(qrels), rx.Run(part), m, make_comparable=True)
        assert close(b, float(a)), m
    # Run.make_comparable, then evaluate
    theirs = ranx.Run(part).make_comparable(ranx.Qrels(qrels))
    ours = rx.Run(part).make_comparable(rx.Qrels(qrels))
    assert "nobody-judged" not in ours and len(ours) == len(part) - 1
    assert close(
        rx.evaluate(rx.Qrels(qrels), ours, "map"),
        float(ranx.evaluate(ranx.Qrels(qrels), theirs, "map")),
    )


def test_a_query_without_documents_is_ranxs_empty_ranking(data):
    # a retriever that returns nothing for some queries: ranx holds them, scored 0
    qrels, bm25, _ = data
    part = {k: (v if i % 3 else {}) for i, (k, v) in enumerate(bm25.items())}
    for m in ("map", "ndcg@10", "mrr", "recall@100"):
        a = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(part), m, return_mean=False)
        for run in (part, rx.Run(part)):
            b = rx.evaluate(rx.Qrels(qrels), run, m, return_mean=False)
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15, err_msg=m)
    # a query neither judged nor given is still a mismatch
    with pytest.raises(irmetrics.InputError, match="make_comparable=True"):
        rx.evaluate(rx.Qrels(qrels), {**part, "nobody-judged": {}}, "map")
    with pytest.raises(irmetrics.InputError, match="metrics must be"):
        rx.evaluate(rx.Qrels(qrels), part, None)


@pytest.mark.parametrize("stat_test", ["student", "tukey"])
def test_compare_is_ranxs(data, stat_test):
    qrels, bm25, dense = data
    # a third run: BM25 with a fixed third of its documents' scores doubled
    mix = {
        q: {d: s * (1 + (zlib.crc32(d.encode()) % 3 == 0)) for d, s in docs.items()}
        for q, docs in bm25.items()
    }
    runs = {"bm25": bm25, "dense": dense, "mix": untied(mix)}
    metrics = ["ndcg@10", "map@100"]
    theirs = ranx.compare(
        ranx.Qrels(qrels),
        [ranx.Run(r, name=n) for n, r in runs.items()],
        metrics,
        stat_test=stat_test,
    )
    ours = rx.compare(
        rx.Qrels(qrels), [rx.Run(r, name=n) for n, r in runs.items()], metrics, stat_test=stat_test
    )
    assert ours.systems == list(runs)
    for p in ours.pairs:
        a, b, m = p["system_a"], p["system_b"], p["measure"]
        ref = theirs.comparisons[a, b][m]["p_value"]
        # (Tukey's p-values: scipy's studentized range integral, to 1e-9 as in
        # tests/test_tukey_anova.py)
        tol = 1e-15 if stat_test == "student" else 1e-9
        assert math.isclose(p["pvalue"], ref, rel_tol=1e-9, abs_tol=tol), (
            a,
            b,
            m,
            p["pvalue"],
            ref,
        )
        assert p["pvalue_corrected"] == p["pvalue"]  # ranx corrects nothing
        # significant at ranx's max_p=0.01
        assert p["significant"] == (ref <= 0.01)
    for n in runs:
        for m in metrics:
            assert close(ours.means[m][n], float(theirs.results[n][m]))
    # the tables at ranx's rounding_digits=3 unless told otherwise
    cell = f"{ours.means['ndcg@10']['bm25']:.3f}"
    assert cell in ours.to_latex()
    assert f"{ours.means['ndcg@10']['bm25']:.5f}" in ours.to_latex(digits=5)


def test_fuse_is_ranxs(data):
    _, bm25, dense = data
    for method, norm, params in (
        ("wsum", "min-max", {"weights": [0.3, 0.7]}),
        ("rrf", None, {"k": 60}),
        ("mnz", "max", None),
    ):
        theirs = ranx.fuse(
            [ranx.Run(bm25), ranx.Run(dense)], norm=norm or "min-max", method=method, params=params
        ).to_dict()
        ours = rx.fuse(
            [rx.Run(bm25), rx.Run(dense)], norm=norm or "min-max", method=method, params=params
        )
        assert isinstance(ours, rx.Run)
        got = ours.to_dict()
        assert got.keys() == theirs.keys()
        for q in theirs:
            assert got[q].keys() == theirs[q].keys()
            assert all(
                math.isclose(got[q][d], theirs[q][d], rel_tol=1e-12, abs_tol=1e-12)
                for d in theirs[q]
            )


# ranx's JSON reader leaves its file open
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_constructors_and_writers(data, tmp_path):
    qrels, bm25, _ = data
    run = rx.Run(bm25, name="bm25")
    df = pd.DataFrame(
        [(q, d, s) for q, docs in bm25.items() for d, s in docs.items()],
        columns=["q_id", "doc_id", "score"],
    ).astype({"q_id": object, "doc_id": object})  # ranx insists (pandas 3 makes str columns)
    want = float(ranx.evaluate(ranx.Qrels(qrels), ranx.Run.from_df(df), "ndcg@10"))
    assert close(rx.evaluate(rx.Qrels(qrels), rx.Run.from_df(df), "ndcg@10"), want)
    renamed = df.rename(columns={"q_id": "query", "doc_id": "doc", "score": "s"})
    assert close(rx.evaluate(qrels, rx.Run.from_df(renamed, "query", "doc", "s"), "ndcg@10"), want)
    assert list(run.to_dataframe().columns) == ["q_id", "doc_id", "score"]
    df.to_parquet(tmp_path / "run.parquet")
    assert close(rx.evaluate(qrels, rx.Run.from_parquet(tmp_path / "run.parquet"), "ndcg@10"), want)
    # ranx's JSON and TREC files, each read back by ranx
    for kind, name in (("json", "run.json"), ("trec", "run.trec")):
        path = tmp_path / name
        run.save(str(path), kind=kind)
        back = ranx.Run.from_file(str(path), kind=kind)
        assert close(float(ranx.evaluate(ranx.Qrels(qrels), back, "ndcg@10")), want)
        assert close(rx.evaluate(qrels, rx.Run.from_file(str(path), kind=kind), "ndcg@10"), want)
    # built up as ranx's (add, add_multi, add_score)
    built = rx.Run(name="built")
    qs = list(bm25)
    built.add_multi(
        qs[:5], [list(bm25[q]) for q in qs[:5]], [list(bm25[q].values()) for q in qs[:5]]
    )
    for q in qs[5:]:
        for d, s in bm25[q].items():
            built.add_score(q, d, s)
    assert built.to_dict() == bm25
    assert close(rx.evaluate(qrels, built, "ndcg@10"), want)
    assert sorted(run.keys()) == sorted(bm25) and run.size == len(bm25)


def test_qrels_from_ir_datasets_is_ranxs():
    # a dataset registered from the repository's files (ir_datasets would download one)
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    name = "irmetrics-test/dl19-passage-qrels"
    if name not in ir_datasets.registry:
        ds = Dataset(TrecQrels(LocalDownload(DATA / "dl19-passage.qrels"), {}))
        ir_datasets.registry.register(name, ds)
    theirs, ours = ranx.Qrels.from_ir_datasets(name), rx.Qrels.from_ir_datasets(name)
    assert ours.name == theirs.name == name
    assert ours.to_dict() == {q: dict(d) for q, d in theirs.to_dict().items()}
    run = untied(irmetrics.Run.from_file(DATA / "dl19-bm25.run").to_dict())
    a = ranx.evaluate(theirs, ranx.Run(run), "ndcg@10")
    assert close(rx.evaluate(ours, rx.Run(run), "ndcg@10"), float(a))


def test_irmetrics_own_functions_take_these_objects(data):
    # irmetrics.evaluate / fuse / compare given the compat objects read their data
    qrels, bm25, dense = data
    q, a, b = rx.Qrels(qrels), rx.Run(bm25, name="bm25"), rx.Run(dense, name="dense")
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(bm25), ["ndcg@10", "map@100"])
    got = irmetrics.evaluate(q, a, ["ndcg@10", "map@100"], names="ranx")
    assert all(close(got[m], float(want[m])) for m in want), (got, want)
    assert close(irmetrics.Evaluator(q, ["ndcg@10"], names="ranx").evaluate(a)["ndcg@10"],
                 float(want["ndcg@10"]))  # fmt: skip
    fused = irmetrics.fuse([a, b], method="rrf").to_dict()
    theirs = ranx.fuse([ranx.Run(bm25), ranx.Run(dense)], method="rrf").to_dict()
    assert fused.keys() == theirs.keys()
    for qid, docs in theirs.items():
        assert fused[qid].keys() == docs.keys()
        assert all(math.isclose(fused[qid][d], s, rel_tol=1e-12) for d, s in docs.items())
    report = irmetrics.compare(q, [a, b], ["ndcg@10"])
    assert [s for s in report.systems] == ["bm25", "dense"]


@pytest.mark.parametrize("norm", ["min-max", "min-max-inverted", "max", "sum", "zmuv", "rank"])
def test_normalize_is_ranxs(data, norm):
    _, _, dense = data
    theirs = ranx.normalize(ranx.Run(dense, name="dense"), norm).to_dict()
    ours = rx.normalize(rx.Run(dense, name="dense"), norm)
    assert isinstance(ours, rx.Run) and ours.name == "dense"
    got = ours.to_dict()
    assert got.keys() == theirs.keys()
    for q in theirs:
        assert got[q].keys() == theirs[q].keys()
        assert all(
            math.isclose(got[q][d], theirs[q][d], rel_tol=1e-12, abs_tol=1e-12) for d in theirs[q]
        ), (norm, q)


def test_plot_is_ranxs(data):
    import matplotlib.figure

    qrels, bm25, dense = data
    theirs = ranx.plot(
        ranx.Qrels(qrels), [ranx.Run(bm25, name="bm25"), ranx.Run(dense)], return_graph=False
    )
    ours = rx.plot(rx.Qrels(qrels), [rx.Run(bm25, name="bm25"), rx.Run(dense)], return_graph=False)
    assert list(ours.columns) == list(theirs.columns) == ["Model", "recall", "precision"]
    assert list(ours["Model"]) == list(theirs["Model"]) == ["bm25"] * 11 + ["run_2"] * 11
    assert np.allclose(ours["recall"], theirs["recall"], rtol=0, atol=1e-15)
    assert np.allclose(ours["precision"], theirs["precision"], rtol=1e-12, atol=1e-15)
    one = ranx.plot(ranx.Qrels(qrels), ranx.Run(dense), return_graph=False)
    mine = rx.plot(rx.Qrels(qrels), rx.Run(dense), return_graph=False)
    assert list(mine["Model"]) == list(one["Model"]) == ["run"] * 11
    # drawn: the same curves, in a figure of ranx's size, the line properties given
    fig = rx.plot(rx.Qrels(qrels), [rx.Run(bm25, name="bm25"), rx.Run(dense, name="dense")])
    assert isinstance(fig, matplotlib.figure.Figure)
    assert tuple(fig.get_size_inches()) == (8, 5)
    lines = fig.axes[0].get_lines()
    assert [line.get_linewidth() for line in lines] == [2.5, 2.5]
    assert np.allclose(lines[0].get_ydata(), theirs["precision"][:11], rtol=1e-12)
    fig = rx.plot(rx.Qrels(qrels), rx.Run(dense), figsize=(4, 3), seaborn_kwargs={"lw": 1.0})
    assert tuple(fig.get_size_inches()) == (4, 3)
    assert fig.axes[0].get_lines()[0].get_linewidth() == 1.0
    with pytest.raises(irmetrics.InputError, match="seaborn_kwargs"):
        rx.plot(rx.Qrels(qrels), rx.Run(dense), seaborn_kwargs={"palette": "deep"})
    with pytest.raises(irmetrics.InputError, match="iprec_at_recall"):
        rx.plot(rx.Qrels(qrels), rx.Run(dense), graph="roc")
    # ranx's rule for the query sets, as evaluate's
    short = {q: docs for q, docs in dense.items() if q != next(iter(dense))}
    with pytest.raises(irmetrics.InputError, match="make_comparable"):
        rx.plot(rx.Qrels(qrels), rx.Run(short), return_graph=False)
