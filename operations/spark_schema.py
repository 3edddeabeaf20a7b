"""
Spark's own copy of a table's schema in TABLE_PARAMS (``spark.sql.sources.schema`` or its
``.numParts``/``.part.N`` split form), kept in step when the console changes columns.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = (
    "SCHEMA_KEY",
    "hive_to_spark_type",
    "rename_spark_bucket_sort_columns",
    "rewrite_spark_schema",
    "spark_schema_keys",
)

SCHEMA_KEY = "spark.sql.sources.schema"
PART_SIZE = 4000  # Spark's default spark.sql.sources.schemaStringLengthThreshold
_PRIMITIVES = {
    "tinyint": "byte",
    "smallint": "short",
    "int": "integer",
    "integer": "integer",
    "bigint": "long",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
}


def spark_schema_keys(params: dict[str, str | None]) -> list[str]:
    """The TABLE_PARAMS keys holding Spark's schema, in order."""
    if SCHEMA_KEY in params:
        return [SCHEMA_KEY]
    parts = int(params.get(f"{SCHEMA_KEY}.numParts") or 0)
    return [f"{SCHEMA_KEY}.numParts", *(f"{SCHEMA_KEY}.part.{i}" for i in range(parts))] if parts else []


def read_spark_schema(params: dict[str, str | None]) -> dict[str, Any] | None:
    keys = spark_schema_keys(params)
    if not keys:
        return None
    text = params[SCHEMA_KEY] if keys == [SCHEMA_KEY] else "".join(params[k] or "" for k in keys[1:])
    return json.loads(text or "null")


def rewrite_spark_schema(
    params: dict[str, str | None],
    columns: list[tuple[str, str, str | None]],
    partition_columns: list[str],
    renamed: dict[str, str] | None = None,
) -> dict[str, str] | None:
    """New values of Spark's schema keys for the data ``columns`` (Hive types), keeping partition fields.

    Returns None when the table carries no Spark schema. Fields that survive keep their metadata.
    """
    schema = read_spark_schema(params)
    if schema is None:
        return None
    renamed = renamed or {}
    by_name = {field["name"].lower(): field for field in schema.get("fields", [])}
    fields = []
    for name, hive_type, comment in columns:
        previous = by_name.get(name.lower()) or by_name.get(_old_name(renamed, name).lower()) or {}
        metadata = dict(previous.get("metadata", {}))
        spark_type, type_metadata = hive_to_spark_type(hive_type)
        metadata.pop("__CHAR_VARCHAR_TYPE_STRING", None)
        metadata.update(type_metadata)
        if comment is not None:
            metadata["comment"] = comment
        fields.append(
            {
                "name": previous.get("name", name) if name.lower() == previous.get("name", "").lower() else name,
                "type": spark_type,
                "nullable": True,
                "metadata": metadata,
            }
        )
    fields += [by_name[p.lower()] for p in partition_columns if p.lower() in by_name]
    text = json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))
    if spark_schema_keys(params) == [SCHEMA_KEY]:
        return {SCHEMA_KEY: text}
    chunks = [text[i : i + PART_SIZE] for i in range(0, len(text), PART_SIZE)]
    return {f"{SCHEMA_KEY}.numParts": str(len(chunks)), **{f"{SCHEMA_KEY}.part.{i}": c for i, c in enumerate(chunks)}}


# Spark's bucketing and sort columns of a data-source table (HiveExternalCatalog.tableMetaToTableProps:
# ``spark.sql.sources.schema.numBucketCols`` and ``bucketCol.N``, ``numSortCols`` and ``sortCol.N``).
_LISTED_COLUMN_KEY = re.compile(rf"{re.escape(SCHEMA_KEY)}\.(bucketCol|sortCol)\.\d+")


def rename_spark_bucket_sort_columns(params: dict[str, str | None], old: str, new: str) -> dict[str, str]:
    """New values of Spark's ``bucketCol.N`` / ``sortCol.N`` keys naming ``old`` (compared ignoring case, as Spark
    resolves them against the schema): Spark refuses to read a table whose bucketing or sort column is not one of
    its columns."""
    return {
        key: new
        for key, value in params.items()
        if _LISTED_COLUMN_KEY.fullmatch(key) and value is not None and value.lower() == old.lower()
    }


def hive_to_spark_type(hive_type: str) -> tuple[Any, dict[str, str]]:
    """A Hive type string as Spark's JSON data type, plus field metadata (char/varchar keep their length there)."""
    text = hive_type.strip().lower()
    match = re.fullmatch(r"(var)?char\(\s*\d+\s*\)", text)
    if match:
        return "string", {"__CHAR_VARCHAR_TYPE_STRING": text.replace(" ", "")}
    return _spark_type(_Reader(text)), {}


def _old_name(renamed: dict[str, str], new_name: str) -> str:
    return next((old for old, new in renamed.items() if new == new_name), new_name)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text.replace(" ", "") if not text.startswith("timestamp") else text
        self.i = 0

    def word(self) -> str:
        match = re.compile(r"[a-z_][a-z0-9_]*").match(self.text, self.i)
        if not match:
            raise ValueError(f"Cannot read a type at {self.text[self.i :]!r}")
        self.i = match.end()
        return match.group()

    def expect(self, char: str) -> None:
        if self.text[self.i : self.i + 1] != char:
            raise ValueError(f"Expected {char!r} in type {self.text!r}")
        self.i += 1

    def peek(self) -> str:
        return self.text[self.i : self.i + 1]


def _spark_type(reader: _Reader) -> Any:
    if reader.text.startswith("timestamp with local time zone"):
        return "timestamp"
    name = reader.word()
    if name in _PRIMITIVES:
        return _PRIMITIVES[name]
    if name in ("decimal", "numeric"):
        if reader.peek() == "(":
            start = reader.i
            reader.i = reader.text.index(")", start) + 1
            return "decimal" + reader.text[start : reader.i]
        return "decimal(10,0)"
    if name == "array":
        reader.expect("<")
        element = _spark_type(reader)
        reader.expect(">")
        return {"type": "array", "elementType": element, "containsNull": True}
    if name == "map":
        reader.expect("<")
        key = _spark_type(reader)
        reader.expect(",")
        value = _spark_type(reader)
        reader.expect(">")
        return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": True}
    if name == "struct":
        reader.expect("<")
        fields = []
        while reader.peek() != ">":
            field_name = reader.word()
            reader.expect(":")
            fields.append({"name": field_name, "type": _spark_type(reader), "nullable": True, "metadata": {}})
            if reader.peek() == ",":
                reader.expect(",")
        reader.expect(">")
        return {"type": "struct", "fields": fields}
    raise ValueError(f"Spark has no equivalent of Hive type {reader.text!r}")
