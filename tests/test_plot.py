"""irmetrics.plot: every picture is rendered (PNG, headless) and the data it returns
is checked against values from outside our code: trec_eval's stored outputs for the
conformance case v10_trec_like, ir_measures (pytrec_eval) per-topic AP, numpy's
histogram, and scikit-learn's ROC AUC and confusion matrix computed from the raw files.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import irmetrics
import irmetrics.plot as plot

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parent.parent
N = 100_000  # num_docs_in_collection for ROC / confusion: more than any query's judgments


@pytest.fixture(scope="module")
def case(v10_trec_like: dict) -> dict:
    return v10_trec_like


def _png(p: plot.Plot, tmp_path: Path, name: str = "out.png") -> None:
    """Rendered: a PNG file, not blank (more than one colour)."""
    path = tmp_path / name
    p.save(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 2


def test_interpolated_precision_recall_is_trec_evals_iprec_at_recall(case, tmp_path):
    p = plot.precision_recall(case["qrels"], {"A": case["run"], "B": case["run"]})
    assert set(p.data) == {"A", "B"}
    levels = [f"{r / 10:.2f}" for r in range(11)]
    want = [case["expected"][f"iprec_at_recall_{lv}"]["all"] for lv in levels]
    assert p.data["A"]["recall"] == [r / 10 for r in range(11)]
    assert p.data["A"]["precision"] == pytest.approx(want, abs=1e-12)
    assert len(p.ax.get_lines()) == 2
    _png(p, tmp_path)


def test_raw_precision_recall_is_mean_recall_and_precision_at_k(case, tmp_path):
    ks = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    p = plot.precision_recall(case["qrels"], case["run"], interpolated=False, cutoffs=ks)
    (d,) = p.data.values()
    assert d["recall"] == pytest.approx(
        [case["expected"][f"recall_{k}"]["all"] for k in ks], abs=1e-12
    )
    assert d["precision"] == pytest.approx(
        [case["expected"][f"P_{k}"]["all"] for k in ks], abs=1e-12
    )
    _png(p, tmp_path)


def test_histogram_bins_trec_evals_per_topic_ap(case, tmp_path):
    p = plot.histogram(case["qrels"], case["run"], "map", bins=10)
    ap = case["expected"]["map"]
    assert p.data["query_ids"] == sorted(q for q in ap if q != "all")
    assert p.data["values"] == pytest.approx([ap[q] for q in p.data["query_ids"]], abs=1e-12)
    counts, edges = np.histogram([ap[q] for q in ap if q != "all"], bins=10, range=(0, 1))
    assert p.data["counts"] == counts.tolist()
    assert p.data["edges"] == pytest.approx(edges.tolist())
    _png(p, tmp_path)


def test_differences_are_per_topic_ap_differences_from_ir_measures(tmp_path):
    import ir_measures

    qrels = REPO / "tests" / "data" / "dl19-passage.qrels"
    runs = [REPO / "tests" / "data" / f"dl19-{n}.run" for n in ("bm25", "dense")]
    p = plot.differences(qrels, runs[0], runs[1], "map", names=("bm25", "dense"))
    ap = []
    for r in runs:
        got = ir_measures.iter_calc(
            [ir_measures.AP],
            list(ir_measures.read_trec_qrels(str(qrels))),
            list(ir_measures.read_trec_run(str(r))),
        )
        ap.append({m.query_id: m.value for m in got})
    want = {q: ap[0][q] - ap[1][q] for q in ap[0]}
    assert sorted(p.data["query_ids"]) == sorted(want)
    assert p.data["differences"] == pytest.approx([want[q] for q in p.data["query_ids"]], abs=1e-12)
    assert p.data["differences"] == sorted(p.data["differences"], reverse=True)
    assert p.data["wins"] == sum(v > 0 for v in want.values())
    assert p.data["losses"] == sum(v < 0 for v in want.values())
    assert p.ax.get_ylabel() == "map: bm25 - dense"
    _png(p, tmp_path)
    # ir_measures' own measure object, read by its name
    q = plot.differences(qrels, runs[0], runs[1], ir_measures.AP, names=("bm25", "dense"))
    assert q.data == p.data
    assert q.ax.get_ylabel() == "AP: bm25 - dense"


def test_by_cutoff_is_the_measure_at_each_k(case, tmp_path):
    ks = [5, 10, 20, 100]
    p = plot.by_cutoff(case["qrels"], [case["run"]], "ndcg_cut", cutoffs=ks)
    (d,) = p.data.values()
    assert d["k"] == ks
    assert d["values"] == pytest.approx(
        [case["expected"][f"ndcg_cut_{k}"]["all"] for k in ks], abs=1e-12
    )
    _png(p, tmp_path)
    from ir_measures import nDCG  # ir_measures' object: nDCG@k is trec_eval's ndcg_cut_k

    q = plot.by_cutoff(case["qrels"], [case["run"]], nDCG, cutoffs=ks)
    assert list(q.data.values())[0]["values"] == d["values"]


def _read(path: Path, run: bool) -> dict:
    out: dict = defaultdict(dict)
    for line in path.read_text().splitlines():
        f = line.split()
        if run:
            out[f[0]][f[2]] = float(f[4])
        else:
            out[f[0]][f[2]] = int(f[3])
    return out


def _trec_order(docs: dict) -> list[str]:
    """trec_eval's ranking: score descending, ties by document id descending."""
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


def test_roc_auc_per_topic_is_sklearns_over_the_collection(case, tmp_path):
    from sklearn.metrics import roc_auc_score

    qrels, run = _read(case["qrels"], False), _read(case["run"], True)
    p = plot.roc(case["qrels"], case["run"], per_query=True, num_docs_in_collection=N)
    (d,) = p.data.values()
    checked = 0
    for q, docs in run.items():
        rel = {x for x, lab in qrels[q].items() if lab >= 1}
        if not rel:
            assert q not in d["per_query_auc"]
            continue
        order = _trec_order(docs)
        # each retrieved document its own threshold, in trec_eval's order; the
        # unretrieved documents tie below: one weighted row each for relevant / not
        y_true = [int(x in rel) for x in order]
        y_score = [-float(i) for i in range(len(order))]
        missed = len(rel - set(docs))
        rest = N - len(order) - missed
        y_true += [1, 0]
        y_score += [-1e12, -1e12]
        weight = [1.0] * len(order) + [float(missed), float(rest)]
        want = roc_auc_score(y_true, y_score, sample_weight=weight)
        assert d["per_query_auc"][q] == pytest.approx(want, abs=1e-12), q
        checked += 1
    assert checked == 50
    assert d["auc"] == pytest.approx(np.mean(list(d["per_query_auc"].values())), abs=1e-15)
    assert d["fpr"][0] == 0 and d["tpr"][0] == 0 and d["fpr"][-1] == 1 and d["tpr"][-1] == 1
    assert len(p.ax.get_lines()) == 1 + 50 + 1  # mean, one per topic, chance diagonal
    _png(p, tmp_path)


@pytest.mark.parametrize("k", [1, 10, 100])
def test_confusion_matrix_is_sklearns(case, tmp_path, k):
    from sklearn.metrics import confusion_matrix

    qrels, run = _read(case["qrels"], False), _read(case["run"], True)
    y_true, y_pred, weight = [], [], []
    for q in sorted(set(qrels) | set(run)):
        if q not in qrels:
            continue  # trec_eval evaluates the judged queries
        rel = {x for x, lab in qrels[q].items() if lab >= 1}
        order = _trec_order(run.get(q, {}))
        for i, x in enumerate(order):
            y_true.append(int(x in rel))
            y_pred.append(int(i < k))
            weight.append(1)
        missed = len(rel - set(order))
        y_true += [1, 0]
        y_pred += [0, 0]
        weight += [missed, N - len(order) - missed]
    want = confusion_matrix(y_true, y_pred, sample_weight=weight).tolist()
    p = plot.confusion_matrix(case["qrels"], case["run"], k, num_docs_in_collection=N)
    assert p.data["matrix"] == want
    assert [[p.data["tn"], p.data["fp"]], [p.data["fn"], p.data["tp"]]] == want
    _png(p, tmp_path)


def test_draws_into_the_users_axes_and_saves_svg_and_pdf(case, tmp_path):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    p = plot.histogram(case["qrels"], case["run"], "P@10", ax=axes[1])
    assert p.ax is axes[1] and p.figure is fig
    assert not axes[0].patches and axes[1].patches
    p.save(tmp_path / "h.svg")
    assert b"<svg" in (tmp_path / "h.svg").read_bytes()[:1000]
    p.save(tmp_path / "h.pdf")
    assert (tmp_path / "h.pdf").read_bytes()[:5] == b"%PDF-"
    # atomic: nothing but the two files is left in the folder; their mode is what
    # open() would give (0o666 less the umask), not a temporary file's 0o600
    assert sorted(x.name for x in tmp_path.iterdir()) == ["h.pdf", "h.svg"]
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "h.svg").stat().st_mode & 0o777 == 0o666 & ~umask
    plt.close(fig)


def test_run_names_are_shown_as_they_are(case, tmp_path):
    """Names are text, not markup: matplotlib's SVG with its text kept as text
    (svg.fonttype none), read by an XML parser, holds each legend entry and axis label
    whole; two '$' made mathtext (split into glyph runs in a math font) and a leading '_'
    dropped the run from the legend."""
    import xml.etree.ElementTree as ET

    import matplotlib.pyplot as plt

    names = ["cost $5 and $6", "_bm25", "x$", "a\\$b $c$"]
    runs = {n: case["run"] for n in names}

    def texts(p: plot.Plot, name: str) -> list[str]:
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            p.save(tmp_path / name)
        plt.close(p.figure)
        svg = ET.parse(tmp_path / name).iter("{http://www.w3.org/2000/svg}text")
        # a zero-width space keeps a leading '_' in the legend
        return ["".join(e.itertext()).removeprefix("\u200b") for e in svg]

    for p in [
        plot.precision_recall(case["qrels"], runs),
        plot.by_cutoff(case["qrels"], runs, "P"),
        plot.roc(case["qrels"], runs, num_docs_in_collection=N),
    ]:
        got = [t.split(" (AUC")[0] for t in texts(p, "p.svg")]
        assert all(n in got for n in names), got
    d = plot.differences(case["qrels"], case["run"], case["run"], names=(names[0], names[3]))
    got = texts(d, "d.svg")
    assert f"map: {names[0]} - {names[3]}" in got, got


def test_bad_requests_are_irmetrics_errors(case, tmp_path):
    q, r = case["qrels"], case["run"]
    with pytest.raises(irmetrics.InputError, match="num_docs_in_collection"):
        plot.roc(q, r)
    with pytest.raises(irmetrics.InputError, match="num_docs_in_collection"):
        plot.confusion_matrix(q, r, 10)
    with pytest.raises(irmetrics.InputError, match="names 2 values"):
        plot.histogram(q, r, "P.5,10")
    with pytest.raises(irmetrics.InputError, match="one run"):
        plot.histogram(q, {"a": r, "b": r})
    with pytest.raises(irmetrics.InputError, match="cutoffs"):
        plot.by_cutoff(q, r, "P", cutoffs=[0])
    with pytest.raises(irmetrics.InputError, match="extension"):
        plot.histogram(q, r).save(tmp_path / "x.jpg")
    # matplotlib's or numpy's ValueError before, or a silent bin count
    for bins in (0, -3, 2.5, True, 2**63, [0.0, 0.5, 1.0]):
        with pytest.raises(irmetrics.InputError, match="bins must be a whole number"):
            plot.histogram(q, r, bins=bins)
    with pytest.raises(irmetrics.InputError, match="cutoffs must be a list of whole numbers"):
        plot.by_cutoff(q, r, "P", cutoffs=["x"])  # int()'s ValueError before
    with pytest.raises(irmetrics.InputError, match="cutoffs must be whole numbers"):
        plot.precision_recall(q, r, interpolated=False, cutoffs=[5, "x"])  # int()'s ValueError
    with pytest.raises(irmetrics.InputError, match="cutoffs apply to the raw curve"):
        plot.precision_recall(q, r, cutoffs=[5, 10])  # ignored before
    with pytest.raises(irmetrics.InputError, match="k must be a whole number >= 1, not 'x'"):
        plot.confusion_matrix(q, r, "x", num_docs_in_collection=1000)
    with pytest.raises(
        irmetrics.InputError, match=r"measure must be a str \(or an ir_measures measure\), got list"
    ):
        plot.by_cutoff(q, r, ["P"])  # an AttributeError before
    for measure in ("P@5", "P.5", "ndcg_cut.10"):  # was "bad parameters '5@1' for 'P'"
        with pytest.raises(irmetrics.InputError, match="without its cut-off"):
            plot.by_cutoff(q, r, measure)
    # a parameter's decimal point is not a cut-off: the same values as the measure's own
    gains = "nDCG(gains={0:0,1:1,2:2.5,3:3})"
    p = plot.by_cutoff(q, {"r": r}, gains, cutoffs=[5, 10])
    want = irmetrics.evaluate(q, r, [f"{gains}@5", f"{gains}@10"])
    assert p.data["r"]["values"] == list(want.values())
    # the folder of a file to write is missing: the file is named, not the temporary one
    # (a FileNotFoundError naming '.x.png.<random>.tmp' before)
    with pytest.raises(irmetrics.FileError) as e:
        plot.histogram(q, r).save(tmp_path / "missing" / "x.png")
    assert str(e.value).startswith(f"cannot write {tmp_path / 'missing' / 'x.png'}: ")
    assert ".tmp" not in str(e.value).replace(str(tmp_path), "")
    # different topics: named, with the way out
    a = {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}
    b = {"q1": {"d1": 1.0}}
    judged = {"q1": {"d1": 1}, "q2": {"d1": 1}}
    with pytest.raises(irmetrics.InputError, match="'q2'.*complete=True"):
        plot.differences(judged, a, b)
    p = plot.differences(judged, a, b, complete=True)
    assert p.data["query_ids"] == ["q2", "q1"] and p.data["differences"] == [1.0, 0.0]


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(irmetrics.MissingDependencyError, match=r"irmetrics\[plot\]"):
        plot.histogram({"q": {"d": 1}}, {"q": {"d": 1.0}})
