"""Properties of the measures beyond trec_eval, aggregation and rank correlation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics

NORMALIZED = [
    "ndcg_burges",
    "ndcg_burges@5",
    "nDCG(dcg='exp-log2')@10",
    "nERR@5",
    "nerr@10",
    "ERR@10",
    "err@10",
    "f1@5",
    "F(beta=0.5)@10",
    "F(beta=2)@3",
    "judged@5",
    "relative_map@5",
    "RBP(rel=1,p=0.8)",
    "RBP(rel=2,p=0.5)",
    "hit_rate@3",
    "nDCG(g1=0.5,g2=3,g4=2.5)@5",
    "nDCG(ideal_all=1)@3",
    "ndcg_gain",
    "ap_11pt",
    "iprec.0.3",
]

# A query: judged labels (-1 marks a negative label) of up to 12 documents, and a run
# over some of them plus unjudged ones, with scores.
labels = st.lists(st.integers(min_value=-1, max_value=4), min_size=1, max_size=12)


@st.composite
def query(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, float]]:
    ls = draw(labels)
    if all(v < 0 for v in ls):
        ls[0] = 0
    qrels = {f"d{i}": v for i, v in enumerate(ls)}
    pool = [*qrels, *(f"u{i}" for i in range(draw(st.integers(0, 5))))]
    docs = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
    scores = draw(st.lists(st.integers(0, 6), min_size=len(docs), max_size=len(docs)))
    return qrels, {d: float(s) for d, s in zip(docs, scores)}


@settings(max_examples=60, deadline=None)
@given(query())
def test_normalized_measures_lie_in_unit_interval(q: tuple[dict, dict]) -> None:
    qrels, run = q
    if not run:
        run = {"u0": 1.0}
    res = irmetrics.evaluate({"q": qrels}, {"q": run}, NORMALIZED)
    for name, v in res.items():
        assert 0.0 <= v <= 1.0 + 1e-12, (name, v)


# Confusion-matrix measures bounded by [0, 1] (LR+, LR- and DOR are not bounded; MCC,
# informedness and markedness lie in [-1, 1]).
CONFUSION_UNIT = [
    *("tpr@5", "tnr@5", "ppv@5", "npv@5", "fnr@5", "fpr@5", "fdr@5", "for@5"),
    *("fallout@10", "threat_score@5", "prevalence@5", "accuracy@5"),
    *("balanced_accuracy@5", "fowlkes_mallows@5", "iprec.0.5", "ap_11pt"),
]
CONFUSION_SIGNED = ["mcc@5", "informedness@5", "markedness@5"]


@settings(max_examples=60, deadline=None)
@given(query())
def test_confusion_measures_bounded(q: tuple[dict, dict]) -> None:
    qrels, run = q
    if not run:
        run = {"u0": 1.0}
    res = irmetrics.evaluate(
        {"q": qrels},
        {"q": run},
        [*CONFUSION_UNIT, *CONFUSION_SIGNED, "lr+@5", "dor@5"],
        num_docs_in_collection=40,
    )
    for name in CONFUSION_UNIT:
        assert 0.0 <= res[name] <= 1.0 + 1e-12, (name, res[name])
    for name in CONFUSION_SIGNED:
        assert -1.0 - 1e-12 <= res[name] <= 1.0 + 1e-12, (name, res[name])
    assert res["lr+@5"] >= 0.0 and res["dor@5"] >= 0.0
    # fall-out is the false positive rate
    assert irmetrics.evaluate(
        {"q": qrels}, {"q": run}, ["fallout@5", "fpr@5"], num_docs_in_collection=40
    ) == pytest.approx({"fallout@5": res["fpr@5"], "fpr@5": res["fpr@5"]})


def test_confusion_measures_need_collection_size() -> None:
    with pytest.raises(irmetrics.Error, match="num_docs_in_collection"):
        irmetrics.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["fallout@10"])
    # TP-only measures do not need it
    assert irmetrics.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["tpr@10"]) == {"tpr@10": 1.0}


@settings(max_examples=60, deadline=None)
@given(query())
def test_perfect_ranking_scores_one(q: tuple[dict, dict]) -> None:
    qrels, _ = q
    if not any(v >= 1 for v in qrels.values()):
        qrels["d0"] = 1
    ranked = sorted(qrels, key=lambda d: -qrels[d])
    run = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    num_rel = sum(v >= 1 for v in qrels.values())
    names = [
        *("ndcg_burges", "ndcg_burges@3", "nERR@5", "nerr@1", "relative_map@3", "hit_rate@1"),
        *("ap_11pt", "iprec.1.0", f"tpr@{num_rel}", f"ppv@{num_rel}"),
        *("ndcg_gain", "nDCG(g1=0.5,g3=3.5)@2", "nDCG(ideal_all=1)@100"),
    ]
    res = irmetrics.evaluate({"q": qrels}, {"q": run}, [*names, f"f1@{num_rel}"])
    for name, v in res.items():
        assert v == pytest.approx(1.0, abs=1e-12), (name, v)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=4), unique=True, min_size=2, max_size=15))
def test_kendall_distance_self_and_reverse(items: list[str]) -> None:
    assert irmetrics.kendall_topk_distance(items, items) == 0.0
    assert irmetrics.kendall_topk_distance(items, items[::-1]) == 1.0
    assert irmetrics.rbo(items, items) == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= irmetrics.rbo(items, items[::-1]) <= 1.0


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=3), unique=True, max_size=10),
    st.lists(st.text(min_size=1, max_size=3), unique=True, max_size=10),
    st.integers(1, 12),
)
def test_topk_measures_bounded(a: list[str], b: list[str], k: int) -> None:
    d = irmetrics.kendall_topk_distance(a, b, k)
    assert 0.0 <= d <= 1.0
    r = irmetrics.rbo(a, b)
    if not (a or b):  # two empty rankings: no depth to average over, undefined
        assert math.isnan(r)
    elif not (a and b) or not set(a) & set(b):  # nothing in common: no overlap at any depth
        assert r == 0.0
    else:
        assert 0.0 < r <= 1.0 + 1e-12


def _kendall_topk_by_definition(a: list[str], b: list[str], penalty: float) -> float:
    """Fagin, Kumar and Sivakumar (2003), K^(p), pair by pair over the union of the two
    lists (cases 1-4 of their section 3.1), divided by the number of pairs."""
    ra, rb = {d: i for i, d in enumerate(a)}, {d: i for i, d in enumerate(b)}
    union = list(dict.fromkeys(a + b))
    cost = 0.0
    for i, x in enumerate(union):
        for y in union[i + 1 :]:
            if x in ra and y in ra and x in rb and y in rb:  # case 1: ranked in both
                cost += (ra[x] < ra[y]) != (rb[x] < rb[y])
            elif x in ra and y in ra and (x in rb or y in rb):  # case 2, both in a
                present, absent = (x, y) if x in rb else (y, x)
                cost += ra[absent] < ra[present]
            elif x in rb and y in rb and (x in ra or y in ra):  # case 2, both in b
                present, absent = (x, y) if x in ra else (y, x)
                cost += rb[absent] < rb[present]
            elif (x in ra and y in ra) or (x in rb and y in rb):  # case 4: one list only
                cost += penalty
            else:  # case 3: one in each list only
                cost += 1
    n = len(union)
    return cost / (n * (n - 1) / 2) if n > 1 else 0.0


def _rbo_ext_by_definition(a: list[str], b: list[str], p: float) -> float:
    """Webber, Moffat and Zobel (2010), eq. 32: extrapolated RBO of lists of uneven
    lengths, X_d the overlap of the first d items (all of the shorter list beyond it)."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, n = len(short), len(long_)
    x = [len(set(short[:d]) & set(long_[:d])) for d in range(n + 1)]
    head = sum(x[d] / d * p**d for d in range(1, n + 1))
    tail = sum(x[s] * (d - s) / (s * d) * p**d for d in range(s + 1, n + 1))
    return (1 - p) / p * (head + tail) + ((x[n] - x[s]) / n + x[s] / s) * p**n


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefghijklmnop"), unique=True, max_size=14),
    st.lists(st.sampled_from("abcdefghijklmnop"), unique=True, max_size=14),
    st.sampled_from([0.0, 0.5, 0.3, 1.0]),
    st.sampled_from([0.5, 0.9, 0.98]),
)
def test_topk_distances_are_their_papers_definitions(
    a: list[str], b: list[str], penalty: float, p: float
) -> None:
    got = irmetrics.kendall_topk_distance(a, b, penalty=penalty)
    assert got == pytest.approx(_kendall_topk_by_definition(a, b, penalty), abs=1e-12)
    if a and b:
        assert irmetrics.rbo(a, b, p) == pytest.approx(_rbo_ext_by_definition(a, b, p), abs=1e-12)


def test_topk_distances_refuse_repeated_items_and_bad_penalties() -> None:
    with pytest.raises(
        irmetrics.InputError, match="second ranked list holds one item at ranks 1 and 3"
    ):
        irmetrics.kendall_topk_distance(["a", "b"], ["a", "c", "a"])
    with pytest.raises(
        irmetrics.InputError, match="first ranked list holds one item at ranks 2 and 3"
    ):
        irmetrics.rbo(["x", "a", "a"], ["a", "b"])
    with pytest.raises(irmetrics.Error, match="penalty .* between 0 and 1, got 1.5"):
        irmetrics.kendall_topk_distance(["a"], ["b"], penalty=1.5)
    with pytest.raises(irmetrics.Error, match="penalty"):
        irmetrics.kendall_topk_distance(["a"], ["b"], penalty=float("nan"))


def test_score_correlations_published_examples() -> None:
    # scipy.stats.kendalltau documentation example
    assert irmetrics.kendall_tau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]) == pytest.approx(
        -0.47140452079103173, abs=1e-12
    )
    # Wikipedia's Spearman example (IQ vs hours of TV): -29/165
    iq = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110]
    tv = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17]
    assert irmetrics.spearman_rho(iq, tv) == pytest.approx(-29 / 165, abs=1e-12)
    systems_map = {"a": 0.30, "b": 0.25, "c": 0.20, "d": 0.10}
    systems_p10 = {"a": 0.50, "b": 0.55, "c": 0.40, "d": 0.10, "only_here": 0.9}
    # one discordant pair of 6: (4 - 1) ... tau = (5 - 1) / 6
    assert irmetrics.system_correlation(systems_map, systems_p10) == pytest.approx(4 / 6)
    assert irmetrics.system_correlation(systems_map, systems_p10, "spearman") == pytest.approx(0.8)


def test_compare_runs() -> None:
    a = irmetrics.Run.from_dict({"q1": {"x": 3, "y": 2, "z": 1}, "q2": {"x": 1, "y": 2}})
    b = irmetrics.Run.from_dict({"q1": {"x": 1, "y": 2, "z": 3}, "q2": {"x": 1, "y": 2}})
    per_q = irmetrics.compare_runs(a, b, "kendall_topk", per_query=True)
    assert per_q == {"q1": 1.0, "q2": 0.0}
    assert irmetrics.compare_runs(a, b, "kendall_topk") == 0.5
    assert irmetrics.compare_runs(a, a) == pytest.approx(1.0)
    assert irmetrics.compare_runs(a, b, "kendall", per_query=True) == {"q1": -1.0, "q2": 1.0}
    assert irmetrics.compare_runs(a, b, "spearman", per_query=True)["q1"] == pytest.approx(-1.0)
    with pytest.raises(irmetrics.InputError):
        irmetrics.compare_runs(a, b, "pearson")


def test_aggregation() -> None:
    per_q = {"q1": 0.2, "q2": 0.0, "q3": 0.5, "q4": 0.1}
    assert irmetrics.aggregate(per_q) == pytest.approx(0.2)
    assert irmetrics.aggregate(per_q, "median") == pytest.approx(0.15)
    assert irmetrics.aggregate(per_q, "gmean") == pytest.approx((0.2 * 1e-5 * 0.5 * 0.1) ** 0.25)
    assert irmetrics.aggregate([2, 4, 4, 4, 5, 5, 7, 9], "std") == pytest.approx((32 / 7) ** 0.5)
    lo, hi = irmetrics.bootstrap_ci(per_q, seed=3)
    assert (lo, hi) == irmetrics.bootstrap_ci(per_q, seed=3)
    assert 0.0 <= lo <= 0.2 <= hi <= 0.5
    with pytest.raises(irmetrics.Error):
        irmetrics.aggregate(per_q, "mode")


def test_evaluate_aggregate_option() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 1}}
    run = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}, "q3": {"x": 1.0}}
    # AP per query: 1/2, 1, 0
    assert irmetrics.evaluate(qrels, run, ["map", "num_q"], aggregate="median") == {"map": 0.5}
    assert irmetrics.evaluate(qrels, run, "map", aggregate="std") == {"map": 0.5}
    assert irmetrics.evaluate(qrels, run, "map", aggregate="gmean")["map"] == pytest.approx(
        irmetrics.evaluate(qrels, run, "gm_map")["gm_map"], abs=1e-15
    )
    with pytest.raises(irmetrics.Error):
        irmetrics.evaluate(qrels, run, "map", aggregate="mode")


def test_gm_map_matches_gmean_of_ap() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 1}}
    run = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"x": 1.0}, "q3": {"d": 1.0}}
    res = irmetrics.evaluate(qrels, run, ["gm_map", "map"], per_query=False)
    ap = irmetrics.evaluate(qrels, run, ["map"], per_query=True)["map"]
    assert irmetrics.aggregate(ap, "gmean") == pytest.approx(res["gm_map"], abs=1e-15)
    assert irmetrics.aggregate(ap) == pytest.approx(res["map"], abs=1e-15)


def test_cli_prints_new_measures(tmp_path) -> None:
    import subprocess
    import sys

    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n")
    run.write_text("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\n")
    out = subprocess.run(
        [sys.executable, "-m", "irmetrics", "-q", "-N", "10"]
        + ["-m", "hits.1,3", "-m", "ERR(gmax=4)@2", "-m", "fallout@2", "-m", "dcg_jk.3"]
        + [str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {tuple(line.split()[:2]): line.split()[2] for line in out.splitlines()}
    assert rows[("hits_1", "q1")] == "1.0000"
    assert rows[("hits_3", "all")] == "2.0000"
    # gdeval ERR, gmax 4: R(2) = 3/16 at rank 1, nothing at rank 2
    assert rows[("err_cut_2(gmax=4)", "q1")] == "0.1875"
    # 1 non-relevant of 10 - 2 in the top 2
    assert rows[("fallout_2", "all")] == "0.1250"
    # Jarvelin-Kekalainen, base 2: 2 + 0 + 1/log2(3)
    assert rows[("dcg_jk_3", "q1")] == "2.6309"


def test_published_worked_examples() -> None:
    # Jarvelin & Kekalainen (2002): judgments 3,2,3,0,0,1,2,2,3,0 give DCG (base 2)
    # 3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61 at ranks 1..10.
    labels = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
    qrels = {"q": {f"d{i}": g for i, g in enumerate(labels)}}
    run = {"q": {f"d{i}": float(10 - i) for i in range(10)}}
    res = irmetrics.evaluate(qrels, run, "dcg_jk.1,2,3,4,5,6,7,8,9,10")
    want = [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61]
    assert [round(res[f"dcg_jk_{k}"], 2) for k in range(1, 11)] == want
    # Relevant at ranks 1, 3, 5 of 3 relevant: AP = (1 + 2/3 + 3/5) / 3 ~ 0.756,
    # P@3 = 2/3, P@4 = 1/2, P@5 = 3/5; ÷ min(R, k) at k = 3 gives (1 + 2/3) / 3 too.
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    res = irmetrics.evaluate(qrels, run, ["AP", "P@3", "P@4", "P@5", "relative_map@3"])
    assert res["AP"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert round(res["AP"], 3) == 0.756
    assert res["P@3"] == pytest.approx(2 / 3)
    assert res["P@4"] == 0.5
    assert res["P@5"] == pytest.approx(3 / 5)
    assert res["relative_map@3"] == pytest.approx((1 + 2 / 3) / 3)


def test_aggregate_of_arrays_and_series_against_numpy() -> None:
    """Values given as a numpy array (any real dtype, strided), a pandas Series, a
    list or a dict give numpy's statistics; the array is read at once in Rust, not
    value by value."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    base = rng.random(10_001)
    forms = {
        "float64": base,
        "float32": base.astype(np.float32),
        "strided": np.repeat(base, 2)[::2],
        "series": pd.Series(base),
        "list": base.tolist(),
        "dict": {f"q{i}": v for i, v in enumerate(base.tolist())},
    }
    for name, values in forms.items():
        x = np.asarray(base, dtype=np.float32 if name == "float32" else np.float64)
        x = x.astype(np.float64)
        assert irmetrics.aggregate(values) == pytest.approx(np.mean(x), rel=1e-13), name
        assert irmetrics.aggregate(values, "median") == np.median(x), name
        assert irmetrics.aggregate(values, "std") == pytest.approx(np.std(x, ddof=1), rel=1e-12)
        gmean = np.exp(np.mean(np.log(np.maximum(x, 1e-5))))
        assert irmetrics.aggregate(values, "gmean") == pytest.approx(gmean, rel=1e-12), name
    ints = np.arange(1, 8, dtype=np.int64)
    assert irmetrics.aggregate(ints, "median") == 4.0
    assert irmetrics.bootstrap_ci(base, seed=5) == irmetrics.bootstrap_ci(base.tolist(), seed=5)


def test_std_ddof_against_numpy_and_ranx() -> None:
    """``std``: the sample standard deviation by default (ddof=1), the population one
    with ``ddof=0`` (numpy's ``ddof=0``; ranx's reports use ``np.std``)."""
    import numpy as np

    values = [0.2, 0.0, 0.5, 0.1, 0.35, 1.0, 0.75]
    for ddof in (0, 1):
        want = float(np.std(values, ddof=ddof))
        assert irmetrics.aggregate(values, "std", ddof=ddof) == pytest.approx(want, abs=1e-15)
    assert irmetrics.aggregate(values, "std") == irmetrics.aggregate(values, "std", ddof=1)
    assert irmetrics.aggregate(values, "std_pop") == irmetrics.aggregate(values, "std", ddof=0)
    # one value: no sample spread (NaN), a population spread of 0
    assert math.isnan(irmetrics.aggregate([0.5], "std"))
    assert irmetrics.aggregate([0.5], "std", ddof=0) == 0.0
    with pytest.raises(ValueError, match="ddof applies to how='std' only"):
        irmetrics.aggregate(values, "mean", ddof=0)
    with pytest.raises(ValueError, match="ddof must be 0"):
        irmetrics.aggregate(values, "std", ddof=2)
    # through evaluate: ranx's std of its per-query values is np.std (population)
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 1}}
    run = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}, "q3": {"x": 1.0}}
    import warnings

    import ranx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's compilation warnings
        rr = ranx.Run(run)
        ranx.evaluate(ranx.Qrels(qrels), rr, "map", make_comparable=True)
    per_query = [float(v) for v in rr.scores["map"].values()]
    got = irmetrics.evaluate(qrels, run, "map", aggregate="std", ddof=0)["map"]
    assert got == pytest.approx(float(np.std(per_query)), abs=1e-15)
    with pytest.raises(ValueError):
        irmetrics.evaluate(qrels, run, "map", ddof=0)
