"""Hostile-but-plausible inputs, class by class: unbounded reads, special files and
signals, text shape, output targets. Each test fails on the code before the hardening
(a crash, a hang, a silent wrong number or lost data) and names what it guards."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import irmetrics
from irmetrics import FileError, FormatError, Qrels, Run

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq1 Q0 d3 3 0.7 r\nq2 Q0 d1 1 1.0 r\n"
# trec_eval 10's map for QRELS/RUN: q1 (1 + 2/3) / 2, q2 1
MAP = ((1 + 2 / 3) / 2 + 1) / 2


def run_python(code: str, timeout: float = 60, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,  # type: ignore[arg-type]
    )


# 1. unbounded reads -----------------------------------------------------------------


def test_a_line_without_end_is_refused_in_bounded_memory() -> None:
    # /dev/zero is one endless "line": refused at the limit, and the process stays small
    # (it used to grow the buffer until the allocator aborted the process)
    code = """
        import irmetrics
        PEAK_MIB = lambda: int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) >> 10
        for read in (irmetrics.Run.from_file, irmetrics.Qrels.from_file):
            try:
                read("/dev/zero")
            except irmetrics.FormatError as e:
                print(e)
        ev = irmetrics.Evaluator(irmetrics.Qrels.from_string("q 0 d 1\\n"), "map")
        try:
            ev.evaluate_file("/dev/zero")
        except irmetrics.FormatError as e:
            print(e)
        print(PEAK_MIB())
    """
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    *errors, peak_mib = p.stdout.splitlines()
    assert len(errors) == 3, errors
    assert all(e.startswith("/dev/zero:1: line longer than 1048576 bytes") for e in errors), errors
    assert int(peak_mib) < 200, f"peak RSS {peak_mib} MiB"


def test_no_thread_can_be_started() -> None:
    # a process that may not start threads (a container limit): a clear error or the
    # same numbers on the calling thread, never a PanicException
    code = """
        import resource, irmetrics
        q = irmetrics.Qrels.from_string("q 0 d 1\\nq 0 e 0\\n")
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        try:
            print(irmetrics.evaluate(q, {"q": {"d": 1.0, "e": 2.0}}, "map"))
        except irmetrics.Error as e:
            print(type(e).__name__, e)
    """
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    assert "PanicException" not in p.stdout + p.stderr
    assert p.stdout.strip() in (
        "{'map': 0.5}",
        "InputError cannot start a thread: Resource temporarily unavailable (os error 11)",
    ), p.stdout


def test_gzip_member_expanding_to_one_giant_line(tmp_path: Path) -> None:
    f = tmp_path / "bomb.run.gz"
    with gzip.open(f, "wb") as g:
        g.write(RUN.encode())
        for _ in range(64):
            g.write(b"x" * (1 << 20))  # 64 MiB without a newline, line 5
    with pytest.raises(FormatError, match=r"bomb.run.gz:5: line longer than 1048576 bytes"):
        Run.from_file(f)
    ev = irmetrics.Evaluator(Qrels.from_string(QRELS), "map")
    with pytest.raises(FormatError, match=r"bomb.run.gz:5: line longer than"):
        ev.evaluate_file(f)


def test_line_limit_is_the_same_for_files_and_text_and_can_be_raised(tmp_path: Path) -> None:
    long_tag = "t" * 2000
    text = f"q1 Q0 d1 1 0.9 {long_tag}\n"
    f = tmp_path / "r.run"
    f.write_text(text)
    before = irmetrics.set_max_line_bytes(1024)
    try:
        for read in (lambda: Run.from_file(f), lambda: Run.from_string(text, "r.run")):
            with pytest.raises(FormatError, match=r"r.run:1: line longer than 1024 bytes"):
                read()
        irmetrics.set_max_line_bytes(4096)
        assert Run.from_file(f).num_results == 1
        assert Run.from_string(text).num_results == 1
    finally:
        irmetrics.set_max_line_bytes(before)


def test_cli_option_raises_the_limit(tmp_path: Path) -> None:
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN.replace(" r\n", " " + "t" * 3000 + "\n"))
    cmd = [sys.executable, "-m", "irmetrics", "-m", "map", str(tmp_path / "q"), str(tmp_path / "r")]
    env = {**os.environ, "IRMETRICS_MAX_LINE_BYTES": "1000"}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "r:1: line longer than 1000 bytes" in p.stderr, p.stderr
    cmd = [*cmd[:3], "--max-line-bytes", "5000", *cmd[3:]]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["map", "all", f"{MAP:.4f}"]
    # a value that is not a number: refused before any file is read, by every command
    env["IRMETRICS_MAX_LINE_BYTES"] = "2M"
    bad = 'IRMETRICS_MAX_LINE_BYTES="2M" is not a whole number of bytes'
    quiet: dict = {"capture_output": True, "text": True}
    q, r = str(tmp_path / "q"), str(tmp_path / "r")
    for args in (["-m", "map", q, r], ["compare", "-m", "map", q, r, r], ["fuse", r, r]):
        p = subprocess.run([sys.executable, "-m", "irmetrics", *args], **quiet, env=env)
        assert p.returncode == 2 and bad in p.stderr and not p.stdout, (args, p.stderr)
    # ... unless --max-line-bytes sets the limit
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    # in Python, where a file is read before anything checks it, the default limit
    # applies and the error of a line over it names the variable; an evaluator refuses it
    (tmp_path / "r").write_text(RUN.replace(" r\n", " " + "t" * (2 << 20) + "\n"))
    code = (
        "import irmetrics, sys\n"
        "try: irmetrics.Run.from_file(sys.argv[1])\n"
        "except irmetrics.FormatError as e: print(e)\n"
        "try: irmetrics.Evaluator({'q': {'d': 1}}, 'map')\n"
        "except irmetrics.InputError as e: print(e)\n"
    )
    p = subprocess.run([sys.executable, "-c", code, r], **quiet, env=env)
    lines = p.stdout.splitlines()
    assert len(lines) == 2, p.stdout + p.stderr
    assert "line longer than 1048576 bytes" in lines[0] and bad in lines[0], lines
    assert lines[1].startswith(bad), lines


def test_endless_repeated_lines_are_refused_early_in_bounded_memory() -> None:
    # `yes LINE | irmetrics ...`: the duplicate (lines 1 and 2) is reported when the
    # query reaches 65,536 results, instead of after holding the endless input
    code = """
        import subprocess, sys, irmetrics
        # this process's own peak (ru_maxrss would count the forking parent's pages)
        PEAK_MIB = lambda: int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) >> 10
        yes = subprocess.Popen(["yes", "q1 Q0 d1 1 0.5 r"], stdout=subprocess.PIPE)
        sys.stdin.close()
        import os
        os.dup2(yes.stdout.fileno(), 0)
        try:
            irmetrics.Run.from_file("-")
        except irmetrics.FormatError as e:
            print(e)
        ev = irmetrics.Evaluator(irmetrics.Qrels.from_string("q1 0 d1 1\\n"), "map")
        yes2 = subprocess.Popen(["yes", "q1 Q0 d1 1 0.5 r"], stdout=subprocess.PIPE)
        os.dup2(yes2.stdout.fileno(), 0)
        try:
            ev.evaluate_file("-")
        except irmetrics.FormatError as e:
            print(e)
        yes.kill(); yes2.kill()
        print(PEAK_MIB())
    """
    p = run_python(code, timeout=120)
    assert p.returncode == 0, p.stderr
    *lines, peak_mib = p.stdout.splitlines()
    assert int(peak_mib) < 200, f"peak RSS {peak_mib} MiB"
    assert lines == [
        "-:2: document 'd1' appears twice for query 'q1' (first at line 1)",
        "-:2: document 'd1' appears twice for query 'q1' (first at line 1)",
    ], p.stdout


# 2. special files and signals ----------------------------------------------------------


def test_duplicate_in_a_fifo_is_located_without_reading_it_again(tmp_path: Path) -> None:
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    text = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\n# c\nq1 Q0 d1 3 0.7 r\n"

    def feed() -> None:
        with open(fifo, "w") as w:
            w.write(text)

    t = threading.Thread(target=feed)
    t.start()
    with pytest.raises(
        FormatError,
        match=r"run.fifo:4: document 'd1' appears twice for query 'q1' \(first at line 1\)",
    ):
        Run.from_file(fifo)
    t.join(timeout=10)
    assert not t.is_alive()


@pytest.mark.parametrize("kind", ["run", "qrels", "stream"])
def test_ctrl_c_stops_a_read_that_waits_forever(tmp_path: Path, kind: str) -> None:
    # a FIFO that no one writes: opening it blocks; Ctrl-C must still stop the call
    fifo = tmp_path / "wait.fifo"
    os.mkfifo(fifo)
    call = {
        "run": f"irmetrics.Run.from_file({str(fifo)!r})",
        "qrels": f"irmetrics.Qrels.from_file({str(fifo)!r})",
        "stream": "irmetrics.Evaluator(irmetrics.Qrels.from_string('q 0 d 1\\n'), 'map')"
        f".evaluate_file({str(fifo)!r})",
    }[kind]
    code = f"""
        import irmetrics, sys
        print("ready", flush=True)
        try:
            {call}
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(0)
    """
    p = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail(f"{kind}: Ctrl-C did not stop a read waiting on a FIFO")
    assert p.returncode == 0 and "interrupted" in out


# 6. text shape -------------------------------------------------------------------------


def test_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "q").write_bytes(b"\xef\xbb\xbf" + QRELS.encode())
    (tmp_path / "r").write_bytes(b"\xef\xbb\xbf" + RUN.encode())
    qrels = Qrels.from_file(tmp_path / "q")
    assert "q1" in qrels and len(qrels) == 2  # not '\ufeffq1'
    res = irmetrics.evaluate(tmp_path / "q", tmp_path / "r", "map")
    assert res["map"] == pytest.approx(MAP, abs=1e-15)
    assert Run.from_string(b"\xef\xbb\xbf" + RUN.encode()).query_ids() == ["q1", "q2"]


def test_cr_only_line_endings_are_refused(tmp_path: Path) -> None:
    (tmp_path / "r").write_bytes(RUN.replace("\n", "\r").encode())
    with pytest.raises(FormatError, match=r"r:1: lines end with CR alone"):
        Run.from_file(tmp_path / "r")
    with pytest.raises(FormatError, match=r"lines end with CR alone"):
        Qrels.from_string(QRELS.replace("\n", "\r"))
    # CRLF is fine and gives the same numbers
    (tmp_path / "q").write_bytes(QRELS.replace("\n", "\r\n").encode())
    (tmp_path / "r").write_bytes(RUN.replace("\n", "\r\n").encode())
    assert irmetrics.evaluate(tmp_path / "q", tmp_path / "r", "map")["map"] == pytest.approx(
        MAP, abs=1e-15
    )


@pytest.mark.parametrize(
    "magic,name",
    [
        (b"\x28\xb5\x2f\xfd\x00\x00", "zstd"),
        (b"BZh91AY&SY", "bzip2"),
        (b"\xfd7zXZ\x00\x00", "xz"),
    ],
)
def test_other_compressions_are_named(tmp_path: Path, magic: bytes, name: str) -> None:
    (tmp_path / "r").write_bytes(magic + b"\x00" * 64)
    with pytest.raises(FileError, match=rf"it is {name}-compressed; only gzip is read"):
        Run.from_file(tmp_path / "r")
    with pytest.raises(FileError, match=rf"it is {name}-compressed"):
        Qrels.from_file(tmp_path / "r")


# 3. output -------------------------------------------------------------------------------


def test_writing_to_a_full_disk_fails_and_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    cmd = [sys.executable, "-m", "irmetrics", "-q", str(tmp_path / "q"), str(tmp_path / "r")]
    with open("/dev/full", "w") as full:
        p = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True)
    assert p.returncode != 0 and "cannot write" in p.stderr, p.stderr
    # a pipe closed by its reader (`irmetrics ... | head -0`): status 1 without a message,
    # as the shell's tools end (a full disk is an error to say; a reader that has all it
    # wants is not)
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE, text=True)
    os.close(w)
    assert (p.returncode, p.stderr) == (1, ""), p.stderr
