"""Online metrics benchmark: N generated events (tests/online_gen.py, shuffled rows) as
JSON Lines, CSV and a pandas DataFrame, each read and taken to every metric, then the
top queries, queries per hour and the per-variant comparison.

    python benches/online.py [--events 10000000] [--dir /tmp/irm-online] [--threads 0]

The files are written once into --dir (kept for the next run). Prints seconds per step
and the peak resident memory of the process. The route JSONL-stream streams the log
written in time order (sorted-N.jsonl) in a child process, and prints its own peak
resident memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from online_gen import generate  # noqa: E402

from irmetrics import online  # noqa: E402

EVENTS_PER_SESSION = 3.4  # about, with the generator's defaults


def timed(label: str, f, *args, **kw):
    t = time.perf_counter()
    out = f(*args, **kw)
    print(f"{label:<44} {time.perf_counter() - t:8.2f} s", flush=True)
    return out


STREAM = """
import sys, time
from irmetrics import online
t = time.perf_counter()
online.evaluate(sys.argv[1], stream=True)
status = open("/proc/self/status").read()
peak = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))
print(f"{time.perf_counter() - t:.2f} {int(peak) / 1024:.0f}")
"""


def stream(path: Path) -> None:
    """Every metric of the log file streamed, in a process of its own."""
    out = subprocess.run(
        [sys.executable, "-c", STREAM, str(path)], capture_output=True, text=True, check=True
    )
    secs, mib = out.stdout.split()
    size = path.stat().st_size / 1e9
    print(f"{'JSONL-stream: every metric (' + f'{size:.1f} GB)':<44} {float(secs):8.2f} s")
    print(f"JSONL-stream: peak resident memory {mib} MiB (the child process)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--dir", default="/tmp/irm-online")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument(
        "--routes",
        default="JSONL,CSV,DataFrame,Arrow,Arrow-dictionary,parquet,pyarrow-parquet",
        help="comma-separated: JSONL, CSV, DataFrame, Arrow (a pyarrow Table), "
        "JSONL-stream (the log in time order, streamed in a child process), "
        "Arrow-dictionary (its text columns dictionary-encoded), parquet (the file, read "
        "in Rust), pyarrow-parquet (the file read by pyarrow, then the Arrow route)",
    )
    a = ap.parse_args()
    if a.threads:
        os.environ["IRMETRICS_NUM_THREADS"] = str(a.threads)
    folder = Path(a.dir)
    folder.mkdir(parents=True, exist_ok=True)
    sessions = int(a.events / EVENTS_PER_SESSION)
    g = timed(f"generate ({sessions} sessions)", generate, sessions, seed=1)
    events = g["events"]
    print(f"{len(events)} events, {sessions} sessions")
    routes = a.routes.split(",")
    jsonl = folder / f"log-{sessions}.jsonl"
    csv = folder / f"log-{sessions}.csv"
    parquet = folder / f"log-{sessions}.parquet"
    if "JSONL" in routes and not jsonl.exists():
        timed("write JSONL (pandas)", events.to_json, jsonl, orient="records", lines=True)
    if "CSV" in routes and not csv.exists():
        timed("write CSV (pandas)", events.to_csv, csv, index=False)
    sources: dict[str, object] = {"JSONL": jsonl, "CSV": csv, "DataFrame": events}
    if "JSONL-stream" in routes:
        ordered = folder / f"sorted-{sessions}.jsonl"
        if not ordered.exists():
            by_time = events.sort_values("timestamp", kind="stable")
            timed(
                "write JSONL in time order", by_time.to_json, ordered, orient="records", lines=True
            )
        stream(ordered)
        routes.remove("JSONL-stream")
        if not routes:
            return
    if {"Arrow", "Arrow-dictionary", "parquet", "pyarrow-parquet"} & set(routes):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = timed("pandas -> pyarrow Table", pa.Table.from_pandas, events, preserve_index=False)
        sources["Arrow"] = table
        encoded = table
        for c in ("session_id", "type", "query", "doc_id", "variant"):
            i = encoded.schema.get_field_index(c)
            encoded = encoded.set_column(i, c, encoded.column(c).dictionary_encode())
        sources["Arrow-dictionary"] = encoded
        if not parquet.exists():
            timed("write parquet (pyarrow)", pq.write_table, table, parquet)
        sources["parquet"] = sources["pyarrow-parquet"] = parquet
    log = None
    for name in routes:
        src = sources[name]
        t = time.perf_counter()
        if name == "pyarrow-parquet":
            import pyarrow.parquet as pq

            src = timed("parquet: pyarrow.parquet.read_table", pq.read_table, src)
        log = timed(f"{name}: read", online.read_log, src)
        timed(f"{name}: every metric", online.evaluate, log)
        print(f"{name + ': read + every metric':<44} {time.perf_counter() - t:8.2f} s")
    timed("top 10 queries", online.top_queries, log, 10)
    timed("queries per hour (latency percentiles)", online.queries_per, log, "hour")
    timed(
        f"by variant, {a.resamples} bootstrap resamples",
        online.evaluate,
        log,
        by="variant",
        n_resamples=a.resamples,
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory {peak:.0f} MiB (the DataFrame included)")


if __name__ == "__main__":
    main()
