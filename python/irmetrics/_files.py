"""Writing a user's output file atomically (the one place on the Python side)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Call ``write`` on a new file beside ``path`` and rename it over ``path`` once
    complete (flushed and fsynced, then the folder fsynced so the rename is durable).
    The file gets mode 0o666 less the umask, as ``open()`` gives (``tempfile.mkstemp``
    would leave it 0o600). On any error the partial file is removed and ``path`` is
    untouched."""
    folder, base = os.path.split(os.path.abspath(os.fspath(path)))
    tmp = os.path.join(folder, f".{base}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(folder, base))
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
