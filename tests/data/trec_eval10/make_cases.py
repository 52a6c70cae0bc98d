"""Write the generated inputs of the trec_eval 10 parity cases (cases.tsv).

Each seed gives `caseN.qrels` (labels -1..4, a query with no relevant document, a query
judged but missing from the run, for -c) and `caseN.run` (scores with ties, unjudged
documents, a run query without judgments). Deterministic (random.Random(seed)).
`case3.zscores` gives num_rel, num_ret and map of every judged query of case 3 a mean
and a deviation (for -Z). `expected/` holds what trec_eval 10.0 printed for each row of
cases.tsv (README.md).
"""

import random
from pathlib import Path

SEEDS = [3, 8, 21]


def gen(seed: int) -> tuple[list[str], list[str]]:
    r = random.Random(seed)
    qrels, run = [], []
    queries = [f"q{r.randint(0, 9)}{i}" for i in range(r.randint(4, 6))]
    for i, qid in enumerate(queries):
        docs = [f"d{n}" for n in r.sample(range(60), r.randint(3, 25))]
        for d in docs:
            label = 0 if i == 1 else r.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4])
            qrels.append(f"{qid} 0 {d} {label}")
        if i == 2:
            continue  # judged, not retrieved
        ranked = docs[: r.randint(0, len(docs))] + [f"x{n}" for n in range(r.randint(1, 15))]
        r.shuffle(ranked)
        for rank, d in enumerate(ranked):
            score = r.choice([1.0, 0.5, r.uniform(-3, 10)])
            run.append(f"{qid} Q0 {d} {rank} {score:.6g} run{seed}")
    run.append(f"unjudged Q0 d1 1 1.0 run{seed}")
    r.shuffle(run)
    return qrels, run


def zscores(qrels: list[str]) -> list[str]:
    r = random.Random(99)
    queries = sorted({line.split()[0] for line in qrels})
    return [
        f"{q} {m} {r.uniform(0, 5):.3f} {r.choice([0.5, 1.0, 2.5])}"
        for q in queries
        for m in ("num_rel", "num_ret", "map")
    ]


def main() -> None:
    here = Path(__file__).resolve().parent
    for seed in SEEDS:
        qrels, run = gen(seed)
        (here / f"case{seed}.qrels").write_text("\n".join(qrels) + "\n")
        (here / f"case{seed}.run").write_text("\n".join(run) + "\n")
        if seed == 3:
            (here / "case3.zscores").write_text("\n".join(zscores(qrels)) + "\n")


if __name__ == "__main__":
    main()
