"""Writing a user's output file: rendered in memory, then written atomically by the
extension's one writer (``trec::write_atomically``, as ``Run.to_file`` and the command
line write): a temporary file beside ``path`` renamed over it once complete, a link
followed, an existing file's mode kept (a new one 0o666 less the umask), a device
written through; any error a :class:`irmetrics.FileError` ("cannot write ...") that
leaves ``path`` as it was."""

from __future__ import annotations

import io
import os

from . import _core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Write what ``write`` writes to a binary file object to ``path``, atomically."""
    buf = io.BytesIO()
    write(buf)
    _core._write_file(os.fspath(path), buf.getvalue())
