"""
A partition's ACID bookkeeping, following Hive's AcidEventListener. A rename re-labels the rows that carry the old
partition name (``TxnHandler.onRename``: TXN_COMPONENTS, COMPLETED_TXN_COMPONENTS, HIVE_LOCKS, COMPACTION_QUEUE,
COMPLETED_COMPACTIONS, WRITE_SET and, on 4.x, COMPACTION_METRICS_CACHE); a drop deletes what
``cleanupRecords(PARTITION)`` deletes (the same without HIVE_LOCKS and WRITE_SET, which Hive leaves to its
AcidHouseKeeperService). Like the table rename, the console does this on 2.3 too.
"""

from __future__ import annotations

from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    HiveLock,
    TransactionComponent,
    WriteSetEntry,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import ACID_BOOKKEEPING
from operations.planners.partitions.chunks import chunks
from operations.preview import Step
from operations.rules import Finding
from operations.specs import TableRef
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "DROPPED_BOOKKEEPING",
    "LEFT_TO_HOUSEKEEPING",
    "PARTITION_BOOKKEEPING",
    "bookkeeping_cleanup_steps",
    "bookkeeping_in_use",
    "bookkeeping_names_in_use",
    "bookkeeping_warnings",
    "partition_bookkeeping",
    "relabel_bookkeeping_steps",
)

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


def bookkeeping_in_use(metastore: Metastore, state: TableState, name: str) -> list[Finding]:
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
        for chunk in chunks(names):
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


def bookkeeping_cleanup_steps(metastore: Metastore, sql: MetastoreSql, ref: TableRef, names: list[str]) -> list[Step]:
    """Hive's cleanupRecords(PARTITION): delete the dropped partitions' rows, by name, from each bookkeeping table
    that has any (execution keeps them in the before-image)."""
    steps = []
    for model in DROPPED_BOOKKEEPING:
        if not metastore.schema.has_table(model):
            continue
        partition, database, table = (sql.col(model, name) for name in ("partition", "database", "table"))
        for chunk in chunks(names):
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


def bookkeeping_warnings(metastore: Metastore, state: TableState, names: list[str], steps: list[Step]) -> list[Finding]:
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
