"""
Partition changes: ``PARTITION (…) RENAME TO PARTITION (…)`` (rule 17) and ``DROP PARTITION`` by spec
or by range of values.

A renamed partition of a managed table moves to its new directory (rule 17.3–17.4): the table's path plus the new
name, under the scheme and authority of the partition's own location, as Hive's ``constructRenamedPath``. It keeps
its statistics. Dropped partitions are deleted with every dependent row in FK order, by the ids the preview
pinned; execution keeps the deleted rows in the before-image, and the data of managed tables goes to a
recoverable trash directory, never deleted outright (not even with PURGE).

On a transactional table the partition's ACID bookkeeping follows Hive's AcidEventListener. A rename re-labels the
rows that carry the old partition name (``TxnHandler.onRename``: TXN_COMPONENTS, COMPLETED_TXN_COMPONENTS,
HIVE_LOCKS, COMPACTION_QUEUE, COMPLETED_COMPACTIONS, WRITE_SET and, on 4.x, COMPACTION_METRICS_CACHE); a drop deletes
what ``cleanupRecords(PARTITION)`` deletes (the same without HIVE_LOCKS and WRITE_SET, which Hive leaves to its
AcidHouseKeeperService). Like the table rename, the console does this on 2.3 too.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from django.db.models import BigIntegerField, Exists, OuterRef, Q
from django.db.models.functions import Cast

from catalog_admin.hive.partition_names import partition_name
from catalog_admin.locations import filesystem_for, is_under, normalize_location
from catalog_admin.models import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    HiveLock,
    Partition,
    PartitionColumnPrivilege,
    PartitionColumnStatistics,
    PartitionKeyValue,
    PartitionParam,
    PartitionPrivilege,
    SerDe,
    SerDeParam,
    SkewedColumnName,
    SkewedColumnValueLocation,
    SkewedValue,
    SortColumn,
    StorageDescriptor,
    StorageDescriptorParam,
    TransactionComponent,
    WriteSetEntry,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import ACID_BOOKKEEPING, acid_warnings, build_preview, hive_seconds, snapshot
from operations.planners.locations import resolve_partition
from operations.planners.rename_destination import with_scheme_of
from operations.preview import DirectoryMove, HiveComparison, Preview, Step
from operations.rules import Finding
from operations.specs import DropPartitions, PartitionPredicate, RenamePartition, TableRef
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "PARTITION_BOOKKEEPING",
    "TRASH_DIR",
    "bookkeeping_names_in_use",
    "partition_bookkeeping",
    "plan_drop_partitions",
    "plan_rename_partition",
    "relabel_bookkeeping_steps",
)

TRASH_DIR = ".catalog-admin-trash"
CHUNK = 5000
INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
# The ACID bookkeeping that carries partition names, in onRename's order (TXN_TO_WRITE_ID and NEXT_WRITE_ID carry only
# the table's). cleanupRecords(PARTITION) deletes from all of them but HIVE_LOCKS and WRITE_SET.
PARTITION_BOOKKEEPING = tuple(
    m for m in ACID_BOOKKEEPING if any(f.name == "partition" for f in m._meta.concrete_fields)
)
DROPPED_BOOKKEEPING = (
    TransactionComponent,
    CompletedTransactionComponent,
    CompactionQueueEntry,
    CompletedCompaction,
    CompactionMetric,
)
LEFT_TO_HOUSEKEEPING = (HiveLock, WriteSetEntry)


# Rename ----------------------------------------------------------------------------------------


def plan_rename_partition(metastore: Metastore, state: TableState, spec: RenamePartition) -> Preview:
    partition, blockers = resolve_partition(metastore, state, spec.partition)
    blockers = [_old_partition_missing(state, spec, finding) for finding in blockers]
    keys = [k.name for k in state.partition_keys]
    new_values = dict(spec.new_partition)
    if sorted(new_values) != sorted(keys):
        blockers.append(
            Finding("partition_spec", "17.2", f"The new partition must name exactly the keys {', '.join(keys)}")
        )
    if blockers or partition is None:
        return build_preview(metastore, state, spec, steps=[], after=snapshot(state), blockers=blockers)
    values = [new_values[k] for k in keys]
    new_name = partition_name(zip(keys, values, strict=True))
    exists = _new_partition_exists(metastore, state, new_name, values)
    # Refused when the new partition exists: the bookkeeping under its name is its own.
    blockers += exists or _bookkeeping_in_use(metastore, state, new_name)
    destination = _renamed_partition_location(metastore, state, partition["location"], new_name)
    if destination and not all(values):
        blockers.append(_incorrect_spec(keys, values))
        destination = None
    move, move_blockers = _partition_move(metastore, state, partition["location"], destination)
    blockers += move_blockers
    sql = MetastoreSql(metastore.alias)
    steps = _rename_partition_steps(metastore, sql, state, partition, new_name, values, destination)
    if state.is_transactional:
        steps += relabel_bookkeeping_steps(metastore, sql, state.ref, partition["name"], new_name)
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=acid_warnings(metastore, state) + _rename_warnings(partition["location"], destination, move),
        moves=(move,) if move else (),
        partitions_touched=1,
        statistics_moved=sum(s.expected_rows for s in steps if s.metastore_table == "PART_COL_STATS"),
        hive=HiveComparison(str(metastore.schema.version), 1, 0, hive_seconds(1, 0)),
        inverse={
            "partition": {**partition, "values": [dict(spec.partition)[k] for k in keys]},
            "new_name": new_name,
            "acid": state.is_transactional,  # whether the bookkeeping was re-labelled (and a revert re-labels it back)
        },
    )


def _new_partition_exists(metastore: Metastore, state: TableState, name: str, values: list[str]) -> list[Finding]:
    """Rule 17.2: no partition may have the new values (Hive looks it up by the name they make)."""
    if not Partition.objects.using(metastore.alias).filter(table_id=state.table_id, name=name).exists():
        return []
    table = f"{state.ref.database}.{state.ref.table}"
    return [Finding("partition_exists", "17.2", f"Partition already exists:{table}.[{', '.join(values)}]")]


def _bookkeeping_in_use(metastore: Metastore, state: TableState, name: str) -> list[Finding]:
    """ACID bookkeeping that already carries the new name (left by an earlier partition of that name): after the
    rename Hive would take it for the renamed partition's, and a revert could not tell it from the rows the rename
    re-labelled."""
    if not state.is_transactional:
        return []
    return bookkeeping_names_in_use(metastore, state.ref, name, "Hive would take them for the renamed partition's")


def bookkeeping_names_in_use(metastore: Metastore, ref: TableRef, name: str, consequence: str) -> list[Finding]:
    """A blocker per ACID bookkeeping table whose rows already carry partition ``name`` of the table."""
    return [
        Finding(
            "names_in_use",
            "labels",
            f"{rows} row(s) of {model._meta.db_table} already carry the partition name {name} of {ref.database}."
            f"{ref.table} (left by another partition of that name): {consequence}. Remove them first.",
        )
        for model, rows in partition_bookkeeping(metastore, ref, [name]).items()
    ]


def partition_bookkeeping(
    metastore: Metastore, ref: TableRef, names: list[str], models: tuple[type, ...] = PARTITION_BOOKKEEPING
) -> dict[type, int]:
    """How many rows of each ACID bookkeeping table (of ``models`` the schema has) carry one of the table's partition
    ``names``; tables without any are left out."""
    counts = {}
    for model in models:
        if not metastore.schema.has_table(model):
            continue
        rows = 0
        for chunk in _chunks(names):
            rows += (
                model.objects.using(metastore.alias)
                .filter(database=ref.database, table=ref.table, partition__in=chunk)
                .count()
            )
        if rows:
            counts[model] = rows
    return counts


def relabel_bookkeeping_steps(
    metastore: Metastore, sql: MetastoreSql, ref: TableRef, old_name: str, new_name: str
) -> list[Step]:
    """One UPDATE per ACID bookkeeping table with rows that carry ``old_name`` for the table: they take ``new_name``
    (Hive's onRename for a partition)."""
    steps = []
    for model, rows in partition_bookkeeping(metastore, ref, [old_name]).items():
        partition, database, table = (sql.col(model, name) for name in ("partition", "database", "table"))
        steps.append(
            Step(
                f"Keep the partition's {model._meta.db_table} rows under the name {new_name}",
                model._meta.db_table,
                "update",
                f"UPDATE {sql.table(model)} SET {partition} = %s "
                f"WHERE {database} = %s AND {table} = %s AND {partition} = %s",
                (new_name, ref.database, ref.table, old_name),
                rows,
            )
        )
    return steps


def _old_partition_missing(state: TableState, spec: RenamePartition, finding: Finding) -> Finding:
    """Rule 17.2: Hive's wording for an old partition that does not exist."""
    if finding.code != "unknown_partition":
        return finding
    given = dict(spec.partition)
    name = partition_name((k.name, given[k.name]) for k in state.partition_keys)
    return Finding(
        "unknown_partition",
        "17.2",
        f"Unable to rename partition because old partition does not exist: {state.ref} {name}",
    )


def _incorrect_spec(keys: list[str], values: list[str]) -> Finding:
    """Rule 17.4: ``Warehouse.makePartPath`` refuses an empty value for the directory of a partition that moves."""
    spec = ", ".join(f"{key}={value}" for key, value in zip(keys, values, strict=True))
    return Finding("partition_spec", "17.4", f"Partition spec is incorrect. {{{spec}}}")


def _renamed_partition_location(
    metastore: Metastore, state: TableState, location: str | None, new_name: str
) -> str | None:
    """
    Rules 17.3–17.4: where a renamed partition's data goes (None: it stays). ``<table path>/<new name>``, with the
    scheme and authority of the partition's own location (``constructRenamedPath``).
    """
    if not _moves_data(metastore, state) or not state.location:
        return None
    target = f"{state.location.rstrip('/')}/{new_name}"
    return with_scheme_of(location, target) if location else target


def _moves_data(metastore: Metastore, state: TableState) -> bool:
    """
    Rule 17.3: 4.x moves the data unless the table's EXTERNAL parameter is TRUE and TRANSLATED_TO_EXTERNAL is not
    (the table type does not count); 2.3 and 3.1 move it unless the table type is EXTERNAL_TABLE.
    """
    if not metastore.schema.capabilities.partition_move_decided_by_external_parameter:
        return state.table_type != "EXTERNAL_TABLE"
    return not _is_true(state.params, "EXTERNAL") or _is_true(state.params, "TRANSLATED_TO_EXTERNAL")


def _is_true(params: dict[str, str | None], key: str) -> bool:
    """``MetaStoreUtils.isPropertyTrue``: the value is TRUE in any case."""
    return (params.get(key) or "").upper() == "TRUE"


def _partition_move(
    metastore: Metastore, state: TableState, source: str | None, destination: str | None
) -> tuple[DirectoryMove | None, list[Finding]]:
    """
    The directory move of rule 17.4 and what blocks it. Source and destination share a filesystem by construction. An
    existing target blocks the move; on 2.3 (whose HiveAlterHandler checks it first) even when the source is missing.
    """
    if not source or not destination or source == destination:
        return None, []
    source_fs = filesystem_for(source)
    exists = source_fs.exists(source)
    blockers = []
    if exists is None:
        # Hive would move the directory; without a client for the filesystem the console could only repoint the
        # partition at an empty directory.
        blockers.append(
            Finding(
                "filesystem_unreachable",
                "17.4",
                f"The console cannot check or move {source} (no client for its filesystem); rename the partition "
                "with Hive itself.",
            )
        )
    target_exists = filesystem_for(destination).exists(destination)
    if target_exists and (exists or metastore.schema.capabilities.partition_rename_refuses_existing_destination_first):
        blockers.append(
            Finding(
                "destination_exists",
                "17.4",
                f"New location for this table {state.ref.database}.{state.ref.table} already exists : {destination}",
            )
        )
    if not exists:
        return None, blockers
    size = source_fs.tree_size(source)
    move = DirectoryMove(
        source=source,
        destination=destination,
        partitions_moving=1,
        partitions_staying=0,
        files=size.files if size else None,
        bytes=size.bytes if size else None,
        source_exists=exists,
        destination_free=None if target_exists is None else not target_exists,
        same_filesystem=_filesystem(source) == _filesystem(destination),
    )
    return move, blockers


def _rename_partition_steps(
    metastore: Metastore,
    sql: MetastoreSql,
    state: TableState,
    partition: dict,
    new_name: str,
    new_values: list[str],
    destination: str | None,
) -> list[Step]:
    part_id = partition["id"]
    steps = [
        Step(
            "Rename the partition row",
            "PARTITIONS",
            "update",
            # The old name in the condition: a partition renamed since the preview (not in the table's
            # fingerprint) changes no row, and execution refuses the stale preview.
            f"UPDATE {sql.table(Partition)} SET {sql.col(Partition, 'name')} = %s "
            f"WHERE {sql.col(Partition, 'id')} = %s AND {sql.col(Partition, 'name')} = %s",
            (new_name, part_id, partition["name"]),
            1,
        ),
    ]
    for position, value in enumerate(new_values):
        steps.append(
            Step(
                f"Set key value {position} to {value}",
                "PARTITION_KEY_VALS",
                "update",
                f"UPDATE {sql.table(PartitionKeyValue)} SET {sql.col(PartitionKeyValue, 'value')} = %s "
                f"WHERE {sql.col(PartitionKeyValue, 'partition')} = %s "
                f"AND {sql.col(PartitionKeyValue, 'position')} = %s",
                (value, part_id, position),
                1,
            )
        )
    if destination and destination != partition["location"]:
        steps.append(
            Step(
                "Point the partition at its new directory",
                "SDS",
                "update",
                f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'location')} = %s "
                f"WHERE {sql.col(StorageDescriptor, 'id')} = %s",
                (destination, partition["sd_id"]),
                1,
            )
        )
    stats = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id=part_id).count()
    if stats and metastore.schema.has(PartitionColumnStatistics, "partition_name"):
        steps.append(
            Step(
                "Keep the partition's statistics under its new name",
                "PART_COL_STATS",
                "update",
                f"UPDATE {sql.table(PartitionColumnStatistics)} "
                f"SET {sql.col(PartitionColumnStatistics, 'partition_name')} = %s "
                f"WHERE {sql.col(PartitionColumnStatistics, 'partition')} = %s",
                (new_name, part_id),
                stats,
            )
        )
    return steps


def _rename_warnings(source: str | None, destination: str | None, move: DirectoryMove | None) -> list[Finding]:
    if destination and source != destination and move is None:
        return [Finding("source_missing", "17.4", f"{source} does not exist: only the metadata changes.", "warning")]
    return []


# Drop ------------------------------------------------------------------------------------------


def plan_drop_partitions(metastore: Metastore, state: TableState, spec: DropPartitions) -> Preview:
    blockers = _predicate_blockers(state, spec)
    matched = _matching_partitions(metastore, state, spec) if not blockers else []
    if not matched and not blockers and not spec.if_exists:
        blockers.append(
            Finding(
                "no_partition_matches",
                "ddl",
                f"No partition of {state.ref} matches {spec.to_ddl().split(' DROP ', 1)[1]}",
            )
        )
    sql = MetastoreSql(metastore.alias)
    part_ids = [p["id"] for p in matched]
    sd_ids = [p["sd_id"] for p in matched if p["sd_id"]]
    steps = _drop_steps(metastore, sql, part_ids, sd_ids) if matched and not blockers else []
    names = [p["name"] for p in matched]
    if steps and state.is_transactional:
        steps += _bookkeeping_cleanup_steps(metastore, sql, state.ref, names)
    moves = tuple(_trash_moves(state, matched)) if not state.is_external else ()
    if not state.is_external:
        blockers += _unreachable_data_blockers(matched)
    stats = sum(s.expected_rows for s in steps if s.metastore_table == "PART_COL_STATS")
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=acid_warnings(metastore, state)
        + _bookkeeping_warnings(metastore, state, names, steps)
        + _drop_warnings(state, spec, matched, moves),
        moves=moves,
        partitions_touched=len(matched),
        statistics_dropped=stats,
        drops=len(matched),
        hive=HiveComparison(str(metastore.schema.version), len(matched), stats, hive_seconds(len(matched), stats)),
        inverse={
            "dropped_partitions": [p["name"] for p in matched[:100]],
            "count": len(matched),
            "trash": [m.destination for m in moves[:100]],
        },
    )


def _unreachable_data_blockers(matched: list[dict]) -> list[Finding]:
    """Managed data the console cannot move to its trash (hdfs, s3a …) would be orphaned: refuse instead."""
    unreachable = sorted(
        {urlsplit(p["sd__location"]).scheme for p in matched if p["sd__location"] and _unreachable(p["sd__location"])}
    )
    if not unreachable:
        return []
    return [
        Finding(
            "filesystem_unreachable",
            "ddl",
            f"The dropped partitions' data is on {', '.join(unreachable)}, which this console cannot reach: "
            "it could not be moved to the trash.",
        )
    ]


def _unreachable(location: str) -> bool:
    return filesystem_for(location).exists(location) is None


def _predicate_blockers(state: TableState, spec: DropPartitions) -> list[Finding]:
    keys = {k.name for k in state.partition_keys}
    if not keys:
        return [Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned")]
    unknown = sorted({p.key for predicates in spec.specs for p in predicates} - keys)
    if unknown:
        return [
            Finding(
                "unknown_partition_key",
                "ddl",
                f"{', '.join(unknown)} is not a partition key of {state.ref}; keys: {', '.join(sorted(keys))}",
            )
        ]
    return []


def _matching_partitions(metastore: Metastore, state: TableState, spec: DropPartitions) -> list[dict]:
    alias = metastore.alias
    keys = {k.name: (i, k.type) for i, k in enumerate(state.partition_keys)}
    condition = Q()
    for predicates in spec.specs:
        condition |= _all_of(alias, keys, predicates)
    rows = (
        Partition.objects.using(alias)
        .filter(table_id=state.table_id)
        .filter(condition)
        .order_by("name")
        .values("id", "name", "sd_id", "sd__location", "sd__serde_id", "sd__cd_id")
    )
    return list(rows)


def _all_of(alias: str, keys: dict[str, tuple[int, str]], predicates: tuple[PartitionPredicate, ...]) -> Q:
    condition = Q()
    for predicate in predicates:
        position, key_type = keys[predicate.key]
        values = PartitionKeyValue.objects.using(alias).filter(partition_id=OuterRef("id"), position=position)
        if key_type.lower() in INTEGRAL_TYPES and _is_integer(predicate.value):
            values = values.annotate(number=Cast("value", BigIntegerField()))
            values = (
                values.filter(**{f"number{_LOOKUPS[predicate.op]}": int(predicate.value)})
                if predicate.op != "<>"
                else values.exclude(number=int(predicate.value))
            )
        else:
            values = (
                values.filter(**{f"value{_LOOKUPS[predicate.op]}": predicate.value})
                if predicate.op != "<>"
                else values.exclude(value=predicate.value)
            )
        condition &= Q(Exists(values))
    return condition


_LOOKUPS = {"=": "", "<": "__lt", "<=": "__lte", ">": "__gt", ">=": "__gte"}


def _is_integer(value: str) -> bool:
    return value.lstrip("-").isdigit()


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def _drop_steps(metastore: Metastore, sql: MetastoreSql, part_ids: list[int], sd_ids: list[int]) -> list[Step]:
    alias = metastore.alias
    steps: list[Step] = []
    by_partition = [
        PartitionColumnStatistics,
        PartitionParam,
        PartitionKeyValue,
        PartitionPrivilege,
        PartitionColumnPrivilege,
    ]
    by_sd = [
        StorageDescriptorParam,
        BucketingColumn,
        SortColumn,
        SkewedColumnName,
        SkewedColumnValueLocation,
        SkewedValue,
    ]
    for model in by_partition:
        steps += _delete_by_ids(alias, sql, model, "partition", part_ids, "the dropped partitions'")
    steps += _delete_by_ids(alias, sql, Partition, "id", part_ids, "")
    for model in by_sd:
        steps += _delete_by_ids(alias, sql, model, "sd", sd_ids, "their storage descriptors'")
    serde_ids = _unshared(alias, StorageDescriptor, "serde_id", sd_ids)
    cd_ids = _unshared(alias, StorageDescriptor, "cd_id", sd_ids)
    steps += _delete_by_ids(alias, sql, StorageDescriptor, "id", sd_ids, "")
    steps += _delete_by_ids(alias, sql, SerDeParam, "serde", serde_ids, "their SerDes'")
    steps += _delete_by_ids(alias, sql, SerDe, "id", serde_ids, "")
    steps += _delete_by_ids(alias, sql, Column, "cd", cd_ids, "unused descriptors'")
    steps += _delete_by_ids(alias, sql, ColumnDescriptor, "id", cd_ids, "")
    return steps


def _bookkeeping_cleanup_steps(metastore: Metastore, sql: MetastoreSql, ref: TableRef, names: list[str]) -> list[Step]:
    """Hive's cleanupRecords(PARTITION): delete the dropped partitions' rows, by name, from each bookkeeping table
    that has any (execution keeps them in the before-image)."""
    steps = []
    for model in DROPPED_BOOKKEEPING:
        if not metastore.schema.has_table(model):
            continue
        partition, database, table = (sql.col(model, name) for name in ("partition", "database", "table"))
        for chunk in _chunks(names):
            rows = partition_bookkeeping(metastore, ref, chunk, (model,)).get(model, 0)
            if not rows:
                continue
            steps.append(
                Step(
                    f"Delete {rows} {model._meta.db_table} rows (the dropped partitions' ACID bookkeeping)",
                    model._meta.db_table,
                    "delete",
                    f"DELETE FROM {sql.table(model)} WHERE {database} = %s AND {table} = %s "
                    f"AND {partition} IN ({', '.join(['%s'] * len(chunk))})",
                    (ref.database, ref.table, *chunk),
                    rows,
                )
            )
    return steps


def _bookkeeping_warnings(
    metastore: Metastore, state: TableState, names: list[str], steps: list[Step]
) -> list[Finding]:
    """What of the dropped partitions' ACID bookkeeping goes (as in cleanupRecords) and what stays, as in Hive."""
    if not state.is_transactional or not steps:
        return []
    warnings = []
    bookkeeping = {model._meta.db_table for model in DROPPED_BOOKKEEPING}
    deleted: dict[str, int] = {}
    for step in steps:
        if step.metastore_table in bookkeeping:
            deleted[step.metastore_table] = deleted.get(step.metastore_table, 0) + step.expected_rows
    if deleted:
        rows = ", ".join(f"{count} {table}" for table, count in deleted.items())
        warnings.append(
            Finding(
                "acid_cleanup",
                "acid",
                f"The dropped partitions' ACID bookkeeping goes, as Hive's cleanupRecords removes it: {rows} row(s).",
                "warning",
            )
        )
    kept = partition_bookkeeping(metastore, state.ref, names, LEFT_TO_HOUSEKEEPING)
    if kept:
        rows = ", ".join(f"{count} {model._meta.db_table}" for model, count in kept.items())
        warnings.append(
            Finding(
                "acid_housekeeping",
                "acid",
                f"{rows} row(s) of the dropped partitions stay, as in Hive: its AcidHouseKeeperService removes them.",
                "warning",
            )
        )
    return warnings


def _unshared(alias: str, model: type, field: str, sd_ids: list[int]) -> list[int]:
    """Ids (SerDes or descriptors) used only by the storage descriptors being deleted."""
    if not sd_ids:
        return []
    used = set(
        model.objects.using(alias).filter(id__in=sd_ids).exclude(**{f"{field}": None}).values_list(field, flat=True)
    )
    elsewhere = (
        set(
            model.objects.using(alias)
            .filter(**{f"{field}__in": used})
            .exclude(id__in=sd_ids)
            .values_list(field, flat=True)
        )
        if used
        else set()
    )
    return sorted(used - elsewhere)


def _delete_by_ids(alias: str, sql: MetastoreSql, model: type, field: str, ids: list[int], whose: str) -> list[Step]:
    if not ids:
        return []
    table = model._meta.db_table
    column = sql.col(model, field) if field != "id" else sql.col(model, "id")
    steps = []
    for chunk in _chunks(ids):
        lookup = f"{field}__in" if field != "id" else "pk__in"
        count = model.objects.using(alias).filter(**{lookup: chunk}).count()
        if not count:
            continue
        placeholders = ", ".join(["%s"] * len(chunk))
        where = f"WHERE {column} IN ({placeholders})"
        steps.append(
            Step(
                f"Delete {count} {table} rows ({whose or 'the'} rows)".replace("  ", " "),
                table,
                "delete",
                f"DELETE FROM {sql.table(model)} {where}",
                tuple(chunk),
                count,
            )
        )
    return steps


def _trash_moves(state: TableState, matched: list[dict]) -> Iterator[DirectoryMove]:
    """Managed data goes to ``<database location>/.catalog-admin-trash/<table>/<fingerprint>/<partition>``."""
    root = f"{state.database_location.rstrip('/')}/{TRASH_DIR}/{state.ref.table}/{state.fingerprint[:12]}"
    for partition in matched:
        location = partition["sd__location"]
        if not location:
            continue
        filesystem = filesystem_for(location)
        if not filesystem.exists(location):
            continue
        size = filesystem.tree_size(location)
        yield DirectoryMove(
            source=location,
            destination=f"{root}/{partition['name']}",
            partitions_moving=1,
            partitions_staying=0,
            files=size.files if size else None,
            bytes=size.bytes if size else None,
            source_exists=True,
            destination_free=True,
            same_filesystem=_filesystem(location) == _filesystem(root),
            prune_source_levels=_emptied_parent_levels(state, location),
        )


def _emptied_parent_levels(state: TableState, location: str) -> int:
    """
    How many of a dropped partition's parent folders go with it once empty: Hive's ``deleteParentRecursive`` (one
    per partition key but the last, so ``dt=…/`` of ``dt=…/hour=…``), but only inside the table root, never the root
    itself. An emptied ``dt=…/`` left behind makes Hive's ``MSCK REPAIR TABLE`` fail ("missing partition columns").
    """
    if not state.location or not is_under(location, state.location):
        return 0
    depth = normalize_location(location).count("/") - normalize_location(state.location).count("/")
    return max(0, min(len(state.partition_keys) - 1, depth - 1))


def _drop_warnings(
    state: TableState, spec: DropPartitions, matched: list[dict], moves: tuple[DirectoryMove, ...]
) -> list[Finding]:
    warnings = []
    if state.is_external:
        warnings.append(
            Finding(
                "external_data_kept", "ddl", "The table is external: its data files stay where they are.", "warning"
            )
        )
    elif spec.purge:
        warnings.append(
            Finding(
                "purge_to_trash",
                "ddl",
                "PURGE is honoured as a move to the console's trash: data is never deleted outright.",
                "warning",
            )
        )
    missing = len(matched) - len(moves)
    if not state.is_external and missing > 0:
        warnings.append(
            Finding(
                "directories_missing", "ddl", f"{missing} dropped partition(s) have no directory on disk.", "warning"
            )
        )
    return warnings


def _filesystem(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return (parts.scheme or "file", parts.netloc)
