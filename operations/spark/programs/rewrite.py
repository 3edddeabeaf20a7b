"""
The rewrite program: compact (CONCATENATE) or convert (SET FILEFORMAT … WITH DATA) directories into new ones, each
verified to hold exactly the rows it read.

``plan`` (JSON, built by ``operations.services.rewrite.rewrite_plan``)::

    {"units": [{"key": "dt=2024-01-01", "source": "...", "destination": "...", "source_format": "parquet",
                "target_format": "parquet", "files": [{"source": "...", "size": 123}, ...]}, ...],
     "columns": [["id", "int"], ...],   # the table's columns (not inferred from the files)
     "serde": {"field.delim": ",", ...}, # the text SerDe's parameters (a text source)
     "target_file_bytes": 134217728,
     "filesystems": {...}, "completed": ["dt=...", ...], "parallel_units": 4}

Parquet and ORC go through Spark DataFrames read with the table's columns (``spark=None``: pyarrow in this process,
for the quick tests): about ``bytes / target_file_bytes`` files are written; Parquet in Hive's legacy layout
(``spark.sql.parquet.writeLegacyFormat``: decimals as Hive reads them). Text (LazySimpleSerDe) files are concatenated
byte for byte, a missing last newline added, so every row stays identical; Avro container files are merged with
fastavro (spark-avro is not shipped with pyspark), all inputs having the same schema. Both of those run on the
executors (one task per output file). Converting to or from Avro reads or writes the rows with fastavro on the
executors (``avro_rows``), the rest of the way as Parquet and ORC. Each unit's output is then read back and its rows
counted: a unit is reported ``{"unit_done": key}`` only when the count equals the rows read, so a resumed run skips
it; any difference fails the program (nothing is swapped).
"""

from __future__ import annotations

import io
import math
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from catalog_admin.hive.text_format import get_byte
from catalog_admin.locations import filesystem_for, is_hidden
from catalog_admin.object_stores import with_credentials
from operations.spark.programs.avro_rows import count_records, read_rows, record_of, write_records
from operations.spark.programs.lazy_text import complex_parser, is_complex

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ("RewriteFailed", "run")

DEFAULT_BATCH_UNITS = 1000  # units per Spark write (each verified and reported done once its batch verified)
MAX_WRITE_TASKS = 200  # Spark's default shuffle partitions, as the statement a user writes gets
# Columns the program adds while it rewrites (none is written into the data files).
UNIT, PART, FILE, OUTPUTS = "__rewrite_unit", "__rewrite_part", "__rewrite_file", "__rewrite_outputs"
COMPRESSED_TEXT = (".gz", ".bz2", ".deflate", ".snappy", ".lz4", ".zst", ".lzo")


class RewriteFailed(RuntimeError):
    """A unit could not be rewritten or its rows did not verify; the units reported done stay done."""


def run(spark: SparkSession | None, plan: dict, report: Callable[[dict], None]) -> dict:
    """Rewrite every unit not in ``plan["completed"]``, ``batch_units`` at a time; the manifest of what was written
    and verified."""
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
    saved = _session_conf(spark) if spark is not None else {}
    options = {**plan.get("filesystems", {}), "s3": with_credentials(dict(plan.get("filesystems", {}).get("s3", {})))}
    done: dict[str, dict[str, Any]] = {}
    size = max(1, int(plan.get("batch_units", DEFAULT_BATCH_UNITS)))
    try:
        _batches(spark, plan, options, pending, size, done, progress, report)
    finally:
        _restore_conf(spark, saved)
    return {
        "program": "rewrite",
        "units": done,
        "skipped": sorted(completed),
        "files": sum(u["files"] for u in done.values()),
        "bytes": sum(u["bytes"] for u in done.values()),
        "rows": sum(u["rows_out"] for u in done.values()),
        "seconds": round(time.monotonic() - started, 3),
    }


# The session settings a run uses (restored afterwards): Hive's Parquet layout (decimals as Hive 2/3 read them), and
# the listing of a unit's planned files on the driver (no Spark job per unit: they are listed already).
SESSION_CONF = {
    "spark.sql.parquet.writeLegacyFormat": "true",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
}


def _session_conf(spark: SparkSession) -> dict[str, str | None]:
    saved = {key: spark.conf.get(key, None) for key in SESSION_CONF}
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    return saved


def _restore_conf(spark: SparkSession | None, saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            spark.conf.unset(key)  # type: ignore[union-attr]
        else:
            spark.conf.set(key, value)  # type: ignore[union-attr]


def _batches(
    spark: SparkSession | None, plan: dict, options: dict, pending: list[dict], size: int,
    done: dict[str, dict[str, Any]], progress: dict[str, int], report: Callable[[dict], None],
) -> None:  # fmt: skip
    """Rewrite ``pending`` ``size`` units at a time; each verified unit reported done after its batch."""
    for start in range(0, len(pending), size):
        batch = pending[start : start + size]
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
    """Write the batch's new directories (emptied first: a resumed run may have left part of one) and count the rows
    on both sides, by unit key."""
    for unit in batch:
        filesystem_for(unit["destination"], options=options).delete_tree(unit["destination"])
    outputs = {u["key"]: max(1, math.ceil(sum(f["size"] for f in u["files"]) / int(plan["target_file_bytes"])))
               for u in batch}  # fmt: skip
    copied = [u for u in batch if u["source_format"] == u["target_format"] in ("text", "avro")]
    framed = [u for u in batch if u not in copied]
    counts = _on_executors(spark, options, copied, outputs) if copied else {}
    if spark is not None:
        for group in _by_formats(framed):
            counts.update(_spark_rewrite(spark, plan, options, group, outputs))
    else:
        counts.update({u["key"]: _arrow_rewrite(options, u, outputs[u["key"]], plan["columns"]) for u in framed})
    results = {}
    for unit in batch:
        written = [f for f in filesystem_for(unit["destination"], options=options).list_files(unit["destination"])
                   or [] if not is_hidden(f.relative)]  # fmt: skip
        rows_in, rows_out = counts[unit["key"]]
        results[unit["key"]] = {
            "source": unit["source"], "destination": unit["destination"], "files": len(written),
            "bytes": sum(f.size for f in written), "rows_in": rows_in, "rows_out": rows_out,
        }  # fmt: skip
    return results


def _by_formats(units: list[dict]) -> list[list[dict]]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for unit in units:
        groups.setdefault((unit["source_format"], unit["target_format"]), []).append(unit)
    return list(groups.values())


# Text and Avro: one executor task per output file ----------------------------------------------------------------


def _on_executors(spark: SparkSession | None, options: dict, units: list[dict], outputs: dict[str, int]) -> dict:
    """Every output file of ``units`` written by one task (one Spark job for all); (rows read, written) by unit."""
    tasks = [
        (unit["key"], unit["source_format"], options, f"{unit['destination']}/{_part_name(i, unit)}",
         [f["source"] for f in group])
        for unit in units
        for i, group in enumerate(_groups(unit["files"], outputs[unit["key"]]))
    ]  # fmt: skip
    if spark is None:
        results = [_merge(*task) for task in tasks]
    else:
        results = spark.sparkContext.parallelize(tasks, len(tasks)).map(lambda task: _merge(*task)).collect()
    counts: dict[str, tuple[int, int]] = {}
    for key, rows_in, rows_out in results:
        before = counts.get(key, (0, 0))
        counts[key] = (before[0] + rows_in, before[1] + rows_out)
    return counts


def _merge(key: str, file_format: str, options: dict, destination: str, sources: list[str]) -> tuple[str, int, int]:
    write = _concatenate_text if file_format == "text" else _merge_avro
    return (key, *write(options, destination, sources))


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


def _part_name(index: int, unit: dict) -> str:
    suffix = ".avro" if unit["target_format"] == "avro" else ""
    return f"part-{index:05d}{suffix}"


def _concatenate_text(options: dict, destination: str, sources: list[str]) -> tuple[int, int]:
    """Concatenate line files (each ending with a newline; a missing last one added): (rows read, rows written)."""
    compressed = [s for s in sources if s.lower().endswith(COMPRESSED_TEXT)]
    if compressed:
        raise RewriteFailed(f"{compressed[0]} is compressed text: the console concatenates uncompressed text only")
    rows_in = 0
    writer_fs = filesystem_for(destination, options=options)
    with writer_fs.open(destination, "wb") as writer:
        for source in sources:
            with filesystem_for(source, options=options).open(source, "rb") as reader:
                data = reader.read()
            if data and not data.endswith(b"\n"):
                data += b"\n"
            rows_in += data.count(b"\n")
            writer.write(data)
    with writer_fs.open(destination, "rb") as reader:
        rows_out = reader.read().count(b"\n")
    return rows_in, rows_out


def _merge_avro(options: dict, destination: str, sources: list[str]) -> tuple[int, int]:
    """Merge Avro container files of one schema into one (the first file's codec): (records read, written)."""
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
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), records, codec=codec)
    filesystem = filesystem_for(destination, options=options)
    with filesystem.open(destination, "wb") as writer:
        writer.write(buffer.getvalue())
    with filesystem.open(destination, "rb") as handle:
        rows_out = sum(1 for _ in fastavro.reader(io.BytesIO(handle.read())))
    return len(records), rows_out


# Parquet and ORC (and text into them): DataFrames with the table's columns ----------------------------------------


def _spark_rewrite(
    spark: SparkSession, plan: dict, options: dict, units: list[dict], outputs: dict[str, int]
) -> dict[str, tuple[int, int]]:
    """One DataFrame reading the units' directories (see ``_read_paths``) with the table's columns, each row tagged
    with its file's unit by a broadcast join on the file's path, which keeps the planned files' rows only; shuffled so
    each unit lands in about ``outputs`` files and written (``_write_and_move``). The rows read are counted from the
    planned files themselves (Parquet/ORC footers, text lines) on the executors, not from the DataFrame: a file the
    join missed fails the verification. (rows read, rows written) by unit key."""
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

    schema = ", ".join(f"`{name}` {CHAR_TYPES.sub('string', type_)}" for name, type_ in plan["columns"])
    source, target = units[0]["source_format"], units[0]["target_format"]
    files = [(f["source"], n, outputs[u["key"]]) for n, u in enumerate(units) for f in u["files"]]
    paths = [path for path, _n, _outputs in files]
    read = _read_paths(units, paths)
    rows_in: dict[int, int] | None = None
    if source == "avro":  # read with fastavro on the executors, each row tagged as it is read
        tagged = _avro_frame(spark, options, plan["columns"], schema, files)
    elif source == "sequencefile":  # Hadoop's reader on the executors; the values are text rows
        tagged, rows_in = _sequence_frame(spark, plan, units, outputs)
    else:
        if source == "text":
            lines = _read_files(spark.read.option("recursiveFileLookup", "true"), "text", read)
            frame = _lazy_simple_rows(lines, plan["columns"], plan.get("serde", {}), {FILE: _file_path(paths)})
        else:
            reader = spark.read.option("recursiveFileLookup", "true").schema(schema).format(source)
            frame = _read_files(reader, "load", read)
            frame = frame.withColumn(FILE, _file_path(paths))
        mapping = spark.createDataFrame(files, f"{FILE} string, {UNIT} int, {OUTPUTS} int")
        tagged = frame.join(F.broadcast(mapping), FILE).drop(FILE)
    split = any(outputs[u["key"]] > 1 for u in units)  # else one file per unit: no random split column
    tagged = tagged.withColumn(PART, F.floor(F.rand() * F.col(OUTPUTS)).cast("int") if split else F.lit(0))
    tagged = tagged.drop(OUTPUTS)
    if rows_in is None:
        rows_in = _rows_in_files(spark, options, source, files)
    tasks = min(sum(outputs[u["key"]] for u in units), MAX_WRITE_TASKS)
    shuffled = tagged.repartition(tasks, UNIT, PART) if split else tagged.repartition(tasks, UNIT)
    if target == "avro":
        rows_out = _write_avro(options, plan["columns"], [u["destination"] for u in units], shuffled)
    else:
        rows_out = _write_and_move(spark, options, plan["staging"], target, units, shuffled)
    return {u["key"]: (rows_in.get(n, 0), rows_out.get(n, 0)) for n, u in enumerate(units)}


def _write_and_move(
    spark: SparkSession, options: dict, staging: str, target: str, units: list[dict], shuffled: Any
) -> dict[int, int]:
    """``shuffled`` written partitioned by unit below a hidden scratch directory of the staging, its rows counted by
    unit (the written output read back), each unit's directory then moved to its destination; rows by unit number."""
    scratch = f"{staging}/_batch-{uuid.uuid4().hex[:12]}"
    shuffled.drop(PART).write.mode("overwrite").partitionBy(UNIT).format(target).save(scratch)
    rows_out = dict(spark.read.format(target).load(scratch).groupBy(UNIT).count().collect())
    filesystem = filesystem_for(scratch, options=options)
    for number, unit in enumerate(units):
        if rows_out.get(number):
            filesystem.rename(f"{scratch}/{UNIT}={number}", unit["destination"])
    filesystem.delete_tree(scratch)
    return rows_out


def _read_paths(units: list[dict], paths: list[str]) -> list[str]:
    """What Spark is given to read: the units' directories when Spark's recursive listing of them finds every planned
    file (each below its unit's directory, none with a name Spark's listing skips though Hive reads it: an in-progress
    copy's ``._COPYING_``), else the planned files themselves. Spark lists 1,000 directories in a fraction of the time
    it takes to look up 50,000 files one by one; a file listed but not planned (added since the preview) is dropped by
    the join on the file's path, or, if Spark cannot read it in the unit's format, fails the job before any swap."""
    listed = all(
        f["source"].startswith(u["source"].rstrip("/") + "/") and not f["source"].endswith("._COPYING_")
        for u in units
        for f in u["files"]
    )
    return [u["source"] for u in units] if listed else paths


def _read_files(reader: Any, method: str, paths: list[str]):  # noqa: ANN202 - a DataFrame
    """``reader.<method>(paths)``, the paths handed to the JVM as one string split there: py4j converts a Python list
    with one round trip per element (50,000 files: 18 s). Spark Connect's reader (no JVM here) takes the list."""
    jreader = getattr(reader, "_jreader", None)
    if jreader is None or any("\0" in path for path in paths):  # no path holds NUL; the list, if one did
        return getattr(reader, method)(paths)
    array = reader._spark._jvm.java.util.regex.Pattern.compile("\0").split("\0".join(paths), -1)
    return reader._df(getattr(jreader, method)(array))  # the @varargs String[] form


def _avro_frame(spark: SparkSession, options: dict, columns: list[list[str]], schema: str, files: list[tuple]):  # noqa: ANN202 - a DataFrame
    """The Avro files' rows as the table's columns (matched by name, as Hive reads them), each tagged with its unit
    and the unit's output count, read by fastavro on the executors (one task per few files)."""
    names = [name for name, _type in columns]

    def rows(task: tuple) -> Iterator[tuple]:
        path, unit, outputs = task
        with filesystem_for(path, options=options).open(path, "rb") as handle:
            data = handle.read()
        for row in read_rows(data, names):
            yield (*row, unit, outputs)

    slices = max(1, min(len(files), spark.sparkContext.defaultParallelism * 4))
    read = spark.sparkContext.parallelize(files, slices).flatMap(rows)
    return spark.createDataFrame(read, f"{schema}, {UNIT} int, {OUTPUTS} int")


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


def _decoded(path: Any) -> Any:
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

    return F.url_decode(F.replace(path, F.lit("+"), F.lit("%2B")))


def _sequence_frame(
    spark: SparkSession, plan: dict, units: list[dict], outputs: dict[str, int]
) -> tuple[Any, dict[int, int]]:
    """SequenceFiles (``STORED AS SEQUENCEFILE``: LazySimpleSerDe rows as ``Text`` values) read by Hadoop's reader on
    the executors, each value tagged with its unit and parsed as text rows are; and the records of each unit counted
    from the files (rows read, by unit number)."""
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

    context = spark.sparkContext
    tagged_values = []
    for number, unit in enumerate(units):
        paths = [f["source"] for f in unit["files"]]
        if any("," in path for path in paths):  # Hadoop splits an input path list on commas
            raise RewriteFailed(f"{unit['key']}: a file name holds a comma, which Hadoop's input path list cannot take")
        pairs = context.sequenceFile(",".join(paths), "org.apache.hadoop.io.BytesWritable", "org.apache.hadoop.io.Text")
        count = outputs[unit["key"]]
        tagged_values.append(pairs.map(lambda pair, n=number, c=count: (pair[1], n, c)))
    values = context.union(tagged_values)
    rows_in = dict(values.map(lambda value: value[1]).countByValue())
    lines = spark.createDataFrame(values, "value string, unit int, outputs int")
    extra = {UNIT: F.col("unit"), OUTPUTS: F.col("outputs")}
    return _lazy_simple_rows(lines, plan["columns"], plan.get("serde", {}), extra), rows_in


def _write_avro(options: dict, columns: list[list[str]], destinations: list[str], shuffled: Any) -> dict[int, int]:
    """Each task's rows written as one Avro file per unit it holds, into the unit's new directory (emptied before
    the batch), each file read back and its records counted: records written by unit number."""
    import itertools

    names = [name for name, _type in columns]

    def write(index: int, rows: Iterator[Any]) -> Iterator[tuple[int, int]]:
        for unit, group in itertools.groupby(rows, key=lambda row: row[UNIT]):
            path = f"{destinations[unit]}/part-{index:05d}.avro"
            filesystem = filesystem_for(path, options=options)
            with filesystem.open(path, "wb") as sink:
                write_records(sink, columns, (record_of(names, (row[n] for n in names)) for row in group))
            with filesystem.open(path, "rb") as handle:
                yield unit, count_records(handle.read())

    ordered = shuffled.drop(PART).sortWithinPartitions(UNIT)
    written = ordered.rdd.mapPartitionsWithIndex(write).reduceByKey(lambda left, right: left + right)
    return dict(written.collect())


# Hive's char(n)/varchar(n), which Spark refuses in a read schema: their values are strings in every file format.
CHAR_TYPES = re.compile(r"\b(?:var)?char\s*\(\s*\d+\s*\)", re.IGNORECASE)


# Characters a path keeps as they are in its URI (java.net.URI's path characters less '%'): a path made of them only,
# with no segment Hadoop's Path normalizes away (empty, '.', '..'), is its own ``_metadata.file_path``, which Spark
# writes as ``Path.toUri().toString()``.
URI_SAFE = re.compile(r"[A-Za-z0-9/_.\-=:~+@,]+")
NORMALIZED_AWAY = re.compile(r"//|/\.\.?(/|$)")


def _in_uri_form(path: str) -> bool:
    _scheme, _, rest = path.partition("://")
    if rest.startswith("/"):  # an empty authority: Hadoop writes file:///x as file:/x
        return False
    after_authority = rest.partition("/")[2] if rest else path.partition(":")[2].removeprefix("/")
    return bool(URI_SAFE.fullmatch(path)) and not NORMALIZED_AWAY.search("/" + after_authority)


def _file_path(paths: list[str]):  # noqa: ANN202 - a Column
    """Each row's file, spelled as the plan spells it: Spark's own ``_metadata.file_path`` when every planned path is
    already in URI form (no per-row work), else that path URL-decoded (``url_decode`` reads '+' as a space: escaped
    first). A file the join misses leaves its rows out, which the row-count verification catches."""
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

    spelled = F.col("_metadata.file_path")
    return spelled if all(_in_uri_form(path) for path in paths) else _decoded(spelled)


def _rows_in_files(spark: SparkSession, options: dict, file_format: str, files: list[tuple]) -> dict[int, int]:
    """Rows of each unit's files, counted on the executors from the files (footers; lines of text)."""
    tasks = [(path, number) for path, number, _outputs in files]
    slices = max(1, min(len(tasks), spark.sparkContext.defaultParallelism * 4))
    counted = spark.sparkContext.parallelize(tasks, slices).map(
        lambda task: (task[1], _file_rows(options, file_format, task[0]))  # options shipped once, with the closure
    )
    return dict(counted.reduceByKey(lambda left, right: left + right).collect())


def _file_rows(options: dict, file_format: str, path: str) -> int:
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
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def field_delimiter(serde: dict[str, str]) -> str:
    """LazySimpleSerDe's field separator: ``field.delim``, else ``serialization.format``, read as Hive's
    ``LazyUtils.getByte`` reads them (a number is the byte's value: ``serialization.format=1`` is ^A; else the first
    character), default ^A (LazySerDeParameters)."""
    return get_byte(serde.get("field.delim") or serde.get("serialization.format"), "\x01")


def _arrow_rewrite(options: dict, unit: dict, outputs: int, columns: list[list[str]]) -> tuple[int, int]:
    """Without a Spark session: pyarrow reads the files and writes ``outputs`` files (Parquet, ORC or, through
    fastavro, Avro with the table's columns)."""
    import pyarrow as pa

    if unit["source_format"] in ("text", "sequencefile"):
        raise RewriteFailed(f"Converting {unit['source_format']} needs a Spark session")
    tables = []
    for entry in unit["files"]:
        with filesystem_for(entry["source"], options=options).open(entry["source"], "rb") as handle:
            tables.append(_read_arrow(unit["source_format"], pa.BufferReader(handle.read()), columns))
    table = pa.concat_tables(tables, promote_options="default")
    rows_out = 0
    step = math.ceil(table.num_rows / outputs) or 1
    filesystem = filesystem_for(unit["destination"], options=options)
    for index in range(outputs):
        chunk = table.slice(index * step, step)
        if index and not chunk.num_rows:
            break
        path = f"{unit['destination']}/part-{index:05d}.{unit['target_format']}"
        sink = pa.BufferOutputStream()
        _write_arrow(unit["target_format"], chunk, sink, columns)
        with filesystem.open(path, "wb") as writer:
            writer.write(sink.getvalue().to_pybytes())
        with filesystem.open(path, "rb") as handle:
            rows_out += _read_arrow(unit["target_format"], pa.BufferReader(handle.read()), columns).num_rows
    return table.num_rows, rows_out


def _read_arrow(file_format: str, source: Any, columns: list[list[str]]) -> Any:
    if file_format == "avro":
        import pyarrow as pa

        names = [name for name, _type in columns]
        rows = list(read_rows(bytes(source.read()), names))
        types = [_arrow_type(hive_type) for _name, hive_type in columns]
        return pa.table([pa.array([row[i] for row in rows], t) for i, t in enumerate(types)], names=names)
    if file_format == "orc":
        from pyarrow import orc

        return orc.read_table(source)
    from pyarrow import parquet

    return parquet.read_table(source)


def _arrow_type(hive_type: str) -> Any:
    """The Arrow type Hive's Parquet/ORC readers expect for a primitive Hive type."""
    import pyarrow as pa

    kind = hive_type.split("(")[0].strip().lower()
    if kind == "decimal":
        arguments = [int(a) for a in hive_type.partition("(")[2].rstrip(")").split(",") if a.strip()]
        precision, scale = (arguments + [10, 0][len(arguments) :])[:2]
        return pa.decimal128(precision, scale)
    simple = {"tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "integer": pa.int32(),
              "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(),
              "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us")}  # fmt: skip
    return simple.get(kind, pa.string())


def _write_arrow(file_format: str, table: Any, sink: Any, columns: list[list[str]]) -> None:
    if file_format == "avro":
        names = [name for name, _type in columns]
        write_records(sink, columns, (record_of(names, (row.get(n) for n in names)) for row in table.to_pylist()))
        return
    if file_format == "orc":
        from pyarrow import orc

        orc.write_table(table, sink)
        return
    from pyarrow import parquet

    parquet.write_table(table, sink, use_deprecated_int96_timestamps=True)
