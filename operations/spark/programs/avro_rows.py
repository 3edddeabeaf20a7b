"""
Rows in and out of Avro container files with fastavro (spark-avro is not shipped with pyspark), for converting a
table to or from Avro.

The schema written is the one Hive's AvroSerDe derives from a table's columns when the table names none
(``avro.schema.literal``/``url`` unset: ``AvroSerDe.getSchemaFromCols`` → ``TypeInfoToSchema.convert``, apache/hive
serde/src/java/org/apache/hadoop/hive/serde2/avro/TypeInfoToSchema.java): a record ``baseRecord`` with one field per
column, each a union of ``null`` and the column's type with a null default; tinyint/smallint/int as ``int``, decimal as
``bytes`` with the ``decimal`` logical type, date as ``int``/``date``, timestamp as ``long``/``timestamp-millis``,
char/varchar as ``string`` with their logical type and ``maxLength``. Hive reads a file's fields by name, so rows read
from Avro are matched to the table's columns by name (case-insensitively), a missing field read as NULL.

Timestamps are written and read as wall-clock times of this process's time zone (fastavro's naive datetimes), which is
what Hive 2.3's AvroSerializer does with the JVM's (``Timestamp.getTime``).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ("avro_schema", "count_records", "read_rows", "record_of", "write_records")

_PRIMITIVE = {
    "tinyint": "int", "smallint": "int", "int": "int", "integer": "int", "bigint": "long", "float": "float",
    "double": "double", "boolean": "boolean", "string": "string", "binary": "bytes",
}  # fmt: skip
CODEC = "deflate"  # any codec Hive's AvroContainerInputFormat reads; deflate needs nothing beyond zlib


def avro_schema(columns: list[list[str]]) -> dict[str, Any]:
    """The record schema Hive derives from ``columns`` (``[[name, hive type], ...]``, primitive types only)."""
    fields = [{"name": name, "type": ["null", _avro_type(hive_type)], "default": None} for name, hive_type in columns]
    return {"type": "record", "name": "baseRecord", "fields": fields}


def _avro_type(hive_type: str) -> Any:
    kind = hive_type.split("(")[0].strip().lower()
    if kind in _PRIMITIVE:
        return _PRIMITIVE[kind]
    arguments = [int(a) for a in hive_type.partition("(")[2].rstrip(")").split(",") if a.strip()]
    if kind == "decimal":
        precision, scale = (arguments + [10, 0][len(arguments) :])[:2]  # Hive's decimal is decimal(10,0)
        return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    if kind in ("char", "varchar"):
        return {"type": "string", "logicalType": kind, "maxLength": arguments[0]}
    if kind == "date":
        return {"type": "int", "logicalType": "date"}
    if kind == "timestamp":
        return {"type": "long", "logicalType": "timestamp-millis"}
    raise ValueError(f"{hive_type} has no Avro form here (primitive columns only)")


def record_of(names: list[str], values: Iterable[Any]) -> dict[str, Any]:
    """One row as an Avro record of ``names`` (binary as bytes)."""
    pairs = zip(names, values, strict=True)
    return {name: bytes(v) if isinstance(v, bytearray | memoryview) else v for name, v in pairs}


def write_records(sink: Any, columns: list[list[str]], records: Iterable[dict[str, Any]]) -> None:
    """An Avro container file of ``records`` with the table's schema, written to ``sink``."""
    import fastavro

    fastavro.writer(sink, fastavro.parse_schema(avro_schema(columns)), records, codec=CODEC)


def read_rows(data: bytes, names: list[str], *, aware: bool = False) -> Iterator[tuple]:
    """The file's records as tuples of the table's columns, matched by name as Hive does (absent: NULL); timestamps
    as naive wall-clock times of this process's zone (``aware``: as fastavro gives them, in UTC)."""
    import fastavro

    lowered = [n.lower() for n in names]
    convert = (lambda value: value) if aware else _naive
    for record in fastavro.reader(io.BytesIO(data)):
        fields = {key.lower(): value for key, value in record.items()}
        yield tuple(convert(fields.get(name)) for name in lowered)


def count_records(data: bytes) -> int:
    """Records in an Avro container file, from its block headers."""
    import fastavro

    return sum(block.num_records for block in fastavro.block_reader(io.BytesIO(data)))


def _naive(value: Any) -> Any:
    from datetime import datetime

    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone().replace(tzinfo=None)
    return value
