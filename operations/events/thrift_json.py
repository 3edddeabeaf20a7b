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
        return [value.element or "str", "str", len(value.value), dict(value.value)]
    return value.value


def _element(element: str, item: Any) -> Any:
    if element == "rec":
        return _struct(item)
    if element == "lst":
        return ["str", len(item), *item]
    return item


def at_least(version: SchemaVersion, major: int) -> bool:
    """Whether ``version``'s Thrift objects have the fields added in Hive ``major`` (3: catName, ownerType)."""
    return version.line >= (major, 0)
