"""Online metrics from search logs: abandonment, click-through, success, zero results,
time to first click and click MRR, per A/B variant with bootstrap intervals; the top
queries; queries per time bucket with latency percentiles and spikes.

A log is a file (JSON Lines or CSV, optionally ``.gz``), Arrow data (a pyarrow Table or
RecordBatchReader, a polars DataFrame, a DuckDB result: anything exporting the Arrow
PyCapsule interface, read in Rust without a Python object per row), a pandas
DataFrame, a dict of columns, or an :class:`OnlineLog` read once with
:func:`read_log`. Its events have
``session_id``, ``timestamp`` (numbers in s/ms/us/ns, told by size, or ISO 8601 text,
or datetimes), ``type`` (``query``: a SERP shown; ``click``; or a success event,
``copy`` and ``purchase`` by default) and optionally ``query``, ``n_results``,
``position``, ``doc_id``, ``dwell`` (seconds), ``latency_ms`` and ``variant``;
``columns={field: your_name}`` maps other column names. The definitions are in the
README ("Online metrics from search logs").
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import InputError, OnlineLog
from ._frames import is_lazy_frame as _is_lazy_frame

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where frames, lists or dicts of columns come in, or arrays go out:
# a log read from a file or Arrow data needs none, and importing it (with OpenBLAS,
# whose threads spin for a while after they start) took 0.08 s of wall and 0.1 s of
# CPU from `import irmetrics.online`, overlapping the read on a 2-core machine.

__all__ = [
    "FIELDS",
    "OnlineLog",
    "ctr_by_position",
    "ctr_by_query",
    "evaluate",
    "queries_per",
    "read_log",
    "top_queries",
]

FIELDS = tuple(_core.ONLINE_FIELDS)  # the engine's, in its order
_TEXT = ("session_id", "type", "query", "variant")
_NUMBERS = ("n_results", "position", "dwell", "latency_ms")


def _codes(values: Any, name: str) -> tuple[np.ndarray, list[str]]:
    """Codes into the distinct texts (-1: missing), as ``pandas.factorize`` gives."""
    import numpy as np

    if isinstance(values, (list, tuple)):
        values = np.asarray(values, dtype=object)
    try:
        import pandas as pd

        if hasattr(values, "to_numpy") and pd.api.types.is_string_dtype(values.dtype):
            values = values.to_numpy(dtype=object)  # factorized faster than pandas' str
        try:
            codes, uniques = pd.factorize(values)
        except TypeError:  # an unhashable value (a list, a dict): named here
            for v in values:
                try:
                    hash(v)
                except TypeError:
                    raise _not_text(v, name) from None
            raise
        texts = [u if type(u) is str else _text(u, name) for u in uniques.tolist()]
        return np.asarray(codes, dtype=np.int64), texts
    except ImportError:
        seen: dict[Any, int] = {}
        out = np.empty(len(values), dtype=np.int64)
        for i, v in enumerate(values):
            if v is None or (isinstance(v, float) and v != v):
                out[i] = -1
            else:
                out[i] = seen.setdefault(_text(v, name), len(seen))
        return out, list(seen)


def _not_text(v: Any, name: str) -> InputError:
    shown = repr(v).splitlines()[0][:80]
    return InputError(f"column '{name}' must hold text or numbers, got {type(v).__name__} {shown}")


def _text(v: Any, name: str) -> str:
    """A value of a text column as text: numbers (ids) as their decimal text, UTF-8
    bytes decoded, other objects (datetimes, UUIDs, bools) as ``str`` gives them;
    containers (a list, a tuple, a dict), whose ``str`` is their repr, and bytes that
    are not UTF-8 are refused."""
    if isinstance(v, (bytes, bytearray)):
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                f"column '{name}' holds bytes that are not UTF-8 text: {bytes(v)[:40]!r}"
            ) from None
    if isinstance(v, (list, tuple, dict, set, frozenset)):
        raise _not_text(v, name)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _numbers(values: Any, name: str) -> np.ndarray:
    import numpy as np

    try:
        if hasattr(values, "to_numpy"):
            return np.ascontiguousarray(values.to_numpy(dtype=np.float64, na_value=np.nan))
        arr = np.asarray(values)
        if arr.dtype == object:
            arr = np.array([np.nan if v is None else v for v in arr], dtype=np.float64)
        return np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"column '{name}' must hold numbers: {e}") from None


def _times(values: Any, name: str) -> Any:
    import numpy as np

    dtype = getattr(values, "dtype", None)
    if dtype is not None and getattr(dtype, "tz", None) is not None:
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        dtype = values.dtype
    arr = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    if np.issubdtype(arr.dtype, np.datetime64):
        ns = arr.astype("datetime64[ns]")
        secs = ns.astype(np.int64) / 1e9
        secs[np.isnat(ns)] = np.nan
        return np.ascontiguousarray(secs, dtype=np.float64)
    if np.issubdtype(arr.dtype, np.number):
        return _numbers(arr, name)
    return _codes(values, name)


def _is_arrow(data: Any) -> bool:
    """Arrow data other than a pandas DataFrame (which exports it since pandas 2.2 but
    keeps its own route, reading its columns in place)."""
    module = type(data).__module__
    if module == "pandas" or module.startswith("pandas."):
        return False
    if _is_lazy_frame(data):
        return True  # collected by the extension, then read as the DataFrame it gives
    return hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__")


def _columns(columns: Any) -> dict[str, str]:
    """``columns={field: your_name}``, checked to be such a mapping."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in columns.items()
    ):
        shown = repr(columns).splitlines()[0][:80]
        raise InputError(f"columns must map log fields to column names (str: str), got {shown}")
    return dict(columns)


def read_log(
    log: Any,
    *,
    columns: Mapping[str, str] | None = None,
    format: str = "auto",
    success_events: Sequence[str] = ("copy", "purchase"),
    dwell_cap: float = 1800.0,
    time_unit: str = "auto",
) -> OnlineLog:
    """Read a log once: a file path, Arrow data (pyarrow, polars, DuckDB, ...), a
    pandas DataFrame, a dict of columns (or an :class:`OnlineLog`, returned as is).
    Sessions are sorted by time, dwell derived (the time to the next event of the
    session, at most ``dwell_cap`` seconds; a session's last click gets the cap), every
    event checked; unknown event types are ignored and counted (``log.ignored``)."""
    if isinstance(log, OnlineLog):
        return log
    events = _events(success_events)
    if isinstance(log, (str, os.PathLike)):
        return _core.online_read(
            os.fspath(log),
            format=format,
            columns=_columns(columns),
            success_events=events,
            dwell_cap=dwell_cap,
            time_unit=time_unit,
        )
    if _is_arrow(log):
        return _core.online_from_arrow(
            log,
            columns=_columns(columns),
            success_events=events,
            dwell_cap=dwell_cap,
            time_unit=time_unit,
        )
    if not (isinstance(log, Mapping) or hasattr(log, "columns")):
        raise InputError(
            "a log is a file path, a DataFrame, a dict of columns or an OnlineLog, "
            f"not {type(log).__name__}"
        )
    mapping = _columns(columns)
    unknown = sorted(set(mapping) - set(FIELDS))
    if unknown:
        raise InputError(f"unknown log field(s) {unknown}; the fields are {', '.join(FIELDS)}")
    present = set(log.columns if hasattr(log, "columns") else log.keys())
    cols: dict[str, Any] = {}
    for field in FIELDS:
        name = mapping.get(field, field)
        if field == "doc_id" or name not in present:
            continue
        values = log[name]
        if field == "timestamp":
            cols[field] = _times(values, name)
        elif field in _TEXT:
            cols[field] = _codes(values, name)
        else:
            cols[field] = _numbers(values, name)
    missing = [f for f in ("session_id", "timestamp", "type") if f not in cols]
    if missing:
        named = ", ".join(f"'{mapping.get(f, f)}' ({f})" for f in missing)
        raise InputError(f"the log has no column {named}; map yours with columns={{field: name}}")
    return _core.online_from_columns(
        cols, success_events=events, dwell_cap=dwell_cap, time_unit=time_unit
    )


def _events(success_events: Sequence[str]) -> list[str]:
    if isinstance(success_events, str):
        raise InputError("success_events must be a list of event types, not one str")
    return list(success_events)


def _split(kw: dict[str, Any]) -> dict[str, Any]:
    keys = ("columns", "format", "success_events", "dwell_cap", "time_unit")
    return {k: kw.pop(k) for k in keys if k in kw}


def evaluate(
    log: Any,
    metrics: Sequence[str] | None = None,
    dwell_threshold: float = 30.0,
    by: str | None = None,
    *,
    baseline: str | None = None,
    n_resamples: int = 1000,
    seed: int = 42,
    confidence: float = 0.95,
    output: str = "dict",
    stream: bool = False,
    session_timeout: float = 1800.0,
    time_slack: float = 0.0,
    **read: Any,
) -> Any:
    """The online metrics of a log: ``{name: value}`` (``metrics=None``: every metric
    the log's columns allow; ``"ctr@k"``, ``"ctr_by_position@p"`` take cut-offs).

    ``by="variant"``: ``{"groups": {variant: {name: value}}, "comparisons": [...]}``,
    each other variant against ``baseline`` (default: the first by name): its
    ``difference``, the percentile-bootstrap interval over sessions (``ci_low``,
    ``ci_high``; ``n_resamples`` resamples of ``seed``) and the two-sided ``pvalue``.
    ``output="pandas"``: a Series, or with ``by`` a DataFrame (one row per metric).
    Other keywords (``columns``, ``success_events``, ``dwell_cap``, ``time_unit``,
    ``format``) go to :func:`read_log`.

    ``stream=True`` streams a JSON Lines or CSV file (a path) in bounded memory: the
    log must be in time order up to ``time_slack`` seconds (else an error naming the
    line), and a session ends after ``session_timeout`` seconds without an event; only
    the open sessions are held (README, "Streaming a log larger than memory"). Not with
    ``by``."""
    if by not in (None, "variant"):
        raise InputError(f"by must be None or 'variant', got {by!r}")
    if output not in ("dict", "pandas"):
        raise InputError(f"output must be 'dict' or 'pandas', got {output!r}")
    if isinstance(metrics, str):
        metrics = [metrics]
    opts = _split(read)
    if read:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(read))}")
    if stream:
        if not isinstance(log, (str, os.PathLike)):
            raise InputError(f"stream=True reads a log file (a path), not {type(log).__name__}")
        if by is not None:
            raise InputError(
                "by='variant' needs every session's numbers for its bootstrap: "
                "read the log whole (stream=False)"
            )
        names, vals, *_ = _core.online_evaluate_stream(
            os.fspath(log),
            list(metrics) if metrics is not None else None,
            dwell_threshold=dwell_threshold,
            session_timeout=session_timeout,
            time_slack=time_slack,
            format=opts.get("format", "auto"),
            columns=_columns(opts.get("columns")),
            success_events=_events(opts.get("success_events", ("copy", "purchase"))),
            dwell_cap=opts.get("dwell_cap", 1800.0),
            time_unit=opts.get("time_unit", "auto"),
        )
        streamed = dict(zip(names, vals))
        if output == "pandas":
            return _pandas().Series(streamed, name="value")
        return streamed
    lg = read_log(log, **opts)
    names, groups, comparisons = _core.online_evaluate(
        lg,
        list(metrics) if metrics is not None else None,
        dwell_threshold=dwell_threshold,
        by_variant=by is not None,
        baseline=baseline,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    return _result(names, groups, comparisons, by, output)


def _result(names: list[str], groups: list, comparisons: list, by: str | None, output: str) -> Any:
    """``evaluate``'s answer from the engine's ``(names, groups, comparisons)``."""
    if by is None:
        values = dict(zip(names, groups[0][2]))
        if output == "pandas":
            pd = _pandas()
            return pd.Series(values, name="value")
        return values
    result: dict[str, Any] = {
        "groups": {g: dict(zip(names, vals)) for g, _, vals in groups},
        "comparisons": [
            {
                "metric": m,
                "baseline": b,
                "variant": v,
                "difference": d,
                "ci_low": lo,
                "ci_high": hi,
                "pvalue": p,
            }
            for m, b, v, d, lo, hi, p in comparisons
        ],
    }
    if output == "pandas":
        pd = _pandas()
        frame = pd.DataFrame(result["groups"], index=names)
        for c in result["comparisons"]:
            arm = f"{c['variant']}-{c['baseline']}"
            for key, col in (
                ("difference", arm),
                ("ci_low", f"{arm} ci_low"),
                ("ci_high", f"{arm} ci_high"),
                ("pvalue", f"{arm} p"),
            ):
                frame.loc[c["metric"], col] = c[key]
        return frame
    return result


def _pandas() -> Any:
    _core._require("pandas", 'output="pandas"', "pandas")
    import pandas as pd

    return pd


def _seconds(t: Any) -> float:
    if isinstance(t, str):
        s = _core.online_parse_time(t)
        if s is None:
            try:
                return float(t)
            except ValueError:
                raise InputError(f"window: {t!r} is not ISO 8601 text nor seconds") from None
        return s
    if hasattr(t, "timestamp"):
        if getattr(t, "tzinfo", None) is None:
            import datetime

            t = t.replace(tzinfo=datetime.timezone.utc)
        return float(t.timestamp())
    numpy = sys.modules.get("numpy")  # a numpy datetime64 means numpy is imported
    if numpy is not None and isinstance(t, numpy.datetime64):
        return float(t.astype("datetime64[ns]").astype(numpy.int64) / 1e9)
    try:
        s = float(t)
    except (TypeError, ValueError):
        raise InputError(
            f"window: {t!r:.80} is not a time (seconds, ISO 8601 text or a datetime)"
        ) from None
    if math.isnan(s):
        raise InputError("window: NaN is not a time")
    return s


def _window(window: Any) -> tuple[float, float] | None:
    """``(start, end)`` in seconds, or None for no window."""
    if window is None:
        return None
    if isinstance(window, (str, bytes, Mapping)) or not hasattr(window, "__len__"):
        pair = None
    else:
        pair = tuple(window) if len(window) == 2 else None
    if pair is None:
        shown = repr(window).splitlines()[0][:80]
        raise InputError(f"window must be a pair (start, end), got {shown}")
    start, end = _seconds(pair[0]), _seconds(pair[1])
    if end < start:
        raise InputError(f"window ends ({pair[1]!r}) before it starts ({pair[0]!r})")
    return start, end


def top_queries(
    log: Any,
    n: int = 10,
    window: tuple[Any, Any] | None = None,
    *,
    normalize: bool = False,
    **read: Any,
) -> list[tuple[str, int, float]]:
    """The ``n`` most frequent queries (SERPs), ``[(query, count, share)]``, share of
    the SERPs in ``window`` (``(start, end)``: seconds since the epoch, ISO 8601 text
    or datetimes; start included, end not); ties by query text. ``normalize=True``
    counts queries lowercased with runs of white space as one space."""
    w = _window(window)
    return _core.online_top_queries(read_log(log, **read), n, w, normalize)


def queries_per(
    log: Any, bucket: str = "hour", *, spike_k: float = 3.0, output: str = "dict", **read: Any
) -> Any:
    """Queries (SERPs) per time bucket (``s``, ``min``, ``h``/``hour``, ``day``,
    ``month``; UTC), every bucket from the first to the last: ``{"start":
    datetime64[s] array, "count": ..., "latency_p50"/"latency_p95"/"latency_p99"
    (milliseconds, numpy's linear percentiles; only with a latency column), "spike":
    bool array, "threshold": float}``. A bucket is a spike when its count exceeds
    median + ``spike_k`` · max(1.4826 · MAD, √median) over the buckets.
    ``output="pandas"``: a DataFrame indexed by the bucket start."""
    import numpy as np

    lg = read_log(log, **read)
    t = _core.online_queries_per(lg, bucket, spike_k)
    out: dict[str, Any] = {
        "start": np.asarray(t["start"]).astype(np.int64).astype("datetime64[s]"),
        "count": t["count"],
    }
    if t["latency"] is not None:
        lat = np.asarray(t["latency"], dtype=np.float64).reshape(-1, 3)
        for i, p in enumerate((50, 95, 99)):
            out[f"latency_p{p}"] = lat[:, i]
    out["spike"] = t["spike"]
    out["threshold"] = t["threshold"]
    if output == "pandas":
        pd = _pandas()
        cols = {k: v for k, v in out.items() if k not in ("start", "threshold")}
        frame = pd.DataFrame(cols, index=pd.DatetimeIndex(out["start"], name="start"))
        frame.attrs["threshold"] = out["threshold"]
        return frame
    if output != "dict":
        raise InputError(f"output must be 'dict' or 'pandas', got {output!r}")
    return out


def ctr_by_position(log: Any, max_position: int = 10, **read: Any) -> dict[int, float]:
    """``{position: CTR}`` for positions 1 to ``max_position``: clicks at the position
    over SERPs with at least that many results."""
    if not isinstance(max_position, int) or max_position < 1:
        raise InputError(f"max_position must be a whole number >= 1, got {max_position!r}")
    names = [f"ctr_by_position@{p}" for p in range(1, max_position + 1)]
    values = evaluate(log, names, **read)
    return {p: values[n] for p, n in zip(range(1, max_position + 1), names)}


def ctr_by_query(
    log: Any, n: int | None = None, *, normalize: bool = False, **read: Any
) -> list[tuple[str, int, int, float]]:
    """CTR per query: ``[(query, serps, clicked_serps, ctr)]``, most SERPs first (ties
    by text), the first ``n`` (``None``: all); ``normalize=True`` counts queries
    lowercased with runs of white space as one space."""
    lg = read_log(log, **read)
    return _core.online_ctr_by_query(lg, n, normalize)
