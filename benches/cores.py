"""Thread scaling of irmetrics' command-line and file routes against `cat` (issue 19).

For each scale (benches/compare.py's seeded data) and thread count n, a fresh process
per measurement, pinned to n cores (``taskset``, so n threads model an n-core machine)
with ``IRMETRICS_NUM_THREADS=n``, its output written to /dev/null:

* ``cat``: ``cat QRELS RUN`` (one core), the floor for reading the files;
* ``import``: ``python -c "import irmetrics"`` (start-up);
* ``cli``: ``irmetrics -m P.10 -m recall.100 -m map -m ndcg_cut.10 -m recip_rank_cut.10``
  (file to means; the run read in blocks as it is evaluated);
* ``bin``, ``binq``: ``cli`` and ``perquery`` through a Rust binary (``--bin``, e.g.
  ``cargo build --release --example trec_eval --features mimalloc``), without Python;
* ``file``: Python ``Qrels.from_file`` + ``Run.from_file`` + ``Evaluator.evaluate``;
* ``table``: the same with ``Evaluator.evaluate_table`` (per-query values into numpy);
* ``parquet``: ``file`` on the same data as parquet files (written by irmetrics);
* ``stream``: ``irmetrics --stream`` with the same measures (bounded memory);
* ``perquery``: ``irmetrics -q -m all_trec`` (a line per query and measure).

Several builds can be compared in one run (``--build NAME=DIR``: DIR on PYTHONPATH holds
that build's ``irmetrics``), their repeats alternating (A B A B), so a load that comes
and goes falls on each alike; their per-query output is checked byte for byte.

    python benches/cores.py --scale M --scale L --threads 1,2,4,8,16 \\
        --build new=/tmp/new --build base=/tmp/base --json cores.json --markdown
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the data generator, spawn, machine description)

ROUTES = ("cat", "import", "cli", "bin", "file", "table", "parquet", "stream", "perquery", "binq")
FILE_ROUTE = """
import sys, irmetrics as irm
q = irm.Qrels.from_file(sys.argv[1])
r = irm.Run.from_file(sys.argv[2])
ev = irm.Evaluator(q, sys.argv[3].split(","))
ev.evaluate_table(r) if sys.argv[4] == "table" else ev.evaluate(r)
"""


def argv_for(route, py, qp, rp, binary=None):
    measures = [a for m in compare.IRM_MEASURES for a in ("-m", m)]
    if route == "cat":
        return ["cat", str(qp), str(rp)]
    if route == "bin":
        return [binary] + measures + [str(qp), str(rp)]
    if route == "binq":
        return [binary] + list(compare.PERQUERY_ARGS) + [str(qp), str(rp)]
    if route == "import":
        return [py, "-c", "import irmetrics"]
    if route in ("file", "table", "parquet"):
        if route == "parquet":
            qp, rp = parquet_paths(qp, rp)
        return [py, "-c", FILE_ROUTE, str(qp), str(rp), ",".join(compare.IRM_MEASURES), route]
    cli = [py, "-m", "irmetrics"]
    if route == "cli":
        return cli + measures + [str(qp), str(rp)]
    if route == "stream":
        return cli + ["--stream"] + measures + [str(qp), str(rp)]
    if route == "perquery":
        return cli + list(compare.PERQUERY_ARGS) + [str(qp), str(rp)]
    raise ValueError(route)


def parquet_paths(qp, rp):
    return qp.with_name(qp.name + ".parquet"), rp.with_name(rp.name + ".parquet")


def write_parquet(qp, rp, build):
    """The scale's files as parquet, written by irmetrics (the first build) itself."""
    pq, pr = parquet_paths(qp, rp)
    if pq.exists() and pr.exists():
        return
    code = (
        "import sys, irmetrics as irm; "
        "irm.Qrels.from_file(sys.argv[1]).to_file(sys.argv[3]); "
        "irm.Run.from_file(sys.argv[2]).to_file(sys.argv[4])"
    )
    argv = [sys.executable, "-c", code, str(qp), str(rp), str(pq), str(pr)]
    r = compare.spawn(argv, 600, env_for(build[1], 0))
    if r["rc"] != 0:
        raise SystemExit(f"writing parquet files failed: {r.get('error')}")


def env_for(build_dir, threads):
    env = dict(os.environ)
    if threads:
        env["IRMETRICS_NUM_THREADS"] = str(threads)
    if build_dir:
        env["PYTHONPATH"] = build_dir + os.pathsep + env.get("PYTHONPATH", "")
    return env


def pinned(argv, threads, pin):
    if not pin or shutil.which("taskset") is None:
        return argv
    return ["taskset", "-c", f"0-{threads - 1}"] + argv


def run_cell(route, build, threads, qp, rp, args, stdout=os.devnull):
    name, build_dir = build
    argv = argv_for(route, sys.executable, qp, rp, args.bin)
    argv = pinned(argv, 1 if route == "cat" else threads, args.pin)
    return compare.spawn(argv, args.timeout, env_for(build_dir, threads), stdout=stdout)


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_builds(scale, builds, qp, rp, args, out):
    """Each build's per-query output and means, compared byte for byte with the first's."""
    found = {}
    for route in ("perquery", "cli"):
        for b in builds:
            path = os.path.join(args.tmp, f"check-{scale}-{route}-{b[0]}.txt")
            r = run_cell(route, b, max(args.threads), qp, rp, args, stdout=path)
            if r["rc"] != 0:
                compare.log(f"FAILED check: {b[0]} {route} at {scale}: {r.get('error')}")
                continue
            found.setdefault(route, {})[b[0]] = (digest(path), os.path.getsize(path))
            os.remove(path)
    same = all(len({v for v in d.values()}) == 1 for d in found.values())
    out["checks"][scale] = {"same_output": same, "outputs": found}
    compare.log(f"{scale}: outputs of {', '.join(b[0] for b in builds)} identical: {same}")
    if not same:  # recorded (the builds may differ by a fix), the timing goes on
        compare.log(f"{scale}: THE BUILDS' OUTPUTS DIFFER: {found}")


def generate(job, seed, backend):
    qp, rp, nq, depth = job
    compare.generate(qp, rp, nq, depth, seed, backend)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scale", action="append", default=[], help="S, M, L, XL (repeatable)")
    p.add_argument("--threads", default="1,2,4,8,16", help="thread counts (each <= cores)")
    p.add_argument(
        "--routes",
        default=",".join(r for r in ROUTES if not r.startswith("bin")),
        help=",".join(ROUTES) + " (bin and binq need --bin)",
    )
    p.add_argument("--build", action="append", default=[], help="NAME=DIR (repeatable)")
    p.add_argument(
        "--only",
        action="append",
        default=[],
        help="NAME=ROUTES@THREADS: the only cells build NAME is run in (repeatable) "
        "(e.g. base=cli,perquery@2,16; a build not named: every cell)",
    )
    p.add_argument("--bin", help="the Rust command line (examples/trec_eval.rs), for bin/binq")
    p.add_argument("--repeat", type=int, default=3, help="processes per cell (median)")
    p.add_argument("--no-pin", dest="pin", action="store_false", help="do not use taskset")
    p.add_argument("--data-dir", default="bench-data")
    p.add_argument("--tmp", default=None, help="where the check outputs go (default: data dir)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--json", help="every number, rewritten after each cell")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--report", metavar="JSON", help="only print the tables of a saved run")
    args = p.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            print(report(json.load(f), args.markdown))
        return
    args.scale = args.scale or ["S"]
    cores = compare.machine()["usable_cores"]
    args.threads = [int(t) for t in args.threads.split(",") if int(t) <= cores]
    routes = [r for r in args.routes.split(",") if r]
    if unknown := set(routes) - set(ROUTES):
        p.error(f"unknown routes {sorted(unknown)}")
    if {"bin", "binq"} & set(routes) and not args.bin:
        p.error("the bin and binq routes need --bin")
    builds = [tuple(b.split("=", 1)) for b in args.build] or [("irmetrics", "")]
    only = {}
    for o in args.only:
        name, _, cells = o.partition("=")
        rs, _, ts = cells.partition("@")
        threads = {int(t) for t in ts.split(",")} if ts else None
        only.setdefault(name, []).append((set(rs.split(",")), threads))

    def wanted(i, b, route, n):
        if route == "cat":
            return i == 0
        if b[0] not in only:
            return True
        return any(route in rs and (ts is None or n in ts) for rs, ts in only[b[0]])

    args.tmp = args.tmp or args.data_dir
    backend = "numpy"
    out = {
        "machine": compare.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "builds": dict(builds),
        "loadavg_start": compare.loadavg(),
        "checks": {},
        "cells": [],
    }

    def save():
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(out, f, indent=1)
            os.replace(tmp, args.json)

    jobs = [
        (*compare.data_paths(args.data_dir, scale, args.seed, backend), *compare.SCALES[scale])
        for scale in args.scale
    ]
    with ProcessPoolExecutor(len(jobs)) as pool:  # the scales' files written side by side
        list(pool.map(generate, jobs, [args.seed] * len(jobs), [backend] * len(jobs)))
    for scale in args.scale:
        qp, rp = compare.data_paths(args.data_dir, scale, args.seed, backend)
        size = qp.stat().st_size + rp.stat().st_size
        if "parquet" in routes:
            write_parquet(qp, rp, builds[0])
        compare.spawn(["cat", str(qp), str(rp)], args.timeout, stdout=os.devnull)  # page cache
        if len(builds) > 1:
            check_builds(scale, builds, qp, rp, args, out)
        for route in routes:
            for n in [1] if route == "cat" else args.threads:
                todo = [b for i, b in enumerate(builds) if wanted(i, b, route, n)]
                walls = {b[0]: [] for b in todo}
                rss = {b[0]: [] for b in todo}
                cpu = {b[0]: [] for b in todo}
                for _ in range(args.repeat):
                    for b in todo:
                        r = run_cell(route, b, n, qp, rp, args)
                        if r["rc"] != 0:  # recorded; the other cells go on
                            failed = f"{b[0]} {route} n={n} at {scale}: {r.get('error')}"
                            out.setdefault("failures", []).append(failed)
                            compare.log("FAILED " + failed)
                            continue
                        walls[b[0]].append(r["wall"])
                        rss[b[0]].append(r["peak_rss"])
                        cpu[b[0]].append(r["cpu"])
                for b in todo:
                    if not walls[b[0]]:
                        continue
                    cell = {
                        "scale": scale,
                        "route": route,
                        "build": "cat" if route == "cat" else b[0],
                        "threads": n,
                        "wall": compare.median(walls[b[0]]),
                        "walls": walls[b[0]],
                        "cpu": compare.median(cpu[b[0]]),
                        "peak_rss": max(rss[b[0]]),
                        "input_bytes": size,
                        "run_bytes": rp.stat().st_size,
                    }
                    out["cells"].append(cell)
                    compare.log(
                        f"{scale} {route:8} {cell['build']:9} n={n:2}: {cell['wall']:.3f} s, "
                        f"{cell['peak_rss'] / compare.MIB:.0f} MiB"
                    )
                save()
    out["loadavg_end"] = compare.loadavg()
    save()
    print(report(out, args.markdown))


def report(out, md):
    m = out["machine"]
    lines = [
        f"{m['cpu']}, {m['usable_cores']} usable cores, {m['ram_gib']} GiB, "
        f"Python {m['python']}; {out['date']}; load {out.get('loadavg_start')} -> "
        f"{out.get('loadavg_end')}"
    ]
    cells = out["cells"]
    threads = sorted({c["threads"] for c in cells if c["route"] != "cat"})
    for scale in dict.fromkeys(c["scale"] for c in cells):
        sc = [c for c in cells if c["scale"] == scale]
        cat = next((c["wall"] for c in sc if c["route"] == "cat"), None)
        run_mib = sc[0]["run_bytes"] / compare.MIB
        lines.append(
            f"\n{scale}: qrels + run {sc[0]['input_bytes'] / compare.MIB:.0f} MiB "
            f"(run {run_mib:.0f} MiB); cat {compare.fmt_s(cat)} s. "
            "Each cell: wall s (x cat) / peak RSS MiB"
        )
        rows = []
        for route, build in dict.fromkeys((c["route"], c["build"]) for c in sc):
            if route == "cat":
                continue
            row = [route, build]
            for n in threads:
                c = next(
                    (c for c in sc if (c["route"], c["build"], c["threads"]) == (route, build, n)),
                    None,
                )
                if c is None:
                    row.append("—")
                    continue
                x = f" ({c['wall'] / cat:.2f}x)" if cat and route in ("cli", "bin", "file") else ""
                row.append(f"{compare.fmt_s(c['wall'])}{x} / {c['peak_rss'] / compare.MIB:.0f}")
            rows.append(row)
        lines.append(
            compare.table(["route", "build"] + [f"{n} threads" for n in threads], rows, md)
        )
        present = {c["build"] for c in sc}
        builds = [b for b in out["builds"] if b in present]
        if len(builds) > 1:
            first, rest = builds[0], builds[1:]
            sp = []
            for c in sc:
                for other in rest:
                    o = next(
                        (
                            o
                            for o in sc
                            if (o["route"], o["build"], o["threads"])
                            == (c["route"], other, c["threads"])
                        ),
                        None,
                    )
                    if c["build"] == first and o:
                        sp.append(
                            [c["route"], other, c["threads"], f"{o['wall'] / c['wall']:.2f}x"]
                        )
            lines.append(
                f"\n{scale}: speed-up of {first} over {', '.join(rest)} (their wall / {first}'s)"
            )
            lines.append(compare.table(["route", "against", "threads", "speed-up"], sp, md))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
