"""The ``irmetrics`` command line: trec_eval's bytes, compressed and piped inputs, formats."""

from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "irmetrics", *args], input=stdin, capture_output=True, timeout=120
    )


@pytest.fixture(scope="module")
def v01(conformance: Path) -> dict[str, Path]:
    d = conformance / "generated" / "v01_binary_basic"
    return {
        "qrels": d / "qrels.txt",
        "run": d / "run.txt",
        "expected": d / "expected" / "default.trec_eval.txt",
        "json": d / "expected" / "default.full.json",
    }


def test_gzip_and_stdin_give_trec_eval_bytes(v01: dict[str, Path], tmp_path: Path) -> None:
    expected = v01["expected"].read_bytes()
    gz_run = tmp_path / "run.gz"  # detected by content, not by name
    gz_run.write_bytes(gzip.compress(v01["run"].read_bytes()))
    gz_qrels = tmp_path / "qrels.txt.gz"
    gz_qrels.write_bytes(gzip.compress(v01["qrels"].read_bytes()))
    out = cli("-q", "-m", "all_trec", str(gz_qrels), str(gz_run))
    assert out.returncode == 0, out.stderr
    assert out.stdout == expected
    piped = cli("-q", "-m", "all_trec", str(v01["qrels"]), "-", stdin=v01["run"].read_bytes())
    assert piped.stdout == expected
    streamed = cli("--stream", "-q", "-m", "all_trec", str(v01["qrels"]), str(gz_run))
    assert streamed.stdout == expected


def test_no_summary_flag(v01: dict[str, Path]) -> None:
    out = cli("-q", "-n", "-m", "map", str(v01["qrels"]), str(v01["run"]))
    lines = out.stdout.decode().splitlines()
    assert lines and all("\tall\t" not in line for line in lines)


def test_json_csv_table_formats(v01: dict[str, Path]) -> None:
    exp = json.loads(v01["json"].read_text())
    args = ["-q", "-m", "map", "-m", "P.5", "-m", "num_rel", str(v01["qrels"]), str(v01["run"])]
    doc = json.loads(cli("--format", "json", *args).stdout)
    assert doc["num_q"] == exp["num_q"]["all"]
    assert doc["all"]["map"] == pytest.approx(exp["map"]["all"], abs=1e-12)
    assert doc["all"]["num_rel"] == exp["num_rel"]["all"]
    assert set(doc["per_query"]) == set(exp["P_5"]) - {"all"}
    for qid, vals in doc["per_query"].items():
        assert vals["P_5"] == pytest.approx(exp["P_5"][qid], abs=1e-12)
    rows = list(csv.DictReader(io.StringIO(cli("--format", "csv", *args).stdout.decode())))
    assert rows[-1]["query"] == "all"
    assert float(rows[-1]["map"]) == pytest.approx(exp["map"]["all"], abs=1e-12)
    assert float(rows[0]["P_5"]) == pytest.approx(exp["P_5"][rows[0]["query"]], abs=1e-12)
    table = cli("--format", "table", *args).stdout.decode()
    assert f"{exp['map']['all']:.4f}" in table.splitlines()[-1]


def test_json_and_csv_per_query_give_trec_eval_values_in_its_order(conformance: Path) -> None:
    """Per-query JSON and CSV are written in parallel chunks of queries (45 at a time
    for all_trec's 90 columns; this case has 50 queries): every value is trec_eval's,
    the queries in trec_eval's order."""
    d = conformance / "generated" / "v10_trec_like"
    exp = json.loads((d / "expected" / "default.full.json").read_text())
    trec_lines = (d / "expected" / "default.trec_eval.txt").read_text().splitlines()
    trec_order = list(dict.fromkeys(line.split("\t")[1] for line in trec_lines))
    trec_order.remove("all")
    assert len(trec_order) > 45
    args = ["-q", "-m", "all_trec", "--threads", "3", str(d / "qrels.txt"), str(d / "run.txt")]
    doc = json.loads(cli("--format", "json", *args).stdout)
    assert list(doc["per_query"]) == trec_order
    rows = list(csv.DictReader(io.StringIO(cli("--format", "csv", *args).stdout.decode())))
    assert [r["query"] for r in rows] == [*trec_order, "all"]
    checked = 0
    for qid, row in zip(trec_order, rows):
        for measure, values in exp.items():
            if qid in values and measure not in ("runid", "relstring"):
                assert doc["per_query"][qid][measure] == pytest.approx(values[qid], abs=1e-12)
                assert float(row[measure]) == pytest.approx(values[qid], abs=1e-12)
                checked += 1
    assert checked > 40 * 80


def test_several_runs_are_told_apart_in_every_format(conformance: Path) -> None:
    """Two runs on one command line: trec text is trec_eval's block for each run after a
    `# run FILE` line; CSV has a run column and one header, JSON is one document, the
    table puts the runs side by side; every value is trec_eval's."""
    suite = conformance / "trec_eval_suite"
    qrels, runs = suite / "qrels.test", [suite / "results.test", suite / "results.trunc"]
    # -c changes nothing for results.test (every judged query has results)
    expected = [suite / "out.test.aq", suite / "out.test.aqc"]
    full = [
        json.loads((suite / "full" / f"{c}.full.json").read_text()) for c in ("test_aq", "test_aqc")
    ]
    args = ["-c", "-q", "-m", "all_trec", str(qrels), *map(str, runs)]
    out = cli(*args)
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"".join(
        f"# run {run}\n".encode() + exp.read_bytes() for run, exp in zip(runs, expected)
    )
    rows = list(csv.DictReader(io.StringIO(cli("--format", "csv", *args).stdout.decode())))
    assert [r["run"] for r in rows if r["query"] == "all"] == [str(r) for r in runs]
    assert len(rows) == sum(len(f["map"]) for f in full)  # per-query rows and "all" rows
    for row in rows:
        values = full[[str(r) for r in runs].index(row["run"])]
        assert float(row["map"]) == pytest.approx(values["map"][row["query"]], abs=1e-12)
    doc = json.loads(cli("--format", "json", *args).stdout)
    assert [d["run"] for d in doc["runs"]] == [str(r) for r in runs]
    for d, values in zip(doc["runs"], full):
        assert d["all"]["map"] == pytest.approx(values["map"]["all"], abs=1e-12)
        for qid, per in d["per_query"].items():
            assert per["P_5"] == pytest.approx(values["P_5"][qid], abs=1e-12)
    table = cli("--format", "table", "-c", "-m", "map", str(qrels), *map(str, runs))
    lines = table.stdout.decode().splitlines()
    assert lines[0].split() == ["query", "measure", *map(str, runs)]
    assert lines[1].split() == ["all", "map", *(f"{f['map']['all']:.4f}" for f in full)]


def test_output_file_is_written_whole(v01: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    out = cli("-q", "-m", "all_trec", "--output", str(target), str(v01["qrels"]), str(v01["run"]))
    assert out.returncode == 0 and out.stdout == b""
    assert target.read_bytes() == v01["expected"].read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary left


def test_missing_query_error_says_to_pass_c(conformance: Path) -> None:
    d = conformance / "bad_input" / "b03_judged_query_missing_from_run"
    out = cli("-m", "map", str(d / "qrels.txt"), str(d / "run.txt"))
    assert out.returncode == 1
    assert b"'q3'" in out.stderr and b"-c" in out.stderr


def test_unknown_measure_suggests(v01: dict[str, Path]) -> None:
    out = cli("-m", "ndgc_cut.10", str(v01["qrels"]), str(v01["run"]))
    assert out.returncode == 2  # a bad -m is a usage error
    assert b"did you mean" in out.stderr and b"ndcg_cut" in out.stderr


def test_usage_errors_exit_2(v01: dict[str, Path]) -> None:
    assert cli(str(v01["qrels"])).returncode == 2
    assert cli("-M", "0", str(v01["qrels"]), str(v01["run"])).returncode == 2
    assert cli("--format", "xml", str(v01["qrels"]), str(v01["run"])).returncode == 2
    assert cli("--help").returncode == 0


DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    "args",
    [
        ["-q", "-m", "all_trec", "dl19-passage.qrels", "dl19-synthetic.run"],
        ["--stream", "-q", "-m", "all_trec", "dl19-passage.qrels", "dl19-synthetic.run"],
        ["fuse", "--method", "rrf", "dl19-bm25.run", "dl19-dense.run"],
    ],
    ids=["per-query", "stream", "fuse"],
)
def test_a_closed_pipe_ends_the_command_quietly(args: list[str]) -> None:
    """`irmetrics ... | head -1`: once the reader has gone the command stops with status
    1 and says nothing (it said "cannot write <stdout>: Broken pipe"), as trec_eval and
    the shell's tools do."""
    files = [str(DATA / a) if (DATA / a).exists() else a for a in args]
    with subprocess.Popen(
        [sys.executable, "-m", "irmetrics", *files], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as p:
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.read(100)  # (a buffer of at most 8 KiB read)
        p.stdout.close()  # more than a pipe's 64 KiB is still to come
        err = p.stderr.read()
        assert p.wait(timeout=120) == 1, err
    assert first and err == b""


CLOSED_STDOUT = """
import sys
import irmetrics.cli


class Closed:  # standard output whose reader has gone
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass

    def fileno(self):
        return 1


sys.stdout = Closed()
sys.exit(irmetrics.cli.main(sys.argv[1:]))
"""


def test_report_to_a_closed_pipe_ends_quietly() -> None:
    """`irmetrics report -o - ... | head`, the page written by Python: status 1 and no
    BrokenPipeError traceback (standard output is replaced here by one that raises it:
    whether a real pipe's write fails or the process is stopped by SIGPIPE differs
    between kernels)."""
    args = ["report", "-o", "-", "-m", "P@5", str(DATA / "dl19-passage.qrels")]
    args += [str(DATA / "dl19-bm25.run"), str(DATA / "dl19-dense.run")]
    out = subprocess.run(
        [sys.executable, "-c", CLOSED_STDOUT, *args], capture_output=True, timeout=120
    )
    assert (out.returncode, out.stderr) == (1, b"")
