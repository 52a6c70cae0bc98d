"""The ``irmetrics`` command: trec_eval's flags and byte-identical output, and the
subcommands ``fuse``, ``compare``, ``online`` and ``ndeval`` (the Rust side dispatches on
the first argument); ``irmetrics report`` (an HTML page, drawn with matplotlib) is here."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ._core import Error, MeasureError, cli_main, parse_compare_args

REPORT_USAGE = """\
usage: irmetrics report [options] -o FILE QRELS RUN1 [RUN ...]

Write one self-contained HTML page (open it in a browser; nothing is fetched): the
means with significance letters, every pair's test, precision-recall curves,
per-topic difference bars and the per-query values, sortable. The options are
irmetrics compare's (irmetrics compare --help): -m MEASURE (repeatable) [default: AP
and nDCG@10], --test, --correction, --alpha, --baseline, --alternative, --n-resamples,
--seed, -c, -l, -M, -J, --threads; and

  -o, --output FILE  the page (written atomically; - for standard output)
  --title TEXT       the page's title [default: irmetrics report]
  -h, --help         show this help

Needs matplotlib: pip install 'irmetrics[plot]'.
"""


def _report(args: list[str]) -> int:
    """``irmetrics report``: exit status 0, 1 (bad input) or 2 (bad usage)."""
    from .report import html_report

    title, rest, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a in ("--title", "--format") or a.startswith(("--title=", "--format=")):
            name, eq, value = a.partition("=")
            if not eq:
                if i + 1 == len(args):
                    print(f"irmetrics: {name} needs a value", file=sys.stderr)
                    return 2
                i, value = i + 1, args[i + 1]
            if name == "--format":
                print("irmetrics: report writes HTML; --format is compare's", file=sys.stderr)
                return 2
            title = value
        else:
            rest.append(a)
        i += 1
    if any(a in ("-h", "--help") for a in rest):
        print(REPORT_USAGE, end="")
        return 0
    try:
        parsed = parse_compare_args(rest, "report")
    except Error as e:
        print(f"irmetrics: {e}", file=sys.stderr)
        return 2
    output = None if parsed["output"] is None else os.fspath(parsed["output"])
    if output is None:
        print("irmetrics: report needs -o/--output FILE (- for standard output)", file=sys.stderr)
        return 2
    try:
        page = html_report(
            parsed["qrels"],
            dict(parsed["runs"]),
            parsed["measures"],
            path=None if output == "-" else output,
            title=title,
            **parsed["compare"],
            **parsed["options"],
        )
    except Error as e:
        print(f"irmetrics: {e}", file=sys.stderr)
        return 2 if isinstance(e, MeasureError) else 1
    if output == "-":
        sys.stdout.write(page)
    return 0


def main(argv: Sequence[str | bytes | os.PathLike[str] | os.PathLike[bytes]] | None = None) -> int:
    """Entry point of the ``irmetrics`` console script.

    Arguments may be ``str`` or ``bytes``: file names need not be UTF-8 (``sys.argv``
    holds them as surrogate escapes, ``os.fsdecode`` turns bytes into the same form, and
    the command line gets the original bytes back).
    """
    args = [os.fsdecode(a) for a in (sys.argv[1:] if argv is None else argv)]
    sys.stdout.flush()
    try:
        if args[:1] == ["report"]:
            status = _report(args[1:])
            sys.stdout.flush()
            return status
        return cli_main(args, last=argv is None)
    except KeyboardInterrupt:
        print("irmetrics: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `irmetrics report -o - ... | head`: the reader has gone; status 1 without a
        # message, as the Rust commands (Python's advice: standard output pointed at
        # devnull, so that the flush at exit fails no more)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
