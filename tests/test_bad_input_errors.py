"""Every bad input gets an exception of the documented hierarchy with a clear message.

Hierarchy: ``irmetrics.Error``; ``FileError(Error, OSError)``, ``FormatError(Error,
ValueError)``, ``InputError(Error, ValueError)`` > ``MissingQueryError``,
``MeasureError``. Each case checks the class and that the message
names the file/line/key and says what to do. Nothing may crash or return numbers.
See README "Input policy and errors".
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irmetrics
from irmetrics import (
    Error,
    Evaluator,
    FileError,
    FormatError,
    InputError,
    MeasureError,
    MissingQueryError,
    Qrels,
    Run,
)

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq2 Q0 d3 1 0.5 r\n"


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


# ---------------------------------------------------------------------------------
# hierarchy


def test_hierarchy() -> None:
    assert issubclass(FileError, Error) and issubclass(FileError, OSError)
    for cls in (FormatError, InputError, MeasureError):
        assert issubclass(cls, Error) and issubclass(cls, ValueError)
    assert issubclass(MissingQueryError, InputError)
    assert issubclass(MeasureError, InputError)  # a bad measure is a bad input
    for cls in (Error, FileError, FormatError, InputError, MeasureError, MissingQueryError):
        assert cls.__module__ == "irmetrics" and cls.__doc__


# ---------------------------------------------------------------------------------
# files


@pytest.mark.parametrize("reader", [Qrels.from_file, Run.from_file])
def test_missing_file(tmp_path: Path, reader) -> None:
    path = tmp_path / "nope.txt"
    with pytest.raises(FileError, match=r"cannot read .*nope\.txt: .*No such file") as e:
        reader(path)
    assert isinstance(e.value, OSError)


@pytest.mark.parametrize("reader", [Qrels.from_file, Run.from_file])
def test_directory(tmp_path: Path, reader) -> None:
    with pytest.raises(FileError, match="it is a directory, not a file"):
        reader(tmp_path)


@pytest.mark.parametrize("reader", [Qrels.from_file, Run.from_file])
def test_path_through_a_file(tmp_path: Path, reader) -> None:
    f = write(tmp_path, "f.txt", QRELS)
    with pytest.raises(FileError, match=r"f\.txt/x"):
        reader(f / "x")


# Run in a child process that first gives up the two capabilities that let root read
# any file (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH; giving capabilities up needs no
# privilege), so the permission check is real for root (CI) and other users alike.
_UNREADABLE_CHILD = r"""
import ctypes, json, sys

class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

class Data(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

libc = ctypes.CDLL(None, use_errno=True)
header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3
if libc.capget(ctypes.byref(header), data) != 0:
    sys.exit(f"capget failed: errno {ctypes.get_errno()}")
data[0].effective &= ~((1 << 1) | (1 << 2))
if libc.capset(ctypes.byref(header), data) != 0:
    sys.exit(f"capset failed: errno {ctypes.get_errno()}")
path, reader = sys.argv[1], sys.argv[2]
try:
    open(path, "rb").close()
except PermissionError:
    pass
else:
    sys.exit("the file could still be opened: the permission check is not in force")
import irmetrics
try:
    getattr(irmetrics, reader).from_file(path)
except Exception as e:
    print(json.dumps({"type": type(e).__name__, "oserror": isinstance(e, OSError),
                      "message": str(e)}))
else:
    sys.exit("read an unreadable file")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="platform: Linux capabilities and modes")
@pytest.mark.parametrize("reader", ["Qrels", "Run"])
def test_unreadable(tmp_path: Path, reader: str) -> None:
    import json

    f = write(tmp_path, "locked.txt", QRELS)
    f.chmod(0)
    child = subprocess.run(
        [sys.executable, "-c", _UNREADABLE_CHILD, str(f), reader],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    got = json.loads(child.stdout)
    assert got["type"] == "FileError" and got["oserror"], got
    assert got["message"] == f"cannot read {f}: Permission denied (os error 13)", got


@pytest.mark.parametrize("reader,text", [(Qrels.from_file, QRELS), (Run.from_file, RUN)])
def test_truncated_gzip(tmp_path: Path, reader, text: str) -> None:
    data = gzip.compress(text.encode() * 50)
    f = write(tmp_path, "cut.gz", data[: len(data) // 2])
    with pytest.raises(FileError, match=r"cut\.gz: corrupt or truncated gzip data"):
        reader(f)


@pytest.mark.parametrize("reader,text", [(Qrels.from_file, QRELS), (Run.from_file, RUN)])
def test_corrupt_gzip(tmp_path: Path, reader, text: str) -> None:
    data = bytearray(gzip.compress(text.encode() * 50))
    for i in range(12, len(data) - 8, 7):
        data[i] ^= 0x5A
    f = write(tmp_path, "bad.gz", bytes(data))
    with pytest.raises(FileError, match=r"bad\.gz: corrupt or truncated gzip data"):
        reader(f)


def test_gzip_header_only(tmp_path: Path) -> None:
    f = write(tmp_path, "magic.gz", b"\x1f\x8b")
    with pytest.raises(FileError, match="corrupt or truncated gzip"):
        Run.from_file(f)


def test_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"empty\.qrels: no judgments .*empty"):
        Qrels.from_file(write(tmp_path, "empty.qrels", ""))
    with pytest.raises(InputError, match=r"empty\.run: no results .*empty"):
        Run.from_file(write(tmp_path, "empty.run", ""))
    with pytest.raises(InputError, match="no results"):
        Run.from_file(write(tmp_path, "empty.run.gz", gzip.compress(b"")))


def test_only_comments(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"c\.run: no results .*only comments"):
        Run.from_file(write(tmp_path, "c.run", "# a\n\n   # b\n\n"))
    with pytest.raises(FormatError, match=r"c\.qrels:1: the qrels end with a comment"):
        Qrels.from_file(write(tmp_path, "c.qrels", "# only a comment\n"))
    with pytest.raises(FormatError, match=r"c2\.qrels:2: a second comment line in a row"):
        Qrels.from_file(write(tmp_path, "c2.qrels", "# a\n# b\nq 0 d 1\n"))


# ---------------------------------------------------------------------------------
# lines


@pytest.mark.parametrize(
    "line,message",
    [
        ("q1 Q0 d9 1 0.5", "expected 6 fields 'qid iter docno rank score tag', found 5"),
        ("q1 Q0 d9", "found 3"),
        ("q1 0 d9 1", "found 4 .is this a qrels file given as a run"),
        ("q1 Q0 d9 1 abc r", "score 'abc' is not a number"),
        ("q1 Q0 d9 1 2.5x r", "score '2.5x' is not a number"),
        ("q1 Q0 d9 1 1,5 r", "score '1,5' is not a number"),
        ("q1 Q0 d9 1 0x1p2 r", "score '0x1p2' is not a decimal number .trec_eval's atof reads"),
        ("q1 Q0 d9 1 -0X1P2 r", "score '-0X1P2' is not a decimal number"),
        ("q1 Q0 d9 1 nan r", "score of document 'd9' for query 'q1' is NaN"),
        ("q1 Q0 d9 1 -NaN r", "is NaN"),
        ("q1 Q0 d9 1 \x00 r", "NUL byte"),
    ],
)
def test_bad_run_line(tmp_path: Path, line: str, message: str) -> None:
    f = write(tmp_path, "bad.run", RUN + line + "\nq2 Q0 d9 2 0.1 r\n")
    with pytest.raises(FormatError, match=rf"bad\.run:4: .*{message}"):
        Run.from_file(f)
    with pytest.raises(FormatError, match=rf"<string>:4: .*{message}"):
        Run.from_string(RUN + line + "\n")


@pytest.mark.parametrize(
    "line,message",
    [
        ("q1 0 d9", "expected 4 fields 'qid iter docno rel', found 3"),
        ("q1 0 d9 1 x", "found 5"),
        ("q1 Q0 d9 1 0.5 r", "found 6 .is this a run file given as qrels"),
        ("", "blank line"),
        ("  # indented", "a comment must start with '#' in the first column"),
        ("q1 0 d9 1.7", "relevance label '1.7' is not a whole number"),
        ("q1 0 d9 x", "label 'x' is not a whole number"),
        ("q1 0 d9 2abc", "label '2abc' is not a whole number"),
        ("q1 0 d9 99999999999999999999", "too large"),
        ("q1 0 d9 \x00", "NUL byte"),
    ],
)
def test_bad_qrels_line(tmp_path: Path, line: str, message: str) -> None:
    f = write(tmp_path, "bad.qrels", QRELS + line + "\nq2 0 d9 1\n")
    with pytest.raises(FormatError, match=rf"bad\.qrels:5: .*{message}"):
        Qrels.from_file(f)


def test_inf_scores_are_numbers_and_ordered() -> None:
    q = Qrels.from_string("q 0 a 1\nq 0 b 0\nq 0 c 1\n")
    r = Run.from_string("q Q0 a 1 -inf r\nq Q0 b 2 +inf r\nq Q0 c 3 1e308 r\n")
    assert r.to_dict() == {"q": {"a": float("-inf"), "b": float("inf"), "c": 1e308}}
    res = irmetrics.evaluate(q, r, "relstring", per_query=True)
    assert res["relstring"]["q"] == "011"


def test_labels_accept_sign_and_extremes() -> None:
    q = Qrels.from_string("q 0 a +1\nq 0 b -9223372036854775808\nq 0 c 9223372036854775807\n")
    assert q.to_dict()["q"] == {"a": 1, "b": -(2**63), "c": 2**63 - 1}


def test_extra_run_columns_are_ignored() -> None:
    r = Run.from_string("q Q0 d 1 0.5 tag extra columns\n")
    assert r.runid == "tag" and r.num_results == 1


def test_invalid_utf8_ids_round_trip() -> None:
    q = Qrels.from_string(b"q\xff 0 d\xfe 1\n")
    r = Run.from_string(b"q\xff Q0 d\xfe 1 1 r\n")
    qid = b"q\xff".decode("utf-8", "surrogateescape")
    assert q.query_ids() == [qid]
    assert irmetrics.evaluate(q, r, "P.1", per_query=True) == {"P.1": {qid: 1.0}}
    # the surrogate-escaped str names the same query
    again = Qrels.from_dict({qid: {b"d\xfe".decode("utf-8", "surrogateescape"): 1}})
    assert irmetrics.evaluate(again, r, "P.1") == {"P.1": 1.0}


def test_two_escaped_keys_with_the_same_bytes_are_caught() -> None:
    # '\udcc3\udcbf' (the escaped bytes c3 bf) and 'ÿ' (U+00FF, UTF-8 c3 bf) are distinct
    # str keys but one id: a document twice, or one query named by two keys
    esc = "\udcc3\udcbf"  # never made by decoding (c3 bf is valid UTF-8), but a str
    assert esc != "\xff" and esc.encode("utf-8", "surrogateescape") == "\xff".encode()
    qrels = {"q": {"d": 1}, "\xff": {"d": 1}}
    for run, msg in [
        ({"q": {esc: 1.0, "\xff": 2.0}}, "document 'ÿ' appears twice for query 'q'"),
        ({esc: {"d": 1.0}, "\xff": {"d": 2.0}}, "query id 'ÿ' is the same bytes as the key"),
    ]:
        with pytest.raises(FormatError, match=msg):
            Run.from_dict(run)
        with pytest.raises(FormatError, match=msg):
            irmetrics.evaluate(qrels, run, "map")
    # apart, the two keys are one query whose documents are checked as a whole
    run = {"\xff": {"d": 1.0}, "x": {"a": 1.0}, esc: {"d": 2.0}}
    with pytest.raises(FormatError, match="document 'd' appears twice for query 'ÿ'"):
        Run.from_dict(run)


def test_very_long_line() -> None:
    doc = "d" * (8 << 20)
    with pytest.raises(FormatError, match=r"<string>:1: line longer than 1048576 bytes"):
        Run.from_string(f"q Q0 {doc} 1 0.5 r\nq Q0 x 2 0.4 r")
    before = irmetrics.set_max_line_bytes(16 << 20)
    try:
        r = Run.from_string(f"q Q0 {doc} 1 0.5 r\nq Q0 x 2 0.4 r")
        assert r.num_results == 2
        with pytest.raises(FormatError, match=r"<string>:1: .*found 3"):
            Run.from_string(f"q Q0 {doc}")
    finally:
        irmetrics.set_max_line_bytes(before)


# ---------------------------------------------------------------------------------
# semantics


def test_duplicate_doc_in_run_names_both_lines(tmp_path: Path) -> None:
    f = write(tmp_path, "dup.run", RUN + "q1 Q0 d1 9 0.1 r\n")
    with pytest.raises(
        FormatError,
        match=r"dup\.run:4: document 'd1' appears twice for query 'q1' \(first at line 1\)",
    ):
        Run.from_file(f)
    with pytest.raises(FormatError, match=r"dup\.run\.gz:4: .*first at line 1"):
        Run.from_file(
            write(tmp_path, "dup.run.gz", gzip.compress((RUN + "q1 Q0 d1 9 0 r\n").encode()))
        )


def test_duplicate_doc_in_qrels_names_both_lines(tmp_path: Path) -> None:
    f = write(tmp_path, "dup.qrels", QRELS + "q1 0 d2 1\n")
    with pytest.raises(FormatError, match=r"dup\.qrels:5: document 'd2' .*first at line 2"):
        Qrels.from_file(f)


def test_duplicates_in_python_inputs() -> None:
    with pytest.raises(FormatError, match="'d' appears twice for query 'q'"):
        Run.from_columns(["q", "q"], ["d", "d"], [1.0, 2.0])
    with pytest.raises(FormatError, match="'d' appears twice for query 'q'"):
        Qrels.from_columns(["q", "q"], ["d", "d"], [1, 0])


def test_no_common_queries() -> None:
    ev = Evaluator(Qrels.from_string(QRELS), "map")
    with pytest.raises(InputError, match="no query of the run is judged.*swapped"):
        ev.evaluate(Run.from_string("x Q0 d1 1 1 r\n"))


def test_an_empty_run_is_named_so() -> None:
    """An empty file is refused as it is read; an empty table, dict or exhausted Arrow
    stream makes an empty run, whose evaluation says so (it listed no run queries)."""
    import pyarrow as pa

    ev = Evaluator(Qrels.from_string(QRELS), "map")
    table = pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string())})
    table = table.append_column("score", pa.array([], pa.float64()))
    for run in [Run.from_dict({}), Run.from_arrow(table)]:
        with pytest.raises(InputError, match="the run is empty: it holds no result"):
            ev.evaluate(run)
    with pytest.raises(InputError, match="run 'e': the run is empty"):
        irmetrics.compare(Qrels.from_string(QRELS), {"r": Run.from_string(RUN), "e": {}}, "map")
    with pytest.raises(InputError, match="run 'x': no query of the run is judged"):
        irmetrics.compare(
            Qrels.from_string(QRELS), {"r": Run.from_string(RUN), "x": {"zz": {"d": 1.0}}}, "map"
        )
    # with complete=True an empty run scores every judged query 0, as trec_eval -c
    assert Evaluator(Qrels.from_string(QRELS), "map", complete=True).evaluate({}) == {"map": 0.0}


def test_judged_query_without_results() -> None:
    ev = Evaluator(Qrels.from_string(QRELS + "q3 0 d1 1\n"), "map")
    with pytest.raises(MissingQueryError, match="query 'q3' .*complete=True"):
        ev.evaluate(Run.from_string(RUN))
    ev = Evaluator(Qrels.from_string(QRELS + "q3 0 d1 1\n"), "map", complete=True)
    # AP: q1 finds d1 (of d1, d3) at rank 1: 1/2; q2 finds no relevant: 0; q3 counts 0
    assert ev.evaluate(Run.from_string(RUN))["map"] == pytest.approx(0.5 / 3, abs=1e-15)


def test_query_with_only_negative_labels() -> None:
    with pytest.raises(InputError, match="query 'q9' has only negative labels"):
        Evaluator(Qrels.from_string(QRELS + "q9 0 d1 -1\n"), "map")


# ---------------------------------------------------------------------------------
# Python values


@pytest.mark.parametrize(
    "qrels,message",
    [
        ({1: {"d": 1}}, r"query id 1 must be a str, got int"),
        ({"q": {2: 1}}, r"document id 2 of query 'q' must be a str, got int"),
        ({"q": {b"d": 1}}, r"must be a str, got bytes"),
        ({None: {"d": 1}}, r"must be a str, got NoneType"),
        ({"q": {"d": True}}, r"qrels\['q'\]\['d'\] must be an integer label, got bool"),
        ({"q": {"d": 1.5}}, r"qrels\['q'\]\['d'\] must be a whole-number label, got 1.5"),
        ({"q": {"d": float("nan")}}, r"must be a whole-number label, got nan"),
        ({"q": {"d": float("inf")}}, r"must be a whole-number label, got inf"),
        ({"q": {"d": 2.0**63}}, r"must be a whole-number label, got 9.2"),
        ({"q": {"d": "1"}}, r"must be an integer label, got str"),
        ({"q": {"d": None}}, r"must be an integer label, got NoneType"),
        ({"q": {"d": 2**70}}, r"too large for a label"),
        ({"q": [("d", 1)]}, r"qrels\['q'\] must be a dict of \{doc_id: label\}, got list"),
        ({"q": {"d": {"x": 1}}}, r"must be an integer label, got dict"),
        ({"q": {"d": np.float64(1.5)}}, r"must be a whole-number label, got (np.float64\()?1.5"),
        ({"q": {"d": np.float32(0.25)}}, r"must be a whole-number label, got (np.float32\()?0.25"),
        ({"q": {"d": np.bool_(True)}}, r"must be an integer label, got bool"),
        ([("q", "d", 1)], r"Qrels.from_dict expects a dict"),
    ],
)
def test_bad_qrels_values(qrels, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        Qrels.from_dict(qrels)


@pytest.mark.parametrize(
    "run,message",
    [
        ({1: {"d": 1.0}}, r"query id 1 must be a str"),
        ({"q": {("d",): 1.0}}, r"document id \('d',\) of query 'q' must be a str, got tuple"),
        ({"q": {"d": float("nan")}}, r"score of document 'd' for query 'q' is NaN"),
        ({"q": {"d": np.nan}}, r"is NaN"),
        ({"q": {"d": np.float32("nan")}}, r"is NaN"),
        ({"q": {"d": True}}, r"run\['q'\]\['d'\] must be a number, got bool"),
        ({"q": {"d": "0.5"}}, r"must be a number, got str"),
        ({"q": {"d": None}}, r"must be a number, got NoneType"),
        ({"q": {"d": [1.0]}}, r"must be a number, got list"),
        ({"q": {"d": 1j}}, r"must be a number, got complex"),
        ({"q": 0.5}, r"run\['q'\] must be a dict of \{doc_id: score\}, got float"),
        ("q d 0.5", r"Run.from_dict expects a dict"),
    ],
)
def test_bad_run_values(run, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        Run.from_dict(run)


def test_empty_python_inputs() -> None:
    with pytest.raises(InputError, match="no judgment"):
        Evaluator(Qrels.from_dict({}), "map")
    with pytest.raises(InputError, match="no judgment"):
        Evaluator(Qrels.from_dict({"q": {}}), "map")
    ev = Evaluator(Qrels.from_string(QRELS), "map")
    with pytest.raises(InputError):
        ev.evaluate(Run.from_dict({}))


def test_numpy_scalars_are_accepted() -> None:
    q = Qrels.from_dict({"q": {"a": np.int64(2), "b": np.int8(0), "c": np.uint16(1)}})
    r = Run.from_dict({"q": {"a": np.float32(0.5), "b": np.float64(0.7), "c": np.int32(3)}})
    assert q.to_dict() == {"q": {"a": 2, "b": 0, "c": 1}}
    assert r.to_dict() == {"q": {"a": 0.5, "b": 0.7, "c": 3.0}}
    res = irmetrics.evaluate(q, r, ["P.1", "map"])
    assert res["P.1"] == 1.0
    cols = Run.from_columns(np.array(["q", "q"]), np.array(["a", "b"]), np.array([0.5, 1.0]))
    assert cols.num_results == 2


def test_numpy_nan_in_columns() -> None:
    with pytest.raises(
        FormatError, match=r"run, row 1: score of document 'b' for query 'q' is NaN"
    ):
        Run.from_columns(["q", "q"], ["a", "b"], np.array([0.5, np.nan]))
    with pytest.raises(FormatError, match=r"label at row 1 must be a whole-number label, got 1.5"):
        Qrels.from_columns(["q", "q"], ["a", "b"], np.array([1.0, 1.5]))
    with pytest.raises(FormatError, match=r"label at row 0 must be a whole-number label, got nan"):
        Qrels.from_columns(["q"], ["a"], np.array([np.nan]))


def test_whole_number_float_labels_are_their_integers() -> None:
    """pandas turns a label column with a missing value into floats: 1.0 is label 1
    (Python, numpy scalars of any width, float arrays); the same judgments as ints."""
    as_ints = {"q": {"a": 1, "b": 0, "c": 2, "d": -1}}
    floats = {"q": {"a": 1.0, "b": np.float32(0.0), "c": np.float64(2.0), "d": -1.0}}
    assert Qrels.from_dict(floats).to_dict() == as_ints
    cols = Qrels.from_columns(["q"] * 4, ["a", "b", "c", "d"], np.array([1.0, 0.0, 2.0, -1.0]))
    assert cols.to_dict() == as_ints


def test_columns_of_different_lengths() -> None:
    with pytest.raises(FormatError, match="columns differ in length"):
        Run.from_columns(["q", "q"], ["a"], [1.0, 2.0])
    with pytest.raises(FormatError, match="columns differ in length"):
        Qrels.from_columns(["q"], ["a", "b"], [1])


def test_pandas_columns() -> None:
    df = pd.DataFrame({"q": ["q", "q"], "d": ["a", "b"], "s": [0.5, None]})
    with pytest.raises(FormatError, match="run, row 1: score of document 'b' for query 'q' is NaN"):
        Run.from_columns(df.q, df.d, df.s)


def test_wrong_argument_types() -> None:
    with pytest.raises(
        InputError, match="qrels must be a Qrels, a dict, a DataFrame, Arrow data, rows or a file"
    ):
        irmetrics.evaluate(42, {"q": {"d": 1.0}}, "map")
    with pytest.raises(
        InputError, match="run must be a Run, a dict, a DataFrame, Arrow data, rows or a file"
    ):
        irmetrics.evaluate({"q": {"d": 1}}, 1.5, "map")
    # a list is rows (ir_measures' and ir_datasets' named tuples): each row is checked
    with pytest.raises(FormatError, match=r"run, row 0 \(int\) is not a tuple"):
        irmetrics.evaluate({"q": {"d": 1}}, [1], "map")
    with pytest.raises(FormatError, match=r"qrels, row 1: 2 fields; expected \(query_id"):
        irmetrics.evaluate([("q", "d", 1), ("q", "e")], {"q": {"d": 1.0}}, "map")
    # an open file iterates as lines, not rows: its path is asked for
    with open(__file__) as f, pytest.raises(InputError, match="run is an open file .*its path"):
        irmetrics.evaluate({"q": {"d": 1}}, f, "map")
    # a list of a TREC file's lines: rows of text, not measures given first
    with pytest.raises(FormatError, match=r"row 0 \(str\) is not a tuple[^(]*$"):
        irmetrics.evaluate({"q": {"d": 1}}, ["q Q0 d 1 1.0 r"], "map")
    with pytest.raises(InputError, match="run must be a Run, .* not int"):
        irmetrics.compare_runs(1, {"q": {"d": 1.0}})
    with pytest.raises(FormatError, match="text must be a str or bytes in TREC format, got int"):
        Run.from_string(42)
    with pytest.raises(FormatError, match="got list"):
        Qrels.from_string(["q 0 d 1"])


def test_counts_are_whole_numbers_everywhere() -> None:
    """A negative or fractional count is an InputError naming it (these three gave a
    bare OverflowError)."""
    from irmetrics import online, stats

    log = {"session_id": ["s"], "timestamp": [1.0], "type": ["query"], "query": ["x"]}
    for call in (
        lambda: online.top_queries(log, n=-1),
        lambda: online.ctr_by_query(log, n=-1),
        lambda: online.top_queries(log, n=1.5),
    ):
        with pytest.raises(InputError, match="n must be a whole number of at least 0, got"):
            call()
    assert online.top_queries(log, n=0) == []
    assert [q for q, *_ in online.ctr_by_query(log)] == ["x"]
    with pytest.raises(InputError, match="k must be a whole number from 0 to 10000, got -1"):
        stats.studentized_range_sf(3.0, -1, 5.0)
    with pytest.raises(InputError, match="n must be a whole number of at least 0, got -1"):
        irmetrics.set_max_line_bytes(-1)


def test_values_that_are_not_numbers_are_format_errors_naming_them() -> None:
    """aggregate and bootstrap_ci read their values as irmetrics.stats reads a sample:
    text is refused, not parsed ("0.5" was taken as 0.5), as are bools and None; a
    dict's bad value is named by its key, a sequence's by its row."""
    from collections import OrderedDict

    for call, match in (
        (lambda: irmetrics.aggregate(["0.5", 1.0]), r"values at row 0 must be a number, got str"),
        (lambda: irmetrics.aggregate([1.0, True]), r"values at row 1 must be a number, got bool"),
        (lambda: irmetrics.bootstrap_ci({"q1": None}), r"values\['q1'\] must be a number"),
        (
            lambda: irmetrics.aggregate(OrderedDict(a=1.0, b="x")),
            r"values\['b'\] must be a number, got str",
        ),
        (lambda: irmetrics.aggregate(np.array(["1", "2"])), r"values at row 0 must be a number"),
        (lambda: irmetrics.stats.ttest(["0.5", 1.0], [1.0, 2.0]), r"x at row 0 must be a number"),
    ):
        with pytest.raises(FormatError, match=match):
            call()


def test_bad_options_of_the_python_layer_are_irmetrics_errors() -> None:
    """The options checked in Python raise InputError (a ValueError) like the rest."""
    q, r = {"q": {"d": 1}}, {"q": {"d": 1.0}}
    for call, match in (
        (lambda: irmetrics.evaluate(q, r, "map", output="xml"), "output must be"),
        (lambda: irmetrics.evaluate(q, r, "map", stream=True), "needs the run as a file"),
        (lambda: irmetrics.aggregate([1.0, 2.0], "mean", ddof=1), "ddof applies"),
        (lambda: irmetrics.aggregate([1.0, 2.0], "std", ddof=2), "ddof must be 0"),
        # text was iterated (b"ab" had a mean of 97.5)
        (lambda: irmetrics.aggregate(b"ab"), "list of numbers, got bytes"),
        (
            lambda: irmetrics.system_correlation({"a": 1.0}, {"a": 2.0}, "pearson"),
            "must be 'kendall' or 'spearman'",
        ),
        # these three were a ValueError of float() or of numpy's truth value
        (
            lambda: irmetrics.system_correlation({"a": 1.0, "b": "x"}, {"a": 2.0, "b": 1.0}),
            r"scores_a\['b'\] must be a number, got 'x'",
        ),
        (
            lambda: irmetrics.system_correlation({"a": 1.0}, {"a": 2.0}, np.array([1, 2])),
            "must be 'kendall' or 'spearman'",
        ),
        (
            lambda: irmetrics.online.read_log({"session_id": ["s"]}, columns=["sid"]),
            r"columns must map log fields to column names \(str: str\), got \['sid'\]",
        ),
    ):
        with pytest.raises(InputError, match=match):
            call()


# ---------------------------------------------------------------------------------
# measures and options


@pytest.mark.parametrize(
    "name,message",
    [
        ("mapp", r"unknown measure 'mapp'.*map"),
        ("ndgc_cut.10", r"unknown measure"),
        ("", r"empty measure name"),
        ("P.0", r"P"),
        ("P@0", r"'P': '0' is not a positive whole number of documents"),
        ("P.-1", r"P"),
        ("ndcg_cut.0", r"ndcg_cut"),
        ("recall@-5", r"recall"),
        ("P.", r"P"),
        ("P.a", r"P"),
        ("P@", r"nothing after '@'"),
        ("P(rel=x)@5", r"rel must be a whole number"),
        ("P(rel=2@5", r"unbalanced parenthesis"),
        ("P(foo=1)@5", r"option 'foo' is not supported"),
        ("nDCG(p=0.5)@10", r"p applies to RBP only"),
        ("rbp.p=2", r"rbp"),
        ("rbp.p=nan", r"rbp"),
        ("set_F.1,2", r"set_F"),
        ("utility.1,2", r"utility"),
        ("relstring.-1", r"relstring"),
        ("ndcg.x=1", r"ndcg"),
        ("map@10@20", r"map"),
        ("Rprec@10", r"takes no @ cut-off"),
        ("P(rel=-1)@5", r"relevance level rel=-1 must be 0 or more"),
        ("P", None),
    ],
)
def test_bad_measure(name: str, message: str | None) -> None:
    if message is None:  # a valid control: trec_eval's default cut-offs for P
        cutoffs = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
        assert irmetrics.canonical_names(name) == [f"P_{k}" for k in cutoffs]
        return
    with pytest.raises(MeasureError, match=message) as e:
        Evaluator(Qrels.from_string(QRELS), [name])
    assert len(str(e.value)) > len(name)
    with pytest.raises(MeasureError):
        irmetrics.canonical_names(name)


def test_measure_argument_types() -> None:
    q = Qrels.from_string(QRELS)
    with pytest.raises(MeasureError, match="no measure requested"):
        Evaluator(q, [])
    with pytest.raises(InputError, match=r"measure names must be a str \(or an ir_measures"):
        Evaluator(q, ["map", 5])
    with pytest.raises(InputError, match="measures must be a str or a list of str, got int"):
        Evaluator(q, 5)
    # bytes iterate as numbers: "got int" said nothing of what was given
    with pytest.raises(InputError, match="measures must be a str or a list of str, got bytes"):
        Evaluator(q, b"map")
    # every route reads measures alike (no Evaluator built first in these)
    with pytest.raises(InputError, match="got bytes"):
        irmetrics.diversity([("1", "1", "a", 1)], {"1": {"a": 1.0}}, b"alpha_nDCG@2")
    with pytest.raises(InputError, match=r"metric must be a str \(or an ir_measures"):
        irmetrics.optimize_fusion(q, [{"q": {"a": 1.0}}] * 2, metric=["map"])
    # a weight grid without a tuple summing to 1 (0, 0.3, 0.6, 0.9, 1.2): said so
    with pytest.raises(InputError, match="a step of 0.3 gives no 2 weights summing to 1"):
        irmetrics.optimize_fusion(q, [{"q": {"a": 1.0}}] * 2, "wsum", metric="map", step=0.3)


def test_unknown_options_name_the_right_one() -> None:
    """A keyword that is no evaluation option is an irmetrics error in every route (a
    TypeError naming ``Evaluator.__new__()`` came out of ``compare`` before), with
    ranx's and ir_measures' option names translated and typos answered."""
    q = {"q": {"d": 1}}
    runs = {"a": {"q": {"d": 1.0}}, "b": {"q": {"d": 2.0}}}
    with pytest.raises(InputError, match=r"'stat_test': ranx's stat_test is compare's test="):
        irmetrics.compare(q, runs, "map", stat_test="fisher")
    with pytest.raises(InputError, match=r"'max_p': ranx's max_p is compare's alpha="):
        irmetrics.compare(q, runs, "map", max_p=0.01)
    with pytest.raises(InputError, match=r"make_comparable=True is complete=True"):
        irmetrics.evaluate(q, runs["a"], "map", make_comparable=True)
    with pytest.raises(InputError, match=r"'relevance_levl'; did you mean 'relevance_level'"):
        Evaluator(q, "map", relevance_levl=2)
    with pytest.raises(InputError, match=r"unknown option 'colour' \(evaluation options: comp"):
        irmetrics.evaluate(q, runs["a"], "map", colour="red")
    import irmetrics.plot as plot

    with pytest.raises(InputError, match=r"ranx's threads is n_threads="):
        plot.histogram(q, runs["a"], threads=2)


@pytest.mark.parametrize(
    "options,message",
    [
        ({"max_docs": 0}, "max_docs must be a whole number of at least 1, got 0"),
        ({"max_docs": -3}, "got -3"),
        ({"n_threads": -1}, "n_threads must be a whole number from 0 to 4096, got -1"),
        ({"n_threads": 10**6}, "got 1000000"),
        ({"relevance_level": -1}, r"relevance_level \(-l\) must be 0 or more, got -1"),
        # out of any integer's range, wrong types: named, never a bare OverflowError
        ({"relevance_level": 10**30}, "relevance_level must be a whole number .* got 10000"),
        ({"max_docs": 2**64}, "max_docs must be a whole number of at least 1, got 1844"),
        ({"num_docs_in_collection": -(2**70)}, "num_docs_in_collection must be a whole"),
        ({"n_threads": True}, "n_threads must be a whole number from 0 to 4096, got True"),
        ({"max_docs": 2.5}, "max_docs must be a whole number of at least 1, got 2.5"),
        ({"complete": "yes"}, "complete must be True or False, got 'yes'"),
        ({"judged_only": 1}, "judged_only must be True or False, got 1"),
    ],
)
def test_bad_options(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        Evaluator(Qrels.from_string(QRELS), "map", **options)


def test_bad_keys_option() -> None:
    ev = Evaluator(Qrels.from_string(QRELS), "map")
    with pytest.raises(InputError, match="keys must be 'requested' or 'canonical', got 'x'"):
        ev.evaluate(Run.from_string(RUN), keys="x")


def test_inputs_are_not_mutated() -> None:
    import copy

    qd = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}}
    rd = {"q1": {"d2": 0.5, "d1": 0.5, "d9": float("inf")}, "q2": {"d1": -1.0}}
    qc, rc = copy.deepcopy(qd), copy.deepcopy(rd)
    cols = (["q1", "q1"], ["d1", "d2"], np.array([0.1, 0.2]))
    cols_copy = (list(cols[0]), list(cols[1]), cols[2].copy())
    irmetrics.evaluate(qd, rd, ["all_trec"], per_query=True)
    Run.from_columns(*cols)
    assert qd == qc and list(qd) == list(qc) and rd == rc and list(rd["q1"]) == list(rc["q1"])
    assert cols[0] == cols_copy[0] and cols[1] == cols_copy[1]
    assert (cols[2] == cols_copy[2]).all()


# ---------------------------------------------------------------------------------
# the command line


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "irmetrics", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=None if env is None else {**os.environ, **env},
    )


def test_cli_errors_are_one_clear_line(tmp_path: Path) -> None:
    q = write(tmp_path, "q.txt", QRELS)
    r = write(tmp_path, "r.txt", RUN + "q1 Q0 d7 1 abc r\n")
    p = cli(str(q), str(r))
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip() == f"irmetrics: {r}:4: score 'abc' is not a number " + (
        "(trec_eval would silently read only its numeric prefix, or 0)"
    )
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    p = cli("-m", "mapp", str(q), str(q))  # a bad -m is a usage error: exit 2
    assert p.returncode == 2 and "unknown measure 'mapp'" in p.stderr
    p = cli(str(q), str(tmp_path / "missing.txt"))
    assert p.returncode == 1 and "missing.txt" in p.stderr and "Traceback" not in p.stderr


def test_cli_output_is_atomic(tmp_path: Path) -> None:
    q = write(tmp_path, "q.txt", QRELS)
    r = write(tmp_path, "r.txt", RUN)
    out = tmp_path / "out.txt"
    out.write_text("previous\n")
    bad = write(tmp_path, "bad.txt", RUN + "q1 Q0 d7 1 nan r\n")
    p = cli("--output", str(out), str(q), str(bad))
    assert p.returncode == 1
    assert out.read_text() == "previous\n"  # a failed run leaves the old file alone
    p = cli("--output", str(out), str(q), str(r))
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("runid")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.txt", "out.txt", "q.txt", "r.txt"]


def cli_bytes(*args: bytes | str) -> subprocess.CompletedProcess:
    """The command line with arguments as bytes (file names need not be UTF-8)."""
    argv = [a if isinstance(a, bytes) else a.encode() for a in args]
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"irmetrics", *argv], capture_output=True, timeout=120
    )


def test_cli_writes_id_bytes_as_read_and_json_refuses_them(tmp_path: Path) -> None:
    # two queries whose ids differ only in bytes that are not UTF-8: trec and CSV write
    # the bytes as read (as trec_eval does), the table escapes them, and JSON (Unicode
    # only) refuses them by name; it used to merge both into one key "q\ufffd", rc 0
    q = write(tmp_path, "q.txt", b"q\xff 0 d 1\nq\xfe 0 d 1\n")
    r = write(tmp_path, "r.txt", b"q\xff Q0 d 1 2.0 r\nq\xfe Q0 d 2 1.0 r\n")
    p = cli_bytes("-q", "-m", "map", q.as_posix(), r.as_posix())
    assert p.returncode == 0, p.stderr
    assert b"\tq\xfe\t1.0000\n" in p.stdout and b"\tq\xff\t1.0000\n" in p.stdout
    p = cli_bytes("-q", "-m", "map", "--format", "csv", q.as_posix(), r.as_posix())
    assert p.stdout == b"query,map\nq\xfe,1.0\nq\xff,1.0\nall,1.0\n", p.stderr
    p = cli_bytes("-q", "-m", "map", "--format", "table", q.as_posix(), r.as_posix())
    lines = p.stdout.decode("ascii").splitlines()
    assert [x.split()[0] for x in lines[2:]] == ["q\\xfe", "q\\xff", "all"], lines
    out = tmp_path / "out.json"
    out.write_text("previous\n")
    p = cli_bytes("-q", "-m", "map", "--format", "json", "--output", str(out), str(q), str(r))
    assert p.returncode == 1 and p.stdout == b""
    err = p.stderr.decode()
    assert err.startswith("irmetrics: query id 'q\\xfe' (run ") and "is not UTF-8" in err, err
    assert out.read_text() == "previous\n"  # untouched
    # a run tag that is not UTF-8: written raw by trec, refused by JSON
    t = write(tmp_path, "t.txt", b"q\xff Q0 d 1 2.0 tag\xff\n")
    p = cli_bytes("-c", "-m", "runid", q.as_posix(), t.as_posix())
    assert p.stdout.endswith(b"\tall\ttag\xff\n"), p.stdout
    p = cli_bytes("-c", "-m", "map", "--format", "json", q.as_posix(), t.as_posix())
    assert p.returncode == 1 and b"the run tag 'tag\\xff'" in p.stderr, p.stderr


def test_cli_file_names_need_not_be_utf8(tmp_path: Path) -> None:
    # a file name that is not UTF-8 used to crash the console script (UnicodeEncodeError)
    q = write(tmp_path, "q.txt", QRELS)
    odd = os.fsencode(tmp_path) + b"/r\xff.txt"
    with open(odd, "wb") as f:
        f.write(RUN.encode())
    for fmt in ("trec", "csv", "table"):
        p = cli_bytes("-m", "map", "--format", fmt, str(q), odd)
        assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    p = cli_bytes("-m", "map", "--format", "table", str(q), odd)
    assert p.stdout.startswith(b"run " + os.fsencode(tmp_path) + b"/r\\xff.txt (runid r)")
    p = cli_bytes("-m", "map", "--format", "json", str(q), odd)
    assert p.returncode == 1 and p.stdout == b""
    assert b"irmetrics: the run file name '" in p.stderr and b"r\\xff.txt' is not UTF-8" in p.stderr
    # the same in-process, with bytes and surrogate-escaped str arguments
    code = f"""
        import os, irmetrics.cli
        odd = {odd!r}
        assert irmetrics.cli.main([b"-m", b"map", {str(q)!r}.encode(), odd]) == 0
        assert irmetrics.cli.main(["-m", "map", {str(q)!r}, os.fsdecode(odd)]) == 0
    """
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, timeout=120
    )
    assert p.returncode == 0 and p.stdout.count(b"map") == 2, p.stderr


def test_ids_and_run_tags_from_python_write_back_and_read_back(tmp_path: Path) -> None:
    # str ids holding surrogate escapes (bytes that are not UTF-8) are those bytes: a
    # file written by to_file holds them, and reading it gives back the same str
    qid, doc = (b.decode("utf-8", "surrogateescape") for b in (b"q\xff", b"d\xfe\xc3"))
    tag = b"tag\xff".decode("utf-8", "surrogateescape")
    run = Run.from_dict({qid: {doc: 0.5, "e": -0.0}}, name=tag)
    qrels = Qrels.from_columns([qid, qid], [doc, "e"], [1, -3])
    run.to_file(tmp_path / "r.txt")
    qrels.to_file(tmp_path / "q.txt")
    assert (tmp_path / "r.txt").read_bytes() == b"q\xff Q0 d\xfe\xc3 1 0.5 tag\xff\n" + (
        b"q\xff Q0 e 2 -0.0 tag\xff\n"
    )
    back = Run.from_file(tmp_path / "r.txt")
    assert back.to_dict() == run.to_dict() and back.runid == tag == run.runid
    assert Qrels.from_file(tmp_path / "q.txt").to_dict() == {qid: {doc: 1, "e": -3}}
    for make in (
        lambda n: Run.from_dict({"q": {"d": 1.0}}, name=n),
        lambda n: Run.from_columns(["q"], ["d"], [1.0], name=n),
        lambda n: Run.from_dataframe(
            pd.DataFrame({"qid": ["q"], "docno": ["d"], "score": [1.0]}), name=n
        ),
    ):
        for bad in ("my run", "a\tb", "a\nb", "a\x00b", " "):
            with pytest.raises(InputError, match=r"run tag '.*' holds whitespace or a NUL"):
                make(bad)
        with pytest.raises(InputError, match=r"name \(the run tag\) must be a str, got int"):
            make(7)
        assert make(None).runid == "" and make("").runid == "" and make(tag).runid == tag


# ---------------------------------------------------------------------------------
# numeric domains: every parameter checked against its domain in the catalogue
# (src/measure/family.rs), the same for every spelling and route

DOMAIN_CASES = [
    # (measure as written, canonical family, parameter)
    ("Rprec_mult.-0.5", "Rprec_mult", "multiple of R"),
    ("iprec_at_recall.1.5", "iprec_at_recall", "recall level"),
    ("iprec_at_recall_1.10", "iprec_at_recall", "recall level"),
    ("IPrec@-0.5", "iprec_at_recall", "recall level"),
    ("iprec.2", "iprec", "recall level"),
    ("iprec@2", "iprec_at_recall", "recall level"),  # ir_measures' IPrec, any case
    ("11pt_avg.0.5,1.2", "11pt_avg", "recall level"),
    ("set_F.-1", "set_F", "beta"),  # trec_eval's spelling: was accepted
    ("F(beta=-1)@10", "F_cut", "beta"),  # ir_measures' spelling: was refused
    ("F_cut_10(beta=-1)", "F_cut", "beta"),
    ("relstring.-1", "relstring", "length"),
    ("ERR(gmax=1024)@10", "err_cut", "gmax"),
    ("err_cut_10(gmax=2.5)", "err_cut", "gmax"),
    ("rbp.p=1", "rbp", "p"),
    ("rbp_resid.p=0", "rbp_resid", "p"),
    ("RBP(p=1.5)", "rbp", "p"),
    ("RBP(rel=1,p=0)", "rbp_bin", "p"),
    ("dcg_jk(b=1)@10", "dcg_jk", "b"),
    ("dcg_jk_5(b=0.5)", "dcg_jk", "b"),
    ("nDCG(ideal_all=2)@10", "ndcg_gain_cut", "ideal_all"),
]


@pytest.mark.parametrize("name,family,param", DOMAIN_CASES)
def test_parameter_outside_its_domain(tmp_path: Path, name: str, family: str, param: str) -> None:
    message = rf"measure '{family}': parameter {param} must be "
    with pytest.raises(InputError, match=message) as e:
        Evaluator(Qrels.from_string(QRELS), [name])
    assert isinstance(e.value, MeasureError)
    with pytest.raises(InputError, match=message):
        irmetrics.canonical_names(name)
    with pytest.raises(InputError, match=message):
        irmetrics.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, name)
    q, r = write(tmp_path, "q.txt", QRELS), write(tmp_path, "r.txt", RUN)
    p = cli("-m", name, str(q), str(r))
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.startswith("irmetrics: ") and f"'{family}'" in p.stderr
    assert f"parameter {param}" in p.stderr and p.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "name",
    ["rbp.p=nan", "set_F.inf", "utility.1,-1,0,nan", "ndcg.1=inf", "F(beta=inf)@10"],
)
def test_parameters_are_finite(name: str) -> None:
    with pytest.raises(InputError, match="finite number"):
        irmetrics.canonical_names(name)


@pytest.mark.parametrize(
    "name",
    [
        "Rprec_mult.0,5",
        "iprec_at_recall.0,1",
        "IPrec@1",
        "set_F.0",
        "F(beta=0)@10",
        "relstring.0",
        "ERR(gmax=1023)@10",
        "ERR(gmax=0)@10",
        "rbp.p=0.01",
        "RBP(p=0.99)",
        "dcg_jk(b=1.5)@10",
        "nDCG(ideal_all=1)@10",
        "utility.-3,1,0,0",
    ],
)
def test_parameters_at_the_edge_of_their_domain(name: str) -> None:
    assert irmetrics.evaluate(QRELS_DICT, RUN_DICT, name, per_query=True)


QRELS_DICT = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}}
RUN_DICT = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.5}}


def test_num_docs_in_collection(tmp_path: Path) -> None:
    qrels = Qrels.from_string(QRELS)  # q1 has 3 judged documents
    with pytest.raises(InputError, match=r"num_docs_in_collection \(-N\) must be 0 \(unknown\)"):
        Evaluator(qrels, "utility", num_docs_in_collection=-1)
    msg = r"num_docs_in_collection \(-N\) is 2, but query 'q1' alone has 3 judged documents"
    with pytest.raises(InputError, match=msg):
        Evaluator(qrels, "fallout@10", num_docs_in_collection=2)
    Evaluator(qrels, "fallout@10", num_docs_in_collection=3)
    q, r = write(tmp_path, "q.txt", QRELS), write(tmp_path, "r.txt", RUN + "q2 Q0 d1 2 0.1 r\n")
    for n, text in [("-1", "must be 0 (unknown)"), ("2", "alone has 3 judged documents")]:
        p = cli("-N", n, "-m", "utility", str(q), str(r))
        assert p.returncode == 2 and p.stdout == "" and "(-N)" in p.stderr and text in p.stderr
    assert cli("-N", "3", "-m", "utility", str(q), str(r)).returncode == 0


@pytest.mark.parametrize(
    "name",
    ["ndcg_burges", "nDCG(dcg='exp-log2')@10", "dcg_burges@5", "err@10", "ERR@10", "nERR@10"],
)
def test_labels_too_large_for_exponential_gains(tmp_path: Path, name: str) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0, "huge": 1100}}
    run = {"q1": {"a": 1.0}, "q2": {"huge": 1.0, "b": 0.5}}
    msg = r"query 'q2', document 'huge': label 1100 is too large: .*overflow"
    with pytest.raises(InputError, match=msg):
        irmetrics.evaluate(qrels, run, name)
    q = write(tmp_path, "q.txt", "q1 0 a 1\nq2 0 b 0\nq2 0 huge 1100\n")
    r = write(tmp_path, "r.txt", "q1 Q0 a 1 1 r\nq2 Q0 huge 1 1 r\nq2 Q0 b 2 0.5 r\n")
    p = cli("-m", name, str(q), str(r))
    assert p.returncode == 1 and p.stdout == "" and "label 1100 is too large" in p.stderr
    # linear gains, and ERR with an explicit gmax, take the same labels
    for ok in ["ndcg", "ndcg_cut.10", "ERR(gmax=4)@10", "err_cut_10(gmax=4)"]:
        values = irmetrics.evaluate(qrels, run, ok)
        assert all(v == v and abs(v) != float("inf") for v in values.values())


THREADS = r"must be a whole number from 0 to 4096, got "


def test_thread_counts_one_rule_on_every_route(tmp_path: Path) -> None:
    q, r = write(tmp_path, "q.txt", QRELS), write(tmp_path, "r.txt", RUN)
    with pytest.raises(InputError, match="n_threads " + THREADS + "5000"):
        Evaluator(Qrels.from_string(QRELS), "map", n_threads=5000)
    p = cli("--threads", "5000", "-m", "map", str(q), str(r))
    assert p.returncode == 2 and "--threads " + THREADS + "5000" in p.stderr, p.stderr
    for value in ["5000", "-2", "abc", "99999999999999999999999"]:
        p = cli("-m", "map", str(q), str(r), env={"IRMETRICS_NUM_THREADS": value})
        assert p.returncode == 2 and p.stdout == "", p.stderr
        assert p.stderr.startswith("irmetrics: IRMETRICS_NUM_THREADS " + THREADS), p.stderr
    for value in ["", "2", "4096"]:
        p = cli("-m", "map", str(q), str(r), env={"IRMETRICS_NUM_THREADS": value})
        assert p.returncode == 0, p.stderr
    # Python sees the variable when an evaluator is built
    child = (
        "import irmetrics\n"
        "try:\n"
        "    irmetrics.Evaluator(irmetrics.Qrels.from_string('q 0 d 1'), 'map')\n"
        "except irmetrics.InputError as e:\n"
        "    print(e)\n"
    )
    import os

    p = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "IRMETRICS_NUM_THREADS": "5000"},
    )
    assert p.stdout.startswith("IRMETRICS_NUM_THREADS " + THREADS + "5000"), p.stderr


@pytest.mark.parametrize("where", ["heavy", "direct"])
def test_a_panic_becomes_irmetrics_error(where: str) -> None:
    """No user input is known to panic (fuzzed); should one, Python gets an Error."""
    from irmetrics import _core

    with pytest.raises(Error, match=rf"internal error \(please report it\): .*\({where}\)"):
        _core._panic_for_tests(where)
    # and the module keeps working
    assert irmetrics.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "P.1") == {"P.1": 1.0}


def _bad_input_rows(expect: str) -> list:
    """The bad_input rows of ../shared's MANIFEST.tsv with this ``expect``. Without
    ../shared (outside CI; under CI conftest stops the session first) one explicitly
    skipped placeholder, never an empty parameter set; a manifest without such rows is
    a collection error."""
    import csv

    from conftest import require_shared

    d = require_shared()
    if d is None:
        return [pytest.param(None, id="no-shared", marks=pytest.mark.skip(reason="no ../shared"))]
    manifest = d / "conformance" / "bad_input" / "MANIFEST.tsv"
    rows = list(csv.DictReader(manifest.read_text().splitlines(), delimiter="\t"))
    chosen = [pytest.param(r, id=r["case"]) for r in rows if r["expect"] == expect]
    if not chosen:
        raise RuntimeError(f"{manifest}: no row with expect={expect!r}")
    return chosen


REJECTED_ROWS = _bad_input_rows("reject")


def test_every_rejected_row_is_collected(conformance: Path) -> None:
    """The parametrization below holds every 'reject' row of the manifest, one test
    each (18 in the suite as stored)."""
    lines = (conformance / "bad_input" / "MANIFEST.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    case, expect = header.index("case"), header.index("expect")
    rejected = [f[case] for f in (line.split("\t") for line in lines[1:]) if f[expect] == "reject"]
    assert len(rejected) == 18
    assert [p.id for p in REJECTED_ROWS] == rejected


@pytest.mark.parametrize("row", REJECTED_ROWS)
def test_conformance_rejects_get_a_clear_error(conformance: Path, row: dict) -> None:
    """Every input trec_eval rejects (or crashes on) is refused with an irmetrics.Error
    whose message points at the file, line or query."""
    from irmetrics.compat import trec_eval

    suite = conformance / "bad_input"
    qrels, run = suite / row["qrels"], suite / row["run"]
    with pytest.raises(Error) as e:
        trec_eval(str(qrels), str(run), row["flags"].split())
    msg = str(e.value)
    assert len(msg) > 20 and "\n" not in msg
    assert any(s in msg for s in ("qrels.txt", "run.txt", "query '", "queries: '")), msg


# ---------------------------------------------------------------------------------
# random junk: success or an irmetrics.Error, nothing else

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JUNK = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.text(max_size=5),
        st.binary(max_size=5),
        st.sampled_from([np.int64(3), np.float32("nan"), np.bool_(False), np.uint64(2**64 - 1)]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=3),
    ),
    max_leaves=8,
)
JUNK_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@JUNK_SETTINGS
@given(JUNK)
def test_junk_python_values(value) -> None:
    for build in (Qrels.from_dict, Run.from_dict):
        try:
            build(value)
        except Error as e:
            assert str(e)
    if isinstance(value, list) and len(value) == 3:
        for build in (Qrels.from_columns, Run.from_columns):
            try:
                build(*value)
            except Error as e:
                assert str(e)
            except TypeError:  # a column that is not iterable
                pass


LINE_BITS = st.sampled_from(
    [
        "q1",
        "q2",
        "0",
        "Q0",
        "d1",
        "d2",
        "1",
        "-1",
        "0.5",
        "inf",
        "nan",
        "1e400",
        "x",
        "#",
        " ",
        "\t",
    ]
)


@JUNK_SETTINGS
@given(st.lists(st.lists(LINE_BITS, max_size=7).map(" ".join), max_size=6), st.binary(max_size=8))
def test_junk_trec_text(lines: list[str], noise: bytes) -> None:
    text = "\n".join(lines).encode() + noise
    for build in (Qrels.from_string, Run.from_string):
        try:
            build(text)
        except (FormatError, InputError) as e:
            assert "<string>" in str(e) or "query" in str(e)


@JUNK_SETTINGS
@given(st.text(alphabet="Pndcgmap_.@,=()-0123456789rel", max_size=12))
def test_junk_measure_names(name: str) -> None:
    try:
        cols = irmetrics.canonical_names(name)
    except MeasureError as e:
        assert str(e)
    else:
        assert cols


def test_frame_duplicates_and_bad_rows_are_named_by_row() -> None:
    ev = irmetrics.Evaluator(Qrels.from_dict({"q": {"a": 1}, "r": {"b": 1}}), "map")
    df = pd.DataFrame({"q_id": ["q", "q", "r"], "doc_id": ["a", "a", "b"], "score": [1.0, 2, 3]})
    with pytest.raises(
        FormatError,
        match=r"run, row 1: document 'a' appears twice for query 'q' \(first at row 0\)",
    ):
        ev.evaluate(df)
    with pytest.raises(FormatError, match=r"run, row 2: .* \(first at row 0\)"):
        ev.evaluate(df.iloc[[0, 2, 1]])  # rows of q apart: grouped first
    with pytest.raises(FormatError, match="document id at row 1 must be a str, got int"):
        ev.evaluate(pd.DataFrame({"q_id": ["q", "r"], "doc_id": ["a", 7], "score": [1.0, 2]}))
    with pytest.raises(FormatError, match="score of document 'b' for query 'r' is NaN"):
        ev.evaluate({"q": {"a": 1.0}, "r": {"b": float("nan")}})


# data frames: column labels and missing values, named where the frame comes in

FRAME = {"qid": ["q", "q", "r"], "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
QFRAME = {"qid": ["q", "q", "r"], "docno": ["a", "b", "c"], "rel": [1, 0, 2]}
EV = irmetrics.Evaluator(Qrels.from_dict({"q": {"a": 1}, "r": {"c": 1}}), "map")
FRAME_ROUTES = {
    "Run.from_dataframe": Run.from_dataframe,
    "Evaluator.evaluate": EV.evaluate,
    "irmetrics.evaluate": lambda df: irmetrics.evaluate({"q": {"a": 1}}, df, "map"),
}


@pytest.mark.parametrize("route", FRAME_ROUTES)
def test_frame_multiindex_and_duplicate_columns_are_named(route: str) -> None:
    # both used to get wrong messages: "expected a pandas DataFrame", and "score at row 0
    # must be a number, got str ('score')" (the two 'score' columns read as one frame)
    take = FRAME_ROUTES[route]
    mi = pd.DataFrame(FRAME)
    mi.columns = pd.MultiIndex.from_tuples([("run", c) for c in FRAME])
    with pytest.raises(InputError, match=r"columns are a MultiIndex \(2 levels.*flatten them"):
        take(mi)
    dup = pd.concat([pd.DataFrame(FRAME), pd.DataFrame({"score": [0.0, 0.0, 0.0]})], axis=1)
    with pytest.raises(InputError, match=r"has 2 columns named 'score' \(the score column\)"):
        take(dup)
    # duplicates among columns that are not used are harmless
    x = pd.DataFrame({"x": [0, 0, 0]})
    take(pd.concat([pd.DataFrame(FRAME), x, x], axis=1))
    qmi = pd.DataFrame(QFRAME)
    qmi.columns = pd.MultiIndex.from_tuples([("j", c) for c in QFRAME])
    with pytest.raises(InputError, match="MultiIndex"):
        Qrels.from_dataframe(qmi)


MISSING = [
    # (column, values, dtype): the value at position 1 is missing
    ("qid", ["q", None, "r"], None),
    ("qid", ["q", float("nan"), "r"], object),
    ("qid", ["q", pd.NA, "r"], object),
    ("qid", ["q", None, "r"], "string"),
    ("docno", ["a", None, "c"], object),
    ("docno", ["a", pd.NA, "c"], "string"),
    ("score", [3.0, np.nan, 1.0], None),
    ("score", [3.0, None, 1.0], object),
    ("score", [3.0, None, 1.0], "Float64"),
]


@pytest.mark.parametrize("route", FRAME_ROUTES)
@pytest.mark.parametrize("column,values,dtype", MISSING)
def test_frame_missing_values_are_named_by_column_and_position(
    route: str, column: str, values: list, dtype: object
) -> None:
    # the row is the position (df.iloc), whatever the index; it used to be "query id at
    # row 1 must be a str, got float (nan)" without the column, and for nullable labels
    # the wrong row and kind
    df = pd.DataFrame(FRAME, index=[10, 20, 30])
    df[column] = pd.array(values, dtype=dtype) if dtype else values
    what = {"qid": "query id", "docno": "document id", "score": "score"}[column]
    with pytest.raises(
        FormatError, match=rf"^run, row 1: the {what} column '{column}' holds a missing value"
    ):
        FRAME_ROUTES[route](df)


@pytest.mark.parametrize(
    "column,values,dtype",
    [
        ("rel", [1, None, 2], "Int64"),
        ("rel", [1.0, np.nan, 2.0], None),
        ("rel", [1, None, 2], object),
        ("qid", ["q", None, "r"], None),
        ("docno", ["a", pd.NA, "c"], "string"),
    ],
)
def test_qrels_frame_missing_values_are_named(column: str, values: list, dtype: object) -> None:
    df = pd.DataFrame(QFRAME, index=["x", "y", "z"])
    df[column] = pd.array(values, dtype=dtype) if dtype else values
    what = {"qid": "query id", "docno": "document id", "rel": "label"}[column]
    with pytest.raises(
        FormatError, match=rf"^qrels, row 1: the {what} column '{column}' holds a missing value"
    ):
        Qrels.from_dataframe(df)
    with pytest.raises(FormatError, match=r"^qrels, row 1: "):
        irmetrics.evaluate(df, {"q": {"a": 1.0}}, "map")


def test_frame_missing_value_reported_is_the_first_row_and_clean_frames_convert() -> None:
    df = pd.DataFrame(
        {"qid": ["q", "q", "r", None], "docno": ["a", "b", None, "d"], "score": [1.0] * 4}
    )
    with pytest.raises(FormatError, match="^run, row 2: the document id column 'docno'"):
        Run.from_dataframe(df)
    # nullable dtypes without missing values are data like any other
    ok = pd.DataFrame(FRAME)
    ok["qid"] = pd.array(FRAME["qid"], dtype="string")
    ok["score"] = pd.array(FRAME["score"], dtype="Float64")
    assert Run.from_dataframe(ok).to_dict() == {"q": {"a": 3.0, "b": 2.0}, "r": {"c": 1.0}}
    q = pd.DataFrame(QFRAME)
    q["rel"] = pd.array(QFRAME["rel"], dtype="Int64")
    assert Qrels.from_dataframe(q).to_dict() == {"q": {"a": 1, "b": 0}, "r": {"c": 2}}
