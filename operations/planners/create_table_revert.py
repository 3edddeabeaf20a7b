"""
The revert of a ``CREATE TABLE``: the rows it created deleted (children first, each delete's rows kept in the
before-image), the directory it made removed when empty, one DROP_TABLE event (``HMSHandler.drop_table_core``).

Refused, naming what is in the way, when the table is no longer as created: other ids (dropped and created again),
partitions, statistics or privileges added since, or files in the directory the console made (written since: the
revert never deletes data). An EXTERNAL table's existing directory is never removed (as Hive's DROP of an external
table).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from catalog_admin.locations import filesystem_for
from catalog_admin.models import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    Partition,
    PartitionKey,
    SerDe,
    SerDeParam,
    SortColumn,
    StorageDescriptor,
    StorageDescriptorParam,
    Table,
    TableColumnStatistics,
    TableParam,
    TablePrivilege,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import build_preview, snapshot
from operations.preview import Preview, Step
from operations.rules import Finding
from operations.specs import RevertExecution, TableRef
from operations.sql import MetastoreSql
from operations.table_state import TableState, read_table_state

__all__ = ("plan_create_table_revert",)

FILES_NAMED = 5


def plan_create_table_revert(
    metastore: Metastore, *, execution_id: int, statement: str, operation: dict[str, Any], image: dict[str, Any]
) -> Preview:
    """The plan dropping what execution ``execution_id`` (``statement``) created, from its before-image."""
    target = TableRef(**operation["target"])
    state = read_table_state(metastore, target)
    allocated = image.get("allocated_ids", {})
    ids = {table: allocated.get(f"{table}:0") for table in ("TBLS", "SDS", "CDS", "SERDES")}
    blockers = _changed_blockers(metastore, state, ids)
    made = list(image.get("made_directories", []))
    blockers += _files_blockers(state, made)
    steps = [] if blockers else _delete_steps(metastore, ids)
    spec = RevertExecution(target=target, execution_id=execution_id, statement=statement)
    absent = replace(snapshot(state), type="", owner=None, location=None, input_format=None, output_format=None,
                     serde_lib=None, columns=(), partition_keys=(), params=(), serde_params=())  # fmt: skip
    preview = build_preview(metastore, state, spec, steps=steps, after=absent, blockers=blockers,
                            inverse={"reverts": execution_id})  # fmt: skip
    return replace(preview, directories_removed=tuple(made) if not blockers else ())


def _changed_blockers(metastore: Metastore, state: TableState, ids: dict[str, int | None]) -> list[Finding]:
    alias, name = metastore.alias, f"{state.ref.database}.{state.ref.table}"
    if (state.table_id, state.sd_id, state.cd_id, state.serde_id) != (ids["TBLS"], ids["SDS"], ids["CDS"],
                                                                       ids["SERDES"]):  # fmt: skip
        return [
            Finding(
                "table_changed",
                "revert",
                f"{name} is not the table the execution created (its table, "
                "storage, columns or SerDe rows changed since): revert those changes first, or drop it.",
            )
        ]
    found = {
        "partitions": Partition.objects.using(alias).filter(table_id=state.table_id).count(),
        "column statistics": TableColumnStatistics.objects.using(alias).filter(table_id=state.table_id).count(),
        "privileges": TablePrivilege.objects.using(alias).filter(table_id=state.table_id).count(),
    }
    return [Finding("table_in_use", "revert", f"{name} has {count} {what} added since it was created: the revert "
                    "drops only what the execution created; drop them first.") for what, count in found.items()
            if count]  # fmt: skip


def _files_blockers(state: TableState, made: list[str]) -> list[Finding]:
    """Files in the directory the execution made were written since: never deleted by a revert."""
    if not made or state.location is None:
        return []
    listed = filesystem_for(state.location).list_files(state.location, limit=FILES_NAMED + 1) or []
    if not listed:
        return []
    named = ", ".join(entry.location for entry in listed[:FILES_NAMED])
    more = " …" if len(listed) > FILES_NAMED else ""
    return [Finding("files_written", "revert", f"{state.location} holds files written since the table was created "
                    f"({named}{more}): the revert deletes no data. Move them away, or drop the table.")]  # fmt: skip


# Children first (Hive's foreign keys): (model, its key field, which new id it belongs to).
_DELETES = (
    (TableParam, "table", "TBLS"),
    (PartitionKey, "table", "TBLS"),
    (Table, "id", "TBLS"),
    (BucketingColumn, "sd", "SDS"),
    (SortColumn, "sd", "SDS"),
    (StorageDescriptorParam, "sd", "SDS"),
    (StorageDescriptor, "id", "SDS"),
    (SerDeParam, "serde", "SERDES"),
    (SerDe, "id", "SERDES"),
    (Column, "cd", "CDS"),
    (ColumnDescriptor, "id", "CDS"),
)


def _delete_steps(metastore: Metastore, ids: dict[str, int | None]) -> list[Step]:
    sql, alias = MetastoreSql(metastore.alias), metastore.alias
    steps = []
    for model, key, owner in _DELETES:
        count = model.objects.using(alias).filter(**{key: ids[owner]}).count()
        if not count:
            continue
        steps.append(
            Step(
                f"Remove {count} {model._meta.db_table} row(s) of the created table",
                model._meta.db_table,
                "delete",
                f"DELETE FROM {sql.table(model)} WHERE {sql.col(model, key)} = %s",
                (ids[owner],),
                count,
            )
        )
    return steps  # fmt: skip
