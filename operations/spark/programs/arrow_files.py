"""
Data files read and written with pyarrow (Parquet, ORC) and fastavro (Avro) through the console's filesystem layer,
on a Spark executor or without Spark: no Hadoop filesystem is needed, so ``s3a://`` works on any Spark.

Files are read with the table's columns (``[[name, hive type], ...]``), as Hive reads them: Parquet and Avro fields by
name (case-insensitively), ORC by name, or by position when the file's columns are Hive's ``_col0``, ``_col1``, …; a
missing column is NULL. Timestamps are instants in UTC inside (Parquet's INT96 and ORC's timestamps are UTC wall
clocks), written as Hive writes them: Parquet in Hive's layout (INT96 timestamps, decimals as fixed-length binary),
ORC with the UTC wall clock, Avro through ``avro_rows`` (Hive's schema for the columns).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import Any

from catalog_admin.locations import filesystem_for
from operations.spark.programs.avro_rows import CODEC, avro_schema, count_records, read_rows, record_of
from operations.spark.programs.lazy_text import type_tree

__all__ = (
    "SUFFIXES", "FileWriter", "PrecisionLost", "arrow_schema", "arrow_type", "conform", "file_rows", "read_table",
)  # fmt: skip

SUFFIXES = {"parquet": ".parquet", "orc": ".orc", "avro": ".avro", "text": ""}
HIVE_POSITIONAL = re.compile(r"_col\d+")
_PRIMITIVE = {
    "tinyint": "int8", "smallint": "int16", "int": "int32", "integer": "int32", "bigint": "int64",
    "float": "float32", "double": "float64", "boolean": "bool_", "binary": "binary", "date": "date32",
}  # fmt: skip


def arrow_type(hive_type: str) -> Any:
    """The Arrow type of a Hive column type (timestamps as UTC instants in nanoseconds)."""
    return _arrow(type_tree(hive_type))


def _arrow(kind: Any) -> Any:
    import pyarrow as pa

    if isinstance(kind, tuple):
        if kind[0] == "array":
            return pa.list_(_arrow(kind[1]))
        if kind[0] == "map":
            return pa.map_(_arrow(kind[1]), _arrow(kind[2]))
        return pa.struct([(name, _arrow(child)) for name, child in kind[1]])
    name = kind.split("(")[0].strip()
    if name in _PRIMITIVE:
        return getattr(pa, _PRIMITIVE[name])()
    if name == "decimal":
        arguments = [int(a) for a in kind.partition("(")[2].rstrip(")").split(",") if a.strip()]
        precision, scale = (arguments + [10, 0][len(arguments) :])[:2]  # Hive's decimal is decimal(10,0)
        return pa.decimal128(precision, scale)
    if name == "timestamp":
        return pa.timestamp("ns", "UTC")
    return pa.string()  # string, char(n), varchar(n)


def arrow_schema(columns: list[list[str]]) -> Any:
    import pyarrow as pa

    return pa.schema([(name, arrow_type(hive_type)) for name, hive_type in columns])


def conform(table: Any, schema: Any, *, positional: bool = False) -> Any:
    """``table`` as the table's columns: matched by name (case-insensitively) or position, missing ones NULL, each
    cast to its type (a naive timestamp read as UTC)."""
    import pyarrow as pa

    by_name = {name.lower(): index for index, name in enumerate(table.column_names)}
    arrays = []
    for position, field in enumerate(schema):
        index = position if positional and position < table.num_columns else by_name.get(field.name.lower())
        if index is None:
            arrays.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(index)
        if pa.types.is_timestamp(column.type) and column.type.tz is None:
            column = column.cast(pa.timestamp(column.type.unit, "UTC"))
        arrays.append(column.cast(field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def read_table(options: dict, file_format: str, path: str, columns: list[list[str]]) -> Any:
    """One Parquet, ORC or Avro file as the table's columns."""
    import pyarrow as pa

    schema = arrow_schema(columns)
    with filesystem_for(path, options=options).open(path, "rb") as handle:
        data = handle.read()
    if file_format == "avro":
        names = [name for name, _type in columns]
        rows = list(read_rows(data, names, aware=True))
        return pa.table([pa.array([row[i] for row in rows], f.type) for i, f in enumerate(schema)], schema=schema)
    if file_format == "orc":
        from pyarrow import orc

        table = orc.ORCFile(pa.BufferReader(data)).read()
        positional = bool(table.column_names) and all(HIVE_POSITIONAL.fullmatch(n) for n in table.column_names)
        return conform(table, schema, positional=positional)
    from pyarrow import parquet

    return conform(parquet.read_table(pa.BufferReader(data)), schema)


def file_rows(options: dict, file_format: str, path: str) -> int:
    """Rows in one file: Parquet/ORC footers, Avro block headers, text lines (a last one without newline counted)."""
    with filesystem_for(path, options=options).open(path, "rb") as handle:
        if file_format == "parquet":
            from pyarrow import parquet

            return parquet.ParquetFile(handle).metadata.num_rows
        if file_format == "orc":
            from pyarrow import orc

            return orc.ORCFile(handle).nrows
        data = handle.read()
    if file_format == "avro":
        return count_records(data)
    if file_format == "sequencefile":
        from catalog_admin.hive.sequence_file import values

        return sum(1 for _ in values(io.BytesIO(data)))
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# The finest timestamp unit each written format keeps (Hive's layouts: Parquet INT96 and ORC keep nanoseconds; Hive's
# Avro schema is timestamp-millis).
TIMESTAMP_UNITS = {"avro": "ms"}


class PrecisionLost(ValueError):
    """A value the target format cannot hold exactly (a timestamp finer than its unit): nothing is written."""


def refuse_lost_precision(table: Any, file_format: str) -> None:
    """Refuse, naming the column and a sample value, a timestamp the format would truncate (its values compared to
    the nanosecond: a safe cast to the format's unit fails exactly when one has finer digits)."""
    import pyarrow as pa

    unit = TIMESTAMP_UNITS.get(file_format)
    if unit is None:
        return
    for name, column in zip(table.column_names, table.columns, strict=True):
        if not pa.types.is_timestamp(column.type):
            continue
        try:
            column.cast(pa.timestamp(unit, column.type.tz))
        except pa.ArrowInvalid:
            raise PrecisionLost(
                f"Column {name} holds {_finest(column, unit)}: {file_format} keeps timestamps to the "
                f"{_UNIT_NAMES[unit]} only, so the rewrite would change it; nothing is swapped."
            ) from None


_UNIT_NAMES = {"ms": "millisecond", "us": "microsecond"}
_PER_SECOND = {"ms": 1000, "us": 1000_000, "ns": 1000_000_000}


def _finest(column: Any, unit: str) -> str:
    """The first value of ``column`` with digits finer than ``unit``, written to the nanosecond (UTC)."""
    from datetime import UTC, datetime

    import pyarrow as pa

    per_second = _PER_SECOND[column.type.unit]
    step = per_second // _PER_SECOND[unit]
    value = next(v for v in column.cast(pa.int64()).to_pylist() if v is not None and v % step)
    seconds, fraction = divmod(value, per_second)
    digits = len(str(per_second)) - 1
    return f"{datetime.fromtimestamp(seconds, UTC):%Y-%m-%d %H:%M:%S}.{fraction:0{digits}d}"


class FileWriter:
    """One output file of the table's columns in ``file_format``, written as tables arrive, then closed."""

    def __init__(self, options: dict, file_format: str, path: str, columns: list[list[str]]) -> None:
        self.file_format, self.path, self.columns = file_format, path, columns
        self.schema = arrow_schema(columns)
        self.sink = filesystem_for(path, options=options).open(path, "wb")
        self.writer: Any = None
        self.rows = 0

    def write(self, table: Any) -> None:
        table = conform(table, self.schema)
        refuse_lost_precision(table, self.file_format)
        if self.file_format == "avro":
            writer = self._avro()
            for record in _records(self.columns, table):
                writer.write(record)
        elif self.file_format == "orc":
            self._orc().write(_wall_clock(table))
        else:
            self._parquet().write_table(table)
        self.rows += table.num_rows

    def close(self) -> None:
        """Finish the file (an empty table's file holds its schema); the sink closed either way."""
        try:
            if self.writer is None:
                self.write(self.schema.empty_table())
            if self.file_format == "avro":
                self.writer.flush()
            else:
                self.writer.close()
        finally:
            self.sink.close()

    def _parquet(self) -> Any:
        if self.writer is None:
            from pyarrow import parquet

            self.writer = parquet.ParquetWriter(self.sink, self.schema, use_deprecated_int96_timestamps=True)
        return self.writer

    def _orc(self) -> Any:
        if self.writer is None:
            from pyarrow import orc

            self.writer = orc.ORCWriter(self.sink, compression="snappy")
        return self.writer

    def _avro(self) -> Any:
        if self.writer is None:
            from fastavro import parse_schema
            from fastavro.write import Writer

            self.writer = Writer(self.sink, parse_schema(avro_schema(self.columns)), codec=CODEC)
        return self.writer


def _records(columns: list[list[str]], table: Any) -> Iterable[dict[str, Any]]:
    names = [name for name, _type in columns]
    return (record_of(names, (row[n] for n in names)) for row in table.to_pylist())


def _wall_clock(table: Any) -> Any:
    """Timestamps as naive UTC wall clocks (an ORC TIMESTAMP, which Hive reads; with a zone it would be an instant
    type Hive 2/3 cannot read)."""
    import pyarrow as pa

    fields = [
        pa.field(f.name, pa.timestamp(f.type.unit)) if pa.types.is_timestamp(f.type) and f.type.tz else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))
