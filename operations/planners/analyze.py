"""
``ANALYZE TABLE … COMPUTE STATISTICS [NOSCAN | FOR COLUMNS …]`` as a data job: the analyze program
(``operations/spark/programs/analyze.py``) reads each partition's files (or an unpartitioned table's) on Spark, and
the swap writes the statistics Hive computes, in one metastore transaction, set-based.

What the swap writes, as Hive does:

- ``COMPUTE STATISTICS``: ``numFiles``, ``totalSize`` (visible files only: ``Warehouse.getFileStatusesForSD``, as
  StatsTask.updateQuickStats (2.3) / BasicStatsTask (3.1, 4.0) count them), ``numRows``, ``rawDataSize`` where the
  SerDe's figure is reproduced exactly (Parquet: rows × columns, ``ParquetHiveSerDe``; text: the bytes of each line,
  ``LazySimpleSerDe``'s ``serializedSize``; ORC's reader estimate is not reproduced, so a stale value is removed) and
  ``COLUMN_STATS_ACCURATE`` with ``BASIC_STATS`` true (the column part kept): through ``alterPartitions`` /
  ``alterTable`` (ALTER_PARTITION / ALTER_TABLE events, ``events/planning``).
- ``NOSCAN``: ``numFiles`` and ``totalSize`` from the listing; nothing is read and ``COLUMN_STATS_ACCURATE`` is left
  as it is (the console does not claim a row count it did not count).
- ``FOR COLUMNS``: one ``PART_COL_STATS`` row per partition and column (``TAB_COL_STATS`` for an unpartitioned
  table) in the schema version's columns, encoded as ``ObjectStore.updatePartitionColumnStatistics`` stores them
  through ``StatObjectConverter`` (dates as days since the epoch in the LONG columns, decimals as
  ``BigDecimal.toString`` in the BIG_DECIMAL columns, ``ENGINE`` 'hive' on 4.0; ``BIT_VECTOR`` NULL, and the
  preview's ``ndv_sketch_not_written`` warning says why: :func:`_sketch_warnings`), and ``COLUMN_STATS_ACCURATE``'s
  ``COLUMN_STATS`` with every analyzed column true (``StatsSetupConst.setColumnStatsState``), the basic part kept. A
  partition without files gets no column rows (Hive's rewritten ``compute_stats`` query returns no group for it).

Old rows are deleted first (the before-image a revert writes back) and new ones inserted with :class:`Measured`
placeholders the job's verified manifest fills; the revert deletes what the swap wrote (``inverse["replaced_params"]``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE, parse_stats_accurate
from catalog_admin.locations import FileEntry, filesystem_for, is_hidden
from catalog_admin.models import Partition, PartitionColumnStatistics, PartitionParam, TableColumnStatistics
from catalog_admin.selectors.locations import governed_roots
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobKind
from operations.containment import canonical
from operations.planners.analyze_steps import column_stats_steps, params_steps, replaced_rows, stats_kind
from operations.planners.common import build_preview, metadata_only_hive, snapshot
from operations.planners.data_scope import engine_reach_blockers, estimate_duration, scope_of, symlink_blockers
from operations.planners.partitions.matching import matching_partitions, predicate_blockers
from operations.planners.rewrite import source_format
from operations.preview import TABLE_UNIT, CopyUnit, DataCopy, HiveComparison, Preview, Step
from operations.rules import Finding
from operations.specs import AnalyzeTable
from operations.sql import MetastoreSql
from operations.table_state import TableState, read_partition_scope

__all__ = ("ANALYZABLE_FORMATS", "analyzed_columns", "plan_analyze")

RULE = "analyze"
ANALYZABLE_FORMATS = ("parquet", "orc", "text")


def plan_analyze(metastore: Metastore, state: TableState, spec: AnalyzeTable) -> Preview:
    """The preview of an ANALYZE: the units read, their files and bytes, the estimate, the statements."""
    blockers = _table_blockers(metastore, state, spec)
    columns, skipped = analyzed_columns(state, spec, blockers)
    rows = [] if blockers else _in_scope(metastore, state, spec, columns)
    blockers += _location_blockers(metastore, [r["location"] for r in rows])
    listed = _listed(metastore, rows) if not blockers else {}
    blockers += symlink_blockers(listed.values(), RULE)
    if not rows and not blockers:
        blockers.append(Finding("nothing_to_analyze", RULE, f"No partition of {state.ref} is in scope."))
    if not spec.noscan:
        blockers += _format_blockers(rows)
    units = [_unit(r) for r in rows]
    data_copy = _data_copy(metastore, units, listed) if units else None
    written = _written(spec, units, listed)
    names = [c for c, _t in columns]
    steps = [] if blockers or not written else _steps(metastore, state, spec, written, columns)
    partition_ids = [u.partition_id for u in written if u.partition_id is not None]
    replaced = replaced_rows(state, spec, written, names) if steps else {}
    warnings = _warnings(skipped) + _sketch_warnings(metastore, state, spec)
    preview = build_preview(
        metastore, state, spec, steps=steps, after=snapshot(state), blockers=blockers,
        warnings=warnings, partitions_touched=len(partition_ids), hive=_hive(metastore),
        inverse={"analyze": True, "columns": names, "replaced_params": replaced}, data_copy=data_copy,
    )  # fmt: skip
    if not partition_ids:
        return preview
    return replace(preview, scope=read_partition_scope(metastore, state.table_id, {"ids": sorted(partition_ids)}))


def analyzed_columns(
    state: TableState, spec: AnalyzeTable, blockers: list[Finding]
) -> tuple[list[tuple[str, str]], list[str]]:
    """``[(name, type)]`` whose statistics are computed, and the columns left out (types Hive keeps no statistics
    of here); an explicit column that is unknown, a partition key or of such a type is a blocker."""
    if spec.columns is None:
        return [], []
    by_name = {c.name.lower(): c.type.lower() for c in state.columns}
    keys = {k.name.lower() for k in state.partition_keys}
    wanted = list(spec.columns) or list(by_name)
    chosen, skipped = [], []
    for name in wanted:
        if name in keys:
            blockers.append(Finding("partition_column_stats", RULE, f"{name} is a partition key: Hive keeps no column "
                                    "statistics of partition keys (ColumnStatsSemanticAnalyzer)."))  # fmt: skip
        elif name not in by_name:
            blockers.append(Finding("column_not_found", RULE, f"{state.ref} has no column {name}."))
        elif stats_kind(by_name[name]) is None:
            skipped.append(name)
        else:
            chosen.append((name, by_name[name]))
    if spec.columns and skipped:
        blockers.append(Finding("unsupported_column_type", RULE, f"Column {skipped[0]} is {by_name[skipped[0]]}: the "
                                "console computes statistics of primitive columns other than timestamps."))  # fmt: skip
    return chosen, skipped


# Scope ---------------------------------------------------------------------------------------------------------------


def _table_blockers(metastore: Metastore, state: TableState, spec: AnalyzeTable) -> list[Finding]:
    blockers = []
    if state.is_view:
        blockers.append(Finding("view_analyze", "ddl", f"{state.ref} is a view: it has no data to analyze."))
    if state.is_transactional:
        blockers.append(Finding("transactional_analyze", RULE, f"{state.ref} is transactional: its rows are what "
                                "Hive's write ids make visible of its base_/delta_ directories "
                                "(AcidUtils.getAcidState); run ANALYZE in Hive."))  # fmt: skip
    if spec.partitions and not state.is_partitioned:
        blockers.append(Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned"))
    elif spec.partitions:
        blockers += predicate_blockers(state, spec)  # type: ignore[arg-type]  # it reads only .specs
    return blockers


def _in_scope(
    metastore: Metastore, state: TableState, spec: AnalyzeTable, columns: list[tuple[str, str]]
) -> list[dict]:
    """The directories read: ``{id, name, sd_id, location, format, params}`` (a partition's, or the table's)."""
    if not state.is_partitioned:
        row: dict[str, Any] = {"id": None, "name": "", "sd_id": state.sd_id, "location": state.location or "",
               "format": source_format(state.input_format, state.serde_lib), "accurate": state.params.get(
                   COLUMN_STATS_ACCURATE)}  # fmt: skip
        return [row] if not spec.only_stale or _stale(row["accurate"], spec, columns) else []
    partitions = Partition.objects.using(metastore.alias).filter(table_id=state.table_id)
    if spec.partitions:
        partitions = partitions.filter(id__in=[r["id"] for r in matching_partitions(metastore, state, spec)])  # type: ignore[arg-type]
    fields = ("id", "name", "sd_id", "sd__location", "sd__input_format", "sd__serde__slib")
    found = list(partitions.order_by("name").values(*fields))
    accurate = dict(
        PartitionParam.objects.using(metastore.alias)
        .filter(partition_id__in=[r["id"] for r in found], key=COLUMN_STATS_ACCURATE)
        .values_list("partition_id", "value")
    ) if found else {}  # fmt: skip
    rows = [
        {"id": r["id"], "name": r["name"], "sd_id": r["sd_id"], "location": r["sd__location"] or "",
         "format": source_format(r["sd__input_format"], r["sd__serde__slib"]), "accurate": accurate.get(r["id"])}
        for r in found
    ]  # fmt: skip
    return [r for r in rows if _stale(r["accurate"], spec, columns)] if spec.only_stale else rows


def _stale(accurate: str | None, spec: AnalyzeTable, columns: list[tuple[str, str]]) -> bool:
    """Whether Hive does not mark what ``spec`` computes accurate: the basic statistics, or one of the columns."""
    flags = parse_stats_accurate(accurate)
    if spec.columns is None:
        return str(flags.get("BASIC_STATS", "")).lower() != "true"
    marked = flags.get("COLUMN_STATS")
    marked = marked if isinstance(marked, dict) else {}
    return any(str(marked.get(name, "")).lower() != "true" for name, _type in columns)


def _location_blockers(metastore: Metastore, locations: list[str]) -> list[Finding]:
    """Directories outside the governed roots are not read; a filesystem the job cannot reach refuses it."""
    roots = governed_roots(metastore)
    outside = [loc for loc in locations if loc and not roots.contains(loc)]
    blockers = engine_reach_blockers(metastore, [loc for loc in locations if loc][:1], RULE)
    if outside:
        blockers.append(Finding("outside_roots", RULE, f"{len(outside)} location(s) are outside the directories "
                                f"this console governs ({roots.describe()}; first: {outside[0]}): they are not "
                                "read."))  # fmt: skip
    missing = [loc for loc in locations if not loc]
    if missing:
        blockers.append(Finding("no_location", RULE, f"{len(missing)} storage descriptor(s) have no location."))
    return blockers


def _listed(metastore: Metastore, rows: list[dict]) -> dict[str, list[FileEntry]]:
    """The visible files of each directory (Hive's stats skip hidden ones: ``FileUtils.HIDDEN_FILES_PATH_FILTER``)."""
    listed = {}
    for row in rows:
        location = canonical(row["location"])
        files = filesystem_for(location, metastore.name).list_files(location) or []
        listed[location] = [f for f in files if not is_hidden(f.relative)]
    return listed


def _format_blockers(rows: list[dict]) -> list[Finding]:
    unknown = [r["name"] or TABLE_UNIT for r in rows if r["format"] not in ANALYZABLE_FORMATS]
    if not unknown:
        return []
    return [Finding("unsupported_format", RULE, f"{len(unknown)} location(s) are in a format the console does not "
                    f"read for statistics (first: {unknown[0]}); it reads Parquet, ORC and LazySimpleSerDe text. "
                    "NOSCAN needs no reading.")]  # fmt: skip


def _unit(row: dict) -> CopyUnit:
    location = canonical(row["location"])
    return CopyUnit(row["name"] or TABLE_UNIT, location, location, row["format"], row["sd_id"], row["id"])


def _data_copy(metastore: Metastore, units: list[CopyUnit], listed: dict[str, list[FileEntry]]) -> DataCopy:
    """What the job reads, exactly (every unit listed), and the duration from earlier analyze jobs on the engine."""
    scope = scope_of(metastore, [listed.get(u.source, []) for u in units], units=len(units),
                     ends=[units[0].source, units[0].source])  # fmt: skip
    duration = estimate_duration(JobKind.ANALYZE, scope.bytes, units=len(units), work="scan")
    return DataCopy(
        units=tuple(units), files=scope.files, bytes=scope.bytes, sampled_units=len(units), sample_files=scope.files,
        sample_bytes=scope.bytes, estimated_seconds=duration.seconds, scope=scope, duration=duration,
    )  # fmt: skip


# Statements ----------------------------------------------------------------------------------------------------------


def _written(spec: AnalyzeTable, units: list[CopyUnit], listed: dict[str, list[FileEntry]]) -> list[CopyUnit]:
    """The units whose statistics are written: all of them, but for column statistics only those with files (Hive's
    rewritten ``compute_stats`` query has no group for a partition without rows: its rows and flags stay)."""
    if spec.columns is None:
        return units
    return [u for u in units if listed.get(u.source)]


def _steps(
    metastore: Metastore, state: TableState, spec: AnalyzeTable, units: list[CopyUnit],
    columns: list[tuple[str, str]],
) -> list[Step]:  # fmt: skip
    sql = MetastoreSql(metastore.alias)
    steps = params_steps(sql, state, spec, units, [c for c, _t in columns])
    if spec.columns is not None:
        steps += column_stats_steps(metastore, sql, state, units, columns)
    return steps


def _warnings(skipped: list[str]) -> list[Finding]:
    if not skipped:
        return []
    return [Finding("columns_left_out", RULE, f"{len(skipped)} column(s) are of types the console keeps no statistics "
                    f"of (complex types, timestamps): {', '.join(skipped[:10])}.", "warning")]  # fmt: skip


def _sketch_warnings(metastore: Metastore, state: TableState, spec: AnalyzeTable) -> list[Finding]:
    """``FOR COLUMNS`` on a schema with ``BIT_VECTOR`` (3.0+): Hive writes its HyperLogLog sketch there and the sketch's
    estimate as ``NUM_DISTINCTS``; the console writes NULL and the exact count, and says why (README, "Statistics").

    Read in apache/hive: ``HyperLogLog.count`` subtracts ``estimateBias`` (k nearest neighbours in
    ``HLLConstants.rawEstimateData``/``biasData``) from a dense estimate up to 5·m unless linear counting is below
    ``thresholdData`` (standalone-metastore/metastore-server/…/ndv/hll/HyperLogLog.java @ 0c4f8fc112b6); the 3.x layout
    hashes ``ByteBuffer.putLong`` bytes with ``Murmur3.hash64(byte[])`` (standalone-metastore/src/main/java/…/
    HyperLogLog.java @ 9682efabf2eb) and keeps a ``TreeMap`` of sparse registers (HLLSparseRegister.java @
    4cfc692b7e04), the current source a ``HashMap`` that ``HyperLogLogUtils.serializeHLL`` writes delta-encoded in
    iteration order (HLLSparseRegister.java @ 0c4f8fc112b6, HyperLogLogUtils.java @ 1a748a70c041). pyspark's Hive 2.3.10
    jars hold no HyperLogLog class to check bytes against."""
    model = PartitionColumnStatistics if state.is_partitioned else TableColumnStatistics
    if spec.columns is None or not metastore.schema.has(model, "bit_vector"):
        return []
    return [Finding("ndv_sketch_not_written", RULE, "BIT_VECTOR is left NULL and NUM_DISTINCTS is the exact distinct "
                    "count, where Hive writes its HyperLogLog sketch and the sketch's estimate: Hive's dense estimate "
                    "corrects its bias from HLLConstants' empirical tables, which the console does not have, and no "
                    "Hive 3/4 is here to check the sketch's bytes against. Hive's planner then combines partitions' "
                    "distinct counts without sketches, by its density estimate.", "warning")]  # fmt: skip


def _hive(metastore: Metastore) -> HiveComparison:
    base = metadata_only_hive(metastore)
    note = "Hive's ANALYZE runs a query over the same files (MapReduce/Tez); the console runs it as a Spark job."
    return HiveComparison(base.version, 0, 0, base.estimated_seconds, notes=(note,), comparable=False)
