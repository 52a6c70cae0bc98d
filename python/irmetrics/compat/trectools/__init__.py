"""trectools' API on irmetrics' engine, for code written against trectools::

    from irmetrics.compat.trectools import TrecQrel, TrecRun, TrecEval, fusion

    qrels = TrecQrel("qrels.txt")
    run = TrecRun("bm25.run")
    te = TrecEval(run, qrels)
    te.get_map()                           # a float, as trectools'
    te.get_ndcg(depth=10, per_query=True)  # a DataFrame indexed by query: "NDCG@10"
    res = te.evaluate_all(per_query=True)  # TrecRes: .data (metric, query, value)
    hybrid = fusion.reciprocal_rank_fusion([run, TrecRun("dense.run")])

``TrecQrel`` and ``TrecRun`` read their file with irmetrics' readers (a bad line is an
``irmetrics.FormatError`` naming it) and make ``qrels_data`` / ``run_data`` (the data
frames trectools holds, the same columns and order, ids kept as the file writes them)
when first asked for; from then on the frame is the data, edits included. ``TrecEval``
takes these objects or trectools' own; each ``get_*`` calls ``irmetrics.evaluate`` with
the trec_eval measure trectools' ``trec_eval=True`` promises (``get_map(depth)`` is
``map_cut.depth``, ``get_precision`` ``P.depth``, ``get_recall`` ``recall.depth``,
``get_ndcg`` ``ndcg_cut.depth``, ``get_bpref`` / ``get_rprec`` /
``get_reciprocal_rank`` / ``get_geometric_map`` ``bpref`` / ``Rprec`` /
``recip_rank`` / ``gm_map`` with ``max_docs=depth``, ``get_unjudged`` ``unj.depth``;
``removeUnjudged=True`` is trec_eval's ``-J``). Results have trectools' shapes: a float,
or with ``per_query=True`` a DataFrame indexed by ``query`` with trectools' column
label (``"P@10"``, ``"MAP@1000"``, ...).

Where trectools' numbers are not trec_eval's, these are trec_eval's (README, "Code
written for trectools"): ties are ranked by document id descending in every measure
(trectools' ``get_ndcg`` keeps the run's order, ties by id ascending); a query of the
run without judgments is left out of the per-query tables and the mean, as trec_eval
leaves it out (trectools divides by the number of the run's queries);
``removeUnjudged`` applies to every measure (trectools' ``get_rprec`` and
``get_reciprocal_rank`` ignore it). ``trec_eval=False`` is trectools' other
convention, kept: the run's stored order (ties by id ascending, or a data frame's row
order) and, for nDCG, exponential gains.
"""

from __future__ import annotations

import gzip
import numbers
import os
from collections.abc import Iterable
from typing import Any

import irmetrics

from ..._core import InputError, Qrels, Run, _require, _write_file

__all__ = ["TrecEval", "TrecQrel", "TrecRes", "TrecRun", "fusion", "procedures"]

_QRELS_HEADER = ["query", "q0", "docid", "rel"]
_RUN_HEADER = ["query", "q0", "docid", "rank", "score", "system"]
_ID_COLUMNS = ("query", "q0", "docid")


def _pandas() -> Any:
    _require("pandas", "irmetrics.compat.trectools", "'irmetrics[pandas]'")
    import pandas as pd

    return pd


def _read_frame(filename: Any, header: list[str]) -> Any:
    """A file as trectools reads it (whitespace-separated, no header), but with the
    ids as written: trectools reads them as numbers first (``007`` becomes ``7``)."""
    pd = _pandas()
    dtype = {c: str for c in _ID_COLUMNS if c in header}
    return pd.read_csv(filename, sep=r"\s+", names=header, dtype=dtype)


class _Data:
    """What TrecQrel and TrecRun share: irmetrics' data read from a file, and the
    data frame trectools holds, made from the file when first asked for."""

    _kind: Any  # irmetrics.Qrels / Run
    _default_header: list[str]

    def __init__(self) -> None:
        self.filename: Any = None
        self._parsed: Any = None  # irmetrics.Qrels / Run, only while no frame is made
        self._frame: Any = None
        self._header: list[str] = []

    @property
    def data(self) -> Any:
        """What irmetrics' functions read: the frame once made, else the file's data."""
        if self._frame is not None:
            return self._frame
        if self._parsed is None:
            raise InputError(f"the {type(self).__name__} holds no data yet")
        return self._parsed

    def _load(self, filename: Any, header: list[str] | None) -> None:
        """Read ``filename`` with irmetrics' reader (a bad line is an error naming it);
        another column order than trectools' default as trectools reads it."""
        self.filename = filename
        self._header = list(header or self._default_header)
        self._frame = self._parsed = None
        if self._header == self._default_header:
            self._parsed = self._kind.from_file(filename)
        else:
            self._made_frame()

    def _set_frame(self, df: Any) -> None:
        self._frame, self._parsed = df, None

    def _ids(self) -> Any:
        """The query ids: of the parsed file, or the frame's."""
        if self._parsed is not None:
            return self._parsed.query_ids()
        return self._made_frame()["query"].unique()

    def _made_frame(self) -> Any:
        if self._frame is None and self.filename is not None:
            self._frame = self._read(self.filename, self._header)
            self._parsed = None
        return self._frame

    def _read(self, filename: Any, header: list[str]) -> Any:
        raise NotImplementedError

    def get_full_filename_path(self) -> str:
        return os.path.abspath(os.path.expanduser(self.filename))

    def get_filename(self) -> str:
        return os.path.basename(self.get_full_filename_path())

    def __repr__(self) -> str:
        if self.filename:
            return f"Data from file {self.get_full_filename_path()}"
        return "Data file not set yet"

    __str__ = __repr__


class TrecQrel(_Data):
    """trectools' ``TrecQrel``: ``qrels_data`` has columns ``query``, ``q0``,
    ``docid``, ``rel`` (lines with a negative label left out, as trectools does; the
    evaluation reads those as trec_eval does: pooled but unjudged)."""

    def __init__(self, filename: Any = None, qrels_header: list[str] | None = None):
        super().__init__()
        if filename is not None:
            self.read_qrel(filename, qrels_header)

    _kind = Qrels
    _default_header = _QRELS_HEADER

    def read_qrel(self, filename: Any, qrels_header: list[str] | None = None) -> None:
        self._load(filename, qrels_header)

    def _read(self, filename: Any, header: list[str]) -> Any:
        df = _read_frame(filename, header)
        return df[df["rel"] >= 0]

    qrels_data = property(_Data._made_frame, _Data._set_frame)

    def topics(self) -> set[str]:
        return set(self._ids())

    def topics_intersection_with(self, another_qrel: Any) -> set[str]:
        return self.topics().intersection(another_qrel.topics())

    def get_number_of(self, label: int, topics: Iterable[str] | None = None) -> int:
        df = self.qrels_data
        if topics is not None:
            df = df[df["query"].isin(set(topics))]
        return int((df["rel"] == label).sum())

    def get_judgement(self, document: str, topic: str) -> Any:
        """The label of ``document`` for ``topic``, -1 if it is not judged."""
        df = self.qrels_data
        found = df[(df["docid"] == document) & (df["query"] == topic)]
        return found["rel"].values[0] if len(found) else -1

    def get_document_names_for_topic(self, topic: str) -> set[str]:
        df = self.qrels_data
        return set(df[df["query"] == topic]["docid"])


class TrecRun(_Data):
    """trectools' ``TrecRun``: ``run_data`` has columns ``query``, ``q0``, ``docid``,
    ``rank``, ``score``, ``system``, sorted by query, score descending, then document
    id ascending, as trectools sorts it."""

    def __init__(self, filename: Any = None):
        super().__init__()
        if filename is not None:
            self.read_run(filename)

    _kind = Run
    _default_header = _RUN_HEADER

    def read_run(self, filename: Any, run_header: list[str] | None = None) -> None:
        self._load(filename, run_header)

    def _read(self, filename: Any, header: list[str]) -> Any:
        df = _read_frame(filename, header)
        _validate(df)
        return df.sort_values(["query", "score", "docid"], ascending=[True, False, True])

    def load_run_from_dataframe(
        self, df: Any, column_mapping: dict[str, str] | None = None, validate: bool = True
    ) -> None:
        if column_mapping is not None:
            df = df.rename(columns=column_mapping)
        if validate:
            missing = sorted(set(_RUN_HEADER).difference(df.keys()))
            if missing:
                raise InputError(f"Required column(s) {missing} not present in supplied dataframe")
        df = df.copy()
        _validate(df)
        for col in _ID_COLUMNS:
            if col in df:
                df[col] = df[col].astype(str)
        self._set_frame(df)

    run_data = property(_Data._made_frame, _Data._set_frame)

    def get_runid(self) -> Any:
        """The tag of the run's first line (trectools' ``run_data["system"][0]``)."""
        if self._parsed is not None:
            opener: Any = gzip.open if str(self.filename).endswith(".gz") else open
            with opener(self.filename, "rb") as f:
                first = f.readline().split()
            return first[5].decode() if len(first) > 5 else self._parsed.runid
        return self.run_data["system"][0]

    def rename_runid(self, name: str) -> None:
        self.run_data["system"] = name

    def topics(self) -> list[str]:
        return sorted(self._ids())

    def topics_intersection_with(self, another_run: Any) -> set[str]:
        return set(self.topics()).intersection(set(another_run.topics()))

    def get_top_documents(self, topic: str, n: int = 10) -> list[str]:
        df = self.run_data
        return list(df[df["query"] == topic]["docid"].head(n))

    def evaluate_run(self, trec_qrel_obj: Any, per_query: bool) -> TrecRes:
        return TrecEval(self, trec_qrel_obj).evaluate_all(per_query)


def _validate(df: Any) -> None:
    """trectools' checks of a run's frame: a line short of fields, a document twice."""
    if "system" in df and df["system"].isnull().any():
        raise InputError(f"Malformed line {int(df['system'].isnull().argmax())}.")
    dup = df.duplicated(subset=["query", "docid"])
    if dup.any():
        raise InputError(f"Duplicated docid in line {int(dup.argmax())}.")


def _query_starts(query: Any) -> Any:
    """A bool array: the rows where a new query starts (a pandas column of ids
    compared with itself shifted, in pandas' own code for Arrow strings)."""
    return query.ne(query.shift()).to_numpy()


def _ties_ascending(starts: Any, score: Any) -> tuple[Any, Any]:
    """For a ranking (rows by query, score descending, equal scores by document id
    descending: irmetrics' and trec_eval's order; ``starts`` its queries' first rows),
    where each row goes when equal scores run by id ascending instead (trectools'
    order: each run of equal scores reversed), and its rank there (from 0). An O(n)
    pass over the columns: pandas' sort by query, score and id strings took 1.3 s of a
    700,000-line run."""
    import numpy as np

    n = len(score)
    score = np.asarray(score)
    first = starts.copy()  # the first row of a query or of a tie group
    first[1:] |= score[1:] != score[:-1]
    row = np.arange(n)
    start = np.maximum.accumulate(np.where(first, row, 0))
    end = np.append(np.flatnonzero(first)[1:], n)[np.cumsum(first) - 1]
    to = start + end - 1 - row
    return to, to - np.maximum.accumulate(np.where(starts, row, 0))


def _stored_order(run: Any, depth: int | None = None) -> Any:
    """The run's rankings in trectools' stored order (a file's: score descending, ties
    by document id ascending; a frame's: its rows), as scores that trec_eval's order
    keeps: trectools' ``trec_eval=False`` and its fusion read a ranking so."""
    pd = _pandas()
    parsed = _parsed(run)
    if parsed is not None:
        ranked = parsed.to_pandas()  # by query, ranked as trec_eval ranks
        query, docid = ranked["query_id"], ranked["doc_id"]
        _, position = _ties_ascending(_query_starts(query), ranked["score"].to_numpy())
    else:
        frame = _run_frame(run)
        query, docid = frame["query"], frame["docid"]
        position = frame.groupby("query", sort=False).cumcount().to_numpy()
    out = pd.DataFrame({"query": query, "docid": docid, "score": -position.astype(float)})
    if depth is not None:
        out = out[position < depth]
    return out


def _parsed(run: Any) -> Any:
    """The irmetrics Run parsed from a file of this module's ``TrecRun`` whose frame is
    not made (trectools' own objects: None)."""
    return run._parsed if isinstance(run, _Data) else None


def _scores(run: Any) -> Any:
    """The run's scores as irmetrics reads them: the parsed file, else the frame."""
    parsed = _parsed(run)
    return parsed if parsed is not None else _run_frame(run)[["query", "docid", "score"]]


def _run_frame(run: Any) -> Any:
    frame = getattr(run, "run_data", None)
    if frame is None:
        raise InputError("the run holds no data")
    return frame


class TrecEval:
    """trectools' ``TrecEval(run, qrels)``; the numbers are trec_eval's (module doc)."""

    def __init__(self, run: Any, qrels: Any):
        # (hasattr would make the frames of this module's objects)
        if not isinstance(run, TrecRun) and not hasattr(run, "run_data"):
            raise TypeError('"run" should be a TrecRun object')
        if not isinstance(qrels, TrecQrel) and not hasattr(qrels, "qrels_data"):
            raise TypeError('"qrels" should be a TrecQrel object')
        self.run = run
        self.qrels = qrels
        self.GMEAN_MIN = 0.00001

    def get_runid(self) -> str:
        return str(self.run.get_filename())

    def _table(
        self,
        measures: list[str],
        *,
        trec_eval: bool = True,
        judged_only: bool = False,
        max_docs: int | None = None,
    ) -> Any:
        """irmetrics' per-query table (``output="pandas"``) of ``measures``."""
        return irmetrics.evaluate(
            self.qrels,
            self._ranked(trec_eval),
            measures,
            output="pandas",
            judged_only=judged_only,
            max_docs=max_docs,
        )

    def _ranked(self, trec_eval: bool) -> Any:
        """The run as measured: ranked as trec_eval ranks it, else in trectools' stored
        order (``trec_eval=False``)."""
        return self.run if trec_eval else _stored_order(self.run)

    def _one(
        self,
        measure: str,
        label: str,
        per_query: bool,
        trec_eval: bool = True,
        judged_only: bool = False,
        max_docs: int | None = None,
    ) -> Any:
        """One measure as trectools returns it: a float, or a frame per query."""
        table = self._table(
            [measure], trec_eval=trec_eval, judged_only=judged_only, max_docs=max_docs
        )
        column = table.columns[0]
        if not per_query:
            return float(table.attrs["all"][column])
        out = table[[column]].rename(columns={column: label}).rename_axis("query")
        out.attrs = {}
        return out.sort_index()

    def get_map(self, depth: int = 1000, per_query: bool = False, trec_eval: bool = True) -> Any:
        return self._one(f"map_cut.{depth}", f"MAP@{depth}", per_query, trec_eval)

    def get_precision(
        self,
        depth: int = 1000,
        per_query: bool = False,
        trec_eval: bool = True,
        removeUnjudged: bool = False,
    ) -> Any:
        return self._one(f"P.{depth}", f"P@{depth}", per_query, trec_eval, removeUnjudged)

    def get_recall(
        self,
        depth: int = 1000,
        per_query: bool = False,
        trec_eval: bool = True,
        removeUnjudged: bool = False,
    ) -> Any:
        return self._one(f"recall.{depth}", f"R@{depth}", per_query, trec_eval, removeUnjudged)

    def get_ndcg(
        self,
        depth: int = 1000,
        per_query: bool = False,
        trec_eval: bool = True,
        removeUnjudged: bool = False,
    ) -> Any:
        """trec_eval's ``ndcg_cut.depth``; ``trec_eval=False``: gains 2^rel - 1 on the
        run's stored order (trectools' other convention)."""
        measure = f"ndcg_cut.{depth}" if trec_eval else f"nDCG(dcg='exp-log2')@{depth}"
        return self._one(measure, f"NDCG@{depth}", per_query, trec_eval, removeUnjudged)

    def get_bpref(self, depth: int = 1000, per_query: bool = False, trec_eval: bool = True) -> Any:
        return self._one("bpref", f"Bpref@{depth}", per_query, trec_eval, max_docs=depth)

    def get_rprec(
        self,
        depth: int = 1000,
        per_query: bool = False,
        trec_eval: bool = True,
        removeUnjudged: bool = False,
    ) -> Any:
        return self._one("Rprec", f"RPrec@{depth}", per_query, trec_eval, removeUnjudged, depth)

    def get_reciprocal_rank(
        self,
        depth: int = 1000,
        per_query: bool = False,
        trec_eval: bool = True,
        removeUnjudged: bool = False,
    ) -> Any:
        label = f"recip_rank@{depth}"
        return self._one("recip_rank", label, per_query, trec_eval, removeUnjudged, depth)

    def get_unjudged(self, depth: int = 10, per_query: bool = False, trec_eval: bool = True) -> Any:
        return self._one(f"unj.{depth}", f"UNJ@{depth}", per_query, trec_eval)

    def get_geometric_map(self, depth: int = 1000, trec_eval: bool = True) -> float:
        """trec_eval's ``gm_map`` (AP floored at 1e-5) over the top ``depth``."""
        value = irmetrics.evaluate(self.qrels, self._ranked(trec_eval), ["gm_map"], max_docs=depth)
        return float(value["gm_map"])

    def _count(self, measure: str, name: str, per_query: bool) -> Any:
        """A count as trectools returns it: an int, or a Series per query."""
        out = self._one(measure, name, per_query)
        return out[name].astype("int64") if per_query else int(out)

    def get_retrieved_documents(self, per_query: bool = False) -> Any:
        return self._count("num_ret", "docid", per_query)

    def get_relevant_documents(self, per_query: bool = False) -> Any:
        return self._count("num_rel", "relevant_per_query", per_query)

    def get_relevant_retrieved_documents(self, per_query: bool = False) -> Any:
        return self._count("num_rel_ret", "rel", per_query)

    def get_rbp(
        self,
        p: float = 0.8,
        depth: int = 1000,
        per_query: bool = False,
        binary_topical_relevance: bool = True,
        average_ties: bool = True,
        removeUnjudged: bool = False,
    ) -> Any:
        """Rank-biased precision and its residual, as trectools defines them (the run's
        stored order; ``average_ties``: documents of equal score share the mean of their
        ranks' weights; ``binary_topical_relevance=False``: a weight times the label),
        on trec_eval's queries (the run's judged ones). The residual is the weight of
        the unjudged documents in the top ``depth`` and of the ranks past the ranking
        (trectools adds p^depth whatever the ranking's length).
        Returns ``(rbp, residual)``: floats, or with ``per_query`` two data frames."""
        from ._rbp import rbp

        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 < p < 1.0:
            raise InputError(f"p must be a number in (0, 1), not {p!r}")
        if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 1:
            raise InputError(f"depth must be a whole number of at least 1, not {depth!r}")
        label = f"RBP({p:.2f})@{depth}"
        return rbp(
            _run_frame(self.run),
            self.qrels.qrels_data,
            label,
            p=p,
            depth=depth,
            per_query=per_query,
            binary=binary_topical_relevance,
            average_ties=average_ties,
            judged_only=removeUnjudged,
        )

    def evaluate_all(self, per_query: bool = False) -> TrecRes:
        """trectools' default report (its trec_eval measures) as a :class:`TrecRes`:
        per query (with ``per_query``) then the summary rows (``query`` ``"all"``)."""
        pd = _pandas()
        depths = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
        # trectools' names and trec_eval's measures: over the top 1,000 ...
        cut = {"bpref": "bpref"}
        for v in depths:
            cut |= {f"P_{v}": f"P.{v}", f"R_{v}": f"recall.{v}", f"NDCG_{v}": f"ndcg_cut.{v}"}
        cut |= {"map": "map_cut.1000", "Rprec": "Rprec", "recip_rank": "recip_rank"}
        # ... and over every document (the summary's map is trectools' depth 10,000)
        counts = ["num_ret", "num_rel", "num_rel_ret"]
        means: dict[str, float] = {}

        def table(names: dict[str, str], **options: Any) -> Any:
            out = self._table(list(names.values()), **options)
            columns = [irmetrics.canonical_names(m)[0] for m in names.values()]
            means.update(zip(names, (out.attrs["all"][c] for c in columns)))
            out = out[columns]
            out.columns = list(names)
            return out

        at_1000 = table(cut, max_docs=1000)
        full = table({**{n: n for n in counts}, "map": "map_cut.10000"})
        ids = at_1000.index.to_numpy()

        frames = []
        if per_query:
            order = [n for n in cut if n not in ("Rprec", "recip_rank")]
            order += [*counts, "Rprec", "recip_rank"]
            for name in order:
                if name in counts:
                    values = full[name].to_numpy().astype("int64")
                else:
                    values = at_1000[name].to_numpy()
                frames.append(pd.DataFrame({"metric": name, "query": ids, "value": values}))

        run_id = self.run.get_runid()
        summary = {
            "runid": run_id,
            **{n: int(means[n]) for n in counts},
            "num_q": len(ids),
            "map": float(means["map"]),
            "gm_map": self.get_geometric_map(depth=10000),
            **{n: float(means[n]) for n in ("bpref", "Rprec", "recip_rank")},
            **{f"{m}_{v}": float(means[f"{m}_{v}"]) for m in ("P", "R", "NDCG") for v in depths},
        }
        rows = [{"metric": n, "query": "all", "value": v} for n, v in summary.items()]
        frames.append(pd.DataFrame(rows))
        res = TrecRes()
        res.data = pd.concat(frames, sort=True).reset_index(drop=True)
        res.runid = run_id
        return res


class TrecRes:
    """trectools' ``TrecRes``: ``data`` has columns ``metric``, ``query``, ``value``."""

    def __init__(self, filename: Any = None):
        self.filename: Any = None
        self.runid: Any = "Null"
        self.data: Any = None
        if filename:
            self.read_res(filename)

    def __repr__(self) -> str:
        if self.filename:
            return f"Data from file {os.path.realpath(os.path.expanduser(self.filename))}"
        return "Data file not set yet"

    __str__ = __repr__

    def get_full_filename_path(self) -> str:
        return os.path.realpath(os.path.expanduser(self.filename))

    def get_filename(self) -> str:
        return os.path.basename(self.get_full_filename_path())

    def read_res(
        self,
        filename: Any,
        result_header: list[str] | None = None,
        double_values: bool = True,
    ) -> None:
        """Read trec_eval's output (``measure query value`` lines)."""
        header = list(result_header or ["metric", "query", "value"])
        if len(header) != 3:
            raise InputError(f"the header must name 3 columns, not {len(header)}")
        pd = _pandas()
        self.filename = filename
        self.data = pd.read_csv(filename, sep=r"\s+", names=header, dtype={header[1]: str})
        self.runid = "Anyone"
        if double_values:
            self.data = self.data[self.data["metric"] != "runid"].copy()
            self.data["value"] = self.data["value"].astype(float)

    def get_runid(self) -> Any:
        return self.runid

    def get_result(self, metric: str = "P_10", query: str = "all") -> Any:
        found = self.data[(self.data["metric"] == metric) & (self.data["query"] == query)]
        return found["value"].values[0] if len(found) else None

    def get_results_for_metric(self, metric: str = "P_10") -> dict[Any, Any]:
        """``{query: value}`` of ``metric``; the per-query values where there are any."""
        rows = self.data[self.data["metric"] == metric]
        if len(rows) > 1:
            rows = rows[rows["query"] != "all"]
        return dict(zip(rows["query"].tolist(), rows["value"].tolist()))

    def compare_with(self, another_res: TrecRes, metric: str = "P_10") -> Any:
        """Paired t-test of ``metric`` over the queries both results hold
        (``irmetrics.stats.ttest``, as scipy's ``ttest_rel``)."""
        from ... import stats

        a = self.get_results_for_metric(metric)
        b = another_res.get_results_for_metric(metric)
        common = [q for q in a if q in b]
        return stats.ttest([a[q] for q in common], [b[q] for q in common])

    def printresults(
        self, outputfilename: Any, outputformat: str = "csv", perquery: bool = False
    ) -> None:
        """Write the values as CSV, a row per query and a column per metric (atomically)."""
        if outputformat != "csv":
            raise InputError(f"outputformat must be 'csv', not {outputformat!r}")
        table = self.data.pivot(index="query", columns="metric", values="value")
        _write_file(os.fspath(outputfilename), table.to_csv().encode())


from . import fusion, procedures  # noqa: E402  (they use the classes above)
