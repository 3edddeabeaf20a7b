"""Keyset pagination: opaque cursors over an ordered, unique sort key."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db.models import Q, QuerySet

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("Page", "decode_cursor", "encode_cursor", "keyset_ordered", "keyset_page", "page_size")

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of results and the cursor of the next page ('' on the last page)."""

    items: list[T]
    next_cursor: str = ""

    @property
    def has_next(self) -> bool:
        return bool(self.next_cursor)


def encode_cursor(values: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(values, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, *, types: tuple[type, ...]) -> list[Any] | None:
    """The key values (of ``types``, in order) after which the page starts; None for the first page.

    Raises ApplicationError on a malformed cursor, including one whose values have the wrong types.
    """
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        values = None
    if (
        not isinstance(values, list)
        or len(values) != len(types)
        or not all(_has_type(v, t) for v, t in zip(values, types, strict=False))
    ):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            "The cursor is malformed; start again from the first page.",
            {"parameter": "cursor"},
        )
    return values


def page_size(raw: str | int | None) -> int:
    """A client-supplied page size, validated against the configured maximum (None: the default; an empty value is
    not an integer, as the API's schema says)."""
    if raw is None:
        return settings.CATALOG_PAGE_SIZE
    try:
        size = int(raw)
    except (TypeError, ValueError):
        size = 0
    if not 1 <= size <= settings.CATALOG_MAX_PAGE_SIZE:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"page_size must be an integer between 1 and {settings.CATALOG_MAX_PAGE_SIZE}, not '{raw}'.",
            {"parameter": "page_size"},
        )
    return size


def keyset_page(
    qs: QuerySet,
    *,
    keys: tuple[str, ...],
    types: tuple[type, ...],
    cursor: str,
    size: int,
    descending: bool = False,
    fields: tuple[str, ...] = (),
) -> Page:
    """
    One page of ``qs`` in the order of ``keys`` (a unique key; ``types`` are their cursor types), starting after
    ``cursor``; the rows are model instances, or dicts of ``fields`` when given (``.values(*fields)``).
    """
    after = decode_cursor(cursor, types=types)
    if after is not None:
        qs = qs.filter(_after(keys, after, descending))
    qs = qs.order_by(*(f"-{k}" if descending else k for k in keys))
    if fields:
        qs = qs.values(*fields)
    rows = list(qs[: size + 1])
    next_cursor = encode_cursor([_value(rows[size - 1], k) for k in keys]) if len(rows) > size else ""
    return Page(items=rows[:size], next_cursor=next_cursor)


def keyset_ordered(qs: QuerySet, *, keys: tuple[str, ...], types: tuple[type, ...], cursor: str) -> QuerySet:
    """``qs`` in the order of ``keys`` from just after ``cursor``: for a caller that streams rather than pages."""
    after = decode_cursor(cursor, types=types)
    if after is not None:
        qs = qs.filter(_after(keys, after, False))
    return qs.order_by(*keys)


def _after(keys: tuple[str, ...], values: list[Any], descending: bool) -> Q:
    """Rows strictly after ``values`` in the (lexicographic) order of ``keys``."""
    op = "lt" if descending else "gt"
    condition = Q()
    for i in range(len(keys)):
        condition |= Q(**{keys[j]: values[j] for j in range(i)}) & Q(**{f"{keys[i]}__{op}": values[i]})
    return condition


def _value(row: Any, key: str) -> Any:
    return row[key] if isinstance(row, dict) else getattr(row, key)


def _has_type(value: Any, expected: type) -> bool:
    return isinstance(value, expected) and not (expected is int and isinstance(value, bool))
