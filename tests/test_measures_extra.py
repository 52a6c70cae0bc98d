"""Compat, pairwise Accuracy, AUROC, recall at fixed precision, precision at fixed
recall and (expected) search length (issue 17, item 4), against values computed here
by the peers: ir_measures (Compat, Accuracy, per query with ``iter_calc``), sklearn
(``roc_auc_score`` with and without ``max_fpr``, ``precision_recall_curve``) and, for
Cooper's search length, a brute force over every order of the tied documents.

torchmetrics (``RecallAtFixedPrecision``, ``PrecisionAtFixedRecall``) pulls in torch,
too heavy for the test environment: its definition (the highest recall over the
thresholds whose precision is at least x, 0 if none; and the converse) is applied to
sklearn's precision-recall curve instead.
"""

from __future__ import annotations

import itertools
import math
import os
import random
from fractions import Fraction
from pathlib import Path

import ir_measures
import pytest
from sklearn.metrics import precision_recall_curve, roc_auc_score

import irmetrics

SHARED = Path(os.environ.get("IRMETRICS_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DL19 = SHARED / "data" / "qrels" / "dl19-passage.txt"

TOL = 1e-9


def generated(seed: int, n_queries: int = 40) -> tuple[dict, dict]:
    """Graded labels (negative ones too), tied scores (0.0 and negative ones included),
    unjudged documents, queries missing from the run and queries with one class."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        n = rng.randint(1, 14)
        labels = {f"d{rng.randint(0, 40)}": rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for _ in range(n)}
        if all(v < 0 for v in labels.values()):
            labels[next(iter(labels))] = 0
        if q % 9 == 4:  # no relevant document
            labels = {d: min(v, 0) for d, v in labels.items()}
        if q % 9 == 5:  # no non-relevant document
            labels = {d: max(v, 1) for d, v in labels.items()}
        qrels[qid] = labels
        if q % 13 == 7:  # judged, not in the run
            continue
        pool = list(labels) + [f"u{i}" for i in range(rng.randint(0, 6))]
        docs = rng.sample(pool, rng.randint(1, len(pool)))
        run[qid] = {
            d: rng.choice([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 0.25 * rng.randint(0, 20)])
            for d in docs
        }
    return qrels, run


def dl19() -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    for line in DL19.read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    rng = random.Random(19)
    run = {}
    for q, labels in qrels.items():
        docs = rng.sample(sorted(labels), min(len(labels), 120)) + [f"x{q}_{i}" for i in range(30)]
        # scores rounded to give ties
        run[q] = {d: round(rng.gauss(1.0 + 0.4 * max(labels.get(d, 0), 0), 1.0), 1) for d in docs}
    return qrels, run


CASES = {"generated-1": lambda: generated(1), "generated-2": lambda: generated(2), "dl19": dl19}


def trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by document id descending."""
    by_id = sorted(scores, key=lambda d: d.encode(), reverse=True)
    return sorted(by_id, key=lambda d: -scores[d])


def ours(qrels: dict, run: dict, measures: list[str], **kw) -> dict[str, dict[str, float]]:
    """``{query: {column: value}}`` (evaluate gives ``{column: {query: value}}``)."""
    cols = irmetrics.evaluate(qrels, run, measures, per_query=True, complete=True, **kw)
    out: dict[str, dict[str, float]] = {}
    for col, values in cols.items():
        for q, v in values.items():
            out.setdefault(q, {})[col] = v
    return out


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(
    ("p", "normalize"), [(0.95, True), (0.8, True), (0.5, False), (0.95, False)]
)
def test_compat_equals_ir_measures(case: str, p: float, normalize: bool) -> None:
    qrels, run = CASES[case]()
    spelled = f"Compat(p={p},normalize={normalize})"
    measure = ir_measures.parse_measure(spelled)
    want = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    got = ours(qrels, run, [spelled])
    # every judged query, those the run lacks included (ir_measures gives them 0)
    assert set(want) == set(qrels)
    for q, v in want.items():
        (value,) = got[q].values()
        assert close(value, v), (q, value, v)
    # the default spelling is p = 0.95, normalized
    if (p, normalize) == (0.95, True):
        plain = ours(qrels, run, ["Compat"])
        assert all(list(plain[q].values()) == list(got[q].values()) for q in qrels)


def ir_measures_accuracy(measure, labels: dict, scores: dict) -> float | None:
    """ir_measures' Accuracy of one query, the run handed over in trec_eval's order
    (ir_measures keeps the input order of tied scores); None where it reports nothing
    (no relevant document retrieved), 'fails' where it divides by zero."""
    ordered = {d: scores[d] for d in trec_order(scores)}
    try:
        out = list(ir_measures.iter_calc([measure], {"q": labels}, {"q": ordered}))
    except ZeroDivisionError:
        return math.inf
    return out[0].value if out else None


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(
    ("spelled", "ours_name"),
    [
        ("Accuracy", "Accuracy"),
        ("Accuracy(rel=2)", "Accuracy(rel=2)"),
        ("Accuracy@5", "pair_accuracy@5"),
        ("Accuracy(rel=2)@20", "pair_accuracy(rel=2)@20"),
    ],
)
def test_accuracy_equals_ir_measures(case: str, spelled: str, ours_name: str) -> None:
    qrels, run = CASES[case]()
    measure = ir_measures.parse_measure(spelled)
    got = ours(qrels, run, [ours_name])
    got_irm = ours(qrels, run, [spelled], names="ir_measures")
    assert all(list(got[q].values()) == list(got_irm[q].values()) for q in qrels)
    compared = 0
    for q, labels in qrels.items():
        (value,) = got[q].values()
        if q not in run:
            assert value == 0.0
            continue
        want = ir_measures_accuracy(measure, labels, run[q])
        if want is None:  # no relevant document retrieved: ours is 0
            assert value == 0.0, q
        elif want == math.inf:  # no non-relevant one: ours is 1
            assert value == 1.0, q
        else:
            compared += 1
            assert close(value, want), (q, value, want)
    assert compared >= 10


def judged_scored(labels: dict, scores: dict, rel: int = 1) -> tuple[list[int], list[float]]:
    """The retrieved judged documents (label >= 0): relevance and score."""
    docs = [d for d in scores if labels.get(d, -1) >= 0]
    return [int(labels[d] >= rel) for d in docs], [scores[d] for d in docs]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("max_fpr", [None, 1.0, 0.5, 0.1, 0.33])
def test_auroc_equals_sklearn_per_query(case: str, max_fpr: float | None) -> None:
    qrels, run = CASES[case]()
    name = "AUROC" if max_fpr is None else f"AUROC(max_fpr={max_fpr})"
    got = ours(qrels, run, [name])
    compared = 0
    for q, labels in qrels.items():
        (value,) = got[q].values()
        y, s = judged_scored(labels, run.get(q, {}))
        if 0 < sum(y) < len(y):
            compared += 1
            want = roc_auc_score(y, s, max_fpr=max_fpr)
            assert close(value, want), (q, value, want)
        elif sum(y) == 0:  # no relevant document (or none judged): 0
            assert value == 0.0, q
        else:  # no non-relevant document: 1
            assert value == 1.0, q
    assert compared >= 10
    # the other spellings
    for other in ("auc", "roc_auc", "auroc"):
        if max_fpr is None:
            again = ours(qrels, run, [other])
            assert all(list(again[q].values()) == list(got[q].values()) for q in qrels)


def pr_points(y: list[int], s: list[float]) -> list[tuple[float, float]]:
    """(precision, recall) at sklearn's thresholds (the final (1, 0) point has none)."""
    precision, recall, thresholds = precision_recall_curve(y, s)
    return list(zip(precision[: len(thresholds)], recall[: len(thresholds)]))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("level", [0.0, 0.25, 0.5, 0.6, 0.9, 1.0])
def test_fixed_precision_and_recall_equal_sklearn_curve(case: str, level: float) -> None:
    qrels, run = CASES[case]()
    got = ours(qrels, run, [f"R@P({level})", f"P@R({level})"])
    for q, labels in qrels.items():
        r_at_p, p_at_r = got[q].values()
        y, s = judged_scored(labels, run.get(q, {}))
        if sum(y) == 0:  # no relevant document: 0 (sklearn's recall is undefined)
            assert (r_at_p, p_at_r) == (0.0, 0.0)
            continue
        pts = pr_points(y, s)
        want_r = max((r for p, r in pts if p >= level), default=0.0)
        want_p = max((p for p, r in pts if r >= level), default=0.0)
        assert close(r_at_p, want_r), (q, r_at_p, want_r)
        assert close(p_at_r, want_p), (q, p_at_r, want_p)


def test_fixed_level_spellings() -> None:
    qrels, run = generated(3)
    a = ours(qrels, run, ["R@P(0.5)", "P@R(0.5)"])
    b = ours(qrels, run, ["recall_at_precision.0.5", "precision_at_recall.0.5"])
    c = ours(
        qrels,
        run,
        ["RecallAtFixedPrecision(min_precision=0.5)", "PrecisionAtFixedRecall(min_recall=0.5)"],
    )
    for q in qrels:
        assert list(a[q].values()) == list(b[q].values()) == list(c[q].values())


def brute_search_length(rels_by_level: list[list[bool]], k: int) -> Fraction:
    """Cooper's expected search length by enumeration: every order of each level
    (documents of equal score) equally likely; the non-relevant documents seen before
    the k-th relevant one, or all of them when fewer than k are relevant."""
    orders = [sorted(set(itertools.permutations(level))) for level in rels_by_level]
    total, count = Fraction(0), 0
    for combo in itertools.product(*orders):
        seq = [r for level in combo for r in level]
        found = nonrel = 0
        value = sum(not r for r in seq)
        for r in seq:
            if r:
                found += 1
                if found == k:
                    value = nonrel
                    break
            else:
                nonrel += 1
        # weight each distinct order by the number of document orders behind it
        weight = math.prod(
            math.factorial(sum(level)) * math.factorial(len(level) - sum(level)) for level in combo
        )
        total += Fraction(value * weight)
        count += weight
    return total / count


@pytest.mark.parametrize("seed", range(6))
def test_search_length_by_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(25):
        n = rng.randint(1, 9)
        docs = [f"d{i}" for i in range(n)]
        labels = {d: rng.choice([-1, 0, 1, 2]) for d in docs if rng.random() < 0.8}
        qrels[f"q{q}"] = {**labels, "j": 0}  # one judged document outside the run
        run[f"q{q}"] = {d: float(rng.randint(0, 3)) for d in docs}
    got = ours(qrels, run, ["esl@1,2,3", "sl.1,2,3", "SL@2", "ESL@2"])
    for q, labels in qrels.items():
        scores = run[q]
        rel = {d: labels.get(d, -1) >= 1 for d in scores}
        levels = [
            [rel[d] for d in scores if scores[d] == s]
            for s in sorted(set(scores.values()), reverse=True)
        ]
        ranking = [rel[d] for d in trec_order(scores)]
        v = got[q]
        for k in (1, 2, 3):
            assert close(v[f"esl_{k}"], float(brute_search_length(levels, k))), (q, k)
            # the ranking's own order: one level per document
            assert v[f"sl_{k}"] == float(brute_search_length([[r] for r in ranking], k)), (q, k)


def test_cooper_worked_example() -> None:
    # a weak ordering of three levels: {R, N, N}, {R, R, N, N}, {N, R}; k = 3: one
    # relevant from level 1, then 2 from level 2 (r = 2 of them, i = 2 non-relevant):
    # j = 2 non-relevant before, ESL = 2 + 2 * 2 / 3
    levels = [[True, False, False], [True, True, False, False], [False, True]]
    assert brute_search_length(levels, 3) == Fraction(2) + Fraction(4, 3)
    scores = {}
    labels = {}
    for li, level in enumerate(levels):
        for j, r in enumerate(level):
            d = f"d{li}{j}"
            scores[d] = float(3 - li)
            labels[d] = int(r)
    (v,) = ours({"q": labels}, {"q": scores}, ["esl@3"])["q"].values()
    assert close(v, 2 + 4 / 3)


def test_names_together() -> None:
    qrels, run = generated(4)
    names = ["Compat(p=0.8)", "Accuracy", "AUROC", "R@P(0.5)", "P@R(0.5)", "SL@1", "ESL@2"]
    res = irmetrics.evaluate(qrels, run, names, complete=True)
    assert irmetrics.Evaluator(qrels, names).columns() == [
        "compat(p=0.8)",
        "pair_accuracy",
        "auroc",
        "recall_at_precision_0.50",
        "precision_at_recall_0.50",
        "sl_1",
        "esl_2",
    ]
    assert all(math.isfinite(v) for v in res.values())
    # the confusion-matrix accuracy keeps `accuracy@k`
    assert irmetrics.canonical_names("accuracy@5") == ["accuracy_5"]
    assert irmetrics.canonical_names("Accuracy@5", "ir_measures") == ["pair_accuracy_cut_5"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("AUROC(max_fpr=0)", "max_fpr must be a number > 0 and <= 1"),
        ("AUROC(max_fpr=1.5)", "max_fpr must be a number > 0 and <= 1"),
        ("Compat(p=1.5)", "parameter p must be a number from 0 to 1"),
        ("Compat(normalize=maybe)", "normalize must be True or False"),
        ("R@P(1.2)", "min precision must be a number from 0 to 1"),
        ("P@R(0.5", "unbalanced parenthesis"),
    ],
)
def test_bad_parameters_are_named(name: str, why: str) -> None:
    with pytest.raises(irmetrics.Error, match=why.replace("(", r"\(")):
        irmetrics.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [name])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("max_fpr", [None, 0.5, 0.05])
@pytest.mark.parametrize("rel", [1, 2])
def test_pooled_auroc_equals_sklearn(case: str, max_fpr: float | None, rel: int) -> None:
    qrels, run = CASES[case]()
    # a run-only query is left out
    run = {**run, "not-judged": {"a": 1.0, "b": 0.5}}
    ys: list[int] = []
    ss: list[float] = []
    for q, labels in qrels.items():
        y, s = judged_scored(labels, run.get(q, {}), rel)
        ys += y
        ss += s
    want = roc_auc_score(ys, ss, max_fpr=max_fpr)
    got = irmetrics.pooled_auroc(qrels, run, max_fpr=max_fpr, rel=rel)
    assert close(got, want), (got, want)


def test_pooled_auroc_bad_input() -> None:
    with pytest.raises(irmetrics.Error, match="max_fpr must be a number > 0 and <= 1, got 0"):
        irmetrics.pooled_auroc({"q": {"a": 1}}, {"q": {"a": 1.0}}, max_fpr=0.0)
    with pytest.raises(irmetrics.Error, match="relevance level must be 0 or more"):
        irmetrics.pooled_auroc({"q": {"a": 1}}, {"q": {"a": 1.0}}, rel=-1)


def test_streamed_and_threaded_runs_give_the_same_values(tmp_path: Path) -> None:
    """The families that read scores get them on every route: a run file read query by
    query, and any number of threads."""
    qrels, run = generated(5)
    path = tmp_path / "run.txt"
    with path.open("w") as f:
        for q in sorted(run):
            for i, d in enumerate(trec_order(run[q])):
                f.write(f"{q} Q0 {d} {i + 1} {run[q][d]!r} r\n")
    names = ["Compat(p=0.8)", "Accuracy", "AUROC(max_fpr=0.5)", "R@P(0.5)", "P@R(0.5)", "ESL@1,2"]
    loaded = ours(qrels, run, names)
    streamed = ours(qrels, str(path), names, stream=True)
    one_thread = ours(qrels, run, names, n_threads=1)
    assert loaded == streamed == one_thread
