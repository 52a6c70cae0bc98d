"""The ``irmetrics`` command: trec_eval's flags and byte-identical output."""

from __future__ import annotations

import sys

from ._core import cli_main


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``irmetrics`` console script."""
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.flush()
    try:
        return cli_main(list(args), last=argv is None)
    except KeyboardInterrupt:
        print("irmetrics: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
