"""Differential fuzz of the command line against a trec_eval binary, byte for byte.

Not a test (CI has no trec_eval binary): the harness that found the rows of cases.tsv.
Build trec_eval 10.0 from usnistgov/trec_eval (commit f425365, `make`), then:

    python tests/data/trec_eval10/fuzz_trec_eval.py --trec-eval /path/to/trec_eval \
        --seeds 0:500 [--out /tmp/fuzz] [--zscores]

Each seed makes random qrels (labels -2..12, queries with nothing relevant, judged
queries missing from the run), a run (ties, negative, exponent and tiny scores, run
queries without judgments), random flags (-q -c -n -J -l -M -N) and a measure set, and
runs both programs; with --zscores a -Z file covers every value trec_eval prints per
query. A seed whose outputs differ (or where one fails and the other does not) is
written to --out with both outputs. irmetrics' deliberate refusals (README: "Where
irmetrics departs from trec_eval") show up there too; so do trec_eval's crashes.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

MEASURE_SETS = [
    ["all_trec"],
    ["official"],
    ["P.1,2,7", "recall.3", "ndcg_cut.3,4", "success.1,2,3", "iprec_at_recall.0.33,0.5"],
    ["ndcg.0=0,1=2,2=5,3=10", "ndcg_rel.1=1,2=3", "Rndcg.1=2", "ndcg_cut.0=1,2=3"],
    ["Rprec_mult.0.5,2", "relative_P.3,7", "set_F.0.5", "utility.2,-1,0,0", "map_cut.2,5"],
    ["bpref", "infAP", "gm_map", "gm_bpref", "runid", "num_q", "relstring.5"],
    ["yaap", "dcg", "ideal_dcg", "ndcg", "map"],
    ["ndcg.3=0.5,1=1.75"],
    ["ideal_dcg.0=0.3,2=0.9,4=1.2"],
    ["G.1=0.25,3=0.75"],
    ["dcg.2=0.5,1=3"],
    ["utility.2,-1,0,0", "relstring.3", "rbp_resid.p=0.8", "yaap"],
    ["official", "P.3,8"],
    ["P.2", "official", "iprec_at_recall.0.15,0.95"],
    ["set", "utility.1,0,0,0"],
]


def score(r: random.Random) -> str:
    k = r.random()
    if k < 0.3:
        return str(r.choice([1, 2, 3, 0, -1]))
    if k < 0.5:
        return f"{r.choice([0.5, 0.25, 1.0, -0.5]):.3f}"
    if k < 0.6:
        return f"{r.uniform(-1e-5, 1e-5):g}"
    if k < 0.7:
        return f"{r.uniform(-100, 100):.6e}"
    return repr(round(r.uniform(-5, 20), r.randint(0, 8)))


def case(seed: int) -> tuple[str, str, list[str]]:
    r = random.Random(seed)
    doc = lambda: r.choice([f"d{r.randint(0, 30)}", str(r.randint(0, 40)), f"D-{r.randint(0, 9)}"])  # noqa: E731
    queries = {
        r.choice(["1", "2", "10", "003", "q7", "301", "a", "B"]) for _ in range(r.randint(1, 6))
    }
    qrels, run = [], []
    for q in sorted(queries):
        if r.random() < 0.85:
            for d in {doc() for _ in range(r.randint(1, 25))}:
                label = r.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4, 7, 12])
                qrels.append(f"{q} 0 {d} {label}")
        if r.random() < 0.85:
            for d in {doc() for _ in range(r.randint(1, 40))}:
                run.append(f"{q} Q0 {d} {r.randint(0, 50)} {score(r)} tag{r.randint(0, 1)}")
    r.shuffle(run)
    flags = [f for f in ("-q", "-c", "-n", "-J") if r.random() < 0.3]
    if r.random() < 0.3:
        flags.append(f"-l{r.choice([0, 1, 2, 3, 11])}")
    if r.random() < 0.3:
        flags += ["-M", str(r.choice([1, 2, 3, 10]))]
    if r.random() < 0.15:
        flags += ["-N", str(r.choice([1000, 5000]))]
    for m in r.choice(MEASURE_SETS):
        flags += ["-m", m]
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", flags


def zscores(trec_eval: str, flags: list[str], qrels: Path, run: Path, seed: int) -> str:
    """A mean and deviation for every value trec_eval prints per query."""
    r = random.Random(seed)
    per_query = [f for f in flags if f != "-n"]
    out = subprocess.run(
        [trec_eval, "-q", *per_query, str(qrels), str(run)], capture_output=True, text=True
    )
    lines = []
    for line in out.stdout.splitlines():
        name, qid, _ = (f.strip() for f in line.split("\t"))
        if qid != "all" and name != "runid" and not name.startswith("relstring"):
            lines.append(
                f"{qid} {name} {r.uniform(-1, 1):.4f} {r.choice([0.1, 0.5, 2.0, 1e-3, 3])}"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trec-eval", required=True, help="path of the trec_eval binary")
    ap.add_argument("--seeds", default="0:200", help="FIRST:END")
    ap.add_argument("--cmd", default=f"{sys.executable} -m irmetrics", help="irmetrics' command")
    ap.add_argument("--out", default="fuzz-out", type=Path)
    ap.add_argument("--zscores", action="store_true", help="add -Z with a complete file")
    a = ap.parse_args()
    first, end = (int(x) for x in a.seeds.split(":"))
    work = a.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    qrels, run, z = work / "qrels", work / "run", work / "zscores"
    ran = differ = 0
    for seed in range(first, end):
        q_text, r_text, flags = case(seed)
        if not q_text.strip() or not r_text.strip():
            continue
        qrels.write_text(q_text)
        run.write_text(r_text)
        if a.zscores:
            z.write_text(zscores(a.trec_eval, flags, qrels, run, seed))
            flags += ["-Z", str(z)]
        theirs = subprocess.run(
            [a.trec_eval, *flags, str(qrels), str(run)], capture_output=True, text=True
        )
        ours = subprocess.run(
            [*a.cmd.split(), *flags, str(qrels), str(run)], capture_output=True, text=True
        )
        ran += 1
        both_fail = theirs.returncode != 0 and ours.returncode != 0
        if not both_fail and (
            theirs.stdout != ours.stdout or (theirs.returncode == 0) != (ours.returncode == 0)
        ):
            differ += 1
            keep = a.out / f"seed{seed}"
            keep.mkdir(exist_ok=True)
            for name, text in [("qrels", q_text), ("run", r_text), ("flags", " ".join(flags))]:
                (keep / name).write_text(text)
            (keep / "trec_eval.out").write_text(
                f"{theirs.stdout}\n# rc {theirs.returncode}\n{theirs.stderr}"
            )
            (keep / "irmetrics.out").write_text(
                f"{ours.stdout}\n# rc {ours.returncode}\n{ours.stderr}"
            )
            print(f"seed {seed} differs: {' '.join(flags)}", flush=True)
    print(f"{ran} cases, {differ} differ (kept in {a.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
