"""Relevance and credibility measures (Lioma, Simonsen and Larsen, ICTIR 2017).

* Against the reference implementation, the trec_eval 9.0 fork
  ``lcschv/Trec_eval_extension``: its stored outputs (``tests/data/credibility``, see
  the README there) for ``nlre``, ``nwcs``, ``cam`` (nDCG) and ``cam_map`` (AP), to
  its four printed decimals, per query and ``all``.
* Against the definitions (Type I measures NLRE and NGRE over rank positions, Type II
  measures NWCS and the aggregates CAM and WHAM, as the paper's reference
  implementations state them: the fork above and the authors' Python module),
  written out below directly from the formulas, on the fixture and on seeded random
  cases with
  other weights (the fork fixes mu = nu = lambda = 0.5 and has no NGRE or WHAM), and
  on the two rankings the definitions pin down: a ranking in both ideal orders has no
  rank error (NLRE = NGRE = 1, NWCS = 1), and the interleaved ranking behind the
  normalisers (n, 1, n - 1, 2, ... in both ideal orders) scores NLRE = NGRE = 0.
* Bad input: labels outside the credibility scale, malformed lines, a missing
  credibility file, a query without credibility judgments, parameters outside their
  domains: an ``irmetrics.Error`` naming the file and line (or the query and document).
"""

from __future__ import annotations

import math
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest

import irmetrics

DATA = Path(__file__).resolve().parent / "data" / "credibility"
QRELS, CRED, RUN = DATA / "qrels.txt", DATA / "credibility.txt", DATA / "run.txt"


def read_labels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        q, _, d, label = line.split()
        out.setdefault(q, {})[d] = int(label)
    return out


def read_run(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        out.setdefault(q, {})[d] = float(score)
    return out


def read_trec_eval(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        _, q, v = line.split()
        out[q] = float(v)
    return out


# ---- the paper's definitions, written out (independent of the engine) ----


def ranking(run: dict[str, float]) -> list[str]:
    # score descending, ties by document id descending (trec_eval's order)
    return [d for d, _ in sorted(run.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def ideal_positions(labels: list[int]) -> list[int]:
    # the retrieved list re-sorted by label, equal labels in the run's order
    order = sorted(range(len(labels)), key=lambda i: -labels[i])
    pos = [0] * len(labels)
    for p, i in enumerate(order):
        pos[i] = p
    return pos


def monus(a: int, b: int) -> int:
    return a - b if a > b else 0


def errors(rel: list[int], cred: list[int]) -> list[tuple[int, int, float]]:
    r, c = ideal_positions(rel), ideal_positions(cred)
    # rank i (1-based) against rank i + 1, discount 1 / log2(1 + i)
    return [
        (monus(r[i - 1], r[i]), monus(c[i - 1], c[i]), 1 / math.log2(1 + i))
        for i in range(1, len(rel))
    ]


def worst(n: int) -> list[tuple[int, float]]:
    # x_j = n - 2j - 1 at rank 2j + 1, discount 1 / log2(2j + 2), j < floor(n / 2)
    return [(n - 2 * j - 1, 1 / math.log2(2 * j + 2)) for j in range(n // 2)]


def nlre(rel: list[int], cred: list[int], mu: float, nu: float) -> float:
    if len(rel) < 2:
        return 1.0
    lre = sum(((mu + er) * (nu + ec) - mu * nu) * d for er, ec, d in errors(rel, cred))
    c = sum((x * x + (mu + nu) * x) * d for x, d in worst(len(rel)))
    return 1 - lre / c


def ngre(rel: list[int], cred: list[int], mu: float, nu: float) -> float:
    if len(rel) < 2:
        return 1.0
    e = errors(rel, cred)
    sr = sum(er * d for er, _, d in e)
    sc = sum(ec * d for _, ec, d in e)
    s = sum(x * d for x, d in worst(len(rel)))
    return 1 - ((1 + mu * sr) * (1 + nu * sc) - 1) / (mu * nu * s * s + (mu + nu) * s)


def nwcs(rel: list[int], cred: list[int], lam: float) -> float:
    z = [lam * r + (1 - lam) * c for r, c in zip(rel, cred)]

    def wcs(z: list[float]) -> float:
        return sum(x / math.log2(i + 2) for i, x in enumerate(z))

    best = wcs(sorted(z, reverse=True))
    return wcs(z) / best if best > 0 else 0.0


def ndcg(labels: list[int], judged: dict[str, int]) -> float:
    # trec_eval's ndcg: the labels as gains, the ideal over every judged document
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(labels) if g > 0)
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def ap(labels: list[int], judged: dict[str, int]) -> float:
    hits, total = 0, 0.0
    for i, g in enumerate(labels):
        if g >= 1:
            hits += 1
            total += hits / (i + 1)
    r = sum(1 for g in judged.values() if g >= 1)
    return total / r if r else 0.0


def paper_values(
    qrels: dict[str, dict[str, int]],
    cred: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    mu: float = 0.5,
    nu: float = 0.5,
    lam: float = 0.5,
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q in qrels:
        docs = ranking(run.get(q, {}))
        rel = [max(qrels[q].get(d, 0), 0) for d in docs]
        cr = [cred[q].get(d, 0) for d in docs]
        values = {
            "nlre": nlre(rel, cr, mu, nu),
            "ngre": ngre(rel, cr, mu, nu),
            "nwcs": nwcs(rel, cr, lam),
        }
        for m, f in (("ndcg", ndcg), ("map", ap)):
            mr, mc = f(rel, qrels[q]), f(cr, cred[q])
            values[f"cam_{m}"] = lam * mr + (1 - lam) * mc
            values[f"wham_{m}"] = 0.0 if mr == 0 or mc == 0 else 1 / (lam / mr + (1 - lam) / mc)
        for k, v in values.items():
            out.setdefault(k, {})[q] = v
    return out


def names(mu: float = 0.5, nu: float = 0.5, lam: float = 0.5) -> dict[str, str]:
    return {
        "nlre": f"nlre(mu={mu},nu={nu})",
        "ngre": f"ngre(mu={mu},nu={nu})",
        "nwcs": f"nwcs(lambda={lam})",
        "cam_ndcg": f"cam(m=ndcg,lambda={lam})",
        "cam_map": f"cam(m=map,lambda={lam})",
        "wham_ndcg": f"wham(m=ndcg,lambda={lam})",
        "wham_map": f"wham(m=map,lambda={lam})",
    }


# ---- the reference implementation ----


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("nlre", "nlre"), ("nwcs", "nwcs"), ("cam", "cam"), ("cam(m=map)", "cam_map")],
)
def test_equals_the_trec_eval_extension(ours: str, theirs: str) -> None:
    expected = read_trec_eval(DATA / f"trec_eval_extension.{theirs}.txt")
    per_query = irmetrics.evaluate(QRELS, RUN, ours, per_query=True, credibility=CRED)[ours]
    summary = irmetrics.evaluate(QRELS, RUN, ours, credibility=CRED)[ours]
    assert set(per_query) == set(expected) - {"all"}
    for q, v in per_query.items():
        assert v == pytest.approx(expected[q], abs=5.01e-5), q
    assert summary == pytest.approx(expected["all"], abs=5.01e-5)


# ---- the definitions ----


def test_fixture_equals_the_definitions() -> None:
    expected = paper_values(read_labels(QRELS), read_labels(CRED), read_run(RUN))
    got = irmetrics.evaluate(QRELS, RUN, list(names().values()), per_query=True, credibility=CRED)
    for key, name in names().items():
        for q, v in expected[key].items():
            assert got[name][q] == pytest.approx(v, rel=1e-12, abs=1e-14), (name, q)


@pytest.mark.parametrize("seed", range(12))
def test_random_cases_equal_the_definitions(seed: int) -> None:
    rnd = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    cred: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(rnd.randint(1, 6)):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(rnd.randint(1, 30))]
        judged = rnd.sample(docs, rnd.randint(1, len(docs)))
        qrels[qid] = {d: rnd.choice([-1, 0, 0, 1, 2, 3]) for d in judged}
        if all(v < 0 for v in qrels[qid].values()):
            qrels[qid][judged[0]] = 0
        cred[qid] = {d: rnd.randint(0, 4) for d in rnd.sample(docs, rnd.randint(1, len(docs)))}
        retrieved = rnd.sample(docs, rnd.randint(1, len(docs)))
        # a few tied scores: ties go by document id, descending
        run[qid] = {d: float(rnd.randint(0, 8)) for d in retrieved}
    mu, nu, lam = rnd.choice([0.0, 0.3, 1.0, 2.5]), rnd.choice([0.5, 1.0, 4.0]), rnd.random()
    expected = paper_values(qrels, cred, run, mu, nu, lam)
    got = irmetrics.evaluate(
        qrels, run, list(names(mu, nu, lam).values()), per_query=True, credibility=cred
    )
    for key, name in names(mu, nu, lam).items():
        for q, v in expected[key].items():
            assert got[name][q] == pytest.approx(v, rel=1e-12, abs=1e-14), (seed, name, q)


def test_ideal_and_interleaved_rankings() -> None:
    # in both ideal orders: no error
    qrels = {"q": {"a": 3, "b": 2, "c": 2, "d": 0}}
    cred = {"q": {"a": 2, "b": 2, "c": 1, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    got = irmetrics.evaluate(qrels, run, ["nlre", "ngre", "nwcs"], credibility=cred)
    assert got == {"nlre": 1.0, "ngre": 1.0, "nwcs": 1.0}
    # labels 0, 5, 1, 4, 2, 3 (both kinds): ideal positions 5, 0, 4, 1, 3, 2, the
    # normalisers' ranking (errors 5, 3, 1 at ranks 1, 3, 5)
    labels = {f"d{i}": label for i, label in enumerate([0, 5, 1, 4, 2, 3])}
    run = {"q": {f"d{i}": 10.0 - i for i in range(6)}}
    got = irmetrics.evaluate(
        {"q": labels}, run, ["nlre", "ngre", "nlre(mu=3,nu=0)"], credibility={"q": labels}
    )
    assert all(abs(v) < 1e-15 for v in got.values()), got


def test_cli_and_pickle() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "irmetrics", "-q", "--credibility", str(CRED)]
        + ["-m", "nlre", "-m", "wham", str(QRELS), str(RUN)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    expected = paper_values(read_labels(QRELS), read_labels(CRED), read_run(RUN))
    lines = [line.split() for line in done.stdout.decode().splitlines()]
    nlre_rows = {q: float(v) for m, q, v in lines if m == "nlre"}
    assert nlre_rows["1"] == pytest.approx(expected["nlre"]["1"], abs=5e-5)
    assert {m for m, _, _ in lines} == {"nlre", "wham"}
    ev = irmetrics.Evaluator(QRELS, ["ngre"], credibility=CRED)
    again = pickle.loads(pickle.dumps(ev))
    assert again.evaluate(str(RUN)) == ev.evaluate(str(RUN))


# ---- bad input ----


def test_label_outside_the_scale_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "cred.txt"
    bad.write_text("1 0 d1_0 2\n1 0 d1_1 -1\n")
    with pytest.raises(
        irmetrics.Error, match=r"cred\.txt:2: credibility label -1 is outside the credibility scale"
    ):
        irmetrics.evaluate(QRELS, RUN, "nlre", credibility=bad)
    done = subprocess.run(
        [sys.executable, "-m", "irmetrics", "--credibility", str(bad), "-m", "nlre"]
        + [str(QRELS), str(RUN)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert b"cred.txt:2: credibility label -1" in done.stderr
    # not from a file: the query and document are named
    with pytest.raises(irmetrics.Error, match=r"query '1', document 'd1_1'.*credibility scale"):
        irmetrics.evaluate(QRELS, RUN, "nlre", credibility={"1": {"d1_0": 1, "d1_1": -2}})


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "cred.txt"
    bad.write_text("1 0 d1_0 2\n1 0 d1_1\n")
    with pytest.raises(irmetrics.Error, match=r"cred\.txt:2"):
        irmetrics.evaluate(QRELS, RUN, "cam", credibility=bad)


def test_missing_credibility_is_refused() -> None:
    for name in ("nlre", "NGRE", "nwcs", "cam(m=map)", "wham(lambda=0.2)"):
        with pytest.raises(irmetrics.Error, match="needs credibility judgments"):
            irmetrics.evaluate(QRELS, RUN, name)
    done = subprocess.run(
        [sys.executable, "-m", "irmetrics", "-m", "nlre", str(QRELS), str(RUN)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2 and b"--credibility" in done.stderr


def test_query_without_credibility_judgments_is_refused() -> None:
    cred = read_labels(CRED)
    del cred["3"]
    with pytest.raises(irmetrics.Error, match="query '3'.*no credibility judgment"):
        irmetrics.evaluate(QRELS, RUN, "nwcs", credibility=cred)


@pytest.mark.parametrize(
    "name",
    [
        "nwcs(lambda=1.5)",
        "cam(lambda=-0.1)",
        "nlre(mu=-1)",
        "ngre(nu=nan)",
        "nlre(mu=0,nu=0)",
        "cam(m=err)",
        "wham(m=2)",
        "nlre(judged_only=True)",
    ],
)
def test_parameters_outside_their_domains(name: str) -> None:
    with pytest.raises(irmetrics.MeasureError):
        irmetrics.evaluate(QRELS, RUN, name, credibility=CRED)
