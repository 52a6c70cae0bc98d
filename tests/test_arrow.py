"""Arrow data in and out (pyarrow, polars, the PyCapsule interface).

Every route must give the numbers of the TREC-file route, bit for bit, on every row of
the conformance suite's generated cases (whose expected values come from trec_eval
and are checked against the file route by test_conformance.py).
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from generated_cases import assert_rows_kept, generated_cases, plain

import irmetrics

# ---------------------------------------------------------------- the generated cases


def id_array(ids: list[str]) -> pa.Array:
    """Ids as an Arrow string column, or a binary one where an id is not UTF-8 (a
    surrogate-escaped byte in the TREC file)."""
    try:
        return pa.array(ids, pa.string())
    except (UnicodeEncodeError, pa.ArrowInvalid):
        return pa.array([i.encode("utf-8", "surrogateescape") for i in ids], pa.binary())


def columns(d: dict[str, dict[str, Any]]) -> tuple[list[str], list[str], list[Any]]:
    qs, ds, vs = [], [], []
    for q, docs in d.items():
        for doc, v in docs.items():
            qs.append(q)
            ds.append(doc)
            vs.append(v)
    return qs, ds, vs


def table(d: dict[str, dict[str, Any]], names: tuple[str, str, str]) -> pa.Table:
    qs, ds, vs = columns(d)
    return pa.table({names[0]: id_array(qs), names[1]: id_array(ds), names[2]: vs})


QRELS_NAMES = ("query_id", "doc_id", "relevance")
RUN_NAMES = ("query_id", "doc_id", "score")


def as_integers(col: pa.Array) -> pa.Array:
    """A column of decimal ids as int64 where every id is one (as read_csv gives)."""
    ids = col.to_pylist()
    if all(isinstance(i, str) and i.isdigit() and str(int(i)) == i for i in ids):
        return pa.array([int(i) for i in ids], pa.int64())
    return col


def recast(t: pa.Table, how: Callable[[pa.Array], pa.Array]) -> pa.Table:
    """The two id columns of a table changed by ``how``."""
    cols = [how(t.column(0).combine_chunks()), how(t.column(1).combine_chunks()), t.column(2)]
    return pa.table(cols, names=t.column_names)


def cast_strings(ty: pa.DataType) -> Callable[[pa.Array], pa.Array]:
    def how(col: pa.Array) -> pa.Array:
        return col.cast(ty) if pa.types.is_string(col.type) else col

    return how


class CStream:
    """Only the Arrow PyCapsule stream interface of another object."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.inner.__arrow_c_stream__(requested_schema)


class CArray:
    """Only ``__arrow_c_array__`` (one record batch as a struct array)."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self.batch = batch

    def __arrow_c_array__(self, requested_schema: object = None) -> object:
        return self.batch.__arrow_c_array__(requested_schema)


def batches(t: pa.Table, size: int) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=size))


def shuffled(t: pa.Table) -> pa.Table:
    order = list(range(t.num_rows))
    random.Random(7).shuffle(order)
    return t.take(pa.array(order))


def to_pandas(t: pa.Table) -> Any:
    """A pandas frame seen only through its Arrow capsule (pandas >= 2.2)."""
    return CStream(t.to_pandas())


#: Each route: (qrels table, run table) -> (qrels input, run input).
ROUTES: dict[str, Callable[[pa.Table, pa.Table], tuple[Any, Any]]] = {
    "pyarrow_table": lambda q, r: (q, r),
    "record_batch_reader": lambda q, r: (batches(q, 5), batches(r, 7)),
    "polars": lambda q, r: (pl.from_arrow(q), pl.from_arrow(r)),
    # collected, then read as the frame it gives (and no polars warning on the way)
    "polars_lazy": lambda q, r: (pl.from_arrow(q).lazy(), pl.from_arrow(r).lazy()),
    "large_string": lambda q, r: (
        recast(q, cast_strings(pa.large_string())),
        recast(r, cast_strings(pa.large_string())),
    ),
    "string_view": lambda q, r: (
        recast(q, cast_strings(pa.string_view())),
        recast(r, cast_strings(pa.string_view())),
    ),
    "dictionary": lambda q, r: (
        recast(q, lambda c: c.dictionary_encode()),
        recast(r, lambda c: c.dictionary_encode()),
    ),
    "integer_ids": lambda q, r: (recast(q, as_integers), recast(r, as_integers)),
    "float_labels": lambda q, r: (
        q.set_column(2, "relevance", q.column(2).cast(pa.float64())),
        r,
    ),
    "shuffled": lambda q, r: (shuffled(q), shuffled(r)),
    "c_array": lambda q, r: (
        CArray(q.combine_chunks().to_batches()[0]),
        CArray(r.combine_chunks().to_batches()[0]),
    ),
    "pandas_capsule": lambda q, r: (to_pandas(q), to_pandas(r)),
}


@pytest.fixture(scope="module")
def cases(conformance: Path) -> list:
    return generated_cases(conformance)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_arrow_route_gives_the_file_routes_numbers(cases: list, route: str) -> None:
    for name, qrels_path, run_path, measures, opts in cases:
        file_qrels = irmetrics.Qrels.from_file(qrels_path)
        file_run = irmetrics.Run.from_file(run_path)
        expected = irmetrics.Evaluator(file_qrels, measures, **opts).evaluate(
            file_run, per_query=True, keys="canonical"
        )
        expected_all = irmetrics.Evaluator(file_qrels, measures, **opts).evaluate(
            file_run, keys="canonical"
        )
        q, r = ROUTES[route](
            table(file_qrels.to_dict(), QRELS_NAMES), table(file_run.to_dict(), RUN_NAMES)
        )
        ev = irmetrics.Evaluator(q, measures, **opts)
        got = ev.evaluate(r, per_query=True, keys="canonical")
        assert plain(got) == plain(expected), (name, route)
        # the summary too (the run tag is the file's; Arrow data carries none)
        q, r = ROUTES[route](
            table(file_qrels.to_dict(), QRELS_NAMES), table(file_run.to_dict(), RUN_NAMES)
        )
        run = irmetrics.Run.from_arrow(r, name=file_run.runid)
        got_all = irmetrics.Evaluator(irmetrics.Qrels.from_arrow(q), measures, **opts).evaluate(
            run, keys="canonical"
        )
        assert plain(got_all) == plain(expected_all), (name, route)


OUT_ROUTES: dict[str, Callable[[Any], Any]] = {
    "to_arrow": lambda x: x.to_arrow(),
    "to_polars": lambda x: x.to_polars(),
    "to_pandas": lambda x: x.to_pandas(),
    "arrow_data": lambda x: x.arrow_data(),
}


@pytest.mark.parametrize("route", sorted(OUT_ROUTES))
def test_runs_and_qrels_go_out_and_back_unchanged(cases: list, route: str) -> None:
    out = OUT_ROUTES[route]
    for name, qrels_path, run_path, measures, opts in cases:
        file_qrels = irmetrics.Qrels.from_file(qrels_path)
        file_run = irmetrics.Run.from_file(run_path)
        expected = irmetrics.Evaluator(file_qrels, measures, **opts).evaluate(
            file_run, per_query=True, keys="canonical"
        )
        qrels = irmetrics.Qrels.from_dataframe(out(file_qrels))
        run = irmetrics.Run.from_dataframe(out(file_run))
        assert qrels.to_dict() == file_qrels.to_dict(), name
        assert run.to_dict() == file_run.to_dict(), name
        got = irmetrics.Evaluator(qrels, measures, **opts).evaluate(
            run, per_query=True, keys="canonical"
        )
        assert plain(got) == plain(expected), (name, route)


def test_run_rows_go_out_ranked_as_trec_eval_ranks_them(conformance: Path) -> None:
    """Rows of a query leave in trec_eval's order: score descending, ties broken by
    document id descending (byte order); queries in id order."""
    run = irmetrics.Run.from_file(conformance / "generated" / "v03_score_ties" / "run.txt")
    t = run.to_arrow()
    assert t.column_names == ["query_id", "doc_id", "score"]
    got = list(zip(*(t.column(i).to_pylist() for i in range(3))))
    expected = []
    for qid in sorted(run.to_dict(), key=lambda q: q.encode("utf-8", "surrogateescape")):
        docs = run.to_dict()[qid].items()
        ranked = sorted(docs, key=lambda d: (d[1], d[0].encode("utf-8", "surrogateescape")))
        expected += [(qid, doc, score) for doc, score in reversed(ranked)]
    assert got == expected
    assert any(a[2] == b[2] for a, b in zip(got, got[1:]))  # the case has ties


@pytest.mark.parametrize("output", ["arrow", "polars"])
def test_results_as_tables_hold_the_per_query_values(cases: list, output: str) -> None:
    for name, qrels_path, run_path, measures, opts in cases:
        expected = irmetrics.Evaluator(qrels_path, measures, **opts).evaluate(
            irmetrics.Run.from_file(run_path), per_query=True, keys="canonical"
        )
        got = irmetrics.evaluate(qrels_path, run_path, measures, output=output, **opts)
        t = got if output == "arrow" else got.to_arrow()
        assert t.column_names[0] == "query_id"
        ids = t.column(0).to_pylist()
        for col in t.column_names[1:]:
            if col not in expected:
                continue  # relstring and the like are not numbers
            values = dict(zip(ids, t.column(col).to_pylist()))
            want = {q: float(v) for q, v in expected[col].items()}
            assert plain(values) == plain(want), (name, col)
        numeric = [c for c in expected if not isinstance(next(iter(expected[c].values())), str)]
        assert set(numeric) <= set(t.column_names), name


def test_float32_scores_are_read_exactly() -> None:
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"a": 1}}
    scores = {"q1": {"a": 0.1, "b": 0.30000001, "c": 0.2}, "q2": {"a": 1.5, "z": 2.5}}
    qs, ds, vs = columns(scores)
    f32 = np.array(vs, dtype=np.float32)
    t = pa.table({"qid": qs, "docno": ds, "score": pa.array(f32)})
    exact = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in scores.items()}
    measures = ["map", "ndcg", "P.1"]
    got = irmetrics.evaluate(qrels, t, measures, per_query=True)
    assert got == irmetrics.evaluate(qrels, exact, measures, per_query=True)


def test_columns_named_explicitly() -> None:
    t = pa.table({"topic": ["1", "1"], "doc": ["a", "b"], "sim": [2.0, 1.0], "grade": [1, 0]})
    run = irmetrics.Run.from_arrow(t, query="topic", doc="doc", score="sim")
    qrels = irmetrics.Qrels.from_dataframe(
        pl.from_arrow(t), query="topic", doc="doc", label="grade"
    )
    assert run.to_dict() == {"1": {"a": 2.0, "b": 1.0}}
    assert qrels.to_dict() == {"1": {"a": 1, "b": 0}}


# ---------------------------------------------------------------- bad input


def test_a_missing_column_says_what_was_found_and_how_to_name_it() -> None:
    t = pa.table({"question": ["1"], "docno": ["a"], "score": [1.0]})
    with pytest.raises(irmetrics.InputError) as e:
        irmetrics.Run.from_arrow(t)
    msg = str(e.value)
    assert "no query id column" in msg and "'question'" in msg and "name it explicitly" in msg
    with pytest.raises(irmetrics.InputError, match="looked for 'nope'"):
        irmetrics.Run.from_arrow(t, query="nope")


def test_a_column_that_is_the_frames_index_is_named_as_such() -> None:
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    # the worked example both ways: AP = 1 with the ids as columns
    assert irmetrics.evaluate(qrels, run, "map") == {"map": 1.0}
    for q, r in [(qrels.set_index("query_id"), run), (qrels, run.set_index(["qid", "docno"]))]:
        with pytest.raises(irmetrics.InputError) as e:
            irmetrics.evaluate(q, r, "map")
        msg = str(e.value)
        assert "no query id column" in msg and "is the frame's index" in msg, msg
        assert "reset_index()" in msg
    with pytest.raises(irmetrics.InputError, match="'topic' is the frame's index"):
        irmetrics.Run.from_dataframe(
            run.rename(columns={"qid": "topic"}).set_index("topic"), query="topic"
        )
    # an index of another name is not mentioned
    with pytest.raises(irmetrics.InputError) as e:
        irmetrics.evaluate(qrels.drop(columns="query_id"), run, "map")
    assert "index" not in str(e.value)


def test_an_ambiguous_column_is_refused() -> None:
    t = pa.table([["1"], ["a"], [1.0], [2.0]], names=["qid", "docno", "score", "score"])
    with pytest.raises(irmetrics.InputError, match="2 columns named 'score'"):
        irmetrics.evaluate({"1": {"a": 1}}, t, "map")


@pytest.mark.parametrize("column", ["qid", "docno", "score"])
def test_a_null_names_its_row_and_column(column: str) -> None:
    data: dict[str, list[Any]] = {"qid": ["1", "1", "2"], "docno": ["a", "b", "c"]}
    data["score"] = [1.0, 2.0, 3.0]
    data[column][2] = None
    # two batches: the row is counted over the whole table
    t = pa.Table.from_batches(pa.table(data).to_batches(max_chunksize=2))
    assert t.num_rows == 3 and len(t.to_batches()) == 2
    with pytest.raises(irmetrics.FormatError) as e:
        irmetrics.Run.from_arrow(t)
    msg = str(e.value)
    assert msg.startswith("run, row 2: ") and f"'{column}' holds a null" in msg, msg


def test_a_null_in_polars_is_refused_too() -> None:
    df = pl.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "relevance": [1, 0]})
    with pytest.raises(irmetrics.FormatError, match=r"qrels, row 1: .*'qid' holds a null"):
        irmetrics.Qrels.from_dataframe(df)


def test_a_polars_column_of_only_nulls_is_named() -> None:
    # polars types it Null; arrow-rs refuses the buffer polars exports for it, and the
    # error names the column instead of the C data interface's complaint alone
    df = pl.DataFrame({"qid": ["1"], "docno": pl.Series([None]), "relevance": [1]})
    assert df.schema["docno"] == pl.Null
    with pytest.raises(irmetrics.Error, match=r"'docno'"):
        irmetrics.Qrels.from_dataframe(df)


@pytest.mark.parametrize(
    ("column", "values", "works"),
    [
        ("score", pa.array([True]), "float64, float32, decimal128 or integer"),
        ("score", pa.array(["1.0"]), "float64, float32, decimal128 or integer"),
        ("qid", pa.array([1.5]), "string, large_string, string_view"),
        ("docno", pa.array([[1]]), "string, large_string, string_view"),
    ],
)
def test_an_unsupported_type_says_which_types_work(
    column: str, values: pa.Array, works: str
) -> None:
    data = {"qid": pa.array(["1"]), "docno": pa.array(["a"]), "score": pa.array([1.0])}
    data[column] = values
    with pytest.raises(irmetrics.InputError) as e:
        irmetrics.Run.from_arrow(pa.table(data))
    assert f"'{column}'" in str(e.value) and works in str(e.value)
    assert "polars Object" not in str(e.value)


@pytest.mark.parametrize("column", ["query_id", "doc_id", "score"])
def test_a_polars_object_column_is_named_as_such(column: str) -> None:
    # polars exports Python objects as 8-byte pointers (FixedSizeBinary(8))
    data: dict = {"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]}
    data[column] = pl.Series([object(), object()], dtype=pl.Object)
    with pytest.raises(irmetrics.InputError) as e:
        irmetrics.evaluate({"1": {"a": 1}}, pl.DataFrame(data), "map")
    msg = str(e.value)
    assert f"'{column}'" in msg and "polars Object column" in msg and "pl.String" in msg, msg


def test_labels_must_be_whole_numbers() -> None:
    t = pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "label": [1.0, 1.5]})
    with pytest.raises(irmetrics.FormatError, match=r"qrels, row 1: .*1\.5"):
        irmetrics.Qrels.from_arrow(t)
    t = pa.table({"qid": ["1"], "docno": ["a"], "label": pa.array([2**63], pa.uint64())})
    with pytest.raises(irmetrics.FormatError, match="qrels, row 0"):
        irmetrics.Qrels.from_arrow(t)
    t = pa.table({"qid": ["1"], "docno": ["a"], "label": [True]})
    with pytest.raises(irmetrics.InputError, match="label columns must be integer"):
        irmetrics.Qrels.from_arrow(t)


def test_nan_scores_and_duplicates_name_their_rows() -> None:
    t = pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, math.nan]})
    with pytest.raises(irmetrics.FormatError, match="run, row 1"):
        irmetrics.Run.from_arrow(t)
    t = pa.table({"qid": ["1", "2", "1"], "docno": ["a", "a", "a"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(irmetrics.FormatError, match="row 2"):
        irmetrics.Run.from_arrow(t)


def test_something_that_is_not_arrow_data() -> None:
    with pytest.raises(irmetrics.InputError, match="expected Arrow data"):
        irmetrics.Run.from_arrow([1, 2, 3])


def test_outputs_name_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    run = irmetrics.Run.from_dict({"q": {"d": 1.0}})
    for module, call, extra in [
        ("pyarrow", run.to_arrow, "irmetrics[arrow]"),
        ("polars", run.to_polars, "irmetrics[polars]"),
        ("pandas", run.to_pandas, "irmetrics[pandas]"),
    ]:
        with monkeypatch.context() as m:
            m.setitem(sys.modules, module, None)  # an import of it now fails
            with pytest.raises(irmetrics.MissingDependencyError, match=extra.replace("[", r"\[")):
                call()
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "polars", None)
        with pytest.raises(irmetrics.MissingDependencyError, match="output='polars'"):
            irmetrics.evaluate({"q": {"d": 1}}, run, "map", output="polars")


def test_to_pandas_is_the_frame_pandas_makes_of_the_rows(conformance: Path) -> None:
    """``to_pandas`` gives the frame pandas itself makes of the rows as Python values
    (its own string dtype: Arrow-backed in pandas 3 with pyarrow, where the ids are
    handed over as Arrow arrays), for a run and for qrels."""
    path = conformance / "generated" / "v03_score_ties" / "run.txt"
    run = irmetrics.Run.from_file(path)
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    ranked = sorted(
        ((q, d, float(s)) for q, _, d, _, s, *_ in rows),
        key=lambda r: (r[0].encode(), -r[2], tuple(-b for b in r[1].encode())),
    )
    expected = pd.DataFrame(
        {
            "query_id": [r[0] for r in ranked],
            "doc_id": [r[1] for r in ranked],
            "score": [r[2] for r in ranked],
        }
    )
    pd.testing.assert_frame_equal(run.to_pandas(), expected)
    qrels_path = conformance / "generated" / "v03_score_ties" / "qrels.txt"
    lines = [line.split() for line in qrels_path.read_text().splitlines() if line.strip()]
    judged = pd.DataFrame(
        {
            "query_id": [q for q, _, _, _ in lines],
            "doc_id": [d for _, _, d, _ in lines],
            "relevance": [int(r) for *_, r in lines],
        }
    )
    got = irmetrics.Qrels.from_file(qrels_path).to_pandas()
    key = ["query_id", "doc_id"]
    pd.testing.assert_frame_equal(
        got.sort_values(key).reset_index(drop=True),
        judged.sort_values(key).reset_index(drop=True),
    )


def test_pandas_frames_keep_their_own_route() -> None:
    """A pandas frame (which exports Arrow data through pyarrow) is read in place by the
    pandas route: object columns with ints and NaN give the pandas route's messages."""
    df = pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(irmetrics.FormatError, match="df.iloc"):
        irmetrics.Run.from_dataframe(df)


def test_ids_that_are_not_utf8_go_out_as_binary_and_come_back() -> None:
    run = irmetrics.Run.from_string(b"q1 Q0 d\xff 1 1.0 t\nq1 Q0 e 2 0.5 t\n")
    qrels = irmetrics.Qrels.from_string(b"q1 0 d\xff 1\n")
    t = run.to_arrow()
    assert t.schema.field("doc_id").type == pa.large_binary()
    assert t.column("doc_id").to_pylist() == [b"d\xff", b"e"]
    for out in (run.to_arrow(), run.to_polars(), run.to_pandas()):
        assert irmetrics.Run.from_dataframe(out).to_dict() == run.to_dict()
    assert irmetrics.Qrels.from_arrow(qrels.to_arrow()).to_dict() == qrels.to_dict()
    expected = irmetrics.evaluate(qrels, run, ["P.1", "map"])
    assert irmetrics.evaluate(qrels.to_polars(), run.to_arrow(), ["P.1", "map"]) == expected


def test_a_struct_array_with_null_rows_is_refused() -> None:
    """Through ``__arrow_c_array__``, a table is a struct array; a null row of it has no
    query, document or score."""
    fields = [pa.array(["1", "1"]), pa.array(["a", "b"]), pa.array([1.0, 2.0])]
    names = ["qid", "docno", "score"]
    mask = pa.array([False, True])
    table = pa.StructArray.from_arrays(fields, names=names, mask=mask)

    class Rows:
        def __arrow_c_array__(self, requested_schema: object = None) -> object:
            return table.__arrow_c_array__(requested_schema)

    with pytest.raises(irmetrics.InputError, match="null rows"):
        irmetrics.Run.from_arrow(Rows())
    ok = pa.StructArray.from_arrays(fields, names=names)
    ok_rows = type(
        "OkRows", (), {"__arrow_c_array__": lambda self, s=None: ok.__arrow_c_array__(s)}
    )
    assert irmetrics.Run.from_arrow(ok_rows()).to_dict() == {"1": {"a": 1.0, "b": 2.0}}


def _interleaved_rows(n_queries: int, per_query: int) -> tuple[list[str], list[str], list[float]]:
    """Rows of queries whose first halves all come before their second halves (each
    query comes back), so that pieces of one query lie in different stretches."""
    qs, ds, ss = [], [], []
    for half in (0, 1):
        for q in range(n_queries):
            for k in range(half * per_query // 2, (half + 1) * per_query // 2):
                qs.append(f"q{q}")
                ds.append(f"d{(k * 7919 + q) % 100_003}")
                ss.append(float((k * 31 + q) % 997) / 7)
    return qs, ds, ss


def test_a_large_table_of_uneven_batches_holds_every_row_in_order() -> None:
    # 300,000 rows in batches of 70,000 / 100,000 / 130,000 rows: pieces are made in
    # parallel from stretches of 65,536 rows that cut queries and batches anywhere
    qs, ds, ss = _interleaved_rows(600, 500)
    t = pa.table({"qid": qs, "docno": ds, "score": ss})
    bounds = [0, 70_000, 170_000, 300_000]
    batches = [t.slice(a, b - a).to_batches()[0] for a, b in zip(bounds, bounds[1:])]
    table = pa.Table.from_batches(batches)
    assert [b.num_rows for b in table.to_batches()] == [70_000, 100_000, 130_000]
    assert_rows_kept(irmetrics.Run.from_arrow(table).to_dict(), qs, ds, ss)
    # polars' single chunk, cut into stretches the same way
    assert_rows_kept(irmetrics.Run.from_arrow(pl.from_arrow(table)).to_dict(), qs, ds, ss)


def test_a_duplicate_far_apart_names_both_rows_and_the_first_problem_wins() -> None:
    qs, ds, ss = _interleaved_rows(600, 500)
    qs[250_000], ds[250_000] = qs[3], ds[3]  # a repeat, 250,000 rows after
    t = pa.table({"qid": qs, "docno": ds, "score": ss})
    with pytest.raises(irmetrics.FormatError, match=r"run, row 250000: .*\(first at row 3\)"):
        irmetrics.Run.from_arrow(t)
    # of two NaNs in different stretches, the first in row order is named
    qs, ds, ss = _interleaved_rows(600, 500)
    ss[290_000] = ss[200_001] = math.nan
    with pytest.raises(irmetrics.FormatError, match=r"run, row 200001: .*NaN"):
        irmetrics.Run.from_arrow(pa.table({"qid": qs, "docno": ds, "score": ss}))


def test_a_polars_frame_larger_than_a_slice_is_read_whole_and_in_order() -> None:
    # polars copies what it exports, so a frame of more than 2**19 rows is exported a
    # slice at a time as its rows are taken in; query 'q524' straddles the first cut
    n = 1_300_000
    qs = [f"q{i // 1000}" for i in range(n)]
    ds = [f"d{(i * 7919) % 1000}" for i in range(n)]
    ss = [float(i % 977) for i in range(n)]
    frame = pl.DataFrame({"qid": qs, "docno": ds, "score": ss})
    assert_rows_kept(irmetrics.Run.from_arrow(frame).to_dict(), qs, ds, ss)
    qrels = irmetrics.Qrels.from_dict({f"q{q}": {"d1": 1, "d500": 2} for q in range(0, 1300, 3)})
    ev = irmetrics.Evaluator(qrels, ["map", "ndcg_cut.10"])
    from_pyarrow = ev.evaluate(irmetrics.Run.from_arrow(pa.table(frame)), per_query=True)
    assert ev.evaluate(frame, per_query=True) == from_pyarrow
    ss[1_100_000] = math.nan
    with pytest.raises(irmetrics.FormatError, match=r"run, row 1100000: .*NaN"):
        irmetrics.Run.from_arrow(pl.DataFrame({"qid": qs, "docno": ds, "score": ss}))


@pytest.mark.parametrize("kind", ["pyarrow", "reader", "polars"])
def test_arrow_runs_evaluated_as_read_give_the_numbers_of_a_whole_run(kind: str) -> None:
    # evaluate() takes each query once its rows are in; where a query's rows lie apart
    # (here every query comes back) it builds the run whole, a polars frame exported
    # again, a RecordBatchReader (read once) from what it gave: the same per-query
    # values either way, and as the Run's
    qrels = irmetrics.Qrels.from_dict({f"q{q}": {"d1": 1, "d7919": 2} for q in range(0, 1200, 3)})
    ev = irmetrics.Evaluator(qrels, ["map", "ndcg_cut.10", "P.5"])
    for grouped in (True, False):
        qs, ds, ss = _interleaved_rows(1200, 500)  # 600,000 rows
        if grouped:
            order = sorted(range(len(qs)), key=lambda i: int(qs[i][1:]))
            qs, ds, ss = [qs[i] for i in order], [ds[i] for i in order], [ss[i] for i in order]
        t = pa.table({"qid": qs, "docno": ds, "score": ss})
        data: Any = t
        if kind == "reader":
            data = pa.RecordBatchReader.from_batches(t.schema, t.to_batches(100_000))
        elif kind == "polars":
            data = pl.from_arrow(t)
        expected = ev.evaluate(irmetrics.Run.from_arrow(t), per_query=True)
        assert len(expected["map"]) == 400  # the judged queries
        assert ev.evaluate(data, per_query=True) == expected
