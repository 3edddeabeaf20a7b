"""
Column changes: ADD COLUMNS, REPLACE COLUMNS, CHANGE [COLUMN], with or without CASCADE.

The table gets one new column descriptor; with CASCADE every partition is pointed at that same
descriptor in one statement (Hive creates one descriptor per partition). Descriptors nobody uses any
more are removed, as Hive's ``removeUnusedColumnDescriptor`` does. Statistics are kept wherever the data
did not change: a renamed column keeps its statistics under the new name (Hive drops them); a type
change or a dropped column drops that column's statistics, where its data changes meaning.
A CHANGE that renames a bucketing column renames it in BUCKETING_COLS too, as Hive's client does since 4.0, and a
sort column in SORT_COLS.
Spark's copy of the schema (``spark.sql.sources.schema``) follows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import reduce
from operator import or_

from django.db import connections
from django.db.models import Count, Q

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE
from catalog_admin.models import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    Partition,
    PartitionColumnStatistics,
    PartitionParam,
    SortColumn,
    StorageDescriptor,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.schema import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.dependent_views import dependent_views_warning
from operations.planners.common import build_preview, hive_seconds, param_upsert_steps, snapshot
from operations.preview import HiveComparison, NewId, Preview, Step
from operations.rules import Finding, check_bucket_columns, check_column_types
from operations.spark_schema import rewrite_spark_schema
from operations.specs import AddColumns, ChangeColumn, ColumnDef, ReplaceColumns
from operations.sql import MetastoreSql
from operations.table_state import ColumnInfo, TableState

__all__ = ("partition_flag_steps", "plan_column_change")

STATS_KEY = COLUMN_STATS_ACCURATE
# Flag edits nested in one UPDATE: three REPLACE calls each at most, well below every database's expression depth.
FLAG_EDITS_PER_STEP = 50


@dataclass
class ColumnPlan:
    """The new column list and what happens to each old column's statistics."""

    columns: list[ColumnInfo]
    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name, same type
    stats_dropped: set[str] = field(default_factory=set)  # old names whose data changes meaning or disappears
    flag_inverse: list[list[str]] = field(default_factory=list)  # [new flag, old flag]: a revert's compact rule
    # BUCKETING_COLS / SORT_COLS column a CHANGE renames: (stored name, new name)
    list_renames: dict[type, tuple[str, str]] = field(default_factory=dict)
    blockers: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)


def plan_column_change(
    metastore: Metastore, state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn
) -> Preview:
    plan = _new_columns(state, spec)
    listed = {model: _listed_columns(metastore, state, model) for model in LIST_LABELS}
    renames = {model: _list_rename(spec, plan, names) for model, names in listed.items()}
    plan.list_renames = {model: renamed for model, renamed in renames.items() if renamed}
    findings = _column_findings(metastore, state, spec, plan) + _bucket_findings(
        metastore, plan, listed[BucketingColumn]
    )
    findings += _sort_findings(plan, listed[SortColumn])
    plan.blockers += [f for f in findings if f.severity == "blocker"]
    plan.warnings += [f for f in findings if f.severity != "blocker"]
    cascade = spec.cascade and state.is_partitioned
    touched = _touched_partition_statistics(metastore, state, plan)
    sql = MetastoreSql(metastore.alias)
    steps: list[Step] = []
    dropped_stats = moved_stats = 0
    if not plan.blockers:
        steps += _descriptor_steps(metastore, sql, state, plan, cascade)
        steps += _list_rename_steps(metastore, sql, state, plan, cascade)
        table_steps, table_dropped, table_moved = _table_statistics_steps(metastore, sql, state, plan)
        steps += table_steps
        dropped_stats += table_dropped
        moved_stats += table_moved
        if cascade:
            part_steps, part_dropped, part_moved = _partition_statistics_steps(metastore, sql, state, plan, touched)
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
        hive=_hive_comparison(metastore, state, spec, plan, touched),
        inverse={
            "table_cd": state.cd_id,
            "columns": [(c.name, c.type, c.comment) for c in state.columns],
            "partition_cds": list(state.partitions.column_descriptors) if cascade else [],
            "partition_cd_map": _partition_cd_map(metastore, state) if cascade else {},
            "renamed": plan.renamed,
            "cascade": cascade,
            "flag_inverse": plan.flag_inverse,
            "table_params": {
                k: state.params.get(k)
                for k in new_params.keys() | state.params.keys()
                if new_params.get(k) != state.params.get(k)
            },
        },
    )


def _partition_cd_map(metastore: Metastore, state: TableState) -> dict[str, list[int]]:
    """Which storage descriptors used which descriptor (``"null"``: none), kept only when partitions did not all share
    one."""
    summary = state.partitions
    with_descriptor = sum(users for _cd, users in summary.descriptor_users)
    if len(summary.column_descriptors) <= 1 and with_descriptor == summary.count:
        return {}
    mapping: dict[str, list[int]] = {}
    rows = Partition.objects.using(metastore.alias).filter(table_id=state.table_id).values_list("sd__cd_id", "sd_id")
    for cd_id, sd_id in rows:
        mapping.setdefault("null" if cd_id is None else str(cd_id), []).append(sd_id)
    return mapping


# The new column list ---------------------------------------------------------------------------


def _new_columns(state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn) -> ColumnPlan:
    old = list(state.columns)
    if isinstance(spec, AddColumns):
        return ColumnPlan(columns=old + [_info(c) for c in spec.columns])
    if isinstance(spec, ReplaceColumns):
        new = [_info(c) for c in spec.columns]
        kept = {(c.name, c.type.lower()) for c in new}  # rule 11.2: types compared case-insensitively
        return ColumnPlan(columns=new, stats_dropped={c.name for c in old if (c.name, c.type.lower()) not in kept})
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


def _column_findings(
    metastore: Metastore, state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn, plan: ColumnPlan
) -> list[Finding]:
    findings = []
    if state.is_view:
        findings.append(Finding("view_columns", "ddl", f"{state.ref} is a view: change it with ALTER VIEW … AS"))
    names = [c.name for c in plan.columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        findings.append(Finding("duplicate_column", "ddl", f"Duplicate column name: {', '.join(duplicates)}"))
    clashes = sorted(set(names) & {k.name for k in state.partition_keys})
    if clashes:
        findings.append(
            Finding("partition_key_clash", "6.2", f"Column name {', '.join(clashes)} is already a partition key")
        )
    # Hive's REPLACE_CANNOT_DROP_COLUMNS: fewer columns than before (renames and type changes keep the count).
    if isinstance(spec, ReplaceColumns) and state.is_transactional and len(plan.columns) < len(state.columns):
        findings.append(
            Finding(
                "acid_replace",
                "acid",
                f"Replacing columns cannot drop columns for table {state.ref}. SerDe may be incompatible",
            )
        )
    old = [(c.name, c.type) for c in state.columns]
    new = [(c.name, c.type) for c in plan.columns]
    version = metastore.schema.version
    findings += check_column_types(old, new, version, is_view=state.is_view, serde=state.serde_lib)
    if not state.cd_id:
        findings.append(Finding("no_columns", "ddl", f"{state.ref} has no column descriptor"))
    return findings


# Bucketing and sort columns --------------------------------------------------------------------
# BUCKETING_COLS and SORT_COLS name columns of the storage descriptor: a CHANGE that renames one renames it there.

ColumnList = type[BucketingColumn] | type[SortColumn]
LIST_LABELS: dict[ColumnList, str] = {BucketingColumn: "bucketing", SortColumn: "sort"}


def _listed_columns(metastore: Metastore, state: TableState, model: ColumnList) -> list[str]:
    """The column names of the table's BUCKETING_COLS or SORT_COLS, in order."""
    if not state.sd_id:
        return []
    rows = model.objects.using(metastore.alias).filter(sd_id=state.sd_id).order_by("position")
    return [name for name in rows.values_list("name", flat=True) if name is not None]


def _list_rename(
    spec: AddColumns | ReplaceColumns | ChangeColumn, plan: ColumnPlan, listed: list[str]
) -> tuple[str, str] | None:
    """The listed column a CHANGE renames: (stored name, new name). Hive's client (HIVE-22826, 4.0) renames a bucketing
    column by removing the old name and appending the new one; the console keeps its position, so the order stays."""
    if not isinstance(spec, ChangeColumn) or plan.blockers:
        return None
    old, new = spec.old_name.lower(), spec.column.name.lower()
    stored = next((name for name in listed if name.lower() == old), None)
    return (stored, new) if stored is not None and old != new else None


def _after_rename(listed: list[str], renamed: tuple[str, str] | None) -> list[str]:
    return [renamed[1] if renamed and name == renamed[0] else name for name in listed]


def _bucket_findings(metastore: Metastore, plan: ColumnPlan, bucket_columns: list[str]) -> list[Finding]:
    """Rule 2.5 on the bucketing columns after the change, and what renaming one means for this version."""
    version = metastore.schema.version
    findings = []
    renamed = plan.list_renames.get(BucketingColumn)
    if renamed and not version.capabilities.renames_bucketing_columns:
        findings.append(
            Finding(
                "bucket_column_renamed",
                "2.5",
                f"The bucketing column {renamed[0]} is renamed to {renamed[1]} too: Hive {version.major}."
                f"{version.minor} would leave the bucketing column dangling.",
                "warning",
            )
        )
    after = _after_rename(bucket_columns, renamed)
    return check_bucket_columns(after, [c.name for c in plan.columns], version) + findings


def _sort_findings(plan: ColumnPlan, sort_columns: list[str]) -> list[Finding]:
    """A renamed sort column follows its column; one the new columns no longer have is named (Hive checks neither)."""
    renamed = plan.list_renames.get(SortColumn)
    findings = []
    if renamed:
        findings.append(
            Finding(
                "sort_column_renamed",
                "ddl",
                f"The sort column {renamed[0]} is renamed to {renamed[1]} too, so the table stays sorted by it.",
                "warning",
            )
        )
    names = {c.name.lower() for c in plan.columns}
    dangling = [name for name in _after_rename(sort_columns, renamed) if name.lower() not in names]
    if dangling:
        findings.append(
            Finding(
                "sort_columns_dangling",
                "ddl",
                f"Sort columns [{', '.join(dangling)}] are not table columns any more: the table would stay sorted by "
                "columns it no longer has.",
                "warning",
            )
        )
    return findings


def _list_rename_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, plan: ColumnPlan, cascade: bool
) -> list[Step]:
    """Rename each renamed listed column in the table's storage descriptor (and, with CASCADE, in its partitions'), in
    one statement per list that first keeps the old rows for a revert."""
    steps = []
    for model, (old, new) in plan.list_renames.items():
        name, sd = sql.col(model, "name"), sql.col(model, "sd")
        owners, owner_params = f"{sd} = %s", (state.sd_id,)
        rows = 1
        if cascade:
            owners = f"({owners} OR {sql.of_table_partitions(sd, 'sd')})"
            owner_params += (state.table_id,)
            partition_sds = Partition.objects.using(metastore.alias).filter(table_id=state.table_id).values("sd_id")
            rows += model.objects.using(metastore.alias).filter(sd_id__in=partition_sds, name=old).count()
        where, where_params = f"{name} = %s AND {owners}", (old, *owner_params)
        scope = "the table and its partitions" if cascade else "the table"
        steps.append(
            Step(
                f"Rename the {LIST_LABELS[model]} column {old} to {new} for {scope}",
                model._meta.db_table,
                "update",
                f"UPDATE {sql.table(model)} SET {name} = %s WHERE {where}",
                (new, *where_params),
                rows,
                before_sql=f"SELECT * FROM {sql.table(model)} WHERE {where}",
                before_params=where_params,
            )
        )
    return steps


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


def _touched_partition_statistics(
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


def _partition_statistics_steps(
    metastore: Metastore,
    sql: MetastoreSql,
    state: TableState,
    plan: ColumnPlan,
    touched: dict[tuple[str, str], int],
) -> tuple[list[Step], int, int]:
    counts: dict[str, int] = {}
    for (name, _type), n in touched.items():
        counts[name] = counts.get(name, 0) + n
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
    """Edit every partition's COLUMN_STATS_ACCURATE flags. Renames alone, onto names no flag carries yet, have an exact
    inverse (``plan.flag_inverse``, one rule for any number of partitions); otherwise the rows are kept for a revert."""
    edits = _flag_edits(plan)
    if not edits:
        return []
    changing, naming_new = _flag_counts(metastore, state.table_id, edits)
    compact = not plan.stats_dropped and not naming_new
    if compact:
        plan.flag_inverse = [[new, old] for old, new in edits]
    # With one statement (at most FLAG_EDITS_PER_STEP edits) its row count is the one just made.
    known = changing if len(edits) <= FLAG_EDITS_PER_STEP else None
    return partition_flag_steps(metastore, sql, state.table_id, edits, keep_rows=not compact, rows=known)


def _flag_counts(metastore: Metastore, table_id: int, edits: list[tuple[str, str]]) -> tuple[int, int]:
    """In one pass over the table's partitions' flags: rows carrying any old flag, and rows already carrying a new."""
    flagged = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table_id, key=STATS_KEY)
    olds = reduce(or_, (Q(value__contains=old) for old, _new in edits))
    news = [Q(value__contains=new) for _old, new in edits if new]
    counts = {"changing": Count("partition", filter=olds)}
    if news:
        counts["naming_new"] = Count("partition", filter=reduce(or_, news))
    found = flagged.aggregate(**counts)
    return found["changing"], found.get("naming_new", 0)


def partition_flag_steps(
    metastore: Metastore,
    sql: MetastoreSql,
    table_id: int,
    edits: list[tuple[str, str]],
    *,
    keep_rows: bool,
    rows: int | None = None,
) -> list[Step]:
    """Apply ``edits`` to the table's partitions' COLUMN_STATS_ACCURATE flags set-based (Hive writes them as compact
    JSON): all edits of a row in one UPDATE (per group of edits); with ``keep_rows`` the first statement keeps every
    row any statement changes, once, with its original value. ``rows``: the count of a single statement, if known."""
    value, key = sql.col(PartitionParam, "value"), sql.col(PartitionParam, "key")
    owners = f"{sql.of_table_partitions(sql.col(PartitionParam, 'partition'))} AND {key} = %s"
    flagged = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table_id, key=STATS_KEY)
    steps, changes = [], []
    for start in range(0, len(edits), FLAG_EDITS_PER_STEP):
        group = edits[start : start + FLAG_EDITS_PER_STEP]
        single = rows is not None and len(edits) <= FLAG_EDITS_PER_STEP
        changed_rows = (
            rows if single else flagged.filter(reduce(or_, (Q(value__contains=o) for o, _n in group))).count()
        )
        if not changed_rows:
            continue
        expression, params = _flag_expression(value, group)
        changes.append((f"{value} <> {expression}", params))
        steps.append(
            Step(
                f"Update partition statistics flags for {', '.join(old for old, _new in group)}",
                "PARTITION_PARAMS",
                "update",
                f"UPDATE {sql.table(PartitionParam)} SET {value} = {expression} "
                f"WHERE {owners} AND {value} <> {expression}",
                (*params, table_id, STATS_KEY, *params),
                changed_rows,
            )
        )
    if not steps or not keep_rows:
        return steps
    # The old flags cannot be derived from the new ones: the first step keeps every row any step changes.
    changed = " OR ".join(condition for condition, _params in changes)
    steps[0] = replace(
        steps[0],
        before_sql=f"SELECT * FROM {sql.table(PartitionParam)} WHERE {owners} AND ({changed})",
        before_params=(table_id, STATS_KEY, *(p for _condition, params in changes for p in params)),
    )
    return steps


def _flag_edits(plan: ColumnPlan) -> list[tuple[str, str]]:
    """``(flag, replacement)`` pairs: a dropped column's flag goes, a renamed column's follows its new name."""
    edits = [(f'"{n}":"true"', "") for n in sorted(plan.stats_dropped)]
    return edits + [(f'"{o}":"true"', f'"{n}":"true"') for o, n in sorted(plan.renamed.items())]


def _flag_expression(column: str, edits: list[tuple[str, str]]) -> tuple[str, tuple[str, ...]]:
    """Nested REPLACE calls applying ``edits`` in order, and their parameters; a dropped flag takes its comma along."""
    expression, params = column, []
    for old, new in edits:
        pairs = [(old, new)] if new else [(f",{old}", ""), (f"{old},", ""), (old, "")]
        for find, put in pairs:
            expression = f"REPLACE({expression}, %s, %s)"
            params += [find, put]
    return expression, tuple(params)


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
    warnings = list(plan.warnings)
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


def _hive_comparison(
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
    rule 10.6 (3.1, 2.3): whenever the column lists differ at all (names, types and comments as stored)."""
    if not version.capabilities.column_change_skips_unchanged_partitions:
        return [(c.name, c.type, c.comment) for c in old] != [(c.name, c.type, c.comment) for c in new]
    if cascade:
        return not _same_columns(old, new)
    return not _prefix_columns(old, new)


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
