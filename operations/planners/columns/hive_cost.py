"""
Hive's own cost for a column change on the metastore's version (rules 10-12): the partitions it loads and saves one
at a time, and the statistics rows it deletes. A simulation for the "what Hive would take" comparison: nothing here
changes the console's plan.
"""

from __future__ import annotations

from django.db import connections

from catalog_admin.models import Column, Partition, PartitionColumnStatistics, StorageDescriptor, TableColumnStatistics
from catalog_admin.schema import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.planners.columns.listing import ColumnPlan
from operations.planners.common import hive_seconds
from operations.preview import HiveComparison
from operations.specs import AddColumns, ChangeColumn, ReplaceColumns
from operations.sql import MetastoreSql
from operations.table_state import ColumnInfo, TableState

__all__ = ("hive_comparison",)


def hive_comparison(
    metastore: Metastore,
    state: TableState,
    spec: AddColumns | ReplaceColumns | ChangeColumn,
    plan: ColumnPlan,
    touched: dict[tuple[str, str], int],
) -> HiveComparison:
    """Hive's own cost for this statement on this version: the partitions it loads and saves one at a time, and the
    statistics rows it deletes (rules 10-12)."""
    version = metastore.schema.version
    old, new = list(state.columns), plan.columns
    rewrites = state.is_partitioned and _hive_rewrites_partitions(version, old, new, spec.cascade)
    partitions = state.partitions.count if rewrites else 0
    deleted = _hive_partition_statistics_deleted(metastore, state, new, touched) if rewrites else 0
    # Before 4.0 a partitioned table whose columns change is saved without touching its column statistics.
    if not state.is_partitioned or version.capabilities.column_change_prunes_partitioned_table_statistics:
        deleted += _hive_table_statistics_deleted(metastore, state, new)
    return HiveComparison(
        str(version), partitions, deleted, hive_seconds(partitions, deleted), _hive_notes(state, spec, partitions)
    )


def _hive_notes(
    state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn, partitions: int
) -> tuple[str, ...]:
    if partitions:
        notes = [f"Hive loads and saves the {partitions} partitions one at a time"]
        if spec.cascade:
            notes.append(f"and creates {partitions} new column descriptors, one per partition")
        else:
            notes.append("to prune their statistics, keeping their old columns")
        return (" ".join(notes) + ".",)
    if state.is_partitioned:
        return ("Hive saves only the table: no partition is touched.",)
    return ()


def _hive_rewrites_partitions(
    version: SchemaVersion, old: list[ColumnInfo], new: list[ColumnInfo], cascade: bool
) -> bool:
    """Rule 10.2 (4.x): with CASCADE unless the columns are the same, without it unless columns were only appended;
    rule 10.6 (3.1): whenever the column lists differ at all (names, types and comments as stored); 2.3
    (``HiveAlterHandler.alterTable``, read from hive-metastore-2.3.10's bytecode): only with CASCADE, and then when
    ``MetaStoreUtils.isCascadeNeededInAlterTable`` finds the lists differ; without it no partition is read."""
    capabilities = version.capabilities
    if capabilities.column_change_skips_unchanged_partitions:
        return not _same_columns(old, new) if cascade else not _prefix_columns(old, new)
    differ = [(c.name, c.type, c.comment) for c in old] != [(c.name, c.type, c.comment) for c in new]
    return differ and (cascade or capabilities.column_change_touches_partitions_without_cascade)


def _same_columns(old: list[ColumnInfo], new: list[ColumnInfo]) -> bool:
    """4.x ``areSameColumns``: same length, and at each position the same lower-cased name, type and comment."""
    return [(c.name.lower(), c.type, c.comment) for c in old] == [(c.name.lower(), c.type, c.comment) for c in new]


def _prefix_columns(old: list[ColumnInfo], new: list[ColumnInfo]) -> bool:
    """4.x ``arePrefixColumns``: the new list is the old one with columns appended."""
    return len(old) <= len(new) and _same_columns(old, new[: len(old)])


def _included_by_name_type(old: list[ColumnInfo], new: list[ColumnInfo]) -> bool:
    """``columnsIncludedByNameType``: every old column is a new one (new names lower-cased, types ignoring case)."""
    types = {c.name.lower(): c.type.lower() for c in new}
    return len(old) <= len(new) and all(types.get(c.name) == c.type.lower() for c in old)


def _hive_table_statistics_deleted(metastore: Metastore, state: TableState, new: list[ColumnInfo]) -> int:
    """Rule 11: once some old column is not included by name and type, the TAB_COL_STATS rows of the old columns
    that no new column matches by name and type (as the statistics record it, ignoring case) are deleted."""
    old = list(state.columns)
    if _included_by_name_type(old, new):
        return 0
    kept = {(c.name.lower(), c.type.lower()) for c in new}
    rows = TableColumnStatistics.objects.using(metastore.alias).filter(
        table_id=state.table_id, column_name__in=[c.name for c in old]
    )
    return sum(
        1
        for name, kind in rows.values_list("column_name", "column_type")
        if (name.lower(), (kind or "").lower()) not in kept
    )


def _hive_partition_statistics_deleted(
    metastore: Metastore, state: TableState, new: list[ColumnInfo], touched: dict[tuple[str, str], int]
) -> int:
    """Rule 12.1 for every partition at once: the PART_COL_STATS rows of a partition's own old columns that no new
    column matches by name and type, in the partitions whose old columns are not all included by name and type.

    When every partition has the table's columns (one shared descriptor, the usual case), those are the rows of the
    columns the change renames or drops, already counted; otherwise one COUNT over each partition's own columns."""
    if _partitions_share_the_table_columns(state):
        new_types = {c.name.lower(): c.type.lower() for c in new}
        return sum(n for (name, type_name), n in touched.items() if new_types.get(name.lower(), "") != type_name)
    sql = MetastoreSql(metastore.alias)
    stats, part, sd, column = PartitionColumnStatistics, Partition, StorageDescriptor, Column
    new_type_of_stat, stat_params = _new_type(new, f"LOWER(s.{sql.col(stats, 'column_name')})")
    new_type_of_column, column_params = _new_type(new, f"c.{sql.col(column, 'name')}")
    old_columns = f"SELECT 1 FROM {sql.table(column)} c WHERE c.{sql.col(column, 'cd')} = d.{sql.col(sd, 'cd')}"
    query = (
        f"SELECT COUNT(*) FROM {sql.table(stats)} s "
        f"JOIN {sql.table(part)} p ON p.{sql.col(part, 'id')} = s.{sql.col(stats, 'partition')} "
        f"JOIN {sql.table(sd)} d ON d.{sql.col(sd, 'id')} = p.{sql.col(part, 'sd')} "
        f"WHERE p.{sql.col(part, 'table')} = %s "
        f"AND {new_type_of_stat} <> LOWER(s.{sql.col(stats, 'column_type')}) "
        f"AND EXISTS ({old_columns} AND c.{sql.col(column, 'name')} = s.{sql.col(stats, 'column_name')}) "
        f"AND EXISTS ({old_columns} AND {new_type_of_column} <> LOWER(c.{sql.col(column, 'type')}))"
    )
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(query, (state.table_id, *stat_params, *column_params))
        return int(cursor.fetchone()[0])


def _partitions_share_the_table_columns(state: TableState) -> bool:
    summary = state.partitions
    with_descriptor = sum(users for _cd, users in summary.descriptor_users)
    return summary.column_descriptors == (state.cd_id,) and with_descriptor == summary.count


def _new_type(new: list[ColumnInfo], name_sql: str) -> tuple[str, tuple[str, ...]]:
    """SQL for the lower-cased type of the new column called ``name_sql`` ('' when there is none), and its
    parameters: the new names lower-cased, as Hive compares them."""
    types = {c.name.lower(): c.type.lower() for c in new}
    if not types:
        return "''", ()
    cases = " ".join(["WHEN %s THEN %s"] * len(types))
    return f"COALESCE(CASE {name_sql} {cases} END, '')", tuple(v for pair in types.items() for v in pair)
