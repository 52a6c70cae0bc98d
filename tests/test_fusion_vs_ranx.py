"""Fusion and normalization against ranx itself (run here, on generated runs).

ranx requires every run to hold the same queries; irmetrics fuses the union and reads a
query missing from a run as an empty list there, so ranx gets the same runs with empty
result dicts added. Scores are compared to 1e-9 (relative 1e-12) and the fused
rankings must agree: irmetrics' order (score descending, ties by document id
descending) never puts a document ranx scores lower above one it scores higher.

Where ranx's result depends on the order of tied documents (its argsort is unstable)
or on Python's set order (the candidates of Borda and Condorcet), the data are chosen
so that no such tie exists; see the README section "Fusion" for what differs then.
ranx's zmuv stops normalizing a thread's share of the queries at an empty one (numba's
`np.std` of no values raises inside `prange`), so zmuv is compared on runs that hold
every query. Under CI a missing ranx fails the session (tests/conftest.py: a skip is a failure).
"""

from __future__ import annotations

import math
import random
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irmetrics

ranx = pytest.importorskip("ranx")

SCORE_METHODS = ["sum", "wsum", "mnz", "wmnz", "anz", "gmnz", "max", "min", "med", "mixed"]
RANK_METHODS = ["rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse"]
NORMS = ["min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"]
N_RUNS = 3
WEIGHTS = [0.2, 0.5, 0.3]


def params_for(method: str) -> dict[str, Any]:
    return {
        "wsum": {"weights": WEIGHTS},
        "wmnz": {"weights": WEIGHTS},
        "mixed": {"weights": WEIGHTS},
        "w_bordafuse": {"weights": WEIGHTS},
        "w_condorcet": {"weights": [0.25, 0.35, 0.45]},
        "gmnz": {"gamma": 1.5},
        "rbc": {"phi": 0.8},
        "rrf": {"k": 60},
        "logn_isr": {"sigma": 0.01},
    }.get(method, {})


def make_runs(seed: int, ties: bool, missing: bool = True) -> list[dict[str, dict[str, float]]]:
    """Runs over overlapping document pools; some queries missing from some runs (if
    `missing`), some with one document; with `ties`, scores repeat within a query."""
    rng = random.Random(seed)
    runs: list[dict[str, dict[str, float]]] = [{} for _ in range(N_RUNS)]
    for q in range(40):
        qid = f"q{q:02d}"
        pool = [f"d{rng.randrange(10**6)}" for _ in range(rng.choice([1, 3, 12, 40]))]
        pool = list(dict.fromkeys(pool))
        for r in range(N_RUNS):
            if rng.random() < 0.15 and r > 0 and missing:
                continue  # the query is missing from this run
            docs = rng.sample(pool, rng.randint(1, len(pool)))
            if ties:
                scores = [rng.choice([0.5, 1.0, 2.0, 3.5]) for _ in docs]
            else:
                scores = [rng.uniform(-5.0, 20.0) for _ in docs]
            runs[r][qid] = dict(zip(docs, scores))
    return runs


def ranx_fuse(runs: list[dict[str, dict[str, float]]], method: str, norm: str | None) -> dict:
    qids = sorted({q for r in runs for q in r})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings
        rruns = [
            ranx.Run({q: r.get(q, {}) for q in qids}, name=f"r{i}") for i, r in enumerate(runs)
        ]
        fused = ranx.fuse(rruns, norm=norm, method=method, params=params_for(method))
        return {q: dict(v) for q, v in fused.run.items() if len(v) > 0}


def check_same(ours: irmetrics.Run, theirs: dict[str, dict[str, float]]) -> None:
    got = ours.to_dict()
    assert sorted(got) == sorted(theirs)
    for qid, expect in theirs.items():
        mine = got[qid]
        assert sorted(mine) == sorted(expect), qid
        for doc, v in expect.items():
            assert math.isclose(mine[doc], v, rel_tol=1e-12, abs_tol=1e-9), (qid, doc)
        # irmetrics' ranking never puts a document ranx scores lower above a higher one
        ranked = sorted(mine, key=lambda d: (-mine[d], [-b for b in d.encode()]))
        for a, b in zip(ranked, ranked[1:]):
            assert expect[a] >= expect[b] - 1e-9, (qid, a, b)


def ours(runs: list[dict[str, dict[str, float]]], method: str, norm: str | None) -> irmetrics.Run:
    return irmetrics.fuse(
        [irmetrics.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)],
        method,
        norm,
        params_for(method) or None,
    )


@pytest.mark.parametrize("norm", [None, *NORMS[:5]])
@pytest.mark.parametrize("method", SCORE_METHODS)
def test_score_methods_with_tied_scores(method: str, norm: str | None) -> None:
    # scores are tied: fine for methods and normalizations that never look at ranks
    runs = make_runs(1, ties=True, missing=norm != "zmuv")
    check_same(ours(runs, method, norm), ranx_fuse(runs, method, norm))


# ranx ranks the documents Borda normalization adds in Python's set order (the string
# hash seed), so rank-based methods after Borda normalization are not compared
COMBOS = [
    (m, n)
    for m in SCORE_METHODS + RANK_METHODS
    for n in [None, *NORMS]
    if not (n == "borda" and m in RANK_METHODS)
]


@pytest.mark.parametrize(("method", "norm"), COMBOS)
def test_every_method_and_norm_without_ties(method: str, norm: str | None) -> None:
    runs = make_runs(2, ties=False, missing=norm != "zmuv")
    check_same(ours(runs, method, norm), ranx_fuse(runs, method, norm))


@pytest.mark.parametrize("method", ["wsum", "w_bordafuse"])
def test_runs_as_a_dict_fuse_in_the_dicts_order(method: str) -> None:
    # {name: run}, as compare takes runs: the weights follow the dict's order; ranx's
    # numbers for the list in that order
    runs = make_runs(3, ties=False)
    named = {f"system {i}": irmetrics.Run.from_dict(r) for i, r in enumerate(runs)}
    got = irmetrics.fuse(named, method, "min-max", params_for(method))
    check_same(got, ranx_fuse(runs, method, "min-max"))
    flipped = dict(reversed(list(named.items())))
    check_same(
        irmetrics.fuse(flipped, method, "min-max", params_for(method)),
        ranx_fuse(runs[::-1], method, "min-max"),
    )


def condorcet_is_total(runs: list[dict[str, dict[str, float]]], qid: str, w: list[float]) -> bool:
    """Whether ranx's pairwise comparison is a strict total order for this query."""
    ranks = []
    for r in runs:
        order = sorted(r.get(qid, {}).items(), key=lambda x: -x[1])
        ranks.append({d: i for i, (d, _) in enumerate(order)})
    docs = sorted({d for r in ranks for d in r})

    def before(x: str, y: str) -> bool:
        xv = sum(wi for wi, r in zip(w, ranks) if r.get(x, 10**6) < r.get(y, 10**6))
        return xv >= sum(w) - xv

    for x in docs:
        for y in docs:
            if x != y and before(x, y) == before(y, x):
                return False
    wins = {x: sum(before(x, y) for y in docs if y != x) for x in docs}
    return sorted(wins.values()) == list(range(len(docs)))  # transitive


@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
def test_condorcet_where_majorities_are_a_total_order(method: str) -> None:
    rng = random.Random(3)
    runs: list[dict[str, dict[str, float]]] = [{} for _ in range(N_RUNS)]
    for q in range(40):
        docs = [f"d{q}_{i}" for i in range(rng.randint(1, 7))]
        for r in range(N_RUNS):
            perm = rng.sample(docs, len(docs))
            runs[r][f"q{q}"] = {d: float(len(perm) - i) for i, d in enumerate(perm)}
    w = params_for(method).get("weights", [1.0] * N_RUNS)
    theirs = ranx_fuse(runs, method, None)
    total = {q for q in theirs if condorcet_is_total(runs, q, w)}
    assert len(total) > 10
    got = ours(runs, method, None).to_dict()
    check_same(irmetrics.Run.from_dict({q: got[q] for q in total}), {q: theirs[q] for q in total})


@pytest.mark.parametrize("norm", NORMS)
def test_normalize_matches_ranx(norm: str) -> None:
    runs = make_runs(4, ties=norm not in ("rank", "borda"))
    run = runs[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if norm == "borda":
            # ranx's borda_norm takes a list of runs; one run's candidates are its own
            theirs = ranx.normalization.borda_norm([ranx.Run(run)])[0]
        else:
            theirs = ranx.normalize(ranx.Run(run), norm=norm)
        expect = {q: dict(v) for q, v in theirs.run.items()}
    check_same(irmetrics.normalize(irmetrics.Run.from_dict(run), norm), expect)


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "irmetrics", *args], capture_output=True, timeout=120
    )


def write_trec(path: Path, run: dict[str, dict[str, float]], tag: str) -> None:
    lines = [
        f"{q} Q0 {d} {i + 1} {s!r} {tag}\n"
        for q, docs in run.items()
        for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))
    ]
    path.write_text("".join(lines))


def read_trec(text: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        q, _, d, _, s, _ = line.split()
        out.setdefault(q, {})[d] = float(s)
    return out


@pytest.mark.parametrize(
    ("args", "method", "norm"),
    [
        ([], "rrf", None),
        (["--method", "wsum", "--norm", "min-max", "--weights", "0.2,0.5,0.3"], "wsum", "min-max"),
        (["--method", "rbc", "--param", "phi=0.8"], "rbc", None),
        (["--method", "mnz", "--norm", "sum"], "mnz", "sum"),
    ],
)
@pytest.mark.parametrize("order", ["sorted", "shared", "own"])
def test_cli_fuse_writes_ranx_numbers(
    args: list[str], method: str, norm: str | None, order: str, tmp_path: Path
) -> None:
    # the files' queries sorted by id (some missing from some runs) or in one shuffled
    # order (the same queries everywhere) are fused as they are read; each in its own
    # order, they are read whole: the numbers are ranx's either way
    runs = make_runs(5, ties=False, missing=order == "sorted")
    rng = random.Random(7)
    shared = sorted(runs[0])
    rng.shuffle(shared)
    paths = []
    for i, r in enumerate(runs):
        qids = sorted(r)
        if order == "shared":
            qids = shared
        elif order == "own":
            rng.shuffle(qids)
        paths.append(tmp_path / f"run{i}.txt")
        write_trec(paths[-1], {q: r[q] for q in qids}, f"r{i}")
    out = cli("fuse", *args, *map(str, paths))
    assert out.returncode == 0, out.stderr
    theirs = ranx_fuse(runs, method, norm)
    check_same(irmetrics.Run.from_string(out.stdout), theirs)
    # ranks run from 1 in the order written; the tag is the method's name
    first = out.stdout.decode().splitlines()[0].split()
    assert first[3] == "1" and first[5] == method
    # --output: the same bytes, written to the file
    dest = tmp_path / "fused.txt"
    again = cli("fuse", *args, "--output", str(dest), *map(str, paths))
    assert again.returncode == 0 and again.stdout == b""
    assert dest.read_bytes() == out.stdout
    assert read_trec(dest.read_text()).keys() == theirs.keys()


def overlapping_runs(seed: int, n_runs: int) -> tuple[dict, list[dict[str, dict[str, float]]]]:
    """Qrels and runs that all retrieve the same documents for every query (ranx's
    optimize_fusion needs equal query sets; full overlap keeps fused scores untied, so
    that the evaluation does not depend on how ties are ordered)."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: list[dict[str, dict[str, float]]] = [{} for _ in range(n_runs)]
    for q in range(30):
        qid = f"q{q:02d}"
        docs = [f"d{q}_{i}" for i in range(rng.randint(5, 30))]
        qrels[qid] = {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(docs, len(docs) // 2)}
        qrels[qid][docs[0]] = 1
        for r in range(n_runs):
            runs[r][qid] = {d: rng.uniform(0.0, 10.0) for d in docs}
    return qrels, runs


@pytest.mark.parametrize(
    ("method", "norm", "n_runs"),
    [
        ("wsum", "min-max", 3),
        ("wmnz", "zmuv", 2),
        ("gmnz", "min-max", 2),
        ("mixed", "sum", 2),
    ],
)
def test_optimize_fusion_matches_ranx(method: str, norm: str | None, n_runs: int) -> None:
    qrels, runs = overlapping_runs(6, n_runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best, report = ranx.optimize_fusion(
            ranx.Qrels(qrels),
            [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)],
            norm=norm,
            method=method,
            metric="ndcg@10",
            return_optimization_report=True,
            show_progress=False,
        )
    mine, table = irmetrics.optimize_fusion(
        irmetrics.Qrels.from_dict(qrels),
        [irmetrics.Run.from_dict(r) for r in runs],
        method,
        norm,
        "ndcg@10",
        return_optimization_report=True,
    )
    assert len(table) == len(report.results)
    for (params, score), config, theirs in zip(table, report.configs, report.results):
        (value,) = params.values()
        expect = [
            float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", config.replace("np.float64", ""))
        ]
        assert (value if isinstance(value, list) else [value]) == expect
        assert math.isclose(score, theirs, rel_tol=1e-12, abs_tol=1e-12), config
    assert list(mine) == list(best)
    (key,) = best
    if key == "weights":
        assert mine[key] == [float(x) for x in best[key]]
    else:
        assert mine[key] == best[key]
    # ranx's code on the compat module: ranx's OptimizationReport
    from irmetrics.compat import ranx as rx

    compat_best, compat_report = rx.optimize_fusion(
        rx.Qrels(qrels),
        [rx.Run(r) for r in runs],
        norm,
        method,
        "ndcg@10",
        return_optimization_report=True,
        rounding_digits=4,
    )
    assert compat_best == mine
    assert compat_report.configs == report.configs
    assert (compat_report.method, compat_report.metric) == (report.method, report.metric)
    for ours, theirs in zip(compat_report.results, report.results):
        assert math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12)
    best_row = [line for line in str(compat_report).splitlines() if line.endswith("<- best")]
    at = int(np.argmax(report.results))
    assert len(best_row) == 1 and best_row[0].startswith(report.configs[at] + " ")
    assert best_row[0].split()[-3] == f"{round(report.results[at], 4):.4f}"


def judged(runs: list[dict[str, dict[str, float]]], seed: int) -> dict[str, dict[str, int]]:
    """Qrels for every query of the runs: some retrieved documents judged, one relevant."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    for qid in sorted({q for r in runs for q in r}):
        docs = sorted({d for r in runs for d in r.get(qid, {})})
        qrels[qid] = {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, (len(docs) + 1) // 2)}
        qrels[qid][rng.choice(docs)] = 1
    return qrels


TRAINED = [
    ("probfuse", {"n_segments": 3}),
    ("segfuse", {}),
    ("posfuse", {}),
    ("slidefuse", {"w": 2}),
    ("bayesfuse", {}),
    ("mapfuse", {}),
]


def trained_case() -> tuple[list[dict], dict, Any, list[Any]]:
    """Runs, qrels, and both as ranx's objects; ranx pairs the qrels' and the runs'
    queries by position: every run holds them all."""
    runs = make_runs(7, ties=False, missing=False)
    qrels = judged(runs, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (
            runs,
            qrels,
            ranx.Qrels(qrels),
            [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)],
        )


def ranx_tables(rq: Any, rruns: list[Any], method: str, params: dict[str, Any]) -> dict:
    """What ranx's ``*_train`` learns, in the params its ``fuse`` takes."""
    f = ranx.fusion
    return {
        "probfuse": lambda: {"probs": f.probfuse_train(rq, rruns, params.get("n_segments"))},
        "segfuse": lambda: {"probs": f.segfuse_train(rq, rruns)},
        "posfuse": lambda: {"probs": f.posfuse_train(rq, rruns)},
        "slidefuse": lambda: {"probs": f.slidefuse_train(rq, rruns), "w": params.get("w")},
        "bayesfuse": lambda: {"log_odds": f.bayesfuse_train(rq, rruns)},
        "mapfuse": lambda: {"map_scores": f.mapfuse_train(rq, rruns)},
    }[method]()


@pytest.mark.parametrize("norm", [None, "min-max"])
@pytest.mark.parametrize(("method", "params"), TRAINED)
def test_trained_methods_match_ranx(method: str, params: dict[str, Any], norm: str | None) -> None:
    runs, qrels, rq, rruns = trained_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learnt = ranx_tables(rq, rruns, method, params)
        fused = ranx.fuse(rruns, norm=norm, method=method, params=learnt)
        theirs = {q: dict(v) for q, v in fused.run.items() if len(v) > 0}
    ours_runs = [irmetrics.Run.from_dict(r) for r in runs]
    mine = irmetrics.fuse(
        ours_runs, method, norm, params or None, qrels=irmetrics.Qrels.from_dict(qrels)
    )
    check_same(mine, theirs)
    # the tables trained apart are ranx's (the runs normalized first, as ranx's
    # optimize_fusion trains on them), and fuse the runs without the qrels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        normed = rruns if norm is None else [ranx.normalize(r, norm) for r in rruns]
        want = ranx_tables(rq, normed, method, params)
    tables = irmetrics.train_fusion(qrels, ours_runs, method, norm, params or None)
    assert tables.keys() == want.keys()
    for key, value in want.items():
        if key == "w":
            assert tables[key] == value
            continue
        assert len(tables[key]) == len(value)
        for a, b in zip(tables[key], value):
            assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), 1e-12, 0)
    check_same(irmetrics.fuse(ours_runs, method, norm, tables), theirs)
    # ranx's own tables (numpy arrays, numpy floats), given as ranx's fuse takes them
    if norm is None:
        check_same(irmetrics.fuse(ours_runs, method, norm, learnt), theirs)


def test_trained_tables_are_checked() -> None:
    runs = [irmetrics.Run.from_dict(r) for r in trained_case()[0][:2]]
    bad = [
        ("probfuse", {"log_odds": [[0.1], [0.2]]}, "takes its tables as 'probs'"),
        ("segfuse", {"probs": [[0.5] * 9, [0.5] * 10]}, "run 1 has 9 values, not 10"),
        ("slidefuse", {"probs": [[0.5], [0.5]]}, "need its window w"),
        ("posfuse", {"probs": [[0.5], [0.5]], "w": 2}, "'w' is not a parameter of 'posfuse'"),
        ("posfuse", {"probs": [[0.5], [float("nan")]]}, "must be finite"),
        ("posfuse", {"probs": [[0.5]]}, "holds tables for 1 runs; 2 runs given"),
        ("mapfuse", {"map_scores": "0.3"}, "map_scores must be a sequence"),
        ("rrf", {"probs": [[0.5], [0.5]]}, "'rrf' is not trained on qrels"),
    ]
    for method, params, message in bad:
        with pytest.raises(irmetrics.InputError, match=re.escape(message)):
            irmetrics.fuse(runs, method, None, params)
    with pytest.raises(irmetrics.InputError, match="not both"):
        irmetrics.fuse(runs, "posfuse", None, {"probs": [[0.5], [0.5]]}, qrels={"q": {"d": 1}})


@pytest.mark.parametrize("method", ["segfuse", "posfuse", "bayesfuse", "mapfuse", "probfuse"])
def test_compat_optimize_fusion_gives_ranxs_tables_to_fuse(method: str) -> None:
    # ranx's optimize_fusion of a trained method returns its tables, which fuse takes
    from irmetrics.compat import ranx as rx

    runs, qrels, rq, rruns = trained_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = rx.optimize_fusion(rx.Qrels(qrels), [rx.Run(r) for r in runs], None, method)
        if method == "probfuse":
            # (ranx's choice of n_segments rests on its tie order: its tables at ours)
            theirs = ranx_tables(rq, rruns, method, {"n_segments": len(ours["probs"][0])})
        else:
            theirs = ranx.optimize_fusion(rq, rruns, norm=None, method=method)
        fused = ranx.fuse(rruns, norm=None, method=method, params=theirs)
    assert ours.keys() == theirs.keys()
    for a, b in zip(next(iter(ours.values())), next(iter(theirs.values()))):
        assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), 1e-12, 0)
    mine = rx.fuse([rx.Run(r) for r in runs], None, method, ours)
    check_same(irmetrics.Run.from_dict(mine.to_dict()), {q: dict(v) for q, v in fused.run.items()})
    if method != "probfuse":
        with pytest.raises(irmetrics.InputError, match="does not support optimization report"):
            rx.optimize_fusion(qrels, runs, None, method, return_optimization_report=True)


@pytest.mark.parametrize("method", ["probfuse", "slidefuse"])
def test_optimize_trained_methods_matches_ranx_grid(method: str) -> None:
    """probfuse and slidefuse tie many fused scores, so ranx's own evaluation (ties in
    its argsort order) is not comparable: ranx trains and fuses each setting of its grid
    (its report names them) and irmetrics evaluates ranx's fused runs."""
    qrels, runs = overlapping_runs(9, 2)
    iq = irmetrics.Qrels.from_dict(qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rq = ranx.Qrels(qrels)
        rruns = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]
        _, report = ranx.optimize_fusion(
            rq,
            rruns,
            norm=None,
            method=method,
            metric="ndcg@10",
            return_optimization_report=True,
            show_progress=False,
        )
        expect = []
        slide_probs = ranx.fusion.slidefuse_train(rq, rruns)
        for config in report.configs:
            if method == "probfuse":
                learnt = {"probs": ranx.fusion.probfuse_train(rq, rruns, int(config))}
            else:
                learnt = {"probs": slide_probs, "w": int(config)}
            fused = ranx.fuse(rruns, norm=None, method=method, params=learnt)
            run = irmetrics.Run.from_dict({q: dict(v) for q, v in fused.run.items()})
            expect.append(irmetrics.evaluate(iq, run, ["ndcg@10"])["ndcg@10"])
    mine, table = irmetrics.optimize_fusion(
        iq,
        [irmetrics.Run.from_dict(r) for r in runs],
        method,
        None,
        "ndcg@10",
        return_optimization_report=True,
    )
    name = "n_segments" if method == "probfuse" else "w"
    assert [p for p, _ in table] == [{name: int(c)} for c in report.configs]
    assert len(table) == 100
    for (_, score), want in zip(table, expect):
        assert math.isclose(score, want, rel_tol=1e-12, abs_tol=1e-12)
    best_at = max(i for i, x in enumerate(expect) if x == max(expect))
    assert mine == table[best_at][0]


def write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    path.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items())
    )


def test_cli_optimize_and_trained_fusion(tmp_path: Path) -> None:
    qrels, runs = overlapping_runs(6, 2)
    paths = [tmp_path / "r0.txt", tmp_path / "r1.txt"]
    for i, (p, r) in enumerate(zip(paths, runs)):
        write_trec(p, r, f"r{i}")
    qpath = tmp_path / "qrels.txt"
    write_qrels(qpath, qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rq = ranx.Qrels(qrels)
        rruns = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]
        best, report = ranx.optimize_fusion(
            rq,
            rruns,
            norm="min-max",
            method="wsum",
            metric="ndcg@10",
            return_optimization_report=True,
            show_progress=False,
        )
        probs = ranx.fusion.probfuse_train(rq, rruns, 4)
        fused = ranx.fuse(rruns, norm=None, method="probfuse", params={"probs": probs})
        theirs = {q: dict(v) for q, v in fused.run.items()}
    out = cli(
        "fuse",
        "--optimize",
        "--metric",
        "ndcg@10",
        "--method",
        "wsum",
        "--norm",
        "min-max",
        "--report",
        str(qpath),
        *map(str, paths),
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert len(lines) == len(report.results) + 1
    for line, theirs_score in zip(lines, report.results):
        assert math.isclose(float(line.split("\t")[1]), theirs_score, rel_tol=1e-12)
    w = ",".join(str(float(x)) for x in best["weights"])
    assert lines[-1].startswith(f"best\tweights={w}\t")
    out = cli(
        "fuse",
        "--method",
        "probfuse",
        "--param",
        "n_segments=4",
        "--qrels",
        str(qpath),
        *map(str, paths),
    )
    assert out.returncode == 0, out.stderr
    check_same(irmetrics.Run.from_string(out.stdout), theirs)
