"""The README's measure tables, walked: every spelling they list is evaluated.

* "Peer spellings": each spelling, under its ``names=`` switch, gives exactly the
  canonical columns the table lists (the values are checked against ranx and
  ir_measures in ``test_peer_names.py``).
* "Measures" and "Measures beyond trec_eval": every name in the irmetrics, ir_measures
  and ranx columns evaluates, with the tables' placeholders (``k``, ``x``, ``…``)
  filled in.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import irmetrics

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")

QRELS = {
    "q1": {"a": 2, "b": 0, "c": 1, "d": -1, "e": 4},
    "q2": {"x": 1, "y": 3, "z": 0},
}
RUN = {
    "q1": {"a": 0.9, "b": 0.8, "f": 0.7, "c": 0.6, "d": 0.5},
    "q2": {"z": 2.0, "y": 1.0, "w": 0.5},
}


def section_rows(heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading`` (header and rule left out)."""
    start = README.index(heading)
    rows = []
    for line in README[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows and not line.startswith("|"):
            break
    return rows[1:]


def ticks(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


PEER_ROWS = section_rows("### Peer spellings")
PEER_CASES = [
    (spelling, None if row[2] == "—" else ticks(row[2])[0], ticks(row[3]))
    for row in PEER_ROWS
    for spelling in ticks(row[0])
]


def test_the_peer_table_is_read() -> None:
    assert len(PEER_ROWS) >= 30 and len(PEER_CASES) >= 55
    assert ("NDCG@10", None, ["ndcg_cut_10"]) in PEER_CASES


@pytest.mark.parametrize(("spelling", "names", "columns"), PEER_CASES)
def test_peer_spelling(spelling: str, names: str | None, columns: list[str]) -> None:
    ev = irmetrics.Evaluator(QRELS, [spelling], names=names, complete=True)
    assert ev.columns() == columns
    assert irmetrics.canonical_names(spelling, names) == columns
    out = ev.evaluate(RUN)
    assert len(out) == len(columns)
    assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in out.values())


# Placeholders of the two measure tables, filled in: cut-off k, recall level x,
# ranx's rbp.X, an option value, trec_eval's level=gain list.
FILL = [
    (r"@k\b", "@10"),
    (r"_k\b", "_10"),
    (r"@x\b", "@0.5"),
    (r"_x\b", "_0.50"),
    (r"_r\b", "_0.50"),
    (r"@0\.5\b", "@0.5"),
    (r"\.X\b", ".8"),
    (r"=…", "=0.8"),
    (r"=b\)", "=2)"),
    (r"=g\)", "=4)"),
    (r"\{\.\.\.\}", "{0:1,1:2}"),
]

# What the name columns hold that is not a measure name to evaluate.
NOT_NAMES = {
    "—",
    "1 − Judged@k",  # a formula, written as such
    "ndcg.1=3,2=7",  # trec_eval parameters, shown as an example (checked elsewhere)
    "-N",
    "-l",
    "-lN",
    "_k",  # "each `_k` / `@k`": the row's names take cut-offs (below)
    "@k",
}


def table_names(heading: str, name_columns: list[int]) -> list[str]:
    names = []
    for row in section_rows(heading):
        for i in name_columns:
            each_cut = "each `_k` / `@k`" in row[i]
            for t in ticks(row[i]):
                if t in NOT_NAMES or "→" in t or t.startswith("names="):
                    continue
                for pat, rep in FILL:
                    t = re.sub(pat, rep, t)
                names.append(f"{t}@10" if each_cut else t)
    return sorted(set(names))


# "Measures": our name, ir_measures, ranx; "beyond": irmetrics, ranx, ir_measures.
TABLE_NAMES = table_names("## Measures\n", [0, 2, 3]) + table_names(
    "## Measures beyond trec_eval", [1, 2, 3]
)


def test_the_measure_tables_are_read() -> None:
    assert len(TABLE_NAMES) >= 100, TABLE_NAMES
    for name in ("nDCG@10", "map", "hit_rate@10", "Judged@10", "err_cut_10", "rbp.8"):
        assert name in TABLE_NAMES


@pytest.mark.parametrize("name", TABLE_NAMES)
def test_measure_table_name_evaluates(name: str) -> None:
    opts = {"complete": True, "num_docs_in_collection": 20}
    summary = irmetrics.evaluate(QRELS, RUN, name, **opts)
    per_query = irmetrics.evaluate(QRELS, RUN, name, per_query=True, **opts)
    # summary-only measures (num_q, runid, gm_map) have no per-query values, relstring
    # no summary: every name gives one or the other
    assert summary or (per_query and all(per_query.values())), name
