"""``progress=True``: the bar the Rust glue drives (``heavy_progress`` in
``src/python/mod.rs`` calls it as ``bar(done, total)`` on the calling thread about ten
times a second while the work runs, once more at the end, then ``bar.close()``).

The bar appears only once the work has run ``IRMETRICS_PROGRESS_DELAY`` seconds (2 by
default), so short work shows nothing; it is tqdm's (``tqdm.auto``: a widget in
notebooks) when tqdm is installed, else one line on ``sys.stderr``.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _delay() -> float:
    try:
        d = float(os.environ.get("IRMETRICS_PROGRESS_DELAY", "2"))
    except ValueError:
        return 2.0
    return d if d >= 0 else 2.0


class _Line:
    """A bar without tqdm: ``irmetrics [#####-----]  50% 5/10`` on stderr."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.n = 0

    def refresh(self) -> None:
        frac = self.n / self.total if self.total else 0.0
        filled = min(30, int(frac * 30))
        bar = "#" * filled + "-" * (30 - filled)
        sys.stderr.write(f"\rirmetrics [{bar}] {frac * 100:3.0f}% {self.n}/{self.total}")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()


class Bar:
    """The callback of ``progress=True``."""

    def __init__(self) -> None:
        self._start = time.monotonic()
        self._delay = _delay()
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            if time.monotonic() - self._start < self._delay:
                return
            try:
                from tqdm.auto import tqdm
            except ImportError:
                self._bar = _Line(total)
            else:
                self._bar = tqdm(total=total, desc="irmetrics", unit="it")
        # the total may grow as the work's phases start
        self._bar.total = total
        self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
