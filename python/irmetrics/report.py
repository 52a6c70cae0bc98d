"""Comparing systems: :func:`compare` evaluates several runs on one qrels and tests
every pair (or every run against a baseline); :class:`Report` holds the outcome and
renders it (Markdown, LaTeX, plain text, CSV, JSON, pandas, HTML)."""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping

from . import _core
from ._core import Evaluator, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = ["Report", "compare"]

_SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᶿʳˢᵗᵘᵛʷˣʸᶻ"


class Report:
    """The outcome of :func:`compare`.

    ``systems``, ``measures`` (the names as requested), ``means``
    (``{measure: {system: mean}}``), ``pairs`` (one dict per measure and pair: the
    systems, ``mean_diff`` (``system_a - system_b``), ``statistic``, ``pvalue``,
    ``pvalue_corrected``, ``significant``, ``method``, ``ci``, ``d_z``, ``g_z``,
    ``wins`` / ``ties`` / ``losses``), ``query_ids`` and ``per_query``
    (``{measure: {system: [values in query_ids order]}}``).
    """

    def __init__(self, core: _core._Report) -> None:
        self._core = core
        self._summary: dict[str, Any] | None = None
        self._full: dict[str, Any] | None = None

    @property
    def _data(self) -> dict[str, Any]:
        """Everything but the per-query values (parsed once, when first needed)."""
        if self._summary is None:
            self._summary = json.loads(self._core.to_json(False))
        return self._summary

    def _with_per_query(self) -> dict[str, Any]:
        if self._full is None:
            self._full = json.loads(self._core.to_json(True))
        return self._full

    @property
    def systems(self) -> list[str]:
        return list(self._data["systems"])

    @property
    def measures(self) -> list[str]:
        return [m["measure"] for m in self._data["measures"]]

    @property
    def query_ids(self) -> list[str]:
        return list(self._with_per_query()["query_ids"])

    @property
    def means(self) -> dict[str, dict[str, float]]:
        return {m["measure"]: dict(m["means"]) for m in self._data["measures"]}

    @property
    def pairs(self) -> list[dict[str, Any]]:
        return [{"measure": m["measure"], **p} for m in self._data["measures"] for p in m["pairs"]]

    @property
    def per_query(self) -> dict[str, dict[str, list[float]]]:
        return {m["measure"]: dict(m["per_query"]) for m in self._with_per_query()["measures"]}

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """Everything as plain Python values (non-finite numbers as None)."""
        return json.loads(self._core.to_json(per_query))

    def to_json(self, per_query: bool = False, indent: int | None = None) -> str:
        """Everything as JSON (per-query values with ``per_query=True``)."""
        if indent is None:
            return self._core.to_json(per_query)
        return json.dumps(self.to_dict(per_query), indent=indent, ensure_ascii=False)

    def to_markdown(self) -> str:
        """A Markdown table of means: best per measure in bold, a superscript letter for
        each system this one is significantly better than; then the caption."""
        return self._core.render("markdown")

    def to_latex(self) -> str:
        """A LaTeX table (booktabs): best per measure in bold, significance as
        superscript letters (as ranx prints them), a caption naming the test and the
        correction."""
        return self._core.render("latex")

    def to_csv(self) -> str:
        """One CSV row per measure and pair."""
        return self._core.render("csv")

    def to_table(self) -> str:
        """Plain text: the means table, then every pair."""
        return self._core.render("table")

    def to_dataframe(self, kind: str = "pairs") -> Any:
        """A pandas DataFrame: ``kind="pairs"`` one row per measure and pair (all the
        numbers), ``kind="means"`` systems x measures."""
        import pandas as pd

        if kind == "means":
            return pd.DataFrame(self.means).loc[self.systems, self.measures]
        if kind != "pairs":
            raise ValueError(f"kind must be 'pairs' or 'means', not {kind!r}")
        rows = []
        for p in self.pairs:
            row = dict(p)
            row["ci_low"], row["ci_high"] = row.pop("ci")
            rows.append(row)
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        return self.to_table()

    def __repr__(self) -> str:
        d = self._data
        return (
            f"Report(systems={self.systems}, measures={self.measures}, test={d['test']!r}, "
            f"correction={d['correction']!r}, queries={d['num_queries']})"
        )

    def _repr_html_(self) -> str:
        systems, data = self.systems, self._data
        head = "".join(f"<th>{html.escape(m)}</th>" for m in self.measures)
        rows = []
        for i, s in enumerate(systems):
            cells = []
            for m in data["measures"]:
                means = m["means"]
                best = max(systems, key=lambda t: -float("inf") if means[t] is None else means[t])
                beats = []
                for p in m["pairs"]:
                    if not p["significant"] or s not in (p["system_a"], p["system_b"]):
                        continue
                    other = p["system_b"] if p["system_a"] == s else p["system_a"]
                    if means[s] > means[other]:
                        beats.append(systems.index(other))
                v = "nan" if means[s] is None else f"{means[s]:.4f}"
                v = f"<b>{v}</b>" if s == best else v
                sup = "".join(_letter(j) for j in sorted(beats))
                cells.append(f"<td>{v}<sup>{sup}</sup></td>" if sup else f"<td>{v}</td>")
            rows.append(f"<tr><td>{_letter(i)}</td><td>{html.escape(s)}</td>{''.join(cells)}</tr>")
        return (
            f"<table><thead><tr><th>#</th><th>system</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody>"
            f"<caption>{html.escape(data['caption'])}</caption></table>"
        )


def _letter(i: int) -> str:
    c = "abcdefghijklmnopqrstuvwxyz"[i % 26]
    return c if i < 26 else f"{c}{i // 26}"


def _named_runs(runs: Any) -> list[tuple[str, _core.Run]]:
    if isinstance(runs, (str, bytes, os.PathLike)):
        raise InputError("runs must be a dict {name: run} or a list of runs, not one path")
    if isinstance(runs, Mapping):
        return [(str(name), _core.as_run(r)) for name, r in runs.items()]
    out = [_core.as_run(r) for r in runs]
    names = [r.runid for r in out]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise InputError(
                f"two runs have the run tag {n!r}; pass a dict {{name: run}} to name them"
            )
        seen.add(n)
    return list(zip(names, out))


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Iterable[Any],
    measures: str | Sequence[str],
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    baseline: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 42,
    complete: bool = False,
    **evaluate_options: Any,
) -> Report:
    """Evaluate ``runs`` on ``qrels`` and test which systems differ, per measure.

    ``runs``: a dict ``{name: run}`` or a list of runs (named by their run tags); each
    run (and ``qrels``) of any type :func:`irmetrics.evaluate` accepts. ``test``:
    ``"t"`` (paired Student's t), ``"wilcoxon"``, ``"sign"``, ``"randomization"``
    (Fisher; exact for <= 20 queries, else ``n_resamples`` seeded sign flips),
    ``"bootstrap"`` (Sakai's, shifted to the null), ``"tukey"`` (Tukey's HSD, as
    scipy's and ranx's) or ``"randomized_tukey"`` (Carterette's); the Tukey tests cover
    all systems at once and control the family-wise error themselves (no correction
    is applied on top). ``correction`` (``"holm"``,
    ``"bonferroni"``, ``"bh"``, ``"by"``, ``"none"``) adjusts the p-values of each
    measure as one family: all pairs, or with ``baseline`` (a system's name) each
    system against it. A pair is significant when its corrected p-value is at most
    ``alpha``; confidence intervals are at ``1 - alpha``.

    Every run must hold the same judged queries (an error names the first one missing),
    unless ``complete=True``: then missing queries score 0, as trec_eval -c.
    ``evaluate_options`` are :class:`irmetrics.Evaluator`'s (``relevance_level``,
    ``judged_only``, ``n_threads``, ...).
    """
    named = _named_runs(runs)
    ev = Evaluator(qrels, measures, complete=complete, **evaluate_options)
    return Report(
        _core.compare_runs_report(ev, named, test, correction, alpha, baseline, n_resamples, seed)
    )


def compare_values(
    values: Mapping[str, Mapping[str, Any]],
    *,
    query_ids: Sequence[str] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    baseline: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 42,
) -> Report:
    """:func:`compare` for per-query values computed elsewhere:
    ``values = {measure: {system: array of per-query values}}`` (same query order
    everywhere)."""
    measures = list(values.items())
    if not measures:
        raise InputError("no measures to compare")
    systems = list(measures[0][1])
    rows = []
    for name, per_system in measures:
        if list(per_system) != systems:
            raise InputError(f"measure {name!r} does not hold the systems {systems}")
        rows.append((str(name), [per_system[s] for s in systems]))
    n = len(rows[0][1][0]) if systems else 0
    qids = [str(q) for q in query_ids] if query_ids is not None else [str(i) for i in range(n)]
    return Report(
        _core.compare_values_report(
            [str(s) for s in systems],
            qids,
            rows,
            test,
            correction,
            alpha,
            baseline,
            n_resamples,
            seed,
        )
    )
