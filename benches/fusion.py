#!/usr/bin/env python3
"""Fusion: irmetrics against ranx, side by side (see benches/README.md, "Fusion").

    python benches/fusion.py                      # 5 runs x 5,000 queries x 100 docs
    python benches/fusion.py --queries 1000 --repeat 3 --json fusion.json --markdown
    python benches/fusion.py --files /tmp/fuse --runs 10 --queries 10000 --depth 1000 \\
        --build new=python --build old=/tmp/old     # the command line on run files
    python benches/fusion.py --optimize             # optimize_fusion: wsum, 2 runs, nDCG@10

Each tool runs in a fresh process (`--child`): the runs are built in memory from the
same seeded dicts (not timed), then each method is timed cold (the first call: ranx
compiles or loads its numba kernels then) and warm (the median of `--repeat` further
calls). The fused scores of the two tools are checked to agree (1e-9) unless
`--no-check`.

With `--files DIR`, `irmetrics fuse --method M RUN...` runs on run files written there
(seeded, cached; each run retrieves `depth` of a query's 2 x depth candidates), once
per build (`--build NAME=DIR`: DIR on PYTHONPATH holds that build's irmetrics),
alternating, each a fresh process whose wall time and peak RSS are measured; the
fused outputs of the builds must be identical. ranx is not run there.

With `--optimize`, each tool's `optimize_fusion` (ranx's grid; wsum with min-max over the
first two runs, nDCG@10, by default) is timed instead, on seeded qrels over the same
queries (ranx requires the qrels' and runs' query sets to be equal); the tools' best
settings must be the same and every setting's score must agree (1e-9).

With `--trained`, the methods trained on qrels (probfuse with 10 segments, posfuse,
bayesfuse) on the same seeded qrels: each tool's training (`irmetrics.train_fusion`,
ranx's `*_train`) and the fusion with the tables it learnt (`fuse(..., params=tables)`)
are timed apart, cold and warm; the fused scores must agree (1e-9).
"""

from __future__ import annotations

import json
import os
import re
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


def make_qrels(runs: list[dict[str, dict[str, float]]], seed: int) -> dict[str, dict[str, int]]:
    """Judgments of 20 documents of each query's pool (labels 0-3, at least one
    relevant), graded by a hidden utility that the first two runs' scores follow (0.6
    and 0.4 of it, plus noise): the best weights are not a corner of the grid."""
    import random

    rng = random.Random(seed + 1)
    qrels: dict[str, dict[str, int]] = {}
    for q in runs[0]:
        pool = sorted(set().union(*(r[q] for r in runs[:2])))
        utility = {
            d: 0.6 * runs[0][q].get(d, 0.0) + 0.4 * runs[1][q].get(d, 0.0) + rng.gauss(0, 5)
            for d in pool
        }
        judged = sorted(rng.sample(pool, min(20, len(pool))), key=utility.__getitem__)
        qrels[q] = {d: min(3, i * 4 // len(judged)) for i, d in enumerate(judged)}
    return qrels


def cold_warm(repeat: int, f, *args) -> tuple:
    """f(*args)'s last result, the time of its first call and the median of `repeat`
    more."""
    t0 = time.perf_counter()
    out = f(*args)
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f(*args)
        warm.append(time.perf_counter() - t0)
    warm.sort()
    return out, cold, warm[len(warm) // 2]


TRAINED = (("probfuse", {"n_segments": 10}), ("posfuse", {}), ("bayesfuse", {}))


def trained_child(tool: str, args: dict) -> dict:
    """Training and fusing with the tables learnt, each timed cold and warm."""
    import warnings

    warnings.simplefilter("ignore")
    runs = make_runs(args["runs"], args["queries"], args["depth"], args["seed"])
    qd = make_qrels(runs, args["seed"])
    out: dict = {"tool": tool, "methods": {}}
    if tool == "irmetrics":
        import irmetrics

        objs = [irmetrics.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]
        qrels = irmetrics.Qrels.from_dict(qd)

        def train(method, params):
            return irmetrics.train_fusion(qrels, objs, method, None, params or None)

        def fuse(method, tables):
            return irmetrics.fuse(objs, method, None, tables)

        def scores(run):
            return run.to_dict()
    else:
        import ranx

        objs = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]
        qrels = ranx.Qrels(qd)
        f = ranx.fusion

        def train(method, params):
            return {
                "probfuse": lambda: {
                    "probs": f.probfuse_train(qrels, objs, params.get("n_segments"))
                },
                "posfuse": lambda: {"probs": f.posfuse_train(qrels, objs)},
                "bayesfuse": lambda: {"log_odds": f.bayesfuse_train(qrels, objs)},
            }[method]()

        def fuse(method, tables):
            return ranx.fuse(objs, norm=None, method=method, params=tables)

        def scores(run):
            return {q: dict(v) for q, v in run.run.items()}

    for method, params in TRAINED:
        tables, train_cold, train_warm = cold_warm(args["repeat"], train, method, params)
        fused, fuse_cold, fuse_warm = cold_warm(args["repeat"], fuse, method, tables)
        out["methods"][method] = {
            "train_cold_s": train_cold,
            "train_warm_s": train_warm,
            "fuse_cold_s": fuse_cold,
            "fuse_warm_s": fuse_warm,
        }
        if args["check"]:
            out["methods"][method]["scores"] = scores(fused)
    return out


def trained_report(a, results: dict) -> str:
    shape = f"{a.runs} runs x {a.queries:,} queries x {a.depth} docs"
    lines = [f"Trained fusion, {shape} ({os.cpu_count()} cores; s, warm = median of {a.repeat})"]
    head = "| method | irmetrics train | irmetrics fuse | ranx train | ranx fuse | speed-up |"
    lines += ["", head, "|---|---|---|---|---|---|"]
    checks = []
    for method, _ in TRAINED:
        irm, rx = both_tools(results, method)

        def cell(x, step):
            return f"{x[step + '_warm_s']:.3f} ({x[step + '_cold_s']:.3f} cold)" if x else "-"

        def both(x):
            return x["train_warm_s"] + x["fuse_warm_s"]

        speed = f"{both(rx) / both(irm):.1f}x" if irm and rx else "-"
        lines.append(
            f"| {method} | {cell(irm, 'train')} | {cell(irm, 'fuse')} | {cell(rx, 'train')}"
            f" | {cell(rx, 'fuse')} | {speed} |"
        )
        checks += agreement(method, irm, rx)
    return "\n".join(lines + ([""] + checks if checks else []))


def optimize_child(tool: str, args: dict) -> dict:
    """optimize_fusion timed cold and warm; the trials' scores kept for the check."""
    import warnings

    warnings.simplefilter("ignore")
    runs = make_runs(args["runs"], args["queries"], args["depth"], args["seed"])[:2]
    qd = make_qrels(runs, args["seed"])
    method, norm, metric = args["opt_method"], args["opt_norm"], args["metric"]
    if tool == "irmetrics":
        import irmetrics

        objs = [irmetrics.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]
        qrels = irmetrics.Qrels.from_dict(qd)

        def optimize():
            best, table = irmetrics.optimize_fusion(
                qrels, objs, method, norm, metric, return_optimization_report=True
            )
            return best, [(_floats(list(p.values())[0]), score) for p, score in table]
    else:
        import ranx

        objs = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]
        qrels = ranx.Qrels(qd)

        def optimize():
            best, report = ranx.optimize_fusion(
                qrels,
                objs,
                norm,
                method,
                metric,
                return_optimization_report=True,
                show_progress=False,
            )
            numbers = (
                re.findall(r"-?\d+(?:\.\d+)?", c.replace("np.float64", "")) for c in report.configs
            )
            return best, [([float(x) for x in n], v) for n, v in zip(numbers, report.results)]

    (best, trials), cold, warm = cold_warm(args["repeat"], optimize)
    (key,) = best
    return {
        "tool": tool,
        "cold_s": cold,
        "warm_s": warm,
        "best": {key: _floats(best[key])},
        "trials": trials,
    }


def _floats(v) -> list[float]:
    return [float(x) for x in v] if isinstance(v, (list, tuple)) else [float(v)]


def optimize_report(a, results: dict) -> str:
    irm, rx = results.get("irmetrics"), results.get("ranx")
    shape = f"2 runs x {a.queries:,} queries x {a.depth} docs"
    what = f"{a.opt_method}" + (f" {a.opt_norm}" if a.opt_norm else "") + f", {a.metric}"
    lines = [f"optimize_fusion, {what}, {shape} ({os.cpu_count()} cores; seconds)", ""]
    lines += ["| tool | warm | cold | settings |", "|---|---|---|---|"]
    for name, r in (("irmetrics", irm), ("ranx", rx)):
        if r:
            lines.append(f"| {name} | {r['warm_s']:.3f} | {r['cold_s']:.3f} | {len(r['trials'])} |")
        else:
            lines.append(f"| {name} | - | - | - |")
    if irm and rx:
        lines.append("")
        warm, cold = rx["warm_s"] / irm["warm_s"], rx["cold_s"] / irm["cold_s"]
        lines.append(f"speed-up: warm {warm:.1f}x, cold {cold:.1f}x")
        same_best = irm["best"] == rx["best"]
        worst = max(
            (abs(x[1] - y[1]) for x, y in zip(irm["trials"], rx["trials"])), default=float("inf")
        )
        settings = [x[0] for x in irm["trials"]] == [y[0] for y in rx["trials"]]
        lines.append(
            f"best setting: {'same' if same_best else 'DIFFERS'} ({irm['best']}); settings "
            f"{'in the same order' if settings else 'DIFFER'}; scores "
            + ("agree" if worst <= 1e-9 else f"differ by {worst:.3g}")
        )
    return "\n".join(lines)


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
        fused, cold, warm = cold_warm(args["repeat"], fuse, method, norm)
        key = f"{method}" + (f" {norm}" if norm else "")
        out["methods"][key] = {"cold_s": cold, "warm_s": warm}
        if args["check"]:
            out["methods"][key]["scores"] = scores(fused)
    return out


def write_run_files(data_dir: str, n_runs: int, nq: int, depth: int, seed: int) -> list[str]:
    """Run files for the command line (cached): query `Q<q>`, documents `D<q>_<i>` of
    a pool of 2 x depth per query, uniform scores; written by irmetrics (byte order)."""
    os.makedirs(data_dir, exist_ok=True)
    paths = []
    for r in range(n_runs):
        path = os.path.join(data_dir, f"fuse-{nq}x{depth}-seed{seed}-r{r}.run")
        paths.append(path)
        if os.path.exists(path):
            continue
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        import irmetrics

        rng = np.random.default_rng([seed, r])
        q = np.repeat(np.arange(nq, dtype=np.int64), depth)
        pick = np.argsort(rng.random((nq, 2 * depth)), axis=1)[:, :depth].ravel()
        qs = pc.cast(pa.array(q), pa.string())
        table = pa.table(
            {
                "query": pc.binary_join_element_wise("Q", qs, ""),
                "doc": pc.binary_join_element_wise(
                    "D", qs, pc.cast(pa.array(pick), pa.string()), "_"
                ),
                "score": pa.array(rng.uniform(0.0, 30.0, nq * depth)),
            }
        )
        run = irmetrics.Run.from_arrow(table, query="query", doc="doc", score="score", name=f"r{r}")
        run.to_file(path + ".tmp")
        os.replace(path + ".tmp", path)
        print(f"wrote {path}", file=sys.stderr)
    return paths


def files_main(a) -> int:
    """`irmetrics fuse` on run files, build against build (see the module's comment)."""
    import hashlib

    import compare as common  # benches/compare.py: spawn, peak RSS

    builds = [b.split("=", 1) for b in a.build] or [["irmetrics", ""]]
    if builds[0][1]:
        sys.path.insert(0, builds[0][1])  # the files are written by the first build
    paths = write_run_files(a.files, a.runs, a.queries, a.depth, a.seed)
    size = sum(os.path.getsize(p) for p in paths) / 2**20
    cells: dict = {name: [] for name, _ in builds}
    digests = {}
    for i in range(a.repeat):
        for name, path in builds:
            env = dict(os.environ)
            if path:
                env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
            out = os.path.join(a.files, f"fused-{name}.run")
            argv = [sys.executable, "-m", "irmetrics", "fuse", "--method", a.method]
            res = common.spawn(argv + ["--output", out, *paths], 3600, env)
            if res["rc"] != 0:
                raise SystemExit(f"{name}: {res.get('error')}")
            cells[name].append((res["wall"], res["peak_rss"] / 2**20))
            if i == 0:
                h = hashlib.sha256()
                with open(out, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                digests[name] = h.hexdigest()
                os.remove(out)
            print(
                f"{name}: {res['wall']:.2f} s, {res['peak_rss'] / 2**20:.0f} MiB", file=sys.stderr
            )
    shape = f"{a.runs} run files x {a.queries:,} queries x {a.depth} docs ({size:,.0f} MiB)"
    lines = [
        f"`irmetrics fuse --method {a.method}`, {shape}, {os.cpu_count()} cores;"
        f" median of {a.repeat} / peak RSS",
        "",
        "| build | wall s | peak RSS MiB |",
        "|---|---|---|",
    ]
    for name, runs in cells.items():
        walls = sorted(w for w, _ in runs)
        lines.append(f"| {name} | {walls[len(walls) // 2]:.2f} | {max(m for _, m in runs):.0f} |")
    same = len(set(digests.values())) == 1
    lines += ["", f"fused outputs identical: {same}"]
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"shape": shape, "cells": cells, "identical": same}, f, indent=1)
    return 0 if same else 1


def both_tools(results: dict, key: str) -> tuple[dict | None, dict | None]:
    """irmetrics' and ranx's measurements of one method (None: not run)."""
    return tuple((results.get(t) or {}).get("methods", {}).get(key) for t in ("irmetrics", "ranx"))


def agreement(key: str, irm: dict | None, rx: dict | None) -> list[str]:
    """The line saying whether the two tools' fused scores agree, when both kept them."""
    if irm and rx and "scores" in irm and "scores" in rx:
        return [f"{key}: {compare(irm['scores'], rx['scores'])}"]
    return []


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
    p.add_argument("--files", metavar="DIR", help="the command line on run files written in DIR")
    p.add_argument("--build", action="append", default=[], help="NAME=DIR (with --files)")
    p.add_argument("--method", default="rrf", help="with --files")
    p.add_argument("--optimize", action="store_true", help="time optimize_fusion instead")
    p.add_argument("--trained", action="store_true", help="time the trained methods instead")
    p.add_argument("--opt-method", default="wsum", help="with --optimize")
    p.add_argument("--opt-norm", default="min-max", help="with --optimize ('none': none)")
    p.add_argument("--metric", default="ndcg@10", help="with --optimize")
    a = p.parse_args()
    if a.opt_norm == "none":
        a.opt_norm = None
    if a.files:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        return files_main(a)
    args = {
        "runs": a.runs,
        "queries": a.queries,
        "depth": a.depth,
        "seed": a.seed,
        "repeat": a.repeat,
        "check": not a.no_check,
        "opt_method": a.opt_method,
        "opt_norm": a.opt_norm,
        "metric": a.metric,
    }
    if a.child:
        work = optimize_child if a.optimize else trained_child if a.trained else child
        json.dump(work(a.child, args), sys.stdout)
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
    if a.optimize or a.trained:
        text = optimize_report(a, results) if a.optimize else trained_report(a, results)
        print(text if a.markdown else text.replace("|", " ").replace("---", ""))
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"optimize": True, "results": results}, f, indent=1)
        return 0
    shape = f"{a.runs} runs x {a.queries:,} queries x {a.depth} docs"
    lines = [f"Fusion, {shape} ({os.cpu_count()} cores; seconds, warm = median of {a.repeat})"]
    head = "| method | irmetrics warm | irmetrics cold | ranx warm | ranx cold | speed-up (warm) |"
    lines += ["", head, "|---|---|---|---|---|---|"]
    checks = []
    for method, norm, _ in METHODS:
        key = f"{method}" + (f" {norm}" if norm else "")
        irm, rx = both_tools(results, key)

        def cell(x, field):
            return f"{x[field]:.3f}" if x else "-"

        speed = f"{rx['warm_s'] / irm['warm_s']:.1f}x" if irm and rx else "-"
        lines.append(
            f"| {key} | {cell(irm, 'warm_s')} | {cell(irm, 'cold_s')} | {cell(rx, 'warm_s')}"
            f" | {cell(rx, 'cold_s')} | {speed} |"
        )
        checks += agreement(key, irm, rx)
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
