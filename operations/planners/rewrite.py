"""
Rewrite: CONCATENATE (compact small files) and SET FILEFORMAT … WITH DATA (convert), as governed Spark jobs.

Hive's ``CONCATENATE`` merges ORC/RCFile files only and its ``SET FILEFORMAT`` changes metadata only (the old files
become unreadable); the console rewrites each selected partition (or an unpartitioned table's root) with the rewrite
program (``operations/spark/programs/rewrite.py``) into a NEW hidden directory, verifies the rows, then swaps in
one metastore transaction: the old directory goes to the console's trash and the new one into its place, as Hive's
MoveTask replaces a partition's files (``planners/rewrite_swap.py``: where each unit is staged, on its own
filesystem, and the swap's journaled moves), the storage descriptors keep their locations (a convert switches their
formats and SerDe), and the basic statistics of what was written are set (``rewrite_stats``: numFiles, totalSize,
numRows measured at the swap; column statistics stay: the same values). Like a relocation (``planners/relocate.py``)
the preview's :class:`DataCopy` lists the units, the old directories are kept (in the trash) for the retention time
and revert swaps back meanwhile. Nothing hidden is left in the warehouse: the emptied staging directory goes with the
swap, and the cleanup removes the trashed directories (or, after a revert, the new ones) with their emptied parents.
"""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from catalog_admin.locations import FileEntry, filesystem_for, is_hidden
from catalog_admin.models import Partition, PartitionParam, SerDe, SerDeParam, StorageDescriptor, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobKind
from operations.containment import canonical
from operations.planners.common import build_preview, metadata_only_hive, snapshot
from operations.planners.data_scope import (
    data_work_blockers,
    data_work_warnings,
    engine_reach_blockers,
    estimate_duration,
    scope_of,
    symlink_blockers,
)
from operations.planners.locations import _replication_blockers
from operations.planners.partitions.chunks import chunks
from operations.planners.partitions.matching import matching_partitions, predicate_blockers
from operations.planners.relocate import destination_blockers
from operations.planners.rewrite_stats import ACCURATE, current_accurate, replaced_params, stats_steps
from operations.planners.rewrite_swap import staged, staging_roots, swap_blockers, token_of
from operations.planners.rewrite_values import value_blockers
from operations.planners.spark_tables import datasource_move_blockers, datasource_rewrite_blockers
from operations.preview import TABLE_UNIT, CopyUnit, DataCopy, HiveComparison, Preview, Step
from operations.rules import Finding
from operations.specs import CompactFiles, ConvertFormat, PartitionPredicate, SetFileFormat
from operations.sql import MetastoreSql
from operations.table_state import TableState, read_partition_scope

__all__ = ("FORMATS", "plan_rewrite", "plan_set_file_format", "source_format", "staging_of")

RULE = "rewrite"
RewriteSpec = CompactFiles | ConvertFormat

# Hive's classes per format, as ``STORED AS`` / ``SET FILEFORMAT`` write them: the StorageFormatDescriptor of each
# (apache/hive ql/src/java/org/apache/hadoop/hive/ql/io/ParquetFileStorageFormatDescriptor: getInputFormat,
# getOutputFormat, getSerde; ORCFileStorageFormat-
# Descriptor, AvroStorageFormatDescriptor), which DDLSemanticAnalyzer.analyzeAlterTableFileFormat (2.3/3.1;
# AlterTableSetFileFormatAnalyzer in 4.0) reads through StorageFormat.fillStorageFormat.
FORMATS: dict[str, tuple[str, str, str]] = {
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
    "avro": ("org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
             "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
             "org.apache.hadoop.hive.serde2.avro.AvroSerDe"),
}  # fmt: skip
TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
SEQUENCE_INPUT = "org.apache.hadoop.mapred.SequenceFileInputFormat"  # STORED AS SEQUENCEFILE (SequenceFileStorage-
# FormatDescriptor): LazySimpleSerDe rows as the files' Text values
LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
# LazySimpleSerDe's parameters (serdeConstants): meaningless to a binary format's SerDe, dropped by a convert.
TEXT_SERDE_PARAMS = ("field.delim", "line.delim", "colelction.delim", "collection.delim", "mapkey.delim",
                     "escape.delim", "serialization.null.format", "serialization.escape.crlf",
                     "serialization.last.column.takes.rest", "quote.delim")  # fmt: skip
# What a convert can read (the program reads text and SequenceFile values as LazySimpleSerDe's delimited rows, complex
# columns included: operations/spark/programs/lazy_text.py; Avro through fastavro: avro_rows.py).
CONVERTIBLE_FROM = ("parquet", "orc", "text", "avro", "sequencefile")
PRIMITIVE = ("tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string", "date", "timestamp",
             "binary", "varchar", "char", "decimal")  # fmt: skip


def source_format(input_format: str | None, serde: str | None) -> str:
    """``parquet``, ``orc``, ``avro``, ``text`` or ``sequencefile`` (LazySimpleSerDe over TextInputFormat or
    SequenceFileInputFormat); ``""``: another format."""
    for name, (input_class, _output, _serde) in FORMATS.items():
        if input_format == input_class:
            return name
    if serde == LAZY_SIMPLE:
        return {TEXT_INPUT: "text", SEQUENCE_INPUT: "sequencefile"}.get(input_format or "", "")
    return ""


def staging_of(state: TableState, spec: RewriteSpec, sources: list[str]) -> str:
    """The token naming this rewrite's hidden staging directories and its trash (``planners/rewrite_swap.py``)."""
    verb = "compacted" if isinstance(spec, CompactFiles) else f"converted-{spec.file_format.lower()}"
    return token_of(verb, spec.to_ddl(), sources)


def plan_rewrite(metastore: Metastore, state: TableState, spec: RewriteSpec) -> Preview:
    blockers = _table_blockers(metastore, state, spec)
    rows, selection = _in_scope(metastore, state, spec, blockers)
    reach = engine_reach_blockers(metastore, [r["location"] for r in rows], RULE)
    blockers += [finding for finding in reach if finding not in blockers]  # the table's location was checked
    listed = _listed(metastore, rows) if not blockers else {}
    blockers += symlink_blockers(listed.values(), RULE)
    in_scope = len(rows)
    rows = _selected(spec, rows, listed)
    if not rows and not blockers:
        blockers.append(Finding("nothing_to_rewrite", RULE, _nothing_message(state, spec)))
    blockers += _format_blockers(state, spec, rows)
    if rows and not blockers:
        formats = [{**r, "format": source_format(r["input_format"], r["serde"])} for r in rows]
        blockers += value_blockers(
            metastore, state, convert=isinstance(spec, ConvertFormat), rows=formats, files=listed
        )
    token = staging_of(state, spec, [r["location"] for r in rows]) if rows else ""
    units = [_unit(state, token, r) for r in rows]
    stagings = staging_roots(units, token)
    if units and not blockers:
        sd_ids = {u.key: u.sd_id for u in units if u.partition_id is not None}
        for staging in stagings:
            own = [u for u in units if u.destination.startswith(staging + "/")]
            blockers += destination_blockers(metastore, state, staging, own, sd_ids)  # type: ignore[arg-type]
        blockers += swap_blockers(metastore, state, units)
        blockers = list(dict.fromkeys(blockers))
    data_copy = _data_copy(metastore, units, listed, job_kind(spec)) if units else None
    table_sd = not state.is_partitioned or (isinstance(spec, ConvertFormat) and not spec.partitions)
    steps = [] if blockers or not units else _steps(MetastoreSql(metastore.alias), state, spec, rows, units, table_sd)
    partitions = [r for r in rows if r["id"] is not None]
    after = _after(state, spec, units, table_sd)
    preview = build_preview(
        metastore, state, spec, steps=steps, after=after, blockers=blockers,
        warnings=_warnings(state, spec, data_copy, in_scope - len(rows)), partitions_touched=len(partitions),
        hive=_hive(metastore, spec),
        inverse={"rewrite": True, "table_sd": table_sd, "staging": stagings, "token": token,
                 "replaced_params": replaced_params(
            [u.partition_id for u in units if u.partition_id is not None] if steps else [],
            state.table_id if steps and not state.is_partitioned else None)}, data_copy=data_copy,
    )  # fmt: skip
    if selection is not None and partitions:
        selection = {"ids": sorted(r["id"] for r in partitions)}
    scope = read_partition_scope(metastore, state.table_id, selection) if selection and partitions else None
    return replace(preview, scope=scope)


# Scope ---------------------------------------------------------------------------------------------------------------


def _table_blockers(metastore: Metastore, state: TableState, spec: RewriteSpec) -> list[Finding]:
    blockers = _replication_blockers(metastore, state)
    if state.is_view:
        blockers.append(Finding("view_rewrite", "ddl", f"{state.ref} is a view and has no data to rewrite"))
    blockers += data_work_blockers(metastore, state, operation=RULE, rewrite=True)
    blockers += datasource_rewrite_blockers(state, convert=isinstance(spec, ConvertFormat), operation=RULE)
    if not state.is_partitioned:  # its root moves: Spark's path must be that root
        blockers += datasource_move_blockers(state, RULE)
    if spec.partitions and not state.is_partitioned:
        blockers.append(Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned"))
    elif spec.partitions:
        blockers += predicate_blockers(state, spec)  # type: ignore[arg-type]  # it reads only .specs
    if isinstance(spec, CompactFiles):
        blockers += _criteria_blockers(spec)
    elif spec.file_format.lower() not in FORMATS:
        blockers.append(Finding("unknown_format", RULE, f"{spec.file_format} is not one of PARQUET, ORC, AVRO."))
    if state.location and filesystem_for(state.location, metastore.name).exists(state.location) is None:
        blockers.append(
            Finding("unreachable_filesystem", RULE, f"The console has no client for {state.location}: configure it "
                    "(README, filesystems).")
        )  # fmt: skip
    return blockers


def _criteria_blockers(spec: CompactFiles) -> list[Finding]:
    checked = {"min_files": spec.min_files, "max_average_bytes": spec.max_average_bytes,
               "target_file_bytes": spec.target_file_bytes}  # fmt: skip
    return [
        Finding("invalid_parameter", RULE, f"{name} must be a positive whole number, not {value!r}.")
        for name, value in checked.items()
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1)
    ]


def _in_scope(
    metastore: Metastore, state: TableState, spec: RewriteSpec, blockers: list[Finding]
) -> tuple[list[dict], dict | None]:
    """The storage descriptors in scope: ``{id (partition or None), name, sd_id, serde_id, location, input_format,
    serde}``, and how the scope digest finds the partitions again."""
    if blockers:
        return [], None
    fields = ("id", "name", "sd_id", "sd__serde_id", "sd__location", "sd__input_format", "sd__serde__slib")
    if not state.is_partitioned:
        row = {"id": None, "name": "", "sd_id": state.sd_id, "sd__serde_id": state.serde_id,
               "sd__location": state.location, "sd__input_format": state.input_format,
               "sd__serde__slib": state.serde_lib}  # fmt: skip
        return [_row(row)], None
    partitions = Partition.objects.using(metastore.alias).filter(table_id=state.table_id)
    if spec.partitions:
        ids = [r["id"] for r in matching_partitions(metastore, state, spec)]  # type: ignore[arg-type]
        partitions = partitions.filter(id__in=ids)
    rows = [_row(r) for r in partitions.order_by("name").values(*fields)]
    return rows, {"ids": sorted(r["id"] for r in rows)}


def _row(values: dict) -> dict:
    return {
        "id": values["id"], "name": values["name"], "sd_id": values["sd_id"], "serde_id": values["sd__serde_id"],
        "location": values["sd__location"] or "", "input_format": values["sd__input_format"],
        "serde": values["sd__serde__slib"],
    }  # fmt: skip


def _listed(metastore: Metastore, rows: list[dict]) -> dict[str, list[FileEntry]]:
    """The visible files of each row's directory, by location (every one listed: the criteria and the program need
    it)."""
    listed = {}
    for row in rows:
        location = canonical(row["location"])
        files = filesystem_for(location, metastore.name).list_files(location) or []
        listed[row["location"]] = [f for f in files if not is_hidden(f.relative)]
    return listed


def _selected(spec: RewriteSpec, rows: list[dict], listed: dict[str, list[FileEntry]]) -> list[dict]:
    """Rows with data; for a compaction, only those with more than one file and meeting its criteria."""
    kept = []
    for row in rows:
        entries = listed.get(row["location"], [])
        files, size = len(entries), sum(f.size for f in entries)
        if isinstance(spec, CompactFiles):
            many = spec.min_files is None or files > spec.min_files
            small = spec.max_average_bytes is None or (files and size / files < spec.max_average_bytes)
            criteria = (spec.min_files is None and spec.max_average_bytes is None) or (
                (spec.min_files is not None and many) or (spec.max_average_bytes is not None and small)
            )
            target = spec.target_file_bytes or settings.CATALOG_COMPACT_TARGET_FILE_BYTES
            fewer = max(1, -(-size // target)) < files  # the rewrite writes fewer files than there are
            if files > 1 and criteria and fewer:
                kept.append(row)
        elif files:  # a convert: a partition without files keeps its descriptor (nothing there to convert)
            kept.append(row)
    return kept


def _nothing_message(state: TableState, spec: RewriteSpec) -> str:
    if isinstance(spec, CompactFiles):
        return (
            f"No directory of {state.ref} in scope holds more than one file meeting the criteria: nothing to compact."
        )
    return f"Nothing of {state.ref} is in scope: no partition matches."


def _format_blockers(state: TableState, spec: RewriteSpec, rows: list[dict]) -> list[Finding]:
    blockers = []
    formats = {r["name"] or TABLE_UNIT: source_format(r["input_format"], r["serde"]) for r in rows}
    unknown = [name for name, found in formats.items() if not found]
    if unknown:
        blockers.append(
            Finding("unsupported_format", RULE, f"{len(unknown)} location(s) are in a format the console cannot "
                    f"rewrite (first: {unknown[0]}); it rewrites Parquet, ORC, Avro and LazySimpleSerDe text.")
        )  # fmt: skip
    if isinstance(spec, CompactFiles) and "sequencefile" in formats.values():
        blockers.append(
            Finding("unsupported_format", RULE, "SequenceFile partitions are not compacted: convert them (SET "
                    "FILEFORMAT PARQUET|ORC WITH DATA), which writes fewer, larger files too.")
        )  # fmt: skip
    if isinstance(spec, ConvertFormat):
        target = spec.file_format.lower()
        unreadable = [n for n, found in formats.items() if found and found not in CONVERTIBLE_FROM]
        if unreadable:
            blockers.append(
                Finding("unsupported_conversion", RULE, f"{unreadable[0]} is {formats[unreadable[0]]}: the console "
                        f"converts from {', '.join(CONVERTIBLE_FROM)} only.")
            )  # fmt: skip
        if "avro" in {*formats.values(), target}:  # Avro rows go through fastavro: primitive columns only
            complex_columns = [c.name for c in state.columns if c.type.split("(")[0].lower() not in PRIMITIVE]
            if complex_columns:
                blockers.append(
                    Finding("unsupported_conversion", RULE, f"Column {complex_columns[0]} is not a primitive type: "
                            "the console converts to and from Avro tables of primitive columns only.")
                )  # fmt: skip
    return blockers


def _unit(state: TableState, token: str, row: dict) -> CopyUnit:
    destination, retained = staged(state, token, row["location"])
    return CopyUnit(
        row["name"] or TABLE_UNIT, canonical(row["location"]), destination,
        source_format(row["input_format"], row["serde"]), row["sd_id"], row["id"], retained,
    )  # fmt: skip


def job_kind(spec: RewriteSpec) -> str:
    """The job kind that runs the rewrite: ``compact`` or ``convert``."""
    return JobKind.CONVERT if isinstance(spec, ConvertFormat) else JobKind.COMPACT


def _data_copy(metastore: Metastore, units: list[CopyUnit], listed: dict[str, list[FileEntry]], kind: str) -> DataCopy:
    """The units with their exact size and small-file histogram (every one was listed), and the duration from earlier
    jobs of the same kind (compact or convert) on the same engine."""
    by_source = {canonical(location): entries for location, entries in listed.items()}
    scope = scope_of(metastore, [by_source.get(u.source, []) for u in units], units=len(units),
                     ends=[units[0].source, units[0].destination])  # fmt: skip
    duration = estimate_duration(kind, scope.bytes, units=len(units), work="rewrite")
    return DataCopy(
        units=tuple(units), files=scope.files, bytes=scope.bytes, sampled_units=len(units),
        sample_files=scope.files, sample_bytes=scope.bytes, estimated_seconds=duration.seconds,
        retention_hours=settings.CATALOG_RELOCATION_RETENTION.total_seconds() / 3600, scope=scope, duration=duration,
    )  # fmt: skip


# Statements ----------------------------------------------------------------------------------------------------------


def _steps(
    sql: MetastoreSql, state: TableState, spec: RewriteSpec, rows: list[dict], units: list[CopyUnit], table_sd: bool
) -> list[Step]:
    """Set-based, in chunks: a convert's storage descriptors re-formatted (their locations stay: the swap's moves put
    the new data there), its SerDes switched and their text-only parameters dropped, then the basic statistics of
    what was written (``rewrite_stats``). Each update or delete first captures the old rows (the before-image a
    revert writes back)."""
    convert = spec.file_format.lower() if isinstance(spec, ConvertFormat) else ""
    by_sd = {u.sd_id: u for u in units}
    steps = (
        [_format_step(sql, [by_sd[sd] for sd in chunk], convert) for chunk in chunks(list(by_sd))] if convert else []
    )
    if convert and table_sd and state.is_partitioned and state.sd_id is not None:
        steps.append(_table_format_step(sql, state, convert))
    if convert:
        serde_ids = [r["serde_id"] for r in rows if r["serde_id"] is not None]
        if table_sd and state.is_partitioned and state.serde_id is not None:
            serde_ids.append(state.serde_id)
        for chunk in chunks(serde_ids):
            steps += _serde_steps(sql, chunk, FORMATS[convert][2])
    partitions = [u for u in units if u.partition_id is not None]
    accurate = current_accurate(sql.connection.alias, PartitionParam, "partition", [u.partition_id for u in partitions])
    for chunk in chunks(partitions):
        owners = [(u.partition_id, u.key, convert or u.source_format) for u in chunk]
        steps += stats_steps(sql, PartitionParam, "partition", owners, accurate)
    if not state.is_partitioned:
        owners = [(state.table_id, units[0].key, convert or units[0].source_format)]
        steps += stats_steps(sql, TableParam, "table", owners, {state.table_id: state.params.get(ACCURATE)})
    return steps


def _format_step(sql: MetastoreSql, units: list[CopyUnit], convert: str) -> Step:
    sds, sd_id = sql.table(StorageDescriptor), sql.col(StorageDescriptor, "id")
    input_format, output_format = sql.col(StorageDescriptor, "input_format"), sql.col(
        StorageDescriptor, "output_format")  # fmt: skip
    where = f"{sd_id} IN ({', '.join(['%s'] * len(units))})"
    ids = tuple(u.sd_id for u in units)
    return Step(
        f"Switch {len(units)} storage descriptor(s) of the rewritten directories to {convert.upper()}", "SDS",
        "update", f"UPDATE {sds} SET {input_format} = %s, {output_format} = %s WHERE {where}",
        (*FORMATS[convert][:2], *ids), len(units), f"SELECT {sd_id}, {input_format}, {output_format} FROM {sds} "
        f"WHERE {where}", ids,
    )  # fmt: skip


def _table_format_step(sql: MetastoreSql, state: TableState, convert: str) -> Step:
    """A partitioned table's own descriptor: its formats (new partitions are created in them), not its root."""
    sds, sd_id = sql.table(StorageDescriptor), sql.col(StorageDescriptor, "id")
    input_format, output_format = sql.col(StorageDescriptor, "input_format"), sql.col(
        StorageDescriptor, "output_format")  # fmt: skip
    return Step(
        f"Switch the table's storage descriptor to {convert.upper()}", "SDS", "update",
        f"UPDATE {sds} SET {input_format} = %s, {output_format} = %s WHERE {sd_id} = %s",
        (*FORMATS[convert][:2], state.sd_id), 1,
        f"SELECT {sd_id}, {input_format}, {output_format} FROM {sds} WHERE {sd_id} = %s", (state.sd_id,),
    )  # fmt: skip


def _serde_steps(sql: MetastoreSql, serde_ids: list[int], serde_lib: str) -> list[Step]:
    serdes, serde_id, slib = sql.table(SerDe), sql.col(SerDe, "id"), sql.col(SerDe, "slib")
    params_table, param_serde, param_key = sql.table(SerDeParam), sql.col(SerDeParam, "serde"), sql.col(
        SerDeParam, "key")  # fmt: skip
    where = f"{serde_id} IN ({', '.join(['%s'] * len(serde_ids))})"
    keys = f"{param_key} IN ({', '.join(['%s'] * len(TEXT_SERDE_PARAMS))})"
    return [
        Step(f"Switch {len(serde_ids)} SerDe(s) to {serde_lib}", "SERDES", "update",
             f"UPDATE {serdes} SET {slib} = %s WHERE {where}", (serde_lib, *serde_ids), len(serde_ids),
             f"SELECT {serde_id}, {slib} FROM {serdes} WHERE {where}", tuple(serde_ids)),
        Step("Drop the text SerDe's parameters (delimiters, null format) from them", "SERDE_PARAMS", "delete",
             f"DELETE FROM {params_table} WHERE {param_serde} IN ({', '.join(['%s'] * len(serde_ids))}) AND {keys}",
             (*serde_ids, *TEXT_SERDE_PARAMS), -1),
    ]  # fmt: skip


# Findings for the steward --------------------------------------------------------------------------------------------


def _after(state: TableState, spec: RewriteSpec, units: list[CopyUnit], table_sd: bool):  # noqa: ANN202
    changes: dict[str, object] = {}
    if isinstance(spec, ConvertFormat) and table_sd and spec.file_format.lower() in FORMATS:
        input_format, output_format, serde = FORMATS[spec.file_format.lower()]
        kept = tuple((k, v) for k, v in sorted(state.serde_params.items()) if k not in TEXT_SERDE_PARAMS)
        changes.update(input_format=input_format, output_format=output_format, serde_lib=serde, serde_params=kept)
    return snapshot(state, **changes)


def _warnings(state: TableState, spec: RewriteSpec, data_copy: DataCopy | None, left_out: int) -> list[Finding]:
    warnings = data_work_warnings(state, RULE)
    if left_out and data_copy is not None:
        why = "hold no file" if isinstance(spec, ConvertFormat) else "hold too few files or miss the criteria"
        warnings.append(
            Finding("left_as_they_are", RULE, f"{left_out} partition(s) in scope {why}: they are left as they are.",
                    "warning")
        )  # fmt: skip
    if data_copy is not None:
        target = getattr(spec, "target_file_bytes", None) or settings.CATALOG_COMPACT_TARGET_FILE_BYTES
        warnings.append(
            Finding("source_retained", RULE, "The swap moves the old directories to the console's trash (first: "
                    f"{data_copy.units[0].retained}) and the new ones into their places; the old ones are kept for "
                    f"{data_copy.retention_hours:g} hour(s) (revert swaps back meanwhile), then removed by the "
                    f"relocation cleanup. New files are about {target} bytes each.", "warning")
        )  # fmt: skip
    return warnings


def _hive(metastore: Metastore, spec: RewriteSpec) -> HiveComparison:
    base = metadata_only_hive(metastore)
    note = (
        "Hive's CONCATENATE merges ORC and RCFile files only, in place (ALTER TABLE … CONCATENATE, MergeFileTask)."
        if isinstance(spec, CompactFiles)
        else "Hive's SET FILEFORMAT changes metadata only: the existing files become unreadable in the new format."
    )
    return HiveComparison(base.version, 0, 0, base.estimated_seconds, notes=(note,), comparable=False)


# Hive's metadata-only SET FILEFORMAT ---------------------------------------------------------------------------------


def plan_set_file_format(metastore: Metastore, state: TableState, spec: SetFileFormat) -> Preview:
    """``[PARTITION (…)] SET FILEFORMAT x``: one storage descriptor's formats and SerDe, as Hive's DDLTask writes them
    (``alterTable`` with ``AlterTableTypes.ADDFILEFORMAT``: input/output format and serialization lib, nothing else).
    Blocked where the descriptor's location holds files in another format: they would become unreadable."""
    target = spec.file_format.lower()
    blockers = _replication_blockers(metastore, state)
    if state.is_view:
        blockers.append(Finding("view_rewrite", "ddl", f"{state.ref} is a view and has no file format"))
    if target not in FORMATS:
        blockers.append(Finding("unknown_format", RULE, f"{spec.file_format} is not one of PARQUET, ORC, AVRO."))
    row = _set_format_row(metastore, state, spec, blockers)
    if (
        row is not None
        and not blockers
        and row["sd_id"] is not None
        and (row["id"] is not None or not state.is_partitioned)
    ):
        files = len(_listed(metastore, [row]).get(row["location"], []))
        found = source_format(row["input_format"], row["serde"])
        if files and found != target:
            where = f"partition {row['name']}" if row["id"] is not None else str(state.ref)
            blockers.append(
                Finding("files_unreadable", RULE, f"{where} holds {files} file(s) in {found or 'another format'} at "
                        f"{row['location']}: after SET FILEFORMAT {spec.file_format.upper()} readers would fail on "
                        f"them. Write SET FILEFORMAT {spec.file_format.upper()} WITH DATA to convert them (a Spark "
                        "job), or point the table at data in that format first.")
            )  # fmt: skip
    steps: list[Step] = []
    if row is not None and not blockers and row["sd_id"] is not None:
        sql = MetastoreSql(metastore.alias)
        fake = replace(state, sd_id=row["sd_id"])
        steps = [_table_format_step(sql, fake, target)]
        if row["serde_id"] is not None:
            steps.append(_serde_steps(sql, [row["serde_id"]], FORMATS[target][2])[0])
    warnings = []
    if state.is_partitioned and not spec.partition:
        warnings.append(Finding("partitions_keep_format", RULE, "Existing partitions keep their own format (as in "
                                "Hive); only partitions added later use the new one.", "warning"))  # fmt: skip
    partition_id = row["id"] if row is not None else None
    after = snapshot(state)
    if not spec.partition and target in FORMATS:
        input_format, output_format, serde = FORMATS[target]
        after = snapshot(state, input_format=input_format, output_format=output_format, serde_lib=serde)
    preview = build_preview(
        metastore, state, spec, steps=steps, after=after, blockers=blockers, warnings=warnings,
        partitions_touched=1 if partition_id is not None else 0, hive=metadata_only_hive(metastore),
        inverse={"partition_id": partition_id},
    )  # fmt: skip
    scope = read_partition_scope(metastore, state.table_id, {"ids": [partition_id]}) if partition_id else None
    return replace(preview, scope=scope)


def _set_format_row(
    metastore: Metastore, state: TableState, spec: SetFileFormat, blockers: list[Finding]
) -> dict | None:
    if not spec.partition:
        return _row({"id": None, "name": "", "sd_id": state.sd_id, "sd__serde_id": state.serde_id,
                     "sd__location": state.location, "sd__input_format": state.input_format,
                     "sd__serde__slib": state.serde_lib})  # fmt: skip
    if not state.is_partitioned:
        blockers.append(Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned"))
        return None
    predicates = tuple(PartitionPredicate(k, "=", v) for k, v in spec.partition)
    selection = CompactFiles(target=spec.target, partitions=predicates)
    blockers += predicate_blockers(state, selection)  # type: ignore[arg-type]
    if blockers:
        return None
    rows, _selection = _in_scope(metastore, state, selection, [])
    if len(rows) != 1:
        blockers.append(Finding("partition_not_found", "ddl", f"No partition {spec.partition} in {state.ref}"))
        return None
    return rows[0]
