"""Bad input to fusion and normalization: a clear ``irmetrics.Error`` (never a panic),
and from the command line exit status 2 or 1 with nothing written."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import irmetrics

A = {"q1": {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}}
B = {"q1": {"b": 1.0, "d": 0.5}}


def runs() -> list[irmetrics.Run]:
    return [irmetrics.Run.from_dict(A, name="a"), irmetrics.Run.from_dict(B, name="b")]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": runs()[:1]}, "fusion needs at least two runs, got 1"),
        ({"runs": []}, "fusion needs at least two runs, got 0"),
        ({"method": "wsum"}, "needs weights, one per run (2)"),
        ({"method": "wsum", "params": {"weights": [1.0]}}, "1 weights given for 2 runs"),
        ({"method": "wsum", "params": {"weights": [1.0, -1.0]}}, "weight 2 is -1"),
        ({"method": "wsum", "params": {"weights": [1.0, math.nan]}}, "weight 2 is NaN"),
        ({"method": "wsum", "params": {"weights": [1.0, "x"]}}, "each weight must be a number"),
        ({"method": "wsum", "params": {"weights": "0.5,0.5"}}, "weights must be a sequence"),
        ({"method": "rbc"}, "needs the parameter 'phi'"),
        ({"method": "rbc", "params": {"phi": 2.0}}, "must be a number from 0 to 1"),
        ({"method": "rrf", "params": {"kk": 1}}, "has no parameter 'kk'; it takes 'k'"),
        ({"method": "rrf", "params": {"k": True}}, "parameter 'k' must be a number"),
        ({"method": "sum", "params": {"weights": [1, 1]}}, "takes no parameter"),
        ({"method": "probfuse"}, "trained on qrels"),
        ({"method": "rrf", "qrels": {"q1": {"a": 1}}}, "not trained on qrels"),
        ({"method": "probfuse", "qrels": {"q1": {"a": 1}}}, "needs the parameter 'n_segments'"),
        (
            {"method": "slidefuse", "qrels": {"q1": {"a": 1}}, "params": {"w": 1.5}},
            "must be a whole number",
        ),
        ({"method": "rff"}, "unknown fusion method 'rff'; did you mean 'rrf'"),
        ({"norm": "minmax"}, "unknown normalization 'minmax'; did you mean 'min-max'"),
        ({"runs": [A, {}]}, "run 2 is empty"),
        ({"runs": "run.txt"}, "runs must be a list of runs"),
        # one run's dict where runs are expected: said so, not "query 'd1' must be a dict"
        (
            {"runs": {"q1": {"d1": 0.5, "d2": 0.1}, "q2": {"d1": 1.0}}},
            "runs['q1'] is a dict of scores, not a run: runs looks like one run",
        ),
        ({"runs": {1: A, 2: A}}, "must be {name: run} with str names, got the key 1"),
        ({"name": "a b"}, "whitespace"),
    ],
)
def test_bad_fusion_input_is_a_clear_error(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"runs": runs(), "method": "rrf", **kwargs}
    with pytest.raises(irmetrics.InputError) as e:
        irmetrics.fuse(**args)
    assert message in str(e.value)


def test_normalize_errors() -> None:
    with pytest.raises(irmetrics.InputError, match="did you mean 'zmuv'"):
        irmetrics.normalize(runs()[0], "zmvu")
    with pytest.raises(irmetrics.InputError, match="run 1 is empty"):
        irmetrics.normalize({}, "max")


def test_fused_run_is_a_run() -> None:
    fused = irmetrics.fuse(runs(), "rrf", name="hybrid")
    assert fused.runid == "hybrid" and fused.num_results == 4
    assert sorted(irmetrics.fusion_methods()[1]) == sorted(
        ["min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"]
    )
    assert len(irmetrics.fusion_methods()[0]) == 25


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "irmetrics", "fuse", *args], capture_output=True, timeout=120
    )


def test_cli_fuse_writes_with_o_or_output(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("q1 Q0 x 1 2.0 a\nq1 Q0 y 2 1.0 a\n")
    b.write_text("q1 Q0 y 1 5.0 b\n")
    printed = cli("--method", "rrf", str(a), str(b))
    # RRF, k = 60: y 1/62 + 1/61 first, x 1/61
    assert printed.returncode == 0 and printed.stdout.split()[2::6] == [b"y", b"x"]
    for flag in ("-o", "--output"):
        dest = tmp_path / f"fused{flag}.run"
        out = cli("--method", "rrf", flag, str(dest), str(a), str(b))
        assert out.returncode == 0 and out.stdout == b"", out.stderr
        assert dest.read_bytes() == printed.stdout


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--method", "wsum", "--weights", "1"], 2, b"1 weights given for 2 runs"),
        (["--method", "wsum", "--weights", "1,x"], 2, b"--weights needs a number, got 'x'"),
        (["--norm", "zmu"], 2, b"did you mean 'zmuv'"),
        (["--param", "k"], 2, b"needs NAME=VALUE"),
        (["--method", "rbc"], 2, b"needs the parameter 'phi'"),
        (["--method", "probfuse", "--param", "n_segments=2"], 2, b"trained on qrels"),
    ],
)
def test_cli_fuse_refuses_and_writes_nothing(
    args: list[str], status: int, message: bytes, tmp_path: Path
) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("q1 Q0 x 1 2.0 a\nq1 Q0 y 2 1.0 a\n")
    b.write_text("q1 Q0 y 1 5.0 b\n")
    dest = tmp_path / "out.txt"
    out = cli(*args, "--output", str(dest), str(a), str(b))
    assert out.returncode == status
    assert message in out.stderr
    assert not dest.exists() and out.stdout == b""
    # one run, an empty run, a missing file
    assert cli(str(a)).returncode == 2
    (tmp_path / "empty.txt").write_text("")
    out = cli("--output", str(dest), str(a), str(tmp_path / "empty.txt"))
    assert out.returncode == 1 and not dest.exists(), out.stderr
    out = cli("--output", str(dest), str(a), str(tmp_path / "missing.txt"))
    assert out.returncode == 1 and not dest.exists(), out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "sum"], b"has no parameter to optimize"),
        (["--metric", "nope@3"], b"unknown measure 'nope@3'"),
        (["--metric", "P@5,10"], b"needs one measure with one value"),
        (["--method", "rrf", "--step", "2.5"], b"must be a whole number"),
    ],
)
def test_cli_optimize_refuses_and_writes_nothing(
    args: list[str], message: bytes, tmp_path: Path
) -> None:
    q, a, b = tmp_path / "q.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    q.write_text("q1 0 x 1\n")
    a.write_text("q1 Q0 x 1 2.0 a\nq1 Q0 y 2 1.0 a\n")
    b.write_text("q1 Q0 y 1 5.0 b\n")
    dest = tmp_path / "out.txt"
    out = cli("--optimize", *args, "--output", str(dest), str(q), str(a), str(b))
    assert out.returncode == 2, out.stderr
    assert message in out.stderr
    assert not dest.exists() and out.stdout == b""


def test_runs_from_files_dicts_and_frames_fuse_alike(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    a_path = tmp_path / "a.txt"
    irmetrics.Run.from_dict(A, name="a").to_file(a_path)
    frame = pd.DataFrame(
        [(q, d, s) for q, docs in B.items() for d, s in docs.items()],
        columns=["q_id", "doc_id", "score"],
    )
    expect = irmetrics.fuse(runs(), "mnz", "min-max").to_dict()
    assert irmetrics.fuse([str(a_path), frame], "mnz", "min-max").to_dict() == expect
    assert irmetrics.fuse((r for r in [A, B]), "mnz", "min-max").to_dict() == expect
    assert irmetrics.normalize(str(a_path), "rank").to_dict() == {
        "q1": {"a": 1.0, "b": 0.5},
        "q2": {"c": 1.0},
    }
