"""irmetrics.spark.online on a real Spark (local[2], the session's fixture of
test_spark.py): every value equal bit for bit (==) to irmetrics.online.evaluate on the
same events in the DataFrame's row order, whatever the partitioning (sessions split
over partitions by a user's repartition included); and, outside the engine, to the
synthetic generator's truth (numpy over the generated structure, tests/online_gen.py)
and the hand-computed small log (tests/data/online_small.jsonl, worked in
test_online.py). Bad input: a clear irmetrics error on the driver."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from test_spark import spark  # noqa: F401  (the session's local[2] Spark)

import irmetrics
from irmetrics import online
from irmetrics import spark as irs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from online_gen import generate  # noqa: E402
from test_online import HAND, SMALL  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning",
    "ignore::DeprecationWarning:pyspark",
)


def bits(x: object) -> object:
    """Values compared bit for bit (NaN equal to NaN), in nested dicts and lists."""
    if isinstance(x, float):
        return "NaN" if math.isnan(x) else x.hex()
    if isinstance(x, dict):
        return {k: bits(v) for k, v in x.items()}
    if isinstance(x, list):
        return [bits(v) for v in x]
    return x


@pytest.fixture(scope="module")
def gen() -> dict:
    return generate(3000, seed=11)


@pytest.fixture(scope="module")
def table(gen: dict) -> pa.Table:
    return pa.Table.from_pandas(gen["events"], preserve_index=False)


def test_generator_log_equals_local_for_any_partitioning(spark, gen, table) -> None:  # noqa: ANN001, F811
    df = spark.createDataFrame(table)
    want = online.evaluate(table)
    for name, v in gen["truth"].items():  # the local numbers, against the truth
        assert want[name] == pytest.approx(v, rel=1e-9, abs=1e-12), name
    assert bits(irs.online(df)) == bits(want)
    # a user's partitionings: round robin (every session's events spread over 7
    # partitions), by another column, one partition; each checkpointed so that its
    # row order is fixed, and compared with a local read of the rows in that order
    split = {
        "round robin": df.repartition(7),
        "by type": df.repartition(3, "type"),
        "one partition": df.coalesce(1),
    }
    for how, frame in split.items():
        frame = frame.localCheckpoint(eager=True)
        assert frame.rdd.getNumPartitions() >= 1
        local = online.evaluate(irs._collect(frame))
        assert bits(irs.online(frame)) == bits(local), how
        # counts do not depend on the order; the whole result is the truth's
        for name, v in gen["truth"].items():
            assert local[name] == pytest.approx(v, rel=1e-9, abs=1e-12), (how, name)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_tiny_generated_logs(spark, seed: int) -> None:  # noqa: ANN001, F811
    # tiny logs reach the edges (no click, no SERP with p results: NaN), spread over
    # more partitions than sessions
    g = generate(3 * seed, seed=seed)
    table = pa.Table.from_pandas(g["events"], preserve_index=False)
    frame = spark.createDataFrame(table).repartition(5).localCheckpoint(eager=True)
    got = irs.online(frame)
    assert bits(got) == bits(online.evaluate(irs._collect(frame)))
    for name, v in g["truth"].items():
        assert got[name] == pytest.approx(v, rel=1e-9, abs=1e-12, nan_ok=True), name


def test_by_variant_equals_local_bit_for_bit(spark, table) -> None:  # noqa: ANN001, F811
    df = spark.createDataFrame(table).repartition(5).localCheckpoint(eager=True)
    rows = irs._collect(df)
    for opts in (
        {"n_resamples": 300},
        {"n_resamples": 200, "baseline": "B", "seed": 3, "confidence": 0.9},
    ):
        want = online.evaluate(
            rows, ["ctr", "click_mrr", "time_to_first_click"], by="variant", **opts
        )
        got = irs.online(df, ["ctr", "click_mrr", "time_to_first_click"], by="variant", **opts)
        assert bits(got) == bits(want), opts
        assert len(got["comparisons"]) == 3
    frame = irs.online(df, ["ctr"], by="variant", output="pandas", n_resamples=100)
    local = online.evaluate(rows, ["ctr"], by="variant", output="pandas", n_resamples=100)
    assert frame.equals(local)


def test_hand_computed_log(spark) -> None:  # noqa: ANN001, F811
    rows = [json.loads(line) for line in SMALL.read_text().splitlines()]
    fields = ("session_id", "timestamp", "type", "query", "n_results", "position")
    fields += ("doc_id", "dwell", "latency_ms", "variant")
    table = pa.Table.from_pylist([{f: r.get(f) for f in fields} for r in rows])
    df = spark.createDataFrame(table)
    got = irs.online(df)
    assert got == pytest.approx(HAND, abs=1e-12)  # the arithmetic of test_online.py
    assert list(got) == list(HAND)
    assert bits(got) == bits(online.evaluate(table))
    for n in (1, 2, 4):  # s1's events apart; ISO text timestamps, ties and a reorder
        frame = df.repartition(n).localCheckpoint(eager=True)
        assert bits(irs.online(frame)) == bits(online.evaluate(irs._collect(frame))), n
    by = irs.online(df, ["ctr", "success_rate"], by="variant", n_resamples=200)
    assert by["groups"] == {
        "A": {"ctr": pytest.approx(1 / 3), "success_rate": 0.5},
        "B": {"ctr": 1.0, "success_rate": 1.0},
    }
    assert bits(by) == bits(
        online.evaluate(table, ["ctr", "success_rate"], by="variant", n_resamples=200)
    )


def test_typed_timestamps_integer_ids_and_mapped_columns(spark, table) -> None:  # noqa: ANN001, F811
    import pyarrow.compute as pc

    micros = pc.cast(pc.round(pc.multiply(table.column("timestamp"), 1e6)), pa.int64())
    typed = table.set_column(1, "timestamp", micros.cast(pa.timestamp("us", tz="UTC")))
    ids = pc.cast(pc.utf8_slice_codeunits(table.column("session_id"), 1), pa.int64())
    renamed = typed.set_column(0, "sid", ids).rename_columns(["sid", "ts", *typed.column_names[2:]])
    df = spark.createDataFrame(renamed)
    rows = irs._collect(df)  # Spark's own timestamp type, read back
    cols = {"session_id": "sid", "timestamp": "ts"}
    want = online.evaluate(rows, columns=cols)
    assert bits(irs.online(df, columns=cols)) == bits(want)
    assert bits(irs.online(df.repartition(3), ["ctr@3", "zero_result_rate"], columns=cols)) == (
        bits(online.evaluate(rows, ["ctr@3", "zero_result_rate"], columns=cols))
    )


def test_options_as_local(spark, table) -> None:  # noqa: ANN001, F811
    df = spark.createDataFrame(table)
    # no event: every value NaN, as locally
    assert bits(irs.online(df.limit(0))) == bits(online.evaluate(table.slice(0, 0)))
    opts = {"dwell_threshold": 10.0, "success_events": ["purchase", "hover"], "dwell_cap": 60.0}
    assert bits(irs.online(df, ["success_rate", "ctr_by_position"], **opts)) == bits(
        online.evaluate(table, ["success_rate", "ctr_by_position"], **opts)
    )


def test_bad_input_is_an_error_on_the_driver(spark, table) -> None:  # noqa: ANN001, F811
    from pyspark.sql import functions as F

    df = spark.createDataFrame(table)
    with pytest.raises(irmetrics.InputError, match="session_id"):
        irs.online(df.drop("session_id"))
    with pytest.raises(irmetrics.InputError, match="'timestamp'"):
        irs.online(df.drop("timestamp"))
    with pytest.raises(irmetrics.Error, match="position"):
        irs.online(df.withColumn("position", F.col("position").cast("string")))
    with pytest.raises(irmetrics.Error, match="timestamp"):
        irs.online(df.withColumn("timestamp", F.col("timestamp") > 0))
    with pytest.raises(irmetrics.Error, match="unknown online metric"):
        irs.online(df, ["ctr", "dcg"])
    with pytest.raises(irmetrics.InputError, match="position"):
        irs.online(df.drop("position"), ["click_mrr"])
    with pytest.raises(irmetrics.InputError, match="variant"):
        irs.online(df.drop("variant"), ["ctr"], by="variant")
    with pytest.raises(irmetrics.Error, match="baseline 'C'"):
        irs.online(df, ["ctr"], by="variant", baseline="C")
    with pytest.raises(irmetrics.InputError, match="Spark DataFrame"):
        irs.online(table)
    # a null session id on a SERP: named by the row's timestamp, as an irmetrics error
    nulled = df.withColumn(
        "session_id",
        F.when((F.col("session_id") == "s5") & (F.col("type") == "query"), None).otherwise(
            F.col("session_id")
        ),
    )
    with pytest.raises(irmetrics.FormatError, match="session_id=None.*no 'session_id'"):
        irs.online(nulled)
    # a click before any SERP of its session (the session whole in one partition)
    click_first = spark.createDataFrame(
        [("a", 1.0, "click", 1.0), ("a", 2.0, "query", None), ("b", 3.0, "query", None)],
        "session_id string, timestamp double, type string, position double",
    )
    with pytest.raises(irmetrics.FormatError, match="no earlier SERP.*session 'a'"):
        irs.online(click_first.repartition(2))
    # timestamps in seconds in some sessions and milliseconds in others: in one
    # partition the reader refuses them, in two the driver (partitions kept apart)
    mixed = spark.createDataFrame(
        [(f"s{i}", 1.0, "query") for i in range(40)],
        "session_id string, timestamp double, type string",
    )
    part = F.pmod(F.hash("session_id"), F.lit(4))  # Spark's partition of the shuffle
    mixed = mixed.withColumn("timestamp", F.when(part == 0, 1.7e9).otherwise(1.7e12))
    with pytest.raises(irmetrics.FormatError, match="written two ways"):
        online.evaluate(irs._collect(mixed))
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    try:
        with pytest.raises(irmetrics.FormatError, match="written two ways"):
            irs.online(mixed)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "4")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        with pytest.raises(irmetrics.InputError, match="written two ways: numbers in mill"):
            irs.online(mixed)
        # ISO text with a zone in some partitions, without in others
        zones = mixed.withColumn(
            "timestamp",
            F.when(part == 0, "2024-05-01T00:00:00Z").otherwise("2024-05-01 00:00:00"),
        )
        with pytest.raises(irmetrics.FormatError, match="written two ways"):
            online.evaluate(irs._collect(zones))
        with pytest.raises(irmetrics.InputError, match="text with a time zone in some"):
            irs.online(zones)
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    # a session without a variant, grouped by variant
    no_variant = df.withColumn(
        "variant", F.when(F.col("session_id") == "s7", None).otherwise(F.col("variant"))
    )
    with pytest.raises(irmetrics.InputError, match="session 's7' has no variant"):
        irs.online(no_variant, ["ctr"], by="variant")
