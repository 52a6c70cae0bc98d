"""The C/W/L user models against cwl_eval 1.0.12 (the reference), run inside the test.

cwl_eval is run three ways: its command line (``cwl-eval GAINS RUN -m METRICS``, which
prints four decimals), its Python objects (``RankingMaker`` and the metric classes:
full precision), and through ir_measures' ``cwl_eval`` provider (ir_measures' names).
The data: seeded random qrels with graded labels (0..3, a few negative), unjudged
documents, short runs, a ranking longer than cwl_eval's depth of 1000, a query without
relevant documents; and TREC DL 2019's passage qrels with a generated run.

cwl_eval reads the run in file order; irmetrics ranks by score (ties by document id
descending, trec_eval's order). The runs here are written in that order, so the two
read the same rankings.
"""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest
from conftest import require_shared
from cwl.ruler.cwl_ruler import (
    APCWLMetric,
    BPMCWLMetric,
    BPMDCWLMetric,
    INSQCWLMetric,
    INSTCWLMetric,
    NDCGCWLMetric,
    NERReq8CWLMetric,
    NERReq9CWLMetric,
    NERReq10CWLMetric,
    NERReq11CWLMetric,
    PrecisionCWLMetric,
    RBPCWLMetric,
    RRCWLMetric,
)
from cwl.ruler.ranking import RankingMaker
from cwl.seeker.trec_qrel_handler import TrecQrelHandler

import irmetrics

# cwl_eval's columns with residuals (-r): the lower bounds, then how much each rises if
# every unjudged document (and rank past the ranking's end) gained 1
STATS = ["EU", "ETU", "EC", "ETC", "ED", "ResEU", "ResETU", "ResEC", "ResETC", "ResED"]
MAX_REL = 3

# (cwl_eval's metric as its -m file spells it, a factory of the same metric, our name
# without the gain scale: "{}" takes the gain options)
MODELS: list[tuple[str, object, str]] = [
    ("PrecisionCWLMetric(1)", lambda: PrecisionCWLMetric(1), "cwl_P({})@1"),
    ("PrecisionCWLMetric(10)", lambda: PrecisionCWLMetric(10), "cwl_P({})@10"),
    ("RRCWLMetric()", RRCWLMetric, "cwl_rr({})"),
    ("APCWLMetric()", APCWLMetric, "cwl_ap({})"),
    ("RBPCWLMetric(0.5)", lambda: RBPCWLMetric(0.5), "cwl_rbp({}p=0.5)"),
    ("RBPCWLMetric(0.95)", lambda: RBPCWLMetric(0.95), "cwl_rbp({}p=0.95)"),
    ("RBPCWLMetric(0.999)", lambda: RBPCWLMetric(0.999), "cwl_rbp({}p=0.999)"),
    ("INSTCWLMetric(1.0)", lambda: INSTCWLMetric(1.0), "INST({}T=1)"),
    ("INSTCWLMetric(3.0)", lambda: INSTCWLMetric(3.0), "INST({}T=3)"),
    ("INSTCWLMetric(0.5)", lambda: INSTCWLMetric(0.5), "inst({}T=0.5)"),
    ("INSQCWLMetric(2.0)", lambda: INSQCWLMetric(2.0), "INSQ({}T=2)"),
    ("BPMCWLMetric(1.0,10)", lambda: BPMCWLMetric(1.0, 10), "BPM({}T=1,K=10)"),
    ("BPMCWLMetric(2.5,20)", lambda: BPMCWLMetric(2.5, 20), "BPM({}T=2.5)@20"),
    (
        "BPMDCWLMetric(2.0,15,1.0,1.0,0.3)",
        lambda: BPMDCWLMetric(2.0, 15, 1.0, 1.0, 0.3),
        "BPM_dynamic({}T=2,hb=1,hc=1,gain_med=0.3)@15",
    ),
    ("NDCGCWLMetric(5)", lambda: NDCGCWLMetric(5), "SDCG({})@5"),
    ("NDCGCWLMetric(20)", lambda: NDCGCWLMetric(20), "sdcg_cut({})@20"),
    ("NERReq8CWLMetric(10)", lambda: NERReq8CWLMetric(10), "NERR8({})@10"),
    ("NERReq9CWLMetric(10)", lambda: NERReq9CWLMetric(10), "NERR9({})@10"),
    ("NERReq10CWLMetric(0.8)", lambda: NERReq10CWLMetric(0.8), "NERR10({}p=0.8)"),
    ("NERReq11CWLMetric(2.0)", lambda: NERReq11CWLMetric(2.0), "NERR11({}T=2)"),
]


def our_name(template: str, gain_opts: str, stat: str) -> str:
    """Our spelling of a model with gain options and a statistic."""
    opts = gain_opts
    if stat != "EU":
        opts = f"{opts}stat={stat},"
    name = template.replace("{}", opts)
    return name.replace(",)", ")").replace("()", "")


def generated(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, float]]]]:
    """Qrels (labels -1..3) and rankings in trec_eval's order (score desc, doc desc)."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for q in range(24):
        qid = f"q{q:02d}"
        n_judged = rng.randint(1, 40)
        labels = {f"d{q}_{i}": rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for i in range(n_judged)}
        if q == 3:  # no relevant document
            labels = {d: 0 for d in labels}
        if all(v < 0 for v in labels.values()):
            labels[next(iter(labels))] = 0
        qrels[qid] = labels
        pool = list(labels) + [f"u{q}_{i}" for i in range(rng.randint(0, 30))]
        if q == 5:  # longer than cwl_eval's depth
            pool += [f"x{q}_{i}" for i in range(1100)]
        length = {7: 1, 8: 2}.get(q, rng.randint(1, len(pool)))
        if q == 5:
            length = len(pool)
        docs = rng.sample(pool, length)
        # scores with some ties, ranked as trec_eval ranks them
        run[qid] = trec_order([(d, float(rng.randint(0, 3 * length))) for d in docs])
    return qrels, run


def trec_order(scored: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """trec_eval's ranking: score descending, ties by document id descending (bytes)."""
    scored = sorted(scored, key=lambda x: x[0].encode(), reverse=True)
    return sorted(scored, key=lambda x: -x[1])


def write_qrels(path: Path, qrels: dict[str, dict[str, int]], gain=None) -> None:
    with path.open("w") as f:
        for q, docs in qrels.items():
            for d, label in docs.items():
                value = label if gain is None else repr(gain(label))
                f.write(f"{q} 0 {d} {value}\n")


def write_run(path: Path, run: dict[str, list[tuple[str, float]]]) -> None:
    with path.open("w") as f:
        for q, ranked in run.items():
            for i, (d, s) in enumerate(ranked, 1):
                f.write(f"{q} Q0 {d} {i} {s} r\n")


def scaled(label: int) -> float:
    """ir_measures' gains with min_rel = 0, max_rel = 3 (negative labels are 0)."""
    return min(max(label, 0), MAX_REL) / MAX_REL


def binary(label: int) -> float:
    return float(label >= 2)


def cwl_cli(tmp: Path, gains: Path, run: Path) -> dict[str, list[list[float]]]:
    """cwl-eval's printed values (-r: with residuals): {query: [[STATS] per model]}."""
    metrics = tmp / "metrics.txt"
    metrics.write_text("".join(f"{spec}\n" for spec, _, _ in MODELS))
    exe = shutil.which("cwl-eval") or str(Path(sys.executable).parent / "cwl-eval")
    out = subprocess.run(
        [exe, str(gains), str(run), "-m", str(metrics), "-r"],
        cwd=tmp,  # cwl_eval writes cwl.log in the working directory
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows: dict[str, list[list[float]]] = {}
    for line in out.splitlines():
        parts = line.split("\t")
        rows.setdefault(parts[0], []).append([float(x) for x in parts[2:12]])
    return rows


def cwl_objects(gains: Path, run: dict[str, list[tuple[str, float]]]):
    """cwl_eval's values at full precision, from its own objects (as its main() does)."""
    handler = TrecQrelHandler(str(gains))
    out: dict[str, list[list[float]]] = {}
    for q, ranked in run.items():
        maker = RankingMaker(q, handler, None, max_gain=1.0, max_cost=1.0, min_cost=1.0)
        for d, _ in ranked:
            maker.add(d, "Q0")
        ranking = maker.get_ranking()
        out[q] = []
        for _, make, _ in MODELS:
            metric = make()
            metric.residuals = True
            metric.measure(ranking)
            residuals = [
                metric.residual_expected_utility,
                metric.residual_expected_total_utility,
                metric.residual_expected_cost,
                metric.residual_expected_total_cost,
                metric.residual_expected_items,
            ]
            out[q].append([float(x) for x in [*metric.get_scores(), *residuals]])
    return out


def ours(qrels: Path, run: Path, gain_opts: str) -> dict[str, list[list[float]]]:
    names = [our_name(t, gain_opts, s) for _, _, t in MODELS for s in STATS]
    res = irmetrics.evaluate(str(qrels), str(run), names, per_query=True)
    queries = next(iter(res.values())).keys()
    return {
        q: [[res[our_name(t, gain_opts, s)][q] for s in STATS] for _, _, t in MODELS]
        for q in queries
    }


def compare(got, want, tol: float) -> int:
    assert set(got) == set(want)
    n = 0
    for q in want:
        for (spec, _, _), g_row, w_row in zip(MODELS, got[q], want[q]):
            for stat, g, w in zip(STATS, g_row, w_row):
                assert math.isclose(g, w, rel_tol=0, abs_tol=tol), (q, spec, stat, g, w)
                n += 1
    return n


@pytest.mark.parametrize("seed", [1, 2])
def test_graded_gains_equal_cwl_eval(tmp_path: Path, seed: int) -> None:
    """max_rel = 3 (gains label / 3) against cwl_eval given those gains."""
    qrels, run = generated(seed)
    labels, gains, run_file = tmp_path / "qrels", tmp_path / "gains", tmp_path / "run"
    write_qrels(labels, qrels)
    write_qrels(gains, qrels, scaled)
    write_run(run_file, run)
    got = ours(labels, run_file, f"max_rel={MAX_REL},")
    assert compare(got, cwl_objects(gains, run), 1e-9) == 24 * len(MODELS) * len(STATS)
    # its command line prints 4 decimals
    compare(got, cwl_cli(tmp_path, gains, run_file), 5e-5 + 1e-12)


def test_labels_as_gains_equal_cwl_eval(tmp_path: Path) -> None:
    """Without rel or max_rel the labels are the gains (cwl_eval's own reading): binary
    qrels; and rel=2 on graded labels is the same as binary labels."""
    qrels, run = generated(3)
    bin_qrels = {q: {d: int(binary(v)) for d, v in docs.items()} for q, docs in qrels.items()}
    bin_file, labels, run_file = tmp_path / "bin", tmp_path / "labels", tmp_path / "run"
    write_qrels(bin_file, bin_qrels)
    write_qrels(labels, qrels)
    write_run(run_file, run)
    want = cwl_objects(bin_file, run)
    compare(ours(bin_file, run_file, ""), want, 1e-9)
    compare(ours(labels, run_file, "rel=2,"), want, 1e-9)
    compare(ours(bin_file, run_file, ""), cwl_cli(tmp_path, bin_file, run_file), 5e-5 + 1e-12)


# ir_measures' names for the cwl_eval provider, each with our per-query value equal
IRM_NAMES = [
    "INST(T=1,max_rel=3)",
    "INST(T=2.5,min_rel=1,max_rel=3)",
    "INSQ(T=2,max_rel=3)",
    "BPM(T=1,max_rel=3)@10",
    "BPM(T=2,min_rel=1,max_rel=3)@25",
    "SDCG(max_rel=3)@10",
    "SDCG(min_rel=1,max_rel=3)@5",
    "NERR8(max_rel=3)@10",
    "NERR9(max_rel=3)@20",
    "NERR10(p=0.8,max_rel=3)",
    "NERR11(T=2,max_rel=3)",
]
# ir_measures names whose cwl_eval value (EU) is the trec_eval measure of that name
IRM_TREC_NAMES = ["P(rel=2)@5", "P(rel=1)@20", "RR(rel=2)", "RBP(rel=1,p=0.8)"]


def irm_values(names, qrels, run) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {n: {} for n in names}
    parsed = {ir_measures.parse_measure(n): n for n in names}
    for m in ir_measures.cwl_eval.iter_calc(list(parsed), qrels, run):
        out[parsed[m.measure]][m.query_id] = m.value
    return out


def check_ir_measures_names(qrels_file: Path, run_file: Path) -> int:
    qrels = list(ir_measures.read_trec_qrels(str(qrels_file)))
    run = list(ir_measures.read_trec_run(str(run_file)))
    want = irm_values(IRM_NAMES + IRM_TREC_NAMES, qrels, run)
    got = irmetrics.evaluate(
        str(qrels_file), str(run_file), IRM_NAMES + IRM_TREC_NAMES, per_query=True
    )
    n = 0
    for name in IRM_NAMES + IRM_TREC_NAMES:
        assert set(got[name]) == set(want[name]), name
        for q, w in want[name].items():
            assert math.isclose(got[name][q], w, rel_tol=0, abs_tol=1e-9), (name, q)
            n += 1
    return n


def test_ir_measures_names_on_generated_data(tmp_path: Path) -> None:
    qrels, run = generated(4)
    qrels_file, run_file = tmp_path / "qrels", tmp_path / "run"
    write_qrels(qrels_file, qrels)
    write_run(run_file, run)
    assert check_ir_measures_names(qrels_file, run_file) == 24 * 15


def test_dl19_passage_with_a_generated_run(tmp_path: Path) -> None:
    shared = require_shared()
    if shared is None:
        pytest.skip("../shared (the TREC qrels) not found")
    qrels_file = shared / "data" / "qrels" / "dl19-passage.txt"
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_file.read_text().splitlines():
        q, _, d, label = line.split()
        qrels.setdefault(q, {})[d] = int(label)
    rng = random.Random(19)
    run: dict[str, list[tuple[str, float]]] = {}
    for q, docs in qrels.items():
        picked = rng.sample(sorted(docs), min(len(docs), 150))
        picked += [f"unjudged{i}" for i in range(20)]
        run[q] = trec_order([(d, rng.random()) for d in picked])
    run_file, gains = tmp_path / "run", tmp_path / "gains"
    write_run(run_file, run)
    write_qrels(gains, qrels, scaled)
    got = ours(qrels_file, run_file, f"max_rel={MAX_REL},")
    assert compare(got, cwl_objects(gains, run), 1e-9) == 43 * len(MODELS) * len(STATS)
    assert check_ir_measures_names(qrels_file, run_file) == 43 * 15


def test_bad_gains_and_parameters_are_refused(tmp_path: Path) -> None:
    qrels = {"q1": {"a": 0, "b": 3}}
    run = {"q1": {"a": 1.0, "b": 0.5}}
    # cwl_eval's own gains must lie in [0, 1]: a graded label is named with its query
    with pytest.raises(irmetrics.Error, match=r"query 'q1', document 'b': label 3 .*max_rel"):
        irmetrics.evaluate(qrels, run, ["INST(T=2)"])
    for name, why in [
        ("INST(max_rel=1,min_rel=1)", "max_rel"),
        ("INST(rel=1,max_rel=3)", "either rel"),
        ("INST(min_rel=1)", "min_rel needs max_rel"),
        ("INST(T=0)", "parameter T must be a number > 0"),
        ("INST(T=1e-9)", "parameter T must be at least 1e-6"),
        ("cwl_rbp(p=1.5)", "parameter p must be a number from 0 to 1"),
        ("cwl_P@1001", "at most 1000"),
        ("INST(stat=XYZ)", "stat must be one of EU, ETU, EC, ETC, ED, ResEU"),
        ("P(K=3)@5", "K applies to BPM only"),
    ]:
        with pytest.raises(irmetrics.Error, match=why):
            irmetrics.evaluate(qrels, run, [name])


def test_names_print_canonically() -> None:
    qrels = {"q1": {"a": 1, "b": 0}}
    run = {"q1": {"a": 1.0, "b": 0.5}}
    res = irmetrics.evaluate(
        qrels,
        run,
        ["INST(T=3,stat=ETU)", "BPM(T=2,K=10)", "NERR8(max_rel=1)@5"],
        output="numpy",
    )
    assert list(res[1]) == ["INST(T=3,stat=ETU)", "BPM_10(T=2)", "nerr8_cut_5(max_rel=1)"]
