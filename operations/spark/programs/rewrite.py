"""
The rewrite program: compact (CONCATENATE) or convert (SET FILEFORMAT … WITH DATA) directories into new ones, each
verified to hold exactly the rows it read.

``plan`` (JSON, built by ``operations.services.rewrite.rewrite_plan``)::

    {"units": [{"key": "dt=2024-01-01", "source": "...", "destination": "...", "source_format": "parquet",
                "target_format": "parquet", "files": [{"source": "...", "size": 123}, ...]}, ...],
     "columns": [["id", "int"], ...],   # the table's columns (not inferred from the files)
     "serde": {"field.delim": ",", ...}, # the text SerDe's parameters (a text source)
     "target_file_bytes": 134217728,
     "filesystems": {...}, "completed": ["dt=...", ...]}

Every file is read and written by Python on the executors through the console's filesystem layer (fsspec: local disk,
S3, HDFS), so the program needs no Hadoop filesystem (``hadoop-aws``) on the cluster, and only the DataFrame API
(``mapInArrow`` over a frame of tasks), so it runs over Spark Connect too. Credentials reach the executors in the
tasks' closure (``with_credentials``: the driver's environment), never in the plan.

About ``bytes / target_file_bytes`` files are written per unit. Parquet, ORC and Avro sources: each output file is
one task that reads a group of consecutive planned files with pyarrow or fastavro (``arrow_files``: the table's
columns, as Hive reads them) and writes them (Parquet in Hive's layout: INT96 timestamps, decimals as Hive reads
them); text and Avro compactions are concatenated byte for byte (a missing last newline added) or merged with
fastavro. Text and SequenceFile sources converted: the files' lines (``sequence_file``: the values) become a frame,
parsed as LazySimpleSerDe reads them by Spark's expressions (``lazy_text`` for complex values), spread over the
unit's outputs and written by ``mapInArrow``. Rows are counted on both sides: read from the planned files (footers,
lines, records), and read back from every file in the new directory; a unit is reported ``{"unit_done": key}`` only
when they are equal, so a resumed run skips it; any difference fails the program (nothing is swapped).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from catalog_admin.hive.sequence_file import SequenceFileError, values
from catalog_admin.hive.text_format import get_byte
from catalog_admin.locations import filesystem_for, is_hidden
from catalog_admin.object_stores import plan_filesystems
from operations.spark.programs.arrow_files import SUFFIXES, FileWriter, PrecisionLost, file_rows, read_table
from operations.spark.programs.lazy_text import complex_parser, is_complex
from operations.spark.programs.pacing import paced_batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ("RewriteFailed", "field_delimiter", "run")

DEFAULT_BATCH_UNITS = 1000  # units per Spark write (each verified and reported done once its batch verified)
MAX_TASKS = 200  # Spark's default shuffle partitions, as the statement a user writes gets
LINE_BATCH = 65536  # text rows per Arrow batch
# Columns the program adds while it rewrites (none is written into the data files).
UNIT, PART, OUTPUTS = "__rewrite_unit", "__rewrite_part", "__rewrite_outputs"
LINE_FORMATS = ("text", "sequencefile")  # parsed as LazySimpleSerDe rows by Spark's expressions when converted
COMPRESSED_TEXT = (".gz", ".bz2", ".deflate", ".snappy", ".lz4", ".zst", ".lzo")
_file_rows = file_rows  # the row count of one file (footers, lines, records), for the tests of links


class RewriteFailed(RuntimeError):
    """A unit could not be rewritten or its rows did not verify; the units reported done stay done."""


def run(spark: SparkSession | None, plan: dict, report: Callable[[dict], None]) -> dict:
    """Rewrite every unit not in ``plan["completed"]`` in paced batches of at most ``batch_units``; the manifest of
    what was written and verified."""
    started = time.monotonic()
    completed = set(plan.get("completed", ()))
    pending = [unit for unit in plan["units"] if unit["key"] not in completed]
    files_total = sum(len(u["files"]) for u in plan["units"])
    bytes_total = sum(f["size"] for u in plan["units"] for f in u["files"])
    skipped = [f for u in plan["units"] if u["key"] in completed for f in u["files"]]
    progress = {"partitions_total": len(plan["units"]), "partitions_done": len(plan["units"]) - len(pending),
                "files_total": files_total, "bytes_total": bytes_total, "files_done": len(skipped),
                "bytes_done": sum(f["size"] for f in skipped)}  # fmt: skip
    report({"message": f"Rewriting {len(pending)} of {len(plan['units'])} units", **progress})
    options = plan_filesystems(plan)
    done: dict[str, dict[str, Any]] = {}
    size = max(1, int(plan.get("batch_units", DEFAULT_BATCH_UNITS)))
    _batches(spark, plan, options, pending, size, done, progress, report)
    return {
        "program": "rewrite",
        "units": done,
        "skipped": sorted(completed),
        "files": sum(u["files"] for u in done.values()),
        "bytes": sum(u["bytes"] for u in done.values()),
        "rows": sum(u["rows_out"] for u in done.values()),
        "seconds": round(time.monotonic() - started, 3),
    }


def _batches(
    spark: SparkSession | None, plan: dict, options: dict, pending: list[dict], size: int,
    done: dict[str, dict[str, Any]], progress: dict[str, int], report: Callable[[dict], None],
) -> None:  # fmt: skip
    """Rewrite ``pending`` in paced batches of at most ``size`` units (``pacing``: done every few seconds); each
    verified unit reported done after its batch."""
    for batch in paced_batches(pending, size):
        counted = _rewrite_batch(spark, plan, options, batch)
        for unit in batch:
            result = counted[unit["key"]]
            if result["rows_out"] != result["rows_in"]:
                raise RewriteFailed(
                    f"{unit['key']}: {result['rows_out']} rows written, {result['rows_in']} read; nothing is swapped"
                )
            done[unit["key"]] = result
            report({"unit_done": unit["key"]})
            progress["partitions_done"] += 1
            progress["files_done"] += len(unit["files"])
            progress["bytes_done"] += sum(f["size"] for f in unit["files"])
        report(dict(progress))


def _rewrite_batch(spark: SparkSession | None, plan: dict, options: dict, batch: list[dict]) -> dict[str, dict]:
    """Write the batch's new directories (emptied first: a resumed run may have left part of one), then count the rows
    of every file now in them; by unit key."""
    for unit in batch:
        filesystem_for(unit["destination"], options=options).delete_tree(unit["destination"])
    outputs = {u["key"]: max(1, math.ceil(sum(f["size"] for f in u["files"]) / int(plan["target_file_bytes"])))
               for u in batch}  # fmt: skip
    by_rows = [u for u in batch if u["source_format"] in LINE_FORMATS and u["target_format"] != u["source_format"]]
    rows_in = _write_file_groups(spark, plan, options, [u for u in batch if u not in by_rows], outputs)
    for group in _by_formats(by_rows):
        rows_in.update(_write_parsed_lines(spark, plan, options, group, outputs))
    written = {u["key"]: _visible_files(options, u["destination"]) for u in batch}
    counts = [{"key": u["key"], "path": f.location, "format": u["target_format"]} for u in batch
              for f in written[u["key"]]]  # fmt: skip
    rows_out = _summed(_on_executors(spark, counts, partial(_count_rows, options), COUNTED))
    return {
        unit["key"]: {
            "source": unit["source"],
            "destination": unit["destination"],
            "files": len(written[unit["key"]]),
            "bytes": sum(f.size for f in written[unit["key"]]),
            "rows_in": rows_in.get(unit["key"], 0),
            "rows_out": rows_out.get(unit["key"], 0),
        }  # fmt: skip
        for unit in batch
    }


def _visible_files(options: dict, location: str) -> list[Any]:
    listed = filesystem_for(location, options=options).list_files(location) or []
    return [f for f in listed if not is_hidden(f.relative)]


def _by_formats(units: list[dict]) -> list[list[dict]]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for unit in units:
        groups.setdefault((unit["source_format"], unit["target_format"]), []).append(unit)
    return list(groups.values())


# Tasks on the executors: a frame of JSON tasks, each turned into rows by a Python function (mapInArrow) ----------

COUNTED = (("key", "string"), ("rows", "bigint"))


def _on_executors(
    spark: SparkSession | None, tasks: list[dict], function: Callable[[dict], Iterable[dict]],
    columns: tuple[tuple[str, str], ...],
) -> list[dict]:  # fmt: skip
    """``function(task)`` of every task (each gives rows of ``columns``) on the executors, one Spark job; without a
    session in this process."""
    if not tasks:
        return []
    if spark is None:
        return [row for task in tasks for row in function(task)]
    frame = spark.createDataFrame([(json.dumps(task),) for task in tasks], "task string")
    frame = frame.repartition(min(len(tasks), MAX_TASKS))
    schema = ", ".join(f"`{name}` {kind}" for name, kind in columns)
    return [row.asDict() for row in frame.mapInArrow(partial(_rows_of_tasks, function, columns), schema).collect()]


def _rows_of_tasks(
    function: Callable[[dict], Iterable[dict]], columns: tuple[tuple[str, str], ...], batches: Iterator[Any]
) -> Iterator[Any]:
    import pyarrow as pa

    types = {"string": pa.string(), "bigint": pa.int64()}
    schema = pa.schema([(name, types[kind]) for name, kind in columns])
    for batch in batches:
        for text in batch.column(0).to_pylist():
            rows = list(function(json.loads(text)))
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _summed(rows: list[dict]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for row in rows:
        totals[row["key"]] = totals.get(row["key"], 0) + int(row["rows"])
    return totals


def _count_rows(options: dict, task: dict) -> Iterator[dict]:
    yield {"key": task["key"], "rows": file_rows(options, task["format"], task["path"])}


# Parquet, ORC and Avro sources, and text compactions: one task per output file -----------------------------------


def _write_file_groups(
    spark: SparkSession | None, plan: dict, options: dict, units: list[dict], outputs: dict[str, int]
) -> dict[str, int]:
    """Every output file of ``units`` written by one task from its group of planned files; rows read by unit."""
    tasks = [
        {"key": unit["key"], "source_format": unit["source_format"], "target_format": unit["target_format"],
         "destination": f"{unit['destination']}/{_part_name(i, unit['target_format'])}",
         "sources": [f["source"] for f in group]}
        for unit in units
        for i, group in enumerate(_groups(unit["files"], outputs[unit["key"]]))
    ]  # fmt: skip
    return _summed(_on_executors(spark, tasks, partial(_write_group, options, plan["columns"]), COUNTED))


def _write_group(options: dict, columns: list[list[str]], task: dict) -> Iterator[dict]:
    """One output file from ``task["sources"]``: (key, rows read)."""
    source, target, destination = task["source_format"], task["target_format"], task["destination"]
    if source == target == "text":
        rows = _concatenate_text(options, destination, task["sources"])
    elif source == target == "avro":
        rows = _merge_avro(options, destination, task["sources"])
    elif source in LINE_FORMATS:
        raise RewriteFailed(f"{task['key']}: {source} is converted from its parsed rows, not file by file")
    else:
        writer = FileWriter(options, target, destination, columns)
        try:
            for path in task["sources"]:
                writer.write(_read(options, source, path, columns))
        except PrecisionLost as exc:
            raise RewriteFailed(f"{task['key']}: {exc}") from exc
        finally:
            writer.close()
        rows = writer.rows
    yield {"key": task["key"], "rows": rows}


def _read(options: dict, file_format: str, path: str, columns: list[list[str]]) -> Any:
    """One planned file as the table's columns; a file its format cannot read fails the unit, naming it."""
    try:
        return read_table(options, file_format, path, columns)
    except (OSError, ValueError, TypeError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise RewriteFailed(f"{path} cannot be read as {file_format}: {exc}") from exc


def _groups(files: list[dict], outputs: int) -> list[list[dict]]:
    """Consecutive files in ``outputs`` groups of about the same size (none empty)."""
    target = sum(f["size"] for f in files) / outputs
    groups: list[list[dict]] = [[]]
    size = 0
    for entry in files:
        if groups[-1] and size + entry["size"] > target * 1.05 and len(groups) < outputs:
            groups.append([])
            size = 0
        groups[-1].append(entry)
        size += entry["size"]
    return groups


def _part_name(index: int, file_format: str) -> str:
    return f"part-{index:05d}{SUFFIXES.get(file_format, '')}"


def _concatenate_text(options: dict, destination: str, sources: list[str]) -> int:
    """Concatenate line files (each ending with a newline; a missing last one added): the rows read."""
    compressed = [s for s in sources if s.lower().endswith(COMPRESSED_TEXT)]
    if compressed:
        raise RewriteFailed(f"{compressed[0]} is compressed text: the console concatenates uncompressed text only")
    rows_in = 0
    with filesystem_for(destination, options=options).open(destination, "wb") as writer:
        for source in sources:
            with filesystem_for(source, options=options).open(source, "rb") as reader:
                data = reader.read()
            if data and not data.endswith(b"\n"):
                data += b"\n"
            rows_in += data.count(b"\n")
            writer.write(data)
    return rows_in


def _merge_avro(options: dict, destination: str, sources: list[str]) -> int:
    """Merge Avro container files of one schema into one (the first file's codec): the records read."""
    import io

    import fastavro

    records: list[Any] = []
    schema, codec = None, "null"
    for source in sources:
        with filesystem_for(source, options=options).open(source, "rb") as handle:
            reader = fastavro.reader(io.BytesIO(handle.read()))
            if schema is None:
                schema, codec = reader.writer_schema, reader.codec
            elif reader.writer_schema != schema:
                raise RewriteFailed(f"{source} has another Avro schema than {sources[0]}: not merged")
            records.extend(reader)
    with filesystem_for(destination, options=options).open(destination, "wb") as writer:
        fastavro.writer(writer, fastavro.parse_schema(schema), records, codec=codec)
    return len(records)


# Text and SequenceFile sources converted: their lines parsed by Spark's expressions, written by mapInArrow --------


def _write_parsed_lines(
    spark: SparkSession | None, plan: dict, options: dict, units: list[dict], outputs: dict[str, int]
) -> dict[str, int]:
    """The units' lines as a frame (read on the executors), parsed as LazySimpleSerDe rows with the table's columns,
    spread over each unit's outputs and written there; rows read by unit, counted from the planned files."""
    if spark is None:
        raise RewriteFailed(f"Converting {units[0]['source_format']} needs a Spark session")
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

    source, target = units[0]["source_format"], units[0]["target_format"]
    tasks = [{"path": f["source"], "format": source, "unit": n, "outputs": outputs[u["key"]]}
             for n, u in enumerate(units) for f in u["files"]]  # fmt: skip
    frame = spark.createDataFrame([(json.dumps(task),) for task in tasks], "task string")
    lines = frame.repartition(max(1, min(len(tasks), MAX_TASKS))).mapInArrow(
        partial(_lines, options), f"value string, `{UNIT}` int, `{OUTPUTS}` int"
    )
    extra = {UNIT: F.col(UNIT), OUTPUTS: F.col(OUTPUTS)}
    parsed = _lazy_simple_rows(lines, plan["columns"], plan.get("serde", {}), extra)
    split = any(outputs[u["key"]] > 1 for u in units)  # else one file per unit: no random split column
    parsed = parsed.withColumn(PART, F.floor(F.rand() * F.col(OUTPUTS)).cast("int") if split else F.lit(0))
    writes = min(sum(outputs[u["key"]] for u in units), MAX_TASKS)
    shuffled = parsed.drop(OUTPUTS).repartition(writes, UNIT, PART).sortWithinPartitions(UNIT, PART)
    write = partial(_write_rows, options, plan["columns"], [u["destination"] for u in units], target)
    shuffled.mapInArrow(write, "unit int, rows bigint").collect()
    counts = [{"key": u["key"], "path": f["source"], "format": source} for u in units for f in u["files"]]
    return _summed(_on_executors(spark, counts, partial(_count_rows, options), COUNTED))


def _lines(options: dict, batches: Iterator[Any]) -> Iterator[Any]:
    """Each task's file as lines (ended by ``\\n`` or ``\\r\\n``, as the rows are counted), tagged with the
    task's unit and output count."""
    import pyarrow as pa

    for batch in batches:
        for text in batch.column(0).to_pylist():
            task = json.loads(text)
            path = task["path"]
            if path.lower().endswith(COMPRESSED_TEXT):
                raise RewriteFailed(f"{path} is compressed text: the console converts uncompressed text only")
            with filesystem_for(path, options=options).open(path, "rb") as handle:
                data = handle.read()
            if task["format"] == "sequencefile":
                lines = [value.decode("utf-8", "replace") for value in _values(path, data)]
            else:
                lines = data.decode("utf-8", "replace").split("\n")
                lines = [line.removesuffix("\r") for line in (lines[:-1] if lines[-1] == "" else lines)]
            for start in range(0, len(lines), LINE_BATCH):
                chunk = lines[start : start + LINE_BATCH]
                yield pa.RecordBatch.from_arrays(
                    [pa.array(chunk, pa.string()), pa.array([task["unit"]] * len(chunk), pa.int32()),
                     pa.array([task["outputs"]] * len(chunk), pa.int32())],
                    names=["value", UNIT, OUTPUTS],
                )  # fmt: skip


def _values(path: str, data: bytes) -> list[bytes]:
    import io

    try:
        return list(values(io.BytesIO(data)))
    except SequenceFileError as exc:
        raise RewriteFailed(f"{path}: {exc}") from exc


def _write_rows(
    options: dict, columns: list[list[str]], destinations: list[str], target: str, batches: Iterator[Any]
) -> Iterator[Any]:
    """A task's rows (sorted by unit and output) written as one file per (unit, output) into the unit's new
    directory, named by the output so a retried task overwrites its own files: rows written by unit."""
    import pyarrow as pa

    names = [name for name, _type in columns]
    writer: FileWriter | None = None
    current: tuple[int, int] | None = None
    written: dict[int, int] = {}
    try:
        for batch in batches:
            units, parts = batch.column(UNIT).to_pylist(), batch.column(PART).to_pylist()
            start = 0
            for end in range(1, len(units) + 1):
                if end < len(units) and (units[end], parts[end]) == (units[start], parts[start]):
                    continue
                if (units[start], parts[start]) != current:
                    if writer is not None:
                        writer.close()
                    current = (units[start], parts[start])
                    path = f"{destinations[current[0]]}/{_part_name(current[1], target)}"
                    writer = FileWriter(options, target, path, columns)
                assert writer is not None
                writer.write(pa.Table.from_batches([batch.slice(start, end - start).select(names)]))
                written[current[0]] = written.get(current[0], 0) + end - start
                start = end
    finally:
        if writer is not None:
            writer.close()
    if written:
        yield pa.RecordBatch.from_pydict({"unit": list(written), "rows": list(written.values())},
                                         schema=pa.schema([("unit", pa.int32()), ("rows", pa.int64())]))  # fmt: skip


def _lazy_simple_rows(lines: Any, columns: list[list[str]], serde: dict[str, str], extra: dict[str, Any]) -> Any:
    """LazySimpleSerDe rows (a ``value`` column of lines) as the table's columns, read as Hive reads them: fields
    split at the separator (missing trailing fields NULL, extra ones ignored), the null format (``\\N``) NULL, an
    empty field an empty string, a primitive value Spark cannot cast NULL (``try_cast``, as Hive's lazy readers
    return NULL), complex values parsed by ``lazy_text`` at their nesting levels; ``extra``: more columns
    kept, by name."""
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention
    from pyspark.sql.types import _parse_datatype_string

    field = field_delimiter(serde)
    null = serde.get("serialization.null.format", "\\N")
    fields = F.split(F.col("value"), re.escape(field), -1)
    selected = []
    for index, (name, hive_type) in enumerate(columns):
        raw = F.when(fields.getItem(index) == F.lit(null), F.lit(None)).otherwise(fields.getItem(index))
        spark_type = _parse_datatype_string(CHAR_TYPES.sub("string", hive_type))
        if is_complex(hive_type):
            value = F.udf(complex_parser(hive_type, serde, field), spark_type, useArrow=False)(raw)
        elif spark_type.typeName() == "string":
            value = raw
        else:
            value = raw.try_cast(spark_type)
        selected.append(value.alias(name))
    return lines.select(*selected, *(column.alias(name) for name, column in extra.items()))


# Hive's char(n)/varchar(n), which Spark refuses in a read schema: their values are strings in every file format.
CHAR_TYPES = re.compile(r"\b(?:var)?char\s*\(\s*\d+\s*\)", re.IGNORECASE)


def field_delimiter(serde: dict[str, str]) -> str:
    """LazySimpleSerDe's field separator: ``field.delim``, else ``serialization.format``, read as Hive's
    ``LazyUtils.getByte`` reads them (a number is the byte's value: ``serialization.format=1`` is ^A; else the first
    character), default ^A (LazySerDeParameters)."""
    return get_byte(serde.get("field.delim") or serde.get("serialization.format"), "\x01")
