"""Run every conformance MANIFEST row through two irmetrics command lines (two Python
interpreters with different builds) and compare stdout, stderr and exit status byte for byte."""

import csv
import shlex
import subprocess
import sys
from pathlib import Path

old_py, new_py, root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
rows = same = 0
diffs = []
for suite in ("trec_eval_suite", "generated", "bad_input"):
    d = root / suite
    with open(d / "MANIFEST.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            args = shlex.split(row["flags"]) + [row["qrels"], row["run"]]
            outs = []
            for py in (old_py, new_py):
                p = subprocess.run([py, "-m", "irmetrics", *args], cwd=d, capture_output=True)
                outs.append((p.returncode, p.stdout, p.stderr))
            rows += 1
            if outs[0][:2] == outs[1][:2]:
                same += 1
            else:
                diffs.append((suite, row["case"], outs[0][0], outs[1][0]))
            if outs[0][2] != outs[1][2]:
                where = f"{suite}/{row['case']}"
                print(f"stderr differs {where}:\n  old {outs[0][2][:200]!r}")
                print(f"  new {outs[1][2][:200]!r}")
print(f"{rows} rows, {same} with identical exit status and stdout")
for d in diffs:
    print("DIFF", d)
