"""
Hive's Thrift ``Table`` and ``Partition`` objects read from the metastore rows, serialized as Hive's message factories
serialize them: Thrift's ``TJSONProtocol`` (``JSONMessageFactory.createTableObjJson`` / ``createPartitionObjJson`` in
2.3, ``MessageBuilder.createTableObjJson`` in 3.1 and 4.0, both ``new TSerializer(new TJSONProtocol.Factory())``).

The structures follow ``hive_metastore.thrift`` of each version (field ids and types); a field Hive's ``ObjectStore``
(``convertToTable``, ``convertToPart``, ``convertToStorageDescriptor``) leaves unset is left out, as Thrift does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = ("T", "encode_fields", "encode_string", "encode_struct", "field", "java_hash_order")


@dataclass(frozen=True)
class T:
    """A Thrift value with its TJSONProtocol type name: ``str``, ``i32``, ``i64``, ``tf``, ``rec``, ``lst``, ``map``.

    ``element`` names a list's element type (``"str"``, ``"rec"``, ``"lst"``) or a map's key type (``"str"``, or
    ``"lst"`` for ``skewedColValueLocationMaps``, always empty here). ``raw``: ``value`` is already encoded text (a
    fragment many objects share, such as a column list, encoded once)."""

    type: str
    value: Any
    element: str = ""
    raw: bool = False


def field(type_: str, value: Any, element: str = "") -> T | None:
    """A field to write, or ``None`` (unset: left out) when ``value`` is ``None``."""
    return None if value is None else T(type_, value, element)


def encode_struct(fields: dict[int, T | None]) -> str:
    """The TJSONProtocol text of a struct (fields by id, in id order, unset ones left out)."""
    return "{" + encode_fields(fields) + "}"


def encode_fields(fields: dict[int, T | None]) -> str:
    """A struct's fields without the braces around them (to be joined with fields encoded elsewhere)."""
    parts = (f'"{fid}":{{"{value.type}":{encode_value(value)}}}' for fid, value in sorted(fields.items()) if value)
    return ",".join(parts)


def encode_value(value: T) -> str:
    """The TJSONProtocol text of one value (without its type wrapper)."""
    if value.raw:
        return value.value
    if value.type == "rec":
        return encode_struct(value.value)
    if value.type == "tf":
        return "1" if value.value else "0"
    if value.type == "str":
        return _string(value.value)
    if value.type == "lst":
        items = [_element(value.element, item) for item in value.value]
        return "[" + ",".join([_string(value.element), str(len(items)), *items]) + "]"
    if value.type == "map":
        keys = java_hash_order(list(value.value))
        entries = ",".join(f"{_string(k)}:{_string(value.value[k])}" for k in keys)
        return f'[{_string(value.element or "str")},"str",{len(keys)},{{{entries}}}]'
    return str(int(value.value))


def _element(element: str, item: Any) -> str:
    if element == "rec":
        return encode_struct(item)
    if element == "lst":
        return "[" + ",".join(['"str"', str(len(item)), *(_string(i) for i in item)]) + "]"
    return _string(item)


def encode_string(text: str) -> str:
    """A JSON string literal: ``json.dumps(text, ensure_ascii=False)`` without its per-call set-up."""
    return encode_basestring(text)


_string = encode_string


def java_hash_order(keys: list[str]) -> list[str]:
    """``keys`` in the order a Java ``HashMap`` copied from a map of them iterates (``ObjectStore.convertMap`` is
    ``Maps.newHashMap(dnMap)``; Thrift writes a map in its iteration order): by bucket of ``String.hashCode`` spread
    (``h ^ h >>> 16``) over a capacity of ``tableSizeFor(size / 0.75 + 1)``; keys sharing a bucket by their spread
    hash (their order in the source map, which Hive does not fix either)."""
    capacity = 1
    while capacity < int(len(keys) / 0.75 + 1):
        capacity *= 2
    spread = {key: _spread(key) for key in keys}
    return sorted(keys, key=lambda k: (spread[k] & (capacity - 1), spread[k]))


@functools.lru_cache(maxsize=4096)
def _spread(key: str) -> int:
    h = 0
    for unit in key.encode("utf-16-be").hex(" ", 2).split():  # Java hashes UTF-16 code units
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h ^ (h >> 16)
