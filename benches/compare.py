#!/usr/bin/env python3
"""Benchmark irmetrics against pytrec_eval-terrier, ranx, ir_measures and trec_eval.

Every measurement runs in a fresh subprocess (start-up, imports, JIT and peak RSS are
isolated); see ``benches/README.md`` for the routes, the columns and the scales.

    python benches/compare.py --scale S
    python benches/compare.py --scale M --scale L --repeat 3 --json out.json --markdown

Only the standard library is needed; numpy speeds up data generation, pandas is needed
for the DataFrame route, and every peer is optional ("not installed" rows).
"""

# The child side of this script (``--child``) imports only what it measures: keep the
# module-level imports to small standard-library modules.
from __future__ import annotations

import json
import os
import sys
import time

SCALES = {  # name: (queries, results per query)
    "S": (1_000, 100),
    "M": (10_000, 1_000),
    "L": (100_000, 100),
    "XL": (50_000, 1_000),
}
ROUTES = ("file", "dict", "df", "polars", "parquet", "cli", "stream", "perquery")
# routes run only when asked for (--routes): they need packages beyond the defaults
OPT_IN_ROUTES = ("polars", "parquet")
# command-line routes: a process per run, its output on stdout
CLI_ROUTES = ("cli", "stream", "perquery")
TOOLS = (
    "irmetrics",
    "pytrec_eval",
    "irmetrics.compat",
    "ranx",
    "irmetrics.compat.ranx",
    "ir_measures",
    "irmetrics.compat.ir_measures",
    "trec_eval",
)
# The five measures, under the keys every adapter reports them with.
KEYS = ("P@10", "R@100", "AP", "nDCG@10", "RR@10")
IRM_MEASURES = ("P.10", "recall.100", "map", "ndcg_cut.10", "recip_rank_cut.10")
# the per-query route: every trec_eval measure, one line per query and measure
PERQUERY_ARGS = ("-q", "-m", "all_trec")
# trec_eval and pytrec_eval have no RR cut-off: they compute recip_rank ("RR", same cost).
TREC_MEASURES = ("P.10", "recall.100", "map", "ndcg_cut.10", "recip_rank")
TREC_KEYS = {
    "P_10": "P@10",
    "recall_100": "R@100",
    "map": "AP",
    "ndcg_cut_10": "nDCG@10",
    "recip_rank": "RR",
    "recip_rank_cut_10": "RR@10",
}
COLLECTION = 8_388_593  # a prime: document ids are D0 .. D8388592
MIB = 1024 * 1024


# ------------------------------------------------------------------------------------
# data generation


def data_paths(data_dir, scale, seed, backend):
    from pathlib import Path

    nq, depth = SCALES[scale]
    stem = f"{scale}-{nq}x{depth}-seed{seed}-{backend}"
    return Path(data_dir) / f"{stem}.qrels", Path(data_dir) / f"{stem}.run"


def _label_probs():
    return (0.45, 0.30, 0.15, 0.10)  # labels 0..3


def _queries_numpy(nq, depth, seed):
    """Yield (docs, scores, judged) per query; docs distinct, scores sorted, ties."""
    import numpy as np

    rng = np.random.default_rng(seed)
    chunk = max(1, 500_000 // depth)
    extra = 16  # judged documents that are not retrieved come from past the run depth
    j = np.arange(depth + extra, dtype=np.int64)
    pos_w = 1.0 / (np.arange(depth) + 10.0)
    pos_w /= pos_w.sum()
    for q0 in range(0, nq, chunk):
        m = min(chunk, nq - q0)
        off = rng.integers(0, COLLECTION, m)
        stride = rng.integers(1, COLLECTION, m)
        # stride < COLLECTION (prime), so every row holds distinct ids
        docs = (off[:, None] + j[None, :] * stride[:, None]) % COLLECTION
        scores = -np.sort(-np.round(rng.normal(10.0, 2.0, (m, depth)), 3), axis=1)
        n_judged = rng.integers(10, 31, m)
        n_unret = rng.binomial(n_judged, 0.25)
        for i in range(m):
            k_ret = min(int(n_judged[i] - n_unret[i]), depth)
            pos = rng.choice(depth, size=k_ret, replace=False, p=pos_w)
            jdocs = np.concatenate([docs[i, pos], docs[i, depth : depth + n_unret[i]]])
            labels = rng.choice(4, size=len(jdocs), p=_label_probs())
            if not labels.any():
                labels[0] = 1
            yield (
                docs[i, :depth].tolist(),
                scores[i].tolist(),
                list(zip(jdocs.tolist(), labels.tolist())),
            )


def _queries_python(nq, depth, seed):
    import random

    rng = random.Random(seed)
    for _ in range(nq):
        off, stride = rng.randrange(COLLECTION), rng.randrange(1, COLLECTION)
        all_docs = [(off + j * stride) % COLLECTION for j in range(depth + 16)]
        scores = sorted((round(rng.gauss(10.0, 2.0), 3) for _ in range(depth)), reverse=True)
        n_judged = rng.randint(10, 30)
        n_unret = sum(rng.random() < 0.25 for _ in range(n_judged))
        k_ret = min(n_judged - n_unret, depth)
        pos = set()
        while len(pos) < k_ret:  # top-biased positions, like the numpy backend
            pos.add(min(depth - 1, int(rng.paretovariate(1.0) * 10) - 10))
        jdocs = [all_docs[p] for p in sorted(pos)] + all_docs[depth : depth + n_unret]
        labels = rng.choices(range(4), weights=_label_probs(), k=len(jdocs))
        if not any(labels):
            labels[0] = 1
        yield all_docs[:depth], scores, list(zip(jdocs, labels))


def generate(qrels_path, run_path, nq, depth, seed, backend):
    """Write the qrels and run files (trec format), atomically; no-op when cached."""
    if qrels_path.exists() and run_path.exists():
        return
    qrels_path.parent.mkdir(parents=True, exist_ok=True)
    gen = _queries_numpy if backend == "numpy" else _queries_python
    tmp_q, tmp_r = qrels_path.with_suffix(".qrels.tmp"), run_path.with_suffix(".run.tmp")
    t0 = time.perf_counter()
    with open(tmp_q, "w") as fq, open(tmp_r, "w") as fr:
        for q, (docs, scores, judged) in enumerate(gen(nq, depth, seed)):
            qid = f"q{q}"
            fr.write(
                "".join(
                    f"{qid} Q0 D{d} {r} {s:.3f} bench\n"
                    for r, (d, s) in enumerate(zip(docs, scores), 1)
                )
            )
            fq.write("".join(f"{qid} 0 D{d} {label}\n" for d, label in judged))
    os.replace(tmp_q, qrels_path)
    os.replace(tmp_r, run_path)
    log(
        f"generated {run_path.name} ({run_path.stat().st_size / MIB:.0f} MiB) "
        f"in {time.perf_counter() - t0:.1f} s"
    )


# ------------------------------------------------------------------------------------
# reading inputs for the dict and DataFrame routes (done before timing starts)


def read_qrels_dict(path):
    qrels = {}
    with open(path) as f:
        for line in f:
            q, _, d, rel = line.split()
            qrels.setdefault(q, {})[d] = int(rel)
    return qrels


def read_run_dict(path):
    run = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, score, _ = line.split()
            run.setdefault(q, {})[d] = float(score)
    return run


def read_frames(qrels_path, run_path, names):
    """DataFrames for (qrels, run); names = (query col, doc col, score col, label col)."""
    import pandas as pd

    qc, dc, sc, lc = names
    qdf = pd.read_csv(
        qrels_path,
        sep=" ",
        header=None,
        usecols=[0, 2, 3],
        names=[qc, "_", dc, lc],
        dtype={qc: str, dc: str, lc: "int64"},
    )
    rdf = pd.read_csv(
        run_path,
        sep=" ",
        header=None,
        usecols=[0, 2, 4],
        names=[qc, "_q0", dc, "_rank", sc, "_tag"],
        dtype={qc: str, dc: str, sc: "float64"},
    )
    # ranx requires object (Python str) id columns; pandas 3 reads "str" columns
    for df in (qdf, rdf):
        for c in (qc, dc):
            df[c] = df[c].astype(object)
    return qdf, rdf


def read_polars(qrels_path, run_path):
    """polars frames for (qrels, run), ids as strings (read in Rust by polars)."""
    import polars as pl

    opts = {"separator": " ", "has_header": False, "infer_schema": False}
    qdf = pl.read_csv(qrels_path, new_columns=["qid", "_", "docno", "label"], **opts)
    rdf = pl.read_csv(
        run_path, new_columns=["qid", "_q0", "docno", "_rank", "score", "_tag"], **opts
    )
    return (
        qdf.select("qid", "docno", pl.col("label").cast(pl.Int64)),
        rdf.select("qid", "docno", pl.col("score").cast(pl.Float64)),
    )


def parquet_files(qrels_path, run_path):
    """The data as parquet files beside the TREC files (written once by polars, zstd):
    (query_id, doc_id, relevance) and (query_id, doc_id, score), ids as strings."""
    from pathlib import Path

    out = Path(str(qrels_path) + ".parquet"), Path(str(run_path) + ".parquet")
    if not (out[0].exists() and out[1].exists()):
        qdf, rdf = read_polars(qrels_path, run_path)
        names = {"qid": "query_id", "docno": "doc_id"}
        qdf.rename(names).rename({"label": "relevance"}).write_parquet(out[0])
        rdf.rename(names).write_parquet(out[1])
    return out


def frame_to_dict(df, qc, dc, vc, cast):
    return {q: dict(zip(g[dc], map(cast, g[vc]))) for q, g in df.groupby(qc, sort=False)}


# ------------------------------------------------------------------------------------
# tool adapters: one class per tool; a route is a method (absent = route not offered)


class Timer:
    """Named phases of the timed section: ``with t("evaluate"): ...``."""

    def __init__(self):
        self.phases = {}

    def __call__(self, name):
        return _Phase(self, name)


class _Phase:
    def __init__(self, timer, name):
        self.timer, self.name = timer, name

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        dt = time.perf_counter() - self.t0
        self.timer.phases[self.name] = self.timer.phases.get(self.name, 0.0) + dt


class Tool:
    name = ""
    module = ""  # importable module (None: a binary)
    python = None  # the interpreter its children run under (None: this one)
    dist = ""  # distribution name for the version
    df_names = ("q_id", "doc_id", "score", "score")
    startup = ""  # python -c code: import + evaluate a 2-query run

    def imp(self):
        import importlib

        return importlib.import_module(self.module)

    def available(self):
        import importlib.util

        return importlib.util.find_spec(self.module) is not None

    def version(self):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(self.dist)
        except PackageNotFoundError:
            return getattr(self.imp(), "__version__", "?")

    def routes(self):
        return [r for r in ROUTES if getattr(self, "route_" + r, None) is not None]


_QD = '{"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d4": 1}}'
_RD = '{"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "q2": {"d4": 0.5, "d5": 0.4}}'


class IrMetrics(Tool):
    name = module = dist = "irmetrics"
    startup = (
        f"import irmetrics; qd={_QD}; rd={_RD}; irmetrics.evaluate(qd, rd, {list(IRM_MEASURES)!r})"
    )

    def _means(self, res):
        return {k: res[m] for k, m in zip(KEYS, IRM_MEASURES)}

    def route_file(self, irm, qp, rp, t):
        with t("qrels"):
            qrels = irm.Qrels.from_file(qp)
        with t("run"):
            run = irm.Run.from_file(rp)
        with t("evaluate"):
            return self._means(irm.Evaluator(qrels, IRM_MEASURES).evaluate(run))

    # dict and DataFrame runs go straight to `evaluate`, as pytrec_eval's dicts do: they
    # are converted and evaluated batch by batch (conversion overlaps evaluation).
    def route_dict(self, irm, qd, rd, t):
        with t("qrels"):
            ev = irm.Evaluator(irm.Qrels.from_dict(qd), IRM_MEASURES)
        with t("evaluate"):
            return self._means(ev.evaluate(rd))

    def route_df(self, irm, qdf, rdf, t):
        q, d, s, lab = self.df_names
        with t("qrels"):
            ev = irm.Evaluator(irm.Qrels.from_columns(qdf[q], qdf[d], qdf[lab]), IRM_MEASURES)
        with t("evaluate"):
            return self._means(ev.evaluate(rdf))

    # parquet files read in Rust, record batch by record batch (timed like `file`)
    def route_parquet(self, irm, qp, rp, t):
        return self.route_file(irm, qp, rp, t)

    # polars frames are read through the Arrow PyCapsule interface, in Rust
    def route_polars(self, irm, qdf, rdf, t):
        with t("qrels"):
            ev = irm.Evaluator(qdf, IRM_MEASURES)
        with t("evaluate"):
            return self._means(ev.evaluate(rdf))

    def route_cli(self, qp, rp, extra=(), measures=IRM_MEASURES):
        py = self.python or sys.executable
        exe = os.path.join(os.path.dirname(py), "irmetrics")
        argv = [exe] if os.path.exists(exe) else [py, "-m", "irmetrics"]
        flags = [a for m in measures for a in ("-m", m)]
        return argv + list(extra) + flags + [str(qp), str(rp)]

    def route_stream(self, qp, rp):
        """The CLI evaluating query by query (`--stream`): bounded memory."""
        return self.route_cli(qp, rp, ("--stream",))

    def route_perquery(self, qp, rp):
        """Per-query output of every trec_eval measure (`-q -m all_trec`)."""
        return self.route_cli(qp, rp, PERQUERY_ARGS, measures=())


class Baseline(IrMetrics):
    """Another build of irmetrics (``--baseline PYTHON``: an interpreter that imports it),
    measured in the same run, repeat by repeat alternating with this one."""

    name = "baseline"

    def _ask(self, code):
        import subprocess

        p = subprocess.run([self.python, "-c", code], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else None

    def available(self):
        return self.python is not None and self._ask("import irmetrics") is not None

    def version(self):
        v = self._ask("from importlib.metadata import version; print(version('irmetrics'))")
        return f"{v or '?'} ({self.python})"


class PytrecEval(Tool):
    name = module = "pytrec_eval"
    dist = "pytrec-eval-terrier"
    startup = (
        f"import pytrec_eval; qd={_QD}; rd={_RD}; "
        f"pytrec_eval.RelevanceEvaluator(qd, {set(TREC_MEASURES)!r}).evaluate(rd)"
    )

    def _eval(self, pe, qd, rd, t):
        with t("prepare"):
            ev = pe.RelevanceEvaluator(qd, set(TREC_MEASURES))
        with t("evaluate"):
            per_query = ev.evaluate(rd)
        with t("means"):
            n = len(per_query)
            sums = {}
            for vals in per_query.values():
                for k, v in vals.items():
                    sums[k] = sums.get(k, 0.0) + v
            return {TREC_KEYS[k]: v / n for k, v in sums.items()}

    def route_file(self, pe, qp, rp, t):
        with t("qrels"), open(qp) as f:
            qd = pe.parse_qrel(f)
        with t("run"), open(rp) as f:
            rd = pe.parse_run(f)
        return self._eval(pe, qd, rd, t)

    def route_dict(self, pe, qd, rd, t):
        return self._eval(pe, qd, rd, t)

    def route_df(self, pe, qdf, rdf, t):
        q, d, s, lab = self.df_names
        with t("qrels"):
            qd = frame_to_dict(qdf, q, d, lab, int)
        with t("run"):
            rd = frame_to_dict(rdf, q, d, s, float)
        return self._eval(pe, qd, rd, t)


class IrMetricsCompat(PytrecEval):
    """pytrec_eval's API on irmetrics (``irmetrics.compat.RelevanceEvaluator``): the same
    calls as the pytrec_eval adapter's dict route, per-query dicts out."""

    name = module = "irmetrics.compat"
    dist = "irmetrics"
    startup = (
        f"import irmetrics.compat as c; qd={_QD}; rd={_RD}; "
        f"c.RelevanceEvaluator(qd, {set(TREC_MEASURES)!r}).evaluate(rd)"
    )
    route_df = None  # type: ignore[assignment]

    def version(self):
        return IrMetrics().version()


class Ranx(Tool):
    name = module = dist = "ranx"
    metrics = ("precision@10", "recall@100", "map", "ndcg@10", "mrr@10")
    startup = (
        f"import ranx; qd={_QD}; rd={_RD}; "
        f"ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), {list(metrics)!r})"
    )

    def _eval(self, ranx, qrels, run, t):
        with t("evaluate"):
            res = ranx.evaluate(qrels, run, list(self.metrics))
        return {k: float(res[m]) for k, m in zip(KEYS, self.metrics)}

    def route_file(self, ranx, qp, rp, t):
        with t("qrels"):
            qrels = ranx.Qrels.from_file(str(qp), kind="trec")
        with t("run"):
            run = ranx.Run.from_file(str(rp), kind="trec")
        return self._eval(ranx, qrels, run, t)

    def route_dict(self, ranx, qd, rd, t):
        with t("qrels"):
            qrels = ranx.Qrels(qd)
        with t("run"):
            run = ranx.Run(rd)
        return self._eval(ranx, qrels, run, t)

    def route_df(self, ranx, qdf, rdf, t):
        with t("qrels"):
            qrels = ranx.Qrels.from_df(qdf, score_col="label")
        with t("run"):
            run = ranx.Run.from_df(rdf)
        return self._eval(ranx, qrels, run, t)

    df_names = ("q_id", "doc_id", "score", "label")


class IrMeasures(Tool):
    name = module = "ir_measures"
    dist = "ir-measures"
    df_names = ("query_id", "doc_id", "score", "relevance")
    startup = (
        f"import ir_measures; qd={_QD}; rd={_RD}; "
        f"ms = [ir_measures.parse_measure(m) for m in {list(KEYS)!r}]; "
        "ir_measures.calc_aggregate(ms, qd, rd)"
    )

    def _eval(self, irms, qrels, run, t, phase="evaluate"):
        with t(phase):
            res = irms.calc_aggregate([irms.parse_measure(m) for m in KEYS], qrels, run)
        return {str(m): float(v) for m, v in res.items()}

    def route_file(self, irms, qp, rp, t):
        # the documented usage: readers are generators, parsed while evaluating
        qrels, run = irms.read_trec_qrels(str(qp)), irms.read_trec_run(str(rp))
        return self._eval(irms, qrels, run, t, "read+evaluate")

    def route_dict(self, irms, qd, rd, t):
        return self._eval(irms, qd, rd, t)

    def route_df(self, irms, qdf, rdf, t):
        return self._eval(irms, qdf, rdf, t)


class RanxCompat(Ranx):
    """ranx's API on irmetrics (``irmetrics.compat.ranx``): the ranx adapter's calls."""

    name = module = "irmetrics.compat.ranx"
    dist = "irmetrics"
    startup = (
        f"import irmetrics.compat.ranx as ranx; qd={_QD}; rd={_RD}; "
        f"ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), {list(Ranx.metrics)!r})"
    )

    def version(self):
        return IrMetrics().version()


class IrMeasuresCompat(IrMeasures):
    """ir_measures' API on irmetrics (``irmetrics.compat.ir_measures``): the ir_measures
    adapter's calls."""

    name = module = "irmetrics.compat.ir_measures"
    dist = "irmetrics"
    startup = (
        f"import irmetrics.compat.ir_measures as ir_measures; qd={_QD}; rd={_RD}; "
        f"ms = [ir_measures.parse_measure(m) for m in {list(KEYS)!r}]; "
        "ir_measures.calc_aggregate(ms, qd, rd)"
    )

    def version(self):
        return IrMetrics().version()


class TrecEval(Tool):
    name = "trec_eval"
    module = None

    def exe(self):
        import shutil

        return os.environ.get("TREC_EVAL") or shutil.which("trec_eval")

    def available(self):
        return bool(self.exe())

    def version(self):
        import subprocess

        p = subprocess.run([self.exe(), "-v"], capture_output=True, text=True)
        return (p.stdout + p.stderr).strip().splitlines()[0].split()[-1] if p else "?"

    def _argv(self, qp, rp):
        return [self.exe()] + [a for m in TREC_MEASURES for a in ("-m", m)] + [str(qp), str(rp)]

    # a C binary: its file route is its command line
    route_file = route_cli = _argv

    def route_perquery(self, qp, rp):
        return [self.exe(), *PERQUERY_ARGS, str(qp), str(rp)]


ADAPTERS = {
    a.name: a
    for a in (
        IrMetrics(),
        Baseline(),
        PytrecEval(),
        IrMetricsCompat(),
        Ranx(),
        RanxCompat(),
        IrMeasures(),
        IrMeasuresCompat(),
        TrecEval(),
    )
}


# ------------------------------------------------------------------------------------
# child process: one route, one tool


def _cpu():
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss * _RSS_UNIT


def _rss_now():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


_RSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, else KiB


def child(spec):
    tool, route = ADAPTERS[spec["tool"]], spec["route"]
    out = {"phases": {}}
    t = Timer()
    if spec["mode"] == "threads":
        return child_threads(spec)
    if route in ("file", "parquet"):  # timed from here: import + read + evaluate
        args = (spec["qrels"], spec["run"])
        if route == "parquet":  # the files are written before the timed section
            args = parquet_files(*args)
        cpu0, maxrss0 = _cpu()
        rss0, w0 = _rss_now(), time.perf_counter()
        with t("import"):
            mod = tool.imp()
    else:
        mod = tool.imp()
        if route == "dict":
            args = (read_qrels_dict(spec["qrels"]), read_run_dict(spec["run"]))
        elif route == "polars":
            args = read_polars(spec["qrels"], spec["run"])
        else:
            args = read_frames(spec["qrels"], spec["run"], tool.df_names)
        cpu0, maxrss0 = _cpu()
        rss0, w0 = _rss_now(), time.perf_counter()
    means = getattr(tool, "route_" + route)(mod, *args, t)
    wall = time.perf_counter() - w0
    cpu1, _ = _cpu()
    if spec.get("extra"):  # agreement check: untimed extra measures
        res = mod.Evaluator(mod.Qrels.from_file(spec["qrels"]), spec["extra"]).evaluate(
            mod.Run.from_file(spec["run"])
        )
        means.update({TREC_KEYS[m.replace(".", "_")]: v for m, v in res.items()})
    out.update(
        timed_wall=wall,
        timed_cpu=cpu1 - cpu0,
        rss_before=rss0,
        maxrss_before=maxrss0,
        phases=t.phases,
        means=means,
    )
    return out


def child_threads(spec):
    """irmetrics only: parse with IRMETRICS_NUM_THREADS, then time Evaluator.evaluate."""
    import irmetrics

    n, reps = spec["threads"], spec["reps"]
    t0 = time.perf_counter()
    qrels = irmetrics.Qrels.from_file(spec["qrels"])
    t1 = time.perf_counter()
    run = irmetrics.Run.from_file(spec["run"])
    t2 = time.perf_counter()
    ev = irmetrics.Evaluator(qrels, IRM_MEASURES, n_threads=n)
    times = []
    for _ in range(reps):
        s = time.perf_counter()
        ev.evaluate(run)
        times.append(time.perf_counter() - s)
    times.sort()
    return {
        "qrels_s": t1 - t0,
        "run_s": t2 - t1,
        "eval_s": times[len(times) // 2],
        "eval_min_s": times[0],
    }


# ------------------------------------------------------------------------------------
# parent: spawning, measuring, aggregating


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def spawn(argv, timeout, env=None, stdout=None):
    """Run argv; wall (parent clock), CPU and peak RSS of that one process (wait4).
    Its output is kept (``res["stdout"]``) unless ``stdout`` names a file to write it to
    (``os.devnull``: the output's cost without the cost of keeping it)."""
    import contextlib
    import subprocess
    import tempfile
    import threading

    with contextlib.ExitStack() as stack:
        err = stack.enter_context(tempfile.TemporaryFile())
        if stdout is None:
            out = stack.enter_context(tempfile.TemporaryFile())
        else:
            out = stack.enter_context(open(stdout, "wb"))
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        killer = threading.Timer(timeout, p.kill)
        killer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        killer.cancel()
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        err.seek(0)
        kept = b""
        if stdout is None:
            out.seek(0)
            kept = out.read()
        res = {
            "rc": rc,
            "wall": wall,
            "cpu": ru.ru_utime + ru.ru_stime,
            "peak_rss": ru.ru_maxrss * _RSS_UNIT,
            "stdout": kept.decode(errors="replace"),
        }
        if rc != 0:
            lines = err.read().decode(errors="replace").strip().splitlines()
            res["error"] = "timeout" if rc in (-9, 137) else (lines[-1] if lines else f"rc {rc}")
        return res


def spawn_child(spec, timeout, env=None, python=None):
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        spec = dict(spec, out=os.path.join(d, "out.json"))
        argv = [python or sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
        res = spawn(argv, timeout, env)
        if res["rc"] == 0:
            with open(spec["out"]) as f:
                res.update(json.load(f))
        return res


def parse_trec_output(text):
    means = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all" and parts[0] in TREC_KEYS:
            means[TREC_KEYS[parts[0]]] = float(parts[2])
    return means


def median(xs):
    import statistics

    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def measure(tools, route, qp, rp, args):
    """Median over ``--repeat`` fresh processes of each (tool, route); with several tools
    the repeats alternate between them (A B A B ...), so a load on the machine that comes
    and goes falls on each alike."""
    runs = {t.name: [] for t in tools}
    errors = {}
    for _ in range(args.repeat):
        for tool in tools:
            if tool.name in errors:
                continue
            if route in CLI_ROUTES or tool.module is None:
                r = spawn(getattr(tool, "route_" + route)(qp, rp), args.timeout)
                if r["rc"] == 0:
                    r["means"] = parse_trec_output(r["stdout"])
            else:
                spec = {
                    "mode": "route",
                    "tool": tool.name,
                    "route": route,
                    "qrels": str(qp),
                    "run": str(rp),
                }
                r = spawn_child(spec, args.timeout, python=tool.python)
            r.pop("stdout", None)
            if r["rc"] != 0:
                errors[tool.name] = {"error": r["error"]}
            else:
                runs[tool.name].append(r)
    return [errors.get(t.name) or _summary(runs[t.name], route) for t in tools]


def _summary(runs, route):
    row = {
        k: median([r.get(k) for r in runs])
        for k in ("wall", "cpu", "peak_rss", "timed_wall", "timed_cpu", "rss_before")
    }
    phases = dict.fromkeys(p for r in runs for p in r.get("phases", {}))  # in run order
    row["phases"] = {p: median([r["phases"].get(p) for r in runs]) for p in phases}
    row["means"] = runs[-1].get("means", {})
    # the headline numbers: end to end for file/cli, the timed section for dict/df
    e2e = route in ("file", *CLI_ROUTES)
    row["t_wall"] = row["wall"] if e2e else row["timed_wall"]
    row["t_cpu"] = row["cpu"] if e2e else row["timed_cpu"]
    return row


def measure_startup(args):
    rows = []
    for name in ["python"] + args.tools:
        tool = ADAPTERS.get(name)
        if tool is not None and (not tool.startup or not tool.available()):
            continue
        code = tool.startup if tool else "pass"
        argv = [sys.executable, "-c", code]
        res = [spawn(argv, args.timeout) for _ in range(args.startup_repeat)]
        bad = [r for r in res if r["rc"] != 0]
        row = {"tool": name, "code": code}
        if bad:
            row["error"] = bad[0]["error"]
        else:
            # the first (cold) run fills caches (numba, .pyc); report the median and min
            row.update(
                wall=median([r["wall"] for r in res]),
                wall_min=min(r["wall"] for r in res),
                cpu=median([r["cpu"] for r in res]),
                peak_rss=median([r["peak_rss"] for r in res]),
            )
        log(f"startup {name}: {fmt_s(row.get('wall'))} s")
        rows.append(row)
    return rows


def measure_threads(scale, qp, rp, args):
    ncores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    rows = []
    for n in sorted({1, 2, ncores}):
        env = dict(os.environ, IRMETRICS_NUM_THREADS=str(n))
        spec = {
            "mode": "threads",
            "tool": "irmetrics",
            "route": "file",
            "threads": n,
            "reps": max(7, args.repeat),
            "qrels": str(qp),
            "run": str(rp),
        }
        r = spawn_child(spec, args.timeout, env)
        r.pop("stdout", None)
        r.update(scale=scale, threads=n)
        rows.append(r)
        log(
            f"{scale} threads={n}: evaluate {fmt_s(r.get('eval_s'))} s, "
            f"Run.from_file {fmt_s(r.get('run_s'))} s"
        )
    base = rows[0]
    for r in rows:
        if "eval_s" in r and "eval_s" in base:
            r["eval_speedup"] = base["eval_s"] / r["eval_s"]
            r["parse_speedup"] = base["run_s"] / r["run_s"]
    return rows


def agreement(scale, results, qp, rp, args):
    """Max |difference| of each tool's means against irmetrics (same keys only)."""
    spec = {
        "mode": "route",
        "tool": "irmetrics",
        "route": "file",
        "qrels": str(qp),
        "run": str(rp),
        "extra": ["recip_rank"],
    }
    ref = spawn_child(spec, args.timeout).get("means")
    rows = []
    if not ref:
        return rows
    for r in results:
        if r["scale"] != scale or not r.get("means"):
            continue
        # command-line tools print 4 decimals: compare with the reference rounded alike
        digits = 4 if r["route"] in CLI_ROUTES or ADAPTERS[r["tool"]].module is None else 17
        diffs = {k: abs(v - round(ref[k], digits)) for k, v in r["means"].items() if k in ref}
        if diffs:
            worst = max(diffs, key=diffs.get)
            rows.append(
                {
                    "scale": scale,
                    "route": r["route"],
                    "tool": r["tool"],
                    "max_abs_diff": diffs[worst],
                    "worst": worst,
                    "compared": sorted(diffs),
                    "ok": diffs[worst] <= 1e-9,
                }
            )
    return rows


# ------------------------------------------------------------------------------------
# reporting


def machine():
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    ram = None
    try:
        with open("/proc/meminfo") as f:
            ram = int(next(ln.split()[1] for ln in f if ln.startswith("MemTotal"))) * 1024
    except (OSError, StopIteration):
        try:
            import psutil

            ram = psutil.virtual_memory().total
        except ImportError:
            pass
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return {
        "cpu": cpu,
        "cores": cores,
        "usable_cores": usable,
        "ram_gib": round(ram / 2**30, 1) if ram else None,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def loadavg():
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def versions(tools):
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in tools:
        tool = ADAPTERS[name]
        out[name] = tool.version() if tool.available() else "not installed"
    for dist in ("numpy", "pandas", "numba", "pyarrow"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            pass
    return out


def fmt_s(x):
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def fmt_x(x):
    return "—" if x is None else (f"{x:.1f}×" if x < 100 else f"{x:.0f}×")


def table(header, rows, md):
    rows = [[str(c) for c in r] for r in rows]
    if md:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header)] + [fmt.format(*r) for r in rows])


def report(rep, md):
    out = []
    h = (lambda s: f"### {s}") if md else (lambda s: f"== {s} ==")
    m = rep["machine"]
    out.append(h("Machine"))
    out.append(
        f"{m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{m['ram_gib']} GiB RAM, {m['os']}, Python {m['python']}. "
        + ", ".join(f"{k} {v}" for k, v in rep["versions"].items())
        + f". Median of {rep['repeat']} fresh processes per cell."
    )
    load = rep.get("load")
    if load:
        out[-1] += (
            f" Load average (1 min) at start {load['start']:.2f}, at end {load['end']:.2f}"
            + (
                ": the machine was busy, wall times are inflated (CPU times less so)."
                if max(load.values()) > 0.5 * m["usable_cores"]
                else "."
            )
        )
    by_key = {(r["scale"], r["route"], r["tool"]): r for r in rep["results"]}
    for scale in rep["scales"]:
        d = rep["data"][scale]
        out.append(
            h(
                f"Scale {scale}: {d['queries']:,} queries × {d['depth']:,} results "
                f"(run file {d['run_mib']:.0f} MiB, qrels {d['judgments']:,} judgments)"
            )
        )
        body = []
        for route in rep["routes"]:
            base = by_key.get((scale, route, "irmetrics"), {})
            for name in rep["tools"]:
                r = by_key.get((scale, route, name))
                if r is None:
                    continue
                if "error" in r:
                    body.append([route, name, r["error"], "", "", "", "", ""])
                    continue
                wx = (r["t_wall"] / base["t_wall"]) if base.get("t_wall") else None
                cx = (r["t_cpu"] / base["t_cpu"]) if base.get("t_cpu") else None
                if name == "irmetrics":
                    wx = cx = None
                phases = " · ".join(f"{p} {fmt_s(v)}" for p, v in r["phases"].items())
                body.append(
                    [
                        route,
                        name,
                        fmt_s(r["t_wall"]),
                        fmt_s(r["t_cpu"]),
                        f"{r['peak_rss'] / MIB:.0f}",
                        fmt_x(wx),
                        fmt_x(cx),
                        phases,
                    ]
                )
        out.append(
            table(
                [
                    "route",
                    "tool",
                    "wall s",
                    "CPU s",
                    "peak RSS MiB",
                    "wall vs irmetrics",
                    "CPU vs irmetrics",
                    "in-process phases (s)",
                ],
                body,
                md,
            )
        )
    out.append(
        "Wall and CPU: end to end in a fresh process (interpreter start-up, imports, reading "
        "both files, 5 measures, means) for `file` and `cli`; only the timed section for `dict` "
        "and `df` (inputs prebuilt in the child before timing). Peak RSS is the whole child "
        "process's. `vs irmetrics` = tool / irmetrics (higher = irmetrics faster)."
    )
    if rep["startup"]:
        out.append(h('Start-up: `python -c "import TOOL; evaluate a 2-query run"`'))
        out.append(
            table(
                ["tool", "wall s (median)", "wall s (min)", "CPU s", "peak RSS MiB"],
                [
                    [
                        r["tool"],
                        fmt_s(r.get("wall")),
                        fmt_s(r.get("wall_min")),
                        fmt_s(r.get("cpu")),
                        f"{r['peak_rss'] / MIB:.0f}" if r.get("peak_rss") else r.get("error", ""),
                    ]
                    for r in rep["startup"]
                ],
                md,
            )
        )
    if rep["threads"]:
        out.append(h("Thread scaling (irmetrics; IRMETRICS_NUM_THREADS + n_threads=)"))
        out.append(
            table(
                [
                    "scale",
                    "threads",
                    "Run.from_file s",
                    "parse speed-up",
                    "Evaluator.evaluate s",
                    "evaluate speed-up",
                ],
                [
                    [
                        r["scale"],
                        r["threads"],
                        fmt_s(r.get("run_s")),
                        fmt_x(r.get("parse_speedup")),
                        fmt_s(r.get("eval_s")),
                        fmt_x(r.get("eval_speedup")),
                    ]
                    for r in rep["threads"]
                ],
                md,
            )
        )
    if rep["agreement"]:
        out.append(h("Agreement with irmetrics (max |difference| of the means)"))
        out.append(
            table(
                ["scale", "route", "tool", "max abs diff", "worst measure", "measures compared"],
                [
                    [
                        r["scale"],
                        r["route"],
                        r["tool"],
                        f"{r['max_abs_diff']:.2e}",
                        r["worst"],
                        ", ".join(r["compared"]),
                    ]
                    for r in rep["agreement"]
                ],
                md,
            )
        )
    if rep["targets"]:
        out.append(h("Targets (issue 4)"))
        out.append(
            table(
                ["target", "measured", "result"],
                [[t["target"], t["measured"], t["result"]] for t in rep["targets"]],
                md,
            )
        )
    return "\n\n".join(out)


def targets(rep):
    by_key = {(r["scale"], r["route"], r["tool"]): r for r in rep["results"] if "error" not in r}
    measured = [s for s in ("M", "L", "XL", "S") if s in rep["scales"]]
    out = []

    def add(target, scale, value, ok, unit="×"):
        txt = f"{value:.2f}{unit}" if unit == "×" else f"{value:.0f} {unit}"
        result = "pass" if ok else "FAIL"
        if not target.startswith(scale + " "):  # measured at another scale than stated
            txt += f" (at {scale})"
            result = f"indicative only: {'pass' if ok else 'fail'} at {scale}"
        out.append({"target": target, "measured": txt, "result": result})

    def ratio(scale, route, peer, peer_key="t_wall"):
        a, b = by_key.get((scale, route, "irmetrics")), by_key.get((scale, route, peer))
        if a and b and b.get(peer_key) and a.get("t_wall"):
            return b[peer_key] / a["t_wall"]
        return None

    def pick(pref):
        return pref if pref in rep["scales"] else (measured[0] if measured else None)

    s = pick("M")
    for peer, goal in (("pytrec_eval", 15), ("ranx", 50)):
        x = ratio(s, "file", peer)
        if x is not None:
            add(f"M file route ≥{goal}× faster than {peer}", s, x, x >= goal)
    a = by_key.get((s, "file", "irmetrics"))
    if a:
        size = rep["data"][s]["run_mib"]
        add(
            f"M file route: peak RSS < run file ({size:.0f} MiB)",
            s,
            a["peak_rss"] / MIB,
            a["peak_rss"] / MIB < size,
            "MiB",
        )
    for scale, at in (("M", s), ("XL", "XL")):
        a = by_key.get((at, "stream", "irmetrics"))
        if a:
            add(
                f"{scale} streaming route (--stream): peak RSS < 200 MiB",
                at,
                a["peak_rss"] / MIB,
                a["peak_rss"] / MIB < 200,
                "MiB",
            )
    pe, irm = by_key.get((s, "dict", "pytrec_eval")), by_key.get((s, "dict", "irmetrics"))
    if pe and irm and "evaluate" in pe["phases"]:
        x = pe["phases"]["evaluate"] / irm["t_wall"]
        add("M dict route ≥8× faster than RelevanceEvaluator.evaluate alone", s, x, x >= 8)
    x = ratio(s, "df", "ranx")
    if x is not None:
        add("M DataFrame route ≥20× faster than ranx Run.from_df + evaluate", s, x, x >= 20)
    s = pick("L")
    x = ratio(s, "file", "pytrec_eval")
    if x is not None:
        add("L file route ≥10× faster than pytrec_eval", s, x, x >= 10)
    for sc in rep["scales"]:  # --baseline: this build against another, route by route
        for route in rep["routes"]:
            x = ratio(sc, route, "baseline")
            if x is not None:
                # 5% is the spread of repeated medians on a quiet machine (wall clock)
                add(f"{sc} {route}: no slower than the baseline build", sc, x, x >= 0.95)
                if route == "perquery":  # issue 19: per-query output 2x faster on 2 cores
                    add(f"{sc} perquery: at least 2x the baseline build", sc, x, x >= 2)
    st = [r for r in rep["startup"] if r["tool"] == "irmetrics" and "wall" in r]
    if st:
        w = st[0]["wall"]
        out.append(
            {
                "target": "start-up (import + 2-query run) < 0.2 s",
                "measured": f"{w:.3f} s",
                "result": "pass" if w < 0.2 else "FAIL",
            }
        )
    th = {(r["scale"], r["threads"]): r for r in rep["threads"] if "eval_speedup" in r}
    for sc in ("M", "L", "XL", "S"):
        if (sc, 2) in th:
            x = th[(sc, 2)]["eval_speedup"]
            add("M: 2 threads ≥1.7× faster than 1 (Evaluator.evaluate)", sc, x, x >= 1.7)
            break
    return out


# ------------------------------------------------------------------------------------
# main


def split_list(values, allowed, what):
    items = [x.strip() for v in values for x in v.split(",") if x.strip()]
    for x in items:
        if x not in allowed:
            raise SystemExit(f"unknown {what} {x!r}; choose from {', '.join(allowed)}")
    return list(dict.fromkeys(items))


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", action="append", default=[], help="S, M, L, XL (repeatable)")
    p.add_argument("--routes", action="append", default=[], help=f"{','.join(ROUTES)}")
    p.add_argument("--tools", action="append", default=[], help=f"{','.join(TOOLS)}")
    p.add_argument("--data-dir", default="bench-data", help="generated files (cached)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--repeat", type=int, default=3, help="fresh processes per cell (median)")
    p.add_argument("--startup-repeat", type=int, default=7)
    p.add_argument("--timeout", type=float, default=3600, help="seconds per process")
    p.add_argument("--no-startup", action="store_true")
    p.add_argument("--no-threads", action="store_true")
    p.add_argument("--no-check", action="store_true", help="skip the agreement check")
    p.add_argument("--generator", choices=("auto", "numpy", "python"), default="auto")
    p.add_argument("--json", help="write every number (and the machine) to this file")
    p.add_argument("--markdown", action="store_true", help="print README-ready tables")
    p.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="also measure the irmetrics that this interpreter imports (another build), "
        "alternating with this one; its rows and a no-slower check join the tables",
    )
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        return child_entry(args.child)

    args.scales = split_list(args.scale or ["S"], SCALES, "scale")
    default_routes = [r for r in ROUTES if r not in OPT_IN_ROUTES]
    args.routes = split_list(args.routes or [",".join(default_routes)], ROUTES, "route")
    args.tools = split_list(args.tools or [",".join(TOOLS)], TOOLS, "tool")
    if "irmetrics" not in args.tools:
        args.tools.insert(0, "irmetrics")
    if args.baseline:
        ADAPTERS["baseline"].python = os.path.abspath(args.baseline)
        args.tools.insert(1, "baseline")
    backend = args.generator
    if backend == "auto":
        import importlib.util

        backend = "numpy" if importlib.util.find_spec("numpy") else "python"
    have = {n: ADAPTERS[n].available() for n in args.tools}
    if not have["irmetrics"]:
        raise SystemExit("irmetrics is not importable in this interpreter")
    rep = {
        "machine": machine(),
        "versions": versions(args.tools),
        "repeat": args.repeat,
        "scales": args.scales,
        "routes": args.routes,
        "tools": args.tools,
        "seed": args.seed,
        "generator": backend,
        "data": {},
        "results": [],
        "startup": [],
        "threads": [],
        "agreement": [],
        "targets": [],
    }
    rep["load"] = {"start": loadavg()}
    if not args.no_startup:  # first: also warms caches (numba, .pyc) for the peers
        rep["startup"] = measure_startup(args)
    for scale in args.scales:
        nq, depth = SCALES[scale]
        qp, rp = data_paths(args.data_dir, scale, args.seed, backend)
        generate(qp, rp, nq, depth, args.seed, backend)
        with open(qp) as f:
            judgments = sum(1 for _ in f)
        rep["data"][scale] = {
            "queries": nq,
            "depth": depth,
            "qrels": str(qp),
            "run": str(rp),
            "run_mib": rp.stat().st_size / MIB,
            "judgments": judgments,
        }
        cache = {}
        for route in args.routes:
            # irmetrics and its baseline are measured together, their repeats alternating
            names = [n for n in args.tools if route in ADAPTERS[n].routes()]
            groups = [[n for n in names if n in ("irmetrics", "baseline")]]
            groups += [[n] for n in names if n not in groups[0]]
            for group in filter(None, groups):
                todo = [
                    n for n in group if have[n] and not (ADAPTERS[n].module is None and n in cache)
                ]
                measured = dict(
                    zip(todo, measure([ADAPTERS[n] for n in todo], route, qp, rp, args))
                )
                for name in group:
                    if not have[name]:
                        row = {"error": "not installed"}
                    elif name in measured:
                        row = cache[name] = measured[name]
                    else:  # a binary: file == cli
                        row = cache[name]
                    row = dict(row, scale=scale, route=route, tool=name)
                    rep["results"].append(row)
                    log(
                        f"{scale} {route:<4} {name:<12} "
                        + (
                            row["error"]
                            if "error" in row
                            else f"wall {fmt_s(row['t_wall'])} s, CPU {fmt_s(row['t_cpu'])} s, "
                            f"peak {row['peak_rss'] / MIB:.0f} MiB"
                        )
                    )
        if not args.no_threads:
            rep["threads"] += measure_threads(scale, qp, rp, args)
        if not args.no_check:
            rep["agreement"] += agreement(scale, rep["results"], qp, rp, args)
    rep["load"]["end"] = loadavg()
    rep["targets"] = targets(rep)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=1)
    print(report(rep, args.markdown))
    return 0


def child_entry(spec_json):
    """The fast path of a measured child: no argparse, nothing but the measured tool."""
    spec = json.loads(spec_json)
    res = child(spec)
    with open(spec["out"], "w") as f:
        json.dump(res, f)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.exit(child_entry(sys.argv[2]))
    sys.exit(main())
