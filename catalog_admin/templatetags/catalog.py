"""
Template filters of the browsing pages: Hive times, byte sizes, state codes and version-safe field access; the
``page_slot`` tag that renders what other apps add to the pages (``catalog_admin.extensions``).

Hive stores most times as epoch seconds (``CREATE_TIME``, ``LAST_ANALYZED``) and the ACID tables as
epoch milliseconds (``TXN_STARTED``, ``HL_ACQUIRED_AT``, ``CC_START``); 0 means "never" or "unknown".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django import template
from django.db import models
from django.utils.safestring import SafeString, mark_safe

from catalog_admin.extensions import slot_contents

__all__ = (
    "compaction_state",
    "compaction_type",
    "epoch",
    "epoch_ms",
    "grouped",
    "has_field",
    "humanize_bytes",
    "loaded",
    "lock_state",
    "lock_type",
    "lookup",
    "natural_order",
    "page_slot",
    "partition_size",
    "table_type",
    "txn_state",
)

register = template.Library()

EMPTY = "—"
_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"

# Single-letter codes of Hive's TxnStore / TxnHandler.
_TXN_STATES = {"o": "open", "a": "aborted", "c": "committed"}
_LOCK_STATES = {"a": "acquired", "w": "waiting"}
_LOCK_TYPES = {"e": "exclusive", "x": "excl. write", "r": "shared read", "w": "shared write"}
_COMPACTION_STATES = {
    "i": "initiated",
    "w": "working",
    "r": "ready for cleaning",
    "c": "cleaning",
    "f": "failed",
    "s": "succeeded",
    "a": "did not initiate",
    "x": "refused",
}
_COMPACTION_TYPES = {"a": "major", "i": "minor", "*": "rebalance"}
_TABLE_TYPES = {
    "MANAGED_TABLE": "managed",
    "EXTERNAL_TABLE": "external",
    "VIRTUAL_VIEW": "view",
    "MATERIALIZED_VIEW": "materialized view",
}


@register.filter
def epoch(value: Any) -> str:
    """Epoch seconds as a UTC timestamp; 0 or missing as a dash."""
    return _format_epoch(value, 1)


@register.filter
def epoch_ms(value: Any) -> str:
    """Epoch milliseconds as a UTC timestamp; 0 or missing as a dash."""
    return _format_epoch(value, 1000)


@register.filter
def humanize_bytes(value: Any) -> str:
    """A byte count in binary units (``1.5 GiB``); missing or malformed as a dash."""
    try:
        size = float(value)
    except (TypeError, ValueError):
        return EMPTY
    if size < 0:
        return EMPTY
    for unit in _BYTE_UNITS:
        if size < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return EMPTY  # pragma: no cover - the loop always returns


@register.filter
def grouped(value: Any) -> str:
    """A count with its thousands grouped (``29,993``); a float keeps one decimal; missing or malformed as a dash.
    The one number format of the pages."""
    if value is None or value == "" or isinstance(value, bool):
        return EMPTY
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{int(number):,}" if number.is_integer() else f"{number:,.1f}"


@register.filter
def partition_size(row: Any) -> str:
    """A partition's size (``humanize_bytes``), or ``dropped`` when its directory is gone (missing on disk): its
    metastore figure (often 0 B) would read as a real size beside the others."""
    if getattr(row, "exists_on_disk", None) is False:
        return "dropped"
    return humanize_bytes(getattr(row, "total_size", None))


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(text: str) -> tuple[Any, ...]:
    """``dt=2`` before ``dt=10``: digit runs compare as numbers, the rest as text."""
    parts = _DIGITS.split(text)
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts))


@register.filter
def natural_order(items: Iterable[Any], attribute: str = "name") -> list[Any]:
    """``items`` in natural order of their ``attribute`` (a key of a dict, or an attribute): ``dt=2`` before
    ``dt=10``. The one order of partition lists."""

    def name(item: Any) -> str:
        value = item.get(attribute) if isinstance(item, dict) else getattr(item, attribute, "")
        return str(value or "")

    return sorted(items or (), key=lambda item: natural_key(name(item)))


@register.filter
def loaded(obj: models.Model | None, name: str) -> Any:
    """
    The value of field ``name`` if the query loaded it, else None.

    Selectors defer the columns the metastore's schema version lacks (``.on(metastore)``); reading a
    deferred field would issue a query for a column that does not exist, so templates go through here.
    """
    if obj is None or name in obj.get_deferred_fields():
        return None
    return getattr(obj, name)


@register.filter
def has_field(obj: models.Model | None, name: str) -> bool:
    """Whether the query loaded field ``name`` (it exists in this metastore's schema version)."""
    return obj is not None and name not in obj.get_deferred_fields()


@register.filter
def lookup(mapping: Any, key: Any) -> Any:
    """``mapping[key]`` for a key held in a variable; None when absent or not a mapping."""
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def table_type(value: str | None) -> str:
    return _TABLE_TYPES.get(value or "", (value or EMPTY).lower())


@register.filter
def txn_state(value: str | None) -> str:
    return _label(_TXN_STATES, value)


@register.filter
def lock_state(value: str | None) -> str:
    return _label(_LOCK_STATES, value)


@register.filter
def lock_type(value: str | None) -> str:
    return _label(_LOCK_TYPES, value)


@register.filter
def compaction_state(value: str | None) -> str:
    return _label(_COMPACTION_STATES, value)


@register.filter
def compaction_type(value: str | None) -> str:
    return _label(_COMPACTION_TYPES, value)


def _format_epoch(value: Any, per_second: int) -> str:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return EMPTY
    if number <= 0:
        return EMPTY
    try:
        moment = datetime.fromtimestamp(number / per_second, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return str(value)
    return moment.strftime(_TIME_FORMAT)


def _label(labels: dict[str, str], value: str | None) -> str:
    if not value:
        return EMPTY
    return labels.get(value.lower(), value)


@register.simple_tag(takes_context=True)
def page_slot(context: template.Context, slot: str, **arguments: Any) -> SafeString:
    """Everything registered for ``slot``, each template rendered with the page's context plus its own."""
    parts = []
    for content in slot_contents(slot):
        rendered = context.template.engine.get_template(content.template_name)
        with context.push(**content.context(context, **arguments)):
            parts.append(rendered.render(context))
    return mark_safe("".join(parts))  # the parts are rendered templates, escaped by the engine
