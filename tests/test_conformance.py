"""trec_eval conformance: the definition of correct.

Runs ../shared/conformance/check_conformance.py (trec_eval 10.0's own test suite,
generated edge cases at full precision, and bad inputs) against the installed
``irmetrics`` command line and against the Python API (``irmetrics.compat``), in
``--strict`` mode: every row, the ``-R prefs``, ``-R qrels_prefs``, ``-R qrels_jg`` and
``-Z`` rows of trec_eval's suite included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def check(conformance: Path, *args: str) -> str:
    cmd = [
        sys.executable,
        str(conformance / "check_conformance.py"),
        "--strict",
        "-q",
        "--jobs",
        "2",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    last = out.strip().splitlines()[-1]
    assert last.endswith(" 0 failed"), last
    return last


def manifest_rows(suite: Path) -> int:
    """Rows (cases x flag variants) of a suite's MANIFEST.tsv, header excluded."""
    return len((suite / "MANIFEST.tsv").read_text().splitlines()) - 1


CLI = f"{sys.executable} -m irmetrics {{flags}} {{qrels}} {{run}}"
SUITES = ["trec_eval_suite", "generated", "bad_input"]


@pytest.mark.parametrize("suite", SUITES)
def test_cli_conformance(conformance: Path, suite: str) -> None:
    last = check(conformance, "--suite", str(conformance / suite), "--cmd", CLI)
    # every row ran (16 trec_eval_suite, 47 generated, 29 bad_input as stored)
    assert last == f"{manifest_rows(conformance / suite)} passed, 0 failed"


def test_python_api_conformance(conformance: Path) -> None:
    suites = [a for s in SUITES for a in ("--suite", str(conformance / s))]
    last = check(conformance, *suites, "--python", "irmetrics.compat:trec_eval")
    rows = sum(manifest_rows(conformance / s) for s in SUITES)
    assert last == f"{rows} passed, 0 failed"


@pytest.mark.parametrize(
    ("fmt", "text", "where"),
    [
        ("prefs", "q g s d 1\nq g s e\n", ":2: malformed line: expected 5 fields"),
        ("qrels_prefs", "q 0 d 1\nq 0 d 2\n", ":2: document 'd' appears twice"),
        ("qrels_jg", "q 0 d 1\nq 0 e x\n", ":2: relevance label 'x' is not a whole number"),
    ],
)
def test_bad_judgment_files_name_file_and_line(
    tmp_path: Path, fmt: str, text: str, where: str
) -> None:
    """A malformed preference or judgment-group file: exit 1, file and line named."""
    judgments = tmp_path / "judgments.txt"
    judgments.write_text(text)
    run = tmp_path / "run.txt"
    run.write_text("q Q0 d 1 2.0 r\nq Q0 e 2 1.0 r\n")
    cmd = [sys.executable, "-m", "irmetrics", "-R", fmt, str(judgments), str(run)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert f"{judgments}{where}" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
