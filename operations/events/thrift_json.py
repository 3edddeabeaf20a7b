"""
Hive's Thrift ``Table`` and ``Partition`` objects read from the metastore rows, serialized as Hive's message factories
serialize them: Thrift's ``TJSONProtocol`` (``JSONMessageFactory.createTableObjJson`` / ``createPartitionObjJson`` in
2.3, ``MessageBuilder.createTableObjJson`` in 3.1 and 4.0, both ``new TSerializer(new TJSONProtocol.Factory())``).

The structures follow ``hive_metastore.thrift`` of each version (field ids and types); a field Hive's ``ObjectStore``
(``convertToTable``, ``convertToPart``, ``convertToStorageDescriptor``) leaves unset is left out, as Thrift does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from catalog_admin.hive.versions import SchemaVersion

__all__ = ("T", "encode_struct", "field")


@dataclass(frozen=True)
class T:
    """A Thrift value with its TJSONProtocol type name: ``str``, ``i32``, ``i64``, ``tf``, ``rec``, ``lst``, ``map``.

    ``element`` names a list's element type (``"str"``, ``"rec"``, ``"lst"``); a map is always ``map<string,string>``
    here (``parameters``), except ``skewedColValueLocationMaps`` which Hive's ObjectStore leaves empty for us."""

    type: str
    value: Any
    element: str = ""


def field(type_: str, value: Any, element: str = "") -> T | None:
    """A field to write, or ``None`` (unset: left out) when ``value`` is ``None``."""
    return None if value is None else T(type_, value, element)


def encode_struct(fields: dict[int, T | None]) -> str:
    """The TJSONProtocol text of a struct (fields by id, in id order, unset ones left out)."""
    return json.dumps(_struct(fields), ensure_ascii=False, separators=(",", ":"))


def _struct(fields: dict[int, T | None]) -> dict[str, Any]:
    return {str(fid): {value.type: _value(value)} for fid, value in sorted(fields.items()) if value is not None}


def _value(value: T) -> Any:
    if value.type == "rec":
        return _struct(value.value)
    if value.type == "tf":
        return 1 if value.value else 0
    if value.type == "lst":
        return [value.element, len(value.value), *(_element(value.element, item) for item in value.value)]
    if value.type == "map":  # map<string,string>, or map<list<string>,string> (element "lst") left empty
        entries = {key: value.value[key] for key in java_hash_order(list(value.value))}
        return [value.element or "str", "str", len(value.value), entries]
    return value.value


def _element(element: str, item: Any) -> Any:
    if element == "rec":
        return _struct(item)
    if element == "lst":
        return ["str", len(item), *item]
    return item


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


def _spread(key: str) -> int:
    h = 0
    for unit in key.encode("utf-16-be").hex(" ", 2).split():  # Java hashes UTF-16 code units
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h ^ (h >> 16)


def at_least(version: SchemaVersion, major: int) -> bool:
    """Whether ``version``'s Thrift objects have the fields added in Hive ``major`` (3: catName, ownerType)."""
    return version.line >= (major, 0)
