#!/usr/bin/env python3
"""Benchmark ``irmetrics.stats.correct`` against statsmodels' ``multipletests``
(multiple-comparison corrections), side by side in one process.

For each method and family size m: seeded p-values (uniform, cubed: many small ones),
the median of ``--repeat`` calls of each tool, their ratio, and the largest relative
difference of the adjusted p-values (the tools must agree: an error otherwise).
statsmodels' Hommel is O(m²) (a loop over every set size); above ``--hommel-max`` it
is left out (a "skipped" row).

    python benches/corrections.py
    python benches/corrections.py --sizes 1000,10000,100000 --hommel-max 30000 --markdown

Needs numpy and statsmodels.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

# (irmetrics' name, statsmodels' name)
METHODS = [
    ("bonferroni", "bonferroni"),
    ("holm", "holm"),
    ("sidak", "sidak"),
    ("holm-sidak", "holm-sidak"),
    ("hochberg", "simes-hochberg"),
    ("hommel", "hommel"),
    ("bh", "fdr_bh"),
    ("by", "fdr_by"),
]


def timed(f, args, kwargs, repeat):
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*args, **kwargs)
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def main(argv=None):
    import numpy as np
    from statsmodels.stats.multitest import multipletests

    import irmetrics.stats as stats

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--hommel-max", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args(argv)
    rows = []
    for m in (int(s) for s in a.sizes.split(",")):
        pv = np.random.default_rng(a.seed).random(m) ** 3
        for ours, theirs in METHODS:
            got, t_ours = timed(stats.correct, (pv, ours), {}, a.repeat)
            if theirs == "hommel" and m > a.hommel_max:
                rows.append((ours, m, t_ours, None, None))
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                slow = theirs == "hommel" and m > 5_000  # seconds a call
                (_, ref, _, _), t_sm = timed(
                    multipletests, (pv,), {"method": theirs}, 1 if slow else a.repeat
                )
            diff = float(np.max(np.abs(np.asarray(got) - ref) / np.maximum(ref, 1e-300)))
            if diff > 1e-12:
                raise SystemExit(f"{ours} at m={m}: the tools differ by {diff:.2e}")
            rows.append((ours, m, t_ours, t_sm, diff))
    sep = " | " if a.markdown else "  "
    head = ["method", "m", "irmetrics s", "statsmodels s", "speed-up", "max rel. diff"]
    print(("| " + sep.join(head) + " |") if a.markdown else sep.join(head))
    if a.markdown:
        print("|" + "---|" * len(head))
    for name, m, t_ours, t_sm, diff in rows:
        cells = [name, f"{m:,}", f"{t_ours:.5f}"]
        if t_sm is None:
            cells += ["skipped (O(m²))", "", ""]
        else:
            cells += [f"{t_sm:.5f}", f"{t_sm / t_ours:.1f}x", f"{diff:.1e}"]
        print(("| " + sep.join(cells) + " |") if a.markdown else sep.join(cells))


if __name__ == "__main__":
    main()
