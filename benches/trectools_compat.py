#!/usr/bin/env python3
"""Benchmark ``irmetrics.compat.trectools`` against trectools itself, side by side in
one process: reading a qrels file and a run file (``TrecQrel`` + ``TrecRun``), one
measure (``TrecEval.get_ndcg(depth=10)``, summary and per query), trectools' default
report (``evaluate_all(per_query=True)``) and reciprocal rank fusion of two runs.

The qrels are a real TREC file (by default the MS MARCO passage dev subset in
``../shared/data``, 6,980 queries); the runs are seeded: per query its judged
documents and random others up to ``--depth``, in random order, with distinct scores
(so trectools' ranking is trec_eval's and the two agree: checked, an error otherwise).

    python benches/trectools_compat.py
    python benches/trectools_compat.py --depth 1000 --repeat 1 --markdown

Needs trectools and pandas.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import warnings
from pathlib import Path

SHARED = Path(os.environ.get("IRMETRICS_SHARED", Path(__file__).parents[2] / "shared"))
QRELS = SHARED / "data" / "qrels" / "msmarco-passage.dev-subset.txt"


def write_run(qrels: Path, path: Path, depth: int, seed: int, tag: str) -> int:
    rng = random.Random(seed)
    judged: dict[str, list[str]] = {}
    for line in qrels.read_text().splitlines():
        q, _, d, _ = line.split()
        judged.setdefault(q, []).append(d)
    lines = 0
    with path.open("w") as f:
        for q, docs in judged.items():
            ranked = set(docs[:depth])
            while len(ranked) < depth:
                ranked.add(str(rng.randrange(10_000_000)))
            order = sorted(sorted(ranked), key=lambda _: rng.random())  # (a set: sorted first)
            for i, d in enumerate(order):
                f.write(f"{q} Q0 {d} {i + 1} {depth - i + rng.random() / 2:.6f} {tag}\n")
            lines += len(order)
    return lines


def timed(f, repeat):
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def main(argv=None):
    import numpy as np
    import trectools
    from trectools import fusion as tt_fusion

    from irmetrics.compat import trectools as ct

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--qrels", type=Path, default=QRELS)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")  # trectools' own pandas warnings
    tmp = Path(tempfile.mkdtemp())
    runs = [tmp / "a.run", tmp / "b.run"]
    lines = [write_run(a.qrels, r, a.depth, a.seed + i, r.stem) for i, r in enumerate(runs)]
    qrels, run = str(a.qrels), str(runs[0])

    def steps(mod, fusion):
        def read():
            return mod.TrecQrel(qrels), mod.TrecRun(run)

        def ndcg():
            te = mod.TrecEval(mod.TrecRun(run), mod.TrecQrel(qrels))
            return te.get_ndcg(depth=10), te.get_ndcg(depth=10, per_query=True)

        def report():
            return mod.TrecEval(mod.TrecRun(run), mod.TrecQrel(qrels)).evaluate_all(True).data

        def fuse():
            return fusion.reciprocal_rank_fusion([mod.TrecRun(r) for r in map(str, runs)])

        return [
            ("read qrels + run", read),
            ("get_ndcg(10), mean and per query", ndcg),
            ("evaluate_all(per_query=True)", report),
            ("reciprocal_rank_fusion, 2 runs", fuse),
        ]

    rows, notes = [], []
    for (name, theirs), (_, ours) in zip(steps(trectools, tt_fusion), steps(ct, ct.fusion)):
        t_out, t_time = timed(theirs, a.repeat)
        o_out, o_time = timed(ours, a.repeat)
        if name.startswith("get_ndcg"):
            assert abs(t_out[0] - o_out[0]) <= 1e-12 * abs(t_out[0]), (t_out[0], o_out[0])
        if name.startswith("evaluate_all"):
            # trectools' bpref (0 without judged non-relevant documents, as every MS
            # MARCO query) and Rprec (pandas 3) are not trec_eval's: counted, not checked
            numeric = t_out["metric"] != "runid"
            t_v = t_out[numeric]["value"].to_numpy(float)
            o_v = o_out[numeric]["value"].to_numpy(float)
            wrong = t_out[numeric]["metric"].isin(["bpref", "Rprec"]).to_numpy()
            nan = np.isnan(t_v)  # trectools' NaN nDCG where trec_eval's is 0
            ok = ~nan & ~wrong
            assert np.allclose(o_v[ok], t_v[ok], rtol=1e-12, atol=0) and (o_v[nan] == 0).all()
            differ = int((~np.isclose(o_v[wrong], t_v[wrong], rtol=1e-12, atol=0)).sum())
            notes.append(
                f"{differ:,} of {int(wrong.sum()):,} bpref and Rprec values differ or are NaN"
            )
        if name.startswith("reciprocal"):
            t_d, o_d = t_out.run_data, o_out.run_data
            assert t_d["docid"].tolist() == o_d["docid"].tolist()
            assert np.allclose(t_d["score"], o_d["score"], rtol=1e-12, atol=0)
        rows.append((name, t_time, o_time))
    head = f"{a.qrels.name}, runs of {lines[0]:,} and {lines[1]:,} lines ({a.depth} a query)"
    if a.markdown:
        print(f"{head}\n\n| step | trectools | irmetrics.compat.trectools | speed-up |")
        print("|---|---|---|---|")
        for name, t, o in rows:
            print(f"| {name} | {t:.3f} s | {o:.3f} s | {t / o:.1f}x |")
    else:
        print(head)
        for name, t, o in rows:
            print(f"{name:36s} trectools {t:8.3f} s  irmetrics {o:7.3f} s  {t / o:7.1f}x")
    for note in notes:
        print(f"\n{note} (trectools' own, not trec_eval's: tests/test_trectools_compat.py)")
    for r in runs:
        r.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
