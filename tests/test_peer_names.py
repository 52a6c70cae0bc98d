"""The peers' measure spellings (issue 12), each checked against the peer's own value.

ranx and ir_measures are run here, inside the test, on one conformance case
(``v02_graded_negative``: labels -2 to 4, so negative labels, graded gains and ERR's
largest grade 4 are all exercised), and every spelling is evaluated by irmetrics
and compared per query with the peer that owns the spelling. Nothing here is an
irmetrics value pasted back: the expected numbers come from the peers.

Scores are replaced by each query's rank in trec_eval's order (score descending, doc
id descending) before anyone sees the run: the ranking is the one irmetrics and
trec_eval use, and no peer meets a tie (ranx orders ties by an unstable argsort,
ir_measures by doc id ascending).

ranx and ir_measures are test dependencies (the ``test`` extra): a missing one fails
the test; it is never skipped.
"""

from __future__ import annotations

import functools
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

import irmetrics

REPO = Path(__file__).resolve().parents[1]

CASE = "v02_graded_negative"

# (our spelling, names switch, the peer's spelling). The ranx rows use ranx's own
# spelling of the same measure; the ir_measures rows, ir_measures' parse of it.
RANX = [
    ("MAP", None, "map"),
    ("MRR", None, "mrr"),
    ("NDCG@10", None, "ndcg@10"),
    ("precision", None, "precision"),
    ("f1", None, "f1"),
    ("hit_rate", None, "hit_rate"),
    ("precision-l2", None, "precision-l2"),
    ("recall", "ranx", "recall"),
    ("hits", "ranx", "hits"),
    ("recall-l2", "ranx", "recall-l2"),
    ("rbp.95", None, "rbp.95"),
    ("rbp.8", None, "rbp.8"),
    ("rbp.95-l2", None, "rbp.95-l2"),
    ("precision@5", "ranx", "precision@5"),
    ("recall@100", "ranx", "recall@100"),
]

IR_MEASURES = [
    ("MAP", None, "MAP"),
    ("MRR", None, "RR"),
    ("NDCG@10", None, "nDCG@10"),
    ("P_5,10", None, ["P@5", "P@10"]),
    ("ndcg_cut_5,10", None, ["nDCG@5", "nDCG@10"]),
    ("nDCG(gains={0:1,1:2})", None, "nDCG(gains={0:1,1:2})"),
    ("nDCG(gains={0:1,1:2})@10", None, "nDCG(gains={0:1,1:2})@10"),
    ('nDCG(dcg="exp-log2", cutoff=20)@10', None, 'nDCG(dcg="exp-log2", cutoff=20)@10'),
    ("IPrec(rel=2, recall=0.4)", None, "IPrec(rel=2, recall=0.4)"),
    ("SetRelP(rel=2)", None, "SetRelP(rel=2)"),
    ("SetP(relative=True)", None, "SetP(relative=True)"),
    ("SetF(rel=1, beta=0.5)", None, "SetF(rel=1, beta=0.5)"),
    ("SetF(rel=2, beta=2.0)", None, "SetF(rel=2, beta=2.0)"),
    ("infAP(rel=2)", None, "infAP(rel=2)"),
    ("Rprec(rel=2)", None, "Rprec(rel=2)"),
    ("P(judged_only=True)@4", None, "P(judged_only=True)@4"),
    ("AP(judged_only=True)", None, "AP(judged_only=True)"),
    ("Judged", None, "Judged"),
    ("Judged@10", None, "Judged@10"),
    ("NumRet(rel=2)", None, "NumRet(rel=2)"),
    ("NumRet", None, "NumRet"),
    # rel= on the other families that take it
    ("Success(rel=2)@10", None, "Success(rel=2)@10"),
    ("RR(rel=3)", None, "RR(rel=3)"),
    ("Bpref(rel=2)", None, "Bpref(rel=2)"),
    ("SetAP(rel=2)", None, "SetAP(rel=2)"),
    ("SetP(rel=3)", None, "SetP(rel=3)"),
    ("AP(rel=2)@100", None, "AP(rel=2)@100"),
    ("P(rel=2, judged_only=True)@10", None, "P(rel=2, judged_only=True)@10"),
    ("nDCG(judged_only=True)@10", None, "nDCG(judged_only=True)@10"),
    ("IPrec@0.2", None, "IPrec@0.2"),
    ("NumRel", None, "NumRel"),
    # gdeval's ERR: gmax 4 explicitly, or ir_measures' meaning of ERR@k
    ("ERR(gmax=4)@10", None, "ERR@10"),
    ("ERR@10", "ir_measures", "ERR@10"),
    ("err@20", "ir_measures", "ERR@20"),
    # the default ERR@k takes gmax from the qrels, 4 in this case: gdeval's value too
    ("ERR@10", None, "ERR@10"),
    ("err@10", None, "ERR@10"),
]


def trec9_differs(m: Any, judged: dict[str, int]) -> bool:
    """Whether ir_measures' IPrec (pytrec_eval, which embeds trec_eval 9.x) turns the
    recall level into another rank than trec_eval 10 does for this query: 9.x takes
    ``(long)(p * R + 0.9)``, 10.0 ``lround(p * R)`` (DISCREPANCIES.md, pytrec_eval 1).
    """
    if m.NAME != "IPrec":
        return False
    rel = m.params.get("rel", 1)
    big_r = sum(1 for lab in judged.values() if lab >= rel)
    x = m.params["recall"] * big_r
    return int(x + 0.9) != math.floor(x + 0.5)


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by doc id descending (bytes)."""
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


@functools.cache
def data(case_dir: Path) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels = irmetrics.Qrels.from_file(case_dir / "qrels.txt").to_dict()
    run = irmetrics.Run.from_file(case_dir / "run.txt").to_dict()
    # scores = rank in trec_eval's order, best highest: no ties for any tool
    ranked = {q: trec_order(docs) for q, docs in run.items()}
    run = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in ranked.items()}
    return qrels, run


@pytest.fixture(scope="module")
def case(conformance: Path) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    return data(conformance / "generated" / CASE)


def ours(
    case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
    name: str,
    names: str | None,
) -> dict[str, dict[str, float]]:
    qrels, run = case
    out = irmetrics.evaluate(qrels, run, name, per_query=True, names=names)
    assert isinstance(out, dict)
    return out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize(("name", "names", "peer"), RANX, ids=[f"{r[0]}|{r[1]}" for r in RANX])
def test_ranx_spellings_give_ranx_values(
    case: Any, name: str, names: str | None, peer: str
) -> None:
    import ranx

    qrels, run = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's compilation warnings
        rq, rr = ranx.Qrels(qrels), ranx.Run(run)
        ranx.evaluate(rq, rr, peer, make_comparable=True)
    want = {q: float(v) for q, v in rr.scores[peer].items()}
    got = ours(case, name, names)
    assert len(got) == 1, got
    (per_query,) = got.values()
    assert set(per_query) <= set(want)
    assert len(per_query) == len(run)
    bad = {q: (v, want[q]) for q, v in per_query.items() if not close(v, want[q])}
    assert not bad, f"{name}: {len(bad)} queries differ from ranx's {peer}: {list(bad.items())[:3]}"


@pytest.mark.parametrize(
    ("name", "names", "peer"), IR_MEASURES, ids=[f"{r[0]}|{r[1]}" for r in IR_MEASURES]
)
def test_ir_measures_spellings_give_ir_measures_values(
    case: Any, name: str, names: str | None, peer: str | list[str]
) -> None:
    import ir_measures

    qrels, run = case
    peers = [peer] if isinstance(peer, str) else peer
    parsed = [ir_measures.parse_measure(p) for p in peers]
    want: dict[Any, dict[str, float]] = {m: {} for m in parsed}
    for r in ir_measures.iter_calc(parsed, qrels, run):
        want[r.measure][r.query_id] = float(r.value)
    got = ours(case, name, names)
    assert len(got) == len(parsed), got
    for (col, per_query), m in zip(got.items(), parsed):
        # ir_measures reports the queries of the run that the qrels judge
        assert set(want[m]) <= set(per_query), (col, m)
        compared = {q: v for q, v in want[m].items() if not trec9_differs(m, qrels[q])}
        assert len(compared) >= len(want[m]) // 2, (m, len(compared), len(want[m]))
        bad = {q: (per_query[q], v) for q, v in compared.items() if not close(per_query[q], v)}
        # gdeval prints 5 decimals: its ERR and exp-gain nDCG are compared to 5e-6
        if "ERR" in str(m) or "exp-log2" in str(m):
            bad = {q: p for q, p in bad.items() if abs(p[0] - p[1]) > 5e-6}
        first = list(bad.items())[:3]
        assert not bad, f"{name} ({col}): {len(bad)} queries differ from {m}: {first}"
    if any(trec9_differs(m, qrels[q]) for m in parsed for q in want[m]):
        return  # the mean holds the queries trec_eval 9 and 10 differ on
    # the `all` value is ir_measures' aggregate (a sum for NumRet, else the mean)
    agg = ir_measures.calc_aggregate(parsed, qrels, run)
    summary = irmetrics.evaluate(qrels, run, name, names=names)
    assert isinstance(summary, dict)
    for v, m in zip(summary.values(), parsed):
        tol = 5e-6 if ("ERR" in str(m) or "exp-log2" in str(m)) else 1e-12
        assert math.isclose(float(v), float(agg[m]), rel_tol=tol, abs_tol=tol), (name, m)


def test_case_is_the_one_described(case: Any) -> None:
    """The case holds negative and graded labels up to 4 (ERR's default gmax is 4)."""
    qrels, _ = case
    labels = {lab for docs in qrels.values() for lab in docs.values()}
    assert min(labels) < 0 and max(labels) == 4


def test_err_means_one_thing_whatever_the_case(case: Any) -> None:
    """``ERR@k``, ``err@k``, ``Err@k`` and ``err_cut_k`` are one measure; gdeval's fixed
    grade is spelled ``ERR(gmax=4)@k`` (or ``names="ir_measures"``)."""
    qrels, run = case
    # a qrels whose largest label is 2: the default gmax is 2, gdeval's stays 4
    low = {q: {d: min(lab, 2) for d, lab in docs.items()} for q, docs in qrels.items()}
    spellings = ["ERR@10", "err@10", "Err@10", "err_cut_10", "err_cut.10", "ERR(gmax=2)@10"]
    vals = [irmetrics.evaluate(low, run, s)[s] for s in spellings]
    assert all(v == vals[0] for v in vals), dict(zip(spellings, vals))
    gd = irmetrics.evaluate(low, run, "ERR(gmax=4)@10")["ERR(gmax=4)@10"]
    assert gd != vals[0]
    assert irmetrics.evaluate(low, run, "ERR@10", names="ir_measures")["ERR@10"] == gd


def test_names_switch_is_checked(case: Any) -> None:
    qrels, run = case
    with pytest.raises(irmetrics.Error, match="names must be"):
        irmetrics.evaluate(qrels, run, "map", names="pytrec_eval")
    # trec_eval's recall keeps trec_eval's cut-offs unless ranx's meaning is asked for
    assert "recall_1000" in irmetrics.evaluate(qrels, run, "recall")
    assert list(irmetrics.evaluate(qrels, run, "recall", names="ranx")) == ["recall"]


def test_ir_measures_measure_objects_are_read_by_their_names(case: Any) -> None:
    """ir_measures' measure objects (``nDCG@10``, ``AP(rel=2)``) are accepted wherever a
    measure name is, alone or in a list, and mean what ir_measures computes for them;
    the results are keyed by their names (``str(m)``). A lone object used to fail with
    ``KeyError: 0`` (an ir_measures measure is indexable by its parameters)."""
    import ir_measures
    from ir_measures import AP, RR, Bpref, Judged, P, R, Rprec, SetF, Success, nDCG

    qrels, run = case
    objs = [nDCG @ 10, AP(rel=2), P @ 5, RR, R @ 100, Bpref, SetF, Judged @ 10, Rprec]
    objs += [Success @ 3, nDCG(gains={0: 1, 1: 2}) @ 10]
    # one measure a call: ir_measures computing nDCG@10 beside nDCG(gains=...)@10 gives
    # either value to both, by the order of a set (its pytrec_eval provider)
    agg = {m: ir_measures.calc_aggregate([m], qrels, run)[m] for m in objs}
    for given in (objs, tuple(objs)):
        got = irmetrics.evaluate(qrels, run, given)
        assert isinstance(got, dict)
        assert list(got) == [str(m) for m in objs]
        for m in objs:
            assert math.isclose(got[str(m)], float(agg[m]), rel_tol=1e-12, abs_tol=1e-12), m
    assert irmetrics.evaluate(qrels, run, nDCG @ 10) == {"nDCG@10": pytest.approx(agg[nDCG @ 10])}
    per_query = irmetrics.Evaluator(qrels, AP(rel=2)).evaluate(run, per_query=True)
    want = {r.query_id: r.value for r in ir_measures.iter_calc([AP(rel=2)], qrels, run)}
    assert per_query["AP(rel=2)"] == pytest.approx(want, rel=1e-12, abs=1e-12)
    # a mixed list, and the routes that take one measure or build no Evaluator
    assert list(irmetrics.evaluate(qrels, run, ["map", P @ 5])) == ["map", "P@5"]
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    runs = {"a": run, "b": other}
    rep = irmetrics.compare(qrels, runs, [nDCG @ 10, "AP"])
    assert rep.measures == ["nDCG@10", "AP"]
    by_name = irmetrics.compare(qrels, runs, ["nDCG@10", "AP"])
    assert rep.to_dict() == by_name.to_dict()
    best = irmetrics.optimize_fusion(qrels, [run, other], metric=nDCG @ 10)
    assert best == irmetrics.optimize_fusion(qrels, [run, other], metric="nDCG@10")
    # with an unsupported one, the error names it as ir_measures spells it
    with pytest.raises(irmetrics.MeasureError, match="infAP|alpha_nDCG"):
        irmetrics.evaluate(qrels, run, [ir_measures.alpha_nDCG @ 5])


def test_ir_measures_objects_in_dense_and_diversity_routes() -> None:
    import numpy as np
    from ir_measures import P, alpha_nDCG, nDCG

    import irmetrics.dense as dense

    y_true = np.array([[3, 2, 0, 0, 1], [0, 1, 0, 2, 0]])
    y_score = np.array([[0.9, 0.8, 0.7, 0.2, 0.4], [0.5, 0.5, 0.1, 0.3, 0.9]])
    assert dense.evaluate(y_true, y_score, [nDCG @ 3, P @ 2]) == dense.evaluate(
        y_true, y_score, ["nDCG@3", "P@2"]
    )
    rows = [("1", "1", "a", 1), ("1", "2", "b", 1), ("1", "2", "c", 1), ("1", "3", "c", 1)]
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert irmetrics.diversity(rows, run, alpha_nDCG @ 2) == irmetrics.diversity(
        rows, run, "alpha_nDCG@2"
    )


def test_the_peers_data_structures_are_inputs(case: Any) -> None:
    """ranx's ``Qrels`` / ``Run`` (a run's name is its tag) and ir_measures' rows (lists
    or iterators of ``Qrel`` / ``ScoredDoc``) go wherever judgments and runs go, with
    the peers' own values. Both were refused ("qrels must be a Qrels, ... not Qrels")."""
    import ir_measures
    import ranx
    from ir_measures import AP, nDCG

    qrels, run = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's compilation warnings
        rq, rr = ranx.Qrels(qrels), ranx.Run(run, name="bm25")
        want = ranx.evaluate(rq, rr, ["map", "ndcg@10"], make_comparable=True)
    got = irmetrics.evaluate(rq, rr, ["map", "ndcg@10"])
    assert isinstance(got, dict)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    reversed_run = ranx.Run({q: {d: -s for d, s in docs.items()} for q, docs in run.items()})
    reversed_run.name = "reversed"
    report = irmetrics.compare(rq, [rr, reversed_run], "map")
    assert report.systems == ["bm25", "reversed"]
    assert irmetrics.Run.from_dict(run).to_dict() == irmetrics.fuse([rr, rr], "max").to_dict()

    def rows() -> tuple[list[Any], list[Any]]:
        q = [ir_measures.Qrel(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
        r = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        return q, r

    q_rows, r_rows = rows()
    agg = ir_measures.calc_aggregate([AP, nDCG @ 10], q_rows, r_rows)
    for q_in, r_in in (rows(), map(iter, rows())):  # lists, then iterators
        got = irmetrics.evaluate(q_in, r_in, [AP, nDCG @ 10])
        assert got == pytest.approx({"AP": agg[AP], "nDCG@10": agg[nDCG @ 10]}, rel=1e-12)


def test_the_peers_column_names_are_found(case: Any, tmp_path: Path) -> None:
    """Frames shaped as trectools (``query``, ``q0``, ``docid``, ``rel`` / ``score``),
    PyTerrier (``qid``, ``query`` text, ``docno``, ``label``) and BEIR (``query-id``,
    ``corpus-id``, ``score``) lay them out are read by name through pandas, polars,
    pyarrow and parquet, with ir_measures' values; JSON keys go by the same names. The
    frames' names were fewer than the JSON keys' (``query``, ``query-id``, ``corpus-id``
    refused in a frame)."""
    import ir_measures
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq
    from ir_measures import AP, nDCG

    qrels, run = case
    agg = {m: ir_measures.calc_aggregate([m], qrels, run)[m] for m in (AP, nDCG @ 10)}
    want = {"AP": agg[AP], "nDCG@10": agg[nDCG @ 10]}
    q_rows = [(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    shapes = {
        "trectools": (
            pd.DataFrame(
                [(q, "0", d, lab) for q, d, lab in q_rows], columns=["query", "q0", "docid", "rel"]
            ),
            pd.DataFrame(
                [(q, "Q0", d, 0, s, "sys") for q, d, s in r_rows],
                columns=["query", "q0", "docid", "rank", "score", "system"],
            ),
        ),
        "pyterrier": (
            pd.DataFrame(q_rows, columns=["qid", "docno", "label"]),
            pd.DataFrame(
                [(q, f"text of {q}", d, s) for q, d, s in r_rows],
                columns=["qid", "query", "docno", "score"],
            ),
        ),
        "beir": (
            pd.DataFrame(q_rows, columns=["query-id", "corpus-id", "score"]),
            pd.DataFrame(r_rows, columns=["query-id", "corpus-id", "score"]),
        ),
    }
    for shape, (qf, rf) in shapes.items():
        tables = {"pandas": (qf, rf), "polars": (pl.from_pandas(qf), pl.from_pandas(rf))}
        tables["pyarrow"] = (pa.Table.from_pandas(qf), pa.Table.from_pandas(rf))
        pq.write_table(tables["pyarrow"][0], tmp_path / f"{shape}-qrels.parquet")
        pq.write_table(tables["pyarrow"][1], tmp_path / f"{shape}-run.parquet")
        tables["parquet"] = (tmp_path / f"{shape}-qrels.parquet", tmp_path / f"{shape}-run.parquet")
        qf.to_json(tmp_path / f"{shape}-qrels.jsonl", orient="records", lines=True)
        rf.to_json(tmp_path / f"{shape}-run.jsonl", orient="records", lines=True)
        tables["jsonl"] = (tmp_path / f"{shape}-qrels.jsonl", tmp_path / f"{shape}-run.jsonl")
        for route, (q_in, r_in) in tables.items():
            got = irmetrics.evaluate(q_in, r_in, [AP, nDCG @ 10])
            assert got == pytest.approx(want, rel=1e-12), (shape, route)


def test_trectools_objects_are_inputs(tmp_path: Path) -> None:
    """trectools' ``TrecQrel`` / ``TrecRun`` (their ``qrels_data`` / ``run_data`` frames,
    whose ``query`` / ``docid`` / ``rel`` columns are found by name; a run's id is its
    tag) give trectools' own MAP and P@5, per query too."""
    from trectools import TrecEval, TrecQrel, TrecRun

    data = REPO / "tests" / "data"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # trectools' own pandas warnings
        tq = TrecQrel(str(data / "dl19-passage.qrels"))
        runs = [TrecRun(str(data / f"dl19-{n}.run")) for n in ("bm25", "dense")]
        evals = [TrecEval(tr, tq) for tr in runs]
        wants = [
            (te.get_map(), te.get_precision(depth=5), te.get_map(per_query=True)) for te in evals
        ]
    for tr, (ap, p5, ap_per_query) in zip(runs, wants):
        got = irmetrics.evaluate(tq, tr, ["map", "P@5"])
        assert got == pytest.approx({"map": ap, "P@5": p5}, rel=1e-12)
        per_query = irmetrics.evaluate(tq, tr, "map", per_query=True)["map"]
        want = {str(q): v for q, v in ap_per_query.iloc[:, 0].items()}
        assert per_query == pytest.approx(want, rel=1e-12)
    report = irmetrics.compare(tq, runs, "map")
    assert report.systems == [tr.get_runid() for tr in runs]


def test_measures_given_first_as_ir_measures_takes_them(case: Any) -> None:
    """ir_measures' ``calc_aggregate(measures, qrels, run)`` puts the measures first;
    the same call here says where they go."""
    from ir_measures import nDCG

    qrels, run = case
    with pytest.raises(irmetrics.FormatError, match=r"come last: evaluate\(qrels, run, measures"):
        irmetrics.evaluate([nDCG @ 10], qrels, run)
    with pytest.raises(irmetrics.InputError, match=r"measures come last: evaluate\(qrels, run"):
        irmetrics.evaluate(nDCG @ 10, qrels, run)
    with pytest.raises(irmetrics.FormatError, match="they come last"):
        irmetrics.evaluate(["nDCG@10"], qrels, run)
