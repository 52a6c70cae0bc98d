"""Generate tests/data/dl19-synthetic.run: a seeded, realistic-looking run for the
TREC DL 2019 passage queries (100 results per query, graded judgments favoured near the
top, unjudged documents mixed in, a few tied scores). Standard library only.

    python3 tests/data/make_run.py > tests/data/dl19-synthetic.run
    python3 tests/data/make_run.py SEED NOISE TAG > other.run   # other runs (README)
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    # defaults: the committed run; other seeds, score noise and tags make other systems
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 2019
    noise = float(sys.argv[2]) if len(sys.argv) > 2 else 1.2
    tag = sys.argv[3] if len(sys.argv) > 3 else "synthetic"
    rng = random.Random(seed)
    judged: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for line in (HERE / "dl19-passage.qrels").read_text().splitlines():
        qid, _, doc, rel = line.split()
        judged[qid].append((doc, int(rel)))
    out = sys.stdout
    for qid in sorted(judged):
        docs = judged[qid]
        # a noisy "retrieval score": higher labels tend to score higher
        scored = [(rel + rng.gauss(0, noise), doc) for doc, rel in docs]
        scored += [(rng.gauss(-0.5, 1.0), str(rng.randrange(8_841_823))) for _ in range(60)]
        scored.sort(reverse=True)
        seen: set[str] = set()
        rank = 0
        for score, doc in scored:
            if doc in seen:
                continue
            seen.add(doc)
            rank += 1
            out.write(f"{qid} Q0 {doc} {rank} {round(score, 2):.2f} {tag}\n")
            if rank == 100:
                break


if __name__ == "__main__":
    main()
