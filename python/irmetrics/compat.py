"""trec_eval compatibility through the Python API.

``trec_eval(qrels_path, run_path, flags)`` evaluates with trec_eval's command-line
flags, through the command line's own flow (flags, reading, evaluation: one place, in
Rust), and returns ``{measure: {query_id_or_"all": value}}`` at full precision, the
form the conformance checker's ``--python`` target takes::

    python3 check_conformance.py --python irmetrics.compat:trec_eval
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _core


def trec_eval(qrels_path: str, run_path: str, flags: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Evaluate like ``trec_eval FLAGS QRELS RUN``; raises on inputs it rejects."""
    return _core.trec_eval([*flags, qrels_path, run_path])
