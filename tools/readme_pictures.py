"""Draw the README's pictures (docs/*.png) with irmetrics.plot, from the repository's
TREC DL 2019 qrels and its two example runs. Run from the repository root:
``python tools/readme_pictures.py``."""

import matplotlib

matplotlib.use("Agg")

import irmetrics.plot as plot  # noqa: E402

qrels = "tests/data/dl19-passage.qrels"
runs = {"BM25": "tests/data/dl19-bm25.run", "dense": "tests/data/dl19-dense.run"}
plot.precision_recall(qrels, runs).save("docs/precision-recall.png", dpi=80)
plot.differences(
    qrels, runs["dense"], runs["BM25"], "ndcg_cut.10", names=("dense", "BM25")
).save("docs/differences.png", dpi=80)
