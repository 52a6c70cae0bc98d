"""Parquet files of runs, qrels and logs, read in Rust (arrow-rs' parquet) batch by batch.

Each conformance case is written to parquet by the test itself through the writers
users have (pyarrow with each of its codecs and small row groups, polars, DuckDB) from
the TREC files' own rows, and must evaluate to exactly the TREC route's values, which
test_conformance.py holds to trec_eval's. Our own writer is checked by reading its
files back with pyarrow. Bad files are named, with the row.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from generated_cases import assert_rows_kept, generated_cases, plain

import irmetrics


def _ids(values: list[bytes]) -> pa.Array:
    """Ids as strings, or as binary where one is not UTF-8 (kept as it is)."""
    try:
        return pa.array([v.decode("utf-8") for v in values], pa.string())
    except UnicodeDecodeError:
        return pa.array(values, pa.binary())


def _rows(path: Path) -> list[list[bytes]]:
    out = []
    for line in path.read_bytes().split(b"\n"):
        f = line.split()  # C's whitespace, as trec_eval splits
        if f and not f[0].startswith(b"#"):
            out.append(f)
    return out


def qrels_table(path: Path) -> pa.Table:
    rows = _rows(path)
    return pa.table(
        {
            "query_id": _ids([r[0] for r in rows]),
            "doc_id": _ids([r[2] for r in rows]),
            "relevance": pa.array([int(r[3]) for r in rows], pa.int64()),
        }
    )


def run_table(path: Path) -> pa.Table:
    rows = _rows(path)
    return pa.table(
        {
            "qid": _ids([r[0] for r in rows]),
            "docno": _ids([r[2] for r in rows]),
            "score": pa.array([float(r[4]) for r in rows], pa.float64()),
        }
    )


def _pyarrow(**kw: Any) -> Callable[[pa.Table, Path], None]:
    def write(t: pa.Table, path: Path) -> None:
        pq.write_table(t, path, **kw)

    return write


def _polars(t: pa.Table, path: Path) -> None:
    frame = pl.from_arrow(t)
    assert isinstance(frame, pl.DataFrame)
    frame.write_parquet(path)


def _duckdb(t: pa.Table, path: Path) -> None:
    con = duckdb.connect()
    con.register("t", t)
    con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    con.close()


def _integer_ids(t: pa.Table, path: Path) -> None:
    """Digit-only ids as int64 columns (as a frame read from CSV has them)."""
    cols = []
    for i, col in enumerate(t.columns):
        values = col.to_pylist()
        if i < 2 and all(isinstance(v, str) and v.isdigit() and str(int(v)) == v for v in values):
            cols.append(pa.array([int(v) for v in values], pa.int64()))
        else:
            cols.append(col)
    pq.write_table(pa.table(cols, names=t.column_names), path)


#: Each writer: (table, path) -> a parquet file.
WRITERS: dict[str, Callable[[pa.Table, Path], None]] = {
    "pyarrow_snappy": _pyarrow(),
    "pyarrow_zstd_small_row_groups": _pyarrow(compression="zstd", row_group_size=7),
    "pyarrow_gzip": _pyarrow(compression="gzip"),
    "pyarrow_brotli": _pyarrow(compression="brotli"),
    "pyarrow_lz4": _pyarrow(compression="lz4"),
    "pyarrow_plain_no_dictionary": _pyarrow(compression="none", use_dictionary=False),
    "polars": _polars,
    "duckdb": _duckdb,
    "integer_ids": _integer_ids,
}


@pytest.fixture(scope="module")
def cases(conformance: Path) -> list:
    return generated_cases(conformance)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_parquet_writer_gives_the_trec_routes_values(
    cases: list, writer: str, tmp_path: Path
) -> None:
    for name, qrels_path, run_path, measures, opts in cases:
        expected_ev = irmetrics.Evaluator(irmetrics.Qrels.from_file(qrels_path), measures, **opts)
        file_run = irmetrics.Run.from_file(run_path)
        expected = expected_ev.evaluate(file_run, per_query=True, keys="canonical")
        expected_all = expected_ev.evaluate(file_run, keys="canonical")
        stem = name.replace("/", "_")
        qp, rp = tmp_path / f"{stem}.qrels.parquet", tmp_path / f"{stem}.run.parquet"
        WRITERS[writer](qrels_table(qrels_path), qp)
        WRITERS[writer](run_table(run_path), rp)
        ev = irmetrics.Evaluator(str(qp), measures, **opts)
        got = ev.evaluate(str(rp), per_query=True, keys="canonical")
        assert plain(got) == plain(expected), (name, writer)
        got_all = ev.evaluate(irmetrics.Run.from_file(rp), keys="canonical")
        expected_all.pop("runid", None)
        got_all.pop("runid", None)
        assert plain(got_all) == plain(expected_all), (name, writer)


def test_the_run_tag_is_the_files_name(tmp_path: Path) -> None:
    path = tmp_path / "bm25.parquet"
    pq.write_table(pa.table({"qid": ["1"], "docno": ["a"], "score": [1.0]}), path)
    assert irmetrics.Run.from_file(path).runid == "bm25"


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_our_parquet_files_read_back_in_pyarrow(cases: list, kind: str, tmp_path: Path) -> None:
    for name, qrels_path, run_path, _, _ in cases:
        if kind == "run":
            obj: Any = irmetrics.Run.from_file(run_path)
            value = "score"
        else:
            obj = irmetrics.Qrels.from_file(qrels_path)
            value = "relevance"
        out = tmp_path / f"{name.replace('/', '_')}.{kind}.parquet"
        obj.to_file(out)
        t = pq.read_table(out)
        assert t.column_names == ["query_id", "doc_id", value], name
        back: dict[str, dict[str, Any]] = {}
        for q, d, v in zip(*(t.column(i).to_pylist() for i in range(3))):
            q = q if isinstance(q, str) else q.decode("utf-8", "surrogateescape")
            d = d if isinstance(d, str) else d.decode("utf-8", "surrogateescape")
            back.setdefault(q, {})[d] = v
        assert back == obj.to_dict(), name
        if kind == "run":
            # each query's rows ranked as trec_eval ranks them: score desc, doc id desc
            qs, ds, ss = (t.column(i).to_pylist() for i in range(3))
            for i in range(1, len(qs)):
                if qs[i] == qs[i - 1]:
                    assert (ss[i - 1], str(ds[i - 1])) >= (ss[i], str(ds[i])) or ss[i - 1] > ss[
                        i
                    ], name
        # and back through our reader, unchanged
        again = type(obj).from_file(out)
        assert again.to_dict() == obj.to_dict(), name


def test_the_cli_reads_parquet(conformance: Path, tmp_path: Path) -> None:
    qrels = conformance / "generated" / "v02_graded_negative" / "qrels.txt"
    run = conformance / "generated" / "v02_graded_negative" / "run.txt"
    qp, rp = tmp_path / "q.parquet", tmp_path / "r.parquet"
    pq.write_table(qrels_table(qrels), qp)
    pq.write_table(run_table(run), rp)

    def cli(*args: str) -> str:
        p = subprocess.run(
            [sys.executable, "-m", "irmetrics", "-q", "-m", "all_trec", *args],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        return "\n".join(line for line in p.stdout.splitlines() if not line.startswith("runid"))

    assert cli(str(qp), str(rp)) == cli(str(qrels), str(run))


# ---------------------------------------------------------------------- bad files


def _error(path: Path, kind: str = "run") -> str:
    with pytest.raises(irmetrics.Error) as e:
        if kind == "run":
            irmetrics.Run.from_file(path)
        else:
            irmetrics.Qrels.from_file(path)
    return str(e.value)


def test_a_truncated_file_is_named(tmp_path: Path) -> None:
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"qid": ["1"] * 100, "docno": [str(i) for i in range(100)]}), good)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(good.read_bytes()[:-30])
    msg = _error(bad)
    assert "bad.parquet" in msg and "parquet" in msg, msg
    text = tmp_path / "text.parquet"
    text.write_text("1 Q0 a 1 1.0 x\n")
    assert "text.parquet" in _error(text)


def test_a_missing_column_names_the_file_and_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"qid": ["1"], "docno": ["a"], "points": [1.0]}), path)
    msg = _error(path)
    assert "r.parquet" in msg and "no score column" in msg and "'points'" in msg, msg


def test_a_null_names_its_row_over_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    docs = [f"d{i}" for i in range(10)]
    docs[8] = None  # type: ignore[call-overload]
    t = pa.table({"qid": ["1"] * 10, "docno": docs, "score": [float(i) for i in range(10)]})
    pq.write_table(t, path, row_group_size=3)
    msg = _error(path)
    assert "r.parquet, row 8" in msg and "null" in msg, msg


def test_nan_scores_labels_and_duplicates_name_their_rows(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"qid": ["1", "1", "1"], "docno": ["a", "b", "c"], "score": [1.0, math.nan, 2]}),
        path,
        row_group_size=2,
    )
    assert "r.parquet, row 1" in _error(path)
    path = tmp_path / "q.parquet"
    pq.write_table(
        pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "relevance": [1.0, 0.5]}), path
    )
    msg = _error(path, "qrels")
    assert "q.parquet, row 1" in msg and "whole-number" in msg, msg
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["a", "a"], "score": [1.0, 2.0]}), path)
    msg = _error(path)
    assert "d.parquet" in msg and "twice" in msg, msg


def test_an_unsupported_column_type_says_which_work(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"qid": [1.5], "docno": ["a"], "score": [1.0]}), path)
    msg = _error(path)
    assert "r.parquet" in msg and "id columns must be" in msg, msg


def test_duckdb_results_are_arrow_data() -> None:
    qrels = duckdb.sql(
        "select * from (values ('q1', 'a', 1), ('q1', 'b', 0), ('q2', 'c', 2)) "
        "t(query_id, doc_id, relevance)"
    )
    run = duckdb.sql(
        "select * from (values ('q1', 'a', 0.5), ('q1', 'b', 0.9), ('q2', 'c', 0.1)) "
        "t(query_id, doc_id, score)"
    )
    # the scores are DECIMAL(2,1) in DuckDB: read as the doubles their text is
    assert run.types[2] == duckdb.decimal_type(2, 1)
    got = irmetrics.evaluate(qrels, run, ["P@1", "map"])
    # q1: b (non-relevant) first, a second: P@1 = 0, AP = 1/2; q2: P@1 = 1, AP = 1
    assert got == {"P@1": 0.5, "map": 0.75}
    # decimals with many digits: the double nearest to each (Python's float of the text)
    scores = ["0.1", "0.30000000000000004", "123456789.123456789", "-7.25"]
    rows = ", ".join(f"('q', 'd{i}', {s}::DECIMAL(38, 18))" for i, s in enumerate(scores))
    dec = duckdb.sql(f"select * from (values {rows}) t(query_id, doc_id, score)")
    assert irmetrics.Run.from_arrow(dec).to_dict() == {
        "q": {f"d{i}": float(s) for i, s in enumerate(scores)}
    }


def test_row_groups_read_in_parallel_keep_row_order_and_name_rows(tmp_path: Path) -> None:
    # 12 row groups of 5 rows: query '2' comes back in later groups; a duplicate across
    # groups names both rows; of two bad rows in different groups the first is named
    qs = (["1"] * 7 + ["2"] * 6 + ["3"] * 7) * 3
    ds = [f"d{i}" for i in range(60)]
    ss = [float(i % 13) for i in range(60)]
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"qid": qs, "docno": ds, "score": ss}), path, row_group_size=5)
    assert pq.ParquetFile(path).num_row_groups == 12
    assert_rows_kept(irmetrics.Run.from_file(path).to_dict(), qs, ds, ss)
    dup = ds.copy()
    dup[47] = dup[9]  # rows 9 and 47 are both query '2'
    pq.write_table(pa.table({"qid": qs, "docno": dup, "score": ss}), path, row_group_size=5)
    msg = _error(path)
    assert "r.parquet, row 47" in msg and "first at row 9" in msg, msg
    bad = ss.copy()
    bad[52] = bad[23] = math.nan
    pq.write_table(pa.table({"qid": qs, "docno": ds, "score": bad}), path, row_group_size=5)
    msg = _error(path)
    assert "r.parquet, row 23" in msg and "NaN" in msg, msg
