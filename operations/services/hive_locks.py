"""
Hive's own lock on a table for a data job's swap (issue 25: no write is lost).

A relocation or rewrite re-lists its sources and re-points the metastore while holding an EXCLUSIVE lock on the
table in Hive's lock tables, taken as Hive's ``DbLockManager`` takes one through the metastore
(``TxnHandler.lock`` → ``enqueueLockWithRetry`` + ``checkLock``, standalone-metastore
``org/apache/hadoop/hive/metastore/txn/TxnHandler.java``, 2.3 to 4.0):

* ``checkLock`` runs under the ``CheckLock`` mutex (``getMutexAPI().acquireLock(MUTEX_KEY.CheckLock.name())``: its
  AUX_TABLE row taken ``FOR UPDATE``, inserted first when missing), so no other lock is granted meanwhile;
* the lock's id is ``NEXT_LOCK_ID.NL_NEXT`` read ``FOR UPDATE`` and raised by one (``enqueueLockWithRetry``);
* an EXCLUSIVE lock waits for every earlier lock on the same database (a database-level one), table, or any of
  its partitions, whatever its type and state (``jumpTable``: EXCLUSIVE → WAIT), except a database-level
  SHARED_READ against a table-level EXCLUSIVE (``ignoreConflict``). Here waiting is a refusal naming the holders;
* a granted lock not in a transaction is a HIVE_LOCKS row with ``HL_TXNID`` 0, state 'a', type 'e', its heartbeat
  and acquisition time from the database's clock (``acquire``, ``getDbTime``); Hive's lock requests made later get
  higher ids and wait for it (``checkLock`` looks at earlier locks only). It is heartbeated like ``heartbeatLock``
  and released like ``unlock`` (``DELETE … WHERE HL_LOCK_EXT_ID = ? AND HL_TXNID = 0``); one left behind by a crash
  is removed by Hive's housekeeping after ``hive.txn.timeout`` (``timeOutLocks``).

Everything is done in one metastore transaction (Hive enqueues and checks in two; granted in one step, nothing is
left waiting). A metastore without NEXT_LOCK_ID (the console's embedded SQLite demo, which no Hive uses) is not
locked: the re-listing alone covers it.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connections, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import Q

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import AuxTable, HiveLock
from catalog_admin.selectors.metastores import Metastore
from operations.planners.compaction import EPOCH_MS
from operations.sql import MetastoreSql

__all__ = ("HeldLock", "exclusive_table_lock")

logger = logging.getLogger(__name__)

MUTEX = "CheckLock"  # TxnStore.MUTEX_KEY.CheckLock
EXCLUSIVE, SHARED_READ, ACQUIRED = "e", "r", "a"  # TxnHandler.LOCK_EXCLUSIVE, LOCK_SHARED, LOCK_ACQUIRED
TYPES = {"e": "exclusive", "r": "shared read", "w": "shared write", "x": "exclusive write"}
STATES = {"a": "acquired", "w": "waiting"}
NAMED_HOLDERS = 5


@dataclass(frozen=True)
class HeldLock:
    """Our granted lock: its id in HIVE_LOCKS (``HL_LOCK_EXT_ID``), on ``database.table`` of ``metastore``."""

    metastore: Metastore
    ext_id: int
    database: str
    table: str

    def heartbeat(self) -> None:
        """``heartbeatLock``: the lock's heartbeat is now. A lock Hive's housekeeping removed (``timeOutLocks``)
        refuses what follows: Hive writers may have gone in since."""
        with allow_metastore_writes(), transaction.atomic(using=self.metastore.alias):
            beat = HiveLock.objects.using(self.metastore.alias).filter(ext_id=self.ext_id, txn_id=0)
            if not beat.update(last_heartbeat=_db_now(self.metastore.alias)):
                raise ApplicationError(
                    ErrorCode.INVALID_STATE,
                    f"The console's Hive lock {self.ext_id} on {self.database}.{self.table} is gone (timed out by "
                    "Hive's housekeeping, hive.txn.timeout?); nothing was swapped.",
                    {"lock": self.ext_id},
                )


@contextmanager
def exclusive_table_lock(
    metastore: Metastore, database: str, table: str, *, user: str, agent: str
) -> Iterator[HeldLock | None]:
    """Hold Hive's EXCLUSIVE lock on ``database.table`` for the block, released after it (None: a metastore without
    Hive's lock tables). Refused, naming the holders, while another lock on the table, its partitions or its
    database stands in the way."""
    held = _acquire(metastore, database.lower(), table.lower(), user=user, agent=agent)
    try:
        yield held
    finally:
        if held is not None:
            _release(held)


def _acquire(metastore: Metastore, database: str, table: str, *, user: str, agent: str) -> HeldLock | None:
    alias = metastore.alias
    with allow_metastore_writes(), transaction.atomic(using=alias), connections[alias].cursor() as cursor:
        counter, column = _counter_names(alias)
        if counter is None:
            return None
        _take_mutex(alias, cursor)
        lock = " FOR UPDATE" if connections[alias].features.has_select_for_update else ""
        cursor.execute(f"SELECT {column} FROM {counter}{lock}")
        row = cursor.fetchone()
        if row is None:
            raise ApplicationError(
                ErrorCode.INVALID_STATE,
                "Transaction tables not properly initialized, no record found in next_lock_id (Hive's words); the "
                f"console cannot lock {database}.{table}, so nothing was swapped.",
                {"database": database, "table": table},
            )
        ext_id = int(row[0])
        cursor.execute(f"UPDATE {counter} SET {column} = %s", [ext_id + 1])
        _refuse_conflicts(metastore, database, table)
        now = _db_now(alias)
        HiveLock.objects.using(alias).create(
            ext_id=ext_id, int_id=1, txn_id=0, database=database, table=table, partition=None, state=ACQUIRED,
            type=EXCLUSIVE, last_heartbeat=now, acquired_at=now, user=user[:128], host=socket.gethostname()[:128],
            agent_info=agent[:128],
        )  # fmt: skip
    logger.info("Took Hive lock %s (exclusive) on %s.%s of %s", ext_id, database, table, metastore.name)
    return HeldLock(metastore, ext_id, database, table)


def _release(held: HeldLock) -> None:
    """``unlock``: our row goes (none left means Hive's housekeeping removed it meanwhile)."""
    alias = held.metastore.alias
    with allow_metastore_writes(), transaction.atomic(using=alias):
        removed, _ = HiveLock.objects.using(alias).filter(ext_id=held.ext_id, txn_id=0).delete()
    if not removed:
        logger.warning("Hive lock %s on %s.%s was already gone at release", held.ext_id, held.database, held.table)


def _refuse_conflicts(metastore: Metastore, database: str, table: str) -> None:
    """``checkLock`` for an EXCLUSIVE table lock: every lock on the database, the table or its partitions waits us
    out, but a database-level SHARED_READ (``ignoreConflict``)."""
    holders = list(
        HiveLock.objects.on(metastore)
        .filter(database=database)
        .filter(Q(table__isnull=True) | Q(table=table))
        .exclude(table__isnull=True, type=SHARED_READ)
        .order_by("ext_id", "int_id")
    )
    if not holders:
        return
    named = "; ".join(_describe(lock) for lock in holders[:NAMED_HOLDERS])
    more = f" and {len(holders) - NAMED_HOLDERS} more" if len(holders) > NAMED_HOLDERS else ""
    raise ApplicationError(
        ErrorCode.INVALID_STATE,
        f"{database}.{table} is locked in Hive ({named}{more}): the swap needs Hive's exclusive lock and waits for "
        "no writer; nothing was swapped and the source is untouched. Run it again once the lock is released.",
        {"locks": [_details(lock) for lock in holders[:50]]},
    )


def _details(lock: HiveLock) -> dict[str, object]:
    return {
        "lock": lock.ext_id, "internal": lock.int_id, "txn": lock.txn_id or 0, "user": lock.user, "host": lock.host,
        "type": TYPES.get(lock.type, lock.type), "state": STATES.get(lock.state, lock.state), "table": lock.table,
        "partition": lock.partition, "agent": lock.agent_info,
    }  # fmt: skip


def _describe(lock: HiveLock) -> str:
    what = lock.partition or (f"table {lock.table}" if lock.table else "the whole database")
    txn = f"transaction {lock.txn_id}" if lock.txn_id else "no transaction"
    kind = f"{TYPES.get(lock.type, lock.type)}, {STATES.get(lock.state, lock.state)}"
    return f"lock {lock.ext_id} ({kind}) on {what} by {lock.user}@{lock.host}, {txn}"


def _take_mutex(alias: str, cursor: CursorWrapper) -> None:
    """``acquireLock(CheckLock)``: its AUX_TABLE row, locked until our transaction ends (inserted when missing)."""
    sql = MetastoreSql(alias)
    table, key1, key2 = sql.table(AuxTable), sql.col(AuxTable, "key1"), sql.col(AuxTable, "key2")
    cursor.execute(f"UPDATE {table} SET {key2} = {key2} WHERE {key1} = %s AND {key2} = 0", [MUTEX])
    if cursor.rowcount == 0:
        cursor.execute(f"INSERT INTO {table} ({key1}, {key2}) VALUES (%s, 0)", [MUTEX])


def _counter_names(alias: str) -> tuple[str | None, str]:
    """NEXT_LOCK_ID and its column as this metastore spells them (lower case in Hive 2.3/3.1's PostgreSQL scripts);
    None when it has no such table."""
    connection = connections[alias]
    names = {name.lower(): name for name in connection.introspection.table_names()}
    actual = names.get("next_lock_id")
    if actual is None:
        return None, ""
    column = "nl_next" if actual == "next_lock_id" else "NL_NEXT"
    return connection.ops.quote_name(actual), connection.ops.quote_name(column)


def _db_now(alias: str) -> int:
    """``getDbTime``: the database's clock in milliseconds."""
    with connections[alias].cursor() as cursor:
        cursor.execute(f"SELECT {EPOCH_MS[connections[alias].vendor]}")
        return int(cursor.fetchone()[0])
