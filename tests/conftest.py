"""Shared fixtures: where the conformance suite and the TREC data live.

Under CI (``CI`` set to anything but ``""``, ``0`` or ``false``; ``.ci/run`` sets
``CI=true``) nothing may silently go missing:

* ``../shared`` (the conformance suite) must be there, or the session stops at once;
* a skipped test fails the session unless its reason starts with ``PLATFORM_SKIP``
  (something this machine cannot do, such as ``fork`` on Windows).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"

#: Reasons that start with this are allowed to skip under CI: the test cannot run on
#: this platform at all. Anything else skipped under CI is a failure.
PLATFORM_SKIP = "platform:"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def shared_dir() -> Path | None:
    """``../shared`` beside the checkout (or ``$IRMETRICS_SHARED``)."""
    env = os.environ.get("IRMETRICS_SHARED")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared", REPO / "shared"]:
        if (cand / "conformance" / "check_conformance.py").is_file():
            return cand
    return None


def require_shared() -> Path | None:
    """The shared folder; under CI its absence is an error, elsewhere ``None``."""
    d = shared_dir()
    if d is None and in_ci():
        raise pytest.UsageError(
            "CI: ../shared/conformance (check_conformance.py) not found beside the "
            f"checkout {REPO} (set IRMETRICS_SHARED to its folder)"
        )
    return d


def pytest_configure(config: pytest.Config) -> None:
    # fail before collecting anything, not test by test
    require_shared()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not in_ci():
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    hidden = []
    for rep in reporter.stats.get("skipped", []):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        if not reason.removeprefix("Skipped: ").startswith(PLATFORM_SKIP):
            hidden.append(f"{rep.nodeid}: {reason}")
    if hidden:
        reporter.ensure_newline()
        reporter.write_line(
            f"CI: {len(hidden)} test(s) skipped without a platform reason:", red=True
        )
        for line in hidden:
            reporter.write_line(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def shared() -> Path:
    d = require_shared()
    if d is None:
        pytest.skip("../shared/conformance not found (set IRMETRICS_SHARED)")
    return d


@pytest.fixture(scope="session")
def conformance(shared: Path) -> Path:
    return shared / "conformance"


@pytest.fixture(scope="session")
def v10_trec_like(conformance: Path) -> dict:
    """The TREC-like generated case: its qrels and run paths and trec_eval's values
    (``{measure: {query or "all": value}}``, full precision)."""
    d = conformance / "generated" / "v10_trec_like"
    return {
        "qrels": d / "qrels.txt",
        "run": d / "run.txt",
        "expected": json.loads((d / "expected" / "default.full.json").read_text()),
    }
