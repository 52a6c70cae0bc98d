"""The built wheel, as a user installs it: one abi3 wheel (every CPython >= 3.10) with a
manylinux tag that auditwheel confirms, installed into a fresh virtual environment
(pulling numpy, its one dependency) where it evaluates a run to trec_eval's numbers,
names the extra to install for output="pandas" and irmetrics.plot, and, with those
extras, runs every Python example of the README.

`.ci/run` builds the wheel and names it in IRMETRICS_WHEEL; without it (a developer's
run of pytest) the test is skipped, which CI does not allow (see conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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


def _python_blocks(readme: Path) -> list[str]:
    """The README's runnable Python examples: the blocks that start with an import."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    return [b for b in blocks if b.startswith("import ")]


def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_readme(
    wheel: Path, conformance: Path, tmp_path: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"

    def run(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        # cwd is never python/ of the checkout: the installed package is what runs
        return subprocess.run(
            [str(python), *args], capture_output=True, text=True, timeout=600, cwd=cwd
        )

    install = run("-m", "pip", "install", "-q", str(wheel))
    assert install.returncode == 0, install.stderr
    # numpy came with it; a case evaluates to trec_eval's values
    case = conformance / "generated" / "v01_binary_basic"
    code = (
        "import json, sys, numpy, irmetrics\n"
        "res = irmetrics.evaluate(sys.argv[1], sys.argv[2], ['map', 'ndcg_cut.10'])\n"
        "print(json.dumps(res))\n"
    )
    out = run("-c", code, str(case / "qrels.txt"), str(case / "run.txt"))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    expected = json.loads((case / "expected" / "default.full.json").read_text())
    assert got["map"] == pytest.approx(expected["map"]["all"], abs=1e-12)
    assert got["ndcg_cut.10"] == pytest.approx(expected["ndcg_cut_10"]["all"], abs=1e-12)
    # without an extra, the call that needs it names what to install
    needs = {
        "pandas": "irmetrics.evaluate({'q': {'d': 1}}, {'q': {'d': 1.0}}, 'map', output='pandas')",
        "plot": "irmetrics.plot.histogram({'q': {'d': 1}}, {'q': {'d': 1.0}})",
    }
    for extra, call in needs.items():
        code = (
            "import irmetrics, irmetrics.plot\n"
            f"try:\n    {call}\n"
            "except irmetrics.MissingDependencyError as e:\n    print(e)\n"
        )
        out = run("-c", code)
        assert out.returncode == 0, out.stderr
        assert f"pip install 'irmetrics[{extra}]'" in out.stdout, (extra, out.stdout)
    # with the extras (pandas, matplotlib, pyarrow, polars), every README example runs
    install = run("-m", "pip", "install", "-q", f"{wheel}[all]")
    assert install.returncode == 0, install.stderr
    blocks = _python_blocks(REPO / "README.md")
    assert blocks
    # in a folder of their own (what they write lands there) that sees the repo's data
    work = tmp_path / "readme"
    work.mkdir()
    (work / "tests").symlink_to(REPO / "tests")
    for block in blocks:
        out = run("-c", block, cwd=work)
        assert out.returncode == 0, (block, out.stderr)
