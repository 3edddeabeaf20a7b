"""
Which notification events Hive writes for each statement the console executes (a pure read of the plan).

Hive writes them from ``DbNotificationListener`` (a transactional listener, so in the metastore transaction):

- every ``alter_table`` (rename in one database, columns with or without CASCADE, properties, SerDe, owner,
  ``SET LOCATION``): one ``ALTER_TABLE`` (``HiveAlterHandler.alterTable`` notifies ``EventType.ALTER_TABLE`` once;
  the partitions it rewrites for a rename or CASCADE go through ``msdb.alterPartition(s)`` directly, with no event);
- a partition's ``RENAME TO PARTITION`` or ``SET LOCATION``: one ``ALTER_PARTITION``
  (``HMSHandler.rename_partition`` / ``alter_partition`` → ``HiveAlterHandler.alterPartition``);
- rewriting many partitions at once is Hive's ``alter_partitions``: one ``ALTER_PARTITION`` per partition
  (``HMSHandler.alter_partitions_with_environment_context``);
- ``DROP PARTITION``: one ``DROP_PARTITION`` per partition (``HMSHandler.drop_partitions_req``);
- a revert writes the events of the inverse statement: ``ALTER_TABLE`` / ``ALTER_PARTITION`` again, and putting
  dropped partitions back is ``add_partitions``: one ``ADD_PARTITION`` carrying all of them
  (``HMSHandler.add_partitions_core``).

Hive 3.1 and 4.0 write a rename into *another* database as ``DROP_TABLE`` + ``CREATE_TABLE`` and, for a partitioned
table, one ``ADD_PARTITION`` carrying every partition (``HiveAlterHandler.alterTable``: "otherwise a rename between
databases is considered a DROP_TABLE from the old database and a CREATE_TABLE in the new database plus ADD_PARTITION
operations if needed"); Hive 2.3 writes one ``ALTER_TABLE`` for any rename. A view is altered through the same
``alter_table`` (``ALTER VIEW … RENAME TO`` / ``SET TBLPROPERTIES``), so it writes the same events as a table.

Statements that write no event, as in Hive:

- ``COMPACT``: ``TxnHandler.compact`` (2.3, 3.1, 4.0) only inserts the COMPACTION_QUEUE row; no listener is called.
  (4.0's ``COMMIT_COMPACTION`` is written later by the compactor's ``markCompacted``, not by the request.) Withdrawing
  the request (its revert: deleting the queue row while still 'initiated') has no Hive event either.
- ``ABORT TRANSACTIONS`` on 2.3: ``TxnHandler.abortTxns(AbortTxnsRequest)`` calls no listener.

``ABORT TRANSACTIONS`` on 3.1 and 4.0 writes one ``ABORT_TXN`` per transaction, in the order of the request's ids (the
console's parser keeps them sorted and distinct, so its events go in ascending id order):
``TxnHandler.abortTxns(AbortTxnsRequest)`` loops ``for (Long txnId : txnIds)`` calling
``MetaStoreListenerNotifier.notifyEventWithDirectSql(…, EventType.ABORT_TXN, new AbortTxnEvent(txnId, …), dbConn, …)``
on the abort's own connection before its commit, and ``DbNotificationListener.onAbortTxn`` adds the row: events of
no table (see ``messages.abort_txn_message`` and the writer). On 4.0 ``abortTxns`` first selects the named
transactions ``where TXN_STATE = 'o' and TXN_TYPE != READ_ONLY``; any other gets ``TxnType.READ_ONLY``, for which
``onAbortTxn`` returns without writing, so read-only transactions (and, by SQL's ``!=``, a NULL ``TXN_TYPE``) write no
event there. 3.1's ``onAbortTxn`` has no such check. An abort is never reverted, so no revert writes these.

``ALTER TABLE … ADD PARTITION`` is one ``add_partitions`` call: one ``ADD_PARTITION`` carrying every added partition
(``HMSHandler.add_partitions_core``; none when ``IF NOT EXISTS`` leaves nothing to add). ``MSCK REPAIR TABLE`` adds
through ``Msck.createPartitionsInBatches``: one ``add_partitions`` (one ``ADD_PARTITION``) per batch of
``metastore.msck.repair.batch.size`` partitions (3,000 on 3.x+; 0, one call for all, on 2.3), then drops through
``dropPartitionsInBatches`` → ``drop_partitions_req``: one ``DROP_PARTITION`` per partition. Their reverts are the
inverse statements: ``DROP PARTITION`` of the added ones (one ``DROP_PARTITION`` each) and ``add_partitions`` of the
dropped ones (one ``ADD_PARTITION``). Added partitions are found after the statements, by name (or id).

Every spec kind is listed in :data:`_PLANNERS` (and every executed kind a revert can undo in :data:`_REVERTED`): a new
statement without an entry fails loudly instead of silently writing an ``ALTER_TABLE`` Hive would not write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from catalog_admin.models import Transaction
from catalog_admin.selectors.metastores import Metastore
from operations.events.messages import message_format
from operations.models import Execution
from operations.preview import PlannedEvents, Preview
from operations.specs import (
    SPEC_KINDS,
    AbortTransactions,
    AddColumns,
    AddPartitions,
    AlterSpec,
    AnalyzeTable,
    ChangeColumn,
    CompactFiles,
    CompactTable,
    ConvertFormat,
    CreateTable,
    DropPartitions,
    DropTable,
    ExchangePartition,
    PurgeTrash,
    Relocate,
    RenamePartition,
    RenameTable,
    RepairPartitions,
    ReplaceColumns,
    RevertExecution,
    RewritePartitionLocations,
    SetFileFormat,
    SetLocation,
    SetOwner,
    SetSerdeProperties,
    SetTableProperties,
    TruncateTable,
    UnsetTableProperties,
)
from operations.table_state import TableState

__all__ = (
    "ABORT_TXN",
    "ADD_PARTITION",
    "ALTER_PARTITION",
    "ALTER_TABLE",
    "CREATE_TABLE",
    "DROP_PARTITION",
    "DROP_TABLE",
    "UnplannedEvents",
    "plan_events",
)

ALTER_TABLE = "ALTER_TABLE"
ALTER_PARTITION = "ALTER_PARTITION"
DROP_PARTITION = "DROP_PARTITION"
ADD_PARTITION = "ADD_PARTITION"
DROP_TABLE = "DROP_TABLE"
CREATE_TABLE = "CREATE_TABLE"
ABORT_TXN = "ABORT_TXN"
MSCK_REPAIR_BATCH_SIZE = 3000  # MetastoreConf.MSCK_REPAIR_BATCH_SIZE's default (3.x, 4.x)
READ_ONLY_TXN = 2  # TxnType.READ_ONLY (hive_metastore.thrift: DEFAULT = 0, REPL_CREATED = 1, READ_ONLY = 2, …)

Counts = tuple[tuple[str, int], ...]
Planned = tuple[Counts, dict[str, Any] | None]
NO_EVENTS: Planned = ((), None)
ONE_ALTER_TABLE: Planned = (((ALTER_TABLE, 1),), None)


class UnplannedEvents(LookupError):
    """A statement (or a revert of one) whose notification events nobody has decided: decide before executing it."""


def plan_events(metastore: Metastore, state: TableState, preview: Preview) -> PlannedEvents | None:
    """The events executing ``preview`` writes; ``None`` when events are off for the metastore, nothing runs, or Hive
    writes no event for the statement."""
    if not metastore.config.events or not preview.steps or preview.blockers:
        return None
    counts, described = _events_of(metastore, state, preview)
    if not counts:
        return None
    transactions = tuple(described.get("transactions", ())) if described else ()
    return PlannedEvents(
        table_id=state.table_id,
        counts=counts,
        message_format=message_format(metastore.schema.version),
        partitions=None if transactions else described,
        partition_keys=tuple(k.name for k in state.partition_keys),
        transactions=transactions,
        truncate=isinstance(preview.spec, TruncateTable),
    )


def _events_of(metastore: Metastore, state: TableState, preview: Preview) -> Planned:
    planner = _PLANNERS.get(type(preview.spec))
    if planner is None:
        raise UnplannedEvents(f"No notification events are planned for {type(preview.spec).__name__}.")
    return planner(metastore, state, preview)


def _rename_table(metastore: Metastore, state: TableState, preview: Preview) -> Planned:
    if not _across_databases(metastore, cast(RenameTable, preview.spec)):
        return ONE_ALTER_TABLE
    return _moved_table_events(state)


def _moved_table_events(state: TableState) -> Planned:
    added = ((ADD_PARTITION, 1),) if state.partition_keys else ()  # "plus ADD_PARTITION operations if needed"
    return ((DROP_TABLE, 1), (CREATE_TABLE, 1), *added), {"all": True}


def _alter_table(_metastore: Metastore, _state: TableState, _preview: Preview) -> Planned:
    """``HiveAlterHandler.alterTable``: one ALTER_TABLE (partitions rewritten for CASCADE go without events)."""
    return ONE_ALTER_TABLE


def _no_events(_metastore: Metastore, _state: TableState, _preview: Preview) -> Planned:
    return NO_EVENTS


def _abort_transactions(metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """One ABORT_TXN per named transaction on 3.1 and 4.0 (not read-only ones on 4.0); none on 2.3."""
    version, ids = metastore.schema.version, list(cast(AbortTransactions, preview.spec).txn_ids)
    if not version.capabilities.abort_writes_events:
        return NO_EVENTS  # 2.3's TxnHandler.abortTxns(AbortTxnsRequest) notifies no listener
    # 4.x's abortTxns: "where TXN_STATE = 'o' and TXN_TYPE != READ_ONLY", the others are skipped
    if version.capabilities.abort_events_of_4:
        written = Transaction.objects.on(metastore).filter(id__in=ids, state="o", type__isnull=False)
        notified = set(written.exclude(type=READ_ONLY_TXN).values_list("id", flat=True))
        ids = [txn_id for txn_id in ids if txn_id in notified]
    if not ids:
        return NO_EVENTS
    return ((ABORT_TXN, len(ids)),), {"transactions": ids}


def _set_location(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    if preview.scope is None:
        return ONE_ALTER_TABLE
    return ((ALTER_PARTITION, 1),), {"names": preview.scope.selection["names"][:1]}


def _drop_partitions(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    if preview.scope is None:
        return NO_EVENTS  # nothing matched (IF EXISTS): Hive drops nothing and notifies nothing
    return ((DROP_PARTITION, preview.scope.count),), preview.scope.selection


def _drop_table(_metastore: Metastore, _state: TableState, _preview: Preview) -> Planned:
    """``HMSHandler.drop_table_core``: one DROP_TABLE (``DropTableEvent`` to the transactional listeners) for the
    table and all its partitions (dropped through ``ms.dropPartitions``, which notifies nobody)."""
    return ((DROP_TABLE, 1),), None


def _rename_partition(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    return ((ALTER_PARTITION, 1),), {"ids": [preview.inverse["partition"]["id"]]}


def _rewrite_partition_locations(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    spec = cast(RewritePartitionLocations, preview.spec)
    return ((ALTER_PARTITION, preview.partitions_touched),), {"prefixes": [spec.old_prefix]}


def _relocate(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """No Hive statement moves data; the swap re-points what Hive's own statements would: the table's ``SET LOCATION``
    (one ALTER_TABLE) and every moved partition's (``alter_partitions``: one ALTER_PARTITION each)."""
    if preview.scope is None:
        return ONE_ALTER_TABLE  # an unpartitioned table
    partition_events = ((ALTER_PARTITION, preview.scope.count),)
    if cast(Relocate, preview.spec).partitions or preview.after.location == preview.before.location:
        return partition_events, preview.scope.selection  # chosen partitions, or those moving in below the root
    return ((ALTER_TABLE, 1), *partition_events), preview.scope.selection


def _rewrite(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """CONCATENATE and SET FILEFORMAT … WITH DATA: no Hive statement rewrites data this way; the swap changes what
    Hive's ``SET LOCATION`` / ``SET FILEFORMAT`` would: a partition's storage descriptor through ``alter_partitions``
    (one ALTER_PARTITION each), the table's own through ``alter_table`` (one ALTER_TABLE; ``inverse["table_sd"]``)."""
    table = ((ALTER_TABLE, 1),) if preview.inverse.get("table_sd") else ()
    if preview.scope is None:
        return ONE_ALTER_TABLE  # an unpartitioned table: its own storage descriptor
    return (*table, (ALTER_PARTITION, preview.scope.count)), preview.scope.selection


def _analyze(_metastore: Metastore, _state: TableState, _preview: Preview) -> Planned:
    """None yet. Column statistics alone (``FOR COLUMNS``) go through ``ObjectStore.updatePartitionColumnStatistics``,
    whose parameter update calls no listener on 2.3 and 3.1. Hive's StatsTask (2.3) / BasicStatsTask (3.1, 4.0) writes
    basic statistics through ``Hive.alterPartitions`` / ``alterTable`` (one ALTER_PARTITION each, one ALTER_TABLE),
    but the writer writes an ALTER_PARTITION only for a partition whose object changed, and the statistics are known
    only at the swap (an ANALYZE that finds the same values would fail its count): those events, and 4.0's
    UPDATE_*_COLUMN_STAT, are left out (docs/architecture.md)."""
    return NO_EVENTS


def _set_file_format(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    partition_id = preview.inverse.get("partition_id")
    return ONE_ALTER_TABLE if partition_id is None else (((ALTER_PARTITION, 1),), {"ids": [partition_id]})


def _create_table(_metastore: Metastore, _state: TableState, _preview: Preview) -> Planned:
    """``HMSHandler.create_table_core``: one CREATE_TABLE. A CREATE TABLE plan has no table state yet, so
    ``operations/planners/create_table.py`` builds its :class:`PlannedEvents` itself (table id 0: the created one)."""
    return ((CREATE_TABLE, 1),), None


def _exchange_partition(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """``HMSHandler.exchange_partitions``: one ADD_PARTITION of every moved partition on the destination, then one
    DROP_PARTITION per partition on the source (``from_table``)."""
    ids = sorted(preview.inverse.get("partition_ids", []))
    if not ids:
        return NO_EVENTS
    return ((ADD_PARTITION, 1), (DROP_PARTITION, len(ids))), {"ids": ids, "from_table": preview.inverse[
        "source_table_id"]}  # fmt: skip


def _add_partitions(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """One ``add_partitions`` call: one ADD_PARTITION carrying every partition it adds."""
    added = preview.inverse.get("added_names", [])
    return (((ADD_PARTITION, 1),), {"added_names": added, "batch": len(added)}) if added else NO_EVENTS


def _repair_partitions(metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """``Msck.repair``: an ADD_PARTITION per batch of added partitions, then a DROP_PARTITION per dropped one."""
    added, dropped = preview.inverse.get("added_names", []), preview.inverse.get("dropped_ids", [])
    batch = MSCK_REPAIR_BATCH_SIZE if metastore.schema.capabilities.msck_adds_in_batches else max(len(added), 1)
    counts: Counts = ((ADD_PARTITION, -(-len(added) // batch)),) if added else ()
    counts += ((DROP_PARTITION, len(dropped)),) if dropped else ()
    return (counts, {"added_names": added, "batch": batch, "ids": dropped}) if counts else NO_EVENTS


def _truncate(_metastore: Metastore, _state: TableState, preview: Preview) -> Planned:
    """``HMSHandler.alterTableStatsForTruncate``: one ALTER_TABLE for an unpartitioned table, else one
    ALTER_PARTITION per truncated partition (``alter_partitions``), no ALTER_TABLE."""
    if preview.scope is None:
        return ONE_ALTER_TABLE
    return ((ALTER_PARTITION, preview.scope.count),), preview.scope.selection


def _revert(metastore: Metastore, state: TableState, preview: Preview) -> Planned:
    execution = Execution.objects.get(pk=cast(RevertExecution, preview.spec).execution_id)
    if execution.operation["kind"] == RenameTable.kind and _moved_across_databases(metastore, execution.operation):
        return _moved_table_events(state)  # renaming back into the old database: the same split as the rename
    if execution.operation["kind"] in (AddPartitions.kind, RepairPartitions.kind):
        return _revert_added(execution, preview)
    return _revert_events(execution, state)


def _revert_added(execution: Execution, preview: Preview) -> Planned:
    """An ADD PARTITION's or MSCK's revert: ``DROP PARTITION`` of the partitions it added that are still there (the
    revert plan's ``inverse["dropped_ids"]``: one DROP_PARTITION each) and ``add_partitions`` of those it dropped."""
    gone = list(preview.inverse.get("dropped_ids", []))
    back = sorted(row["PART_ID"] for row in execution.captured_rows("deleted", "PARTITIONS"))
    counts: Counts = ((ADD_PARTITION, 1),) if back else ()
    counts += ((DROP_PARTITION, len(gone)),) if gone else ()
    return counts, {"ids": gone, "added_ids": back, "batch": max(len(back), 1)}


_PLANNERS: dict[type[AlterSpec], Callable[[Metastore, TableState, Preview], Planned]] = {
    RenameTable: _rename_table,
    AddColumns: _alter_table,
    ReplaceColumns: _alter_table,
    ChangeColumn: _alter_table,
    SetTableProperties: _alter_table,
    UnsetTableProperties: _alter_table,
    SetSerdeProperties: _alter_table,
    SetOwner: _alter_table,
    SetLocation: _set_location,
    RewritePartitionLocations: _rewrite_partition_locations,
    RenamePartition: _rename_partition,
    DropPartitions: _drop_partitions,
    Relocate: _relocate,
    CompactFiles: _rewrite,
    ConvertFormat: _rewrite,
    AnalyzeTable: _analyze,
    SetFileFormat: _set_file_format,  # alter_table, or alter_partition for one partition
    CompactTable: _no_events,  # TxnHandler.compact notifies no listener (2.3, 3.1, 4.0)
    AbortTransactions: _abort_transactions,  # ABORT_TXN per transaction on 3.1 and 4.0, none on 2.3
    CreateTable: _create_table,  # HMSHandler.create_table_core
    ExchangePartition: _exchange_partition,  # HMSHandler.exchange_partitions
    AddPartitions: _add_partitions,
    RepairPartitions: _repair_partitions,
    DropTable: _drop_table,  # HMSHandler.drop_table_core
    TruncateTable: _truncate,
    PurgeTrash: _no_events,  # the console's own trash: no metastore object changes
    RevertExecution: _revert,
}
assert set(_PLANNERS) >= set(SPEC_KINDS.values()), "every spec kind decides its notification events"


def _revert_events(execution: Execution, state: TableState) -> Planned:
    """The inverse statement's events: dropped partitions come back in one ADD_PARTITION."""
    kind, image = execution.operation["kind"], execution.before_image
    if kind not in _REVERTED:
        raise UnplannedEvents(f"No notification events are planned for reverting {kind}.")
    if kind == "drop_partitions":
        ids = sorted(row["PART_ID"] for row in execution.captured_rows("deleted", "PARTITIONS"))
        return ((ADD_PARTITION, 1),), {"ids": ids}
    if kind == "rename_partition":
        return ((ALTER_PARTITION, 1),), {"ids": [image["partition"]["id"]]}
    if kind == "drop_table":  # create_table, then add_partitions carrying every partition put back
        parts = execution.captured_count("deleted", "PARTITIONS")
        return ((CREATE_TABLE, 1), *(((ADD_PARTITION, 1),) if parts else ())), {"all": True} if parts else None
    if kind == "relocate":  # the swap back: the same events as the swap, for the rows it wrote back
        sd_ids = sorted({row["SD_ID"] for row in execution.captured_rows("updated", "SDS")})
        if execution.operation.get("partitions") or state.sd_id not in sd_ids:  # chosen ones, or those moved in
            return ((ALTER_PARTITION, len(sd_ids)),), {"sd_ids": sd_ids}
        # the whole table: its own storage descriptor is one of the rows written back
        return ((ALTER_TABLE, 1), (ALTER_PARTITION, len(sd_ids) - 1)), {"sd_ids": sd_ids}
    if kind in ("compact_files", "convert_format"):  # the swap back: the storage descriptors it wrote back
        sd_ids = sorted({row["SD_ID"] for row in execution.captured_rows("updated", "SDS")})
        table = ((ALTER_TABLE, 1),) if image.get("table_sd") else ()
        partitions = len(sd_ids) - len(table)
        return (*table, *(((ALTER_PARTITION, partitions),) if partitions else ())), {"sd_ids": sd_ids}
    if kind == "truncate_table" and image.get("partition_ids"):  # the statistics written back, per partition
        return ((ALTER_PARTITION, len(image["partition_ids"])),), {"ids": sorted(image["partition_ids"])}
    if kind == "set_fileformat" and image.get("partition_id") is not None:
        return ((ALTER_PARTITION, 1),), {"ids": [image["partition_id"]]}
    if kind == "set_location" and execution.operation.get("partition"):
        return ((ALTER_PARTITION, 1),), {"sd_ids": [image["sd_id"]]}
    return _REVERTED[kind]


# Executed kind -> the events of its revert where they do not depend on the before-image (handled above otherwise).
_REVERTED: dict[str, Planned] = {
    **{kind: ONE_ALTER_TABLE for kind in SPEC_KINDS},
    "drop_partitions": NO_EVENTS,  # resolved from the before-image above
    "rename_partition": NO_EVENTS,  # resolved from the before-image above
    "add_partitions": NO_EVENTS,  # resolved from the before-image above
    "msck_repair": NO_EVENTS,  # resolved from the before-image above
    "drop_table": NO_EVENTS,  # resolved from the before-image above
    "compact": NO_EVENTS,  # withdrawing a queued request: no Hive event
    "analyze": NO_EVENTS,  # the old statistics written back: as the swap, none yet
    "abort_transactions": NO_EVENTS,  # never reverted (no revert is offered)
    "create_table": (((DROP_TABLE, 1),), None),  # the created table dropped: HMSHandler.drop_table_core
    "purge_trash": NO_EVENTS,  # never reverted (deleted for good)
}


def _across_databases(metastore: Metastore, spec: RenameTable) -> bool:
    """Hive 3.1+ splits a rename into another database into DROP_TABLE, CREATE_TABLE and ADD_PARTITION."""
    across = spec.new.database.lower() != spec.target.database.lower()
    return across and metastore.schema.capabilities.rename_across_databases_drops_and_creates


def _moved_across_databases(metastore: Metastore, operation: dict[str, Any]) -> bool:
    """An executed rename (its stored spec) that moved the table into another database, on Hive 3.1+."""
    old, new = operation["target"]["database"], operation["new"]["database"]
    return old.lower() != new.lower() and metastore.schema.capabilities.rename_across_databases_drops_and_creates
