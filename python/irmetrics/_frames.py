"""What kind of table an object is, where the Python layer must know before the
extension reads it (the extension's own intake decides in ``python/arrow.rs``)."""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


def is_lazy_frame(data: Any) -> bool:
    """A polars LazyFrame: collected before it is read. Known by its type, not by its
    ``columns`` (asking a lazy frame for them makes polars warn)."""
    kind = type(data)
    return kind.__module__.startswith("polars") and kind.__name__ == "LazyFrame"


def is_pandas_frame(data: Any) -> bool:
    """A pandas DataFrame (known by its type: pandas need not be imported to ask)."""
    kind = type(data)
    return kind.__module__.startswith("pandas") and kind.__name__ == "DataFrame"
