"""Write the generated inputs of the preference and judgment-group parity cases.

Each seed gives `caseN.prefs` (qid jg jsg docno level: several judgment groups, one to
three sub-groups each, consistent within a group, levels 0..4 with halves, some -1),
`caseN.qrels_jg` (qid jg docno rel, labels -1..2) and `caseN.run` (scores with many
ties, unjudged documents, a query with no retrieved judged document). The query
`zmissing` is judged but not in the run (for -c). Deterministic (random.Random(seed)).
`dl19.zscores` gives every preference measure of every query of ../dl19-passage.qrels a
mean and a deviation (for -Z). `expected/` holds what trec_eval 10.0 printed for each
row of cases.tsv (see README.md).
"""

import random
import sys
from pathlib import Path

SEEDS = [2, 5, 17]
PREFS_MEASURES = [
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
]


def gen(seed: int) -> tuple[list[str], list[str], list[str]]:
    r = random.Random(seed)
    prefs, run, jg = [], [], []
    for q in range(r.randint(3, 5)):
        qid = f"q{r.randint(0, 9)}{q}"
        docs = sorted({f"d{r.randint(0, 30)}" for _ in range(r.randint(2, 12))})
        for g in range(r.randint(1, 3)):
            nsub = r.choice([1, 1, 2, 3])
            # one hidden utility per group: its sub-groups never contradict each other
            util = {d: r.randint(0, 4) for d in docs}
            for s in range(nsub):
                for d in r.sample(docs, r.randint(1, len(docs))):
                    level = 0
                    if util[d] != 0:
                        level = util[d] + (r.choice([0, 0.5]) if nsub == 1 else 0)
                    if nsub == 1 and util[d] == 1 and r.random() < 0.2:
                        level = -1
                    prefs.append(f"{qid} g{g} s{s} {d} {level}")
            for d in r.sample(docs, r.randint(1, len(docs))):
                jg.append(f"{qid} j{g} {d} {r.choice([0, 0, 1, 2, -1])}")
        ranked = r.sample(docs + [f"x{i}" for i in range(5)], r.randint(0, len(docs) + 3))
        for i, d in enumerate(ranked):
            score = r.choice([1.0, 2.0, 3.0]) if r.random() < 0.5 else round(r.random(), 6)
            run.append(f"{qid} Q0 {d} {i} {score} tag{seed}")
        if not ranked:
            run.append(f"{qid} Q0 unjudged 1 1 tag{seed}")
    prefs += ["zmissing g0 s0 dA 1", "zmissing g0 s0 dB 0"]
    jg += ["zmissing j0 dA 1", "zmissing j0 dB 0"]
    return prefs, run, jg


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for i, seed in enumerate(SEEDS, 1):
        prefs, run, jg = gen(seed)
        for ext, lines in (("prefs", prefs), ("run", run), ("qrels_jg", jg)):
            (out / f"case{i}.{ext}").write_text("\n".join(lines) + "\n")
    qrels = (Path(__file__).parent.parent / "dl19-passage.qrels").read_text().split("\n")
    qids = sorted({line.split()[0] for line in qrels if line.strip()})
    r = random.Random(19)
    z = []
    for qid in qids:
        for m in PREFS_MEASURES:
            scale = 1000.0 if "num" in m else 1.0
            z.append(f"{qid} {m} {r.random() * scale:.4f} {(0.05 + r.random()) * scale:.4f}")
    (out / "dl19.zscores").write_text("\n".join(z) + "\n")


if __name__ == "__main__":
    main()
