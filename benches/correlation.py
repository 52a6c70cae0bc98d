#!/usr/bin/env python3
"""Rank correlation: irmetrics against scipy (see benches/README.md, "Rank correlation").

    python benches/correlation.py                   # median of 3 calls each
    python benches/correlation.py --repeat 5 --json correlation.json

Kendall's tau-b of two score lists against ``scipy.stats.kendalltau`` (n = 20,000 and
1,000,000, a quarter of the values tied), the values checked to agree to 1e-12; then
``compare_runs`` of two seeded runs of 1,000 queries x 1,000 documents (drawn from
1,500 candidates a query) by the top-k Kendall distance and by RBO, which no peer
computes over runs (the top-k distance was a pass over every pair of documents
before: 48.8 s for this workload on the development machine).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(f: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()

    import numpy as np
    import scipy.stats

    import irmetrics

    rows = []
    rng = np.random.default_rng(42)
    for n in (20_000, 1_000_000):
        x = rng.random(n)
        y = x + rng.normal(0, 0.5, n)
        x[: n // 4] = np.round(x[: n // 4], 2)  # ties
        ours_t, ours = timed(lambda x=x, y=y: irmetrics.kendall_tau(x, y), args.repeat)
        peer_t, peer = timed(lambda x=x, y=y: scipy.stats.kendalltau(x, y), args.repeat)
        assert abs(ours - peer.statistic) < 1e-12, (ours, peer)
        rows.append(
            {
                "task": f"kendall_tau n={n:,}",
                "irmetrics_s": ours_t,
                "peer": "scipy",
                "peer_s": peer_t,
            }
        )

    r = random.Random(42)
    runs = []
    for _ in range(2):
        run = {}
        for q in range(1000):
            docs = r.sample([f"d{i}" for i in range(1500)], 1000)
            run[f"q{q}"] = {d: r.random() for d in docs}
        runs.append(irmetrics.Run.from_dict(run))
    for method in ("kendall_topk", "rbo", "kendall"):
        t, _ = timed(lambda m=method: irmetrics.compare_runs(runs[0], runs[1], m), args.repeat)
        rows.append(
            {
                "task": f"compare_runs {method}, 1,000 queries x 1,000 docs",
                "irmetrics_s": t,
                "peer": None,
                "peer_s": None,
            }
        )

    print(f"{'task':52} {'irmetrics':>10} {'peer':>16} {'ratio':>7}")
    for row in rows:
        peer = f"{row['peer']} {row['peer_s']:.4f}s" if row["peer"] else "-"
        ratio = f"{row['peer_s'] / row['irmetrics_s']:.1f}x" if row["peer"] else "-"
        print(f"{row['task']:52} {row['irmetrics_s']:9.4f}s {peer:>16} {ratio:>7}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
