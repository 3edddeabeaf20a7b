"""
The analyze program: the statistics Hive's ``ANALYZE TABLE … COMPUTE STATISTICS [FOR COLUMNS]`` computes, per unit
(a partition, or an unpartitioned table's root).

``plan`` (JSON, built by ``operations.services.analyze.analyze_plan``)::

    {"units": [{"key": "dt=2024-01-01", "source": "...", "format": "parquet",
                "files": [{"source": "...", "size": 123}, ...]}, ...],
     "columns": [["id", "int"], ...],     # the table's columns, as the files are read
     "analyzed": [["id", "int"], ...],    # the columns whose statistics are computed ([] for basic statistics)
     "serde": {"field.delim": ",", ...},  # a text table's SerDe parameters
     "noscan": false, "filesystems": {...}, "completed": [...]}

Each unit is one task on the executors (``frames.map_rows``: ``mapInArrow``, DataFrame API only, so Spark Connect
works); it reads every planned file through the console's filesystem layer (pyarrow for Parquet and ORC, text lines
split as LazySimpleSerDe splits them: ``catalog_admin.hive.text_format``) and returns its counts: rows (verified
against each file's own count: Parquet/ORC footers, text lines), rawDataSize (Parquet: rows × columns,
``ParquetHiveSerDe``; text: the bytes of every line, ``LazySimpleSerDe``'s ``serializedSize``), and per column what
``GenericUDAFComputeStats`` computes: min/max (numbers, dates as days since the epoch, decimals as HiveDecimal prints
them, trailing zeros trimmed), nulls, distinct values (exact, where Hive estimates), average and maximum length
(strings in UTF-16 units as Java's ``String.length``, binary in bytes; the average over every row, nulls
included) and true/false counts. NOSCAN reads nothing: numFiles and totalSize of the listing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import partial
from typing import TYPE_CHECKING, Any

from catalog_admin.hive.text_format import TextFormat, split_fields
from catalog_admin.locations import filesystem_for
from catalog_admin.object_stores import plan_filesystems
from operations.spark.programs.arrow_files import arrow_type, file_rows, read_table
from operations.spark.programs.frames import map_rows, parallelism
from operations.spark.programs.pacing import paced_batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ("AnalyzeFailed", "column_statistics", "hive_decimal", "run", "unit_statistics")

EPOCH = date(1970, 1, 1)
ASTRAL = r"[\x{10000}-\x{10FFFF}]"  # characters Java's String holds as two UTF-16 units
DEFAULT_BATCH_UNITS = 1000
_INTEGRAL = ("tinyint", "smallint", "int", "integer", "bigint")


class AnalyzeFailed(RuntimeError):
    """A unit's rows did not match its files' own counts; nothing is swapped."""


def run(spark: SparkSession | None, plan: dict, report: Callable[[dict], None]) -> dict:
    """Analyze every unit not in ``plan["completed"]``; the manifest of each unit's statistics."""
    started = time.monotonic()
    completed = set(plan.get("completed", ()))
    pending = [unit for unit in plan["units"] if unit["key"] not in completed]
    progress = {"partitions_total": len(plan["units"]), "partitions_done": len(plan["units"]) - len(pending),
                "files_total": sum(len(u["files"]) for u in plan["units"]),
                "bytes_total": sum(f["size"] for u in plan["units"] for f in u["files"]), "files_done": 0,
                "bytes_done": 0}  # fmt: skip
    report({"message": f"Analyzing {len(pending)} of {len(plan['units'])} units", **progress})
    options = plan_filesystems(plan)
    done: dict[str, dict] = {}
    size = max(1, int(plan.get("batch_units", DEFAULT_BATCH_UNITS)))
    for batch in paced_batches(pending, size):  # units done every few seconds (pacing.py)
        for key, result in _analyzed(spark, plan, options, batch).items():
            done[key] = result
            report({"unit_done": key})
        progress["partitions_done"] += len(batch)
        progress["files_done"] += sum(len(u["files"]) for u in batch)
        progress["bytes_done"] += sum(f["size"] for u in batch for f in u["files"])
        report(dict(progress))
    return {"program": "analyze", "units": done, "skipped": sorted(completed),
            "files": sum(u["files"] for u in done.values()), "bytes": sum(u["bytes"] for u in done.values()),
            "rows": sum(u.get("rows", 0) for u in done.values()),
            "seconds": round(time.monotonic() - started, 3)}  # fmt: skip


def _analyzed(spark: SparkSession | None, plan: dict, options: dict, batch: list[dict]) -> dict[str, dict]:
    """Each unit's statistics, by key: on the executors (one task per unit), or in this process without Spark."""
    if plan.get("noscan"):
        return {u["key"]: _listed_only(u) for u in batch}
    function = partial(_analyze_tasks, plan, options)
    if spark is None:
        rows = function([{"unit": json.dumps(u)} for u in batch])
    else:
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([StructField("unit", StringType())])
        result = StructType([StructField("key", StringType()), StructField("stats", StringType())])
        units = [{"unit": json.dumps(u)} for u in batch]
        rows = map_rows(spark, units, schema, result, function, slices=2 * parallelism(spark))
    return {row["key"]: json.loads(row["stats"]) for row in rows}


def _analyze_tasks(plan: dict, options: dict, tasks: list[dict]) -> list[dict]:
    return [
        {"key": unit["key"], "stats": json.dumps(unit_statistics(plan, options, unit))}
        for unit in (json.loads(task["unit"]) for task in tasks)
    ]


def _listed_only(unit: dict) -> dict:
    return {"files": len(unit["files"]), "bytes": sum(f["size"] for f in unit["files"])}


def unit_statistics(plan: dict, options: dict, unit: dict) -> dict:
    """One unit's basic statistics and its analyzed columns' statistics."""
    analyzed = [tuple(c) for c in plan.get("analyzed", [])]
    columns = [list(c) for c in plan["columns"]]
    values: dict[str, list] = {name: [] for name, _type in analyzed}  # Arrow arrays, file by file
    rows = raw = 0
    for entry in unit["files"]:
        counted, raw_size = _read_file(plan, options, unit["format"], entry["source"], columns, analyzed, values)
        expected = file_rows(options, unit["format"], entry["source"])
        if counted != expected:
            raise AnalyzeFailed(f"{entry['source']}: {counted} rows read, its {unit['format']} file holds {expected}")
        rows += counted
        raw += raw_size
    if unit["format"] == "parquet":
        raw = rows * len(columns)
    stats: dict[str, Any] = {**_listed_only(unit), "rows": rows, "raw_data_size": raw}
    stats["columns"] = {name: column_statistics(kind, _chunked(kind, values[name])) for name, kind in analyzed}
    return stats


def _read_file(
    plan: dict, options: dict, file_format: str, path: str, columns: list[list[str]],
    analyzed: list[tuple[str, str]], values: dict[str, list],
) -> tuple[int, int]:  # fmt: skip
    """Rows of one file and its raw size (text: bytes of the lines), the analyzed columns' values appended."""
    if file_format == "text":
        return _read_text(plan, options, path, columns, analyzed, values)
    table = read_table(options, file_format, path, columns)
    for name, _type in analyzed:
        values[name].extend(table.column(name).chunks)
    return table.num_rows, 0


def _read_text(
    plan: dict, options: dict, path: str, columns: list[list[str]], analyzed: list[tuple[str, str]],
    values: dict[str, list],
) -> tuple[int, int]:  # fmt: skip
    with filesystem_for(path, options=options).open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline ending the last row
    import pyarrow as pa  # type: ignore[import-untyped]

    text = TextFormat.from_serde_params(plan.get("serde", {}))
    positions = {name.lower(): i for i, (name, _type) in enumerate(columns)}
    parsed: dict[str, list] = {name: [] for name, _kind in analyzed}
    for line in lines:
        fields = split_fields(line.decode("utf-8", "replace"), text, len(columns))
        for name, kind in analyzed:
            parsed[name].append(_typed(fields[positions[name]], kind))
    for name, kind in analyzed:
        values[name].append(pa.array(parsed[name], arrow_type(kind)))
    return len(lines), sum(len(line) for line in lines)


def _typed(field: str | None, hive_type: str) -> Any:
    """A text field as LazySimpleSerDe's lazy objects read it (NULL when it does not parse)."""
    if field is None:
        return None
    name = hive_type.split("(")[0].strip().lower()
    try:
        if name in _INTEGRAL:
            return int(field.strip())
        if name in ("float", "double"):
            return float(field)
        if name == "decimal":
            return Decimal(field.strip())
        if name == "date":
            return date.fromisoformat(field.strip())
        if name == "boolean":
            return {"true": True, "false": False}.get(field.lower())
        if name == "binary":
            return field.encode()
    except (ValueError, InvalidOperation):
        return None
    return field


# Column statistics (GenericUDAFComputeStats) --------------------------------------------------------------------------


def _chunked(hive_type: str, arrays: list) -> Any:
    import pyarrow as pa

    return pa.chunked_array(arrays, type=arrow_type(hive_type))


def column_statistics(hive_type: str, values: Any) -> dict[str, Any]:
    """The statistics fields of one column's values (an Arrow array of the column's type, or a Python list), by the
    metastore model's field names; computed by Arrow's kernels, so a partition's values never become Python
    objects."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    if not isinstance(values, pa.ChunkedArray | pa.Array):
        values = pa.array(list(values), arrow_type(hive_type))
    rows, nulls = len(values), values.null_count
    name = hive_type.split("(")[0].strip().lower()
    if name == "boolean":
        trues = pc.sum(values.cast(pa.int64())).as_py() or 0
        return {"num_trues": trues, "num_falses": rows - nulls - trues, "num_nulls": nulls}
    if name in ("string", "varchar", "char", "binary"):
        lengths = _lengths(values, binary=name == "binary")
        total, longest = pc.sum(lengths).as_py() or 0, pc.max(lengths).as_py() or 0
        stats = {"avg_col_len": total / rows if rows else 0.0, "max_col_len": longest, "num_nulls": nulls}
        return stats if name == "binary" else {**stats, "num_distincts": _distinct(values)}
    bounds = pc.min_max(values)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    stats = {"num_nulls": nulls, "num_distincts": _distinct(values)}
    if name == "decimal":
        return {**stats, "big_decimal_low_value": hive_decimal(low), "big_decimal_high_value": hive_decimal(high)}
    if name in ("float", "double"):
        return {**stats, "double_low_value": low, "double_high_value": high}
    if name == "date":
        return {**stats, "long_low_value": _days(low), "long_high_value": _days(high)}
    return {**stats, "long_low_value": low, "long_high_value": high}


def _distinct(values: Any) -> int:
    import pyarrow.compute as pc

    return pc.count_distinct(values, mode="only_valid").as_py()


def _lengths(values: Any, *, binary: bool) -> Any:
    """Java's ``String.length`` (UTF-16 units: code points, plus one for each outside the Basic Multilingual
    Plane) of strings, bytes of binary values."""
    import pyarrow.compute as pc

    if binary:
        return pc.binary_length(values)
    return pc.add(pc.utf8_length(values), pc.count_substring_regex(values, pattern=ASTRAL))


def _days(value: date | None) -> int | None:
    return None if value is None else (value - EPOCH).days


def hive_decimal(value: Decimal | None) -> str | None:
    """As the metastore stores it: ``BigDecimal(unscaled, scale).toString()`` of a HiveDecimal, whose trailing zeros
    are trimmed (never below scale 0)."""
    if value is None:
        return None
    trimmed = value.normalize()
    if trimmed.as_tuple().exponent > 0:  # type: ignore[operator]
        trimmed = trimmed.quantize(Decimal(1))
    return str(trimmed)
