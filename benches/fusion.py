#!/usr/bin/env python3
"""Fusion: irmetrics against ranx, side by side (see benches/README.md, "Fusion").

    python benches/fusion.py                      # 5 runs x 5,000 queries x 100 docs
    python benches/fusion.py --queries 1000 --repeat 3 --json fusion.json --markdown

Each tool runs in a fresh process (`--child`): the runs are built in memory from the
same seeded dicts (not timed), then each method is timed cold (the first call: ranx
compiles or loads its numba kernels then) and warm (the median of `--repeat` further
calls). The fused scores of the two tools are checked to agree (1e-9) unless
`--no-check`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

METHODS = (("rrf", None, None), ("wsum", "min-max", "weights"), ("mnz", None, None))


def make_runs(n_runs: int, nq: int, depth: int, seed: int) -> list[dict[str, dict[str, float]]]:
    """Runs over overlapping pools: each retrieves `depth` of 2 * depth candidates."""
    import random

    rng = random.Random(seed)
    runs: list[dict[str, dict[str, float]]] = [{} for _ in range(n_runs)]
    for q in range(nq):
        pool = [f"D{q}_{i}" for i in range(2 * depth)]
        for r in range(n_runs):
            docs = rng.sample(pool, depth)
            runs[r][f"Q{q}"] = {d: rng.uniform(0.0, 30.0) for d in docs}
    return runs


def params(method: str, n_runs: int) -> dict | None:
    if method == "wsum":
        return {"weights": [1.0 / n_runs] * n_runs}
    return None


def child(tool: str, args: dict) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    runs = make_runs(args["runs"], args["queries"], args["depth"], args["seed"])
    out: dict = {"tool": tool, "methods": {}}
    if tool == "irmetrics":
        import irmetrics

        objs = [irmetrics.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]

        def fuse(method, norm):
            return irmetrics.fuse(objs, method, norm, params(method, len(objs)))

        def scores(run):
            return run.to_dict()
    else:
        import ranx

        objs = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]

        def fuse(method, norm):
            return ranx.fuse(objs, norm=norm, method=method, params=params(method, len(objs)))

        def scores(run):
            return {q: dict(v) for q, v in run.run.items()}

    for method, norm, _ in METHODS:
        t0 = time.perf_counter()
        fused = fuse(method, norm)
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(args["repeat"]):
            t0 = time.perf_counter()
            fused = fuse(method, norm)
            warm.append(time.perf_counter() - t0)
        warm.sort()
        key = f"{method}" + (f" {norm}" if norm else "")
        out["methods"][key] = {"cold_s": cold, "warm_s": warm[len(warm) // 2]}
        if args["check"]:
            out["methods"][key]["scores"] = scores(fused)
    return out


def compare(a: dict, b: dict) -> str:
    worst = 0.0
    for q, docs in b.items():
        mine = a.get(q, {})
        if sorted(mine) != sorted(docs):
            return f"documents differ for {q}"
        worst = max([worst, *(abs(mine[d] - v) for d, v in docs.items())])
    return "agree" if worst <= 1e-9 else f"differ by {worst:.3g}"


def main() -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--queries", type=int, default=5_000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--tools", default="irmetrics,ranx")
    p.add_argument("--json")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--no-check", action="store_true")
    p.add_argument("--child")
    a = p.parse_args()
    args = {
        "runs": a.runs,
        "queries": a.queries,
        "depth": a.depth,
        "seed": a.seed,
        "repeat": a.repeat,
        "check": not a.no_check,
    }
    if a.child:
        json.dump(child(a.child, args), sys.stdout)
        return 0
    results = {}
    for tool in a.tools.split(","):
        print(f"... {tool}", file=sys.stderr)
        cmd = [sys.executable, __file__, "--child", tool, *sys.argv[1:]]
        done = subprocess.run(cmd, capture_output=True, env=os.environ, timeout=3600)
        if done.returncode != 0:
            print(done.stderr.decode()[-2000:], file=sys.stderr)
            results[tool] = None
            continue
        results[tool] = json.loads(done.stdout)
    shape = f"{a.runs} runs x {a.queries:,} queries x {a.depth} docs"
    lines = [f"Fusion, {shape} ({os.cpu_count()} cores; seconds, warm = median of {a.repeat})"]
    head = "| method | irmetrics warm | irmetrics cold | ranx warm | ranx cold | speed-up (warm) |"
    lines += ["", head, "|---|---|---|---|---|---|"]
    checks = []
    for method, norm, _ in METHODS:
        key = f"{method}" + (f" {norm}" if norm else "")
        irm = (results.get("irmetrics") or {}).get("methods", {}).get(key)
        rx = (results.get("ranx") or {}).get("methods", {}).get(key)

        def cell(x, field):
            return f"{x[field]:.3f}" if x else "-"

        speed = f"{rx['warm_s'] / irm['warm_s']:.1f}x" if irm and rx else "-"
        lines.append(
            f"| {key} | {cell(irm, 'warm_s')} | {cell(irm, 'cold_s')} | {cell(rx, 'warm_s')}"
            f" | {cell(rx, 'cold_s')} | {speed} |"
        )
        if irm and rx and "scores" in irm and "scores" in rx:
            checks.append(f"{key}: {compare(irm['scores'], rx['scores'])}")
    text = "\n".join(lines + ([""] + checks if checks else []))
    print(text if a.markdown else text.replace("|", " ").replace("---", ""))
    if a.json:
        for r in results.values():
            for m in (r or {}).get("methods", {}).values():
                m.pop("scores", None)
        with open(a.json, "w") as f:
            json.dump({"shape": shape, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
