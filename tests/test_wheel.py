"""The built wheel, as a user installs it: one abi3 wheel (every CPython >= 3.10) with a
manylinux tag that auditwheel confirms, installed into a fresh virtual environment
(pulling numpy, its one dependency) where it evaluates a run to trec_eval's numbers.

`.ci/run` builds the wheel and names it in IRMETRICS_WHEEL; without it (a developer's
run of pytest) the test is skipped, which CI does not allow (see conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def wheel() -> Path:
    path = os.environ.get("IRMETRICS_WHEEL")
    if not path:
        pytest.skip("IRMETRICS_WHEEL is not set (.ci/run builds the wheel and sets it)")
    return Path(path)


def test_the_wheel_is_abi3_and_manylinux(wheel: Path) -> None:
    assert "-cp310-abi3-" in wheel.name, wheel.name
    assert "manylinux" in wheel.name, wheel.name
    out = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert 'is consistent with the following platform tag: "manylinux_2_17_' in text, text


def test_the_wheel_installs_into_a_fresh_venv_and_evaluates(
    wheel: Path, conformance: Path, tmp_path: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr
    case = conformance / "generated" / "v01_binary_basic"
    code = (
        "import json, sys, numpy, irmetrics\n"
        "res = irmetrics.evaluate(sys.argv[1], sys.argv[2], ['map', 'ndcg_cut.10'])\n"
        "print(json.dumps(res))\n"
    )
    out = subprocess.run(
        [str(python), "-c", code, str(case / "qrels.txt"), str(case / "run.txt")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # not the checkout: the installed package, not python/irmetrics
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    expected = json.loads((case / "expected" / "default.full.json").read_text())
    assert got["map"] == pytest.approx(expected["map"]["all"], abs=1e-12)
    assert got["ndcg_cut.10"] == pytest.approx(expected["ndcg_cut_10"]["all"], abs=1e-12)
