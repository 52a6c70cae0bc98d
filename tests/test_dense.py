"""irmetrics.dense: sklearn's ndcg_score / dcg_score argument for argument, and the
engine's measures on matrices, checked against scikit-learn (ndcg_score, dcg_score,
average_precision_score) and plain numpy computations in the tests."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, dcg_score, ndcg_score

import irmetrics
import irmetrics.dense as dense


@pytest.fixture(scope="module")
def batch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=(200, 40))
    tied = rng.random((200, 40)).round(1)  # many ties
    distinct = rng.random((200, 40))
    return labels, tied, distinct


@pytest.mark.parametrize("k", [None, 1, 5, 10, 40, 100])
def test_ndcg_and_dcg_score_are_sklearns_with_ties_averaged(batch, k):
    labels, tied, _ = batch
    assert dense.ndcg_score(labels, tied, k=k) == pytest.approx(
        ndcg_score(labels, tied, k=k), abs=1e-12
    )
    for base in (2, 10, 1.5):
        assert dense.dcg_score(labels, tied, k=k, log_base=base) == pytest.approx(
            dcg_score(labels, tied, k=k, log_base=base), abs=1e-12
        )


def test_real_gains_weights_and_ignore_ties_are_sklearns(batch):
    labels, tied, distinct = batch
    rng = np.random.default_rng(3)
    gains = rng.random(labels.shape) * 3  # real-valued gains
    weight = rng.random(labels.shape[0])
    assert dense.ndcg_score(gains, tied, k=7, sample_weight=weight) == pytest.approx(
        ndcg_score(gains, tied, k=7, sample_weight=weight), abs=1e-12
    )
    assert dense.dcg_score(gains - 1, tied, sample_weight=weight) == pytest.approx(
        dcg_score(gains - 1, tied, sample_weight=weight), abs=1e-12
    )
    # ignore_ties: identical where the scores are distinct
    for k in (None, 3):
        assert dense.ndcg_score(labels, distinct, k=k, ignore_ties=True) == pytest.approx(
            ndcg_score(labels, distinct, k=k, ignore_ties=True), abs=1e-12
        )


def test_sklearn_documentation_example():
    # sklearn's ndcg_score docstring: 0.69..., 0.49..., k=4 0.35..., ties k=1 0.75, 0.5
    true = np.asarray([[10, 0, 0, 1, 5]])
    assert dense.ndcg_score(true, [[0.1, 0.2, 0.3, 4, 70]]) == pytest.approx(
        ndcg_score(true, [[0.1, 0.2, 0.3, 4, 70]]), abs=1e-15
    )
    scores = [[0.05, 1.1, 1.0, 0.5, 0.0]]
    assert dense.ndcg_score(true, scores, k=4) == pytest.approx(
        ndcg_score(true, scores, k=4), abs=1e-15
    )
    assert dense.ndcg_score(true, [[1, 0, 0, 0, 1]], k=1) == 0.75
    assert dense.ndcg_score(true, [[1, 0, 0, 0, 1]], k=1, ignore_ties=True) == 0.5


def _per_row(f, labels, scores, **kw):
    return np.array([f(labels[i : i + 1], scores[i : i + 1], **kw) for i in range(len(labels))])


def test_evaluate_gives_trec_evals_ndcg_which_is_sklearns_without_ties(batch):
    labels, _, distinct = batch
    res = dense.evaluate(labels, distinct, ["nDCG@10", "ndcg_cut.5", "ndcg"], per_query=True)
    assert res["nDCG@10"] == pytest.approx(_per_row(ndcg_score, labels, distinct, k=10), abs=1e-12)
    assert res["ndcg_cut.5"] == pytest.approx(
        _per_row(ndcg_score, labels, distinct, k=5), abs=1e-12
    )
    assert res["ndcg"] == pytest.approx(_per_row(ndcg_score, labels, distinct), abs=1e-12)
    means = dense.evaluate(labels, distinct, "nDCG@10")
    assert means["nDCG@10"] == pytest.approx(ndcg_score(labels, distinct, k=10), abs=1e-12)


def test_evaluate_map_and_precision(batch):
    labels, _, distinct = batch
    binary = labels >= 2
    binary[:, 0] = True  # every row has a relevant document (sklearn's AP needs one)
    res = dense.evaluate(binary, distinct, ["map", "P@5", "recall@10"], per_query=True)
    ap = [average_precision_score(binary[i], distinct[i]) for i in range(len(binary))]
    assert res["map"] == pytest.approx(ap, abs=1e-12)
    order = np.argsort(-distinct, axis=1)
    top = np.take_along_axis(binary, order, axis=1)
    assert res["P@5"] == pytest.approx(top[:, :5].mean(axis=1), abs=1e-15)
    assert res["recall@10"] == pytest.approx(
        top[:, :10].sum(axis=1) / binary.sum(axis=1), abs=1e-15
    )
    # options pass through: relevant means a label >= 3
    res = dense.evaluate(labels, distinct, "P@5", per_query=True, relevance_level=3)
    top = np.take_along_axis(labels, order, axis=1)
    assert res["P@5"] == pytest.approx((top[:, :5] >= 3).mean(axis=1), abs=1e-15)


def test_ties_average_is_sklearns_per_row(batch):
    labels, tied, _ = batch
    res = dense.evaluate(labels, tied, ["nDCG@10", "dcg", "NDCG"], ties="average", per_query=True)
    assert res["nDCG@10"] == pytest.approx(_per_row(ndcg_score, labels, tied, k=10), abs=1e-12)
    assert res["dcg"] == pytest.approx(_per_row(dcg_score, labels, tied), abs=1e-12)
    assert res["NDCG"] == pytest.approx(_per_row(ndcg_score, labels, tied), abs=1e-12)


def test_equal_scores_rank_the_later_column_first():
    # worked by hand: the tie between column 0 (relevant) and 1 (not) puts column 1 first
    assert dense.evaluate([[1, 0]], [[0.5, 0.5]], "P@1") == {"P@1": 0.0}
    assert dense.evaluate([[0, 1]], [[0.5, 0.5]], "P@1") == {"P@1": 1.0}
    # a 1-D array is one query
    assert dense.evaluate([0, 1, 0], [0.1, 0.9, 0.5], "recip_rank") == {"recip_rank": 1.0}


def test_bad_input_names_the_cell_or_the_rule():
    with pytest.raises(irmetrics.InputError, match=r"y_true\[1, 2\] is 0.5"):
        dense.evaluate([[1, 0, 0], [0, 1, 0.5]], np.ones((2, 3)), "map")
    with pytest.raises(irmetrics.InputError, match=r"y_score\[0, 1\] is NaN"):
        dense.ndcg_score([[1, 0]], [[0.1, np.nan]])
    with pytest.raises(irmetrics.InputError, match="same shape"):
        dense.ndcg_score(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(irmetrics.InputError, match="more than one document"):
        dense.ndcg_score([[1]], [[0.3]])
    with pytest.raises(irmetrics.InputError, match="non-negative"):
        dense.ndcg_score([[1, -1]], [[0.3, 0.2]])
    with pytest.raises(irmetrics.InputError, match="needs ties='break'"):
        dense.evaluate([[1, 0]], [[0.3, 0.2]], "map", ties="average")
    with pytest.raises(irmetrics.InputError, match="ties must be"):
        dense.evaluate([[1, 0]], [[0.3, 0.2]], "map", ties="mean")
    with pytest.raises(irmetrics.InputError, match="2-D"):
        dense.ndcg_score(np.ones((2, 2, 2)), np.ones((2, 2, 2)))
    with pytest.raises(irmetrics.InputError, match="log_base"):
        dense.dcg_score([[1, 0]], [[0.3, 0.2]], log_base=1)
    for k in (0, -1, 2.5, True):
        with pytest.raises(irmetrics.InputError, match="k must be"):
            dense.ndcg_score([[1, 0]], [[0.3, 0.2]], k=k)
    with pytest.raises(irmetrics.InputError, match="sample_weight"):
        dense.ndcg_score([[1, 0]], [[0.3, 0.2]], sample_weight=[1, 2])
