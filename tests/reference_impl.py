"""A small, independent, pure-Python implementation of trec_eval 10's measures.

Written from the definitions (the conformance README's "trec_eval semantics" and the
measure definitions of trec_eval 10), deliberately naive and slow: no irmetrics code
is called or imported. ``tests/test_measures_vs_reference_impl.py`` checks irmetrics against it on
random inputs, and ``test_reference_matches_conformance`` checks this module itself
against trec_eval 10's full-precision outputs in ../shared/conformance/generated, so
the reference is proven before it is used as an oracle.

Data model: qrels ``{qid: {doc: label}}`` and run ``{qid: {doc: score}}`` (ids are
``str`` here, or ``bytes``; ordering uses the UTF-8 bytes, i.e. ``strcmp``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

NONPOOL = "nonpool"  # retrieved, not in the qrels
UNJUDGED = "unjudged"  # in the qrels with a negative label ("pooled but unjudged")

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)
UNJ_CUTOFFS = (5, 10, 20)
IPREC_LEVELS = tuple(i / 10 for i in range(11))

INTEGER_MEASURES = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q"}


def _key(x: str | bytes) -> bytes:
    return x if isinstance(x, bytes) else x.encode("utf-8", "surrogateescape")


def ranking(
    labels: Mapping[str, int],
    scores: Mapping[str, float],
    max_docs: int | None = None,
    judged_only: bool = False,
) -> list[object]:
    """The ranked list of relevance values: a label >= 0, UNJUDGED or NONPOOL.

    Order: score descending, ties by document id descending (byte order). ``-M``
    truncates the sorted list; ``-J`` then drops documents that are not judged.
    """
    docs = sorted(scores, key=lambda d: (scores[d], _key(d)), reverse=True)
    if max_docs is not None:
        docs = docs[:max_docs]
    out: list[object] = []
    for d in docs:
        if d not in labels:
            rel: object = NONPOOL
        elif labels[d] < 0:
            rel = UNJUDGED
        else:
            rel = labels[d]
        if judged_only and not isinstance(rel, int):
            continue
        out.append(rel)
    return out


def _is_rel(r: object, level: int) -> bool:
    return isinstance(r, int) and r >= level


def _is_judged_nonrel(r: object, level: int) -> bool:
    return isinstance(r, int) and 0 <= r < level


def _gain(r: object) -> float:
    return float(r) if isinstance(r, int) and r > 0 else 0.0


def _dcg(gains: Iterable[float]) -> float:
    total = 0.0
    for i, g in enumerate(gains):
        if g != 0:
            total += g / math.log2(i + 2)
    return total


def _safe_div(a: float, b: float) -> float:
    return a / b if b else 0.0


def query_measures(
    labels: Mapping[str, int],
    scores: Mapping[str, float] | None,
    *,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    rbp_p: float = 0.9,
    cutoffs: tuple[int, ...] = CUTOFFS,
) -> dict[str, float]:
    """Every measure for one query (``scores`` None: the query is not in the run)."""
    lvl = relevance_level
    ranked = ranking(labels, scores or {}, max_docs, judged_only)
    n = len(ranked)
    judged = [v for v in labels.values() if v >= 0]
    R = sum(1 for v in judged if v >= lvl)
    num_nonrel = sum(1 for v in judged if v < lvl)
    rel_flags = [_is_rel(r, lvl) for r in ranked]
    cum = []
    c = 0
    for f in rel_flags:
        c += f
        cum.append(c)
    rel_ret = c

    def rel_at(k: int) -> int:
        return cum[min(k, n) - 1] if n and k > 0 else 0

    m: dict[str, float] = {}
    m["num_ret"] = n
    m["num_rel"] = R
    m["num_rel_ret"] = rel_ret
    m["num_nonrel_judged_ret"] = sum(1 for r in ranked if _is_judged_nonrel(r, lvl))

    # average precision and its cut-off versions
    precs = [cum[i] / (i + 1) for i in range(n) if rel_flags[i]]
    m["map"] = _safe_div(sum(precs), R)
    for k in cutoffs:
        m[f"map_cut_{k}"] = _safe_div(
            sum(cum[i] / (i + 1) for i in range(min(k, n)) if rel_flags[i]), R
        )
        m[f"P_{k}"] = rel_at(k) / k
        m[f"recall_{k}"] = _safe_div(rel_at(k), R)
        m[f"relative_P_{k}"] = _safe_div(rel_at(k), min(k, R))
    m["Rprec"] = _safe_div(rel_at(R), R)
    first = next((i for i in range(n) if rel_flags[i]), None)
    m["recip_rank"] = 0.0 if first is None else 1.0 / (first + 1)
    for k in SUCCESS_CUTOFFS:
        m[f"success_{k}"] = 1.0 if rel_at(k) > 0 else 0.0

    # set measures
    m["set_P"] = _safe_div(rel_ret, n)
    m["set_recall"] = _safe_div(rel_ret, R)
    m["set_relative_P"] = _safe_div(rel_ret, min(n, R))
    m["set_map"] = m["set_P"] * m["set_recall"]
    p, r = m["set_P"], m["set_recall"]
    m["set_F"] = _safe_div(2 * p * r, p + r)

    # nDCG: gains are the labels (whatever the relevance level); ideal over all judged
    gains = [_gain(x) for x in ranked]
    ideal = sorted((float(v) for v in judged if v > 0), reverse=True)
    m["ndcg"] = _safe_div(_dcg(gains), _dcg(ideal))
    for k in cutoffs:
        m[f"ndcg_cut_{k}"] = _safe_div(_dcg(gains[:k]), _dcg(ideal[:k]))

    # bpref: judged non-relevant documents ranked above each relevant one
    bpref = 0.0
    nonrel_so_far = 0
    for x in ranked:
        if not isinstance(x, int):
            continue
        if x >= lvl:
            if nonrel_so_far > 0:
                bpref += 1.0 - min(nonrel_so_far, R) / min(R, num_nonrel)
            else:
                bpref += 1.0
        else:
            nonrel_so_far += 1
    m["bpref"] = _safe_div(bpref, R)

    # infAP (Yilmaz and Aslam), as trec_eval computes it
    eps = 0.00001
    infap = 0.0
    rel_sf = nonrel_sf = unj_sf = 0
    for j, x in enumerate(ranked):
        if x == NONPOOL:
            continue
        if x == UNJUDGED:
            unj_sf += 1
            continue
        if x >= lvl:
            if j == 0:
                infap += 1.0
            else:
                frac_rel = (rel_sf + eps) / (rel_sf + nonrel_sf + 2 * eps)
                infap += 1.0 / (j + 1) + (j / (j + 1)) * (
                    (rel_sf + nonrel_sf + unj_sf) / j * frac_rel
                )
            rel_sf += 1
        else:
            nonrel_sf += 1
    m["infAP"] = _safe_div(infap, R)

    # interpolated precision at recall levels (trec_eval 10: lround(p * R))
    iprec = []
    for level in IPREC_LEVELS:
        need = _lround(level * R)
        best = 0.0
        if need <= rel_ret:
            for i in range(n):
                if rel_flags[i] and cum[i] >= need:
                    best = max(best, cum[i] / (i + 1))
        iprec.append(best)
        m[f"iprec_at_recall_{level:.2f}"] = best
    m["11pt_avg"] = sum(iprec) / len(iprec)
    if judged_only and n == 0:
        # trec_eval 10 with -J: an empty judged ranking (e.g. with -c, a judged query
        # absent from the run) divides 0 by 0 at every recall level needing 0 relevant
        # documents (conformance README, generated/v04_query_sets/expected/c_J.*), and
        # 11pt_avg averages that NaN.
        for level in IPREC_LEVELS:
            if _lround(level * R) == 0:
                m[f"iprec_at_recall_{level:.2f}"] = m["11pt_avg"] = math.nan

    # rank-biased precision: trec_eval's gain table holds every level 0..max judged
    # label (gain = level); when a gain exceeds 1 all are rescaled to [0, 1] by
    # (g - min) / (max - min), and min is level 0's gain, 0.
    hi = max(judged, default=0)

    def rbp_gain(x: object) -> float:
        if not isinstance(x, int):
            return 0.0
        return x / hi if hi > 1 else float(x)

    m["rbp"] = (1 - rbp_p) * sum(rbp_gain(x) * rbp_p**i for i, x in enumerate(ranked))

    # fraction of the top k that is not judged (not pooled, or a negative label)
    for k in UNJ_CUTOFFS:
        m[f"unj_{k}"] = sum(1 for x in ranked[:k] if not isinstance(x, int)) / k
    return m


def _lround(x: float) -> int:
    """C ``lround``: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    *,
    complete: bool = False,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    rbp_p: float = 0.9,
    cutoffs: tuple[int, ...] = CUTOFFS,
) -> dict[str, dict[str, float]]:
    """``{measure: {qid or "all": value}}`` like ``trec_eval -q``.

    Evaluated queries: the judged ones, in byte order of their ids; without
    ``complete`` a judged query missing from the run is an error (``KeyError``), with
    it an empty ranking. ``all`` = sum in query order divided once by the number of
    queries (sums for ``num_*``).
    """
    qids = sorted(qrels, key=_key)
    if not complete:
        missing = [q for q in qids if q not in run]
        if missing:
            raise KeyError(missing[0])
    out: dict[str, dict[str, float]] = {}
    for q in qids:
        vals = query_measures(
            qrels[q],
            run.get(q),
            relevance_level=relevance_level,
            max_docs=max_docs,
            judged_only=judged_only,
            rbp_p=rbp_p,
            cutoffs=cutoffs,
        )
        for name, v in vals.items():
            out.setdefault(name, {})[q] = v
    nq = len(qids)
    for name, per_q in out.items():
        total = 0.0
        for q in qids:
            total += per_q[q]
        per_q["all"] = total if name in INTEGER_MEASURES else total / nq
    if complete and relevance_level != 1:
        # trec_eval 10 quirk: with -c the `all` num_rel counts labels >= 1 whatever -l.
        out["num_rel"]["all"] = sum(1 for q in qids for v in qrels[q].values() if v >= 1)
    return out
