"""What runs in a Spark executor for ``irmetrics.spark``: one group's (or one
partition's) Arrow tables evaluated by the Rust kernels, no Python object per row."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core

#: One row per query: its id, whether the run holds it, its judged documents with
#: label >= 1, every column's value, and an irmetrics error met (class name, message).
SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("in_run", pa.bool_()),
        ("num_rel_1", pa.int64()),
        ("v", pa.list_(pa.float64())),
        ("error_kind", pa.string()),
        ("error", pa.string()),
    ]
)


def _error(query_id: Any, kind: str, message: str) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "query_id": [query_id],
            "in_run": [False],
            "num_rel_1": [0],
            "v": [[]],
            "error_kind": [kind],
            "error": [message],
        },
        schema=SCHEMA,
    )


def _nulls(table: pa.Table, side: str, shown: list[str]) -> str | None:
    for name, user in zip(table.column_names, shown):
        if table.column(name).null_count:
            return (
                f"{side}: the column '{user}' holds a null; drop or fill the rows with nulls first"
            )
    return None


def evaluate_group(qrels: pa.Table, run: pa.Table, spec: dict[str, Any]) -> pa.Table:
    """The values of the queries of ``qrels`` (all of them: the driver applies the rules
    for queries the run lacks), evaluated against ``run``."""
    if qrels.num_rows == 0:
        return SCHEMA.empty_table()  # a query of the run only: not evaluated
    first = qrels.column("query_id")[0].as_py()
    for table, side, shown in (
        (qrels, "qrels", spec["qrels_columns"]),
        (run, "run", spec["run_columns"]),
    ):
        problem = _nulls(table, side, shown)
        if problem:
            return _error(first, "InputError", problem)
    try:
        ev = _core.Evaluator(qrels, spec["measures"], **spec["options"])
        ids, values, rel1 = ev.evaluate_parts(run, max_label=spec["max_label"])
    except _core.Error as e:
        return _error(first, type(e).__name__, str(e))
    ids_array = pa.array(ids, pa.string())
    in_run = pc.is_in(ids_array, value_set=pc.unique(run.column("query_id")))
    n, width = values.shape
    offsets = pa.array(np.arange(0, (n + 1) * width, width, dtype=np.int32))
    return pa.Table.from_arrays(
        [
            ids_array,
            in_run,
            pa.array(rel1.astype(np.int64)),
            pa.ListArray.from_arrays(offsets, pa.array(values.ravel())),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
        ],
        schema=SCHEMA,
    )


def evaluate_partition(batches: Any, spec: dict[str, Any]) -> Any:
    """``evaluate_group`` over one partition of both sides in one DataFrame (rows of
    the qrels marked ``in_qrels``), holding every row of its queries."""
    batches = list(batches)
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    side = table.column("in_qrels")
    qrels = table.filter(side).select(["query_id", "doc_id", "relevance"])
    run = table.filter(pc.invert(side)).select(["query_id", "doc_id", "score"])
    del table
    yield from evaluate_group(qrels, run, spec).to_batches()


#: A query every run of a partition holds, so that no run is empty there (fusion
#: refuses an empty run); fused apart from the others and dropped (lengthened until
#: no query of the partition has its id).
PLACEHOLDER = "irmetrics.spark.placeholder"


def fuse_partition(batches: Any, spec: dict[str, Any]) -> Any:
    """``irmetrics.fuse`` over one partition of the runs in one DataFrame (column
    ``run``: the run's position), holding every row of its queries."""
    batches = list(batches)
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    placeholder_id = PLACEHOLDER
    while pc.any(pc.equal(table.column("query_id"), placeholder_id)).as_py():
        placeholder_id += "_"
    runs = []
    for i in range(spec["runs"]):
        rows = table.filter(pc.equal(table.column("run"), i)).select(
            ["query_id", "doc_id", "score"]
        )
        rows = rows.cast(
            pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())])
        )
        placeholder = pa.table(
            {"query_id": [placeholder_id], "doc_id": ["d"], "score": [0.0]}, schema=rows.schema
        )
        runs.append(_core.Run.from_arrow(pa.concat_tables([rows, placeholder])))
    del table
    try:
        fused = _core.fuse(runs, spec["method"], spec["norm"], spec["params"]).to_arrow()
    except _core.Error as e:
        raise RuntimeError(f"irmetrics.spark[{type(e).__name__}]: {e}") from e
    fused = fused.filter(pc.not_equal(fused.column("query_id"), placeholder_id))
    out = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())])
    yield from fused.cast(out).to_batches()


#: The column ``irmetrics.spark.online`` numbers the log's rows with (their order in
#: the DataFrame), so that each partition reads its events in the log's order.
ROW = "__irmetrics_row"

#: One row per session: its id, its first row (``ROW``), its variant, its numerators,
#: denominators and times to first click (``crate::online::SessionParts``), how the
#: partition writes its timestamps (``OnlineLog.time_style``), and an irmetrics error met.
ONLINE_SCHEMA = pa.schema(
    [
        ("session_id", pa.string()),
        ("first", pa.int64()),
        ("variant", pa.string()),
        ("num", pa.list_(pa.float64())),
        ("den", pa.list_(pa.float64())),
        ("ttfc", pa.list_(pa.float64())),
        ("time_style", pa.string()),
        ("error_kind", pa.string()),
        ("error", pa.string()),
    ]
)


def _online_error(table: pa.Table, rows: pa.Array, e: Exception, spec: dict[str, Any]) -> pa.Table:
    """An error row; a row named in the message (counted in the partition) said as its
    session and timestamp, which name it in the DataFrame."""
    import re

    message = str(e)
    first = rows[0].as_py()
    found = re.match(r"log, row (\d+): ", message)
    if found and int(found[1]) < table.num_rows:
        i = int(found[1])
        fields = spec["fields"]
        sid = table.column(fields["session_id"])[i].as_py()
        ts = table.column(fields["timestamp"])[i].as_py()
        message = (
            f"log, the row with {fields['session_id']}={sid!r} and "
            f"{fields['timestamp']}={ts!r}: {message[found.end() :]}"
        )
        first = rows[i].as_py()
    return pa.Table.from_pydict(
        {
            "session_id": [None],
            "first": [first],
            "variant": [None],
            "num": [[]],
            "den": [[]],
            "ttfc": [[]],
            "time_style": [None],
            "error_kind": [type(e).__name__],
            "error": [message],
        },
        schema=ONLINE_SCHEMA,
    )


def online_partition(batches: Any, spec: dict[str, Any]) -> Any:
    """The sessions' parts of one partition of a log (every event of its sessions,
    numbered by ``ROW``), read in the log's row order by the Rust kernels."""
    batches = list(batches)
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    if table.num_rows == 0:
        return
    table = table.sort_by(ROW)
    rows = table.column(ROW).combine_chunks()
    table = table.drop_columns([ROW])
    try:
        log = _core.online_from_arrow(
            table,
            columns=spec["columns"],
            success_events=spec["success_events"],
            dwell_cap=spec["dwell_cap"],
            time_unit=spec["time_unit"],
        )
        parts = _core.online_session_parts(
            log, spec["metrics"], dwell_threshold=spec["dwell_threshold"]
        )
    except _core.Error as e:
        yield from _online_error(table, rows, e, spec).to_batches()
        return
    _metrics, sessions, first_place, variant, variants, num, den, ttfc, ends = parts
    n, width = len(sessions), len(spec["metrics"])
    offsets = pa.array(np.arange(0, (n + 1) * width, width, dtype=np.int32))
    none = variant == np.iinfo(np.uint32).max
    variant_text = pa.DictionaryArray.from_arrays(
        pa.array(np.where(none, 0, variant).astype(np.int32), mask=none),
        pa.array(variants or [""], pa.string()),
    ).cast(pa.string())
    out = pa.Table.from_arrays(
        [
            pa.array(sessions, pa.string()),
            rows.take(pa.array(first_place.astype(np.int64))),
            variant_text,
            pa.ListArray.from_arrays(offsets, pa.array(num)),
            pa.ListArray.from_arrays(offsets, pa.array(den)),
            pa.ListArray.from_arrays(pa.array(ends.astype(np.int32)), pa.array(ttfc)),
            pa.repeat(pa.scalar(log.time_style, pa.string()), n),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
        ],
        schema=ONLINE_SCHEMA,
    )
    yield from out.to_batches()
