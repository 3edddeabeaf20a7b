"""
``ALTER TABLE t RENAME TO [db.]t2``: Hive's location rules (§7–8), done set-based and without losing statistics.

Where the data goes follows HiveAlterHandler for the metastore's version (3.1 rules for 2.3 and 3.1,
4.x rules for 4.0): a managed table in its default directory moves to the new database's directory;
external tables, views and managed tables in a specified location keep their location. Partitions
under the table root move with it (an exact prefix match, not Hive's substring replace, rule 22);
column statistics are re-labelled, never deleted (Hive 2.3 deletes every partition's statistics). Like Hive,
partition statistics are found by the names they carry, a range of PCS_STATS_IDX.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from catalog_admin.locations import filesystem_for
from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    Database,
    DatabaseParam,
    HiveLock,
    NextWriteId,
    PartitionColumnStatistics,
    SerDeParam,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)
from catalog_admin.schema import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.dependent_views import dependent_views_warning
from operations.planners.common import acid_warnings, console_seconds, hive_seconds, risk_level, snapshot
from operations.preview import DirectoryMove, HiveComparison, Preview, Step
from operations.rules import Finding, check_table_name
from operations.specs import RenameTable
from operations.sql import MetastoreSql
from operations.table_state import TableState, labelled_partition_statistics, statistics_labels, table_exists

__all__ = ("plan_rename_table",)

V4 = SchemaVersion(4, 0, 0, "alpha", 1)


def plan_rename_table(metastore: Metastore, state: TableState, spec: RenameTable) -> Preview:
    version = metastore.schema.version
    blockers = _rename_blockers(metastore, state, spec)
    new_db = Database.objects.on(metastore).filter(name=spec.new.database).first()
    destination = _destination(state, spec, new_db, version) if new_db is not None else None
    move = _directory_move(state, destination) if destination else None
    if move is not None:
        blockers += _move_blockers(move, spec)
    moves = (move,) if move is not None and move.source_exists else ()
    # Statistics carry the names only before Hive 4: that is the only case where their count matters.
    part_stats = labelled_partition_statistics(metastore, state) if state.is_partitioned and version < V4 else 0
    target = destination if move else None
    steps = tuple(_steps(metastore, state, spec, new_db, target, bool(moves), part_stats)) if new_db else ()
    stats_moved = sum(s.expected_rows for s in steps if s.metastore_table.endswith("COL_STATS"))
    warnings = acid_warnings(metastore, state) + _rename_warnings(state, move)
    warnings += dependent_views_warning(metastore, state.ref, "will fail after the rename")
    return Preview(
        metastore=metastore.name,
        schema_version=str(version),
        spec=spec,
        statement=spec.to_ddl(),
        fingerprint=state.fingerprint,
        before=snapshot(state),
        after=snapshot(state, database=spec.new.database, name=spec.new.table, location=destination or state.location),
        steps=steps,
        moves=moves,
        blockers=tuple(blockers),
        warnings=tuple(warnings),
        hive=_hive_comparison(state, version, bool(moves), part_stats),
        estimated_seconds=console_seconds(steps),
        risk=risk_level(
            moves=moves,
            partitions_touched=state.partitions.under_root if moves else 0,
            statistics_dropped=0,
        ),
        partitions_touched=state.partitions.under_root if moves else 0,
        statistics_moved=stats_moved,
        statistics_dropped=0,
        inverse={"spec": RenameTable(target=spec.new, new=state.ref).as_dict(), "location": state.location},
    )


def _rename_blockers(metastore: Metastore, state: TableState, spec: RenameTable) -> list[Finding]:
    blockers = check_table_name(spec.new.table, metastore.schema.version)
    if spec.new == state.ref:
        blockers.append(Finding("no_change", "2.7", f"{state.ref} is already called {spec.new}"))
    elif table_exists(metastore, spec.new):
        blockers.append(
            Finding("target_exists", "2.7", f"new table {spec.new.database}.{spec.new.table} already exists")
        )
    if not Database.objects.using(metastore.alias).filter(name=spec.new.database).exists():
        blockers.append(Finding("unknown_database", "2.9", f"Database {spec.new.database} does not exist"))
    if spec.new.database != state.ref.database and _is_replication_source(
        metastore, state.ref.database, spec.new.database
    ):
        blockers.append(
            Finding(
                "rename_not_allowed",
                "8.7",
                f"Alter table not allowed for table {state.ref.database}.{state.ref.table}to new table = "
                f"{spec.new.database}.{spec.new.table}",
            )
        )
    return blockers


def _is_replication_source(metastore: Metastore, *databases: str) -> bool:
    return (
        DatabaseParam.objects.using(metastore.alias)
        .filter(database__name__in=databases, key="repl.source.for")
        .exclude(value="")
        .exists()
    )


def _destination(state: TableState, spec: RenameTable, new_db: Database, version: SchemaVersion) -> str | None:
    """Rules 7–8: the new location, or None when the data stays where it is."""
    if state.is_view or state.is_external or not state.location:
        return None
    # Rule 8.3/8.8: compared with the database location (4.x prefers a managed location when one is set).
    old_root = _managed_root(state.database_location, state.database_managed_location, version)
    relative = state.location.rstrip("/").removeprefix(old_root.rstrip("/") + "/")
    if relative.lower() != state.ref.table.lower():
        return None  # rule 8.4: a managed table in a specified location keeps it
    new_root = _managed_root(new_db.location_uri, _managed_location(new_db, version), version).rstrip("/")
    return _with_scheme_of(state.location, f"{new_root}/{spec.new.table}")


def _managed_root(location: str, managed_location: str | None, version: SchemaVersion) -> str:
    return managed_location if version >= V4 and managed_location else location


def _managed_location(database: Database, version: SchemaVersion) -> str | None:
    return database.managed_location_uri if version >= V4 else None


def _with_scheme_of(old: str, new: str) -> str:
    """``constructRenamedPath``: keep the old location's scheme and authority, take the new path."""
    old_parts, new_parts = urlsplit(old), urlsplit(new)
    if not old_parts.scheme:
        return new_parts.path
    authority = f"//{old_parts.netloc}" if old_parts.netloc else ""
    return f"{old_parts.scheme}:{authority}{new_parts.path}"


def _directory_move(state: TableState, destination: str) -> DirectoryMove:
    source = state.location or ""
    source_fs, destination_fs = filesystem_for(source), filesystem_for(destination)
    size = source_fs.tree_size(source)
    destination_exists = destination_fs.exists(destination)
    return DirectoryMove(
        source=source,
        destination=destination,
        partitions_moving=state.partitions.under_root,
        partitions_staying=state.partitions.count - state.partitions.under_root,
        files=size.files if size else None,
        bytes=size.bytes if size else None,
        source_exists=source_fs.exists(source),
        destination_free=None if destination_exists is None else not destination_exists,
        same_filesystem=_same_filesystem(source, destination),
    )


def _same_filesystem(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme or "file", pa.netloc) == (pb.scheme or "file", pb.netloc)


def _move_blockers(move: DirectoryMove, spec: RenameTable) -> list[Finding]:
    blockers = []
    if not move.same_filesystem:
        blockers.append(
            Finding(
                "cross_filesystem",
                "8.7",
                f"table new location {move.destination} is on a different file system than the old location "
                f"{move.source}. This operation is not supported",
            )
        )
    if move.source_exists is None:
        # Hive would move the data; without a client for the filesystem the console could only repoint the
        # table at an empty directory.
        blockers.append(
            Finding(
                "filesystem_unreachable",
                "8.7",
                f"The console cannot check or move {move.source} (no client for its filesystem); rename the table "
                "with Hive itself.",
            )
        )
    if move.destination_free is False:
        blockers.append(
            Finding(
                "destination_exists",
                "8.7",
                f"New location for this table hive.{spec.new.database}.{spec.new.table} already exists : "
                f"{move.destination}",
            )
        )
    return blockers


def _rename_warnings(state: TableState, move: DirectoryMove | None) -> list[Finding]:
    warnings = []
    if move is not None and move.source_exists is False:
        warnings.append(
            Finding(
                "source_missing",
                "8.7",
                f"The table directory {move.source} does not exist: the table's location changes, its partitions keep "
                "their locations (as Hive does).",
                "warning",
            )
        )
    if move is not None and move.partitions_staying:
        warnings.append(
            Finding(
                "partitions_outside_root",
                "9.1",
                f"{move.partitions_staying} partition(s) are outside the table directory and keep their locations.",
                "warning",
            )
        )
    return warnings


def _hive_comparison(state: TableState, version: SchemaVersion, moved: bool, stats: int) -> HiveComparison:
    partitions = state.partitions.count if moved else 0
    if version < SchemaVersion(3, 0, 0):
        deleted = stats if state.is_partitioned else 0
        notes = ("Hive 2.3 deletes every partition column statistic of the table on rename.",) if deleted else ()
        return HiveComparison(str(version), partitions, deleted, hive_seconds(partitions, deleted), notes)
    if version < V4:
        notes = (
            ("Hive 3.1 deletes and re-inserts each partition's statistics one partition at a time.",)
            if state.is_partitioned
            else ()
        )
        return HiveComparison(str(version), partitions * 2, 0, hive_seconds(partitions * 2, stats * 2), notes)
    notes = ("Hive 4 rewrites partitions in batches of 300 and statistics in bulk.",)
    return HiveComparison(str(version), partitions, 0, hive_seconds(partitions, 0), notes)


def _steps(
    metastore: Metastore,
    state: TableState,
    spec: RenameTable,
    new_db: Database,
    destination: str | None,
    moved: bool,
    part_stats: int,
) -> list[Step]:
    sql = MetastoreSql(metastore.alias)
    steps = [
        Step(
            "Rename the table row",
            "TBLS",
            "update",
            f"UPDATE {sql.table(Table)} SET {sql.col(Table, 'name')} = %s, {sql.col(Table, 'database')} = %s "
            f"WHERE {sql.col(Table, 'id')} = %s",
            (spec.new.table, new_db.id, state.table_id),
            1,
        )
    ]
    if destination is not None:
        steps.append(_table_location_step(sql, state, destination))
        steps += _path_param_steps(metastore, sql, state, destination)
    if destination is not None and moved and state.partitions.under_root:
        steps.append(_partition_locations_step(sql, state, destination))
    steps += _statistics_steps(metastore, sql, state, spec, part_stats)
    if state.is_transactional:
        steps += _acid_steps(metastore, sql, state, spec)
    return steps


def _table_location_step(sql: MetastoreSql, state: TableState, destination: str) -> Step:
    return Step(
        "Point the table at its new directory",
        "SDS",
        "update",
        f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'location')} = %s "
        f"WHERE {sql.col(StorageDescriptor, 'id')} = %s",
        (destination, state.sd_id),
        1,
    )


def _path_param_steps(metastore: Metastore, sql: MetastoreSql, state: TableState, destination: str) -> list[Step]:
    """Spark data-source tables keep their location in the SerDe parameter ``path`` too."""
    if state.serde_params.get("path") != state.location:
        return []
    return [
        Step(
            "Keep Spark's 'path' SerDe parameter in step with the location",
            "SERDE_PARAMS",
            "update",
            f"UPDATE {sql.table(SerDeParam)} SET {sql.col(SerDeParam, 'value')} = %s "
            f"WHERE {sql.col(SerDeParam, 'serde')} = %s AND {sql.col(SerDeParam, 'key')} = %s",
            (destination, state.serde_id, "path"),
            1,
        )
    ]


def _partition_locations_step(sql: MetastoreSql, state: TableState, destination: str) -> Step:
    old_root = (state.location or "").rstrip("/") + "/"
    new_root = destination.rstrip("/") + "/"
    location = sql.col(StorageDescriptor, "location")
    return Step(
        f"Move {state.partitions.under_root} partition locations from {old_root} to {new_root}",
        "SDS",
        "update",
        f"UPDATE {sql.table(StorageDescriptor)} SET {location} = {sql.replace_prefix(location)} "
        f"WHERE {sql.of_table_partitions(sql.col(StorageDescriptor, 'id'), 'sd')} AND {sql.has_prefix(location)}",
        (new_root, len(old_root) + 1, state.table_id, len(old_root), old_root),
        state.partitions.under_root,
    )


def _statistics_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, spec: RenameTable, part_stats: int
) -> list[Step]:
    """Re-label statistics rows that carry the names (Hive 2.3 and 3.1 schemas); 4.0 keys them by id only."""
    if not metastore.schema.has(TableColumnStatistics, "db_name"):
        return []
    steps = []
    if state.table_column_statistics:
        steps.append(
            Step(
                "Keep the table's column statistics under the new name",
                "TAB_COL_STATS",
                "update",
                f"UPDATE {sql.table(TableColumnStatistics)} SET {sql.col(TableColumnStatistics, 'db_name')} = %s, "
                f"{sql.col(TableColumnStatistics, 'table_name')} = %s "
                f"WHERE {sql.col(TableColumnStatistics, 'table')} = %s",
                (spec.new.database, spec.new.table, state.table_id),
                len(state.table_column_statistics),
            )
        )
    if part_stats:
        labels = statistics_labels(metastore, state)
        where = " AND ".join(f"{sql.col(PartitionColumnStatistics, name)} = %s" for name in labels)
        steps.append(
            Step(
                "Keep every partition's column statistics under the new name",
                "PART_COL_STATS",
                "update",
                f"UPDATE {sql.table(PartitionColumnStatistics)} SET "
                f"{sql.col(PartitionColumnStatistics, 'db_name')} = %s, "
                f"{sql.col(PartitionColumnStatistics, 'table_name')} = %s WHERE {where}",
                (spec.new.database, spec.new.table, *labels.values()),
                part_stats,
            )
        )
    return steps


def _acid_steps(metastore: Metastore, sql: MetastoreSql, state: TableState, spec: RenameTable) -> list[Step]:
    """ACID bookkeeping keyed by names follows the table: the tables Hive 4's onRename re-labels, in its order."""
    old = (state.ref.database, state.ref.table)
    steps = []
    for model in (
        TransactionComponent,
        CompletedTransactionComponent,
        HiveLock,
        CompactionQueueEntry,
        CompletedCompaction,
        WriteSetEntry,
        TransactionWriteId,
        NextWriteId,
        CompactionMetric,
    ):
        if not metastore.schema.has_table(model):
            continue
        rows = model.objects.using(metastore.alias).filter(database=old[0], table=old[1]).count()
        if not rows:
            continue
        steps.append(
            Step(
                f"Rename the table in {model._meta.db_table}",
                model._meta.db_table,
                "update",
                f"UPDATE {sql.table(model)} SET {sql.col(model, 'database')} = %s, {sql.col(model, 'table')} = %s "
                f"WHERE {sql.col(model, 'database')} = %s AND {sql.col(model, 'table')} = %s",
                (spec.new.database, spec.new.table, *old),
                rows,
            )
        )
    return steps
