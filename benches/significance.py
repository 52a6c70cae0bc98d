#!/usr/bin/env python3
"""Benchmark ``irmetrics.compare`` against ranx's ``compare`` (significance tests).

The issue's workload: 5 runs x 5,000 queries x 100 documents, 4 measures, every pair
of runs tested with the paired t-test, Fisher's randomization test (1,000 and 10,000
resamples) and Tukey's HSD; then irmetrics alone on 50 systems x 10,000 queries x
10,000 randomizations (all 1,225 pairs, one measure, per-query values given).

Each tool runs in a fresh process that builds the same seeded data in memory, loads
the runs, warms up (ranx compiles its numba kernels on a small compare first), then
times each ``compare`` call (evaluation included, as ranx's compare evaluates too).

    python benches/significance.py                       # both tools, plain tables
    python benches/significance.py --json sig.json --markdown
    python benches/significance.py --tools irmetrics      # ranx's Fisher 10k is slow

Needs numpy; ranx is optional (a "not installed" row).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

N_RUNS, N_QUERIES, DEPTH = 5, 5_000, 100
MEASURES = ["ndcg@10", "map@100", "precision@10", "recall@100"]
# (label, irmetrics test and resamples, ranx stat_test and n_permutations)
CELLS = [
    ("t-test", ("t", 1), ("student", 1)),
    ("Fisher 1,000", ("randomization", 1_000), ("fisher", 1_000)),
    ("Fisher 10,000", ("randomization", 10_000), ("fisher", 10_000)),
    ("Tukey HSD", ("tukey", 1), ("tukey", 1)),
    ("Wilcoxon", ("wilcoxon", 1), None),
    ("bootstrap 10,000", ("bootstrap", 10_000), None),
    ("randomized Tukey 10,000", ("randomized_tukey", 10_000), None),
]
BIG = (50, 10_000, 10_000)  # systems, queries, randomizations


def make_data(seed=42):
    """Qrels (10-30 judgments per query, labels 0-3) and runs of graded quality, with
    distinct scores."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, runs = {}, [{} for _ in range(N_RUNS)]
    pool = [f"d{i}" for i in range(2 * DEPTH)]
    for q in range(N_QUERIES):
        qid = f"q{q}"
        judged = rng.choice(len(pool), int(rng.integers(10, 31)), replace=False)
        labels = rng.integers(0, 4, len(judged))
        labels[0] = max(labels[0], 1)
        rel = {pool[j]: int(lab) for j, lab in zip(judged, labels)}
        qrels[qid] = rel
        gain = np.zeros(len(pool))
        gain[judged] = labels
        for s in range(N_RUNS):
            scores = rng.random(len(pool)) + 0.1 * s * gain
            top = np.argsort(-scores)[:DEPTH]
            runs[s][qid] = {pool[i]: float(scores[i]) for i in top}
    return qrels, runs


def child_irmetrics():
    import numpy as np

    import irmetrics

    qrels, runs = make_data()
    t = time.perf_counter()
    q = irmetrics.Qrels.from_dict(qrels)
    rs = {f"run{i}": irmetrics.Run.from_dict(r, name=f"run{i}") for i, r in enumerate(runs)}
    load = time.perf_counter() - t
    irmetrics.compare(q, rs, MEASURES[:1])  # warm-up
    out = {"load": load, "cells": {}}
    for label, (test, n), _ in CELLS:
        t = time.perf_counter()
        rep = irmetrics.compare(q, rs, MEASURES, test=test, n_resamples=n, correction="none")
        out["cells"][label] = time.perf_counter() - t
        out.setdefault("pvalues", {})[label] = [p["pvalue"] for p in rep.pairs]
    k, nq, nr = BIG
    rng = np.random.default_rng(1)
    base = rng.random(nq)
    values = {f"s{i}": np.clip(base + rng.normal(0.001 * i, 0.2, nq), 0, 1) for i in range(k)}
    t = time.perf_counter()
    rep = irmetrics.compare_values(
        {"AP": values}, test="randomization", n_resamples=nr, correction="holm"
    )
    out["big"] = time.perf_counter() - t
    out["big_pairs"] = len(rep.pairs)
    return out


def child_ranx():
    import warnings

    warnings.simplefilter("ignore")
    import ranx

    qrels, runs = make_data()
    t = time.perf_counter()
    q = ranx.Qrels(qrels)
    rs = [ranx.Run(r, name=f"run{i}") for i, r in enumerate(runs)]
    load = time.perf_counter() - t
    # warm-up: compile the numba kernels (evaluation and Fisher) on a small compare
    small_q = ranx.Qrels({k: qrels[k] for k in list(qrels)[:50]})
    small = [ranx.Run({k: r[k] for k in list(r)[:50]}, name=f"s{i}") for i, r in enumerate(runs)]
    t = time.perf_counter()
    for st in ("student", "fisher", "tukey"):
        ranx.compare(small_q, small, MEASURES, stat_test=st, n_permutations=10)
    jit = time.perf_counter() - t
    out = {"load": load, "jit": jit, "cells": {}}
    for label, _, spec in CELLS:
        if spec is None:
            continue
        st, n = spec
        t = time.perf_counter()
        rep = ranx.compare(q, rs, MEASURES, stat_test=st, n_permutations=n, max_p=0.05)
        out["cells"][label] = time.perf_counter() - t
        names = [r.name for r in rs]
        out.setdefault("pvalues", {})[label] = [
            rep.comparisons[a, b][m]["p_value"]
            for m in MEASURES
            for i, a in enumerate(names)
            for b in names[i + 1 :]
        ]
    return out


def machine():
    import platform

    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def run_child(tool, timeout):
    p = subprocess.run(
        [sys.executable, __file__, "--child", tool],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if p.returncode != 0:
        tail = p.stderr.strip().splitlines()[-1:] or ["?"]
        return {"error": tail[0]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tools", default="irmetrics,ranx")
    p.add_argument("--json", help="write every number to this file")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        fn = {"irmetrics": child_irmetrics, "ranx": child_ranx}[a.child]
        print(json.dumps(fn()))
        return 0
    res = {"machine": machine()}
    for tool in a.tools.split(","):
        print(f"running {tool} ...", file=sys.stderr)
        res[tool] = run_child(tool, a.timeout)
    sep = " | " if a.markdown else "  "
    head = ["test (5 runs x 5,000 queries, 4 measures)", "irmetrics s", "ranx s", "speed-up"]
    lines = [sep.join(head)]
    if a.markdown:
        lines = ["| " + lines[0] + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    irm, rx = res.get("irmetrics", {}), res.get("ranx", {})
    for label, _, _ in CELLS:
        ti = irm.get("cells", {}).get(label)
        tr = rx.get("cells", {}).get(label)
        cells = [
            label,
            f"{ti:.3f}" if ti is not None else "-",
            f"{tr:.2f}" if tr is not None else "-",
            f"{tr / ti:.0f}x" if ti and tr else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |" if a.markdown else sep.join(cells))
    print("\n".join(lines))
    if "big" in irm:
        k, nq, nr = BIG
        print(
            f"\nirmetrics: {k} systems x {nq:,} queries x {nr:,} randomizations "
            f"({irm['big_pairs']} pairs, one measure): {irm['big']:.2f} s"
        )
    for tool in ("irmetrics", "ranx"):
        if "load" in res.get(tool, {}):
            extra = f", JIT warm-up {res[tool]['jit']:.1f} s" if "jit" in res[tool] else ""
            print(f"{tool}: loading the runs {res[tool]['load']:.1f} s{extra}")
        elif "error" in res.get(tool, {}):
            print(f"{tool}: {res[tool]['error']}")
    print(f"machine: {res['machine']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
