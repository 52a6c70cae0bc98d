"""trectools' rank-biased precision (``TrecEval.get_rbp``): trec_eval's ``rbp``
rescales graded labels and breaks ties by document id, where trectools weights a
document by its label and, by default, gives tied documents the mean of their ranks'
weights. Computed with whole-column pandas operations on the run's frame (no Python
object per row): the frame is what trectools' users hand over, and the tie groups are
the frame's own rows."""

from __future__ import annotations

from typing import Any

import numpy as np

import irmetrics


def rbp(
    run: Any,
    qrels: Any,
    label: str,
    *,
    p: float,
    depth: int,
    per_query: bool,
    binary: bool,
    average_ties: bool,
    judged_only: bool,
) -> Any:
    import pandas as pd

    run = run[["query", "docid", "score"]]
    judged = qrels[["query", "docid", "rel"]]
    # trec_eval's queries: the run's ones that have judgments
    run = run[run["query"].isin(judged["query"].unique())]
    top = run.merge(judged, how="left", on=["query", "docid"], sort=False, validate="m:1")
    if judged_only:
        top = top[top["rel"].notna()]
    by_query = top.groupby("query", sort=False)
    rank = by_query.cumcount().to_numpy()
    top = top[rank < depth]
    rank = rank[rank < depth]
    weight = (1.0 - p) * np.power(p, rank.astype(float))
    if average_ties:
        query, score = top["query"].to_numpy(), top["score"].to_numpy()
        starts = np.ones(len(top), dtype=bool)
        starts[1:] = (query[1:] != query[:-1]) | (score[1:] != score[:-1])
        weight = pd.Series(weight).groupby(np.cumsum(starts)).transform("mean").to_numpy()
    rel = top["rel"].to_numpy(dtype=float)
    unjudged = np.isnan(rel)
    gain = np.where(rel > 0, 1.0 if binary else rel, 0.0)
    gain[unjudged] = 0.0
    length = top.groupby("query", sort=False).size()
    frame = pd.DataFrame(
        {"query": top["query"].to_numpy(), "rbp": weight * gain, "unj": weight * unjudged}
    )
    sums = frame.groupby("query", sort=True)[["rbp", "unj"]].sum()
    # the ranks past each (cut) ranking: p^n of a ranking of n documents
    past = np.power(p, length.reindex(sums.index).to_numpy(dtype=float))
    values = sums["rbp"].rename(label).rename_axis("query").to_frame()
    residual = (sums["unj"] + past).rename(label).rename_axis("query").to_frame()
    if per_query:
        return values, residual
    if values.empty:
        raise irmetrics.InputError("no query of the run is judged")
    return float(values[label].mean()), float(residual[label].mean())
