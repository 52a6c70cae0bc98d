"""Runs and qrels in JSONL, ranx's JSON and TSV (MS MARCO runs, BEIR qrels): each
conformance case, rewritten by the test itself (Python's json and csv habits, not our
writers) in every format, evaluates to exactly the TREC route's values, which
test_conformance holds to trec_eval's; the writers round-trip; bad lines are named."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import irmetrics


def _rows(path: Path) -> list[list[str]]:
    out = []
    for line in path.read_bytes().split(b"\n"):
        f = line.split()  # bytes: C's whitespace, as trec_eval splits
        if f and not f[0].startswith(b"#"):
            out.append([x.decode("utf-8") for x in f])
    return out


def _trec_order(run: list[list[str]]) -> dict[str, list[tuple[str, float]]]:
    """trec_eval's ranking per query: score descending, then document id descending."""
    by_q: dict[str, list[tuple[str, float]]] = {}
    for q, _, d, _, s, *_ in run:
        by_q.setdefault(q, []).append((d, float(s)))
    return {
        q: sorted(docs, key=lambda x: (x[1], x[0].encode()), reverse=True)
        for q, docs in by_q.items()
    }


def _write_all(tmp: Path, qrels: Path, run: Path) -> dict[str, tuple[Path, Path]]:
    qr, rr = _rows(qrels), _rows(run)
    out = {}
    # elinor's JSONL keys for both; scores written as Python's repr (the same double)
    (tmp / "q.jsonl").write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "score": int(r)}) + "\n" for q, _, d, r in qr
        )
    )
    (tmp / "r.jsonl").write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "score": float(s)}) + "\n"
            for q, _, d, _, s, *_ in rr
        )
    )
    out["jsonl"] = (tmp / "q.jsonl", tmp / "r.jsonl")
    # BEIR's JSONL keys, gzipped
    with gzip.open(tmp / "q2.jsonl.gz", "wt") as f:
        for q, _, d, r in qr:
            f.write(json.dumps({"query-id": q, "corpus-id": d, "score": int(r)}) + "\n")
    out["jsonl.gz"] = (tmp / "q2.jsonl.gz", tmp / "r.jsonl")
    # ranx's JSON
    qd: dict = {}
    for q, _, d, r in qr:
        qd.setdefault(q, {})[d] = int(r)
    rd: dict = {}
    for q, _, d, _, s, *_ in rr:
        rd.setdefault(q, {})[d] = float(s)
    (tmp / "q.json").write_text(json.dumps(qd))
    (tmp / "r.json").write_text(json.dumps(rd))
    out["json"] = (tmp / "q.json", tmp / "r.json")
    # BEIR's TSV qrels (with its header), MS MARCO's TSV run: qid, docid, rank in
    # trec_eval's order (irmetrics scores it -rank: the same ranking)
    (tmp / "q.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, _, d, r in qr)
    )
    (tmp / "r.tsv").write_text(
        "".join(
            f"{q}\t{d}\t{i + 1}\n"
            for q, docs in _trec_order(rr).items()
            for i, (d, _) in enumerate(docs)
        )
    )
    out["tsv"] = (tmp / "q.tsv", tmp / "r.tsv")
    return out


def _default_cases(conformance: Path) -> list[str]:
    """The generated cases with a default variant that trec_eval evaluates."""
    rows = (conformance / "generated" / "MANIFEST.tsv").read_text().splitlines()[1:]
    fields = [r.split("\t") for r in rows]
    return [f[0].split("/")[0] for f in fields if f[0].endswith("/default") and f[6] == "ok"]


def test_every_format_gives_the_trec_routes_values(conformance: Path, tmp_path: Path):
    cases = _default_cases(conformance)
    assert len(cases) >= 10
    for case in cases:
        _check_case(conformance / "generated" / case, tmp_path / case)


def _check_case(d: Path, tmp_path: Path) -> None:
    case = d.name
    tmp_path.mkdir()
    expected = json.loads((d / "expected" / "default.full.json").read_text())
    trec = irmetrics.evaluate(d / "qrels.txt", d / "run.txt", "all_trec", per_query=True)
    # the TREC route is trec_eval's (test_conformance holds it to every value); map here
    for qid, v in trec["map"].items():
        assert v == pytest.approx(expected["map"][qid], abs=1e-12)
    for fmt, (q, r) in _write_all(tmp_path, d / "qrels.txt", d / "run.txt").items():
        got = irmetrics.evaluate(q, r, "all_trec", per_query=True)
        assert got == trec, (case, fmt)
        got = irmetrics.evaluate(
            irmetrics.Qrels.from_file(q), irmetrics.Run.from_file(r), "all_trec"
        )
        want = irmetrics.evaluate(d / "qrels.txt", d / "run.txt", "all_trec")
        assert got.pop("runid") == ""  # these formats carry no run tag
        want.pop("runid")
        assert got == want, (case, fmt)


@pytest.mark.parametrize("fmt", ["trec", "jsonl", "json", "tsv"])
def test_writers_round_trip(conformance: Path, tmp_path: Path, fmt: str):
    d = conformance / "generated" / "v10_trec_like"
    qrels, run = irmetrics.Qrels.from_file(d / "qrels.txt"), irmetrics.Run.from_file(d / "run.txt")
    ext = {"trec": "txt"}.get(fmt, fmt)
    run.to_file(tmp_path / f"run.{ext}")
    qrels.to_file(tmp_path / f"qrels.{ext}")
    qrels.to_file(tmp_path / "qrels.other", format=fmt)
    back_q = irmetrics.Qrels.from_file(tmp_path / "qrels.other", format=fmt)
    assert back_q.to_dict() == qrels.to_dict()
    back = irmetrics.Run.from_file(tmp_path / f"run.{ext}")
    want = irmetrics.evaluate(qrels, run, "all_trec", per_query=True)
    assert irmetrics.evaluate(tmp_path / f"qrels.{ext}", back, "all_trec", per_query=True) == want
    if fmt != "tsv":  # MS MARCO's TSV keeps ranks, not scores
        assert back.to_dict() == run.to_dict()


def test_infinite_scores_are_kept_or_refused(tmp_path: Path):
    """JSON has no infinities (serde_json, like orjson, writes null, read back as no
    number): the JSON writers refuse such a run and leave no file; TREC text and parquet
    keep it, read back by pyarrow and by Python's float()."""
    pa_parquet = pytest.importorskip("pyarrow.parquet")
    run = irmetrics.Run.from_dict({"q1": {"a": float("inf"), "b": 1.5, "c": float("-inf")}})
    for fmt in ["jsonl", "json"]:
        with pytest.raises(irmetrics.Error, match=r"score -?inf of document '[ac]' of query 'q1'"):
            run.to_file(tmp_path / f"r.{fmt}")
        assert not (tmp_path / f"r.{fmt}").exists()
    run.to_file(tmp_path / "r.txt")
    scores = {f[2]: float(f[4]) for f in _rows(tmp_path / "r.txt")}
    assert scores == {"a": float("inf"), "b": 1.5, "c": float("-inf")}
    run.to_file(tmp_path / "r.parquet")
    t = pa_parquet.read_table(tmp_path / "r.parquet").to_pydict()
    assert dict(zip(t["doc_id"], t["score"])) == scores
    assert irmetrics.Run.from_file(tmp_path / "r.parquet").to_dict() == {"q1": scores}


def test_msmarco_tsv_run_scores_are_minus_rank(tmp_path: Path):
    (tmp_path / "r.tsv").write_text("q1\td1\t2\nq1\td2\t1\nq1\td3\t3\n")
    assert irmetrics.Run.from_file(tmp_path / "r.tsv").to_dict() == {
        "q1": {"d1": -2.0, "d2": -1.0, "d3": -3.0}
    }
    # a .tsv file with TREC's six fields is TREC
    (tmp_path / "t.tsv").write_text("q1\tQ0\td1\t1\t0.5\tx\n")
    assert irmetrics.Run.from_file(tmp_path / "t.tsv").to_dict() == {"q1": {"d1": 0.5}}


def test_the_cli_reads_every_format(conformance: Path, tmp_path: Path):
    d = conformance / "generated" / "v01_binary_basic"
    paths = _write_all(tmp_path, d / "qrels.txt", d / "run.txt")
    argv = [sys.executable, "-m", "irmetrics", "-m", "map", "-m", "P.10"]
    want = subprocess.run(
        [*argv, str(d / "qrels.txt"), str(d / "run.txt")], capture_output=True, text=True
    )
    assert want.returncode == 0, want.stderr
    for fmt, (q, r) in paths.items():
        got = subprocess.run([*argv, str(q), str(r)], capture_output=True, text=True)
        assert got.returncode == 0, (fmt, got.stderr)
        assert got.stdout == want.stdout, fmt


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"query_id": "q1",\n',
            "r.jsonl:2: not a JSON object",
        ),
        (
            "r.jsonl",
            '{"qid": "q1", "docno": "d1"}\n',
            "r.jsonl:1: no score (looked for the keys score, similarity; found qid, docno)",
        ),
        (
            "r.jsonl",
            '{"qid": "q1", "docno": "d1", "score": "high"}\n',
            'r.jsonl:1: score "high" is not a number',
        ),
        (
            "r.jsonl",
            '{"qid": "q 1", "docno": "d1", "score": 1}\n',
            "r.jsonl:1: query id 'q 1' holds whitespace",
        ),
        (
            "r.jsonl",
            '{"qid": "q1", "docno": "d1", "score": 1}\n{"qid": "q1", "docno": "d1", "score": 2}\n',
            "r.jsonl:2",
        ),
        ("r.json", "[1, 2]", "not a JSON object of queries"),
        ("r.json", '{"q1": 3}', "query 'q1' holds 3, not an object"),
        ("r.json", '{"q1": {"d1": null}}', "query 'q1', document 'd1': score null is not a number"),
        ("r.tsv", "q1\td1\t1\nq1\td2\n", "r.tsv:2: expected 3 tab-separated fields, found 2"),
        ("r.tsv", "q1\td1\t1\nq1\td2\tfirst\n", 'r.tsv:2: the third field "first" is not a rank'),
    ],
)
def test_bad_runs_are_named_by_file_and_line(tmp_path: Path, name: str, text: str, message: str):
    (tmp_path / name).write_text(text)
    with pytest.raises(irmetrics.Error) as e:
        irmetrics.Run.from_file(tmp_path / name)
    assert message in str(e.value)


def test_bad_qrels_and_formats(tmp_path: Path):
    (tmp_path / "q.jsonl").write_text('{"qid": "q1", "docno": "d1", "relevance": 1.5}\n')
    with pytest.raises(irmetrics.Error, match=r"q.jsonl:1: label 1.5 is not a whole number"):
        irmetrics.Qrels.from_file(tmp_path / "q.jsonl")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 0.5 x\n")
    with pytest.raises(irmetrics.Error, match='unknown format "xml"'):
        irmetrics.Run.from_file(tmp_path / "r.txt", format="xml")
    with pytest.raises(irmetrics.Error, match="r.txt: not a readable parquet file"):
        irmetrics.Run.from_file(tmp_path / "r.txt", format="parquet")
    run = irmetrics.Run.from_string(b"q1 Q0 d\xff 1 0.5 x\n")
    with pytest.raises(irmetrics.Error, match="not UTF-8 text, which JSON cannot hold; write TREC"):
        run.to_file(tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()
    # parquet, which the message offers, keeps the id's bytes (pyarrow reads them back)
    import pyarrow.parquet as pq

    run.to_file(tmp_path / "out.parquet")
    assert pq.read_table(tmp_path / "out.parquet").column("doc_id").to_pylist() == [b"d\xff"]


# ----------------------------------------------------------- rows, ir_datasets


@pytest.fixture(scope="module")
def v10(conformance: Path) -> tuple[Path, Path, dict]:
    d = conformance / "generated" / "v10_trec_like"
    want = irmetrics.evaluate(d / "qrels.txt", d / "run.txt", "all_trec", per_query=True)
    return d / "qrels.txt", d / "run.txt", want


def test_ir_measures_named_tuples_and_plain_generators(v10):
    import ir_measures

    qrels, run, want = v10
    q = irmetrics.Qrels.from_rows(ir_measures.read_trec_qrels(str(qrels)))
    r = irmetrics.Run.from_rows(ir_measures.read_trec_run(str(run)))
    assert irmetrics.evaluate(q, r, "all_trec", per_query=True) == want
    # a generator of plain tuples, consumed once, in any query order
    rows = ((f[0], f[2], float(f[4])) for f in reversed(_rows(run)))
    assert (
        irmetrics.evaluate(qrels, irmetrics.Run.from_rows(rows), "all_trec", per_query=True) == want
    )


def test_a_local_ir_datasets_dataset(v10):
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    qrels, run, want = v10
    ds = Dataset(TrecQrels(LocalDownload(qrels), {}), TrecScoredDocs(LocalDownload(run)))
    name = "irmetrics-test/v10-trec-like"
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, ds)
    q = irmetrics.Qrels.from_ir_datasets(name)  # by id, loaded with ir_datasets.load
    r = irmetrics.Run.from_ir_datasets(ds, name="bm25")  # or the dataset itself
    assert r.runid == "bm25"
    assert irmetrics.evaluate(q, r, "all_trec", per_query=True) == want
    only_qrels = Dataset(TrecQrels(LocalDownload(qrels), {}))
    with pytest.raises(irmetrics.InputError, match="has no scored documents"):
        irmetrics.Run.from_ir_datasets(only_qrels)


def test_bad_rows(monkeypatch):
    with pytest.raises(
        irmetrics.Error, match=r"run, row 1: 2 fields; expected \(query_id, doc_id, score\)"
    ):
        irmetrics.Run.from_rows([("q1", "d1", 0.5), ("q1", "d2")])
    with pytest.raises(
        irmetrics.Error, match="qrels, row 0: relevance must be a whole-number label"
    ):
        irmetrics.Qrels.from_rows([("q1", "d1", 1.5)])
    with pytest.raises(irmetrics.Error, match="expected an iterable of"):
        irmetrics.Run.from_rows(3)
    with pytest.raises(irmetrics.Error, match=r"run, row 0 \(object\) is not a tuple"):
        irmetrics.Run.from_rows([object()])
    with pytest.raises(
        irmetrics.Error,
        match=r"row 1: document 'd1' appears twice for query 'q1' \(first at row 0\)",
    ):
        irmetrics.Run.from_rows([("q1", "d1", 0.5), ("q1", "d1", 0.4)])
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(irmetrics.MissingDependencyError, match="pip install ir_datasets"):
        irmetrics.Qrels.from_ir_datasets("msmarco-passage/dev")
