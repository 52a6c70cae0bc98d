"""Shared fixtures: where the conformance suite and the TREC data live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"


def shared_dir() -> Path | None:
    """``../shared`` beside the checkout (or ``$IRMETRICS_SHARED``)."""
    env = os.environ.get("IRMETRICS_SHARED")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared", REPO / "shared"]:
        if (cand / "conformance" / "check_conformance.py").is_file():
            return cand
    return None


@pytest.fixture(scope="session")
def shared() -> Path:
    d = shared_dir()
    if d is None:
        if os.environ.get("CI"):
            pytest.fail("../shared/conformance is required in CI but was not found")
        pytest.skip("../shared/conformance not found (set IRMETRICS_SHARED)")
    return d


@pytest.fixture(scope="session")
def conformance(shared: Path) -> Path:
    return shared / "conformance"
