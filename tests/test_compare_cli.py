"""``irmetrics compare``: the command line's comparison of runs, checked against scipy
(t-test p-values of the per-query values the evaluation gives) and the exit statuses."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as scipy_stats

import irmetrics


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "irmetrics", "compare", *args], capture_output=True, timeout=120
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    rng = np.random.default_rng(4)
    d = tmp_path_factory.mktemp("compare")
    qrels_lines, runs = [], {f"sys{s}": [] for s in range(3)}
    for q in range(40):
        rel = {f"d{i}": int(rng.integers(0, 2)) for i in range(20)}
        rel["d0"] = 1
        qrels_lines += [f"q{q} 0 {doc} {r}" for doc, r in rel.items()]
        for s, lines in enumerate(runs.values()):
            scores = rng.random(20) + 0.3 * s * np.array(list(rel.values()))
            order = np.argsort(-scores)
            lines += [f"q{q} Q0 d{i} {k + 1} {scores[i]:.6f} sys{s}" for k, i in enumerate(order)]
    out = {"qrels": d / "qrels.txt"}
    out["qrels"].write_text("\n".join(qrels_lines) + "\n")
    for name, lines in runs.items():
        out[name] = d / f"{name}.run"
        out[name].write_text("\n".join(lines) + "\n")
    return out


def test_csv_p_values_match_scipy(files):
    r = cli("-m", "AP", "--format", "csv", "--correction", "none", str(files["qrels"]),
            str(files["sys0"]), str(files["sys1"]), str(files["sys2"]))  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    assert [(x["system_a"], x["system_b"]) for x in rows] == [
        ("sys0.run", "sys1.run"),
        ("sys0.run", "sys2.run"),
        ("sys1.run", "sys2.run"),
    ]
    qrels = irmetrics.Qrels.from_file(files["qrels"])
    per_query = {
        f"sys{s}.run": irmetrics.evaluate(qrels, files[f"sys{s}"], "AP", per_query=True)["AP"]
        for s in range(3)
    }
    for row in rows:
        a, b = per_query[row["system_a"]], per_query[row["system_b"]]
        x = np.array([a[q] for q in sorted(a)])
        y = np.array([b[q] for q in sorted(a)])
        ref = scipy_stats.ttest_rel(x, y)
        assert math.isclose(float(row["pvalue"]), float(ref.pvalue), rel_tol=1e-9)
        assert math.isclose(float(row["statistic"]), float(ref.statistic), rel_tol=1e-9)


def test_formats_and_baseline(files):
    args = [str(files["qrels"]), str(files["sys0"]), str(files["sys1"]), str(files["sys2"])]
    md = cli("-m", "nDCG@10", "-m", "AP", "--format", "markdown", *args)
    assert md.returncode == 0 and md.stdout.decode().startswith("| # | system | nDCG@10 | AP |")
    tex = cli("--format", "latex", "--test", "randomization", "--baseline", "sys0.run", *args)
    text = tex.stdout.decode()
    assert tex.returncode == 0 and "\\toprule" in text and "Fisher's randomization test" in text
    js = json.loads(cli("--format", "json", "--test", "wilcoxon", *args).stdout)
    assert js["test"] == "wilcoxon" and len(js["measures"]) == 2
    table = cli(*args).stdout.decode()
    assert "p_corr" in table and "sys2.run" in table
    # -o / --output: the same bytes in a file, nothing on standard output
    out = files["qrels"].parent / "table.txt"
    for flag in ("-o", "--output"):
        r = cli(flag, str(out), *args)
        assert r.returncode == 0 and not r.stdout and out.read_text() == table, r.stderr
        out.unlink()
    assert cli("--help").stdout.decode().startswith("usage: irmetrics compare")


def test_digits_and_percent(files):
    args = [str(files["qrels"]), str(files["sys0"]), str(files["sys1"])]
    qrels = irmetrics.Qrels.from_file(files["qrels"])
    mean = irmetrics.evaluate(qrels, files["sys0"], "AP")["AP"]
    r = cli("-m", "AP", "--format", "markdown", "--digits", "3", "--percent", *args)
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode()
    # ranx's show_percentages with rounding_digits=3: one decimal of the percentage
    assert text.startswith("| # | system | AP (%) |")
    assert f"| a | sys0.run | {round(mean * 100, 1):.1f}" in text, text
    r = cli("-m", "AP", "--format", "latex", "--digits", "6", *args)
    assert f"a & sys0.run & {mean:.6f}" in r.stdout.decode()
    r = cli("--digits", "20", *args)
    assert r.returncode == 2 and "digits must be at most 17" in r.stderr.decode()
    r = subprocess.run(
        [sys.executable, "-m", "irmetrics", "report", "--percent", "-o", "-", *args],
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 2 and "not report's" in r.stderr.decode(), r.stderr


def test_one_sided_against_a_baseline(files):
    args = [str(files["qrels"]), str(files["sys0"]), str(files["sys1"]), str(files["sys2"])]
    r = cli("-m", "AP", "--format", "csv", "--baseline", "sys0.run", "--alternative",
            "greater", "--correction", "none", *args)  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    qrels = irmetrics.Qrels.from_file(files["qrels"])
    per_query = {
        f"sys{s}.run": irmetrics.evaluate(qrels, files[f"sys{s}"], "AP", per_query=True)["AP"]
        for s in range(3)
    }
    assert [(x["system_a"], x["system_b"]) for x in rows] == [
        ("sys1.run", "sys0.run"),
        ("sys2.run", "sys0.run"),
    ]
    for row in rows:
        a, b = per_query[row["system_a"]], per_query[row["system_b"]]
        x = np.array([a[q] for q in sorted(a)])
        y = np.array([b[q] for q in sorted(a)])
        ref = scipy_stats.ttest_rel(x, y, alternative="greater")
        assert math.isclose(float(row["pvalue"]), float(ref.pvalue), rel_tol=1e-9)
    js = json.loads(cli("--format", "json", "--baseline", "sys0.run", "--alternative", "less",
                        *args).stdout)  # fmt: skip
    assert js["alternative"] == "less" and "one-sided" in js["caption"]
    # without a baseline, refused before any run is read
    r = cli("--alternative", "greater", str(files["qrels"]), "missing.run", "missing2.run")
    assert r.returncode == 2 and "needs a baseline" in r.stderr.decode(), r.stderr


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (["--test", "wilcox"], 2, "did you mean 'wilcoxon'"),
        (["--correction", "bonf"], 2, "unknown correction"),
        (["--format", "xml"], 2, "unknown format"),
        (["--n-resamples", "0"], 2, "n_resamples must be at least 1"),
        (["--baseline", "nope"], 2, "baseline 'nope'"),
    ],
)
def test_bad_options_exit_2(files, extra, status, message):
    r = cli(*extra, str(files["qrels"]), str(files["sys0"]), str(files["sys1"]))
    assert r.returncode == status and message in r.stderr.decode(), r.stderr


def test_one_run_is_a_usage_error(files):
    r = cli(str(files["qrels"]), str(files["sys0"]))
    assert r.returncode == 2 and "at least 2 run files" in r.stderr.decode()


def test_missing_query_names_the_run(files, tmp_path):
    short = tmp_path / "short.run"
    short.write_text(
        "".join(line + "\n" for line in files["sys1"].read_text().splitlines()
                if not line.startswith("q3 "))
    )  # fmt: skip
    r = cli(str(files["qrels"]), str(files["sys0"]), str(short))
    assert r.returncode == 1
    assert "run 'short.run' has no results for query 'q3'" in r.stderr.decode()
    assert cli("-c", str(files["qrels"]), str(files["sys0"]), str(short)).returncode == 0
