"""Short texts for messages."""

from __future__ import annotations

__all__ = ("first_line",)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (its class name when empty), for a one-line message."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
