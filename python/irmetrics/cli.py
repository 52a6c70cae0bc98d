"""The ``irmetrics`` command: trec_eval's flags and byte-identical output, and
``irmetrics fuse`` (rank fusion; the Rust side dispatches on the first argument)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ._core import cli_main


def main(argv: Sequence[str | bytes | os.PathLike[str] | os.PathLike[bytes]] | None = None) -> int:
    """Entry point of the ``irmetrics`` console script.

    Arguments may be ``str`` or ``bytes``: file names need not be UTF-8 (``sys.argv``
    holds them as surrogate escapes, ``os.fsdecode`` turns bytes into the same form, and
    the command line gets the original bytes back).
    """
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.flush()
    try:
        return cli_main([os.fsdecode(a) for a in args], last=argv is None)
    except KeyboardInterrupt:
        print("irmetrics: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
