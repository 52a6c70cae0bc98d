"""Diversity measures (irmetrics.diversity) against pyndeval, which runs ndeval.c (TREC
Web track 2009-2014) inside the test: generated runs on every topic of the Web track
2013 diversity qrels (web.201-250), with ties, unjudged documents, documents judged
only non-relevant, topics missing from the run and run-only topics, plus small
hand-made cases; every value to 1e-9."""

from __future__ import annotations

import math
import random
import re
import subprocess
import sys
from pathlib import Path

import ir_measures
import pandas as pd
import polars as pl
import pyarrow as pa
import pyndeval
import pytest

import irmetrics

KINDS = ["ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec"]
CUTOFFS = [1, 2, 3, 5, 10, 19, 20]
NDEVAL = [f"{k}@{c}" for k in KINDS for c in CUTOFFS] + ["NRBP", "nNRBP", "MAP-IA"]
# the same measures in ir_measures' spelling
IR_NAMES = {
    "ERR-IA": "ERR_IA",
    "nERR-IA": "nERR_IA",
    "alpha-DCG": "alpha_DCG",
    "alpha-nDCG": "alpha_nDCG",
    "P-IA": "P_IA",
    "strec": "StRecall",
    "MAP-IA": "AP_IA",
}


def ir_name(m: str) -> str:
    base, _, k = m.partition("@")
    base = IR_NAMES.get(base, base)
    return f"{base}@{k}" if k else base


@pytest.fixture(scope="module")
def web(shared: Path) -> tuple[Path, list[tuple[str, str, str, int]]]:
    path = shared / "data" / "qrels" / "web.201-250.ndeval.txt"
    rows = []
    for line in path.read_text().splitlines():
        q, s, d, r = line.split()
        rows.append((q, s, d, int(r)))
    return path, rows


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


def trec_order(docs: dict[str, float]) -> list[str]:
    """Score descending, ties by document id descending (trec_eval's order)."""
    by_doc = sorted(docs, reverse=True)
    return sorted(by_doc, key=lambda d: -docs[d])


def pyndeval_values(
    rows, run: dict[str, dict[str, float]], measures, ties: str = "ascending", **kw
) -> dict[str, dict[str, float]]:
    """pyndeval's values; pyndeval ranks ties by document id ascending, so for the
    descending order the run is handed over as ranks."""
    flat = []
    for q, docs in run.items():
        if ties == "ascending":
            flat.extend((q, d, s) for d, s in docs.items())
        else:
            order = trec_order(docs)
            flat.extend((q, d, float(-i)) for i, d in enumerate(order))
    return pyndeval.ndeval(rows, flat, measures=measures, **kw)


def generated_run(rows, seed: int) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    judged: dict[str, list[str]] = {}
    for q, _, d, _ in rows:
        judged.setdefault(q, [])
        if d not in judged[q]:
            judged[q].append(d)
    run: dict[str, dict[str, float]] = {}
    for q, docs in sorted(judged.items()):
        if rng.random() < 0.1:
            continue  # a judged topic missing from the run
        n = rng.randint(1, 60)
        pick = rng.sample(docs, min(len(docs), n))
        pick += [f"unjudged-{q}-{i}" for i in range(rng.randint(0, 8))]
        rng.shuffle(pick)
        # few distinct scores: many ties
        levels = rng.choice([3, 10, 1000])
        run[q] = {d: float(rng.randint(0, levels)) / 7 for d in pick}
    run["999"] = {"only-in-run": 1.0}  # a topic not judged
    return run


def compare(got, ref, names) -> None:
    """``got``: irmetrics' per_query dict keyed by ``names[m]``; ``ref``: pyndeval's."""
    assert set(ref) == set(next(iter(got.values())))
    for m, name in names.items():
        for q in ref:
            assert close(got[name][q], ref[q][m]), (name, q, got[name][q], ref[q][m])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ties", ["ascending", "descending"])
def test_generated_runs_on_the_web_track_equal_pyndeval(web, seed, ties):
    path, rows = web
    run = generated_run(rows, seed)
    ref = pyndeval_values(rows, run, NDEVAL, ties)
    names = {m: ir_name(m) for m in NDEVAL}
    got = irmetrics.diversity(path, run, list(names.values()), per_query=True, ties=ties)
    compare(got, ref, names)
    # ndeval's own spellings, and the means (ndeval's amean: over the topics in both)
    means = irmetrics.diversity(path, run, NDEVAL, ties=ties)
    for m in NDEVAL:
        want = sum(ref[q][m] for q in ref) / len(ref)
        assert close(means[m], want), (m, means[m], want)


@pytest.mark.parametrize(
    ("alpha", "beta", "rel"), [(0.3, 0.8, 1), (0.5, 0.5, 2), (1.0, 0.0, 1), (0.0, 1.0, 3)]
)
def test_parameters_equal_pyndeval(web, alpha, beta, rel):
    path, rows = web
    run = generated_run(rows, 11)
    ref = pyndeval.RelevanceEvaluator(
        rows, NDEVAL, relevance_level=rel, alpha=alpha, beta=beta
    ).evaluate([(q, d, s) for q, docs in run.items() for d, s in docs.items()])
    names = {m: m for m in NDEVAL}
    got = irmetrics.diversity(
        path,
        run,
        NDEVAL,
        per_query=True,
        ties="ascending",
        alpha=alpha,
        beta=beta,
        relevance_level=rel,
    )
    compare(got, ref, names)
    # the same options given in ir_measures' names
    named = {
        "alpha-nDCG@10": f"alpha_nDCG(alpha={alpha},rel={rel})@10",
        "nERR-IA@20": f"nERR_IA(alpha={alpha},rel={rel})@20",
        "nNRBP": f"nNRBP(alpha={alpha},beta={beta},rel={rel})",
        "strec@5": f"StRecall(rel={rel},cutoff=5)",
    }
    got = irmetrics.diversity(path, run, list(named.values()), per_query=True, ties="ascending")
    compare(got, ref, named)


def test_judged_only_complete_and_max_docs(web):
    path, rows = web
    run = generated_run(rows, 5)
    judged = {(q, d) for q, _, d, _ in rows}
    filtered = {q: {d: s for d, s in ds.items() if (q, d) in judged} for q, ds in run.items()}
    filtered = {q: ds for q, ds in filtered.items() if ds}
    ref = pyndeval_values(rows, filtered, NDEVAL)
    names = {m: m for m in NDEVAL}
    got = irmetrics.diversity(path, run, NDEVAL, per_query=True, ties="ascending", judged_only=True)
    # a topic whose results are all unjudged is still evaluated (an empty ranking)
    for m in NDEVAL:
        for q in ref:
            assert close(got[m][q], ref[q][m]), (m, q)
    # -M: the first max_docs documents of each ranking
    cut = {q: dict(sorted(ds.items(), key=lambda x: (-x[1], x[0]))[:7]) for q, ds in run.items()}
    ref = pyndeval_values(rows, cut, NDEVAL)
    got = irmetrics.diversity(path, run, NDEVAL, per_query=True, ties="ascending", max_docs=7)
    compare(got, ref, names)
    # -c: every judged topic, the missing ones 0, the mean over all of them
    topics = {q for q, _, _, _ in rows}
    got = irmetrics.diversity(path, run, NDEVAL, per_query=True, ties="ascending", complete=True)
    assert set(got["MAP-IA"]) == topics
    means = irmetrics.diversity(path, run, NDEVAL, ties="ascending", complete=True)
    full = pyndeval_values(rows, run, NDEVAL)
    for m in NDEVAL:
        want = sum(full[q][m] for q in full) / len(topics)
        assert close(means[m], want), m
        for q in topics - set(run):
            assert got[m][q] == 0.0


def test_ir_measures_names_give_ir_measures_numbers(web):
    _, rows = web
    run = generated_run(rows, 7)
    qrels = pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    names = [
        "alpha_nDCG@20",
        "alpha_DCG@10",
        "ERR_IA@20",
        "nERR_IA@5",
        "NRBP",
        "nNRBP",
        "AP_IA",
        "P_IA@10",
        "StRecall@20",
        "alpha_nDCG(alpha=0.8)@10",
        "NRBP(beta=0.9)",
    ]
    # one call per measure: ir_measures' pyndeval provider hands the run (an iterator)
    # to its first group of parameters only, the other groups get 0
    want = {}
    for n in names:
        want.update(ir_measures.pyndeval.calc_aggregate([ir_measures.parse_measure(n)], qrels, run))
    # ir_measures averages over every judged topic, a topic missing from the run 0:
    # ndeval's -c
    got = irmetrics.diversity(qrels, run, names, ties="ascending", complete=True)
    for n in names:
        assert close(got[n], want[ir_measures.parse_measure(n)]), n


def test_hand_made_cases():
    # pyndeval's README example, topic z judged only non-relevant, topic t with ties
    rows = [
        ("0", "a", "A", 1),
        ("0", "b", "B", 1),
        ("0", "b", "D", 1),
        ("0", "c", "C", 1),
        ("0", "c", "A", 0),
        ("z", "1", "Z1", 0),
        ("z", "2", "Z2", 0),
        ("t", "1", "T1", 1),
        ("t", "1", "T2", 1),
        ("t", "2", "T2", 1),
        ("t", "3", "T3", 2),
        ("t", "2", "T4", 1),
        ("t", "3", "T4", 1),
    ]
    run = {
        "0": {"A": 9.3, "D": 8.4, "E": 8.1, "B": 7.6},
        "z": {"Z1": 1.0, "Z2": 0.5, "X": 0.2},
        "t": {"T4": 1.0, "T1": 1.0, "T3": 1.0, "T2": 0.0, "U": 1.0},
    }
    for ties in ("ascending", "descending"):
        ref = pyndeval_values(rows, run, NDEVAL, ties)
        got = irmetrics.diversity(rows, run, NDEVAL, per_query=True, ties=ties)
        compare(got, ref, {m: m for m in NDEVAL})
    # no relevant subtopic: every value 0, nNRBP ndeval's 0/0
    assert math.isnan(got["nNRBP"]["z"]) and got["alpha-nDCG@20"]["z"] == 0.0


def test_inputs_files_rows_frames_and_run_objects_agree(web, tmp_path):
    path, rows = web
    run = generated_run(rows, 3)
    runfile = tmp_path / "run.txt"
    runfile.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s!r} sys\n"
            for q, ds in run.items()
            for i, (d, s) in enumerate(ds.items())
        )
    )
    qrels_df = pd.DataFrame(rows, columns=["query_id", "subtopic_id", "doc_id", "relevance"])
    want = irmetrics.diversity(path, run, ["alpha_nDCG@20", "NRBP"], per_query=True)
    for q_in, r_in in [
        (rows, runfile),
        (qrels_df, irmetrics.Run.from_dict(run)),
        (str(path), str(runfile)),
        (pyndeval_rows(rows), run),
        (pl.from_pandas(qrels_df), run),
        (pl.from_pandas(qrels_df).lazy(), run),
        (pa.Table.from_pandas(qrels_df, preserve_index=False), run),
        (qrels_df.rename(columns={"subtopic_id": "iteration"}), run),
    ]:
        assert irmetrics.diversity(q_in, r_in, ["alpha_nDCG@20", "NRBP"], per_query=True) == want
    df = irmetrics.diversity(path, run, ["alpha_nDCG@20"], output="pandas")
    assert (
        df.attrs["all"]["alpha_nDCG@20"]
        == irmetrics.diversity(path, run, "alpha_nDCG@20")["alpha_nDCG@20"]
    )
    # the default measures: ndeval's 21 columns in ir_measures' names
    assert list(irmetrics.diversity(path, run)) == [ir_name(m) for m in pyndeval.DEFAULT_MEASURES]
    # any number of threads, the same values
    one = irmetrics.diversity(path, run, NDEVAL, per_query=True, n_threads=1)
    assert one == irmetrics.diversity(path, run, NDEVAL, per_query=True, n_threads=4)


def pyndeval_rows(rows):
    return [pyndeval.SubtopicQrel(*r) for r in rows]


def test_bad_input(tmp_path):
    run = {"1": {"d1": 1.0}}
    bad = tmp_path / "sub.txt"
    bad.write_text("1 1 d1 1\n1 2 d1\n")
    with pytest.raises(irmetrics.Error, match=r"sub\.txt:2: malformed line: expected 4 fields"):
        irmetrics.diversity(bad, run)
    bad.write_text("1 1 d1 1\n1 1 d2 x\n")
    with pytest.raises(irmetrics.Error, match=r"sub\.txt:2:"):
        irmetrics.diversity(bad, run)
    bad.write_text("1 1 d1 1\n1 2 d1 0\n1 1 d1 0\n")
    with pytest.raises(irmetrics.Error, match=r"sub\.txt:3.*first at line 1"):
        irmetrics.diversity(bad, run)
    # a run file given as subtopic qrels: six fields
    bad.write_text("1 Q0 d1 1 2.5 sys\n")
    with pytest.raises(irmetrics.Error, match=r"sub\.txt:1: malformed line"):
        irmetrics.diversity(bad, run)
    with pytest.raises(irmetrics.Error, match=r"row 2"):
        irmetrics.diversity([("1", "1", "d1", 1), ("1", "1", "d2")], run)
    with pytest.raises(irmetrics.MeasureError, match="needs a cut-off"):
        irmetrics.diversity([("1", "1", "d1", 1)], run, ["alpha_nDCG"])
    with pytest.raises(irmetrics.MeasureError, match="not a diversity measure"):
        irmetrics.diversity([("1", "1", "d1", 1)], run, ["nDCG@10"])
    with pytest.raises(irmetrics.Error, match="alpha must be a number from 0 to 1"):
        irmetrics.diversity([("1", "1", "d1", 1)], run, alpha=1.5)
    with pytest.raises(irmetrics.Error, match="ties must be"):
        irmetrics.diversity([("1", "1", "d1", 1)], run, ties="random")
    with pytest.raises(irmetrics.Error, match="no topic"):
        irmetrics.diversity([("2", "1", "d1", 1)], run)
    frame = pd.DataFrame({"query_id": ["1"], "subtopic_id": ["1"], "docno": ["d1"], "rel": [1]})
    for table in (frame, pl.from_pandas(frame), pl.from_pandas(frame).lazy()):
        with pytest.raises(
            irmetrics.InputError, match=r"lacks the column\(s\) \['doc_id', 'relevance'\]"
        ):
            irmetrics.diversity(table, run)


def test_the_readme_table_names_equal_pyndeval():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Diversity (ndeval)") :]
    section = section[: section.index("\n### ", 10)]
    rows = [
        [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| definition")
    ]
    assert len(rows) == 9
    qrels = [("1", "1", "a", 1), ("1", "2", "b", 1), ("1", "2", "c", 1), ("1", "3", "c", 0)]
    run = {"1": {"c": 3.0, "x": 2.0, "a": 1.0, "b": 0.5}}
    ref = pyndeval_values(qrels, run, [m.replace("@k", "@3") for r in rows for m in ticks(r[2])])
    for r in rows:
        want = ref["1"][ticks(r[2])[0].replace("@k", "@3")]
        for name in ticks(r[1]):
            got = irmetrics.diversity(qrels, run, name.replace("@k", "@3"), ties="ascending")
            assert close(next(iter(got.values())), want), name


def ticks(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def ndeval_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "irmetrics", "ndeval", *args], capture_output=True, timeout=120
    )


def c_fixed(v: float) -> str:
    """C's ``%.6f`` (glibc prints x86's 0/0 as -nan)."""
    return "-nan" if math.isnan(v) else f"{v:.6f}"


@pytest.mark.parametrize(
    "flags", [[], ["-traditional"], ["-c"], ["-alpha", "0.3", "-beta", "0.8"], ["-M", "7"]]
)
def test_ndeval_command_prints_ndevals_csv(web, tmp_path, flags):
    path, rows = web
    run = generated_run(rows, 9)
    # ndeval orders by the rank column by default: ranks in a shuffled order, scores
    # with ties (read with -traditional), lines shuffled
    rng = random.Random(0)
    ranked, lines = {}, []
    for q, ds in run.items():
        docs = list(ds)
        rng.shuffle(docs)
        ranked[q] = docs
        lines += [f"{q} Q0 {d} {i + 1} {ds[d]!r} mysys\n" for i, d in enumerate(docs)]
    rng.shuffle(lines)
    runfile = tmp_path / "run.txt"
    runfile.write_text("".join(lines))
    order = {q: trec_order(ds) if "-traditional" in flags else ranked[q] for q, ds in run.items()}
    if "-M" in flags:
        order = {q: o[: int(flags[flags.index("-M") + 1])] for q, o in order.items()}
    params = {"alpha": 0.3, "beta": 0.8} if "-alpha" in flags else {}
    flat = [(q, d, float(-i)) for q, o in order.items() for i, d in enumerate(o)]
    ref = pyndeval.ndeval(rows, flat, measures=pyndeval.DEFAULT_MEASURES, **params)
    out = ndeval_cli(*flags, str(path), str(runfile))
    assert out.returncode == 0, out.stderr
    got = out.stdout.decode().splitlines()
    assert got[0] == "runid,topic," + ",".join(pyndeval.DEFAULT_MEASURES)
    topics = sorted(run, key=int)
    totals = [0.0] * len(pyndeval.DEFAULT_MEASURES)
    want = []
    for q in topics:
        vals = [ref[q][m] if q in ref else 0.0 for m in pyndeval.DEFAULT_MEASURES]
        totals = [t + v for t, v in zip(totals, vals)]
        want.append(",".join(["mysys", q, *map(c_fixed, vals)]))
    n = len({r[0] for r in rows}) if "-c" in flags else len(ref)
    want.append(",".join(["mysys", "amean", *(c_fixed(t / n) for t in totals)]))
    assert got[1:] == want


def test_ndeval_command_bad_input(tmp_path):
    qrels = tmp_path / "sub.txt"
    qrels.write_text("201 1 d1 1\nwt-201 1 d2 1\n")
    run = tmp_path / "run.txt"
    run.write_text("201 Q0 d1 1 2.0 tag\n201 Q0 d2 1 1.0 tag\n")
    out = ndeval_cli(str(qrels), str(run))
    assert out.returncode == 1
    assert b"sub.txt:2: topic 'wt-201' is not a whole number" in out.stderr
    qrels.write_text("201 1 d1 1\n")
    out = ndeval_cli(str(qrels), str(run))
    assert out.returncode == 1 and b"run.txt:2: duplicate rank (1) for topic 201" in out.stderr
    out = ndeval_cli("-traditional", str(qrels), str(run))
    assert out.returncode == 0, out.stderr
    out = ndeval_cli("-baseline", "x", str(qrels), str(run))
    assert out.returncode == 2 and b"not supported" in out.stderr
