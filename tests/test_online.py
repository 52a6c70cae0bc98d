"""irmetrics.online against values computed outside the engine: the hand-computed small
log of tests/data/online_small.jsonl (the arithmetic is in tests/online.rs and below),
the synthetic generator's ground truth (numpy over the generated structure,
tests/online_gen.py), pandas for counts per bucket, numpy for percentiles and medians,
scipy for the median absolute deviation. Every input route (JSONL, CSV, DataFrame, dict
of columns) gives the same numbers; plots are rendered to PNG and their data checked.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import subprocess
import sys
import uuid
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics
import irmetrics.plot as plot
from irmetrics import online
from irmetrics.cli import main

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from online_gen import T0, generate, truth  # noqa: E402

SMALL = HERE / "data" / "online_small.jsonl"

# tests/data/online_small.jsonl by hand (see tests/online.rs): 5 SERPs, 4 clicks, 4
# sessions; n_results 10, 0, 10, 5, 2; first clicks at positions 1, 2, 2
HAND = {
    "abandonment_rate": 1 / 4,
    "ctr": 3 / 5,
    "ctr@1": 1 / 5,
    "ctr@3": 3 / 5,
    "ctr@5": 3 / 5,
    "ctr@10": 3 / 5,
    "ctr_by_position@1": 1 / 4,
    "ctr_by_position@2": 2 / 4,
    "ctr_by_position@3": 1 / 3,
    **{f"ctr_by_position@{p}": 0.0 for p in range(4, 11)},
    "clicks_per_query": 4 / 5,
    "success_rate": 3 / 4,
    "zero_result_rate": 1 / 5,
    "time_to_first_click": 5.0,
    "click_mrr": (1 + 0 + 0 + 0.5 + 0.5) / 5,
}


def test_hand_computed_log_every_route():
    got = online.evaluate(SMALL)
    assert got == pytest.approx(HAND, abs=1e-12)
    assert list(got) == list(HAND)
    frame = pd.DataFrame([json.loads(line) for line in SMALL.read_text().splitlines()])
    assert online.evaluate(frame) == pytest.approx(HAND, abs=1e-12)
    cols = {c: frame[c].tolist() for c in frame.columns}
    assert online.evaluate(cols) == pytest.approx(HAND, abs=1e-12)
    # datetimes in a frame: the same instants
    frame2 = frame.assign(timestamp=pd.to_datetime(frame["timestamp"], utc=True))
    assert online.evaluate(frame2) == pytest.approx(HAND, abs=1e-12)
    log = online.read_log(SMALL)
    assert (len(log), log.n_sessions, log.reordered) == (10, 4, 1)
    assert log.ignored == [("hover", 1)]
    assert online.ctr_by_position(log, 3) == pytest.approx({1: 1 / 4, 2: 2 / 4, 3: 1 / 3})


def test_a_log_file_is_read_without_numpy():
    """numpy (and OpenBLAS's spinning threads) is imported only for frames, lists and
    array outputs: reading and scoring a file does not pay for it."""
    code = (
        "import sys; from irmetrics import online; "
        f"got = online.evaluate({str(SMALL)!r}); "
        f"online.top_queries({str(SMALL)!r}, 2, window=('1970-01-01T00:00:00', 4e9)); "
        "print('numpy' in sys.modules, got['ctr'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", repr(HAND["ctr"])]


def test_hand_computed_variants():
    res = online.evaluate(SMALL, ["ctr", "success_rate"], by="variant", n_resamples=500)
    # A: s1, s2 (3 SERPs, 1 clicked; s1 succeeds); B: s3, s4 (2 SERPs, both clicked; both succeed)
    assert res["groups"] == {
        "A": {"ctr": pytest.approx(1 / 3), "success_rate": 0.5},
        "B": {"ctr": 1.0, "success_rate": 1.0},
    }
    ctr = res["comparisons"][0]
    assert ctr["metric"] == "ctr" and (ctr["baseline"], ctr["variant"]) == ("A", "B")
    assert ctr["difference"] == pytest.approx(2 / 3)
    frame = online.evaluate(SMALL, ["ctr"], by="variant", output="pandas", n_resamples=500)
    assert frame.loc["ctr", "B-A"] == pytest.approx(2 / 3)
    # resamples and seeds as the significance tests take them (were an OverflowError)
    for bad, match in [
        ({"n_resamples": -1}, "n_resamples must be a whole number of at least 1, got -1"),
        ({"n_resamples": 2**64}, "n_resamples must be a whole number"),
        ({"n_resamples": 2**62}, "n_resamples = 4611686018427387904 needs more memory"),
        ({"seed": -3}, "seed must be a whole number of at least 0, got -3"),
    ]:
        with pytest.raises(irmetrics.InputError, match=match):
            online.evaluate(SMALL, ["ctr"], by="variant", **bad)


def test_ctr_by_query_by_hand_and_against_the_generator(gen):
    # laptop: s1's first SERP and s4's, both clicked; laptop bag, Laptop: no click; phone: 1
    assert online.ctr_by_query(SMALL) == [
        ("laptop", 2, 2, 1.0),
        ("Laptop", 1, 0, 0.0),
        ("laptop bag", 1, 0, 0.0),
        ("phone", 1, 1, 1.0),
    ]
    assert online.ctr_by_query(SMALL, 1, normalize=True) == [("laptop", 3, 2, 2 / 3)]
    g = gen["structure"]
    frame = pd.DataFrame({"query": g["query"], "clicked": g["clicks"] > 0})
    want = frame.groupby("query")["clicked"].agg(["size", "sum"])
    got = {q: (a, b) for q, a, b, _ in online.ctr_by_query(gen["events"])}
    assert got == {f"q{q}": (int(r["size"]), int(r["sum"])) for q, r in want.iterrows()}


def test_top_queries_and_queries_per_by_hand():
    assert online.top_queries(SMALL, 2) == [("laptop", 2, 0.4), ("Laptop", 1, 0.2)]
    assert online.top_queries(SMALL, 1, normalize=True) == [("laptop", 3, 0.6)]
    window = ("2024-05-01T00:00:00Z", "2024-05-01T00:16:40Z")
    assert online.top_queries(SMALL, 5, window) == [("laptop", 1, 0.5), ("laptop bag", 1, 0.5)]
    # a window that is not a pair of times (was an IndexError or KeyError), NaN, or
    # backwards (was an empty list)
    for bad, match in [
        ([], "window must be a pair"),
        ("ab", "window must be a pair"),
        ({"a": 1, "b": 2}, "window must be a pair"),
        ((0, math.nan), "NaN is not a time"),
        ((0, object()), "is not a time"),
        ((5.0, 1.0), r"window ends \(1.0\) before it starts \(5.0\)"),
    ]:
        with pytest.raises(irmetrics.InputError, match=match):
            online.top_queries(SMALL, 5, bad)
    t = online.queries_per(SMALL, "hour")
    assert t["count"].tolist() == [4, 1]
    assert t["start"].tolist() == list(pd.to_datetime(["2024-05-01 00:00", "2024-05-01 01:00"]))
    lat = [120, 80, 150, 100]
    for p in (50, 95, 99):
        assert t[f"latency_p{p}"][0] == pytest.approx(np.percentile(lat, p))


@pytest.fixture(scope="module")
def gen():
    return generate(3000, seed=7)


def late_events(events) -> int:
    """Events (of the types a log keeps) earlier than an event before them of their
    session in row order: what ``Log.reordered`` counts, by pandas."""
    kept = events[events["type"] != "hover"]
    latest = kept.groupby("session_id")["timestamp"].cummax()
    before = latest.groupby(kept["session_id"]).shift()
    return int((kept["timestamp"] < before).sum())


def test_generator_truth_every_route(gen, tmp_path):
    events, want = gen["events"], gen["truth"]
    got = online.evaluate(events)
    assert set(got) == set(want)
    for name, v in want.items():
        assert got[name] == pytest.approx(v, rel=1e-9, abs=1e-12), name
    # the files: JSONL (pandas writes it) and CSV
    jsonl = tmp_path / "log.jsonl"
    events.to_json(jsonl, orient="records", lines=True, double_precision=15)
    csv = tmp_path / "log.csv"
    events.to_csv(csv, index=False)
    for path in (jsonl, csv):
        log = online.read_log(path)
        assert dict(log.ignored) == {"hover": gen["n_hover"]}
        assert log.reordered == late_events(events) > 0  # the rows were shuffled
        assert online.evaluate(log) == pytest.approx(got, rel=1e-12, abs=1e-12), path.name


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_small_generated_logs_match_their_truth(n_sessions, seed):
    # tiny logs reach the edges: no click at all, no SERP with p results (NaN)
    g = generate(n_sessions, seed=seed)
    got = online.evaluate(g["events"])
    for name, v in g["truth"].items():
        assert got[name] == pytest.approx(v, rel=1e-9, abs=1e-12, nan_ok=True), name


def test_generator_truth_per_variant(gen):
    res = online.evaluate(gen["events"], by="variant", n_resamples=1000, seed=3)
    g = gen["structure"]
    for i, arm in enumerate("AB"):
        want = truth(g, np.flatnonzero(g["s_variant"] == i))
        for name, v in want.items():
            assert res["groups"][arm][name] == pytest.approx(v, rel=1e-9, abs=1e-12), (arm, name)
    by_metric = {c["metric"]: c for c in res["comparisons"]}
    ctr = by_metric["ctr"]
    # B clicks more by construction (0.40 vs 0.30 per trial): a clear difference
    assert ctr["difference"] == pytest.approx(res["groups"]["B"]["ctr"] - res["groups"]["A"]["ctr"])
    assert ctr["ci_low"] < ctr["difference"] < ctr["ci_high"] and ctr["ci_low"] > 0
    assert ctr["pvalue"] < 0.01
    # the zero-result rate: n_results is drawn per SERP independently of its session,
    # so the cluster bootstrap is close to the normal interval of a difference of two
    # proportions over SERPs, diff +- 1.96 se, and its p-value to 2 P(Z > |diff| / se)
    z = by_metric["zero_result_rate"]
    arm = g["s_variant"][g["serp_session"]]
    zero = g["n_results"] == 0
    pa, pb = zero[arm == 0].mean(), zero[arm == 1].mean()
    se = np.sqrt(pa * (1 - pa) / (arm == 0).sum() + pb * (1 - pb) / (arm == 1).sum())
    assert z["difference"] == pytest.approx(pb - pa)
    half = 1.959964 * se
    assert z["ci_low"] == pytest.approx(pb - pa - half, abs=0.15 * half)
    assert z["ci_high"] == pytest.approx(pb - pa + half, abs=0.15 * half)
    assert z["pvalue"] == pytest.approx(2 * scipy.stats.norm.sf(abs(pb - pa) / se), abs=0.06)
    again = online.evaluate(gen["events"], by="variant", n_resamples=1000, seed=3)
    assert again == res


def test_generator_traffic(gen):
    events = gen["events"]
    serps = events[events["type"] == "query"]
    want = serps["query"].value_counts()
    top = online.top_queries(events, 5)
    assert [q for q, _, _ in top] == list(want.index[:5])
    assert [c for _, c, _ in top] == want.iloc[:5].tolist()
    assert [s for _, _, s in top] == pytest.approx((want.iloc[:5] / len(serps)).tolist())
    t = online.queries_per(events, "day")
    when = pd.to_datetime(serps["timestamp"], unit="s")
    per_day = when.dt.floor("D").value_counts().sort_index()
    per_day = per_day.reindex(
        pd.date_range(per_day.index[0], per_day.index[-1], freq="D"), fill_value=0
    )
    assert t["count"].tolist() == per_day.tolist()
    assert t["start"].tolist() == list(per_day.index)
    for day, p50, p95 in zip(per_day.index[:5], t["latency_p50"], t["latency_p95"]):
        lat = serps["latency_ms"][when.dt.floor("D") == day]
        assert p50 == pytest.approx(np.percentile(lat, 50))
        assert p95 == pytest.approx(np.percentile(lat, 95))
    counts = np.asarray(t["count"], float)
    med = np.median(counts)
    mad = scipy.stats.median_abs_deviation(counts)
    thr = med + 3 * max(1.4826 * mad, np.sqrt(med))
    assert t["threshold"] == pytest.approx(thr)
    assert t["spike"].tolist() == (counts > thr).tolist()
    assert online.queries_per(events, "month")["count"].sum() == len(serps)


def test_a_spike_is_found():
    # 20 minutes of 10 queries, one of 60
    rows = []
    for minute in range(20):
        n = 60 if minute == 12 else 10
        rows += [
            {"session_id": f"{minute}-{i}", "timestamp": T0 + minute * 60 + i, "type": "query"}
            for i in range(n)
        ]
    t = online.queries_per(pd.DataFrame(rows), "min")
    assert t["spike"].tolist() == [m == 12 for m in range(20)]


def _write(tmp_path, lines):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return p


Q = {"session_id": "a", "timestamp": 1, "type": "query"}


@pytest.mark.parametrize(
    "second, words",
    [
        ({"session_id": "b", "timestamp": 2, "type": "click", "position": 1}, "no earlier SERP"),
        ({"session_id": "a", "timestamp": 2, "type": "click", "position": 0}, "position"),
        ({"session_id": "a", "timestamp": 2, "type": "click", "position": 1, "dwell": -1}, "dwell"),
        ({"session_id": "a", "timestamp": 2, "type": "query", "n_results": -2}, "n_results"),
        ({"session_id": "a", "type": "query"}, "'timestamp'"),
        ({"session_id": "a", "timestamp": 1714521600000, "type": "query"}, "milliseconds"),
        ({"session_id": "a", "timestamp": "2024-05-01T00:00:00", "type": "query"}, "text"),
    ],
)
def test_bad_input_names_the_line(tmp_path, second, words):
    with pytest.raises(irmetrics.FormatError, match=r"bad.jsonl:2: .*" + words):
        online.evaluate(_write(tmp_path, [Q, second]))


def test_bad_csv_rows_are_told_in_words(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("session_id,timestamp,type,query\na,1,query,x\na,2,click\n")
    with pytest.raises(
        irmetrics.FormatError, match=r"bad.csv:3: 3 fields, where the header has 4$"
    ):
        online.evaluate(p)
    p.write_bytes(b"session_id,timestamp,type,query\na,1,query,\xff\n")
    with pytest.raises(irmetrics.FormatError, match=r"bad.csv:2: field 4 is not UTF-8 text$"):
        online.evaluate(p)


def test_bad_frames_name_columns_and_rows():
    with pytest.raises(irmetrics.InputError, match=r"'sid' \(session_id\)"):
        online.evaluate(
            pd.DataFrame({"timestamp": [1.0], "type": ["query"]}), columns={"session_id": "sid"}
        )
    frame = pd.DataFrame(
        {
            "sid": ["a", "a"],
            "timestamp": [1.0, 2.0],
            "type": ["query", "click"],
            "position": [None, -1.0],
        }
    )
    with pytest.raises(irmetrics.FormatError, match=r"row 1: position"):
        online.evaluate(frame, columns={"session_id": "sid"})
    # lists and dicts in a frame's object column: pandas' "unhashable type" TypeError
    # before, and a tuple was taken as its repr
    for column, value, kind in [
        ("session_id", {}, "dict {}"),
        ("type", ["query"], "list ['query']"),
        ("type", ("query",), "tuple ('query',)"),
        ("timestamp", {}, "dict {}"),
        ("query", b"\xff", ""),
    ]:
        frame = pd.DataFrame({"session_id": ["a", "a"], "timestamp": [1.0, 2.0]})
        frame["type"] = ["query", "query"]
        frame[column] = pd.Series(["a", value], dtype=object)
        want = (
            f"must hold text or numbers, got {kind}" if kind else "holds bytes that are not UTF-8"
        )
        with pytest.raises(irmetrics.InputError, match=re.escape(f"column '{column}' {want}")):
            online.evaluate(frame)
    # a UUID or UTF-8 bytes as a session id: their text, as before (a str of its repr for
    # bytes before)
    uid = uuid.uuid4()
    log = {"session_id": [uid, str(uid).encode()], "timestamp": [1.0, 2.0]}
    log["type"] = ["query", "click"]
    log["position"] = [None, 1]
    assert online.evaluate(log, ["ctr", "abandonment_rate"]) == {
        "ctr": 1.0,
        "abandonment_rate": 0.0,
    }
    # datetimes in a list (an object column) stay times, naive or with a zone
    for zone in (None, datetime.timezone.utc):
        times = [datetime.datetime(2024, 5, 1, 0, 0, s, tzinfo=zone) for s in (0, 5)]
        log = {"session_id": ["a", "a"], "timestamp": times, "type": ["query", "click"]}
        log["position"] = [None, 1]
        assert online.evaluate(log, ["time_to_first_click"]) == {"time_to_first_click": 5.0}
    with pytest.raises(irmetrics.MeasureError, match="cut-off must be a whole number"):
        online.evaluate(SMALL, ["ctr@"])
    with pytest.raises(irmetrics.MeasureError, match="unknown online metric 'ndcg'"):
        online.evaluate(SMALL, ["ndcg"])
    with pytest.raises(irmetrics.InputError, match="'variant'"):
        online.evaluate({"session_id": ["a"], "timestamp": [1.0], "type": ["query"]}, by="variant")


def test_cli_prints_what_evaluate_computes(capfd, tmp_path):
    assert main(["online", "--format", "json", str(SMALL)]) == 0
    printed = capfd.readouterr().out
    doc = json.loads(printed)
    # -o / --output: the same text in a file
    for flag in ("-o", "--output"):
        assert main(["online", "--format", "json", flag, str(tmp_path / "m.json"), str(SMALL)]) == 0
        assert capfd.readouterr().out == "" and (tmp_path / "m.json").read_text() == printed
    assert doc["metrics"] == pytest.approx(HAND)
    assert (doc["events"], doc["sessions"], doc["ignored"]) == (10, 4, {"hover": 1})
    assert main(["online", "--by", "variant", "-m", "ctr", "--n-resamples", "200", str(SMALL)]) == 0
    out = capfd.readouterr().out
    assert "B-A" in out and "0.6667" in out
    assert main(["online", "--top", "1", "--normalize", "--format", "csv", str(SMALL)]) == 0
    assert capfd.readouterr().out.splitlines() == ["query,count,share", "laptop,3,0.6"]


def test_cli_tables_keep_one_line_a_row_whatever_the_text(capfd, tmp_path):
    """A query's text or an A/B arm holding a line break or a tab is shown escaped in
    the CLI's tables (raw, it split a row in two); CSV and JSON keep it as it is."""
    events = []
    for i, (query, arm) in enumerate([("a, b\nc", "A\t1"), ("plain", "B\n2"), ("a, b\nc", "A\t1")]):
        events.append(
            {
                "session_id": f"s{i}",
                "timestamp": i,
                "type": "query",
                "query": query,
                "n_results": 3,
                "variant": arm,
            }
        )
        events.append(
            {
                "session_id": f"s{i}",
                "timestamp": i + 0.5,
                "type": "click",
                "position": 1,
                "doc_id": "d",
            }
        )
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert main(["online", "--top", "5", str(log)]) == 0
    lines = capfd.readouterr().out.splitlines()
    rows = [line.rsplit(None, 2) for line in lines[1:]]
    assert rows == [["a, b\\nc", "2", "0.6667"], ["plain", "1", "0.3333"]]
    assert main(["online", "--by", "variant", "-m", "ctr", "--n-resamples", "50", str(log)]) == 0
    lines = capfd.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("metric"))
    assert header.split()[:4] == ["metric", "A\\t1", "B\\n2", "B\\n2-A\\t1"]
    assert [line.split()[0] for line in lines[lines.index(header) + 1 :]] == ["ctr"]
    assert main(["online", "--top", "5", "--format", "json", str(log)]) == 0
    assert json.loads(capfd.readouterr().out)[0]["query"] == "a, b\nc"


def _png(p: plot.Plot, tmp_path: Path) -> None:
    path = tmp_path / "out.png"
    p.save(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 2


def test_plots_draw_the_computed_values(gen, tmp_path):
    p = plot.ctr_by_position(gen["events"])
    assert p.data["position"] == list(range(1, 11))
    want = [gen["truth"][f"ctr_by_position@{k}"] for k in range(1, 11)]
    assert p.data["ctr"] == pytest.approx(want, rel=1e-9)
    assert [b.get_height() for b in p.ax.patches] == pytest.approx(want, rel=1e-9)
    _png(p, tmp_path)
    q = plot.queries_per(gen["events"], "day")
    t = online.queries_per(gen["events"], "day")
    assert q.data["count"] == t["count"].tolist()
    assert q.data["spike"] == t["spike"].tolist()
    assert q.data["latency_p50"] == pytest.approx(t["latency_p50"].tolist())
    _png(q, tmp_path)


def test_other_routes_and_options(tmp_path):
    # gzip-compressed TSV with other column names and timestamps in milliseconds
    import gzip

    rows = [json.loads(line) for line in SMALL.read_text().splitlines()]
    frame = pd.DataFrame(rows).rename(columns={"session_id": "sid", "type": "event"})
    epoch = pd.Timestamp("1970-01-01", tz="UTC")
    frame["timestamp"] = (pd.to_datetime(frame["timestamp"]) - epoch) // pd.Timedelta("1ms")
    assert frame["timestamp"][0] == 1_714_521_600_000
    path = tmp_path / "log.tsv.gz"
    with gzip.open(path, "wt") as f:
        frame.to_csv(f, sep="\t", index=False)
    got = online.evaluate(path, columns={"session_id": "sid", "type": "event"})
    assert got == pytest.approx(HAND, abs=1e-12)
    # told by size (milliseconds); read as seconds, the log's first click comes 5000 s
    # after its SERP: the unit given is honoured
    got = online.evaluate(
        path,
        ["time_to_first_click"],
        columns={"session_id": "sid", "type": "event"},
        time_unit="s",
    )
    assert got["time_to_first_click"] == 5000.0
    # a window of datetimes; success events named by the user
    start, end = pd.Timestamp("2024-05-01 00:30"), pd.Timestamp("2024-05-01 02:00")
    assert online.top_queries(SMALL, 5, (start, end)) == [("laptop", 1, 0.5), ("phone", 1, 0.5)]
    # without 'purchase' as a success, s3 (click dwell 5 s) fails: 2 of 4 sessions
    assert online.evaluate(SMALL, ["success_rate"], success_events=["copy"]) == {
        "success_rate": 0.5
    }
    log = online.read_log(SMALL, success_events=["copy"])
    assert log.ignored == [("hover", 1), ("purchase", 1)]


def test_arrow_routes_match_the_truth(gen):
    """pyarrow tables (plain, dictionary-encoded, typed timestamps, several batches),
    a RecordBatchReader and a polars frame: read in Rust, the generator's truth."""
    import polars as pl
    import pyarrow as pa

    events, want = gen["events"], gen["truth"]
    table = pa.Table.from_pandas(events, preserve_index=False)
    batches = pa.Table.from_batches(
        [b for i in range(0, table.num_rows, 997) for b in table.slice(i, 997).to_batches()]
    )
    encoded = table
    for name in ("session_id", "type", "query", "variant"):
        i = encoded.schema.get_field_index(name)
        encoded = encoded.set_column(i, name, encoded.column(name).dictionary_encode())
    typed = table.set_column(
        table.schema.get_field_index("timestamp"),
        "timestamp",
        pa.array(
            (events["timestamp"].to_numpy() * 1e6).round().astype("int64"),
            pa.timestamp("us", tz="UTC"),
        ),
    )
    routes = {
        "table": table,
        "batches of 997 rows": batches,
        "dictionaries": encoded,
        "reader": pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
        "polars": pl.from_arrow(table),
        "polars lazy": pl.from_arrow(table).lazy(),
        "polars categorical": pl.from_arrow(table).with_columns(
            pl.col("session_id", "query").cast(pl.Categorical)
        ),
    }
    for route, data in routes.items():
        got = online.evaluate(data)
        assert set(got) == set(want), route
        for name, v in want.items():
            assert got[name] == pytest.approx(v, rel=1e-9, abs=1e-12), (route, name)
    # microsecond timestamps: the same instants as the seconds, to a microsecond
    got = online.evaluate(typed)
    for name, v in want.items():
        assert got[name] == pytest.approx(v, rel=1e-6, abs=1e-9), name
    log = online.read_log(encoded)
    assert dict(log.ignored) == {"hover": gen["n_hover"]}
    assert log.reordered == late_events(gen["events"]) > 0


def test_parquet_logs_match_the_truth(gen, tmp_path, capfd):
    """Parquet files written by pyarrow (small row groups, dictionaries, typed
    timestamps) and polars, read in Rust batch by batch: the generator's truth, from
    Python and from the command line."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    events, want = gen["events"], gen["truth"]
    table = pa.Table.from_pandas(events, preserve_index=False)
    typed = table.set_column(
        table.schema.get_field_index("timestamp"),
        "timestamp",
        pa.array(
            (events["timestamp"].to_numpy() * 1e3).round().astype("int64"),
            pa.timestamp("ms"),
        ),
    )
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=1000)
    pq.write_table(typed, tmp_path / "typed.parquet", compression="zstd")
    pl.from_arrow(table).write_parquet(tmp_path / "polars.pq")
    for name, rel in (("a.parquet", 1e-9), ("typed.parquet", 1e-6), ("polars.pq", 1e-9)):
        got = online.evaluate(str(tmp_path / name))
        assert set(got) == set(want), name
        for metric, v in want.items():
            assert got[metric] == pytest.approx(v, rel=rel, abs=1e-9), (name, metric)
    log = online.read_log(tmp_path / "a.parquet")
    assert dict(log.ignored) == {"hover": gen["n_hover"]}
    assert main(["online", "-m", "ctr", "--format", "json", str(tmp_path / "a.parquet")]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert doc["metrics"]["ctr"] == pytest.approx(want["ctr"], rel=1e-12)
    # a null session id is named by its row, counted over the row groups
    bad = table.set_column(
        table.schema.get_field_index("type"),
        "type",
        pa.array([None if i == 2500 else t for i, t in enumerate(events["type"])], pa.string()),
    )
    pq.write_table(bad, tmp_path / "bad.parquet", row_group_size=1000)
    with pytest.raises(irmetrics.Error, match=r"bad\.parquet, row 2500"):
        online.evaluate(str(tmp_path / "bad.parquet"))


def test_arrow_bad_input_names_columns_and_rows():
    import pyarrow as pa

    with pytest.raises(irmetrics.InputError, match=r"no column 'sid' \(session_id\).*'timestamp'"):
        online.evaluate(
            pa.table({"timestamp": [1.0], "type": ["query"]}), columns={"session_id": "sid"}
        )
    rows = {"session_id": ["a", "a"], "timestamp": [1.0, 2.0], "type": ["query", "click"]}
    with pytest.raises(irmetrics.FormatError, match=r"row 1: position"):
        online.evaluate(pa.table({**rows, "position": [None, -1.0]}))
    with pytest.raises(irmetrics.FormatError, match=r"row 1: no 'session_id'"):
        online.evaluate(pa.table({**rows, "session_id": ["a", None]}))
    with pytest.raises(irmetrics.InputError, match=r"'position' has Arrow type Boolean"):
        online.evaluate(pa.table({**rows, "position": [True, False]}))
    with pytest.raises(irmetrics.InputError, match=r"timestamp' has Arrow type Date32"):
        online.evaluate(pa.table({**rows, "timestamp": pa.array([1, 2], pa.date32())}))
    with pytest.raises(irmetrics.Error, match="time_unit does not apply"):
        online.evaluate(
            pa.table({**rows, "timestamp": pa.array([1, 2], pa.timestamp("ms"))}), time_unit="s"
        )
    with pytest.raises(irmetrics.InputError, match="two columns are named 'type'"):
        online.evaluate(
            pa.Table.from_arrays(
                [pa.array(["a"]), pa.array([1.0]), pa.array(["query"]), pa.array(["x"])],
                names=["session_id", "timestamp", "type", "type"],
            )
        )
