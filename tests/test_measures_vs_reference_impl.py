"""Differential property tests: irmetrics against an independent reference.

``reference_impl.py`` is a naive pure-Python implementation of trec_eval 10's measures
written from the definitions (no irmetrics code). It is first checked against trec_eval
10's own full-precision numbers (the conformance suite); then hypothesis draws random
qrels and runs (score ties, graded and negative labels, judged queries missing from the
run, runs shorter than every cut-off, unjudged documents, ``inf`` scores, odd ids) and
every measure is compared per query and in the ``all`` row at 1e-9. Invariants: the
result does not depend on the number of threads, on the route the data takes (dict,
columns, string, file, gzip file, streamed reader), or on the order of the run's lines.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from pathlib import Path

import pytest
import reference_impl as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irmetrics

EXAMPLES = 250  # per differential test; every example checks every measure below
CUTOFFS = (1, 2, 3, 5, 10)
MEASURES = [
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "P." + ",".join(map(str, CUTOFFS)),
    "recall." + ",".join(map(str, CUTOFFS)),
    "map",
    "map_cut." + ",".join(map(str, CUTOFFS)),
    "Rprec",
    "recip_rank",
    "success.1,5,10",
    "ndcg",
    "ndcg_cut." + ",".join(map(str, CUTOFFS)),
    "bpref",
    "infAP",
    "iprec_at_recall",
    "11pt_avg",
    "rbp",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "relative_P." + ",".join(map(str, CUTOFFS)),
    "unj",
]
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# ids: few enough to collide (duplicates across qrels and run), with byte-order traps
DOCS = ["d1", "d2", "d3", "d10", "d02", "D2", "e", "é", "z", "d 9".replace(" ", "_"), "0", "00"]
QIDS = ["q1", "q2", "q10", "1", "01", "Q"]
LABELS = st.integers(min_value=-2, max_value=4)
SCORES = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, -1.0]),  # ties
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([math.inf, -math.inf, 5e-324, -0.0]),
)


@st.composite
def data(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=5, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    for q in qids:
        labels = draw(st.dictionaries(st.sampled_from(DOCS), LABELS, min_size=1, max_size=10))
        if all(v < 0 for v in labels.values()):
            labels[draw(st.sampled_from(DOCS))] = draw(st.integers(0, 3))
        qrels[q] = labels
    run: dict[str, dict[str, float]] = {}
    run_qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=6, unique=True))
    for q in run_qids:
        run[q] = draw(st.dictionaries(st.sampled_from(DOCS), SCORES, min_size=1, max_size=12))
    missing = any(q not in run for q in qrels)
    options = {
        "complete": True if missing else draw(st.booleans()),
        "relevance_level": draw(st.sampled_from([0, 1, 1, 2])),
        "max_docs": draw(st.one_of(st.none(), st.integers(1, 8))),
        "judged_only": draw(st.booleans()),
    }
    return qrels, run, options


def close(a: float, b: float) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def compare(got_pq: dict, got_all: dict, want: dict, what: str) -> int:
    """Every measure, per query and in the ``all`` row; the queries on both sides must
    be the same (a query dropped or added fails). Returns the number of values compared."""
    assert got_pq, what
    assert set(got_all) - {"num_q"} == set(got_pq), what
    compared = 0
    for name, per_q in got_pq.items():
        assert name in want, f"{what}: reference lacks {name}"
        queries = set(want[name]) - {"all"}
        assert set(per_q) == queries, f"{what}: {name} for {sorted(per_q)}, want {sorted(queries)}"
        for q in sorted(queries):
            v = per_q[q]
            assert close(v, want[name][q]), f"{what}: {name}[{q}] = {v!r}, want {want[name][q]!r}"
            compared += 1
        v = got_all[name]
        assert close(v, want[name]["all"]), (
            f"{what}: {name}[all] = {v!r}, want {want[name]['all']!r}"
        )
        compared += 1
    return compared


def run_both(qrels: dict, run: dict, options: dict, measures: list[str], **kw):
    ev = irmetrics.Evaluator(irmetrics.Qrels.from_dict(qrels), measures, **options)
    r = irmetrics.Run.from_dict(run)
    return ev.evaluate(r, per_query=True, keys="canonical"), ev.evaluate(r, keys="canonical")


@SETTINGS
@given(data())
def test_every_measure_matches_the_reference(case: tuple[dict, dict, dict]) -> None:
    qrels, run, options = case
    want = ref.evaluate(qrels, run, cutoffs=CUTOFFS, **options)
    pq, summary = run_both(qrels, run, options, MEASURES)
    # MEASURES name 59 values: 4 counts, P/recall/map_cut/ndcg_cut/relative_P at 5
    # cut-offs, 11 iprec_at_recall, success and unj at 3, 5 set_*, and map, Rprec,
    # recip_rank, ndcg, bpref, infAP, 11pt_avg, rbp; the reference computes just these
    assert len(pq) == 59 and set(pq) == set(want), sorted(set(want) ^ set(pq))
    n = compare(pq, summary, want, f"{qrels} {run} {options}")
    assert n == 59 * (len(qrels) + 1)


@settings(SETTINGS, max_examples=EXAMPLES // 2)
@given(data(), st.sampled_from([0.5, 0.8, 0.95]))
def test_rbp_with_parameter_matches_the_reference(case, p: float) -> None:
    qrels, run, options = case
    want = ref.evaluate(qrels, run, rbp_p=p, **options)
    pq, summary = run_both(qrels, run, options, [f"rbp.p={p}"])
    name = f"rbp_p={p}"
    assert set(pq) == set(summary) == {name}
    n = compare({"rbp": pq[name]}, {"rbp": summary[name]}, want, f"{qrels} {run} {options}")
    assert n == len(qrels) + 1


@settings(SETTINGS, max_examples=EXAMPLES // 2)
@given(data())
def test_missing_query_without_complete_is_refused(case) -> None:
    qrels, run, options = case
    options = {**options, "complete": False}
    ev = irmetrics.Evaluator(irmetrics.Qrels.from_dict(qrels), ["map"], **options)
    r = irmetrics.Run.from_dict(run)
    judged_in_run = [q for q in qrels if q in run]
    missing = sorted((q for q in qrels if q not in run), key=lambda q: q.encode())
    if not judged_in_run:
        with pytest.raises(irmetrics.InputError, match="no query of the run is judged"):
            ev.evaluate(r)
    elif missing:
        with pytest.raises(irmetrics.MissingQueryError, match=f"query '{re.escape(missing[0])}'"):
            ev.evaluate(r)
    else:
        assert close(ev.evaluate(r)["map"], ref.evaluate(qrels, run, **options)["map"]["all"])


# ---------------------------------------------------------------------------------
# invariants


def trec_qrels(qrels: dict) -> str:
    return "".join(f"{q} 0 {d} {v}\n" for q, ds in qrels.items() for d, v in ds.items())


def trec_run(run: dict) -> list[str]:
    return [f"{q} Q0 {d} 0 {s!r} tag\n" for q, ds in run.items() for d, s in ds.items()]


def results(qrels: irmetrics.Qrels, run: irmetrics.Run, options: dict, **kw) -> tuple:
    ev = irmetrics.Evaluator(qrels, ["all_trec", *MEASURES], **{**options, **kw})
    return ev.evaluate(run, per_query=True, keys="canonical"), ev.evaluate(run, keys="canonical")


def same(a, b) -> bool:
    """Exact equality, NaN equal to NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


THREADS = (1, 2, 3, 8)


def sequential_below() -> int:
    """Below this many queries the engine evaluates on one thread whatever n_threads
    (``SEQUENTIAL_BELOW`` in src/parallel.rs)."""
    text = (Path(__file__).resolve().parent.parent / "src" / "parallel.rs").read_text()
    m = re.search(r"const SEQUENTIAL_BELOW: usize = (\d+);", text)
    assert m, "SEQUENTIAL_BELOW not found in src/parallel.rs"
    return int(m.group(1))


@st.composite
def many_queries(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    """As ``data`` but with 40 to 80 judged queries, enough to be split over threads."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(draw(st.integers(min_value=40, max_value=80))):
        labels = draw(st.dictionaries(st.sampled_from(DOCS), LABELS, min_size=1, max_size=10))
        if all(v < 0 for v in labels.values()):
            labels[draw(st.sampled_from(DOCS))] = draw(st.integers(0, 3))
        qrels[f"q{i}"] = labels
        if draw(st.integers(0, 9)):  # about one judged query in ten missing from the run
            run[f"q{i}"] = draw(
                st.dictionaries(st.sampled_from(DOCS), SCORES, min_size=1, max_size=12)
            )
    run["not_judged"] = {"d1": 1.0}
    options = {
        "complete": True,
        "relevance_level": draw(st.sampled_from([0, 1, 1, 2])),
        "max_docs": draw(st.one_of(st.none(), st.integers(1, 8))),
        "judged_only": draw(st.booleans()),
    }
    return qrels, run, options


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(many_queries())
def test_thread_count_does_not_change_results(case) -> None:
    qrels, run, options = case
    q, r = irmetrics.Qrels.from_dict(qrels), irmetrics.Run.from_dict(run)
    base = results(q, r, options, n_threads=1)
    # every judged query is evaluated (-c), well past the sequential threshold
    assert base[1]["num_q"] == len(qrels) >= max(40, 2 * sequential_below())
    for n in THREADS[1:]:
        assert same(results(q, r, options, n_threads=n), base), n


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), st.randoms(use_true_random=False))
def test_every_route_and_line_order_gives_the_same_numbers(case, rnd: random.Random) -> None:
    qrels, run, options = case
    base = results(irmetrics.Qrels.from_dict(qrels), irmetrics.Run.from_dict(run, "tag"), options)
    qtext = trec_qrels(qrels)
    lines = trec_run(run)
    rows = [(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    qrows = [(q, d, v) for q, ds in qrels.items() for d, v in ds.items()]
    routes = {
        "string": (
            irmetrics.Qrels.from_string(qtext),
            irmetrics.Run.from_string("".join(lines)),
        ),
        "bytes": (
            irmetrics.Qrels.from_string(qtext.encode()),
            irmetrics.Run.from_string("".join(lines).encode()),
        ),
        "columns": (
            irmetrics.Qrels.from_columns(*zip(*qrows)),
            irmetrics.Run.from_columns(*zip(*rows), name="tag"),
        ),
    }
    shuffled = lines[:]
    rnd.shuffle(shuffled)
    routes["shuffled"] = (routes["string"][0], irmetrics.Run.from_string("".join(shuffled)))
    for name, (q, r) in routes.items():
        assert same(results(q, r, options), base), name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=data())
def test_file_routes_give_the_same_numbers(tmp_path_factory, case) -> None:
    qrels, run, options = case
    tmp = tmp_path_factory.mktemp("routes")
    base = results(irmetrics.Qrels.from_dict(qrels), irmetrics.Run.from_dict(run, "tag"), options)
    (tmp / "q.txt").write_text(trec_qrels(qrels), encoding="utf-8")
    (tmp / "r.txt").write_text("".join(trec_run(run)), encoding="utf-8")
    (tmp / "r.txt.gz").write_bytes(gzip.compress("".join(trec_run(run)).encode()))
    irmetrics.Run.from_dict(run, "tag").to_file(tmp / "written.txt")
    irmetrics.Qrels.from_dict(qrels).to_file(tmp / "written_q.txt")
    q = irmetrics.Qrels.from_file(tmp / "q.txt")
    for path in ("r.txt", "r.txt.gz", "written.txt"):
        assert same(results(q, irmetrics.Run.from_file(tmp / path), options), base), path
    q2 = irmetrics.Qrels.from_file(str(tmp / "written_q.txt"))
    assert same(results(q2, irmetrics.Run.from_file(str(tmp / "r.txt")), options), base)
    ev = irmetrics.Evaluator(q, MEASURES, **options)
    via_api = irmetrics.evaluate(str(tmp / "q.txt"), tmp / "r.txt", MEASURES, **options)
    assert same(via_api, ev.evaluate(irmetrics.Run.from_dict(run, "tag")))


# ---------------------------------------------------------------------------------
# the oracle itself


def _read(path: Path, n_fields: int) -> dict:
    out: dict = {}
    for line in path.read_bytes().split(b"\n"):
        f = re.split(rb"[ \t\r\x0b\x0c]+", line.strip(b" \t\r\x0b\x0c"))
        if len(f) < n_fields or f[0].startswith(b"#"):
            continue
        q, d = f[0].decode(errors="surrogateescape"), f[2].decode(errors="surrogateescape")
        out.setdefault(q, {})[d] = int(f[3]) if n_fields == 4 else float(f[4])
    return out


VARIANTS = {
    "default": {},
    "c": {"complete": True},
    "l2": {"relevance_level": 2},
    "M10": {"max_docs": 10},
    "J": {"judged_only": True},
    "c_l2": {"complete": True, "relevance_level": 2},
    "c_M10": {"complete": True, "max_docs": 10},
    "c_J": {"complete": True, "judged_only": True},
}


def test_reference_matches_conformance(conformance: Path) -> None:
    """The oracle reproduces trec_eval 10's full-precision numbers (generated suite):
    every measure it computes, for exactly the queries trec_eval printed."""
    compared = files = 0
    for case in sorted((conformance / "generated").iterdir()):
        if not (case / "qrels.txt").is_file():
            continue
        qrels, run = _read(case / "qrels.txt", 4), _read(case / "run.txt", 6)
        for variant, opts in VARIANTS.items():
            path = case / "expected" / f"{variant}.full.json"
            if not path.is_file():  # not every case has every variant (35 files do)
                continue
            files += 1
            expected = json.loads(path.read_text())
            got = ref.evaluate(qrels, run, **opts)
            for name, per_q in got.items():
                where = f"{case.name}/{variant} {name}"
                assert name in expected, where
                assert set(per_q) == set(expected[name]), f"{where}: queries differ"
                for q, v in per_q.items():
                    e = float(expected[name][q])
                    assert close(v, e), f"{where}[{q}]: {v} != {e}"
                    compared += 1
    assert files == 35
    assert compared > 80_000
