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

``DROP DATABASE … CASCADE`` deletes the same rows for every table of the database at once (:class:`DropScope`
``DB_ID``): the same statements, the table id replaced by a sub-select of the database's tables, so the number of
statements does not grow with the number of tables. ``reinsert_steps`` puts deleted rows back (an undrop).
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
from operations.models.executions import row_value
from operations.preview import Step
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "INSERT_ORDER",
    "DropIds",
    "DropScope",
    "database_drop_ids",
    "drop_ids",
    "drop_table_steps",
    "metastore_tables",
    "reinsert_steps",
)

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


# Parents before children (the reverse of the drop's statements): how deleted rows go back.
INSERT_ORDER = (
    "CDS", "COLUMNS_V2", "SERDES", "SERDE_PARAMS", "SKEWED_STRING_LIST", "SKEWED_STRING_LIST_VALUES", "SDS",
    "SD_PARAMS", "BUCKETING_COLS", "SORT_COLS", "SKEWED_COL_NAMES", "SKEWED_COL_VALUE_LOC_MAP", "SKEWED_VALUES",
    "TBLS", "PARTITION_KEYS", "TABLE_PARAMS", "TAB_COL_STATS", "TBL_PRIVS", "TBL_COL_PRIVS", "KEY_CONSTRAINTS",
    "MV_TABLES_USED", "PARTITIONS", "PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_PRIVS", "PART_COL_PRIVS",
    "PART_COL_STATS", "FUNCS", "FUNC_RU",
)  # fmt: skip
ROWS_PER_INSERT = 1000


@dataclass(frozen=True)
class DropScope:
    """The tables a drop deletes: one table (``TBL_ID`` = ``value``) or every table of a database (``DB_ID`` =
    ``value``, ``database``: its name, which keys the ACID bookkeeping)."""

    column: str
    value: int
    database: str = ""

    @property
    def label(self) -> str:
        return "the dropped table" if self.column == "TBL_ID" else "the dropped database's tables"

    def tables(self, metastore: Metastore, column: str = "TBL_ID") -> str:
        """``column`` (a table id) is one of the scope's tables (one parameter: :attr:`value`)."""
        quote = connections[metastore.alias].ops.quote_name
        if self.column == "TBL_ID":
            return f"{quote(column)} = %s"
        subquery = f"SELECT {quote('TBL_ID')} FROM {quote('TBLS')} WHERE {quote('DB_ID')} = %s"
        return _probe(metastore, quote(column), subquery)

    def of_partitions(self, metastore: Metastore, column: str) -> str:
        """``column`` is one of the scope's partitions' ids (one parameter: :attr:`value`)."""
        if self.column == "TBL_ID":
            return MetastoreSql(metastore.alias).of_table_partitions(column)
        quote = connections[metastore.alias].ops.quote_name
        subquery = (
            f"SELECT p.{quote('PART_ID')} FROM {quote('PARTITIONS')} p JOIN {quote('TBLS')} t "
            f"ON t.{quote('TBL_ID')} = p.{quote('TBL_ID')} WHERE t.{quote('DB_ID')} = %s"
        )
        return _probe(metastore, column, subquery)


def _probe(metastore: Metastore, column: str, subquery: str) -> str:
    """``column`` is among the ids ``subquery`` selects (on PostgreSQL probed through the column's index, as
    :meth:`MetastoreSql.of_table_partitions`)."""
    if connections[metastore.alias].vendor == "postgresql":
        return f"{column} = ANY(ARRAY({subquery}))"
    return f"{column} IN ({subquery})"


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
    quote = connections[metastore.alias].ops.quote_name
    sql = (
        f"SELECT {quote('SD_ID')} FROM {quote('PARTITIONS')} WHERE {quote('TBL_ID')} = %s "
        f"AND {quote('SD_ID')} IS NOT NULL"
    )
    return _ids_of(metastore, sql, [state.table_id], {state.sd_id} if state.sd_id else set(), tables)


def database_drop_ids(metastore: Metastore, database_id: int, tables: frozenset[str]) -> DropIds:
    """:func:`drop_ids` for every table of the database ``database_id`` (their descriptors and their partitions')."""
    quote = connections[metastore.alias].ops.quote_name
    sql = (
        f"SELECT p.{quote('SD_ID')} FROM {quote('PARTITIONS')} p JOIN {quote('TBLS')} t "
        f"ON t.{quote('TBL_ID')} = p.{quote('TBL_ID')} WHERE t.{quote('DB_ID')} = %s "
        f"AND p.{quote('SD_ID')} IS NOT NULL "
        f"UNION SELECT {quote('SD_ID')} FROM {quote('TBLS')} WHERE {quote('DB_ID')} = %s "
        f"AND {quote('SD_ID')} IS NOT NULL"
    )
    return _ids_of(metastore, sql, [database_id, database_id], set(), tables)


def _ids_of(
    metastore: Metastore, sd_sql: str, params: list[Any], extra_sds: set[int], tables: frozenset[str]
) -> DropIds:
    """The storage descriptors ``sd_sql`` selects (with ``extra_sds``), and the SerDes, column descriptors and
    skewed-value lists only they use."""
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(sd_sql, params)
        sd_ids = tuple(sorted({row[0] for row in cursor.fetchall()} | extra_sds))  # a tuple: its literal is kept
        serde_ids = _unshared(metastore, "SERDE_ID", sd_ids)
        cd_ids = _unshared(metastore, "CD_ID", sd_ids)
        string_lists: set[int] = set()
        for table, column, sd_column in (
            ("SKEWED_VALUES", "STRING_LIST_ID_EID", "SD_ID_OID"),
            ("SKEWED_COL_VALUE_LOC_MAP", "STRING_LIST_ID_KID", "SD_ID"),
        ):
            if table in tables and sd_ids:
                where, among = _among(metastore, quote(sd_column), sd_ids)
                cursor.execute(f"SELECT {quote(column)} FROM {quote(table)} WHERE {where}", among)
                string_lists |= {row[0] for row in cursor.fetchall() if row[0] is not None}
    return DropIds(sd_ids, tuple(serde_ids), tuple(cd_ids), tuple(sorted(string_lists)))


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
    """``column`` is one of ``ids``: one array literal on PostgreSQL (``MetastoreSql.among_ids``: parsed once, where
    a list parameter becomes an ``ARRAY[…]`` of 100,000 constants to parse in each statement), one ``IN`` list
    elsewhere."""
    where, params = MetastoreSql(metastore.alias).among_ids(column, ids)
    return where, tuple(params)


def drop_table_steps(
    metastore: Metastore, state: TableState | None, ids: DropIds, tables: frozenset[str], scope: DropScope | None = None
) -> list[Step]:
    """Every ``DELETE`` of the drop, children first, each with the number of rows it must delete (statements that
    would delete nothing are left out). ``scope``: the tables dropped (by default ``state``'s table; a database's
    drop passes no ``state`` and its :class:`DropScope`)."""
    if scope is None:
        assert state is not None, "a table's drop names its table"
        scope = DropScope("TBL_ID", state.table_id)
    quote = connections[metastore.alias].ops.quote_name
    one = (scope.value,)
    candidates: list[tuple[str, str, tuple[Any, ...]]] = []
    for table, column in BY_PARTITION:
        candidates.append((table, scope.of_partitions(metastore, quote(column)), one))
    candidates += _by_ids(metastore, BY_SD, ids.sd_ids)
    candidates.append(("PARTITIONS", scope.tables(metastore), one))
    candidates += [(table, scope.tables(metastore, column), one) for table, column in BY_TABLE]
    parent, child = (scope.tables(metastore, column) for column in ("PARENT_TBL_ID", "CHILD_TBL_ID"))
    candidates.append(("KEY_CONSTRAINTS", f"{parent} OR {child}", (scope.value, scope.value)))
    candidates.append(("TBLS", f"{quote(scope.column)} = %s", one))  # never a sub-select of itself (MySQL)
    candidates += _by_ids(metastore, (("SDS", "SD_ID"),), ids.sd_ids)
    candidates += _by_ids(metastore, (("SERDE_PARAMS", "SERDE_ID"), ("SERDES", "SERDE_ID")), ids.serde_ids)
    candidates += _by_ids(metastore, (("COLUMNS_V2", "CD_ID"), ("CDS", "CD_ID")), ids.cd_ids)
    candidates += _by_ids(
        metastore,
        (("SKEWED_STRING_LIST_VALUES", "STRING_LIST_ID"), ("SKEWED_STRING_LIST", "STRING_LIST_ID")),
        ids.string_list_ids,
    )
    steps = [_step(metastore, table, where, params, scope) for table, where, params in candidates if table in tables]
    if state is not None and state.is_transactional:
        steps += _acid_steps(metastore, (state.ref.database, state.ref.table))
    elif state is None:
        steps += _acid_steps(metastore, (scope.database,))  # cleanupRecords(DATABASE): by the database's name
    return [step for step in steps if step.expected_rows]


def _by_ids(
    metastore: Metastore, keyed: tuple[tuple[str, str], ...], ids: Sequence[int]
) -> list[tuple[str, str, tuple[Any, ...]]]:
    if not ids:
        return []
    quote = connections[metastore.alias].ops.quote_name
    return [(table, *_among(metastore, quote(column), ids)) for table, column in keyed]


def _step(metastore: Metastore, table: str, where: str, params: tuple[Any, ...], scope: DropScope) -> Step:
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {quote(table)} WHERE {where}", params)
        count = cursor.fetchone()[0]
    return Step(
        f"Delete {count} {table} rows of {scope.label}",
        table,
        "delete",
        f"DELETE FROM {quote(table)} WHERE {where}",
        params,
        count,
    )


def _acid_steps(metastore: Metastore, names: tuple[str, ...]) -> list[Step]:
    """``cleanupRecords``: the bookkeeping rows carrying the table's database and name (``names``: both), or every
    row of the database (``names``: its name alone), for the models the schema version has."""
    sql = MetastoreSql(metastore.alias)
    fields = ("database", "table")[: len(names)]
    whose = "the dropped table" if len(names) == 2 else "the dropped database"
    steps = []
    for model in ACID_CLEANUP:
        if not metastore.schema.has_table(model):
            continue
        where = " AND ".join(f"{sql.col(model, field)} = %s" for field in fields)
        count = model.objects.using(metastore.alias).filter(**dict(zip(fields, names, strict=True))).count()
        steps.append(
            Step(
                f"Delete {count} {model._meta.db_table} rows of {whose} (its ACID bookkeeping)",
                model._meta.db_table,
                "delete",
                f"DELETE FROM {sql.table(model)} WHERE {where}",
                names,
                count,
            )
        )
    return steps


def reinsert_steps(metastore: Metastore, deleted: dict[str, list[dict[str, Any]]]) -> list[Step]:
    """Multi-row INSERTs of rows a drop deleted (as its execution kept them), parents first, :data:`ROWS_PER_INSERT`
    rows per statement."""
    quote = connections[metastore.alias].ops.quote_name
    order = {table: index for index, table in enumerate(INSERT_ORDER)}
    steps = []
    for table in sorted(deleted, key=lambda t: (order.get(t, len(order)), t)):
        rows = deleted[table]
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start : start + ROWS_PER_INSERT]
            columns = list(chunk[0])
            values = ", ".join(["(" + ", ".join(["%s"] * len(columns)) + ")"] * len(chunk))
            steps.append(
                Step(
                    f"Put back {len(chunk)} {table} rows",
                    table,
                    "insert",
                    f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) VALUES {values}",
                    tuple(row_value(row[c]) for row in chunk for c in columns),
                    len(chunk),
                )
            )
    return steps
