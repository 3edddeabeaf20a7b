"""
The statements of a ``DROP TABLE``: the rows Hive's ``ObjectStore.dropTable`` deletes (after ``HMSHandler``'s
``drop_table_core`` dropped the partitions through ``ObjectStore.dropPartitions``), one ``DELETE`` per metastore
table whatever the number of partitions, children before parents.

Hive (``standalone-metastore/.../ObjectStore.java``, 3.1 and 4.0; ``metastore/.../ObjectStore.java`` in 2.3):
``dropPartitions`` removes each partition's grants (PART_PRIVS, PART_COL_PRIVS), column statistics, parameters, key
values and storage descriptor; ``dropTable`` then the table's grants (TBL_PRIVS, TBL_COL_PRIVS), column statistics,
the constraints the table is parent *or* child of (``listAllTableConstraintsWithOptionalConstraintName``), its
storage descriptor (``preDropStorageDescriptor``: the column descriptor only when no other descriptor uses it) and
the table (PARTITION_KEYS and TABLE_PARAMS go with it, DataNucleus' dependent collections). On 3.1+ the
materialized-view bookkeeping that names the table (MV_TABLES_USED) goes too. A transactional table's ACID
bookkeeping goes as ``TxnHandler.cleanupRecords(TABLE)`` (``AcidEventListener.onDropTable``) deletes it.

Rows keyed by the table or its partitions are deleted through the table id (a sub-select of PARTITIONS); rows keyed
by storage descriptors, SerDes, column descriptors and skewed-value lists, whose link to the table is gone once the
partitions are deleted, by the ids the preview pinned, passed as one array (PostgreSQL) or one ``IN`` list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections

from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    NextWriteId,
    TransactionComponent,
    TransactionWriteId,
)
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Step
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("DropIds", "drop_ids", "drop_table_steps", "metastore_tables")

# ``cleanupRecords(TABLE)``: the ACID bookkeeping keyed by database and table name, in its order.
ACID_CLEANUP = (
    TransactionComponent,
    CompletedTransactionComponent,
    CompactionQueueEntry,
    CompletedCompaction,
    TransactionWriteId,
    NextWriteId,
    CompactionMetric,
)

# (metastore table, key column): rows of the table's partitions (PART_ID), deleted before PARTITIONS.
BY_PARTITION = (
    ("PART_COL_STATS", "PART_ID"),
    ("PART_COL_PRIVS", "PART_ID"),
    ("PART_PRIVS", "PART_ID"),
    ("PARTITION_PARAMS", "PART_ID"),
    ("PARTITION_KEY_VALS", "PART_ID"),
)
# Rows of the storage descriptors (the table's and its partitions'), deleted before SDS.
BY_SD = (
    ("SD_PARAMS", "SD_ID"),
    ("BUCKETING_COLS", "SD_ID"),
    ("SORT_COLS", "SD_ID"),
    ("SKEWED_COL_NAMES", "SD_ID"),
    ("SKEWED_COL_VALUE_LOC_MAP", "SD_ID"),
    ("SKEWED_VALUES", "SD_ID_OID"),
)
# Rows of the table itself, deleted after PARTITIONS and before TBLS.
BY_TABLE = (
    ("PARTITION_KEYS", "TBL_ID"),
    ("TABLE_PARAMS", "TBL_ID"),
    ("TAB_COL_STATS", "TBL_ID"),
    ("TBL_PRIVS", "TBL_ID"),
    ("TBL_COL_PRIVS", "TBL_ID"),
    ("MV_TABLES_USED", "TBL_ID"),
)


@dataclass(frozen=True)
class DropIds:
    """The ids a drop deletes by value: its storage descriptors and the SerDes, column descriptors and skewed-value
    lists only they use (sorted)."""

    sd_ids: tuple[int, ...]
    serde_ids: tuple[int, ...]
    cd_ids: tuple[int, ...]
    string_list_ids: tuple[int, ...]


def metastore_tables(metastore: Metastore) -> frozenset[str]:
    """The metastore's tables, upper-cased (which of Hive's tables this schema version has)."""
    with connections[metastore.alias].cursor() as cursor:
        names = connections[metastore.alias].introspection.table_names(cursor)
    return frozenset(name.upper() for name in names)


def drop_ids(metastore: Metastore, state: TableState, tables: frozenset[str]) -> DropIds:
    """The storage descriptors of the table and its partitions, and what only they use: a few set-based reads."""
    connection = connections[metastore.alias]
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {quote('SD_ID')} FROM {quote('PARTITIONS')} WHERE {quote('TBL_ID')} = %s "
            f"AND {quote('SD_ID')} IS NOT NULL",
            [state.table_id],
        )
        sd_ids = sorted({row[0] for row in cursor.fetchall()} | ({state.sd_id} if state.sd_id else set()))
        serde_ids = _unshared(metastore, "SERDE_ID", sd_ids)
        cd_ids = _unshared(metastore, "CD_ID", sd_ids)
        string_lists: set[int] = set()
        for table, column, sd_column in (
            ("SKEWED_VALUES", "STRING_LIST_ID_EID", "SD_ID_OID"),
            ("SKEWED_COL_VALUE_LOC_MAP", "STRING_LIST_ID_KID", "SD_ID"),
        ):
            if table in tables and sd_ids:
                where, params = _among(metastore, quote(sd_column), sd_ids)
                cursor.execute(f"SELECT {quote(column)} FROM {quote(table)} WHERE {where}", params)
                string_lists |= {row[0] for row in cursor.fetchall() if row[0] is not None}
    return DropIds(tuple(sd_ids), tuple(serde_ids), tuple(cd_ids), tuple(sorted(string_lists)))


def _unshared(metastore: Metastore, column: str, sd_ids: Sequence[int]) -> list[int]:
    """The ``column`` ids (SERDE_ID, CD_ID) the storage descriptors ``sd_ids`` use and no other descriptor does."""
    if not sd_ids:
        return []
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        where, params = _among(metastore, quote("SD_ID"), sd_ids)
        cursor.execute(f"SELECT DISTINCT {quote(column)} FROM {quote('SDS')} WHERE {where}", params)
        used = sorted({row[0] for row in cursor.fetchall() if row[0] is not None})
        if not used:
            return []
        in_used, used_params = _among(metastore, quote(column), used)
        cursor.execute(f"SELECT {quote('SD_ID')}, {quote(column)} FROM {quote('SDS')} WHERE {in_used}", used_params)
        mine = set(sd_ids)  # a set: NOT (SD_ID = ANY(…)) in SQL compares every row with every id
        elsewhere = {used_id for sd_id, used_id in cursor.fetchall() if sd_id not in mine}
    return [i for i in used if i not in elsewhere]


def _among(metastore: Metastore, column: str, ids: Sequence[int]) -> tuple[str, tuple[Any, ...]]:
    """``column`` is one of ``ids``: one array parameter on PostgreSQL, one ``IN`` list elsewhere."""
    if connections[metastore.alias].vendor == "postgresql":
        return f"{column} = ANY(%s)", (list(ids),)
    return f"{column} IN ({', '.join(['%s'] * len(ids))})", tuple(ids)


def drop_table_steps(metastore: Metastore, state: TableState, ids: DropIds, tables: frozenset[str]) -> list[Step]:
    """Every ``DELETE`` of the drop, children first, each with the number of rows it must delete (statements that
    would delete nothing are left out)."""
    sql = MetastoreSql(metastore.alias)
    quote = sql.connection.ops.quote_name
    table_id = state.table_id
    candidates: list[tuple[str, str, tuple[Any, ...]]] = []
    for table, column in BY_PARTITION:
        candidates.append((table, sql.of_table_partitions(quote(column)), (table_id,)))
    candidates += _by_ids(metastore, BY_SD, ids.sd_ids)
    candidates.append(("PARTITIONS", f"{quote('TBL_ID')} = %s", (table_id,)))
    candidates += [(table, f"{quote(column)} = %s", (table_id,)) for table, column in BY_TABLE]
    candidates.append(
        ("KEY_CONSTRAINTS", f"{quote('PARENT_TBL_ID')} = %s OR {quote('CHILD_TBL_ID')} = %s", (table_id, table_id))
    )
    candidates.append(("TBLS", f"{quote('TBL_ID')} = %s", (table_id,)))
    candidates += _by_ids(metastore, (("SDS", "SD_ID"),), ids.sd_ids)
    candidates += _by_ids(metastore, (("SERDE_PARAMS", "SERDE_ID"), ("SERDES", "SERDE_ID")), ids.serde_ids)
    candidates += _by_ids(metastore, (("COLUMNS_V2", "CD_ID"), ("CDS", "CD_ID")), ids.cd_ids)
    candidates += _by_ids(
        metastore,
        (("SKEWED_STRING_LIST_VALUES", "STRING_LIST_ID"), ("SKEWED_STRING_LIST", "STRING_LIST_ID")),
        ids.string_list_ids,
    )
    steps = [_step(metastore, table, where, params) for table, where, params in candidates if table in tables]
    if state.is_transactional:
        steps += _acid_steps(metastore, sql, state)
    return [step for step in steps if step.expected_rows]


def _by_ids(
    metastore: Metastore, keyed: tuple[tuple[str, str], ...], ids: Sequence[int]
) -> list[tuple[str, str, tuple[Any, ...]]]:
    if not ids:
        return []
    quote = connections[metastore.alias].ops.quote_name
    return [(table, *_among(metastore, quote(column), ids)) for table, column in keyed]


def _step(metastore: Metastore, table: str, where: str, params: tuple[Any, ...]) -> Step:
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {quote(table)} WHERE {where}", params)
        count = cursor.fetchone()[0]
    return Step(
        f"Delete {count} {table} rows of the dropped table",
        table,
        "delete",
        f"DELETE FROM {quote(table)} WHERE {where}",
        params,
        count,
    )


def _acid_steps(metastore: Metastore, sql: MetastoreSql, state: TableState) -> list[Step]:
    """``cleanupRecords(TABLE)``: the bookkeeping rows carrying the table's database and name (the models the schema
    version has)."""
    steps = []
    for model in ACID_CLEANUP:
        if not metastore.schema.has_table(model):
            continue
        where = f"{sql.col(model, 'database')} = %s AND {sql.col(model, 'table')} = %s"
        count = model.objects.using(metastore.alias).filter(database=state.ref.database, table=state.ref.table).count()
        steps.append(
            Step(
                f"Delete {count} {model._meta.db_table} rows of the dropped table (its ACID bookkeeping)",
                model._meta.db_table,
                "delete",
                f"DELETE FROM {sql.table(model)} WHERE {where}",
                (state.ref.database, state.ref.table),
                count,
            )
        )
    return steps
