"""
The set-based statements of a column change: one new column descriptor (with CASCADE shared by every partition),
the descriptors nobody uses any more removed (Hive's ``removeUnusedColumnDescriptor``), the column statistics of
renamed columns kept under the new name and those of retyped or dropped columns deleted, and the table parameters.
"""

from __future__ import annotations

from django.db.models import Count

from catalog_admin.models import (
    Column,
    ColumnDescriptor,
    PartitionColumnStatistics,
    StorageDescriptor,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.columns.flags import params_after
from operations.planners.columns.listing import ColumnPlan
from operations.planners.common import param_upsert_steps
from operations.preview import NewId, Step
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "descriptor_steps",
    "partition_statistics_steps",
    "table_param_steps",
    "table_statistics_steps",
    "touched_partition_statistics",
)


def descriptor_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan, cascade: bool
) -> list[Step]:
    new_cd = NewId("CDS")
    columns = plan.columns
    values = ", ".join(["(%s, %s, %s, %s, %s)"] * len(columns))
    params: list[object] = []
    for position, column in enumerate(columns):
        params += [new_cd, column.comment, column.name, column.type, position]
    steps = [
        Step(
            "Create the new column descriptor",
            "CDS",
            "insert",
            f"INSERT INTO {sql.table(ColumnDescriptor)} ({sql.col(ColumnDescriptor, 'id')}) VALUES (%s)",
            (new_cd,),
            1,
        ),
        Step(
            f"Write its {len(columns)} columns",
            "COLUMNS_V2",
            "insert",
            f"INSERT INTO {sql.table(Column)} ({sql.col(Column, 'cd')}, {sql.col(Column, 'comment')}, "
            f"{sql.col(Column, 'name')}, {sql.col(Column, 'type')}, {sql.col(Column, 'position')}) VALUES {values}",
            tuple(params),
            len(columns),
        ),
        Step(
            "Point the table at it",
            "SDS",
            "update",
            f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'cd')} = %s "
            f"WHERE {sql.col(StorageDescriptor, 'id')} = %s",
            (new_cd, state.sd_id),
            1,
        ),
    ]
    if cascade:
        steps.append(
            Step(
                f"Point all {state.partitions.count} partitions at the same descriptor (CASCADE)",
                "SDS",
                "update",
                f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'cd')} = %s "
                f"WHERE {sql.of_table_partitions(sql.col(StorageDescriptor, 'id'), 'sd')}",
                (new_cd, state.table_id),
                state.partitions.count,
            )
        )
    steps += _orphan_steps(metastore, sql, state, cascade)
    return steps


def _orphan_steps(metastore: Metastore, sql: MetastoreSql, state: TableState, cascade: bool) -> list[Step]:
    """Delete the old descriptors that no storage descriptor uses once the table (and partitions) moved off."""
    old = {state.cd_id, *(state.partitions.column_descriptors if cascade else ())} - {None}
    leaving = 1 + (state.partitions.count if cascade else 0)
    users = dict(
        StorageDescriptor.objects.using(metastore.alias)
        .filter(cd_id__in=old)
        .values("cd_id")
        .annotate(n=Count("id"))
        .values_list("cd_id", "n")
    )
    moving = _users_moving(metastore, state, old, cascade)
    orphans = sorted(cd for cd in old if users.get(cd, 0) - moving.get(cd, 0) == 0)
    if not orphans or sum(moving.values()) != leaving:
        return []
    column_rows = Column.objects.using(metastore.alias).filter(cd_id__in=orphans).count()
    placeholders = ", ".join(["%s"] * len(orphans))
    return [
        Step(
            f"Remove the {column_rows} columns of unused descriptors",
            "COLUMNS_V2",
            "delete",
            f"DELETE FROM {sql.table(Column)} WHERE {sql.col(Column, 'cd')} IN ({placeholders})",
            tuple(orphans),
            column_rows,
        ),
        Step(
            f"Remove {len(orphans)} unused column descriptor(s)",
            "CDS",
            "delete",
            f"DELETE FROM {sql.table(ColumnDescriptor)} WHERE {sql.col(ColumnDescriptor, 'id')} IN ({placeholders})",
            tuple(orphans),
            len(orphans),
        ),
    ]


def _users_moving(metastore: Metastore, state: TableState, old: set[int], cascade: bool) -> dict[int, int]:
    """How many storage descriptors leave each old descriptor: the table's, and with CASCADE its partitions'."""
    moving = {state.cd_id: 1} if state.cd_id else {}
    if cascade:
        for cd, n in state.partitions.descriptor_users:
            moving[cd] = moving.get(cd, 0) + n
    return {cd: n for cd, n in moving.items() if cd in old}


def table_statistics_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan
) -> tuple[list[Step], int, int]:
    present = set(state.table_column_statistics)
    return _statistics_steps(
        sql,
        TableColumnStatistics,
        "table",
        f"{sql.col(TableColumnStatistics, 'table')} = %s",
        (state.table_id,),
        {name: 1 for name in present},
        plan,
        "the table",
    )


def touched_partition_statistics(
    metastore: Metastore, state: TableState, plan: ColumnPlan
) -> dict[tuple[str, str], int]:
    """PART_COL_STATS rows of the table's partitions for the columns the change renames or drops, by column name and
    lower-cased recorded type: one grouped count for the plan's steps and Hive's comparison."""
    touched = set(plan.stats_dropped) | set(plan.renamed)
    if not state.is_partitioned or not touched:
        return {}
    rows = (
        PartitionColumnStatistics.objects.using(metastore.alias)
        .filter(partition__table_id=state.table_id, column_name__in=touched)
        .values_list("column_name", "column_type")
        .annotate(n=Count("id"))
    )
    counts: dict[tuple[str, str], int] = {}
    for name, type_name, n in rows:
        key = (name, (type_name or "").lower())
        counts[key] = counts.get(key, 0) + n
    return counts


def partition_statistics_steps(
    sql: MetastoreSql, state: TableState, plan: ColumnPlan, touched: dict[tuple[str, str], int]
) -> tuple[list[Step], int, int]:
    """Every partition's PART_COL_STATS rows of the renamed and dropped columns (``touched``), and the counts of the
    rows dropped and moved."""
    counts: dict[str, int] = {}
    for (name, _type), n in touched.items():
        counts[name] = counts.get(name, 0) + n
    where = sql.of_table_partitions(sql.col(PartitionColumnStatistics, "partition"))
    steps, dropped, moved = _statistics_steps(
        sql, PartitionColumnStatistics, "partition", where, (state.table_id,), counts, plan, "every partition"
    )
    return steps, dropped, moved


def _statistics_steps(
    sql: MetastoreSql,
    model: type,
    owner: str,
    where: str,
    where_params: tuple,
    counts: dict[str, int],
    plan: ColumnPlan,
    whose: str,
) -> tuple[list[Step], int, int]:
    table, column = model._meta.db_table, sql.col(model, "column_name")
    steps, dropped, moved = [], 0, 0
    for name in sorted(plan.stats_dropped):
        if counts.get(name):
            steps.append(
                Step(
                    f"Drop the statistics of {name} for {whose} (its data changes meaning)",
                    table,
                    "delete",
                    f"DELETE FROM {sql.table(model)} WHERE {where} AND {column} = %s",
                    (*where_params, name),
                    counts[name],
                )
            )
            dropped += counts[name]
    for old, new in sorted(plan.renamed.items()):
        if counts.get(old):
            steps.append(
                Step(
                    f"Keep the statistics of {old} for {whose} under its new name {new}",
                    table,
                    "update",
                    f"UPDATE {sql.table(model)} SET {column} = %s WHERE {where} AND {column} = %s",
                    (new, *where_params, old),
                    counts[old],
                )
            )
            moved += counts[old]
    return steps, dropped, moved


def table_param_steps(sql: MetastoreSql, state: TableState, plan: ColumnPlan) -> list[Step]:
    """TABLE_PARAMS after the change: the accuracy flags and Spark's schema copy."""
    after = params_after(state, plan)
    changed = tuple((k, v) for k, v in sorted(after.items()) if state.params.get(k) != v and v is not None)
    return param_upsert_steps(sql, TableParam, "table", state.table_id, state.params, changed)
