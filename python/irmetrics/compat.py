"""trec_eval compatibility through the Python API.

``trec_eval(qrels_path, run_path, flags)`` evaluates with trec_eval's command-line
flags and returns ``{measure: {query_id_or_"all": value}}`` at full precision, the
form the conformance checker's ``--python`` target takes::

    python3 check_conformance.py --python irmetrics.compat:trec_eval
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _core


def trec_eval(qrels_path: str, run_path: str, flags: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Evaluate like ``trec_eval FLAGS QRELS RUN``; raises on inputs it rejects."""
    args = _core.parse_cli_args([*flags, qrels_path, run_path])
    qrels = _core.Qrels.from_file(args["qrels"])
    run = _core.Run.from_file(args["runs"][0])
    ev = _core.Evaluator(qrels, args["measures"], **args["options"])
    out: dict[str, dict[str, Any]] = {}
    if args["per_query"]:
        for name, per_q in ev.evaluate(run, per_query=True, keys="canonical").items():
            if name.startswith("relstring"):
                per_q = {q: f"'{s}'" for q, s in per_q.items()}
            out[name] = dict(per_q)
    if args["summary"]:
        for name, value in ev.evaluate(run, keys="canonical").items():
            out.setdefault(name, {})["all"] = value
    return out
