"""Concurrency and resources: many Python threads at once, Ctrl-C, memory over many
calls, atomic output files."""

from __future__ import annotations

import _thread
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import irmetrics
from irmetrics import Evaluator, Qrels, Run

MEASURES = ["all_trec", "P.1,3", "ndcg_cut.3", "success.1"]
PY_THREADS = 16


def make(nq: int, nd: int, seed: int = 0) -> tuple[Qrels, Run]:
    qids = [f"q{i}" for i in range(nq)]
    qrels = {
        q: {f"d{j}": (i * 7 + j * 3 + seed) % 4 - 1 for j in range(0, nd, 3)}
        for i, q in enumerate(qids)
    }
    for q in qrels:
        qrels[q]["d0"] = 1
    run = {
        q: {f"d{j}": float((i * 31 + j * 17 + seed) % 50) for j in range(nd)}
        for i, q in enumerate(qids)
    }
    return Qrels.from_dict(qrels), Run.from_dict(run)


class _Meddler:
    """A number (integer-like through __index__, real through __float__, as numpy's
    scalars are) whose conversion changes the dict being read, as another Python
    thread could whenever Python code runs during the conversion."""

    target: dict[str, object] = {}

    def _meddle(self) -> None:
        self.target[f"added{len(self.target)}"] = _Meddler()

    def __index__(self) -> int:
        self._meddle()
        return 1

    def __float__(self) -> float:
        self._meddle()
        return 1.0


def test_a_dict_changed_while_it_is_read_gives_its_snapshot() -> None:
    # a dict changed during the conversion (here by its own values' conversions; in
    # life by another thread) is read as it was when the call began: never an internal
    # "dictionary changed size during iteration" panic, never a mixture
    for make_input in (
        lambda d: Qrels.from_dict({"q": d}).to_dict(),
        lambda d: Run.from_dict({"q": d}).to_dict(),
        lambda d: irmetrics.evaluate({"q": {"d1": 1}}, {"q": d}, ["num_ret"]),
    ):
        inner: dict[str, object] = {f"d{j}": _Meddler() for j in range(5)}
        _Meddler.target = inner
        got = make_input(inner)
        assert len(inner) > 5  # the conversion did change the dict
        if "num_ret" in got:  # the means of evaluate()
            assert got == {"num_ret": 5}
        else:
            assert got == {"q": {f"d{j}": 1 for j in range(5)}}


def test_many_python_threads_at_once() -> None:
    qrels, _ = make(40, 30)
    ev = Evaluator(qrels, MEASURES)
    runs = [make(40, 30, seed=s)[1] for s in range(8)]
    expected = [ev.evaluate(r, per_query=True) for r in runs]
    barrier = threading.Barrier(PY_THREADS)

    def work(i: int) -> bool:
        barrier.wait()
        ok = True
        for k in range(10):
            j = (i + k) % len(runs)
            ok &= ev.evaluate(runs[j], per_query=True) == expected[j]
            ok &= irmetrics.evaluate(qrels, runs[j], MEASURES, per_query=True) == expected[j]
        return ok

    with ThreadPoolExecutor(PY_THREADS) as pool:
        assert all(pool.map(work, range(PY_THREADS)))


def test_threads_mixed_with_errors() -> None:
    """Failing evaluations in some threads do not disturb the others."""
    qrels, run = make(10, 10)
    ev = Evaluator(qrels, ["map"])
    good = ev.evaluate(run)
    bad = Run.from_dict({"x": {"d": 1.0}})

    def work(i: int) -> bool:
        if i % 2:
            with pytest.raises(irmetrics.InputError):
                ev.evaluate(bad)
            return True
        return ev.evaluate(run) == good

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, range(64)))


def test_concurrent_writes_to_one_path(tmp_path: Path) -> None:
    """Each writer has its own temporary file: the result is always one whole file."""
    runs = [make(20, 50, seed=s)[1] for s in range(4)]
    texts = []
    for i, r in enumerate(runs):
        r.to_file(tmp_path / f"ref{i}.txt")
        texts.append((tmp_path / f"ref{i}.txt").read_text())
    target = tmp_path / "out.txt"

    def work(i: int) -> None:
        for _ in range(10):
            runs[i % 4].to_file(target)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    assert target.read_text() in texts
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _eval_seconds(ev: Evaluator, run: Run) -> float:
    t = time.perf_counter()
    ev.evaluate(run)
    return time.perf_counter() - t


def make_text(nq: int, nd: int) -> tuple[Qrels, Run]:
    """As ``make`` (same labels and scores up to the query's number mod 50), built from
    TREC text: millions of lines without millions of Python dict entries."""
    qlines, rlines = [], []
    bodies = [[f" Q0 d{j} 0 {(i * 31 + j * 17) % 50}.0 r\n" for j in range(nd)] for i in range(50)]
    for i in range(nq):
        q = f"q{i}"
        labels = {f"d{j}": (i * 7 + j * 3) % 4 - 1 for j in range(0, nd, 3)}
        labels["d0"] = 1
        qlines += [f"{q} 0 {d} {v}\n" for d, v in labels.items()]
        rlines.append("".join(q + line for line in bodies[i % 50]))
    return Qrels.from_string("".join(qlines)), Run.from_string("".join(rlines))


def test_ctrl_c_stops_a_long_evaluation_promptly() -> None:
    cutoffs = ",".join(str(k) for k in range(1, 2001))
    families = ("P", "recall", "relative_P", "success", "map_cut", "ndcg_cut", "unj")
    measures = [f"{f}.{cutoffs}" for f in families]
    nd, nq = 2000, 40
    # Calibrate: double the queries until one evaluation takes at least 2 s on this
    # build and machine (no skip on a fast machine: it only takes more queries). The
    # cap (16M results) is far beyond any machine seen; reaching it fails the test.
    while True:
        qrels, run = make_text(nq, nd)
        ev = Evaluator(qrels, measures, n_threads=1)
        full = _eval_seconds(ev, run)
        if full >= 2.0:
            break
        assert nq * nd * 2 <= 1 << 24, f"{nq} queries still evaluate in {full:.2f}s"
        nq *= 2
    map_before = Evaluator(qrels, ["map"]).evaluate(run)["map"]
    lost = []
    # a second try if the first interrupt never arrives: seen twice in a full suite
    # on a loaded 2-core machine (the timer fired at 0.2 s, yet no KeyboardInterrupt
    # reached the main thread, not even after evaluate returned; never reproduced in
    # isolation). Two lost in a row fail.
    for _ in range(2):
        fired: list[float] = []
        start = [0.0]

        def interrupt(fired: list[float] = fired, start: list[float] = start) -> None:
            fired.append(time.perf_counter() - start[0])
            _thread.interrupt_main()

        timer = threading.Timer(0.2, interrupt)
        returned = None
        t0 = start[0] = time.perf_counter()
        timer.start()
        try:
            ev.evaluate(run)
            returned = time.perf_counter() - t0
            # the interrupt may still be on its way: let it arrive here, not in pytest
            timer.join()
            time.sleep(0.05)
        except KeyboardInterrupt:
            stopped = time.perf_counter() - t0
        if returned is None:
            break
        lost.append(
            f"evaluate returned after {returned:.2f}s (full run {full:.2f}s); the timer "
            f"fired at {fired}s; SIGINT's handler {signal.getsignal(signal.SIGINT)!r}"
        )
    else:
        pytest.fail("no KeyboardInterrupt, twice: " + "; ".join(lost))
    timer.join()
    # signal at 0.2 s, polled every 0.1 s, then the query being computed finishes
    limit = 0.2 + 0.5 + 2 * full / nq
    assert stopped < min(limit, full), f"took {stopped:.2f}s to stop (full run {full:.2f}s)"
    # the module and the data are still usable afterwards, with the same numbers
    assert Evaluator(qrels, ["map"]).evaluate(run)["map"] == map_before


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


NEEDS_PROC = pytest.mark.skipif(
    not Path("/proc/self/statm").exists(), reason="platform: RSS read from /proc"
)


@NEEDS_PROC
def test_repeated_evaluation_does_not_grow_memory() -> None:
    qrels, run = make(5, 20)
    ev = Evaluator(qrels, MEASURES)
    for _ in range(500):
        ev.evaluate(run, per_query=True)
    before = _rss_bytes()
    for i in range(10_000):
        ev.evaluate(run, per_query=i % 2 == 0)
    grown = _rss_bytes() - before
    assert grown < 8 << 20, f"RSS grew by {grown / 2**20:.1f} MiB over 10,000 calls"


@NEEDS_PROC
def test_repeated_errors_do_not_grow_memory() -> None:
    ev = Evaluator(make(3, 5)[0], ["map"])
    bad = Run.from_dict({"x": {"d": 1.0}})
    for _ in range(300):
        with pytest.raises(irmetrics.InputError):
            ev.evaluate(bad)
    before = _rss_bytes()
    for _ in range(3000):
        try:
            ev.evaluate(bad)
        except irmetrics.InputError:
            pass
        try:
            Run.from_string("q Q0 d 1 nan r\n")
        except irmetrics.FormatError:
            pass
    assert _rss_bytes() - before < 8 << 20


@pytest.fixture(scope="module")
def cli_calibration(tmp_path_factory: pytest.TempPathFactory) -> tuple[float, float, list[str]]:
    """(Python start-up seconds, seconds of work after it, [qrels, run]) for a CLI run
    of all_trec whose work takes at least 0.8 s on this build and machine."""
    tmp = tmp_path_factory.mktemp("cli")
    out = tmp / "out.txt"
    start_up = [sys.executable, "-m", "irmetrics", "--help"]
    t0 = time.perf_counter()
    subprocess.run(start_up, capture_output=True, timeout=300, check=True)
    python_start = time.perf_counter() - t0
    # Double the queries until the work after start-up takes at least 0.8 s (Ctrl-C
    # is looked for every 0.1 s).
    nq = 2000
    while True:
        qrels, run = make_text(nq, 1000)
        inputs = [str(tmp / "q.txt"), str(tmp / "r.txt")]
        qrels.to_file(inputs[0])
        run.to_file(inputs[1])
        args = [sys.executable, "-m", "irmetrics", "-q", "-m", "all_trec", "--output", str(out)]
        t0 = time.perf_counter()
        p = subprocess.run(args + inputs, capture_output=True, timeout=300)
        work = time.perf_counter() - t0 - python_start
        assert p.returncode == 0, p.stderr
        if work >= 0.8:
            return python_start, work, inputs
        assert nq <= 1 << 14, f"{nq} queries still evaluate in {work:.2f}s"
        nq *= 2


@pytest.mark.skipif(os.name != "posix", reason="platform: POSIX signals")
@pytest.mark.parametrize(
    "sig",
    [
        pytest.param(signal.SIGINT, id="SIGINT"),
        pytest.param(signal.SIGKILL, id="SIGKILL"),
    ],
)
def test_interrupted_cli_leaves_no_half_file(
    tmp_path: Path, sig: int, cli_calibration: tuple[float, float, list[str]]
) -> None:
    """A run stopped by a signal exits non-zero and leaves no output file at all (as
    any failed run: test_bad_input_errors.py::test_cli_output_is_atomic) and no
    temporary; one that finished before the signal (or noticed it only once complete)
    exits 0 with the whole file."""
    python_start, work, inputs = cli_calibration
    out = tmp_path / "out.txt"
    args = [sys.executable, "-m", "irmetrics", "-q", "-m", "all_trec", "--output", str(out)]
    args += inputs
    p = subprocess.run(args, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    complete = out.read_bytes()
    out.unlink()
    interrupted = 0
    # signals at fractions of the work after start-up, the last one after the end
    for fraction in (0.25, 0.5, 0.75, 1.5):
        delay = python_start + fraction * work
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay)
        proc.send_signal(sig)
        proc.communicate(timeout=120)
        if proc.returncode == 0:  # finished before the signal
            assert out.read_bytes() == complete, "a partial output file was left"
            out.unlink()
        else:
            interrupted += 1
            assert not out.exists(), (
                f"exit {proc.returncode} after {delay:.3f}s, yet --output written"
            )
        if sig == signal.SIGINT:  # SIGKILL gives no chance to remove a temporary
            assert not list(tmp_path.glob(".out.txt.*.tmp")), "temporary file left behind"
    # the signal at a quarter of the work comes 0.6 s before its end
    assert interrupted >= 1
