"""Lists of ids or names in chunks small enough for one ``IN (…)`` on every database."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ("CHUNK", "chunks")

CHUNK = 5000


def chunks(ids: list[int]) -> Iterator[list[int]]:
    """``ids`` in consecutive chunks of at most CHUNK."""
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]
