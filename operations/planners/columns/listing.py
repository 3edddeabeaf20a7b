"""The new column list of ADD COLUMNS, REPLACE COLUMNS and CHANGE [COLUMN], and Hive's rules on it."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog_admin.selectors.metastores import Metastore
from operations.rules import Finding, check_column_types, check_reorder_serde, check_replace_columns_serde
from operations.specs import AddColumns, ChangeColumn, ColumnDef, ReplaceColumns
from operations.table_state import ColumnInfo, TableState

__all__ = ("ColumnPlan", "column_findings", "new_columns")


@dataclass
class ColumnPlan:
    """The new column list and what happens to each old column's statistics."""

    columns: list[ColumnInfo]
    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name, same type
    column_rename: tuple[str, str] | None = None  # a CHANGE's (old name, new name), whatever the type does
    stats_dropped: set[str] = field(default_factory=set)  # old names whose data changes meaning or disappears
    # BUCKETING_COLS / SORT_COLS column a CHANGE renames: (stored name, new name)
    list_renames: dict[type, tuple[str, str]] = field(default_factory=dict)
    blockers: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)


def new_columns(state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn) -> ColumnPlan:
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
    plan = ColumnPlan(columns=columns, column_rename=(previous.name, new.name) if new.name != previous.name else None)
    if new.type.lower() != previous.type.lower():
        plan.stats_dropped.add(previous.name)
    elif new.name != previous.name:
        plan.renamed[previous.name] = new.name
    return plan


def _info(column: ColumnDef) -> ColumnInfo:
    return ColumnInfo(column.name.lower(), column.type, column.comment)


def column_findings(
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
    findings += _serde_findings(metastore, state, spec, plan)
    old = [(c.name, c.type) for c in state.columns]
    new = [(c.name, c.type) for c in plan.columns]
    version = metastore.schema.version
    findings += check_column_types(old, new, version, is_view=state.is_view, serde=state.serde_lib)
    if not state.cd_id:
        findings.append(Finding("no_columns", "ddl", f"{state.ref} has no column descriptor"))
    return findings


def _serde_findings(
    metastore: Metastore, state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn, plan: ColumnPlan
) -> list[Finding]:
    """What Hive's client refuses by serde before the metastore sees the change (``operations.rules``): REPLACE
    COLUMNS on a serde it cannot replace, or dropping ORC (and partitioned Parquet, without CASCADE) columns; CHANGE
    … FIRST|AFTER on ORC. Schema evolution is on, as ``hive.exec.schema.evolution`` is by default."""
    if state.is_view:
        return []
    ref = state.ref
    if isinstance(spec, ReplaceColumns):
        return check_replace_columns_serde(
            database=ref.database,
            table=ref.table,
            serde=state.serde_lib,
            old_count=len(state.columns),
            new_count=len(plan.columns),
            cascade=spec.cascade,
            partitioned=state.is_partitioned,
            version=metastore.schema.version,
        )
    if isinstance(spec, ChangeColumn):
        reorders = spec.first or bool(spec.after)
        return check_reorder_serde(
            database=ref.database, table=ref.table, input_format=state.input_format, reorders=reorders
        )
    return []
