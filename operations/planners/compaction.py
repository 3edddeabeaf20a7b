"""
``ALTER TABLE t [PARTITION (…)] COMPACT 'major'|'minor'``: a request in Hive's compaction queue, and its revert.

Hive's refusals are the blockers (``AlterTableCompactOperation.execute`` / 3.1 ``DDLTask.compact``): a table that is
not transactional (NONACID_COMPACTION_NOT_SUPPORTED), a partitioned table without a partition
(NO_COMPACTION_PARTITION), a partition that does not exist (INVALID_PARTITION_SPEC), and a request already queued or
running for that table or partition (``TxnHandler.compact`` 3.1 / ``CompactFunction`` 4.x return the existing id and
queue nothing: "Compaction is already scheduled with state=… and id=…"; 4.x also counts a 'ready for cleaning'
entry of the same highest write id).

The statements are ``TxnHandler.compact``'s, in its 3.1 order: take the ``CompactionScheduler`` mutex (its AUX_TABLE
row, ``acquireLock``), take the next id from NEXT_COMPACTION_QUEUE_ID under its row lock
(``generateCompactionQueueId``: ``SELECT NCQ_NEXT … FOR UPDATE``, then ``NCQ_NEXT + 1``), and insert the entry in
state 'i' with type 'a' (major) or 'i' (minor). Hive's ALTER TABLE … COMPACT sets no run-as (``Hive.compact2`` builds
the ``CompactionRequest`` without one), so CQ_RUN_AS stays NULL as Hive leaves it: the Worker runs it as the
directory's owner. On 4.x the entry also gets CQ_ENQUEUE_TIME from the database clock (``TxnUtils.getEpochFn``) and
an initiator id ending in ``-manual`` (``InsertCompactionRequestCommand``, ``AlterTableCompactOperation``). The insert
re-checks under the lock that nothing is queued, so a request Hive queued since the preview makes it fail whole.
"""

from __future__ import annotations

from typing import Any

from django.db import connections

from catalog_admin.hive.partition_names import partition_name
from catalog_admin.models import AuxTable, CompactionQueueEntry, NextCompactionQueueId, Partition
from catalog_admin.selectors.acid import valid_txn_list, valid_write_ids
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import build_preview, snapshot
from operations.preview import Preview, Step
from operations.rules import Finding
from operations.specs import CompactTable
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("compaction_queue_id", "plan_compaction", "plan_compaction_revert")

TYPES = {"major": "a", "minor": "i"}  # TxnHandler.MAJOR_TYPE / MINOR_TYPE
STATES = {"i": "initiated", "w": "working", "r": "ready for cleaning"}
MUTEX = "CompactionScheduler"
INITIATOR_ID, INITIATOR_VERSION = "catalog-admin-manual", "catalog-admin"
# TxnUtils.getEpochFn: the database's clock in milliseconds.
EPOCH_MS = {
    "postgresql": "ROUND(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000)",
    "mysql": "ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000)",
    "sqlite": "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)",
}


def plan_compaction(metastore: Metastore, state: TableState, spec: CompactTable) -> Preview:
    """The queue entry Hive's ``compact`` would write for ``spec``, or Hive's refusal as a blocker."""
    partition, blockers = _target_partition(metastore, state, spec)
    if not blockers:
        blockers += _already_queued(metastore, state, partition)
    if not NextCompactionQueueId.objects.using(metastore.alias).exists():
        blockers.append(
            Finding("acid_tables_not_initiated", "acid", "NEXT_COMPACTION_QUEUE_ID has no row (Hive: transaction "
                    "tables not properly initiated); nothing can be queued.")
        )  # fmt: skip
    return build_preview(
        metastore,
        state,
        spec,
        steps=_queue_steps(metastore, state, spec, partition),
        after=snapshot(state),
        blockers=blockers,
        inverse={"compaction": {"database": state.ref.database, "table": state.ref.table, "partition": partition}},
    )


def _target_partition(metastore: Metastore, state: TableState, spec: CompactTable) -> tuple[str | None, list[Finding]]:
    """The partition name Hive would compact, and Hive's refusals of the target."""
    ref = state.ref
    if not state.is_transactional:
        message = f"Compaction is not allowed on non-ACID table {ref.database}.{ref.table}."
        return None, [Finding("nonacid_compaction_not_supported", "acid", message)]
    if not spec.partition:
        if state.is_partitioned:
            message = "You must specify a partition to compact for partitioned tables."
            return None, [Finding("no_compaction_partition", "acid", message)]
        return None, []
    keys = [key.name for key in state.partition_keys]
    given = dict(spec.partition)
    if sorted(given) != sorted(keys):
        names = ", ".join(keys) or "none"
        message = f"Invalid partition spec specified: compaction needs one partition, named by every key ({names})."
        return None, [Finding("invalid_partition_spec", "acid", message)]
    name = partition_name([(key, given[key]) for key in keys])
    if not Partition.objects.using(metastore.alias).filter(table_id=state.table_id, name=name).exists():
        return name, [Finding("invalid_partition_spec", "acid", f"Invalid partition spec specified: {name} not found.")]
    return name, []


def _already_queued(metastore: Metastore, state: TableState, partition: str | None) -> list[Finding]:
    """Hive returns the existing request instead of queueing a second one for the same table or partition."""
    entries = CompactionQueueEntry.objects.on(metastore).filter(database=state.ref.database, table=state.ref.table)
    entries = entries.filter(partition=partition) if partition else entries.filter(partition__isnull=True)
    busy = list(entries.filter(state__in=("i", "w")).values_list("id", "state"))
    if not busy and metastore.schema.capabilities.compaction_reuses_ready_for_cleaning:
        busy = list(
            entries.filter(state="r", highest_write_id=_compactor_high_watermark(metastore, state)).values_list(
                "id", "state"
            )
        )
    return [
        Finding("compaction_already_queued", "acid",
                f"Compaction is already scheduled with state='{STATES.get(s, s)}' and id={cq_id}; Hive would queue "
                "nothing and return that id.")
        for cq_id, s in busy
    ]  # fmt: skip


def _compactor_high_watermark(metastore: Metastore, state: TableState) -> int:
    """``TxnUtils.createValidCompactWriteIdList``: the high-water mark stops below the lowest open write id."""
    ids = valid_write_ids(metastore, state.ref.database, state.ref.table, valid_txn_list(metastore))
    low = ids.min_open_write_id
    return min(ids.high_watermark, low - 1) if low is not None else ids.high_watermark


def _queue_steps(metastore: Metastore, state: TableState, spec: CompactTable, partition: str | None) -> list[Step]:
    sql, alias = MetastoreSql(metastore.alias), metastore.alias
    queue, counter = sql.table(CompactionQueueEntry), sql.table(NextCompactionQueueId)
    next_id = sql.col(NextCompactionQueueId, "next")
    lock = " FOR UPDATE" if connections[alias].features.has_select_for_update else ""
    columns: dict[str, tuple[str, Any]] = {
        "database": ("%s", state.ref.database),
        "table": ("%s", state.ref.table),
        "partition": ("%s", partition),
        "state": ("%s", "i"),
        "type": ("%s", TYPES[spec.compaction_type]),
    }
    if metastore.schema.has(CompactionQueueEntry, "enqueue_time"):
        columns["enqueue_time"] = (EPOCH_MS[connections[alias].vendor], None)
        columns["initiator_id"] = ("%s", INITIATOR_ID)
        columns["initiator_version"] = ("%s", INITIATOR_VERSION)
    names = ", ".join([sql.col(CompactionQueueEntry, "id"), *(sql.col(CompactionQueueEntry, c) for c in columns)])
    values = ", ".join(expression for expression, _ in columns.values())
    params = tuple(value for expression, value in columns.values() if expression == "%s")
    guard, guard_params = _nothing_queued(sql, state, partition)
    return [
        Step(f"Take Hive's {MUTEX} mutex", AuxTable._meta.db_table, "update",
             f"UPDATE {sql.table(AuxTable)} SET {sql.col(AuxTable, 'key2')} = {sql.col(AuxTable, 'key2')} "
             f"WHERE {sql.col(AuxTable, 'key1')} = %s", (MUTEX,), -1),
        Step("Take the next compaction id", NextCompactionQueueId._meta.db_table, "update",
             f"UPDATE {counter} SET {next_id} = {next_id} + 1", (), 1,
             before_sql=f"SELECT {next_id} FROM {counter}{lock}"),
        Step(f"Queue a {spec.compaction_type} compaction of {partition or state.ref}",
             CompactionQueueEntry._meta.db_table, "insert",
             f"INSERT INTO {queue} ({names}) SELECT {next_id} - 1, {values} FROM {counter} WHERE NOT EXISTS ({guard})",
             (*params, *guard_params), 1),
    ]  # fmt: skip


def _nothing_queued(sql: MetastoreSql, state: TableState, partition: str | None) -> tuple[str, tuple[Any, ...]]:
    model = CompactionQueueEntry
    where = f"{sql.col(model, 'partition')} = %s" if partition else f"{sql.col(model, 'partition')} IS NULL"
    text = (
        f"SELECT 1 FROM {sql.table(model)} WHERE {sql.col(model, 'database')} = %s AND {sql.col(model, 'table')} = %s "
        f"AND {where} AND {sql.col(model, 'state')} IN ('i', 'w')"
    )
    return text, (state.ref.database, state.ref.table, *((partition,) if partition else ()))


def compaction_queue_id(before_image: dict[str, Any]) -> int | None:
    """The id an executed compaction request took: NCQ_NEXT as read just before it was raised."""
    rows = before_image.get("updated_rows", {}).get(NextCompactionQueueId._meta.db_table, [])
    return next((int(v) for row in rows for k, v in row.items() if k.upper() == "NCQ_NEXT"), None)


def plan_compaction_revert(metastore: Metastore, state: TableState, spec: Any, before_image: dict[str, Any]) -> Preview:
    """Take the request out of the queue while it is still 'initiated'; once a Worker took it, refuse."""
    sql, model = MetastoreSql(metastore.alias), CompactionQueueEntry
    cq_id = compaction_queue_id(before_image)
    entry = model.objects.on(metastore).filter(id=cq_id).values_list("state", flat=True).first()
    blockers = []
    if entry is None:
        blockers.append(Finding("compaction_not_queued", "acid",
                                f"Compaction {cq_id} is no longer in the queue: Hive ran or removed it."))  # fmt: skip
    elif entry != "i":
        blockers.append(Finding("compaction_started", "acid",
                                f"Compaction {cq_id} is {STATES.get(entry, entry)}: a Worker took it, it cannot be "
                                "withdrawn."))  # fmt: skip
    steps = [
        Step(f"Withdraw compaction {cq_id}", model._meta.db_table, "delete",
             f"DELETE FROM {sql.table(model)} WHERE {sql.col(model, 'id')} = %s AND {sql.col(model, 'state')} = %s",
             (cq_id, "i"), 1),
    ]  # fmt: skip
    return build_preview(metastore, state, spec, steps=steps, after=snapshot(state), blockers=blockers)
