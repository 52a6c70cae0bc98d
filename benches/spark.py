"""irmetrics over Spark (local[1], local[2]) vs Spark MLlib's RankingEvaluator and
RankingMetrics vs local irmetrics, on one generated run (L by default: 100,000 queries x
100 results, 20 judgments per query).

    python benches/spark.py [--queries 100000] [--docs 100] [--judged 20] [--cores 1,2]
                            [--methods partition,cogroup,cogroup-pandas] [--json out.json]
                            [--no-evaluator] [--online-sessions 200000]

Needs pyspark (and Java 17). The data are written once as parquet and read by every
contender; each Spark timing is the wall time of one job from the parquet files to the
`all` values on the driver (the session started beforehand, its start not counted).
MLlib's RankingEvaluator needs numeric document ids and one row per query holding the
ranked ids and the relevant ids (arrays): building those rows (a group-by per side and
a join) is part of its time, as it is part of any use of it on rows like these.
MLlib's older RDD API, ``pyspark.mllib.evaluation.RankingMetrics`` (precisionAt,
meanAveragePrecision, ndcgAt), takes an RDD of (ranked ids, relevant ids) pairs built
the same way; its timing, and how its numbers differ from trec_eval's (measured: tie
order, binary or graded gains, its ideal ranking), are in ``mllib_rdd`` and
``conventions`` below.

``--online-sessions N`` times instead the online metrics of a generated search log of
N sessions (tests/online_gen.py) on Spark: ``irmetrics.spark.online`` (repartition by
session + ``mapInArrow``) against the other way to group sessions,
``groupBy(session).applyInArrow`` (one Python call per session), and local
``irmetrics.online.evaluate``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import irmetrics

MEASURES = ["P.10", "map", "ndcg_cut.10"]


def generate(nq: int, docs: int, judged: int, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    """A run of ``nq`` queries x ``docs`` results (scores with ties) and ``judged``
    judgments per query (labels 0-3, half of them on retrieved documents)."""
    rng = np.random.default_rng(seed)
    qids = np.char.add("q", np.arange(nq).astype(str))
    run = pa.table(
        {
            "query_id": np.repeat(qids, docs),
            "doc_id": rng.integers(0, 50_000_000, nq * docs, dtype=np.int64)
            + np.tile(np.arange(docs, dtype=np.int64) * 50_000_000, nq),
            "score": np.round(rng.random(nq * docs), 3),
        }
    )
    # half the judgments on retrieved documents, half on others (negative ids: unique)
    hit = rng.integers(0, docs, (nq, judged // 2)) + np.arange(nq)[:, None] * docs
    hit = np.sort(hit, axis=1)
    keep = np.ones_like(hit, dtype=bool)
    keep[:, 1:] = hit[:, 1:] != hit[:, :-1]
    hit_docs = run.column("doc_id").to_numpy()[hit[keep]]
    hit_q = np.repeat(qids, keep.sum(axis=1))
    miss = judged - judged // 2
    miss_docs = -(np.arange(nq * miss, dtype=np.int64) + 1)
    miss_q = np.repeat(qids, miss)
    q = np.concatenate([hit_q, miss_q])
    d = np.concatenate([hit_docs, miss_docs])
    labels = rng.choice([0, 0, 1, 1, 2, 3], len(q)).astype(np.int64)
    order = np.argsort(q, kind="stable")
    qrels = pa.table({"query_id": q[order], "doc_id": d[order], "relevance": labels[order]})
    return qrels, run


def session(cores: int):  # noqa: ANN201
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(f"local[{cores}]")
        .config("spark.ui.enabled", "true")  # its REST API counts the shuffle's bytes
        .config("spark.sql.shuffle.partitions", str(4 * cores))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "6g")
        .getOrCreate()
    )


def shuffle_bytes(spark) -> int:  # noqa: ANN001
    """Bytes written to shuffles so far in this session (Spark's own counters, read
    from its status REST API)."""
    import urllib.request

    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages"
    with urllib.request.urlopen(url) as f:
        stages = json.load(f)
    return sum(st.get("shuffleWriteBytes", 0) for st in stages)


def mllib(spark, qrels_path: str, run_path: str) -> dict[str, float]:  # noqa: ANN001
    """MLlib's P@10, MAP and nDCG@10 (binary relevance: label >= 1)."""
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    run = spark.read.parquet(run_path)
    qrels = spark.read.parquet(qrels_path)
    ranked = run.groupBy("query_id").agg(
        F.sort_array(F.collect_list(F.struct(-F.col("score"), -F.col("doc_id")))).alias("r")
    )
    ranked = ranked.select(
        "query_id", F.expr("transform(r, x -> cast(-x.col2 as double))").alias("prediction")
    )
    rel = (
        qrels.filter(F.col("relevance") >= 1)
        .groupBy("query_id")
        .agg(F.collect_list(F.col("doc_id").cast("double")).alias("label"))
    )
    data = ranked.join(rel, "query_id").cache()
    data.count()
    out = {}
    for name, metric, k in (
        ("P@10", "precisionAtK", 10),
        ("MAP", "meanAveragePrecision", None),
        ("nDCG@10", "ndcgAtK", 10),
    ):
        ev = RankingEvaluator(metricName=metric, labelCol="label", predictionCol="prediction")
        if k:
            ev.setK(k)
        out[name] = ev.evaluate(data)
    data.unpersist()
    return out


def mllib_input(spark, qrels_path: str, run_path: str, ties: str):  # noqa: ANN001, ANN201
    """One row per judged query as an MLlib user builds it: the run's documents ranked
    by score (ties by document id descending: as numbers, ``ties="numeric"``, or as
    text, trec_eval's rule, ``ties="text"``), the relevant documents (label >= 1; none:
    an empty array, which MLlib scores 0 as trec_eval does) and their labels."""
    from pyspark.sql import functions as F

    run = spark.read.parquet(run_path)
    qrels = spark.read.parquet(qrels_path)
    tie = F.col("doc_id") if ties == "numeric" else F.col("doc_id").cast("string")
    ranked = run.groupBy("query_id").agg(
        F.sort_array(F.collect_list(F.struct("score", tie.alias("tie"), "doc_id")), asc=False)
        .getField("doc_id")
        .alias("prediction")
    )
    relevant = F.col("relevance") >= 1
    rel = qrels.groupBy("query_id").agg(
        F.collect_list(F.when(relevant, F.col("doc_id"))).alias("labels"),
        F.collect_list(F.when(relevant, F.col("relevance").cast("double"))).alias("gains"),
    )
    return ranked.join(rel, "query_id")


def mllib_rdd(spark, qrels_path: str, run_path: str, ties: str = "numeric") -> dict:  # noqa: ANN001
    """``pyspark.mllib.evaluation.RankingMetrics``'s three measures on (ranked ids,
    relevant ids) pairs, timed from the parquet files; and its nDCG@10 with graded
    relevance (the triples it takes since Spark 3.4), untimed."""
    from pyspark.mllib.evaluation import RankingMetrics

    t = time.perf_counter()
    data = mllib_input(spark, qrels_path, run_path, ties)
    pairs = data.select("prediction", "labels").rdd.map(tuple).cache()
    metrics = RankingMetrics(pairs)
    values = {
        "P@10": metrics.precisionAt(10),
        "MAP": metrics.meanAveragePrecision,
        "nDCG@10": metrics.ndcgAt(10),
    }
    secs = time.perf_counter() - t
    pairs.unpersist()
    triples = data.select("prediction", "labels", "gains").rdd.map(tuple)
    values["nDCG@10 graded"] = RankingMetrics(triples).ndcgAt(10)
    return {"seconds": secs, "values": values}


def conventions(qrels: pa.Table, run: pa.Table, local: dict, ml: dict) -> dict:
    """How MLlib's numbers differ from trec_eval's (irmetrics', equal to trec_eval's by
    the conformance tests): each difference, and the irmetrics numbers under MLlib's
    conventions where irmetrics has them (binary labels for nDCG)."""
    import pyarrow.compute as pc

    binary = qrels.set_column(
        2, "relevance", pc.if_else(pc.greater_equal(qrels.column("relevance"), 1), 1, 0)
    )
    ndcg_binary = irmetrics.evaluate(binary, run, ["ndcg_cut.10"])["ndcg_cut.10"]
    out: dict[str, object] = {"irmetrics ndcg_cut.10 on binary labels": ndcg_binary}
    pairs = (("P@10", "P.10"), ("MAP", "map"), ("nDCG@10", "ndcg_cut.10"))
    for ties, values in ml.items():
        for theirs, ours in pairs:
            out[f"{theirs} ({ties} ties) - trec_eval {ours}"] = values[theirs] - local[ours]
        out[f"nDCG@10 ({ties} ties) - irmetrics ndcg_cut.10 on binary labels"] = (
            values["nDCG@10"] - ndcg_binary
        )
        out[f"nDCG@10 graded ({ties} ties) - trec_eval ndcg_cut.10"] = (
            values["nDCG@10 graded"] - local["ndcg_cut.10"]
        )
    return out


def online_bench(sessions: int, cores: list[int]) -> dict:
    """``irmetrics.spark.online`` (mapInArrow over partitions) vs one call per session
    (``groupBy().applyInArrow``, the same worker) vs local, on a generated log."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from online_gen import generate as generate_log

    from irmetrics import _spark_worker, online
    from irmetrics import spark as irs

    events = pa.Table.from_pandas(generate_log(sessions, seed=1)["events"], preserve_index=False)
    out: dict[str, object] = {"sessions": sessions, "events": events.num_rows}
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/log.parquet"
        pq.write_table(events, path)
        t = time.perf_counter()
        local = online.evaluate(pq.read_table(path))
        out["local"] = {"seconds": time.perf_counter() - t}
        print(out, flush=True)
        for c in cores:
            spark = session(c)
            spark.sparkContext.setLogLevel("ERROR")
            irs.online(spark.read.parquet(path).where("session_id < 's11'"))  # warm-up
            t = time.perf_counter()
            got = irs.online(spark.read.parquet(path))
            secs = time.perf_counter() - t
            assert got == local or all(
                got[k] == local[k] or (got[k] != got[k] and local[k] != local[k]) for k in local
            ), (got, local)
            out[f"spark_local[{c}]_mapInArrow"] = {"seconds": secs}
            print(out, flush=True)
            t = time.perf_counter()
            per_session = per_session_calls(spark, path, list(local), _spark_worker)
            out[f"spark_local[{c}]_applyInArrow"] = {
                "seconds": time.perf_counter() - t,
                "sessions_out": per_session,
            }
            print(out, flush=True)
            spark.stop()
    return out


def per_session_calls(spark, path: str, metrics: list[str], worker) -> int:  # noqa: ANN001
    """The sessions' parts computed by ``groupBy(session_id).applyInArrow``: one
    Python call per session (what ``irmetrics.spark.online`` would cost that way;
    the combination on the driver left out, as it is the same)."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    spec = {
        "columns": {},
        "success_events": ["copy", "purchase"],
        "dwell_cap": 1800.0,
        "time_unit": "auto",
        "metrics": metrics,
        "dwell_threshold": 30.0,
        "fields": {"timestamp": "timestamp", "type": "type", "session_id": "session_id"},
    }

    def one_session(table: pa.Table) -> pa.Table:
        return pa.Table.from_batches(
            list(worker.online_partition(table.to_batches(), spec)), worker.ONLINE_SCHEMA
        )

    df = spark.read.parquet(path).drop("doc_id")
    df = df.withColumn(worker.ROW, F.monotonically_increasing_id())
    parts = df.groupBy("session_id").applyInArrow(
        one_session, schema=from_arrow_schema(worker.ONLINE_SCHEMA)
    )
    return parts.count()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--judged", type=int, default=20)
    ap.add_argument("--cores", default="1,2")
    ap.add_argument("--methods", default="partition", help="of irmetrics.spark.METHODS")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--no-evaluator", action="store_true", help="leave out MLlib's RankingEvaluator"
    )
    ap.add_argument("--online-sessions", type=int, help="time the online metrics instead")
    args = ap.parse_args()
    if args.online_sessions:
        results_online = online_bench(args.online_sessions, [int(c) for c in args.cores.split(",")])
        print(json.dumps(results_online, indent=1))
        if args.json:
            args.json.write_text(json.dumps(results_online, indent=1) + "\n")
        return
    qrels, run = generate(args.queries, args.docs, args.judged)
    results: dict[str, object] = {
        "queries": args.queries,
        "run_lines": run.num_rows,
        "judgments": qrels.num_rows,
        "measures": MEASURES,
    }
    with tempfile.TemporaryDirectory() as tmp:
        qp, rp = f"{tmp}/qrels.parquet", f"{tmp}/run.parquet"
        pq.write_table(qrels, qp)
        pq.write_table(run, rp)

        t = time.perf_counter()
        local = irmetrics.evaluate(pq.read_table(qp), pq.read_table(rp), MEASURES)
        results["local"] = {"seconds": time.perf_counter() - t, "values": local}
        t = time.perf_counter()
        irmetrics.evaluate(pq.read_table(qp), pq.read_table(rp), MEASURES, n_threads=1)
        results["local_1_thread"] = {"seconds": time.perf_counter() - t}
        print(json.dumps(results, indent=1), flush=True)

        from irmetrics import spark as irs

        for cores in (int(c) for c in args.cores.split(",")):
            spark = session(cores)
            spark.sparkContext.setLogLevel("ERROR")
            # warm-up: the Python workers started, the JIT warmed
            irs.evaluate(
                spark.read.parquet(qp).limit(1000),
                spark.read.parquet(rp).limit(5000),
                MEASURES,
                complete=True,
            )
            for method in args.methods.split(","):
                before = shuffle_bytes(spark)
                t = time.perf_counter()
                got = irs.evaluate(
                    spark.read.parquet(qp), spark.read.parquet(rp), MEASURES, method=method
                )
                secs = time.perf_counter() - t
                assert got == local, (got, local)
                key = f"spark_local[{cores}]_{method}"
                results[key] = {"seconds": secs, "shuffle_bytes": shuffle_bytes(spark) - before}
                print(key, results[key], flush=True)
            if not args.no_evaluator:
                t = time.perf_counter()
                ml = mllib(spark, qp, rp)
                secs = time.perf_counter() - t
                results[f"mllib_local[{cores}]"] = {"seconds": secs, "values": ml}
                print("mllib", cores, results[f"mllib_local[{cores}]"], flush=True)
            rdd = {ties: mllib_rdd(spark, qp, rp, ties) for ties in ("numeric", "text")}
            results[f"mllib_rdd_local[{cores}]"] = rdd
            print("mllib RankingMetrics", cores, rdd, flush=True)
            values = {ties: r["values"] for ties, r in rdd.items()}
            results["mllib_conventions"] = conventions(qrels, run, local, values)
            print(json.dumps(results["mllib_conventions"], indent=1), flush=True)
            spark.stop()
    print(json.dumps(results, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
