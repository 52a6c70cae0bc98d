"""irmetrics.online.evaluate(path, stream=True): a log file streamed in bounded memory
gives the hand-computed values of tests/data/online_small.jsonl, the generator's ground
truth (numpy over the generated structure, tests/online_gen.py) and the whole log's
numbers; out-of-order input is refused with its line; a session ends after the
timeout; the peak resident memory of a child process streaming a log 4 times as long
as another stays that of the shorter one, under a stated bound (while reading it whole
grows with it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import irmetrics
from irmetrics import online
from irmetrics.cli import main

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from online_gen import generate  # noqa: E402
from test_online import HAND, SMALL  # noqa: E402

DAY = 86400.0


def time_ordered(events: pd.DataFrame) -> pd.DataFrame:
    """The log as a server writes it: rows in time order (ties kept in order)."""
    return events.sort_values("timestamp", kind="stable").reset_index(drop=True)


def write_jsonl(events: pd.DataFrame, path: Path) -> Path:
    events.to_json(path, orient="records", lines=True, double_precision=15)
    return path


def test_hand_computed_log_streamed():
    # line 3 (00:00:05) comes 15 s after line 2 (00:00:20): refused without slack
    with pytest.raises(irmetrics.Error, match=r"online_small\.jsonl:3: .*time order"):
        online.evaluate(SMALL, stream=True)
    got = online.evaluate(SMALL, stream=True, time_slack=15)
    assert got == pytest.approx(HAND, abs=1e-12)
    assert list(got) == list(HAND)
    assert online.evaluate(SMALL, ["ctr", "click_mrr"], stream=True, time_slack=20) == (
        pytest.approx({"ctr": 3 / 5, "click_mrr": 2 / 5}, abs=1e-12)
    )


def test_generator_truth_streamed(tmp_path):
    g = generate(3000, seed=7, shuffle=False)
    events = time_ordered(g["events"])
    path = write_jsonl(events, tmp_path / "log.jsonl")
    csv = tmp_path / "log.csv"
    events.to_csv(csv, index=False)
    whole = online.evaluate(path)
    for p in (path, csv):
        got = online.evaluate(p, stream=True)
        assert list(got) == list(whole)
        for name, v in g["truth"].items():
            assert got[name] == pytest.approx(v, rel=1e-9, abs=1e-12), name
        for name, v in whole.items():
            # sums of counts are exact; click_mrr's sum of 1/position is added in
            # another order
            assert got[name] == pytest.approx(v, rel=1e-14, abs=0), name
    # a short timeout ends sessions at their first pause longer than it: here a
    # session restarting with a click, refused (the generator's pauses are 0.5 s +
    # Exp(25 s))
    with pytest.raises(irmetrics.Error, match="no earlier SERP"):
        online.evaluate(path, stream=True, session_timeout=30)


def test_a_session_ends_after_the_timeout(tmp_path):
    # s1: a SERP clicked, then 2000 s later (> 1800) a SERP not clicked; s2 in between
    rows = [
        ("s1", 0, "query", None),
        ("s1", 10, "click", 1),
        ("s2", 1000, "query", None),
        ("s1", 2010, "query", None),
    ]
    path = tmp_path / "log.jsonl"
    path.write_text(
        "".join(
            json.dumps({"session_id": s, "timestamp": t, "type": k, "position": p}) + "\n"
            for s, t, k, p in rows
        )
    )
    # whole: 2 sessions, s2 abandoned; streamed: s1's pause ends it, 3 sessions, the
    # second s1 and s2 abandoned
    assert online.evaluate(path, ["abandonment_rate", "ctr"]) == {
        "abandonment_rate": 1 / 2,
        "ctr": 1 / 3,
    }
    streamed = {"abandonment_rate": 2 / 3, "ctr": 1 / 3}
    assert online.evaluate(path, ["abandonment_rate", "ctr"], stream=True) == streamed
    # a timeout longer than the pause: one s1 again
    long = online.evaluate(path, ["abandonment_rate"], stream=True, session_timeout=2001)
    assert long == {"abandonment_rate": 1 / 2}
    # the slack counts in the gap: 1800 + 300 > 2000
    slack = online.evaluate(path, ["abandonment_rate"], stream=True, time_slack=300)
    assert slack == {"abandonment_rate": 1 / 2}


def test_stream_refusals(tmp_path):
    rows = [
        {"session_id": "a", "timestamp": 100, "type": "query", "position": None},
        {"session_id": "a", "timestamp": 103, "type": "click", "position": None},
        {"session_id": "b", "timestamp": 104, "type": "query"},
        {"session_id": "b", "timestamp": 110, "type": "click", "position": 2},
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # as read whole: a click without a position in a log with positions, line 2
    with pytest.raises(irmetrics.Error, match=r"log\.jsonl:2: .*without a position"):
        online.evaluate(path)
    with pytest.raises(irmetrics.Error, match=r"log\.jsonl:2: .*without a position"):
        online.evaluate(path, stream=True)
    with pytest.raises(irmetrics.Error, match="bootstrap"):
        online.evaluate(SMALL, by="variant", stream=True)
    with pytest.raises(irmetrics.Error, match="a log file"):
        online.evaluate(pd.DataFrame(rows), stream=True)
    with pytest.raises(irmetrics.Error, match="session_timeout"):
        online.evaluate(SMALL, stream=True, session_timeout=0)


def test_cli_stream_prints_the_streamed_values(capfd):
    assert main(["online", "--stream", "--time-slack", "20", "--format", "json", str(SMALL)]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert doc["metrics"] == pytest.approx(HAND, abs=1e-12)
    assert (doc["events"], doc["sessions"], doc["ignored"]) == (10, 4, {"hover": 1})
    assert main(["online", "--stream", "--by", "variant", str(SMALL)]) != 0
    assert "--stream" in capfd.readouterr().err


# the child's own peak (VmHWM: ru_maxrss of a child keeps its forking parent's peak)
PEAK = """
import sys
from irmetrics import online
m = online.evaluate(sys.argv[1], stream=sys.argv[2] == "stream")
status = open("/proc/self/status").read()
print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
"""


def peak_mib(path: Path, how: str) -> float:
    # one thread: the allocator's per-thread pages do not blur the comparison
    env = {**os.environ, "IRMETRICS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", PEAK, str(path), how],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return int(out.stdout.split()[-1]) / 1024


# the stated bound of a stream of the generator's traffic, whatever its length: the
# interpreter with numpy and irmetrics take some 40 MiB of it
BOUND_MIB = 192


def test_streaming_memory_does_not_grow_with_the_log(tmp_path):
    # one generated month of 25,000 sessions (85,000 events), repeated 4 and 16 times
    # one after the other (new session ids): the same traffic, a log 4 times as long
    base = time_ordered(generate(25_000, seed=3, shuffle=False)["events"])
    months = []
    for k in range(16):
        m = base.copy()
        m["timestamp"] = m["timestamp"] + k * 31 * DAY
        m["session_id"] = m["session_id"] + f"-{k}"
        months.append(m)
    short = write_jsonl(pd.concat(months[:4], ignore_index=True), tmp_path / "4.jsonl")
    long = write_jsonl(pd.concat(months, ignore_index=True), tmp_path / "16.jsonl")
    s4, s16 = peak_mib(short, "stream"), peak_mib(long, "stream")
    w16 = peak_mib(long, "whole")
    assert s16 < BOUND_MIB, (s4, s16, w16)
    assert s16 - s4 < 32, (s4, s16, w16)
    # read whole, the 1.36 M events are held (64 bytes each; while they are put in
    # session order, twice): the test can tell
    held = 16 * len(base) * 64 / 2**20
    assert w16 - s16 > 1.5 * held, (s4, s16, w16, held)
