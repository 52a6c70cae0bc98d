"""Draw the README's pictures (docs/*.png) with irmetrics.plot, from the repository's
TREC DL 2019 qrels and its two example runs, and from a synthetic search log
(tests/online_gen.py, seed 1). Run from the repository root:
``python tools/readme_pictures.py``."""

import sys

import matplotlib
import pandas as pd

matplotlib.use("Agg")

import irmetrics.plot as plot  # noqa: E402

sys.path.insert(0, "tests")
from online_gen import generate  # noqa: E402

qrels = "tests/data/dl19-passage.qrels"
runs = {"BM25": "tests/data/dl19-bm25.run", "dense": "tests/data/dl19-dense.run"}
plot.precision_recall(qrels, runs).save("docs/precision-recall.png", dpi=80)
plot.differences(qrels, runs["dense"], runs["BM25"], "ndcg_cut.10", names=("dense", "BM25")).save(
    "docs/differences.png", dpi=80
)

log = generate(20_000, seed=1)["events"]
plot.ctr_by_position(log).save("docs/ctr-by-position.png", dpi=80)
# a burst of 400 one-query sessions on 2024-05-12, for the spike to show
t12 = 1_715_472_000.0
burst = pd.DataFrame(
    {
        "session_id": [f"burst{i}" for i in range(400)],
        "timestamp": [t12 + 100.0 * i for i in range(400)],
        "type": "query",
        "latency_ms": 250.0,
    }
)
plot.queries_per(pd.concat([log, burst]), "day").save("docs/queries-per-day.png", dpi=80)
