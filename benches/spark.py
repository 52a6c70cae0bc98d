"""irmetrics over Spark (local[1], local[2]) vs Spark MLlib's RankingEvaluator vs local
irmetrics, on one generated run (L by default: 100,000 queries x 100 results, 20
judgments per query).

    python benches/spark.py [--queries 100000] [--docs 100] [--judged 20] [--cores 1,2]
                            [--methods partition,cogroup,cogroup-pandas] [--json out.json]

Needs pyspark (and Java 17). The data are written once as parquet and read by every
contender; each Spark timing is the wall time of one job from the parquet files to the
`all` values on the driver (the session started beforehand, its start not counted).
MLlib's RankingEvaluator needs numeric document ids and one row per query holding the
ranked ids and the relevant ids (arrays): building those rows (a group-by per side and
a join) is part of its time, as it is part of any use of it on rows like these.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--judged", type=int, default=20)
    ap.add_argument("--cores", default="1,2")
    ap.add_argument("--methods", default="partition", help="of irmetrics.spark.METHODS")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
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
            t = time.perf_counter()
            ml = mllib(spark, qp, rp)
            results[f"mllib_local[{cores}]"] = {"seconds": time.perf_counter() - t, "values": ml}
            print("mllib", cores, results[f"mllib_local[{cores}]"], flush=True)
            spark.stop()
    print(json.dumps(results, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
