"""
Column changes: ADD COLUMNS, REPLACE COLUMNS, CHANGE [COLUMN], with or without CASCADE.

The table gets one new column descriptor; with CASCADE every partition is pointed at that same
descriptor in one statement (Hive creates one descriptor per partition). Descriptors nobody uses any
more are removed, as Hive's ``removeUnusedColumnDescriptor`` does. Statistics are kept wherever the data
did not change: a renamed column keeps its statistics under the new name (Hive drops them); a type
change or a dropped column drops that column's statistics, where its data changes meaning.
Spark's copy of the schema (``spark.sql.sources.schema``) follows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db.models import Count

from catalog_admin.models import (
    Column,
    ColumnDescriptor,
    Partition,
    PartitionColumnStatistics,
    PartitionParam,
    StorageDescriptor,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.schema import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.dependent_views import dependent_views_warning
from operations.planners.common import build_preview, hive_seconds, param_upsert_steps, snapshot
from operations.preview import HiveComparison, NewId, Preview, Step
from operations.rules import Finding, check_column_types
from operations.spark_schema import rewrite_spark_schema
from operations.specs import AddColumns, ChangeColumn, ColumnDef, ReplaceColumns
from operations.sql import MetastoreSql
from operations.table_state import ColumnInfo, TableState

__all__ = ("plan_column_change",)

V4 = SchemaVersion(4, 0, 0, "alpha", 1)
STATS_KEY = "COLUMN_STATS_ACCURATE"


@dataclass
class ColumnPlan:
    """The new column list and what happens to each old column's statistics."""

    columns: list[ColumnInfo]
    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name, same type
    stats_dropped: set[str] = field(default_factory=set)  # old names whose data changes meaning or disappears
    blockers: list[Finding] = field(default_factory=list)


def plan_column_change(
    metastore: Metastore, state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn
) -> Preview:
    plan = _new_columns(state, spec)
    plan.blockers += _column_blockers(metastore, state, spec, plan)
    cascade = spec.cascade and state.is_partitioned
    sql = MetastoreSql(metastore.alias)
    steps: list[Step] = []
    dropped_stats = moved_stats = 0
    if not plan.blockers:
        steps += _descriptor_steps(metastore, sql, state, plan, cascade)
        table_steps, table_dropped, table_moved = _table_statistics_steps(metastore, sql, state, plan)
        steps += table_steps
        dropped_stats += table_dropped
        moved_stats += table_moved
        if cascade:
            part_steps, part_dropped, part_moved = _partition_statistics_steps(metastore, sql, state, plan)
            steps += part_steps
            dropped_stats += part_dropped
            moved_stats += part_moved
        steps += _table_param_steps(sql, state, plan)
    new_params = _params_after(state, plan)
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(
            state,
            columns=tuple((c.name, c.type, c.comment) for c in plan.columns),
            params=tuple(sorted(new_params.items())),
        ),
        blockers=plan.blockers,
        warnings=_warnings(metastore, state, plan, cascade),
        partitions_touched=state.partitions.count if cascade else 0,
        statistics_moved=moved_stats,
        statistics_dropped=dropped_stats,
        columns_changed=True,
        hive=_hive_comparison(metastore, state, spec, plan),
        inverse={
            "table_cd": state.cd_id,
            "columns": [(c.name, c.type, c.comment) for c in state.columns],
            "partition_cds": list(state.partitions.column_descriptors) if cascade else [],
            "partition_cd_map": _partition_cd_map(metastore, state) if cascade else {},
            "renamed": plan.renamed,
            "cascade": cascade,
            "table_params": {
                k: state.params.get(k)
                for k in new_params.keys() | state.params.keys()
                if new_params.get(k) != state.params.get(k)
            },
        },
    )


def _partition_cd_map(metastore: Metastore, state: TableState) -> dict[str, list[int]]:
    """Which storage descriptors used which descriptor, kept only when partitions did not all share one."""
    if len(state.partitions.column_descriptors) <= 1:
        return {}
    mapping: dict[str, list[int]] = {}
    rows = Partition.objects.using(metastore.alias).filter(table_id=state.table_id).values_list("sd__cd_id", "sd_id")
    for cd_id, sd_id in rows:
        mapping.setdefault(str(cd_id), []).append(sd_id)
    return mapping


# The new column list ---------------------------------------------------------------------------


def _new_columns(state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn) -> ColumnPlan:
    old = list(state.columns)
    if isinstance(spec, AddColumns):
        return ColumnPlan(columns=old + [_info(c) for c in spec.columns])
    if isinstance(spec, ReplaceColumns):
        new = [_info(c) for c in spec.columns]
        kept = {(c.name, c.type) for c in new}
        return ColumnPlan(columns=new, stats_dropped={c.name for c in old if (c.name, c.type) not in kept})
    return _changed_column(old, spec)


def _changed_column(old: list[ColumnInfo], spec: ChangeColumn) -> ColumnPlan:
    names = [c.name for c in old]
    if spec.old_name.lower() not in names:
        return ColumnPlan(
            columns=old, blockers=[Finding("unknown_column", "ddl", f"Invalid column reference {spec.old_name}")]
        )
    index = names.index(spec.old_name.lower())
    previous = old[index]
    new = _info(spec.column)
    columns = old[:index] + old[index + 1 :]
    if spec.first:
        columns.insert(0, new)
    elif spec.after:
        after = [c.name for c in columns]
        if spec.after.lower() not in after:
            return ColumnPlan(
                columns=old, blockers=[Finding("unknown_column", "ddl", f"Invalid column reference {spec.after}")]
            )
        columns.insert(after.index(spec.after.lower()) + 1, new)
    else:
        columns.insert(index, new)
    plan = ColumnPlan(columns=columns)
    if new.type.lower() != previous.type.lower():
        plan.stats_dropped.add(previous.name)
    elif new.name != previous.name:
        plan.renamed[previous.name] = new.name
    return plan


def _info(column: ColumnDef) -> ColumnInfo:
    return ColumnInfo(column.name.lower(), column.type, column.comment)


def _column_blockers(
    metastore: Metastore, state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn, plan: ColumnPlan
) -> list[Finding]:
    blockers = []
    if state.is_view:
        blockers.append(Finding("view_columns", "ddl", f"{state.ref} is a view: change it with ALTER VIEW … AS"))
    names = [c.name for c in plan.columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        blockers.append(Finding("duplicate_column", "ddl", f"Duplicate column name: {', '.join(duplicates)}"))
    clashes = sorted(set(names) & {k.name for k in state.partition_keys})
    if clashes:
        blockers.append(
            Finding("partition_key_clash", "6.2", f"Column name {', '.join(clashes)} is already a partition key")
        )
    # Hive's REPLACE_CANNOT_DROP_COLUMNS: fewer columns than before (renames and type changes keep the count).
    if isinstance(spec, ReplaceColumns) and state.is_transactional and len(plan.columns) < len(state.columns):
        blockers.append(
            Finding(
                "acid_replace",
                "acid",
                f"Replacing columns cannot drop columns for table {state.ref}. SerDe may be incompatible",
            )
        )
    old = [(c.name, c.type) for c in state.columns]
    new = [(c.name, c.type) for c in plan.columns]
    blockers += check_column_types(old, new, metastore.schema.version, is_view=state.is_view)
    if not state.cd_id:
        blockers.append(Finding("no_columns", "ddl", f"{state.ref} has no column descriptor"))
    return blockers


# Descriptors -----------------------------------------------------------------------------------


def _descriptor_steps(
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


# Statistics ------------------------------------------------------------------------------------


def _table_statistics_steps(
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


def _partition_statistics_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan
) -> tuple[list[Step], int, int]:
    touched = set(plan.stats_dropped) | set(plan.renamed)
    counts = (
        dict(
            PartitionColumnStatistics.objects.using(metastore.alias)
            .filter(partition__table_id=state.table_id, column_name__in=touched)
            .values("column_name")
            .annotate(n=Count("id"))
            .values_list("column_name", "n")
        )
        if touched
        else {}
    )
    where = sql.of_table_partitions(sql.col(PartitionColumnStatistics, "partition"))
    steps, dropped, moved = _statistics_steps(
        sql, PartitionColumnStatistics, "partition", where, (state.table_id,), counts, plan, "every partition"
    )
    steps += _partition_flag_steps(metastore, sql, state, plan)
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


def _partition_flag_steps(metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan) -> list[Step]:
    """Edit every partition's COLUMN_STATS_ACCURATE flags set-based (Hive writes them as compact JSON)."""
    value = sql.col(PartitionParam, "value")
    steps = []
    edits = [(f'"{n}":"true"', "") for n in sorted(plan.stats_dropped)]
    edits += [(f'"{o}":"true"', f'"{n}":"true"') for o, n in sorted(plan.renamed.items())]
    for old, new in edits:
        expression = _replace_flag(value, bool(new))
        where = (
            f"{sql.of_table_partitions(sql.col(PartitionParam, 'partition'))} AND {sql.col(PartitionParam, 'key')} = %s"
        )
        rows = (
            PartitionParam.objects.using(metastore.alias)
            .filter(partition__table_id=state.table_id, key=STATS_KEY, value__contains=old)
            .count()
        )
        if rows:
            params = (old, new) if new else (f",{old}", "", f"{old},", "", old, "")
            steps.append(
                Step(
                    f"Update partition statistics flags for {old}",
                    "PARTITION_PARAMS",
                    "update",
                    f"UPDATE {sql.table(PartitionParam)} SET {value} = {expression} WHERE {where} "
                    f"AND {value} <> {expression}",
                    (*params, state.table_id, STATS_KEY, *params),
                    rows,
                    # The old flags cannot be derived from the new ones: keep them for a revert.
                    before_sql=f"SELECT * FROM {sql.table(PartitionParam)} WHERE {where} AND {value} <> {expression}",
                    before_params=(state.table_id, STATS_KEY, *params),
                )
            )
    return steps


def _replace_flag(column: str, rename: bool) -> str:
    if rename:
        return f"REPLACE({column}, %s, %s)"
    return f"REPLACE(REPLACE(REPLACE({column}, %s, %s), %s, %s), %s, %s)"


def _params_after(state: TableState, plan: ColumnPlan) -> dict[str, str | None]:
    params = dict(state.params)
    flags = params.get(STATS_KEY)
    if flags:
        params[STATS_KEY] = _edit_flags(flags, plan)
    spark = rewrite_spark_schema(
        params,
        [(c.name, c.type, c.comment) for c in plan.columns],
        [k.name for k in state.partition_keys],
        plan.renamed,
    )
    if spark:
        params.update(spark)
    return params


def _edit_flags(raw: str, plan: ColumnPlan) -> str:
    try:
        flags = json.loads(raw)
    except ValueError:
        return raw
    columns = flags.get("COLUMN_STATS") if isinstance(flags, dict) else None
    if not isinstance(columns, dict):
        return raw
    for name in plan.stats_dropped:
        columns.pop(name, None)
    for old, new in plan.renamed.items():
        if old in columns:
            columns[new] = columns.pop(old)
    return json.dumps(flags, separators=(",", ":"))


def _table_param_steps(sql: MetastoreSql, state: TableState, plan: ColumnPlan) -> list[Step]:
    after = _params_after(state, plan)
    changed = tuple((k, v) for k, v in sorted(after.items()) if state.params.get(k) != v and v is not None)
    return param_upsert_steps(sql, TableParam, "table", state.table_id, state.params, changed)


# Warnings and Hive's own cost ------------------------------------------------------------------


def _warnings(metastore: Metastore, state: TableState, plan: ColumnPlan, cascade: bool) -> list[Finding]:
    warnings = []
    if state.is_partitioned and not cascade:
        warnings.append(
            Finding(
                "not_cascaded",
                "10.4",
                f"The table's {state.partitions.count} partitions keep their old columns "
                "(add CASCADE to change them too).",
                "warning",
            )
        )
    if plan.renamed:
        warnings.append(
            Finding(
                "stats_kept",
                "11.5",
                "Statistics of renamed columns are kept under the new name (Hive drops them).",
                "warning",
            )
        )
    if state.params.get("spark.sql.sources.provider"):
        warnings.append(
            Finding(
                "spark_datasource",
                "spark",
                "This is a Spark data-source table; Spark's schema copy is rewritten to match.",
                "warning",
            )
        )
    if plan.renamed or plan.stats_dropped:
        consequence = "may fail where they use a renamed, retyped or dropped column"
        warnings += dependent_views_warning(metastore, state.ref, consequence)
    return warnings


def _hive_comparison(metastore: Metastore, state: TableState, spec: object, plan: ColumnPlan) -> HiveComparison:
    version = metastore.schema.version
    appended_only = isinstance(spec, AddColumns)
    cascade = getattr(spec, "cascade", False)
    if not state.is_partitioned or (appended_only and not cascade and version >= V4):
        return HiveComparison(str(version), 0, len(plan.stats_dropped), hive_seconds(0, 0))
    partitions = state.partitions.count
    notes = [f"Hive handles the {partitions} partitions one at a time"]
    if cascade:
        notes.append(f"and creates {partitions} new column descriptors, one per partition")
    lost = (
        PartitionColumnStatistics.objects.using(metastore.alias)
        .filter(partition__table_id=state.table_id, column_name__in=set(plan.renamed) | plan.stats_dropped)
        .count()
        if (plan.renamed or plan.stats_dropped)
        else 0
    )
    return HiveComparison(str(version), partitions, lost, hive_seconds(partitions, lost), (", ".join(notes) + ".",))
