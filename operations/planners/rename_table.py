"""
``ALTER TABLE t RENAME TO [db.]t2``: Hive's location rules (§7–8), done set-based and without losing statistics.

Where the data goes follows HiveAlterHandler for the metastore's version (``rename_destination``): a managed table
in its default directory moves to the new database's directory; external tables, views and managed tables in a
specified location keep their location. Partitions
under the table root move with it (an exact prefix match, not Hive's substring replace, rule 22);
column statistics are re-labelled, never deleted (Hive 2.3 deletes every partition's statistics). Like Hive,
partition statistics are found by the names they carry, a range of PCS_STATS_IDX.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from catalog_admin.locations import filesystem_for
from catalog_admin.models import (
    Database,
    Partition,
    PartitionColumnStatistics,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
)
from catalog_admin.schema import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, unsafe_leaf
from operations.dependent_views import dependent_views_warning
from operations.planners.common import (
    ACID_BOOKKEEPING,
    acid_warnings,
    build_preview,
    hive_seconds,
    replication_source,
    snapshot,
)
from operations.planners.locations import sd_ids_under
from operations.planners.rename_destination import rename_destination
from operations.planners.spark_tables import path_steps
from operations.preview import DirectoryMove, HiveComparison, Preview, Step
from operations.rules import Finding, check_database_name, check_table_name
from operations.specs import RenameTable
from operations.sql import MetastoreSql
from operations.table_state import TableState, labelled_partition_statistics, statistics_labels, table_exists

__all__ = ("plan_rename_table",)


def plan_rename_table(
    metastore: Metastore,
    state: TableState,
    spec: RenameTable,
    *,
    keep_sd_ids: Sequence[int] = (),
    restore_location: str | None = None,
) -> Preview:
    """The rename's plan. A revert passes the partitions to leave alone and the location to put the table back at."""
    version = metastore.schema.version
    new_db = Database.objects.on(metastore).filter(name=spec.new.database).first()
    destination, placement = rename_destination(metastore, state, new_db, spec.new.table) if new_db else (None, [])
    if destination is not None and restore_location is not None:
        destination = restore_location
    move = _directory_move(state, destination, len(keep_sd_ids)) if destination else None
    blockers = _rename_blockers(metastore, state, spec, moving=destination is not None)
    blockers += _names_in_use(metastore, state, spec)
    if move is not None:
        blockers += _move_blockers(move, state, spec)
    if destination is not None and restore_location is None:
        blockers += _escaping_destination(destination, spec.new.table)
    moves = (move,) if move is not None and move.source_exists else ()
    # Statistics carry the names only before Hive 4: that is the only case where their count matters.
    labelled = state.is_partitioned and version.capabilities.statistics_labelled_by_name
    part_stats = labelled_partition_statistics(metastore, state) if labelled else 0
    moved = moves[0] if moves else None
    steps = _steps(metastore, state, spec, new_db, destination, moved, part_stats, keep_sd_ids) if new_db else []
    stats_moved = sum(s.expected_rows for s in steps if s.metastore_table.endswith("COL_STATS"))
    warnings = acid_warnings(metastore, state) + placement + _rename_warnings(state, move)
    warnings += dependent_views_warning(metastore, state.ref, "will fail after the rename")
    touched = moved.partitions_moving if moved else 0
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state, database=spec.new.database, name=spec.new.table, location=destination or state.location),
        blockers=blockers,
        warnings=warnings,
        moves=moves,
        move_contexts={state.location or "": MoveContext(table_id=state.table_id)},
        partitions_touched=touched,
        statistics_moved=stats_moved,
        hive=_hive_comparison(metastore, state, version, bool(moves), part_stats),
        inverse={
            "spec": RenameTable(target=spec.new, new=state.ref, on_view=spec.on_view).as_dict(),
            "location": state.location,
            "keep_sd_ids": _already_under(metastore, state, destination) if moves else [],
        },
    )


def _escaping_destination(destination: str, name: str) -> list[Finding]:
    """The new name must make one plain directory under the new database's (containment; names themselves follow
    ``check_table_name``)."""
    escape = unsafe_leaf(destination, name, 1)
    if escape is None:
        return []
    return [Finding("destination_escapes", "containment", f"The destination {destination} is refused: {escape}.")]


def _rename_blockers(metastore: Metastore, state: TableState, spec: RenameTable, *, moving: bool) -> list[Finding]:
    blockers = check_table_name(spec.new.table, metastore.schema.version) + check_database_name(spec.new.database)
    if spec.new == state.ref:
        blockers.append(Finding("no_change", "2.7", f"{state.ref} is already called {spec.new}"))
    elif table_exists(metastore, spec.new):
        blockers.append(
            Finding("target_exists", "2.7", f"new table {spec.new.database}.{spec.new.table} already exists")
        )
    if not Database.objects.using(metastore.alias).filter(name=spec.new.database).exists():
        blockers.append(Finding("unknown_database", "15.2", f"Database {spec.new.database} does not exist"))
    # Rule 8.7: isRenameAllowed runs only where the data moves (not for external tables or specified locations).
    if (
        moving
        and spec.new.database != state.ref.database
        and replication_source(metastore, state.ref.database, spec.new.database)
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


def _names_in_use(metastore: Metastore, state: TableState, spec: RenameTable) -> list[Finding]:
    """Rows that already carry the new name (left by an earlier table of that name): after the rename Hive would
    take them for this table's, and a revert could not tell them from the rows the rename re-labelled."""
    new_db, new_table = spec.new.database, spec.new.table
    if spec.new == state.ref or table_exists(metastore, spec.new):
        return []  # already refused (rule 2.7); the rows are that table's own
    counts = {}
    if metastore.schema.has(TableColumnStatistics, "db_name"):
        labels = {**statistics_labels(metastore, state), "db_name": new_db, "table_name": new_table}
        counts[PartitionColumnStatistics] = PartitionColumnStatistics.objects.using(metastore.alias).filter(**labels)
        counts[TableColumnStatistics] = TableColumnStatistics.objects.using(metastore.alias).filter(
            db_name=new_db, table_name=new_table
        )
    if state.is_transactional:
        for model in ACID_BOOKKEEPING:
            if metastore.schema.has_table(model):
                counts[model] = model.objects.using(metastore.alias).filter(database=new_db, table=new_table)
    return [
        Finding(
            "names_in_use",
            "labels",
            f"{rows} row(s) of {model._meta.db_table} already carry the name {new_db}.{new_table} (left by an earlier "
            "table of that name): Hive would take them for the renamed table's. Remove them first.",
        )
        for model, queryset in counts.items()
        if (rows := queryset.count())
    ]


def _directory_move(state: TableState, destination: str, kept: int) -> DirectoryMove:
    source = state.location or ""
    source_fs, destination_fs = filesystem_for(source), filesystem_for(destination)
    size = source_fs.tree_size(source)
    destination_exists = destination_fs.exists(destination)
    return DirectoryMove(
        source=source,
        destination=destination,
        partitions_moving=state.partitions.under_root - kept,
        partitions_staying=state.partitions.count - state.partitions.under_root + kept,
        files=size.files if size else None,
        bytes=size.bytes if size else None,
        source_exists=source_fs.exists(source),
        destination_free=None if destination_exists is None else not destination_exists,
        same_filesystem=_same_filesystem(source, destination),
    )


def _already_under(metastore: Metastore, state: TableState, destination: str | None) -> list[int]:
    """Partitions already under the new table root (and not the old): the rename leaves them, so must a revert.

    Only partitions outside the old root can be there: with none (the usual case), no pass over the partitions."""
    if destination is None or state.partitions.count == state.partitions.under_root:
        return []
    new_root, old_root = destination.rstrip("/") + "/", (state.location or "").rstrip("/") + "/"
    return sd_ids_under(metastore, state.table_id, new_root, not_under=old_root)


def _same_filesystem(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme or "file", pa.netloc) == (pb.scheme or "file", pb.netloc)


def _move_blockers(move: DirectoryMove, state: TableState, spec: RenameTable) -> list[Finding]:
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
                f"New location for this table {state.catalog or 'hive'}.{spec.new.database}.{spec.new.table} "
                "already exists : "
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


def _hive_comparison(
    metastore: Metastore, state: TableState, version: SchemaVersion, moved: bool, stats: int
) -> HiveComparison:
    partitions = state.partitions.count if moved else 0
    if version.capabilities.rename_deletes_partition_statistics:
        return _hive_2_3_comparison(metastore, state, version, moved)
    if not version.capabilities.rename_batches_partitions:
        notes = (
            ("Hive 3.1 deletes and re-inserts each partition's statistics one partition at a time.",)
            if state.is_partitioned
            else ()
        )
        return HiveComparison(str(version), partitions * 2, 0, hive_seconds(partitions * 2, stats * 2), notes)
    notes = ("Hive 4 rewrites partitions in batches of 300 and statistics in bulk.",)
    return HiveComparison(str(version), partitions, 0, hive_seconds(partitions, 0), notes)


def _hive_2_3_comparison(
    metastore: Metastore, state: TableState, version: SchemaVersion, moved: bool
) -> HiveComparison:
    """Hive 2.3's ``HiveAlterHandler.alterTable`` (read from hive-metastore-2.3.10): once the directory moved, each
    partition whose location *contains* the old table path is saved with the new path and loses its column statistics
    (``deletePartitionColumnStatistics``); the others, outside the table directory, are not touched and keep their
    statistics under the old table name. Without a move no partition is touched."""
    old_path = urlsplit(state.location or "").path
    if not (moved and state.is_partitioned and old_path):
        return HiveComparison(str(version), 0, 0, hive_seconds(0, 0))
    inside = Partition.objects.using(metastore.alias).filter(table_id=state.table_id, sd__location__contains=old_path)
    partitions = inside.count()
    deleted = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition__in=inside.values("id")).count()
    notes = [f"Hive 2.3 saves the {partitions} partitions inside the table directory one at a time"]
    notes[0] += f" and deletes their {deleted} column statistics." if deleted else "."
    if partitions < state.partitions.count:
        notes.append(
            f"The {state.partitions.count - partitions} partition(s) outside it keep their location, and their "
            "statistics stay labelled with the old table name."
        )
    return HiveComparison(str(version), partitions, deleted, hive_seconds(partitions, deleted), tuple(notes))


def _steps(
    metastore: Metastore,
    state: TableState,
    spec: RenameTable,
    new_db: Database,
    destination: str | None,
    move: DirectoryMove | None,
    part_stats: int,
    keep_sd_ids: Sequence[int],
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
    if destination is not None and move and move.partitions_moving:
        steps.append(_partition_locations_step(sql, state, destination, move.partitions_moving, keep_sd_ids))
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
    """Spark data-source tables keep their location in the SerDe parameter ``path`` too: moved where it is the
    table's directory (``spark_tables.path_steps``, shared with SET LOCATION, relocation and rewrites)."""
    if state.serde_params.get("path") != state.location:
        return []
    return path_steps(sql, state, destination)


def _partition_locations_step(
    sql: MetastoreSql, state: TableState, destination: str, moving: int, keep_sd_ids: Sequence[int]
) -> Step:
    old_root = (state.location or "").rstrip("/") + "/"
    new_root = destination.rstrip("/") + "/"
    location = sql.col(StorageDescriptor, "location")
    kept, kept_params = sql.not_among(sql.col(StorageDescriptor, "id"), keep_sd_ids)
    return Step(
        f"Move {moving} partition locations from {old_root} to {new_root}",
        "SDS",
        "update",
        f"UPDATE {sql.table(StorageDescriptor)} SET {location} = {sql.replace_prefix(location)} "
        f"WHERE {sql.of_table_partitions(sql.col(StorageDescriptor, 'id'), 'sd')} AND {sql.has_prefix(location)}{kept}",
        (new_root, len(old_root) + 1, state.table_id, len(old_root), old_root, *kept_params),
        moving,
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
    for model in ACID_BOOKKEEPING:
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
