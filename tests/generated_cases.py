"""The conformance suite's generated cases as inputs for the route tests: each row of
its MANIFEST that trec_eval evaluates, with its flags as measures and Evaluator options.
The routes are compared with the TREC-file route, which test_conformance.py checks
against trec_eval's stored values."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, NamedTuple

#: Rows of the generated suite that trec_eval evaluates ("ok").
ROWS = 47


class Case(NamedTuple):
    name: str
    qrels: Path
    run: Path
    measures: list[str]
    options: dict[str, Any]


def options(flags: str) -> tuple[list[str], dict[str, Any]]:
    """trec_eval's flags of a manifest row as measures and Evaluator options."""
    args = flags.split()
    measures: list[str] = []
    opts: dict[str, Any] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m":
            measures.append(args[i + 1])
            i += 1
        elif a == "-c":
            opts["complete"] = True
        elif a == "-J":
            opts["judged_only"] = True
        elif a == "-l":
            opts["relevance_level"] = int(args[i + 1])
            i += 1
        elif a == "-M":
            opts["max_docs"] = int(args[i + 1])
            i += 1
        else:
            assert a == "-q", f"flag {a} not handled by these tests"
        i += 1
    return measures, opts


def generated_cases(conformance: Path) -> list[Case]:
    suite = conformance / "generated"
    text = (suite / "MANIFEST.tsv").read_text().splitlines()
    out = []
    for row in csv.DictReader(text, delimiter="\t"):
        if row["expect"] != "ok":
            continue
        measures, opts = options(row["flags"])
        out.append(Case(row["case"], suite / row["qrels"], suite / row["run"], measures, opts))
    assert len(out) == ROWS
    return out


def plain(res: Any) -> Any:
    """Results with NaN made comparable (NaN != NaN); everything else as it is."""
    if isinstance(res, dict):
        return {k: plain(v) for k, v in res.items()}
    if isinstance(res, float) and math.isnan(res):
        return "NaN"
    return res


def assert_rows_kept(got: dict[str, dict[str, Any]], qs: list, ds: list, vs: list) -> None:
    """`got` (a run's or judgments' `to_dict()`) holds the rows (qs[i], ds[i], vs[i]),
    every document of a query in the order its rows came."""
    expected: dict[str, dict[str, Any]] = {}
    for q, d, v in zip(qs, ds, vs):
        expected.setdefault(q, {})[d] = v
    assert got == expected
    assert [list(got[q]) for q in expected] == [list(expected[q]) for q in expected]
