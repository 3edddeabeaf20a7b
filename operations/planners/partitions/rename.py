"""
``PARTITION (…) RENAME TO PARTITION (…)`` (rule 17): the partition's name, key values and (for managed data) its
directory change; it keeps its statistics and, on a transactional table, its ACID bookkeeping.
"""

from __future__ import annotations

from catalog_admin.hive.partition_names import partition_name
from catalog_admin.models import Column, Partition, PartitionColumnStatistics, PartitionKeyValue, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext
from operations.planners.common import acid_warnings, build_preview, hive_seconds, snapshot
from operations.planners.locations import resolve_partition
from operations.planners.partitions.bookkeeping import bookkeeping_in_use, relabel_bookkeeping_steps
from operations.planners.partitions.directories import partition_move, rename_warnings, renamed_partition_location
from operations.planners.partitions.listing import renamed_partition
from operations.preview import HiveComparison, Preview, Step
from operations.rules import Finding, check_partition_name_whitelist
from operations.specs import RenamePartition
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("plan_rename_partition",)


def plan_rename_partition(metastore: Metastore, state: TableState, spec: RenamePartition) -> Preview:
    """The plan of a partition rename on ``state``: a pure read."""
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
    blockers += check_partition_name_whitelist(
        values, metastore.config.partition_name_whitelist, metastore.schema.version
    )
    exists = _new_partition_exists(metastore, state, new_name, values)
    # Refused when the new partition exists: the bookkeeping under its name is its own.
    blockers += exists or bookkeeping_in_use(metastore, state, new_name)
    destination = renamed_partition_location(metastore, state, partition["location"], new_name)
    if destination and not all(values):
        blockers.append(_incorrect_spec(keys, values))
        destination = None
    move, move_blockers = partition_move(metastore, state, partition["location"], destination)
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
        warnings=acid_warnings(metastore, state) + rename_warnings(partition["location"], destination, move),
        moves=(move,) if move else (),
        move_contexts={
            partition["location"]: MoveContext(
                sd_ids=frozenset({partition["sd_id"]}),
                enclosing=frozenset({state.sd_id} - {None}),
                leaf=new_name,
                leaf_segments=len(keys),
            )
        },
        partitions_touched=1,
        affected=renamed_partition(metastore, state, partition, new_name, move),
        statistics_moved=sum(
            s.expected_rows for s in steps if s.metastore_table == "PART_COL_STATS" and s.action == "update"
        ),
        statistics_dropped=sum(
            s.expected_rows for s in steps if s.metastore_table == "PART_COL_STATS" and s.action == "delete"
        ),
        hive=_hive_comparison(metastore, partition),
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


def _statistics_counts(metastore: Metastore, partition: dict) -> tuple[int, int]:
    """The partition's PART_COL_STATS rows whose column no longer matches one of its columns by name and type
    (ignoring case, as ``HiveAlterHandler.updateOrGetPartitionColumnStats`` compares them), and the others."""
    columns = {
        (name.lower(), (kind or "").lower())
        for name, kind in Column.objects.using(metastore.alias)
        .filter(
            cd_id__in=StorageDescriptor.objects.using(metastore.alias).filter(id=partition["sd_id"]).values("cd_id")
        )
        .values_list("name", "type")
    }
    rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id=partition["id"])
    pairs = [(name.lower(), (kind or "").lower()) for name, kind in rows.values_list("column_name", "column_type")]
    stale = sum(1 for pair in pairs if pair not in columns)
    return stale, len(pairs) - stale


def _stale_statistics_step(sql: MetastoreSql, partition: dict, rows: int) -> Step:
    """Rule 17.5 (3.1, 4.0): Hive re-inserts under the new name only the statistics whose column still matches the
    partition's columns by name and type; the others are deleted. The console keeps every other row (2.3 deletes them
    all), and deletes these stale ones on every version: they describe a column the partition no longer has."""
    stats, column, sd = PartitionColumnStatistics, Column, StorageDescriptor
    stats_table = sql.table(stats)
    match = (
        f"SELECT 1 FROM {sql.table(column)} c "
        f"JOIN {sql.table(sd)} d ON d.{sql.col(sd, 'cd')} = c.{sql.col(column, 'cd')} "
        f"WHERE d.{sql.col(sd, 'id')} = %s "
        f"AND LOWER(c.{sql.col(column, 'name')}) = LOWER({stats_table}.{sql.col(stats, 'column_name')}) "
        f"AND LOWER(c.{sql.col(column, 'type')}) = LOWER({stats_table}.{sql.col(stats, 'column_type')})"
    )
    return Step(
        "Delete the partition's statistics of columns it no longer has with that type (rule 17.5)",
        "PART_COL_STATS",
        "delete",
        f"DELETE FROM {stats_table} WHERE {sql.col(stats, 'partition')} = %s AND NOT EXISTS ({match})",
        (partition["id"], partition["sd_id"]),
        rows,
    )


def _hive_comparison(metastore: Metastore, partition: dict) -> HiveComparison:
    """Hive's cost of the rename: one partition saved; 2.3 deletes all its statistics
    (``HiveAlterHandler.alterPartition`` calls ``deletePartitionColumnStatistics`` for the old name), 3.1 and 4.0
    those no longer matching (rule 17.5)."""
    version = metastore.schema.version
    stale, kept = _statistics_counts(metastore, partition)
    if version.capabilities.partition_rename_deletes_statistics:
        deleted, note = stale + kept, "Hive 2.3 deletes the partition's column statistics."
    else:
        deleted, note = stale, "Hive keeps the statistics of the partition's columns under the new name."
    return HiveComparison(str(version), 1, deleted, hive_seconds(1, deleted), (note,) if stale + kept else ())


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
    stale, stats = _statistics_counts(metastore, partition)
    if stale:
        steps.append(_stale_statistics_step(sql, partition, stale))
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
