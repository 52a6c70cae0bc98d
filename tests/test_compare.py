"""irmetrics.compare against ranx's compare, run here on the same runs; the Report's
formats; the bad inputs of the issue.

ranx and irmetrics agree on these measures when scores are distinct (no tie-breaking
question), so the means must be equal, the t-test p-values equal to 1e-9 (ranx calls
scipy's ttest_rel), the significance marks the same, and Fisher's randomization
p-values equal within Monte Carlo error.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest

# the peers are test extras: missing, the module fails (never a silent skip)
import ranx
import scipy.stats as scipy_stats
import statsmodels.stats.multitest as multitest

import irmetrics

# ranx's numba kernels warn about their own casts while compiling
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")

MEASURES = {"ndcg@10": "ndcg@10", "map@100": "map@100", "precision@5": "precision@5"}


def make_data(n_queries=60, n_systems=4, depth=30, seed=0):
    """Qrels and runs with distinct scores; systems of different quality."""
    rng = np.random.default_rng(seed)
    qrels = {}
    runs = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(depth * 2)]
        rel = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 15, replace=False)}
        if not any(rel.values()):
            rel[docs[0]] = 1
        qrels[qid] = rel
        for s in range(n_systems):
            # better systems put relevant documents higher
            boost = 0.15 * s
            scores = {}
            for rank, d in enumerate(rng.permutation(docs)[:depth]):
                scores[str(d)] = (
                    float(rng.random()) + boost * rel.get(str(d), 0) + rank * 1e-9 + s * 1e-10
                )
            runs.setdefault(f"sys{s}", {})[qid] = scores
    return qrels, runs


@pytest.fixture(scope="module")
def data():
    return make_data()


def ranx_report(qrels, runs, stat_test, **kw):
    rq = ranx.Qrels(qrels)
    rr = [ranx.Run(r, name=name) for name, r in runs.items()]
    return ranx.compare(rq, rr, list(MEASURES), stat_test=stat_test, **kw)


def test_t_test_report_matches_ranx(data):
    qrels, runs = data
    theirs = ranx_report(qrels, runs, "student", max_p=0.05)
    ours = irmetrics.compare(qrels, runs, list(MEASURES), test="t", correction="none", alpha=0.05)
    names = list(runs)
    assert ours.systems == names and ours.measures == list(MEASURES)
    for m in MEASURES:
        for s in names:
            assert math.isclose(ours.means[m][s], theirs.results[s][m], rel_tol=1e-12), (m, s)
    pairs = {(p["measure"], p["system_a"], p["system_b"]): p for p in ours.pairs}
    assert len(pairs) == len(MEASURES) * len(names) * (len(names) - 1) // 2
    for (m, a, b), p in pairs.items():
        ref = theirs.comparisons[a, b][m]["p_value"]
        assert math.isclose(p["pvalue"], ref, rel_tol=1e-9), (m, a, b, p["pvalue"], ref)
        assert p["pvalue_corrected"] == p["pvalue"]
        wtl = theirs.win_tie_loss[(a, b)][m]
        assert (p["wins"], p["ties"], p["losses"]) == (wtl["W"], wtl["T"], wtl["L"])
    # the same significance marks as ranx prints (letters of the systems beaten)
    table = ours.to_markdown()
    for i, s in enumerate(names):
        row = next(line for line in table.splitlines() if line.startswith(f"| {'abcd'[i]} |"))
        cells = [c.strip() for c in row.strip("|").split("|")][2:]
        for m, cell in zip(MEASURES, cells):
            marks = cell.replace("*", "")[len("0.0000") :]
            assert marks == theirs.get_superscript_for_table(s, m), (s, m, cell)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("holm", "holm"),
        ("hochberg", "simes-hochberg"),
        ("sidak", "sidak"),
        ("hommel", "hommel"),
    ],
)
def test_correction_is_statsmodels_over_each_measure(data, ours, theirs):
    qrels, runs = data
    correction = ours
    ours = irmetrics.compare(qrels, runs, ["ndcg@10", "map@100"], correction=correction)
    assert {"holm": "Holm", "hochberg": "Hochberg", "sidak": "Šidák", "hommel": "Hommel"}[
        correction
    ] in (ours.to_latex() + ours.to_markdown())
    for m in ours.measures:
        ps = [p for p in ours.pairs if p["measure"] == m]
        ref = multitest.multipletests([p["pvalue"] for p in ps], method=theirs)[1]
        assert np.allclose([p["pvalue_corrected"] for p in ps], ref, rtol=1e-12, atol=0)
        for p in ps:
            assert p["significant"] == (p["pvalue_corrected"] <= 0.05)


def test_fisher_within_monte_carlo_error_of_ranx(data):
    qrels, runs = data
    n = 10_000
    theirs = ranx_report(qrels, runs, "fisher", n_permutations=n, max_p=0.05)
    ours = irmetrics.compare(
        qrels, runs, list(MEASURES), test="randomization", correction="none", n_resamples=n
    )
    for p in ours.pairs:
        ref = theirs.comparisons[p["system_a"], p["system_b"]][p["measure"]]["p_value"]
        mid = (p["pvalue"] + ref) / 2
        se = math.sqrt(max(mid * (1 - mid), 1 / n) / n)
        # two independent estimates (ranx counts / n, ours (count + 1) / (n + 1))
        assert abs(p["pvalue"] - ref) <= 4.5 * se + 2 / n, (p, ref)
        assert p["method"] == "Monte Carlo"


def test_report_values_match_scipy_for_every_test(data):
    qrels, runs = data
    for test, ref_fn in [
        ("t", lambda x, y: scipy_stats.ttest_rel(x, y).pvalue),
        ("wilcoxon", lambda x, y: scipy_stats.wilcoxon(x, y).pvalue),
        (
            "sign",
            lambda x, y: scipy_stats.binomtest(int(np.sum(x > y)), int(np.sum(x != y))).pvalue,
        ),
    ]:
        r = irmetrics.compare(qrels, runs, ["ndcg@10"], test=test, correction="none")
        pq = r.per_query["ndcg@10"]
        for p in r.pairs:
            x, y = np.array(pq[p["system_a"]]), np.array(pq[p["system_b"]])
            assert math.isclose(p["pvalue"], float(ref_fn(x, y)), rel_tol=1e-9), (test, p)


def test_baseline_and_formats(data):
    qrels, runs = data
    r = irmetrics.compare(qrels, runs, ["ndcg@10", "map@100"], baseline="sys0", seed=1)
    assert {(p["system_a"], p["system_b"]) for p in r.pairs} == {
        ("sys1", "sys0"),
        ("sys2", "sys0"),
        ("sys3", "sys0"),
    }
    md = r.to_markdown()
    assert md.startswith("| # | system | ndcg@10 | map@100 |")
    assert "Holm's correction" in md and "each system against sys0" in md
    tex = r.to_latex()
    for piece in ("\\toprule", "\\midrule", "\\bottomrule", "\\textbf{", "\\caption{"):
        assert piece in tex
    assert "paired Student's t-test" in tex
    assert "sys0" in str(r) and "p_corr" in str(r)
    d = r.to_dict()
    assert d["test"] == "t" and d["correction"] == "holm" and len(d["query_ids"]) == 60
    assert json.loads(r.to_json())["baseline"] == "sys0"
    df = r.to_dataframe()
    assert len(df) == 6 and {"pvalue", "ci_low", "ci_high", "d_z"} <= set(df.columns)
    means = r.to_dataframe("means")
    assert list(means.index) == list(runs) and list(means.columns) == ["ndcg@10", "map@100"]
    assert '<table id="means">' in r._repr_html_() and "<b>" in r._repr_html_()
    csv = r.to_csv().splitlines()
    assert csv[0].startswith("measure,system_a,system_b") and len(csv) == 7


@pytest.mark.parametrize(("digits", "percentages"), [(3, True), (2, False), (5, True), (2, True)])
def test_digits_and_percentages_print_as_ranx(data, digits, percentages):
    """to_markdown / to_latex / to_table(digits=, percentages=) print each mean as
    ranx's Report does with rounding_digits= and show_percentages= (its format_score)."""
    qrels, runs = data
    theirs = ranx_report(
        qrels, runs, "student", rounding_digits=digits, show_percentages=percentages
    )
    ours = irmetrics.compare(qrels, runs, list(MEASURES), correction="none")
    expected = [[theirs.format_score(theirs.results[s][m]) for m in MEASURES] for s in runs]
    md = ours.to_markdown(digits=digits, percentages=percentages).splitlines()
    tex = ours.to_latex(digits=digits, percentages=percentages).splitlines()
    for i, s in enumerate(runs):
        row = next(line for line in md if line.startswith(f"| {'abcd'[i]} | {s} |"))
        cells = [c.strip().replace("*", "") for c in row.strip("|").split("|")][2:]
        assert [c[: len(e)] for c, e in zip(cells, expected[i])] == expected[i], (row, expected)
        row = next(line for line in tex if line.startswith(f"{'abcd'[i]} & {s} &"))
        cells = [c.strip().removeprefix("\\textbf{") for c in row.split("&")][2:]
        assert [c[: len(e)] for c, e in zip(cells, expected[i])] == expected[i], (row, expected)
    if percentages:
        assert f"| {next(iter(MEASURES))} (%) |" in md[0]
    assert ours.to_table(digits=digits, percentages=percentages).count(expected[0][0]) >= 1
    with pytest.raises(irmetrics.InputError, match="digits must be at most 17, got 18"):
        ours.to_markdown(digits=18)
    with pytest.raises(irmetrics.InputError, match="digits"):
        ours.to_latex(digits=-1)
    # ranx's option names, given to compare, say where they went
    with pytest.raises(irmetrics.InputError, match=r"to_latex\(digits=3\)"):
        irmetrics.compare(qrels, runs, "ndcg@10", rounding_digits=3)
    with pytest.raises(irmetrics.InputError, match=r"percentages=True"):
        irmetrics.compare(qrels, runs, "ndcg@10", show_percentages=True)


def test_save_by_extension(data, tmp_path):
    """Report.save, as ranx's (which writes its to_dict() as JSON): the format from the
    extension, each file what the matching to_* method gives."""
    qrels, runs = data
    r = irmetrics.compare(qrels, runs, ["ndcg@10"])
    r.save(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == r.to_dict(per_query=True)
    r.save(tmp_path / "r.tex", digits=3, percentages=True)
    assert (tmp_path / "r.tex").read_text() == r.to_latex(digits=3, percentages=True)
    r.save(str(tmp_path / "r.md"))
    assert (tmp_path / "r.md").read_text() == r.to_markdown()
    r.save(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text() == r.to_csv()
    r.save(tmp_path / "table", format="table")
    assert (tmp_path / "table").read_text() == r.to_table()
    r.save(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    with pytest.raises(irmetrics.InputError, match=r"no format for the extension '\.xls'"):
        r.save(tmp_path / "r.xls")
    with pytest.raises(irmetrics.InputError, match="unknown format 'xls'"):
        r.save(tmp_path / "r.out", format="xls")
    assert not (tmp_path / "r.xls").exists() and not (tmp_path / "r.out").exists()


def test_names_with_line_breaks_keep_the_tables_in_shape(data):
    """A system's name holding a line break or a tab is shown escaped in the text and
    Markdown tables (raw, it split a row in two); CSV quotes it, LaTeX and HTML have
    their own escapes."""
    qrels, runs = data
    named = {"a\nb": runs["sys0"], "c\td|e": runs["sys1"]}
    r = irmetrics.compare(qrels, named, ["map@100"])
    md = r.to_markdown().split("\n\n")[0].splitlines()
    assert len(md) == 4 and md[2].startswith("| a | a\\\\nb | ") and "c\\\\td\\|e" in md[3]
    text = str(r).split("\n\n")
    assert len(text[0].splitlines()) == 4 and "a\\nb" in text[0]
    assert len(text[2].splitlines()) == 3 and "c\\td|e" in text[2]
    assert r.to_dataframe()["system_a"].tolist() == ["a\nb"]
    # LaTeX: the control characters as the text shows them, "|" by name (OT1 prints "|"
    # as a dash)
    rows = r.to_latex().split("\\midrule\n")[1].splitlines()[:2]
    assert rows[0].startswith("a & a\\textbackslash{}nb & ")
    assert rows[1].startswith("b & c\\textbackslash{}td\\textbar{}e & ")


def _pdflatex() -> str:
    path = shutil.which("pdflatex")
    if not path:
        pytest.skip("no pdflatex (Debian's texlive-latex-recommended; .ci/run installs it)")
    return path


@pytest.mark.parametrize(
    "options",
    [
        {"test": "t", "correction": "holm"},
        {"test": "randomization", "n_resamples": 200, "baseline": "base_&%#$<1>|x\\y{z}~^"},
        {"test": "tukey", "alpha": 0.001},
        # one-sided, as percentages: "(%)" in the headers
        {"baseline": "plain", "alternative": "greater", "percentages": True},
    ],
)
def test_latex_tables_compile_with_pdflatex(data, tmp_path, options):
    """to_latex() is a table a paper includes as it is: pdflatex (TeX Live) compiles it
    with booktabs, whatever the systems are called, the test, its correction and
    alpha, and finds every glyph. (The caption's "p <= alpha" was written as math
    with only its closing $: no table compiled.)"""
    qrels, runs = data
    names = ["base_&%#$<1>|x\\y{z}~^", "dense\nrun\t\u00e9", "plain"]
    named = dict(zip(names, runs.values()))
    options = dict(options)
    percentages = options.pop("percentages", False)
    r = irmetrics.compare(qrels, named, ["ndcg@10", "map@100"], **options)
    doc = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + r.to_latex(percentages=percentages)
        + "\n\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    out = subprocess.run(
        [_pdflatex(), "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-3000:]
    log = (tmp_path / "t.log").read_text(encoding="utf-8", errors="replace")
    assert "Missing character" not in log
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_markdown_shows_names_as_they_are(data):
    """A CommonMark/GFM renderer (markdown-it-py, tables on) shows each system's name,
    each measure's name and the caption as plain text: a name holding "*", "_", "<b>",
    "`", "[x](y)", "~~", "&amp;" or "|" is neither emphasis, code, a link, HTML, an
    entity nor a cell break (it was all of these)."""
    from markdown_it import MarkdownIt

    qrels, runs = data
    names = ["*bm25*|_x_", "<b>dense</b> `c` [l](u)", "~~s~~ &amp; \\\\ z"]
    named = dict(zip(names, runs.values()))
    r = irmetrics.compare(qrels, named, ["ndcg_cut_10", "map"], baseline=names[2])
    tokens = MarkdownIt("commonmark").enable("table").parse(r.to_markdown())
    inline = [t for t in tokens if t.type == "inline"]
    for t in inline:
        kinds = {c.type for c in t.children or []}
        assert kinds <= {"text", "strong_open", "strong_close"}, (t.content, kinds)
    text = ["".join(c.content for c in t.children or [] if c.type == "text") for t in inline]
    header, rows, caption = text[:4], [text[4 + 4 * i : 8 + 4 * i] for i in range(3)], text[-1]
    assert header == ["#", "system", "ndcg_cut_10", "map"]
    assert [row[1] for row in rows] == names
    assert caption == r.to_dict()["caption"]
    assert f"each system against {names[2]}" in caption


def test_runs_as_a_list_are_named_by_run_tag(data):
    qrels, runs = data
    objs = [irmetrics.Run.from_dict(r, name=n) for n, r in runs.items()]
    r = irmetrics.compare(qrels, objs, "ndcg@10")
    assert r.systems == list(runs)
    with pytest.raises(irmetrics.InputError, match="run tag"):
        irmetrics.compare(qrels, [objs[0], objs[0]], "ndcg@10")


def test_seeded_resampling_is_reproducible(data):
    qrels, runs = data
    a = irmetrics.compare(qrels, runs, "ndcg@10", test="bootstrap", n_resamples=2000, seed=5)
    b = irmetrics.compare(
        qrels, runs, "ndcg@10", test="bootstrap", n_resamples=2000, seed=5, n_threads=1
    )
    assert [p["pvalue"] for p in a.pairs] == [p["pvalue"] for p in b.pairs]


def test_identical_systems_have_p_one(data):
    qrels, runs = data
    same = {"a": runs["sys1"], "b": runs["sys1"]}
    for test in ("t", "wilcoxon", "sign", "randomization", "bootstrap"):
        r = irmetrics.compare(qrels, same, "ndcg@10", test=test, n_resamples=100)
        p = r.pairs[0]
        assert p["pvalue"] == 1.0 and p["pvalue_corrected"] == 1.0, (test, p)
        assert p["mean_diff"] == 0.0 and p["d_z"] == 0.0


def test_missing_queries_are_an_error_unless_complete(data):
    qrels, runs = data
    short = {q: v for q, v in runs["sys1"].items() if q != "q7"}
    # the class evaluate raises for it (a plain InputError before)
    with pytest.raises(
        irmetrics.MissingQueryError, match="run 'short' has no results for query 'q7'"
    ):
        irmetrics.compare(qrels, {"full": runs["sys0"], "short": short}, "ndcg@10")
    r = irmetrics.compare(qrels, {"full": runs["sys0"], "short": short}, "ndcg@10", complete=True)
    assert len(r.query_ids) == 60
    k = r.query_ids.index("q7")
    assert r.per_query["ndcg@10"]["short"][k] == 0.0


def test_two_systems_with_one_name_are_an_error(tmp_path):
    """Names key the means and per-query values (JSON, dataframes) and pick the
    baseline: two alike were one system in to_json's means."""
    import pandas as pd

    frame = pd.DataFrame([[0.1, 0.2], [0.3, 0.5], [0.2, 0.2]], columns=["a", "a"])
    with pytest.raises(irmetrics.InputError, match="two systems are named 'a'"):
        irmetrics.compare_values({"map": frame})
    (tmp_path / "q").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 1 r\nq2 Q0 b 1 1 r\n")
    q, r = str(tmp_path / "q"), str(tmp_path / "r")
    out = subprocess.run(
        [sys.executable, "-m", "irmetrics", "compare", "-m", "map", q, r, r],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and f"two systems are named '{r}'" in out.stderr, out


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_against_a_baseline_is_scipys(data, alternative):
    """Each system against the baseline, one-sided as scipy's alternative=: the raw
    p-values those of scipy on the report's per-query values, corrected by statsmodels."""
    qrels, runs = data
    for test, ref_fn in [
        ("t", lambda x, y: scipy_stats.ttest_rel(x, y, alternative=alternative).pvalue),
        ("wilcoxon", lambda x, y: scipy_stats.wilcoxon(x, y, alternative=alternative).pvalue),
        (
            "sign",
            lambda x, y: (
                scipy_stats.binomtest(
                    int(np.sum(x > y)), int(np.sum(x != y)), alternative=alternative
                ).pvalue
            ),
        ),
    ]:
        r = irmetrics.compare(
            qrels, runs, ["ndcg@10"], test=test, baseline="sys0", alternative=alternative
        )
        pq = r.per_query["ndcg@10"]
        raw = []
        for p in r.pairs:
            assert p["system_b"] == "sys0"
            x, y = np.array(pq[p["system_a"]]), np.array(pq[p["system_b"]])
            assert math.isclose(p["pvalue"], float(ref_fn(x, y)), rel_tol=1e-9), (test, p)
            raw.append(p["pvalue"])
        ref = multitest.multipletests(raw, method="holm")[1]
        assert np.allclose([p["pvalue_corrected"] for p in r.pairs], ref, rtol=1e-12, atol=0)
        assert r.to_dict()["alternative"] == alternative
        assert f"one-sided: each system {'better' if alternative == 'greater' else 'worse'}" in (
            r.to_markdown()
        )
    # the better systems (sys3 boosts relevant documents most) beat the baseline one-sided
    r = irmetrics.compare(qrels, runs, ["ndcg@10"], baseline="sys0", alternative=alternative)
    p3 = next(p for p in r.pairs if p["system_a"] == "sys3")
    assert (p3["pvalue"] < 0.05) == (alternative == "greater")
    # compare_values and a pickled report keep the alternative
    import pickle

    again = pickle.loads(pickle.dumps(r))
    assert again.to_dict()["alternative"] == alternative and again.pairs == r.pairs
    v = irmetrics.compare_values(
        {"ndcg@10": r.per_query["ndcg@10"]}, baseline="sys0", alternative=alternative
    )
    assert [p["pvalue"] for p in v.pairs] == [p["pvalue"] for p in r.pairs]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alternative": "greater"}, "alternative 'greater' needs a baseline"),
        ({"alternative": "less", "test": "tukey", "baseline": "sys0"}, "two-sided only"),
        ({"alternative": "larger", "baseline": "sys0"}, "unknown alternative 'larger'"),
    ],
)
def test_one_sided_needs_a_baseline_and_a_paired_test(data, kwargs, match):
    qrels, runs = data
    with pytest.raises(irmetrics.InputError, match=match):
        irmetrics.compare(qrels, runs, "ndcg@10", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"test": "wilcox"}, irmetrics.InputError, "did you mean 'wilcoxon'"),
        ({"correction": "holms"}, irmetrics.InputError, "did you mean 'holm'"),
        ({"n_resamples": 0}, irmetrics.InputError, "n_resamples"),
        ({"alpha": 1.5}, irmetrics.InputError, "alpha"),
        ({"baseline": "nope"}, irmetrics.InputError, "baseline 'nope'"),
        # a value of the wrong type is named (pyo3 named no option before)
        ({"alpha": "0.05"}, irmetrics.InputError, "alpha must be a number, got str"),
        ({"test": 3}, irmetrics.InputError, "test must be a str, got int"),
        ({"baseline": 0}, irmetrics.InputError, "baseline must be a str, got int"),
    ],
)
def test_bad_options(data, kwargs, error, match):
    qrels, runs = data
    with pytest.raises(error, match=match):
        irmetrics.compare(qrels, runs, "ndcg@10", **kwargs)


def test_too_few_runs_or_queries(data):
    qrels, runs = data
    with pytest.raises(irmetrics.InputError, match="at least 2 runs"):
        irmetrics.compare(qrels, {"a": runs["sys0"]}, "ndcg@10")
    one_q = {"q0": qrels["q0"]}
    with pytest.raises(irmetrics.InputError, match="at least 2 queries"):
        irmetrics.compare(one_q, runs, "ndcg@10")


def test_nan_per_query_values_are_an_error():
    with pytest.raises(irmetrics.InputError, match="NaN"):
        irmetrics.compare_values({"ap": {"a": [0.1, math.nan, 0.3], "b": [0.2, 0.2, 0.2]}})
    r = irmetrics.compare_values(
        {"ap": {"a": [0.1, 0.5, 0.3], "b": [0.2, 0.2, 0.2]}}, query_ids=["x", "y", "z"]
    )
    assert r.query_ids == ["x", "y", "z"] and r.pairs[0]["system_a"] == "a"
