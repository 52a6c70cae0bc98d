"""Comparing systems: :func:`compare` evaluates several runs on one qrels and tests
every pair (or every run against a baseline); :class:`Report` holds the outcome and
renders it (Markdown, LaTeX, plain text, CSV, JSON, pandas, HTML)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from . import _core
from ._core import Evaluator, InputError
from ._files import atomic_write
from ._frames import is_pandas_frame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

__all__ = ["Report", "compare", "html_report"]

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
        # the tables' digits and percentages when not given (irmetrics.compat.ranx's
        # compare sets ranx's rounding_digits and show_percentages)
        self._style: tuple[int, bool] = (4, False)

    def _styled(self, digits: int | None, percentages: bool | None) -> tuple[int, bool]:
        return (
            self._style[0] if digits is None else digits,
            self._style[1] if percentages is None else percentages,
        )

    @property
    def _data(self) -> dict[str, Any]:
        """Everything but the per-query values (parsed once, when first needed)."""
        if self._summary is None:
            import json  # on first use: it costs start-up a few ms

            self._summary = json.loads(self._core.to_json(False))
        return self._summary

    def _with_per_query(self) -> dict[str, Any]:
        if self._full is None:
            import json  # on first use: it costs start-up a few ms

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
        import json  # on first use: it costs start-up a few ms

        return json.loads(self._core.to_json(per_query))

    def to_json(self, per_query: bool = False, indent: int | None = None) -> str:
        """Everything as JSON (per-query values with ``per_query=True``)."""
        if indent is None:
            return self._core.to_json(per_query)
        import json  # on first use: it costs start-up a few ms

        return json.dumps(self.to_dict(per_query), indent=indent, ensure_ascii=False)

    def save(
        self,
        path: str | os.PathLike[str],
        format: str | None = None,
        *,
        digits: int | None = None,
        percentages: bool | None = None,
    ) -> None:
        """Write the report to ``path`` (atomically), as ranx's ``Report.save``:
        ``format`` ``"json"`` (everything, per-query values too, indented),
        ``"markdown"``, ``"latex"``, ``"csv"``, ``"table"`` or ``"html"``; by default
        from the file's extension (``.json``, ``.md``, ``.tex``, ``.csv``, ``.txt``,
        ``.html``). ``digits`` and ``percentages`` as :meth:`to_markdown`."""
        if format is None:
            ext = os.path.splitext(os.fspath(path))[1].lower()
            format = _SAVE_FORMATS.get(ext)
            if format is None:
                known = ", ".join(_SAVE_FORMATS)
                raise InputError(
                    f"{os.fspath(path)!r}: no format for the extension {ext!r} (one of "
                    f"{known}); pass format="
                )
        if format == "json":
            text = self.to_json(per_query=True, indent=2)
        elif format == "html":
            text = self.to_html()
        else:
            text = self._core.render(format, *self._styled(digits, percentages))
        atomic_write(path, lambda f: f.write(text.encode()))

    def to_markdown(self, digits: int | None = None, percentages: bool | None = None) -> str:
        """A Markdown table of means: best per measure in bold, a superscript letter for
        each system this one is significantly better than; then the caption. The means
        with ``digits`` decimal places (4 unless the report was made with others);
        ``percentages=True`` prints them times 100 with
        the same precision, two places fewer (0.5796 is 57.96 at 4 digits), as ranx's
        ``rounding_digits`` and ``show_percentages``."""
        return self._core.render("markdown", *self._styled(digits, percentages))

    def to_latex(self, digits: int | None = None, percentages: bool | None = None) -> str:
        """A LaTeX table (booktabs): best per measure in bold, significance as
        superscript letters (as ranx prints them), a caption naming the test and the
        correction; ``digits`` and ``percentages`` as :meth:`to_markdown`."""
        return self._core.render("latex", *self._styled(digits, percentages))

    def to_csv(self) -> str:
        """One CSV row per measure and pair."""
        return self._core.render("csv")

    def to_table(self, digits: int | None = None, percentages: bool | None = None) -> str:
        """Plain text: the means table, then every pair (``digits`` and ``percentages``
        as :meth:`to_markdown`, for the means and the differences)."""
        return self._core.render("table", *self._styled(digits, percentages))

    def to_dataframe(self, kind: str = "pairs") -> Any:
        """A pandas DataFrame: ``kind="pairs"`` one row per measure and pair (all the
        numbers), ``kind="means"`` systems x measures."""
        import pandas as pd

        if kind == "means":
            return pd.DataFrame(self.means).loc[self.systems, self.measures]
        if kind != "pairs":
            raise InputError(f"kind must be 'pairs' or 'means', not {kind!r}")
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

    def _means_cells(self) -> list[list[tuple[float | None, bool, str]]]:
        """Per system, per measure: (mean, best in its column, superscript letters of
        the systems it is significantly better than)."""
        systems, out = self.systems, []
        for s in systems:
            row = []
            for m in self._data["measures"]:
                means = m["means"]
                best = max(systems, key=lambda t: -float("inf") if means[t] is None else means[t])
                beats = []
                for p in m["pairs"]:
                    if not p["significant"] or s not in (p["system_a"], p["system_b"]):
                        continue
                    other = p["system_b"] if p["system_a"] == s else p["system_a"]
                    if means[s] > means[other]:
                        beats.append(systems.index(other))
                row.append((means[s], s == best, "".join(_letter(j) for j in sorted(beats))))
            out.append(row)
        return out

    def _means_table_html(self) -> str:
        head = "".join(f"<th>{_escape(m)}</th>" for m in self.measures)
        rows = []
        for i, (s, cells) in enumerate(zip(self.systems, self._means_cells())):
            tds = []
            for mean, best, sup in cells:
                v = _fmt(mean)
                v = f"<b>{v}</b>" if best else v
                sup_html = f"<sup>{sup}</sup>" if sup else ""
                tds.append(f'<td data-v="{_exact(mean)}">{v}{sup_html}</td>')
            rows.append(f"<tr><td>{_letter(i)}</td><td>{_escape(s)}</td>{''.join(tds)}</tr>")
        return (
            f'<table id="means"><thead><tr><th>#</th><th>system</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody>"
            f"<caption>{_escape(self._data['caption'])}</caption></table>"
        )

    def _repr_html_(self) -> str:
        return self._means_table_html()

    def to_html(
        self,
        *,
        title: str | None = None,
        precision_recall: Mapping[str, Any] | None = None,
        differences: str | Sequence[str] | None = None,
    ) -> str:
        """One self-contained HTML page (inline SVG and script, nothing fetched): the
        means table with significance letters, every pair's test, per-topic difference
        bars, precision-recall curves when given, and the per-query values in a table
        sorted by clicking a column head (or by the address: ``#sort=3`` ascending,
        ``#sort=3-desc``; columns count from 0).

        ``precision_recall``: :func:`irmetrics.plot.precision_recall`'s ``data``
        (``{system: {"recall": [...], "precision": [...]}}``); :func:`html_report`
        computes it. ``differences``: the measure(s) whose per-topic differences are
        drawn, each system against the baseline (or the first system); default the
        first measure, ``[]`` for none. Pictures need matplotlib
        (``pip install 'irmetrics[plot]'``)."""
        d = self._data
        measures, systems = self.measures, self.systems
        if differences is None:
            diff_measures = measures[:1]
        elif isinstance(differences, str):
            diff_measures = [differences]
        else:
            diff_measures = list(differences)
        for m in diff_measures:
            if m not in measures:
                raise InputError(f"differences: {m!r} is not one of the measures {measures}")
        figures: list[tuple[str, str]] = []
        if precision_recall or (diff_measures and len(systems) > 1):
            from . import plot

            plot._pyplot()  # the missing extra is named before any work
            if precision_recall:
                fig, ax = _figure((6.4, 4.2))
                plot._draw_precision_recall(ax, precision_recall)
                figures.append(("Precision-recall", _svg(fig, "pr")))
            per_query = self.per_query if diff_measures else {}
            reference = d["baseline"] if d["baseline"] is not None else systems[0]
            for m in diff_measures:
                ref = per_query[m][reference]
                for s in systems:
                    if s == reference:
                        continue
                    diff = [a - b for a, b in zip(per_query[m][s], ref)]
                    fig, ax = _figure((7.2, 3.4))
                    plot._draw_differences(ax, self.query_ids, diff, m, (s, reference))
                    figures.append((f"{m}: {s} - {reference}", _svg(fig, f"d{len(figures)}")))
        heading = title if title is not None else "irmetrics report"
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{_escape(heading)}</title>",
            f"<style>{_CSS}</style></head><body>",
            f"<h1>{_escape(heading)}</h1>",
            f'<p class="meta">{len(systems)} systems, {d["num_queries"]} queries.</p>',
            "<h2>Means</h2>",
            self._means_table_html(),
            "<h2>Pairs</h2>",
            self._pairs_table_html(),
        ]
        if figures:
            parts.append("<h2>Pictures</h2>")
        for label, svg in figures:
            parts.append(f'<figure aria-label="{_escape(label)}">{svg}</figure>')
        parts += [
            "<h2>Per query</h2>",
            '<p class="meta">Click a column head to sort (again to reverse).</p>',
            self._per_query_table_html(),
            f"<script>{_SORT_JS}</script>",
            "</body></html>",
        ]
        return "\n".join(parts) + "\n"

    def _pairs_table_html(self) -> str:
        heads = [
            "measure", "system a", "system b", "mean a - b", "CI low", "CI high",
            "statistic", "p", "p corrected", "significant", "d_z", "wins", "ties", "losses",
        ]  # fmt: skip
        rows = []
        for p in self.pairs:
            lo, hi = p["ci"] if p["ci"] is not None else (None, None)
            cells = [
                _escape(p["measure"]),
                _escape(p["system_a"]),
                _escape(p["system_b"]),
                *(_num_td(v) for v in (p["mean_diff"], lo, hi, p["statistic"])),
                *(_num_td(v, "p") for v in (p["pvalue"], p["pvalue_corrected"])),
                "yes" if p["significant"] else "no",
                _num_td(p["d_z"]),
                str(p["wins"]),
                str(p["ties"]),
                str(p["losses"]),
            ]
            rows.append(
                "<tr>"
                + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells)
                + "</tr>"
            )
        head = "".join(f"<th>{h}</th>" for h in heads)
        return (
            f'<table id="pairs" class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    def _per_query_table_html(self) -> str:
        per_query, systems = self.per_query, self.systems
        columns = [(m, s, per_query[m][s]) for m in self.measures for s in systems]
        head = "<th>query</th>" + "".join(
            f"<th>{_escape(m)}<br>{_escape(s)}</th>" for m, s, _ in columns
        )
        rows = []
        for i, q in enumerate(self.query_ids):
            tds = "".join(_num_td(values[i]) for _, _, values in columns)
            rows.append(f"<tr><td>{_escape(q)}</td>{tds}</tr>")
        return (
            f'<table id="per-query" class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )


def _escape(text: str) -> str:
    """Text for HTML (``html`` imported on first use: at import it costs start-up ~10 ms)."""
    import html

    return html.escape(text)


def _fmt(v: float | None, kind: str = "") -> str:
    if v is None:
        return "nan"
    if kind == "p":
        return f"{v:.3g}" if v >= 1e-3 else f"{v:.2e}"
    return f"{v:.4f}"


def _exact(v: float | None) -> str:
    """The value as Python's shortest round-trip repr (parsed back exactly)."""
    return "NaN" if v is None else repr(float(v))


def _num_td(v: float | None, kind: str = "") -> str:
    return f'<td data-v="{_exact(v)}">{_fmt(v, kind)}</td>'


def _figure(size: tuple[float, float]) -> tuple[Any, Any]:
    """A matplotlib Figure outside pyplot's global state (nothing to close)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    return fig, fig.subplots()


def _svg(fig: Any, salt: str) -> str:
    """The figure as an inline ``<svg>`` element: text kept as text, no date, ids
    salted per figure so that several figures in one page do not share ids."""
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:14px}"
    "th,td{border:1px solid #ccc;padding:3px 8px}td[data-v]{text-align:right}"
    "caption{caption-side:bottom;text-align:left;font-size:12px;color:#555;padding-top:4px}"
    "table.sortable th{cursor:pointer;background:#f3f3f3}"
    "figure{display:inline-block;margin:0.5em}.meta{color:#555;font-size:13px}"
)

# Sorting the tables in the browser: numbers by their exact value (data-v; NaN last),
# other cells as text with numeric collation; a stable sort, so ties keep their order.
_SORT_JS = """(function(){
function sortTable(t,col,desc){
 var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
 function key(r){var c=r.cells[col];
  return c.hasAttribute("data-v")?parseFloat(c.getAttribute("data-v")):c.textContent;}
 rows.sort(function(a,b){var x=key(a),y=key(b),r;
  if(typeof x==="number"&&typeof y==="number"){
   if(isNaN(x)||isNaN(y))return isNaN(x)-isNaN(y);r=x-y;}
  else r=String(x).localeCompare(String(y),undefined,{numeric:true});
  return desc?-r:r;});
 rows.forEach(function(r){body.appendChild(r);});
 t.setAttribute("data-sorted",col+(desc?"-desc":""));}
document.querySelectorAll("table.sortable").forEach(function(t){
 Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){
  th.addEventListener("click",function(){sortTable(t,i,t.getAttribute("data-sorted")===String(i));});});});
var m=/sort=(\\d+)(-desc)?/.exec(location.hash),t=document.getElementById("per-query");
if(m&&t)sortTable(t,+m[1],!!m[2]);
})();"""


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
    measures: _core._Measures,
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    baseline: str | None = None,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int = 42,
    complete: bool = False,
    progress: bool | Callable[[int, int], object] | None = None,
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
    is applied on top). ``correction`` (``"holm"``, ``"bonferroni"``, ``"sidak"``,
    ``"holm-sidak"``, ``"hochberg"``, ``"hommel"``, ``"bh"``, ``"by"``, ``"none"``; see
    :func:`irmetrics.stats.correct`) adjusts the p-values of each
    measure as one family: all pairs, or with ``baseline`` (a system's name) each
    system against it. A pair is significant when its corrected p-value is at most
    ``alpha``; confidence intervals are at ``1 - alpha`` (two-sided).
    ``alternative``: ``"two-sided"``, or with ``baseline`` one-sided, as scipy's:
    ``"greater"`` tests whether each system scores higher than the baseline,
    ``"less"`` lower (the Tukey tests are two-sided only).

    Every run must hold the same judged queries (an error names the first one missing),
    unless ``complete=True``: then missing queries score 0, as trec_eval -c.
    ``evaluate_options`` are :class:`irmetrics.Evaluator`'s (``relevance_level``,
    ``judged_only``, ``n_threads``, ...). ``progress`` as in
    :func:`irmetrics.evaluate`: the queries evaluated of every run, then the resamples
    of a Monte Carlo randomization test (else one unit per measure); ``total`` grows
    when the comparison starts.
    """
    how = _how(locals())
    named = _named_runs(runs)
    ev = Evaluator(qrels, measures, complete=complete, **evaluate_options)
    return Report(_core.compare_runs_report(ev, named, how, progress))


# Report.save's formats by file extension
_SAVE_FORMATS = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".tex": "latex",
    ".csv": "csv",
    ".txt": "table",
    ".html": "html",
    ".htm": "html",
}

# compare's own keywords (the rest are evaluation options), which _core reads as a dict
_COMPARE_ONLY = ("test", "correction", "alpha", "baseline", "alternative", "n_resamples", "seed")


def _how(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison's options out of a function's arguments (its ``locals()``)."""
    return {k: arguments[k] for k in _COMPARE_ONLY}


def html_report(
    qrels: Any,
    runs: Mapping[str, Any] | Iterable[Any],
    measures: _core._Measures,
    *,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    differences: str | Sequence[str] | None = None,
    **compare_options: Any,
) -> str:
    """A report to open in a browser: :func:`compare` of ``runs`` on ``qrels``
    (``compare_options``: ``test``, ``correction``, ``baseline``, ... and the
    evaluation options) rendered by :meth:`Report.to_html` with trec_eval's
    interpolated precision-recall curves of every run. Returns the HTML; with
    ``path`` also writes it there (atomically). Needs matplotlib
    (``pip install 'irmetrics[plot]'``)."""
    from . import plot

    plot._pyplot()  # the missing extra is named before any work
    named = _named_runs(runs)
    report = compare(qrels, dict(named), measures, **compare_options)
    options = {k: v for k, v in compare_options.items() if k not in _COMPARE_ONLY}
    curves = plot._precision_recall_data(qrels, named, True, None, options)
    page = report.to_html(title=title, precision_recall=curves, differences=differences)
    if path is not None:
        atomic_write(path, lambda f: f.write(page.encode()))
    return page


def compare_values(
    values: Mapping[str, Mapping[str, Any]],
    *,
    query_ids: Sequence[str] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    baseline: str | None = None,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int = 42,
) -> Report:
    """:func:`compare` for per-query values computed elsewhere:
    ``values = {measure: {system: array of per-query values}}`` (same query order
    everywhere)."""
    how = _how(locals())
    if not isinstance(values, Mapping):
        raise InputError(
            f"values must be a mapping {{measure: {{system: per-query values}}}}, got "
            f"{type(values).__name__}"
        )
    measures = list(values.items())
    if not measures:
        raise InputError("no measures to compare")
    for name, per_system in measures:
        # a pandas DataFrame (a column per system) is taken as such a mapping
        if not isinstance(per_system, Mapping) and not is_pandas_frame(per_system):
            raise InputError(
                f"values[{name!r}] must be a mapping {{system: per-query values}}, got "
                f"{type(per_system).__name__}"
            )
    systems = list(measures[0][1])
    rows = []
    for name, per_system in measures:
        if list(per_system) != systems:
            raise InputError(f"measure {name!r} does not hold the systems {systems}")
        rows.append((str(name), [per_system[s] for s in systems]))
    n = len(rows[0][1][0]) if systems else 0
    qids = [str(q) for q in query_ids] if query_ids is not None else [str(i) for i in range(n)]
    return Report(_core.compare_values_report([str(s) for s in systems], qids, rows, how))
