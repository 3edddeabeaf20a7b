"""
LazySimpleSerDe's complex values (array, map, struct, nested) parsed from their text as Hive reads them, for
converting text and SequenceFile tables with complex columns.

Separators (``LazySerDeParameters``, apache/hive serde/src/java/org/apache/hadoop/hive/serde2/lazy/): level 0 is the
field separator; a column's value uses level 1 (``collection.delim``, default ^B) between array elements, map
entries and struct fields, level 2 (``mapkey.delim``, default ^C) between a map's key and value, and each nesting
goes one level deeper (^D, ^E, … up to ^H by default). An array's or map's elements sit one level below it, a map's
values two. ``serialization.null.format`` (``\\N``) is NULL at any depth; an empty array or map is empty
(``LazyArray``/``LazyMap`` with no bytes). Primitive values Hive cannot parse are NULL (``LazyInteger`` and friends).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from catalog_admin.hive.text_format import get_byte

__all__ = ("complex_parser", "is_complex", "separators", "type_tree")

_TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?$")


def is_complex(hive_type: str) -> bool:
    return hive_type.strip().lower().startswith(("array", "map", "struct", "uniontype"))


def separators(serde: dict[str, str], field: str) -> list[str]:
    """The separators by nesting level: the field's, collection.delim, mapkey.delim, then ^D to ^H."""
    collection = serde.get("collection.delim") or serde.get("colelction.delim")  # Hive 2's misspelt key
    return [field, get_byte(collection, "\x02"), get_byte(serde.get("mapkey.delim"), "\x03"), *map(chr, range(4, 9))]


def complex_parser(hive_type: str, serde: dict[str, str], field: str):  # noqa: ANN201 - a function str -> value
    """A function from a column's text to its value (lists, dicts, tuples for structs), as Hive reads it."""
    levels = separators(serde, field)
    null = serde.get("serialization.null.format", "\\N")
    kind = type_tree(hive_type)
    return lambda text: None if text is None else _parse(text, kind, 1, levels, null)


def _parse(text: str, kind: Any, level: int, levels: list[str], null: str) -> Any:
    if text == null:
        return None
    if isinstance(kind, str):
        return _primitive(text, kind)
    tag = kind[0]
    if tag == "array":
        return [] if text == "" else [_parse(p, kind[1], level + 1, levels, null) for p in text.split(levels[level])]
    if tag == "map":
        entries = {}
        for entry in [] if text == "" else text.split(levels[level]):
            key, _, value = entry.partition(levels[level + 1])
            entries[_parse(key, kind[1], level + 2, levels, null)] = _parse(value, kind[2], level + 2, levels, null)
        return entries
    parts = text.split(levels[level])
    parts += [null] * (len(kind[1]) - len(parts))  # missing trailing fields are NULL
    fields = zip(parts, kind[1], strict=False)  # extra trailing parts are ignored, as Hive ignores them
    return tuple(_parse(p, field_kind, level + 1, levels, null) for p, (_n, field_kind) in fields)


def _primitive(text: str, kind: str) -> Any:
    name = kind.split("(")[0]
    try:
        if name in ("tinyint", "smallint", "int", "integer", "bigint"):
            return int(text.strip())
        if name in ("float", "double"):
            return float(text)
        if name == "boolean":
            lowered = text.lower()
            return True if lowered == "true" else False if lowered == "false" else None
        if name == "decimal":
            return Decimal(text.strip())
        if name == "date":
            return date.fromisoformat(text.strip())
        if name == "timestamp":
            return _timestamp(text.strip())
    except (ValueError, InvalidOperation):
        return None
    return text  # string, char, varchar, binary as text


def _timestamp(text: str) -> datetime | None:
    found = _TIMESTAMP.match(text)
    if not found:
        return None
    *parts, fraction = found.groups()
    micros = int((fraction or "0").ljust(9, "0")[:6])
    return datetime(*(int(p) for p in parts), micros)  # type: ignore[misc]  # noqa: DTZ001 - Hive's local wall clock


def type_tree(hive_type: str) -> Any:
    """``array<int>`` → ("array", "int"); ``map<string,int>`` → ("map", "string", "int"); ``struct<a:int>`` →
    ("struct", [("a", "int")]); primitives lower-cased as they are."""
    text = hive_type.strip()
    lowered = text.lower()
    for tag in ("array", "map", "struct"):
        if lowered.startswith(tag + "<") and lowered.endswith(">"):
            inner = _split_top(text[len(tag) + 1 : -1])
            if tag == "array":
                return ("array", type_tree(inner[0]))
            if tag == "map":
                return ("map", type_tree(inner[0]), type_tree(inner[1]))
            fields = [part.split(":", 1) for part in inner]
            return ("struct", [(name.strip(), type_tree(kind)) for name, kind in fields])
    return lowered


def _split_top(text: str) -> list[str]:
    """``text`` split on the commas outside any ``<…>`` or ``(…)``."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]
