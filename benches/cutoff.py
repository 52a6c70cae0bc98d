#!/usr/bin/env python3
"""Measures that stop at a cut-off: irmetrics against pytrec_eval (see benches/README.md,
"Cut-off measures").

    python benches/cutoff.py                               # 5,000 queries x 100 docs
    python benches/cutoff.py --queries 10000 --depth 1000 --baseline /tmp/oldpkg

A seeded run as nested dicts (each query's documents in no particular order, scores
with ties) and qrels over the same pools. Each tool runs in a fresh process: the inputs
are built first (not timed; irmetrics `Qrels.from_dict`, and `Run.from_dict` for the
`Run` route; pytrec_eval `RelevanceEvaluator`), then `nDCG@10` alone and `nDCG@10` with
`map` are evaluated `--repeat` times each (the median is reported): irmetrics on the
`Run` and on the dict itself (converted in the call, as pytrec_eval's `evaluate` does).
When every measure stops at a cut-off, irmetrics judges only that many documents of each
ranking and selects them without sorting the rest; `map` reads whole rankings, so its
rows are the cost of judging every document. `--baseline DIR` adds the irmetrics found
on DIR (another build) as a column. The tools' means must agree to 1e-12.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MEASURES = {"ndcg@10": ["ndcg_cut.10"], "ndcg@10 + map": ["ndcg_cut.10", "map"]}


def make_data(nq: int, depth: int, seed: int):
    import random

    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(nq):
        pool = [f"D{q}_{i}" for i in range(2 * depth)]
        docs = rng.sample(pool, depth)  # in no order of score
        run[f"Q{q}"] = {d: float(rng.randint(0, 50)) for d in docs}  # ties
        qrels[f"Q{q}"] = {d: rng.randint(0, 3) for d in rng.sample(pool, 20)}
    return qrels, run


def child(tool: str, a: dict) -> dict:
    qrels, run = make_data(a["queries"], a["depth"], a["seed"])
    calls = {}
    if tool == "pytrec_eval":
        import pytrec_eval

        for key, ms in MEASURES.items():
            ev = pytrec_eval.RelevanceEvaluator(qrels, set(ms))

            def evaluate(ev=ev):
                per_query = ev.evaluate(run)
                return sum(v["ndcg_cut_10"] for v in per_query.values()) / len(per_query)

            calls[("dict", key)] = evaluate
    else:
        import irmetrics

        r, q = irmetrics.Run.from_dict(run), irmetrics.Qrels.from_dict(qrels)
        for key, ms in MEASURES.items():
            for route, given in (("Run", r), ("dict", run)):
                calls[(route, key)] = lambda g=given, ms=ms: irmetrics.evaluate(q, g, ms)[
                    "ndcg_cut.10"
                ]
    out = {}
    for (route, key), evaluate in calls.items():
        mean = evaluate()  # warm-up
        times = []
        for _ in range(a["repeat"]):
            t0 = time.perf_counter()
            evaluate()
            times.append(time.perf_counter() - t0)
        times.sort()
        out[f"{route}|{key}"] = {"s": times[len(times) // 2], "mean": mean}
    return out


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=5000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--baseline", metavar="DIR", help="PYTHONPATH of another irmetrics build")
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        tool, args = a.child.split(":", 1)
        print(json.dumps(child(tool, json.loads(args))))
        return 0
    args = {"queries": a.queries, "depth": a.depth, "seed": a.seed, "repeat": a.repeat}
    tools = [("irmetrics", "irmetrics", None)]
    if a.baseline:
        tools.append(("irmetrics (baseline)", "irmetrics", a.baseline))
    tools.append(("pytrec_eval", "pytrec_eval", None))
    results = {}
    for name, tool, path in tools:
        env = dict(os.environ)
        if path:
            env["PYTHONPATH"] = os.path.abspath(path)
        cmd = [sys.executable, __file__, "--child", f"{tool}:{json.dumps(args)}"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{name} failed:\n{done.stderr}", file=sys.stderr)
            return 1
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{a.queries:,} queries x {a.depth} docs, {os.cpu_count()} cores; seconds, median")
    print()
    print("| route | measures | " + " | ".join(results) + " |")
    print("|---|---|" + "---|" * len(results))
    ok = True
    for route in ("Run", "dict"):
        for key in MEASURES:
            cell = f"{route}|{key}"
            got = {n: r[cell] for n, r in results.items() if cell in r}
            row = [f"{got[n]['s']:.4f}" if n in got else "-" for n in results]
            print(f"| {route} | {key} | " + " | ".join(row) + " |")
            means = [g["mean"] for g in got.values()]
            ok &= max(means) - min(means) <= 1e-12
    print()
    print("means agree" if ok else f"means DIFFER: {results}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
