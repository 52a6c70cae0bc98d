"""Progress of long work (issue 15, item 8): ``progress=`` on ``evaluate``,
``Evaluator.evaluate``, ``compare`` and ``optimize_fusion`` (a callable called as
``callback(done, total)`` on the calling thread; ``True``: tqdm's bar, or a line on
stderr without tqdm), and the command line's bar on stderr when stderr is a terminal
(never when piped). The counts expected are computed here from the inputs (queries
judged, resamples asked for, settings of ranx's grid); the numbers with and without
progress must be identical; a callback that raises stops the work promptly."""

from __future__ import annotations

import io
import os
import pty
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tqdm.auto

import irmetrics

MEASURES = ["map", "ndcg_cut.10", "P.5", "recall.100"]


def _generated(nq: int, nd: int, seed: int, n_runs: int = 1):
    rng = random.Random(seed)
    qrels = {f"q{q}": {f"d{d}": rng.randint(0, 2) for d in range(0, nd, 3)} for q in range(nq)}
    runs = [
        {f"q{q}": {f"d{d}": rng.random() for d in range(nd)} for q in range(nq)}
        for _ in range(n_runs)
    ]
    return qrels, runs


@pytest.fixture(scope="module")
def big() -> tuple[irmetrics.Qrels, list[irmetrics.Run], int]:
    nq = 4000
    qrels, runs = _generated(nq, 300, 7, n_runs=2)
    return (
        irmetrics.Qrels.from_dict(qrels),
        [irmetrics.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)],
        nq,
    )


def _check_calls(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "the callback was never called"
    dones = [d for d, _ in calls]
    totals = [t for _, t in calls]
    assert dones == sorted(dones), calls
    assert totals == sorted(totals), calls
    assert all(0 <= d <= t for d, t in calls), calls
    assert calls[-1] == (total, total), calls


def test_evaluate_callback_counts_queries_and_changes_nothing(big) -> None:
    qrels, runs, nq = big
    calls: list[tuple[int, int]] = []
    with_progress = irmetrics.evaluate(
        qrels, runs[0], MEASURES, per_query=True, progress=lambda d, t: calls.append((d, t))
    )
    _check_calls(calls, nq)
    assert with_progress == irmetrics.evaluate(qrels, runs[0], MEASURES, per_query=True)


def test_evaluator_method_path_and_table_routes(big, tmp_path: Path) -> None:
    qrels, runs, nq = big
    ev = irmetrics.Evaluator(qrels, MEASURES)
    path = tmp_path / "run.txt"
    runs[0].to_file(path)
    for route in (runs[0], str(path)):
        seen: list[tuple[int, int]] = []
        assert ev.evaluate(route, progress=lambda d, t, seen=seen: seen.append((d, t))) == (
            ev.evaluate(route)
        )
        # a TREC file counts its KiB as it is read, then the queries
        kib = path.stat().st_size // 1024 if isinstance(route, str) else 0
        assert kib > 100 or not isinstance(route, str)
        _check_calls(seen, kib + nq)
    calls: list[tuple[int, int]] = []
    ids, cols, values, summary = irmetrics.evaluate(
        qrels, runs[0], MEASURES, output="numpy", progress=lambda d, t: calls.append((d, t))
    )
    _check_calls(calls, nq)
    ids2, cols2, values2, summary2 = irmetrics.evaluate(qrels, runs[0], MEASURES, output="numpy")
    assert (ids, cols) == (ids2, cols2)
    assert (values == values2).all() and (summary == summary2).all()


def test_a_run_file_counts_its_kib_as_it_is_read(big, tmp_path: Path) -> None:
    """Reading is counted in KiB of the file (gzip: of the compressed file) before the
    queries."""
    import gzip

    qrels, runs, nq = big
    plain = tmp_path / "run.txt"
    runs[0].to_file(plain)
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        calls: list[tuple[int, int]] = []
        irmetrics.evaluate(
            qrels, str(path), MEASURES, progress=lambda d, t, calls=calls: calls.append((d, t))
        )
        _check_calls(calls, path.stat().st_size // 1024 + nq)


def test_dict_runs_report_once_at_the_end() -> None:
    qrels, runs = _generated(50, 20, 3)
    calls: list[tuple[int, int]] = []
    res = irmetrics.evaluate(qrels, runs[0], ["map"], progress=lambda d, t: calls.append((d, t)))
    assert calls == [(50, 50)]
    assert res == irmetrics.evaluate(qrels, runs[0], ["map"])


def test_compare_randomization_counts_evaluations_and_resamples(big) -> None:
    qrels, runs, nq = big
    n_resamples = 100_000
    named = {"a": runs[0], "b": runs[1]}
    calls: list[tuple[int, int]] = []
    kw = dict(test="randomization", n_resamples=n_resamples, seed=3)
    rep = irmetrics.compare(
        qrels, named, ["map", "P.5"], progress=lambda d, t: calls.append((d, t)), **kw
    )
    # two runs of nq queries evaluated, then n_resamples sign flips per measure
    _check_calls(calls, 2 * nq + 2 * n_resamples)
    assert rep.to_json() == irmetrics.compare(qrels, named, ["map", "P.5"], **kw).to_json()


def test_compare_other_tests_count_one_unit_per_measure(big) -> None:
    qrels, runs, nq = big
    calls: list[tuple[int, int]] = []
    irmetrics.compare(
        qrels,
        {"a": runs[0], "b": runs[1]},
        ["map", "P.5", "ndcg_cut.10"],
        test="t",
        progress=lambda d, t: calls.append((d, t)),
    )
    _check_calls(calls, 2 * nq + 3)


def test_optimize_fusion_counts_settings() -> None:
    qrels, runs = _generated(300, 60, 5, n_runs=2)
    q = irmetrics.Qrels.from_dict(qrels)
    rs = [irmetrics.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]
    calls: list[tuple[int, int]] = []
    best, report = irmetrics.optimize_fusion(
        q,
        rs,
        "wsum",
        metric="map",
        return_optimization_report=True,
        progress=lambda d, t: calls.append((d, t)),
    )
    # ranx's grid for two runs: weights 0.0, 0.1, ..., 1.0 whose pair sums to 1.0
    grid = [round(0.1 * i, 1) for i in range(11)]
    settings = [(a, b) for a in grid for b in grid if a + b == 1.0]
    assert len(report) == len(settings)
    _check_calls(calls, len(settings))
    assert (best, report) == irmetrics.optimize_fusion(
        q, rs, "wsum", metric="map", return_optimization_report=True
    )


def test_callback_raising_keyboard_interrupt_stops_promptly(big) -> None:
    qrels, runs, nq = big
    seen: list[tuple[int, int]] = []

    def stop(done: int, total: int) -> None:
        seen.append((done, total))
        raise KeyboardInterrupt

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        # millions of resamples of 4000 queries: many seconds if not stopped
        irmetrics.compare(
            qrels,
            {"a": runs[0], "b": runs[1]},
            ["map"],
            test="randomization",
            n_resamples=5_000_000,
            progress=stop,
        )
    assert time.monotonic() - start < 3.0
    # one call, before the work was done: inside a phase, or between the evaluation of
    # the two runs and the resampling, where the first poll (100 ms in) may find
    # (8000, 8000) on a busy machine (a CI run did): the resamples never announced
    assert len(seen) == 1
    done, _ = seen[0]
    assert done < 2 * nq + 5_000_000, seen


def test_exception_in_callback_propagates(big) -> None:
    qrels, runs, _ = big

    def boom(done: int, total: int) -> None:
        raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback"):
        irmetrics.evaluate(qrels, runs[0], MEASURES, progress=boom)
    # the evaluator still works afterwards
    assert irmetrics.evaluate(qrels, runs[0], ["map"]) == irmetrics.evaluate(
        qrels, runs[0], ["map"], progress=False
    )


def test_bad_progress_argument(big) -> None:
    qrels, runs, _ = big
    with pytest.raises(irmetrics.InputError, match="progress must be"):
        irmetrics.evaluate(qrels, runs[0], ["map"], progress=3)
    with pytest.raises(irmetrics.InputError, match="stream=True"):
        irmetrics.evaluate(qrels, "run.txt", ["map"], stream=True, progress=True)


class _FakeTqdm:
    made: list[_FakeTqdm] = []

    def __init__(self, total: int, **kw: object) -> None:
        self.total, self.n, self.kw = total, 0, kw
        self.refreshes: list[tuple[int, int]] = []
        self.closed = False
        _FakeTqdm.made.append(self)

    def refresh(self) -> None:
        self.refreshes.append((self.n, self.total))

    def close(self) -> None:
        self.closed = True


def test_progress_true_drives_tqdm(big, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs, nq = big
    monkeypatch.setenv("IRMETRICS_PROGRESS_DELAY", "0")
    monkeypatch.setattr(tqdm.auto, "tqdm", _FakeTqdm)
    _FakeTqdm.made.clear()
    res = irmetrics.evaluate(qrels, runs[0], MEASURES, progress=True)
    assert res == irmetrics.evaluate(qrels, runs[0], MEASURES)
    [bar] = _FakeTqdm.made
    _check_calls(bar.refreshes, nq)
    assert bar.closed


def test_progress_true_real_tqdm_writes_its_bar(big, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs, nq = big
    monkeypatch.setenv("IRMETRICS_PROGRESS_DELAY", "0")
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    irmetrics.evaluate(qrels, runs[0], MEASURES, progress=True)
    text = err.getvalue()
    assert "irmetrics" in text and f"{nq}/{nq}" in text and "100%" in text, text


def test_progress_true_without_tqdm_writes_a_line(big, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs, nq = big
    monkeypatch.setenv("IRMETRICS_PROGRESS_DELAY", "0")
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    irmetrics.evaluate(qrels, runs[0], MEASURES, progress=True)
    assert err.getvalue().endswith(f"100% {nq}/{nq}\n"), err.getvalue()


def test_progress_true_short_work_shows_nothing(big, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs, _ = big
    monkeypatch.delenv("IRMETRICS_PROGRESS_DELAY", raising=False)
    monkeypatch.setattr(tqdm.auto, "tqdm", _FakeTqdm)
    _FakeTqdm.made.clear()
    irmetrics.evaluate(qrels, runs[0], ["P.5"], progress=True)  # well under 2 s
    assert _FakeTqdm.made == []


# --- the command line -------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory: pytest.TempPathFactory, big) -> list[str]:
    qrels, runs, _ = big
    d = tmp_path_factory.mktemp("progress_cli")
    qrels.to_file(d / "qrels.txt")
    paths = [d / "a.txt", d / "b.txt"]
    for r, p in zip(runs, paths):
        r.to_file(p)
    return [str(d / "qrels.txt"), *map(str, paths)]


def _cli(args: list[str], *, terminal: bool, extra_env: dict[str, str] | None = None):
    """Run the command line with stdout piped and stderr a pseudo-terminal (or a pipe):
    (stdout, stderr)."""
    env = dict(os.environ, IRMETRICS_PROGRESS_DELAY="0", **(extra_env or {}))
    cmd = [sys.executable, "-m", "irmetrics", *args]
    if not terminal:
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout, p.stderr
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    finally:
        os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read()
    assert proc.wait(timeout=120) == 0, err
    return out, err


COMPARE = ["compare", "--test", "randomization", "--n-resamples", "300000", "-m", "map"]


def test_cli_compare_bar_on_a_terminal_only(cli_files: list[str]) -> None:
    out_tty, err_tty = _cli([*COMPARE, *cli_files], terminal=True)
    out_pipe, err_pipe = _cli([*COMPARE, *cli_files], terminal=False)
    assert b"irmetrics [" in err_tty and b"%" in err_tty, err_tty
    assert err_tty.endswith(b"\r\x1b[K"), err_tty[-80:]  # erased at the end
    assert err_pipe == b""
    assert out_tty == out_pipe and out_pipe.strip()
    # IRMETRICS_PROGRESS=0 silences it on a terminal too
    out_off, err_off = _cli(
        [*COMPARE, *cli_files], terminal=True, extra_env={"IRMETRICS_PROGRESS": "0"}
    )
    assert b"irmetrics [" not in err_off and out_off == out_pipe
    out_flag, err_flag = _cli(
        [COMPARE[0], "--no-progress", *COMPARE[1:], *cli_files], terminal=True
    )
    assert b"irmetrics [" not in err_flag and out_flag == out_pipe


def test_cli_evaluation_and_fuse_optimize_same_stdout(cli_files: list[str]) -> None:
    qrels, a, b = cli_files
    for args in (
        ["-m", "map", "-m", "ndcg_cut.10", qrels, a, b],
        ["fuse", "--optimize", "--metric", "map", qrels, a, b],
    ):
        out_tty, _ = _cli(args, terminal=True)
        out_pipe, err_pipe = _cli(args, terminal=False)
        assert out_tty == out_pipe and out_pipe.strip()
        assert err_pipe == b""


def test_ctrl_c_stops_work_with_a_progress_callback(cli_files: list[str]) -> None:
    """A real SIGINT while a callback is reporting: KeyboardInterrupt, promptly."""
    script = f"""
import sys, irmetrics
qrels = irmetrics.Qrels.from_file({cli_files[0]!r})
runs = {{"a": irmetrics.Run.from_file({cli_files[1]!r}),
        "b": irmetrics.Run.from_file({cli_files[2]!r})}}
def report(done, total):
    if done:
        print("busy", flush=True)
try:
    irmetrics.compare(qrels, runs, ["map"], test="randomization", n_resamples=5_000_000,
                      progress=report)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""
    p = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "busy"
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("Ctrl-C did not stop the work")
    assert time.monotonic() - start < 3.0
    assert p.returncode == 0 and out.rstrip().endswith("interrupted"), out
