"""
A committed Hive transaction that wrote one transactional table, with the write id allocated for it: what Hive 4's
``TRUNCATE`` of a transactional table leaves in the metastore (``Capabilities.truncate_allocates_write_id``).

Hive 4.0's Driver allocates the write id before it locks (``TruncateTableDesc`` is a ``DDLDescWithWriteId``;
``DriverTxnHandler.setWriteIdForAcidDdl`` → ``AllocateTableWriteIdsFunction``), and the metastore sets the truncated
table's or partitions' ``WRITE_ID`` to it (``HMSHandler.alterTableStatsForTruncate``). Readers then see a new write
id for the table (``GetValidWriteIdsForTableFunction``), so what they cached against the old snapshot (query
results, materialized views) is stale. Hive 3.1 allocates none for a TRUNCATE (its ``TruncateTableDesc`` is a plain
``DDLDesc``) and has no ``WRITE_ID`` columns: nothing is recorded there.

The console writes the end state of Hive's open, allocate and commit, inside its own metastore transaction (nothing
of it is visible before the commit):

* ``TXNS``: one row in state ``'c'`` — Hive 4's commit keeps a committed transaction's row
  (``CommitTxnFunction``: ``UPDATE "TXNS" SET "TXN_STATE" = 'c'``; the housekeeper removes it later) — its id from
  the table's identity column, as ``OpenTxnsFunction`` takes it; started and last heartbeat at the database's clock,
  the actor as its user, this host, type 0 (DEFAULT). Opened and committed at once, it never has the
  ``MIN_HISTORY_LEVEL`` row Hive adds on open and removes on commit. A TRUNCATE's lock is ``NO_TXN``, so it has no
  ``TXN_COMPONENTS``, hence no ``COMPLETED_TXN_COMPONENTS`` or ``WRITE_SET`` rows either;
* ``NEXT_WRITE_ID``: the table's row read ``FOR UPDATE`` and raised by one, or inserted at 2 (write id 1) when the
  table has none, names lower-cased;
* ``TXN_TO_WRITE_ID``: the transaction's write id for the table.

The console holds Hive's EXCLUSIVE lock on the table throughout (``Preview.table_lock``, ``services/plan_lock``), as
Hive's statement does (its lock is not tied to the transaction: ``HL_TXNID`` 0). The ``OPEN_TXN``,
``ALLOC_WRITE_ID`` and ``COMMIT_TXN`` events that Hive's *transactional* listeners write, when one is configured, are
not written.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from django.db import connections
from django.db.backends.utils import CursorWrapper

from catalog_admin.models import NextWriteId, Transaction, TransactionWriteId
from catalog_admin.selectors.metastores import Metastore
from operations.planners.compaction import EPOCH_MS
from operations.sql import MetastoreSql

__all__ = ("COMMITTED", "HiveWrite", "commit_hive_write")

COMMITTED = "c"  # TxnStatus.COMMITTED
DEFAULT_TXN_TYPE = 0  # TxnType.DEFAULT


@dataclass(frozen=True)
class HiveWrite:
    """The transaction recorded as committed and the write id it holds for ``database.table``."""

    txn_id: int
    write_id: int
    database: str
    table: str

    def as_dict(self) -> dict[str, int | str]:
        return {"txn_id": self.txn_id, "write_id": self.write_id, "database": self.database, "table": self.table}


def commit_hive_write(metastore: Metastore, database: str, table: str, *, user: str) -> HiveWrite:
    """Record, in the metastore transaction under way, a committed Hive transaction that wrote ``database.table``
    with a write id allocated for it (see the module)."""
    database, table = database.lower(), table.lower()
    sql = MetastoreSql(metastore.alias)
    with connections[metastore.alias].cursor() as cursor:
        txn_id = _committed_transaction(cursor, sql, user)
        write_id = _allocated_write_id(cursor, sql, database, table)
        columns = ", ".join(sql.col(TransactionWriteId, f) for f in ("txn_id", "database", "table", "write_id"))
        cursor.execute(
            f"INSERT INTO {sql.table(TransactionWriteId)} ({columns}) VALUES (%s, %s, %s, %s)",
            [txn_id, database, table, write_id],
        )
    return HiveWrite(txn_id, write_id, database, table)


def _committed_transaction(cursor: CursorWrapper, sql: MetastoreSql, user: str) -> int:
    """A TXNS row in state 'c' with the next id of the table's identity column; its id."""
    vendor = sql.connection.vendor
    columns = ", ".join(sql.col(Transaction, f) for f in ("state", "started", "last_heartbeat", "user", "host", "type"))
    values = f"%s, {EPOCH_MS[vendor]}, {EPOCH_MS[vendor]}, %s, %s, %s"
    params: list[str | int] = [COMMITTED, user[:128], socket.gethostname()[:128], DEFAULT_TXN_TYPE]
    insert = f"INSERT INTO {sql.table(Transaction)} ({columns}) VALUES ({values})"
    if vendor == "postgresql":  # TXN_ID bigserial
        cursor.execute(f"{insert} RETURNING {sql.col(Transaction, 'id')}", params)
        return int(cursor.fetchone()[0])
    if vendor == "mysql":  # TXN_ID AUTO_INCREMENT
        cursor.execute(insert, params)
        return int(cursor.lastrowid)
    # no identity column (the console's own SQLite metastores): the next id after the highest
    cursor.execute(f"SELECT COALESCE(MAX({sql.col(Transaction, 'id')}), 0) + 1 FROM {sql.table(Transaction)}")
    txn_id = int(cursor.fetchone()[0])
    cursor.execute(
        f"INSERT INTO {sql.table(Transaction)} ({sql.col(Transaction, 'id')}, {columns}) VALUES (%s, {values})",
        [txn_id, *params],
    )
    return txn_id


def _allocated_write_id(cursor: CursorWrapper, sql: MetastoreSql, database: str, table: str) -> int:
    """The table's next write id, NEXT_WRITE_ID raised past it (inserted at 2 when missing)."""
    lock = " FOR UPDATE" if sql.connection.features.has_select_for_update else ""
    where = f"{sql.col(NextWriteId, 'database')} = %s AND {sql.col(NextWriteId, 'table')} = %s"
    cursor.execute(
        f"SELECT {sql.col(NextWriteId, 'next')} FROM {sql.table(NextWriteId)} WHERE {where}{lock}",
        [
            database,
            table,
        ],
    )
    row = cursor.fetchone()
    if row is None:
        columns = ", ".join(sql.col(NextWriteId, f) for f in ("database", "table", "next"))
        cursor.execute(f"INSERT INTO {sql.table(NextWriteId)} ({columns}) VALUES (%s, %s, %s)", [database, table, 2])
        return 1
    write_id = int(row[0])
    cursor.execute(
        f"UPDATE {sql.table(NextWriteId)} SET {sql.col(NextWriteId, 'next')} = %s WHERE {where}",
        [write_id + 1, database, table],
    )
    return write_id
