#!/usr/bin/env python3
"""What each measure family of issue 17 costs over the base set, in one process.

    python benches/families.py --scale M --repeat 3

The data are ``compare.py``'s (same generator, same cache in ``bench-data/``): a qrels
and a run of ``--scale`` (M: 10,000 queries x 1,000 documents). Beside them, derived
deterministically from the qrels (a hash of query and document): subtopic qrels for
the diversity measures (each relevant document relevant to 1 to 3 of 4 subtopics) and
credibility judgments (a label 0..3 for every judged document).

Both files are read once (``Qrels.from_file``, ``Run.from_file``); each row then times
``Evaluator(qrels, measures, ...)`` + ``evaluate(run)`` for the base set (P.10
recall.100 map ndcg_cut.10 recip_rank_cut.10) and for the base set plus one family,
median of ``--repeat`` runs (base and family runs alternate). Diversity is a separate
call (``irmetrics.diversity``: its judgments are subtopic qrels), timed as the base
evaluation plus that call, the subtopic qrels file read included. The ratio is
(base + family) / base.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare  # noqa: E402  (the data generator and cache)

BASE = ["P.10", "recall.100", "map", "ndcg_cut.10", "recip_rank_cut.10"]
FAMILIES = {
    # for scale: five of trec_eval's own measures that read the whole ranking
    "reference: trec_eval's whole-ranking measures": [
        "ndcg",
        "Rndcg",
        "bpref",
        "infAP",
        "11pt_avg",
    ],
    "C/W/L user models": [
        "INST(max_rel=3)",
        "INSQ(max_rel=3)",
        "BPM(max_rel=3)@10",
        "SDCG(max_rel=3)@10",
        "NERR10(max_rel=3)",
    ],
    "Compat, Accuracy, AUROC": ["compat", "pair_accuracy", "auroc"],
    "credibility (Lioma et al.)": ["nlre", "ngre", "nwcs", "cam", "wham"],
}
CREDIBILITY = "credibility (Lioma et al.)"
DIVERSITY = ["alpha_nDCG@10", "ERR_IA@10"]


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.blake2b(" ".join(parts).encode(), digest_size=4).digest())


def derived_files(qrels_path: Path) -> tuple[Path, Path]:
    """Subtopic qrels and credibility judgments beside the qrels (cached)."""
    sub, cred = qrels_path.with_suffix(".subtopics"), qrels_path.with_suffix(".credibility")
    if sub.exists() and cred.exists():
        return sub, cred
    with open(qrels_path) as f, open(sub, "w") as fs, open(cred, "w") as fc:
        for line in f:
            q, _, d, label = line.split()
            h = _hash(q, d)
            fc.write(f"{q} 0 {d} {h % 4}\n")
            if int(label) > 0:
                for s in range(1 + h % 3):
                    fs.write(f"{q} {(h >> 8) % 4 + s} {d} 1\n")
    return sub, cred


def timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="M", choices=sorted(compare.SCALES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--data-dir", default="bench-data")
    ap.add_argument("--threads", type=int, default=0, help="n_threads (0: all cores)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()

    import irmetrics

    nq, depth = compare.SCALES[args.scale]
    backend = "numpy"
    try:
        import numpy  # noqa: F401
    except ImportError:
        backend = "python"
    qp, rp = compare.data_paths(args.data_dir, args.scale, args.seed, backend)
    compare.generate(qp, rp, nq, depth, args.seed, backend)
    sub, cred_path = derived_files(qp)
    qrels, run = irmetrics.Qrels.from_file(str(qp)), irmetrics.Run.from_file(str(rp))
    cred = irmetrics.Qrels.from_file(str(cred_path))
    opts = {"n_threads": args.threads}

    def base() -> None:
        irmetrics.Evaluator(qrels, BASE, **opts).evaluate(run)

    rows = []
    for name, measures in [*FAMILIES.items(), ("diversity (alpha-nDCG, ERR-IA)", None)]:
        if measures is None:

            def family() -> None:
                base()
                irmetrics.diversity(str(sub), run, DIVERSITY, n_threads=args.threads)
        else:

            def family(ms: list[str] = measures) -> None:
                extra = {"credibility": cred} if ms == FAMILIES[CREDIBILITY] else {}
                irmetrics.Evaluator(qrels, BASE + ms, **opts, **extra).evaluate(run)

        family()  # warm
        tb, tf = [], []
        for _ in range(args.repeat):
            tb.append(timed(base))
            tf.append(timed(family))
        b, f = statistics.median(tb), statistics.median(tf)
        rows.append({"family": name, "measures": measures or DIVERSITY, "base_s": b, "with_s": f})
        print(f"{name}: base {b:.3f} s, base + family {f:.3f} s, ratio {f / b:.2f}", flush=True)

    machine = (
        f"{platform.machine()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}"
    )
    print(f"\n{args.scale}: {nq:,} queries x {depth:,} documents; {machine}")
    print("\n| family | measures added | base | base + family | ratio |")
    print("|---|---|---|---|---|")
    for r in rows:
        added = ", ".join(f"`{m}`" for m in r["measures"])
        ratio = r["with_s"] / r["base_s"]
        print(
            f"| {r['family']} | {added} | {r['base_s']:.3f} s | {r['with_s']:.3f} s | {ratio:.2f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"scale": args.scale, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
