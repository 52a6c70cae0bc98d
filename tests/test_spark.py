"""irmetrics.spark on a real Spark (local[2], started here): every value, per query and
in the `all` row, equal bit for bit (==) to local irmetrics on the same data: the
conformance suite's generated cases (whose local numbers test_conformance.py checks
against trec_eval's) and a generated run of L's 100,000 queries; plus bad input."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from generated_cases import generated_cases, plain

import irmetrics
from irmetrics import spark as irs

pytestmark = pytest.mark.filterwarnings(
    # pyspark 4.3 warns about pandas 3 on import and conversions
    "ignore:PySpark does not yet fully support pandas:FutureWarning",
    "ignore::DeprecationWarning:pyspark",
)


@pytest.fixture(scope="session")
def spark():  # noqa: ANN201
    from pyspark.sql import SparkSession

    # the Python workers are this interpreter (irmetrics and pyarrow importable)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("irmetrics-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "3g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    import pyspark

    # pyspark 3.5 (the extra's oldest) makes DataFrames of pandas frames, not Arrow tables
    yield session if int(pyspark.__version__.split(".")[0]) >= 4 else _PandasIn(session)
    session.stop()


class _PandasIn:
    """A pyspark 3.5 session whose createDataFrame takes Arrow tables through pandas."""

    def __init__(self, session: object) -> None:
        self._session = session

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)

    def createDataFrame(self, data: object, *args: object, **kwargs: object) -> object:  # noqa: N802
        if isinstance(data, pa.Table):
            data = data.to_pandas()
        return self._session.createDataFrame(data, *args, **kwargs)  # type: ignore[attr-defined]


def frames(spark, qrels: irmetrics.Qrels, run: irmetrics.Run):  # noqa: ANN001, ANN201
    return spark.createDataFrame(qrels.to_arrow()), spark.createDataFrame(run.to_arrow())


def bits(x: object) -> object:
    """A value compared bit for bit (NaN equal to NaN)."""
    if isinstance(x, float):
        return "NaN" if math.isnan(x) else x.hex()
    return x


def per_query_rows(df) -> dict[str, dict[str, object]]:  # noqa: ANN001
    table = irs._collect(df)
    ids = table.column("query_id").to_pylist()
    return {
        c: dict(zip(ids, map(bits, table.column(c).to_pylist())))
        for c in table.column_names
        if c != "query_id"
    }


def local_per_query(qrels: object, run: object, measures: list[str], **opts: object) -> dict:
    ids, cols, values, _ = irmetrics.Evaluator(qrels, measures, **opts).evaluate_table(run)
    return {
        c: {q: bits(float(values[i, j])) for i, q in enumerate(ids)} for j, c in enumerate(cols)
    }


@pytest.fixture(scope="module")
def cases(conformance: Path) -> list:
    return generated_cases(conformance)


def test_generated_cases_equal_local_bit_for_bit(spark, cases: list) -> None:  # noqa: ANN001
    for name, qrels_path, run_path, measures, opts in cases:
        qrels = irmetrics.Qrels.from_file(qrels_path)
        run = irmetrics.Run.from_file(run_path)
        expected = irmetrics.evaluate(qrels_path, run_path, measures, **opts)
        qd, rd = frames(spark, qrels, run)
        got = irs.evaluate(qd, rd, measures, **opts)
        # the run's tag: a Spark DataFrame has none (as a local table has none)
        assert got.pop("runid", "") == ""
        expected.pop("runid", None)
        assert {k: bits(v) for k, v in got.items()} == {k: bits(v) for k, v in expected.items()}, (
            name
        )
        assert per_query_rows(irs.evaluate(qd, rd, measures, per_query=True, **opts)) == (
            local_per_query(qrels, run, measures, **opts)
        ), name


def test_cogroup_methods_give_the_same_numbers(spark, cases: list) -> None:  # noqa: ANN001
    for name, qrels_path, run_path, measures, opts in cases[:3]:
        qrels = irmetrics.Qrels.from_file(qrels_path)
        run = irmetrics.Run.from_file(run_path)
        expected = plain(irmetrics.evaluate(qrels, run, measures, **opts))
        expected.pop("runid", None)  # the file's tag; a DataFrame has none
        qd, rd = frames(spark, qrels, run)
        for method in ("cogroup", "cogroup-pandas"):
            got = irs.evaluate(qd, rd, measures, method=method, **opts)
            assert got.pop("runid", "") == ""
            assert plain(got) == expected, (name, method)


def generate(nq: int, docs: int, judged: int, seed: int) -> tuple[pa.Table, pa.Table]:
    """A run of nq queries x docs results (scores with ties, integer document ids) and
    about `judged` judgments per query (labels 0-3, some on unretrieved documents)."""
    rng = np.random.default_rng(seed)
    qids = np.char.add("q", np.arange(nq).astype(str))
    doc = rng.integers(0, 1000, (nq, docs)) + np.arange(docs) * 1000  # unique per query
    run = pa.table(
        {
            "qid": np.repeat(qids, docs),
            "docno": doc.ravel(),
            "score": np.round(rng.random(nq * docs), 2),  # many ties
        }
    )
    j = rng.integers(0, 2 * docs, (nq, judged))  # half of them retrieved
    j = np.where(j < docs, np.take_along_axis(doc, np.minimum(j, docs - 1), 1), -j - 1)
    q = np.repeat(qids, judged)
    d = j.ravel()
    _, first = np.unique(np.char.add(q, d.astype(str)), return_index=True)
    first.sort()
    labels = rng.choice(np.array([0, 0, 1, 1, 2, 3]), len(first))
    qrels = pa.table({"qid": q[first], "docno": d[first], "label": labels})
    return qrels, run


def test_l_size_run_equals_local_bit_for_bit(spark, tmp_path: Path) -> None:  # noqa: ANN001
    import pyarrow.parquet as pq

    # L's 100,000 queries (30 results each, to fit CI's time on 2 cores)
    qrels, run = generate(100_000, 30, 12, seed=1)
    # one query missing from the run (scored under complete), one of the run unjudged
    qrels = qrels.filter(pa.compute.not_equal(qrels.column("qid"), "q77"))
    run = run.filter(pa.compute.not_equal(run.column("qid"), "q99"))
    pq.write_table(qrels, tmp_path / "qrels.parquet", row_group_size=200_000)
    pq.write_table(run, tmp_path / "run.parquet", row_group_size=500_000)
    measures = ["map", "P.10", "ndcg_cut.10", "recip_rank", "gm_map", "num_rel", "ERR@10"]
    opts = {"complete": True}
    expected = irmetrics.evaluate(qrels, run, measures, **opts)
    qd = spark.read.parquet(str(tmp_path / "qrels.parquet"))
    rd = spark.read.parquet(str(tmp_path / "run.parquet"))
    got = irs.evaluate(qd, rd, measures, **opts)
    assert {k: bits(v) for k, v in got.items()} == {k: bits(v) for k, v in expected.items()}
    # per query, the user's own partitioning splitting queries across partitions
    rd_split = rd.repartition(7)  # round robin: every query's rows spread over 7
    assert rd_split.rdd.getNumPartitions() == 7
    pq_rows = per_query_rows(irs.evaluate(qd, rd_split, measures, per_query=True, **opts))
    assert pq_rows == local_per_query(qrels, run, measures, **opts)


def test_a_query_split_across_partitions_is_whole(spark) -> None:  # noqa: ANN001
    qrels = irmetrics.Qrels.from_dict({"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"x": 1}})
    run = irmetrics.Run.from_dict(
        {"q1": {"a": 0.5, "b": 0.9, "c": 0.7, "d": 0.8}, "q2": {"x": 0.1, "y": 0.2}}
    )
    qd, rd = frames(spark, qrels, run)
    # one row per partition: no partition holds a whole query
    rd = rd.repartition(6)
    assert rd.rdd.glom().map(len).max() <= 2
    measures = ["map", "ndcg", "P.2"]
    for method in irs.METHODS:
        got = irs.evaluate(qd.repartition(4), rd, measures, method=method)
        assert got == irmetrics.evaluate(qrels, run, measures), method
    # ir_measures' measure objects, read by their names as locally
    from ir_measures import AP, P

    assert irs.evaluate(qd, rd, [AP, P @ 2]) == irmetrics.evaluate(qrels, run, ["AP", "P@2"])


def test_integer_ids_and_float_labels(spark) -> None:  # noqa: ANN001
    q = pa.table({"query_id": [1, 1, 2], "doc_id": [10, 11, 12], "relevance": [1.0, 0.0, 2.0]})
    r = pa.table({"query_id": [1, 1, 2], "doc_id": [10, 11, 12], "score": [0.2, 0.3, 0.1]})
    got = irs.evaluate(spark.createDataFrame(q), spark.createDataFrame(r), ["map", "ndcg"])
    assert got == irmetrics.evaluate(q, r, ["map", "ndcg"])


def test_missing_query_rules_as_local(spark) -> None:  # noqa: ANN001
    qrels = irmetrics.Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}})
    run = irmetrics.Run.from_dict({"q1": {"a": 1.0}, "q9": {"c": 1.0}})
    qd, rd = frames(spark, qrels, run)
    with pytest.raises(irmetrics.MissingQueryError) as local:
        irmetrics.evaluate(qrels, run, ["map"])
    with pytest.raises(irmetrics.MissingQueryError) as remote:
        irs.evaluate(qd, rd, ["map"])
    assert str(remote.value) == str(local.value)
    with pytest.raises(irmetrics.MissingQueryError) as remote_per_query:
        irs.evaluate(qd, rd, ["map"], per_query=True)
    assert str(remote_per_query.value) == str(local.value)
    got = irs.evaluate(qd, rd, ["map", "num_q", "num_rel"], complete=True)
    assert got == irmetrics.evaluate(qrels, run, ["map", "num_q", "num_rel"], complete=True)
    # no common query at all
    other = irmetrics.Run.from_dict({"z": {"a": 1.0}})
    with pytest.raises(irmetrics.InputError, match="no query of the run is judged"):
        irs.evaluate(qd, spark.createDataFrame(other.to_arrow()), ["map"])


@pytest.fixture(scope="module")
def small(spark):  # noqa: ANN001, ANN201
    qrels = irmetrics.Qrels.from_dict({"q1": {"a": 1, "b": 0}})
    run = irmetrics.Run.from_dict({"q1": {"a": 1.0, "b": 2.0}})
    return frames(spark, qrels, run)


def test_bad_columns(spark, small) -> None:  # noqa: ANN001
    qd, rd = small
    with pytest.raises(irmetrics.InputError, match=r"run: no score column"):
        irs.evaluate(qd, rd.withColumnRenamed("score", "s"), ["map"])
    assert irs.evaluate(qd, rd.withColumnRenamed("score", "s"), ["map"], score="s") == {"map": 0.5}
    with pytest.raises(irmetrics.InputError, match=r"qrels: no query id column"):
        irs.evaluate(qd.withColumnRenamed("query_id", "question"), rd, ["map"])
    # trectools' and BEIR's names are found as in every other input
    renamed = {"query_id": "query", "doc_id": "corpus-id", "relevance": "rel"}
    assert irs.evaluate(qd.withColumnsRenamed(renamed), rd, ["map"]) == {"map": 0.5}
    with pytest.raises(
        irmetrics.InputError, match=r"run: the score column 'score' has Spark type string"
    ):
        irs.evaluate(qd, rd.withColumn("score", rd["score"].cast("string")), ["map"])
    with pytest.raises(
        irmetrics.InputError, match=r"qrels: the document id column 'doc_id' has Spark type double"
    ):
        irs.evaluate(qd.withColumn("doc_id", qd["relevance"].cast("double")), rd, ["map"])
    with pytest.raises(irmetrics.InputError, match="expected a Spark DataFrame"):
        irs.evaluate(qd, {"q1": {"a": 1.0}}, ["map"])


def test_nulls_refused(spark, small) -> None:  # noqa: ANN001
    from pyspark.sql import functions as F

    qd, rd = small
    null_q = rd.withColumn("query_id", F.lit(None).cast("string"))
    with pytest.raises(irmetrics.InputError, match=r"run: the column 'query_id' holds a null"):
        irs.evaluate(qd, rd.unionByName(null_q), ["map"])
    null_label = qd.withColumn("relevance", F.when(F.col("doc_id") == "b", None).otherwise(1))
    with pytest.raises(irmetrics.InputError, match=r"qrels: the column 'relevance' holds a null"):
        irs.evaluate(null_label, rd, ["map"])


def test_measures_and_options_checked_on_the_driver(small) -> None:  # noqa: ANN001
    qd, rd = small
    with pytest.raises(irmetrics.InputError, match="num_docs_in_collection"):
        irs.evaluate(qd, rd, ["fallout@10"])
    with pytest.raises(irmetrics.MeasureError, match="unknown measure"):
        irs.evaluate(qd, rd, ["nosuch"])
    with pytest.raises(ValueError, match="method must be one of"):
        irs.evaluate(qd, rd, ["map"], method="broadcast")


def test_executor_without_irmetrics_says_so() -> None:
    """The function shipped to the executors is pickled by value: where irmetrics
    cannot be imported it raises an ImportError saying what to install (which the
    driver turns into irmetrics.MissingDependencyError)."""
    from pyspark import cloudpickle

    spec = {"measures": ["map"], "options": {}, "max_label": None}
    code = textwrap.dedent(
        """
        import pickle, sys
        sys.modules["irmetrics"] = None  # as on an executor without it
        func = pickle.loads(sys.stdin.buffer.read())
        try:
            list(func(iter([])))
        except ImportError as e:
            print(e)
        """
    )
    # evaluate's function, and the one of fuse and online (irmetrics.spark.online)
    for func in (
        irs._worker_function(spec, partitions=True),
        irs._partition_function("online_partition", {}),
    ):
        shipped = cloudpickle.dumps(func)
        out = subprocess.run(
            [sys.executable, "-c", code], input=shipped, capture_output=True, check=True
        ).stdout.decode()
        assert irs._NO_IRMETRICS in out and "install irmetrics" in out
    # and the driver's translation of Spark's wrapped error
    wrapped = Exception(f"PythonException: ...\nImportError: {out.strip()}\n  at ...")
    err = irs._executor_error(wrapped)
    assert isinstance(err, irmetrics.MissingDependencyError)
    assert str(err).startswith(irs._NO_IRMETRICS)


def fused_rows(table: pa.Table) -> set[tuple[str, str, str]]:
    cols = [table.column(c).to_pylist() for c in ("query_id", "doc_id", "score")]
    return {(q, str(d), s.hex()) for q, d, s in zip(*cols)}


@pytest.mark.parametrize(
    ("method", "norm", "params"),
    [
        ("rrf", None, None),
        ("wsum", "min-max", {"weights": [0.2, 0.5, 0.3]}),
        ("mnz", "zmuv", None),
        ("bordafuse", None, None),
        ("isr", None, None),
    ],
)
def test_fuse_equals_local_bit_for_bit(spark, method, norm, params) -> None:  # noqa: ANN001
    runs = []
    for seed in range(3):
        _, run = generate(500, 20, 1, seed=seed + 10)
        # the runs hold different queries (some in one run only)
        keep = pa.compute.not_equal(
            pa.compute.utf8_slice_codeunits(run.column("qid"), 1, 2), str(seed)
        )
        runs.append(run.filter(keep))
    expected = irmetrics.fuse(
        [irmetrics.Run.from_arrow(r) for r in runs], method, norm, params
    ).to_arrow()
    frames_ = [spark.createDataFrame(r).repartition(3) for r in runs]
    got = irs._collect(irs.fuse(frames_, method, norm, params))
    assert fused_rows(got) == fused_rows(expected)


def test_fuse_bad_input(spark, small) -> None:  # noqa: ANN001
    _, rd = small
    with pytest.raises(irmetrics.InputError, match="at least 2 runs"):
        irs.fuse([rd], "rrf")
    with pytest.raises(irmetrics.Error, match="nosuch"):
        irs.fuse([rd, rd], "nosuch")
    with pytest.raises(irmetrics.InputError, match="run 2: no score column"):
        irs.fuse([rd, rd.withColumnRenamed("score", "s")], "rrf")


def test_compare_options_are_checked_before_any_job(spark, small) -> None:  # noqa: ANN001
    # they were checked by compare_values on the driver after every run's evaluation
    # had run as a job; runs not a dict gave dict()'s ValueError
    qd, rd = small
    sc = spark.sparkContext
    sc.setJobGroup("compare-options", "options checked first")
    for kw, match in [
        ({"test": "nosuch"}, "unknown test 'nosuch'"),
        ({"alpha": 1.5}, "alpha must lie strictly between 0 and 1, got 1.5"),
        ({"n_resamples": -1}, "n_resamples must be a whole number of at least 1"),
        ({"correction": "hlm"}, "did you mean 'holm'"),
        ({"alternative": "greater"}, "alternative 'greater' needs a baseline"),
    ]:
        with pytest.raises(irmetrics.Error, match=match):
            irs.compare(qd, {"a": rd, "b": rd}, ["map"], **kw)
    with pytest.raises(irmetrics.InputError, match=r"runs must be a dict \{name: run DataFrame\}"):
        irs.compare(qd, "x", ["map"])
    assert sc.statusTracker().getJobIdsForGroup("compare-options") == []
    sc.setJobGroup("", "")


def test_compare_equals_local(spark) -> None:  # noqa: ANN001
    qrels, run = generate(60, 20, 8, seed=3)
    runs = {}
    for k, name in enumerate(["bm25", "dense", "hybrid"]):
        rng = np.random.default_rng(k)
        runs[name] = run.set_column(2, "score", pa.array(rng.random(run.num_rows).round(2)))
    measures = ["map", "P@5", "ndcg_cut.10"]
    for test, alternative in (("t", "two-sided"), ("randomization", "greater")):
        expected = irmetrics.compare(
            qrels, runs, measures, test=test, baseline="bm25", alternative=alternative
        )
        got = irs.compare(
            spark.createDataFrame(qrels),
            {n: spark.createDataFrame(r).repartition(3) for n, r in runs.items()},
            measures,
            test=test,
            baseline="bm25",
            alternative=alternative,
        )
        assert got.to_dict() == expected.to_dict()
        assert got.to_dict()["alternative"] == alternative


def test_err_takes_the_whole_qrels_largest_label(spark) -> None:  # noqa: ANN001
    """ERR's default maximum grade is the whole qrels' largest label, not a part's:
    with one call per query (cogroup), q1 alone would take its own (1)."""
    qrels = irmetrics.Qrels.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 3, "d": 1}})
    run = irmetrics.Run.from_dict({"q1": {"a": 0.9, "b": 0.1}, "q2": {"d": 0.9, "c": 0.5}})
    qd, rd = frames(spark, qrels, run)
    measures = ["ERR@5", "nERR@5"]
    expected = irmetrics.evaluate(qrels, run, measures)
    alone = irmetrics.evaluate(
        irmetrics.Qrels.from_dict({"q1": {"a": 1, "b": 0}}), {"q1": {"a": 0.9}}, measures
    )
    # q1's value does depend on it (gmax 1 alone, 3 in the whole qrels)
    whole = irmetrics.evaluate(qrels, run, measures, per_query=True)
    assert alone["ERR@5"] != whole["ERR@5"]["q1"]
    for method in irs.METHODS:
        assert irs.evaluate(qd, rd, measures, method=method) == expected, method
