"""Evaluation over Spark DataFrames, with the numbers of a local run to the last bit.

>>> from irmetrics import spark as irs
>>> irs.evaluate(qrels_df, run_df, ["map", "ndcg_cut.10"])  # doctest: +SKIP
{'map': 0.2551..., 'ndcg_cut.10': 0.4012...}

Both sides are shuffled by query id into one DataFrame (``repartition(query_id)``),
so all rows of a query meet in one partition whatever the DataFrames' own
partitioning, and each partition goes to the Rust kernels as Arrow batches
(``mapInArrow``: one call per partition, no Python object per row) inside the
executors, which need irmetrics installed (the same wheel). The driver collects one
row of values per query and ``Evaluator.combine`` computes the ``all`` row from them
as a local evaluation does (rows in query-id order, sums divided once; trec_eval's
rules for ``complete``), so the numbers equal ``irmetrics.evaluate`` on the same data
bit for bit, for any partitioning. ``fuse`` fuses runs the same way, and ``online``
computes the online metrics of a search log (``irmetrics.online.evaluate``) with
sessions grouped by ``session_id``. How the work partitions and what it costs:
docs/spark.md.

Needs pyspark >= 3.5 (``pip install 'irmetrics[spark]'``); ``method="cogroup"``
(``groupBy().cogroup().applyInArrow``) needs pyspark 4.0 and falls back to
``applyInPandas`` before it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import _core
from ._core import Error, Evaluator, InputError, MissingQueryError, Qrels, Run

__all__ = ["METHODS", "compare", "evaluate", "fuse", "online"]

#: The column names looked for, in order, as the other routes look for them
#: (``Qrels.from_dataframe`` / ``Run.from_dataframe``).
QUERY_COLUMNS = tuple(_core.QUERY_COLUMNS)
DOC_COLUMNS = tuple(_core.DOC_COLUMNS)
LABEL_COLUMNS = tuple(_core.LABEL_COLUMNS)
SCORE_COLUMNS = tuple(_core.SCORE_COLUMNS)

#: The marker of the error raised in an executor that cannot import irmetrics.
_NO_IRMETRICS = "irmetrics.spark: the Spark executors cannot import irmetrics"


def _require_pyspark() -> Any:
    _core._require("pyspark", "irmetrics.spark", "'irmetrics[spark]'")
    import pyspark

    major, minor = (int(x) for x in pyspark.__version__.split(".")[:2])
    if (major, minor) < (3, 5):
        raise _core.MissingDependencyError(
            f"irmetrics.spark needs pyspark >= 3.5, found {pyspark.__version__}; "
            "pip install 'irmetrics[spark]'"
        )
    return pyspark


def _find(df: Any, side: str, given: str | None, candidates: tuple[str, ...], what: str) -> str:
    names = list(df.columns)
    if given is not None:
        pick = given if given in names else None
    else:
        pick = next((c for c in candidates if c in names), None)
    if pick is None:
        looked = repr(given) if given is not None else str(list(candidates))
        raise InputError(
            f"{side}: no {what} column: looked for {looked} among the columns "
            f"{names}; name it explicitly"
        )
    if names.count(pick) > 1:
        raise InputError(
            f"{side}: the DataFrame has {names.count(pick)} columns named '{pick}' "
            f"(the {what} column); rename or drop the duplicates"
        )
    return pick


def _check_type(df: Any, side: str, name: str, what: str, allowed: tuple[str, ...]) -> None:
    from pyspark.sql import types as T

    ty = df.schema[name].dataType
    kinds = {
        "id": (T.StringType, T.BinaryType, T.ByteType, T.ShortType, T.IntegerType, T.LongType),
        "integer": (T.ByteType, T.ShortType, T.IntegerType, T.LongType),
        "float": (T.FloatType, T.DoubleType),
    }
    ok = tuple(t for a in allowed for t in kinds[a])
    if not isinstance(ty, ok):
        words = {
            "id": "string, binary or integer",
            "integer": "integer",
            "float": "float or double",
        }
        raise InputError(
            f"{side}: the {what} column '{name}' has Spark type {ty.simpleString()}; "
            f"{what} columns must be {' or '.join(words[a] for a in allowed)} columns"
        )


def _columns(
    df: Any,
    side: str,
    given: tuple[str | None, str | None, str | None],
    values: tuple[str, ...],
) -> tuple[Any, list[str]]:
    """``df``'s query id, document id and value columns, named as the Arrow route
    names them (query_id, doc_id, relevance or score), and their names in ``df``."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    if not isinstance(df, DataFrame):
        raise InputError(f"{side}: expected a Spark DataFrame, got {type(df).__name__}")
    value = "label" if side == "qrels" else "score"
    q = _find(df, side, given[0], QUERY_COLUMNS, "query id")
    d = _find(df, side, given[1], DOC_COLUMNS, "document id")
    v = _find(df, side, given[2], values, value)
    _check_type(df, side, q, "query id", ("id",))
    _check_type(df, side, d, "document id", ("id",))
    _check_type(df, side, v, value, ("integer", "float"))
    # query ids as strings on both sides: the co-grouping key needs one type, and the
    # Arrow route writes integer ids as their decimal text
    out = df.select(
        F.col(q).cast("string").alias("query_id"),
        F.col(d).alias("doc_id"),
        F.col(v).alias("relevance" if side == "qrels" else "score"),
    )
    return out, [q, d, v]


def _worker_function(spec: dict[str, Any], partitions: bool) -> Any:
    """What each task runs in an executor: made here and pickled by value, so that an
    executor without irmetrics fails with a message saying so (a function of this
    module is pickled by reference, and would fail to unpickle there)."""
    missing = _NO_IRMETRICS

    def worker() -> Any:
        try:
            from irmetrics import _spark_worker
        except ImportError as e:
            raise ImportError(
                f"{missing} ({e}); install irmetrics (the driver's version) on every "
                "executor, e.g. in the cluster's Python environment or with spark.archives"
            ) from e
        return _spark_worker

    if partitions:

        def evaluate_partition(batches: Any) -> Any:
            return worker().evaluate_partition(batches, spec)

        return evaluate_partition

    def evaluate_group(qrels: Any, run: Any) -> Any:
        return worker().evaluate_group(qrels, run, spec)

    return evaluate_group


def _partition_function(name: str, spec: dict[str, Any]) -> Any:
    """A task's function over one partition's Arrow batches: ``_spark_worker.<name>``
    with ``spec`` (pickled by value, as ``_worker_function``'s)."""
    missing = _NO_IRMETRICS

    def run(batches: Any) -> Any:
        try:
            from irmetrics import _spark_worker
        except ImportError as e:
            raise ImportError(
                f"{missing} ({e}); install irmetrics (the driver's version) on every executor"
            ) from e
        return getattr(_spark_worker, name)(batches, spec)

    return run


#: How the two sides meet: "partition" (the default: both sides in one DataFrame,
#: repartitioned by query, each partition evaluated by one call), "cogroup"
#: (``cogroup(...).applyInArrow``: one call per query) and "cogroup-pandas"
#: (``applyInPandas``, the route of pyspark < 4.0).
METHODS = ("partition", "cogroup", "cogroup-pandas")


def _parts(qrels: Any, run: Any, spec: dict[str, Any], method: str) -> Any:
    """One row per judged query (``_spark_worker.SCHEMA``); all rows of a query meet
    in one task whatever the DataFrames' own partitioning (a shuffle by query id)."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from . import _spark_worker

    schema = from_arrow_schema(_spark_worker.SCHEMA)

    if method == "partition":
        q_doc, r_doc = qrels.schema["doc_id"].dataType, run.schema["doc_id"].dataType
        if q_doc != r_doc:  # one column for both: ids as text, as the Arrow route reads them
            qrels = qrels.withColumn("doc_id", F.col("doc_id").cast("string"))
            run = run.withColumn("doc_id", F.col("doc_id").cast("string"))
        both = qrels.withColumn("in_qrels", F.lit(True)).unionByName(
            run.withColumn("in_qrels", F.lit(False)), allowMissingColumns=True
        )
        func = _worker_function(spec, partitions=True)
        return both.repartition("query_id").mapInArrow(func, schema=schema)
    grouped = qrels.groupBy("query_id").cogroup(run.groupBy("query_id"))
    func = _worker_function(spec, partitions=False)
    if method == "cogroup" and hasattr(grouped, "applyInArrow"):
        return grouped.applyInArrow(func, schema=schema)

    def via_pandas(q: Any, r: Any) -> Any:
        import pyarrow as pa

        out = func(pa.Table.from_pandas(q), pa.Table.from_pandas(r)).to_pandas()
        # plain Python columns: pyspark's pandas route takes neither numpy arrays in a
        # list column nor (pyspark 4.3 with pandas 3) Arrow-backed strings
        out["v"] = out["v"].map(list)
        return out.astype({"query_id": object, "error_kind": object, "error": object})

    return grouped.applyInPandas(via_pandas, schema=schema)


def _executor_error(e: Exception) -> Exception | None:
    """The irmetrics error for an error that came from the executors, if one is."""
    text = str(e)
    found = re.search(r"irmetrics\.spark\[(\w+)\]: (.*)", text)
    if found and isinstance(getattr(_core, found[1], None), type):
        return getattr(_core, found[1])(found[2])
    if _NO_IRMETRICS in text:
        line = next(x for x in text.splitlines() if _NO_IRMETRICS in x)
        return _core.MissingDependencyError(line[line.index(_NO_IRMETRICS) :])
    return None


#: Judgments for the driver's Evaluator: it checks the measures and options and puts
#: the executors' values together (``combine``); it evaluates nothing.
_ONE_JUDGMENT = {"q": {"d": 1}}


def _evaluated(
    qrels_df: Any,
    run_df: Any,
    measures: _core._Measures,
    options: dict[str, Any],
    columns: dict[str, str | None],
    method: str,
) -> tuple[Any, Evaluator]:
    """The values of every judged query (a DataFrame of ``_spark_worker.SCHEMA``, not
    computed yet) and the driver's Evaluator; bad input found so far raised."""
    _require_pyspark()
    from pyspark.sql import functions as F

    options = dict(options)
    options.pop("n_threads", None)  # each Spark task is one core
    # measures and options checked before any job
    driver = Evaluator(Qrels.from_dict(_ONE_JUDGMENT), measures, **options)
    q, q_shown = _columns(
        qrels_df, "qrels", (columns["query"], columns["doc"], columns["label"]), LABEL_COLUMNS
    )
    r, r_shown = _columns(
        run_df, "run", (columns["query"], columns["doc"], columns["score"]), SCORE_COLUMNS
    )
    # the whole qrels' largest label (ERR's default maximum grade), as one evaluation
    # takes it; only for the measures that use it (a pass over the qrels)
    max_label = None
    if any(c.startswith(("err_cut", "nerr_cut")) for c in driver.columns()):
        top = q.agg(F.max(F.when(F.col("relevance") >= 0, F.col("relevance")))).first()[0]
        max_label = None if top is None else int(top)
    spec = {
        "measures": _core._measure_names(measures),
        # every judged query is evaluated; the driver applies trec_eval's rules for the
        # ones the run lacks
        "options": {**options, "complete": True, "n_threads": 1},
        "max_label": max_label,
        "qrels_columns": q_shown,
        "run_columns": r_shown,
    }
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, not {method!r}")
    return _parts(q, r, spec, method), driver


def _on_executors(job: Any) -> Any:
    """``job()``, with an executor's missing irmetrics said as an irmetrics error."""
    try:
        return job()
    except Exception as e:  # the executors' errors come wrapped by Spark
        mapped = _executor_error(e)
        if mapped is not None:
            raise mapped from e
        raise


def _check(first_error: Any, matched: int, first_missing: str | None, complete: bool) -> None:
    """The errors of a local evaluation, raised on the driver: the first group's
    (in query-id order), then trec_eval's rules for judged queries the run lacks."""
    if first_error is not None:
        _qid, kind, message = first_error
        raise getattr(_core, kind, Error)(message)
    if complete:
        return
    if not matched:
        raise InputError(
            "no query of the run is judged in the qrels; are the DataFrames swapped or "
            "from different collections?"
        )
    if first_missing is not None:
        raise MissingQueryError(
            f"query '{first_missing}' is judged in the qrels but has no results in the run; "
            "pass -c (complete=True) to score it as an empty ranking, or remove it from the "
            "qrels"
        )


def evaluate(
    qrels_df: Any,
    run_df: Any,
    measures: _core._Measures,
    per_query: bool = False,
    *,
    query: str | None = None,
    doc: str | None = None,
    label: str | None = None,
    score: str | None = None,
    method: str = "partition",
    **options: Any,
) -> Any:
    """Evaluate a run held in a Spark DataFrame against qrels held in another.

    Columns are found by name as in ``Qrels.from_dataframe`` / ``Run.from_dataframe``
    (query ``q_id``/``query_id``/``qid``/..., document ``doc_id``/``docno``/``docid``/...,
    label ``relevance``/``label``/``rel``/..., score ``score``/``similarity``: the
    names of ``_core.QUERY_COLUMNS`` and its siblings), or named with
    ``query=``, ``doc=``, ``label=`` and ``score=``. ``measures`` and the options
    (``complete``, ``relevance_level``, ``max_docs``, ``judged_only``,
    ``num_docs_in_collection``, ``names``) are those of ``irmetrics.evaluate``
    (``n_threads`` is ignored: each Spark task evaluates on its own core).

    Returns the dict ``irmetrics.evaluate`` returns on the same data (the ``all``
    row, identical to the last bit), or with ``per_query=True`` a Spark DataFrame with
    a ``query_id`` column and one double column per value (the columns of
    ``irmetrics.evaluate(..., output="arrow")``; rows in no particular order).
    ``method`` picks how the two sides meet (``METHODS``): ``"partition"`` (both in
    one DataFrame repartitioned by query id, one Rust call per partition: the fast
    one), ``"cogroup"`` (``groupBy().cogroup().applyInArrow``, one call per query) or
    ``"cogroup-pandas"`` (``applyInPandas``).
    """
    columns = {"query": query, "doc": doc, "label": label, "score": score}
    parts, driver = _evaluated(qrels_df, run_df, measures, options, columns, method)
    from pyspark.sql import functions as F

    complete = bool(options.get("complete"))
    all_columns = driver.columns()
    if per_query:
        parts = _on_executors(lambda: parts.localCheckpoint(eager=True))
        # Spark orders strings by their UTF-8 bytes, as the qrels order query ids
        error, matched, missing = parts.agg(
            F.min(F.when(F.col("error").isNotNull(), F.struct("query_id", "error_kind", "error"))),
            F.count(F.when(F.col("in_run"), 1)),
            F.min(F.when(~F.col("in_run"), F.col("query_id"))),
        ).first()
        _check(error, matched, missing, complete)
        return parts.select(
            "query_id",
            *[F.col("v")[all_columns.index(c)].alias(c) for c in _per_query_columns(driver)],
        )
    return _combined(parts, driver, complete, per_query=False)


def _combined(parts: Any, driver: Evaluator, complete: bool, per_query: bool) -> Any:
    """The groups' rows collected, checked as one evaluation checks them, and put
    together by ``driver.combine``: the dict ``Evaluator.evaluate`` returns."""
    import numpy as np
    import pyarrow.compute as pc

    table = _on_executors(lambda: _collect(parts))

    def first(mask: Any, *names: str) -> Any:
        rows = table.filter(mask).select(list(names)).to_pylist()
        if not rows:
            return None
        row = min(rows, key=lambda r: (r["query_id"] or "").encode("utf-8", "surrogateescape"))
        return tuple(row[n] for n in names) if len(names) > 1 else row[names[0]]

    in_run = table.column("in_run")
    _check(
        first(pc.is_valid(table.column("error")), "query_id", "error_kind", "error"),
        pc.sum(in_run.cast("int64")).as_py() or 0,
        first(pc.invert(in_run), "query_id"),
        complete,
    )
    ids = table.column("query_id").to_pylist()
    flat = table.column("v").combine_chunks().flatten().to_numpy()
    width = len(driver.columns())
    values = np.ascontiguousarray(flat, dtype=np.float64).reshape(len(ids), width)
    num_rel_1 = int(np.asarray(table.column("num_rel_1"), dtype=np.int64).sum())
    return driver.combine(ids, values, num_rel_1, per_query=per_query)


def _collect(df: Any) -> Any:
    """A DataFrame's rows on the driver, as a pyarrow Table."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    # pyspark < 4.0: the Arrow batches its toPandas collects (through pandas, NaN and
    # null would become one, and empty or all-null columns lose their types)
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    batches = df._collect_as_arrow()
    if batches:
        return pa.Table.from_batches(batches)
    return pa.Table.from_batches([], schema=to_arrow_schema(df.schema))


def _per_query_columns(driver: Evaluator) -> list[str]:
    """The columns with per-query values, as ``output="arrow"`` gives them."""
    tiny = Run.from_dict({"q": {"d": 1.0}})
    return list(driver.evaluate_table(tiny)[1])


def fuse(
    runs: list[Any],
    method: str = "rrf",
    norm: str | None = None,
    params: dict[str, Any] | None = None,
    *,
    query: str | None = None,
    doc: str | None = None,
    score: str | None = None,
) -> Any:
    """Fuse runs held in Spark DataFrames as ``irmetrics.fuse`` fuses them: the runs
    are shuffled by query id into one DataFrame and each partition fused by the Rust
    kernels (methods and normalizations act query by query). Returns a Spark DataFrame
    ``query_id, doc_id, score`` (ids as strings) with the rows ``irmetrics.fuse(...)
    .to_arrow()`` gives, in no particular order; computed before it is returned, so
    that bad input is an irmetrics error here. Methods learnt from qrels (probfuse,
    ...) are not taken: they learn from every query at once.
    """
    _require_pyspark()
    from pyspark.sql import functions as F

    runs = list(runs)
    if len(runs) < 2:
        raise InputError(f"fusion needs at least 2 runs, got {len(runs)}")
    # the method, normalization and parameters checked on the driver, before any job
    tiny = Run.from_dict({"q": {"d": 1.0, "e": 0.5}})
    _core.fuse([tiny] * len(runs), method, norm, params)
    both = None
    for i, df in enumerate(runs):
        r, _shown = _columns(df, f"run {i + 1}", (query, doc, score), SCORE_COLUMNS)
        r = r.withColumn("doc_id", F.col("doc_id").cast("string")).withColumn("run", F.lit(i))
        both = r if both is None else both.unionByName(r)
    spec = {"runs": len(runs), "method": method, "norm": norm, "params": params}
    fuse_partition = _partition_function("fuse_partition", spec)

    schema = "query_id string, doc_id string, score double"
    assert both is not None
    fused = both.repartition("query_id").mapInArrow(fuse_partition, schema=schema)
    return _on_executors(lambda: fused.localCheckpoint(eager=True))


def compare(
    qrels_df: Any,
    runs: dict[str, Any],
    measures: _core._Measures,
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    baseline: str | None = None,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int = 42,
    complete: bool = False,
    query: str | None = None,
    doc: str | None = None,
    label: str | None = None,
    score: str | None = None,
    **evaluate_options: Any,
) -> Any:
    """``irmetrics.compare`` for runs held in Spark DataFrames (``{name: run_df}``):
    each run's per-query values are computed in the executors (as ``evaluate``), the
    tests on the driver (``irmetrics.compare_values``); the same Report as a local
    ``irmetrics.compare``."""
    from .report import _how, compare_values

    # the test's options and the runs checked before any job runs
    how = _how(locals())
    _core.check_compare_options(how)
    if not isinstance(runs, Mapping) or not runs:
        shown = repr(runs).splitlines()[0][:80]
        raise InputError(f"runs must be a dict {{name: run DataFrame}}, got {shown}")
    columns = {"query": query, "doc": doc, "label": label, "score": score}
    per_system: dict[str, dict[str, list[float]]] = {}
    ids: list[str] | None = None
    options = {**evaluate_options, "complete": complete}
    for name, run_df in runs.items():
        parts, driver = _evaluated(qrels_df, run_df, measures, options, columns, "partition")
        values = _combined(parts, driver, complete, per_query=True)
        for measure, by_query in values.items():
            if ids is None:
                ids = sorted(by_query, key=lambda q: q.encode("utf-8", "surrogateescape"))
            per_system.setdefault(measure, {})[name] = [float(by_query[q]) for q in ids]
    return compare_values(per_system, query_ids=ids, **how)


def online(
    log_df: Any,
    metrics: Any = None,
    dwell_threshold: float = 30.0,
    by: str | None = None,
    *,
    baseline: str | None = None,
    n_resamples: int = 1000,
    seed: int = 42,
    confidence: float = 0.95,
    output: str = "dict",
    columns: dict[str, str] | None = None,
    success_events: Any = ("copy", "purchase"),
    dwell_cap: float = 1800.0,
    time_unit: str = "auto",
) -> Any:
    """``irmetrics.online.evaluate`` for a search log held in a Spark DataFrame (its
    columns found by name as there, or mapped with ``columns={field: name}``), with
    the same arguments and answer.

    The rows are numbered in the DataFrame's order (``monotonically_increasing_id``),
    shuffled by session id so that each session's events meet in one partition whatever
    the DataFrame's own partitioning, and each partition read by the Rust kernels as
    Arrow batches (``mapInArrow``; events in row order, as a local read takes them),
    which give one row per session: its numerators and denominators (the metrics are
    ratios of sums over sessions) and its times to first click. The driver collects
    these rows (a few numbers per session: memory in proportion to the sessions, not
    the events), puts the sessions in the order of their first row, as a local log
    numbers them, and sums them in that order, so that every value (click_mrr's sum of
    reciprocal ranks included) and the medians of time_to_first_click (from every
    clicked SERP's time) equal ``irmetrics.online.evaluate(log_df.toArrow())`` to the
    last bit. With ``by="variant"`` the bootstrap intervals and p-values are computed
    on the driver from the same per-session rows, as locally. A DataFrame whose row
    order is not fixed (the output of a shuffle, not checkpointed) may number its rows
    differently from one job to the next: the sums that are counts do not depend on the
    order of the sessions, click_mrr and the bootstrap may then differ in the last bits
    (and events tied in time within a session are taken in row order, here as locally).
    """
    _require_pyspark()
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    from . import _spark_worker
    from . import online as local

    if not isinstance(log_df, DataFrame):
        raise InputError(f"log: expected a Spark DataFrame, got {type(log_df).__name__}")
    if by not in (None, "variant"):
        raise InputError(f"by must be None or 'variant', got {by!r}")
    if output not in ("dict", "pandas"):
        raise InputError(f"output must be 'dict' or 'pandas', got {output!r}")
    if isinstance(success_events, str):
        raise InputError("success_events must be a list of event types, not one str")
    if isinstance(metrics, str):
        metrics = [metrics]
    mapping = local._columns(columns)
    # the log's columns, read by the same code as a local log's (an empty batch of the
    # DataFrame's schema): missing columns, wrong types and metrics refused before any job
    fields = {f: mapping.get(f, f) for f in local.FIELDS if f != "doc_id"}
    kept = [c for c in dict.fromkeys(fields.values()) if c in log_df.columns]
    log_df = log_df.select(*kept)
    try:
        try:  # the Arrow types the executors get (pyspark >= 4.0 asks for the zone)
            schema = to_arrow_schema(log_df.schema, timezone="UTC")
        except TypeError:
            schema = to_arrow_schema(log_df.schema)
    except Exception as e:  # a Spark type with no Arrow type (maps, intervals, ...)
        raise InputError(f"log: a column's Spark type cannot be read: {e}") from None
    read: dict[str, Any] = {
        "columns": mapping,
        "success_events": list(success_events),
        "dwell_cap": dwell_cap,
        "time_unit": time_unit,
    }
    empty = local.read_log(_pa_empty(schema), **read)
    names, _, _ = _core.online_evaluate(
        empty, list(metrics) if metrics is not None else None, dwell_threshold=dwell_threshold
    )
    if by is not None and not empty.has("variant"):
        raise InputError(
            f"grouping by variant needs the log's 'variant' column ('{fields['variant']}'), "
            "which the DataFrame lacks"
        )
    spec = {
        **read,
        "metrics": names,
        "dwell_threshold": dwell_threshold,
        "fields": fields,
    }
    online_partition = _partition_function("online_partition", spec)
    row = _spark_worker.ROW
    parts = (
        log_df.withColumn(row, F.monotonically_increasing_id())
        .repartition(F.col(fields["session_id"]))
        .mapInArrow(online_partition, schema=from_arrow_schema(_spark_worker.ONLINE_SCHEMA))
    )
    table = _on_executors(lambda: _collect(parts)).sort_by("first")
    combined = _online_combined(table, names, by, baseline, n_resamples, seed, confidence)
    return local._result(*combined, by, output)


def _pa_empty(schema: Any) -> Any:
    """An Arrow table of ``schema`` with one empty batch (whose columns' types are read)."""
    import pyarrow as pa

    return pa.Table.from_batches([pa.RecordBatch.from_pylist([], schema=schema)])


def _online_combined(
    table: Any,
    names: list[str],
    by: str | None,
    baseline: str | None,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> tuple[list[str], list, list]:
    """The metrics of the executors' per-session rows, in the order of their first row."""
    import numpy as np
    import pyarrow.compute as pc

    errors = table.filter(pc.is_valid(table.column("error")))
    if errors.num_rows:  # the first in the log's row order
        kind, message = errors.column("error_kind")[0].as_py(), errors.column("error")[0].as_py()
        raise getattr(_core, kind, Error)(message)
    styles = pc.unique(pc.drop_null(table.column("time_style"))).to_pylist()
    if len(styles) > 1:  # a local read refuses the mix at its first differing event
        raise InputError(
            f"log: timestamps written two ways: {' in some sessions, '.join(sorted(styles))} "
            "in others; write them one way (or give the unit of numbers: time_unit)"
        )
    width = len(names)
    num = table.column("num").combine_chunks()
    if len(num.flatten()) != table.num_rows * width:
        raise Error("irmetrics.spark.online: the executors gave rows of another width")
    variant = table.column("variant").combine_chunks()
    if by is not None and variant.null_count:
        sid = table.column("session_id").filter(pc.is_null(variant))[0].as_py()
        raise InputError(f"log: session '{sid}' has no variant (grouping by variant needs one)")
    coded = variant.dictionary_encode()
    codes = np.asarray(coded.indices.fill_null(0), dtype=np.uint32)
    codes[np.asarray(coded.indices.is_null())] = np.iinfo(np.uint32).max
    ttfc = table.column("ttfc").combine_chunks()
    lengths = np.asarray(pc.list_value_length(ttfc).fill_null(0), dtype=np.uint64)
    ends = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint64)

    def flat(col: Any) -> Any:
        return np.ascontiguousarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)

    return _core.online_combine(
        names,
        None,
        np.ascontiguousarray(codes),
        [str(v) for v in coded.dictionary.to_pylist()],
        flat(num),
        flat(table.column("den").combine_chunks()),
        flat(ttfc),
        ends,
        by_variant=by is not None,
        baseline=baseline,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        source="log",
    )
