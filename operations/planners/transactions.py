"""
``ALTER TABLE t ABORT TRANSACTIONS id …``: Hive's ``ABORT TRANSACTIONS`` for open transactions stuck on a table.

Hive has the statement since 2.1 (HIVE-12634) and its ``TxnHandler.abortTxns(AbortTxnsRequest)`` does the same on
every supported line, so the console allows it on 2.3, 3.1 and 4.0 alike:

- 2.3 / 3.1 ``TxnHandler.abortTxns(Connection, List, long, boolean)``: ``update TXNS set txn_state = 'a' where
  txn_state = 'o' and txn_id in (…)``, then ``delete from HIVE_LOCKS where hl_txnid in (…)``.
- 4.0 the same two statements (4.0.0's ``abortTxns``; TXN_META_INFO and MIN_HISTORY_* bookkeeping came later).

TXN_COMPONENTS and TXN_TO_WRITE_ID stay, as in Hive: they tell readers the writes aborted and tell the Cleaner which
directories to remove. Hive is best-effort (ids not open are skipped with a warning); the console blocks instead, so
an approved plan aborts exactly the transactions it names. An abort cannot be undone: the transaction's client has
been told, so no revert is offered. Hive 3.1 and 4.0 also write one ABORT_TXN notification event per transaction (2.3
none); the console's notification layer writes them in the same transaction (``operations/events/planning.py``).
"""

from __future__ import annotations

import time
from dataclasses import replace

from catalog_admin.models import HiveLock, Transaction, TransactionComponent, TransactionWriteId
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import build_preview, snapshot
from operations.preview import Preview, Step
from operations.rules import Finding
from operations.specs import AbortTransactions
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("plan_abort_transactions",)

RECENT_HEARTBEAT_MS = 5 * 60 * 1000


def plan_abort_transactions(metastore: Metastore, state: TableState, spec: AbortTransactions) -> Preview:
    """Mark the named open transactions aborted and drop their locks, or say why not."""
    alias, ids = metastore.alias, list(spec.txn_ids)
    found = {t.id: t for t in Transaction.objects.on(metastore).filter(id__in=ids)}
    writes = _tables_written(metastore, ids)
    here = (state.ref.database, state.ref.table)
    blockers, warnings = [], []
    for txn_id in ids:
        txn = found.get(txn_id)
        if txn is None or txn.state != "o":
            what = "does not exist" if txn is None else "is already aborted" if txn.state == "a" else "is not open"
            blockers.append(Finding("transaction_not_open", "acid", f"Transaction {txn_id} {what}: nothing to abort."))
            continue
        if here not in writes.get(txn_id, set()):
            blockers.append(
                Finding("transaction_elsewhere", "acid", f"Transaction {txn_id} holds no write or lock on {state.ref}.")
            )
        others = sorted(f"{d}.{t}" if t else f"database {d}" for d, t in writes.get(txn_id, set()) - {here})
        if others:
            warnings.append(
                Finding("transaction_writes_elsewhere", "acid",
                        f"Transaction {txn_id} also writes {', '.join(others)}: those writes abort too.", "warning")
            )  # fmt: skip
        if txn.last_heartbeat and time.time() * 1000 - txn.last_heartbeat < RECENT_HEARTBEAT_MS:
            warnings.append(
                Finding("transaction_alive", "acid",
                        f"Transaction {txn_id} ({txn.user}@{txn.host}) heartbeated in the last 5 minutes: its "
                        "client is probably still running.", "warning")
            )  # fmt: skip
    locks = HiveLock.objects.using(alias).filter(txn_id__in=ids).count()
    preview = build_preview(
        metastore,
        state,
        spec,
        steps=_abort_steps(MetastoreSql(alias), ids, locks),
        after=snapshot(state),
        blockers=blockers,
        warnings=warnings,
    )
    touched = {database for written in writes.values() for database, _table in written} | {state.ref.database}
    return replace(preview, databases=tuple(sorted(touched)))


def _tables_written(metastore: Metastore, ids: list[int]) -> dict[int, set[tuple[str, str]]]:
    """(database, table) each transaction writes (TXN_COMPONENTS; TXN_TO_WRITE_ID on 3.x/4.x, where a write id is
    allocated before any component is written) or locks (HIVE_LOCKS; a database-level lock with an empty table)."""
    alias, fields = metastore.alias, ("txn_id", "database", "table")
    sources = [
        TransactionComponent.objects.using(alias).filter(txn_id__in=ids).values_list(*fields),
        HiveLock.objects.using(alias).filter(txn_id__in=ids).values_list(*fields),
    ]
    if metastore.schema.has_write_ids:
        sources.append(TransactionWriteId.objects.using(alias).filter(txn_id__in=ids).values_list(*fields))
    tables: dict[int, set[tuple[str, str]]] = {}
    for txn_id, database, table in (row for rows in sources for row in rows):
        tables.setdefault(txn_id, set()).add((database, table or ""))
    return tables


def _abort_steps(sql: MetastoreSql, ids: list[int], locks: int) -> list[Step]:
    marks = ", ".join(["%s"] * len(ids))
    state, txn = sql.col(Transaction, "state"), sql.col(Transaction, "id")
    return [
        Step(f"Abort transaction(s) {', '.join(map(str, ids))}", Transaction._meta.db_table, "update",
             f"UPDATE {sql.table(Transaction)} SET {state} = %s WHERE {state} = %s AND {txn} IN ({marks})",
             ("a", "o", *ids), len(ids)),
        Step("Release their locks", HiveLock._meta.db_table, "delete",
             f"DELETE FROM {sql.table(HiveLock)} WHERE {sql.col(HiveLock, 'txn_id')} IN ({marks})", tuple(ids), locks),
    ]  # fmt: skip
