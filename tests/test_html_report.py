"""The HTML report (``irmetrics.html_report``, ``Report.to_html``, ``irmetrics report``):
rendered in headless Chromium, whose screenshot must not be blank and whose DOM (after
the page's script ran) must carry the numbers of peers outside our code: per-topic AP
and P@10 from ir_measures (pytrec_eval), means of those, paired t-test p-values from
scipy and Holm's correction from statsmodels; sorting is checked in the browser too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

import irmetrics

DATA = Path(__file__).resolve().parent / "data"
QRELS = DATA / "dl19-passage.qrels"
RUNS = {p.name: p for p in (DATA / "dl19-bm25.run", DATA / "dl19-dense.run")}
RUNS["dl19-synthetic.run"] = DATA / "dl19-synthetic.run"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium (Debian's package chromium; .ci/run installs it)")


def _browser(args: list[str], url: str) -> str:
    out = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", *args, url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout


class _Tables(HTMLParser):
    """Every table of a page by id: rows of (text, data-v or None) cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, str | None]]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._value: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id") or ""
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell, self._value = [], a.get("data-v")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append(("".join(self._cell).strip(), self._value))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(page: str) -> dict[str, list[list[tuple[str, str | None]]]]:
    p = _Tables()
    p.feed(page)
    return p.tables


@pytest.fixture(scope="module")
def peers() -> dict:
    """Per-topic AP and P@10 of each run from ir_measures (pytrec_eval)."""
    import ir_measures

    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    out: dict[str, dict[str, dict[str, float]]] = {"map": {}, "P@10": {}}
    for name, path in RUNS.items():
        run = list(ir_measures.read_trec_run(str(path)))
        for m in ir_measures.iter_calc([ir_measures.AP, ir_measures.P @ 10], qrels, run):
            key = "map" if m.measure == ir_measures.AP else "P@10"
            out[key].setdefault(name, {})[m.query_id] = m.value
    return out


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    html = irmetrics.html_report(
        str(QRELS), {n: str(p) for n, p in RUNS.items()}, ["map", "P@10"], path=path
    )
    assert path.read_text(encoding="utf-8") == html
    return path


def test_rendered_page_is_not_blank(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    _browser([f"--screenshot={shot}", "--window-size=1280,2400"], page.as_uri())
    image = matplotlib.image.imread(shot)
    pixels = image.reshape(-1, image.shape[-1])[:, :3]
    assert len(np.unique(pixels, axis=0)) > 50  # text, lines and bars in several colours
    assert (pixels.min(axis=1) < 0.9).mean() > 0.05  # not a white page


def test_tables_in_the_browser_equal_ir_measures_and_scipy(page: Path, peers: dict) -> None:
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    dom = _browser(["--dump-dom"], page.as_uri())
    tables = _tables(dom)
    names = list(RUNS)
    measures = ["map", "P@10"]

    # per query: every cell of every column equals the peer's per-topic value
    head, *rows = tables["per-query"]
    assert [h for h, _ in head] == ["query"] + [f"{m}{s}" for m in measures for s in names]
    assert len(rows) == 43
    for row in rows:
        q = row[0][0]
        got = [float(v) for _, v in row[1:]]
        want = [peers[m][s][q] for m in measures for s in names]
        assert got == pytest.approx(want, abs=1e-12)

    # means
    head, *rows = tables["means"]
    for i, s in enumerate(names):
        assert rows[i][1][0] == s
        for j, m in enumerate(measures):
            want = float(np.mean(list(peers[m][s].values())))
            assert float(rows[i][2 + j][1]) == pytest.approx(want, abs=1e-12)
            assert rows[i][2 + j][0].startswith(f"{want:.4f}")

    # pairs: paired t-test p-values (scipy), Holm over the three pairs (statsmodels)
    head, *rows = tables["pairs"]
    col = {h: k for k, (h, _) in enumerate(head)}
    assert len(rows) == 6
    for m in measures:
        mine = [r for r in rows if r[col["measure"]][0] == m]
        raw, corrected = [], []
        for r in mine:
            a, b = r[col["system a"]][0], r[col["system b"]][0]
            qs = sorted(peers[m][a])
            x = [peers[m][a][q] for q in qs]
            y = [peers[m][b][q] for q in qs]
            p = ttest_rel(x, y).pvalue
            assert float(r[col["p"]][1]) == pytest.approx(p, rel=1e-9)
            raw.append(p)
            corrected.append(float(r[col["p corrected"]][1]))
        assert corrected == pytest.approx(list(multipletests(raw, method="holm")[1]), rel=1e-9)


def test_sorting_in_the_browser(page: Path, peers: dict) -> None:
    """``#sort=1-desc`` sorts the per-query table by its first value column, descending
    (the page's own script, run by Chromium); ties keep the query order."""
    dom = _browser(["--dump-dom"], page.as_uri() + "#sort=1-desc")
    _, *rows = _tables(dom)["per-query"]
    first = next(iter(RUNS))
    got = [row[0][0] for row in rows]
    ap = peers["map"][first]
    assert [ap[q] for q in got] == sorted(ap.values(), reverse=True)


def test_cli_writes_the_same_page_atomically(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    cmd = [sys.executable, "-m", "irmetrics", "report", "-m", "map", "-m", "P@10"]
    cmd += ["--output", str(out), str(QRELS), *(str(p) for p in RUNS.values())]
    subprocess.run(cmd, check=True, env={**os.environ, "IRMETRICS_NUM_THREADS": "1"})
    want = irmetrics.html_report(str(QRELS), {n: str(p) for n, p in RUNS.items()}, ["map", "P@10"])
    assert out.read_text(encoding="utf-8") == want
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]  # no temporary left

    # standard output (-o, as the issue spells it), a title, a baseline
    cmd = [sys.executable, "-m", "irmetrics", "report", "--title", "DL 2019", "-o", "-"]
    cmd += ["--baseline", "dl19-bm25.run", str(QRELS), *(str(p) for p in RUNS.values())]
    page = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    assert "<title>DL 2019</title>" in page
    head, *rows = _tables(page)["pairs"]
    assert {r[2][0] for r in rows} == {"dl19-bm25.run"}  # each run against the baseline


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--output", "OUT", "QRELS"], 2, "at least 2 run files"),
        (["QRELS", "RUN", "RUN"], 2, "needs -o/--output"),
        (["--format", "latex", "--output", "OUT", "QRELS", "RUN", "RUN"], 2, "writes HTML"),
        (["-m", "nDCG@x", "--output", "OUT", "QRELS", "RUN", "RUN"], 2, "'x'"),
        (["--output", "OUT", "QRELS", "RUN", "MISSING"], 1, "missing.run"),
        # the command named is report, whose options are compare's
        (["-x", "-o", "OUT", "QRELS", "RUN", "RUN"], 2, "unknown option -x of report"),
        (["-o", "OUT", "QRELS", "RUN"], 2, "report expects a qrels file and at least 2 run"),
    ],
)
def test_cli_errors_leave_nothing_behind(tmp_path: Path, args, status, message) -> None:
    out = tmp_path / "r.html"
    subst = {"OUT": str(out), "QRELS": str(QRELS), "RUN": str(DATA / "dl19-bm25.run")}
    subst["MISSING"] = str(tmp_path / "missing.run")
    argv = [subst.get(a, a) for a in args]
    r = subprocess.run(
        [sys.executable, "-m", "irmetrics", "report", *argv], capture_output=True, text=True
    )
    assert r.returncode == status, r.stderr
    assert message in r.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_to_html_without_pictures_and_bad_measure_names() -> None:
    report = irmetrics.compare(str(QRELS), {n: str(p) for n, p in RUNS.items()}, ["map"])
    page = report.to_html(differences=[])
    assert "<svg" not in page and 'id="per-query"' in page
    with pytest.raises(irmetrics.InputError, match="not one of the measures"):
        report.to_html(differences="P@10")
