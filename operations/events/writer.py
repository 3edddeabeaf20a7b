"""
Write the planned notification events inside the execution's metastore transaction.

Ids follow Hive's lock discipline: the ``NOTIFICATION_SEQUENCE`` row is read ``FOR UPDATE`` first
(``ObjectStore.lockNotificationSequenceForUpdate`` from ``addNotificationEvent`` in 3.1; in 4.0
``DbNotificationListener.addNotificationLogBatch``'s direct SQL: ``getNextEventId``, then ``getNextNLId``),
``EVENT_ID`` continues from its ``NEXT_EVENT_ID``, and then ``NL_ID`` comes from ``SEQUENCE_TABLE``'s
``MNotificationLog`` row, as DataNucleus (2.3, 3.1) and Hive 4's ``getNextNLId`` allocate it. A running metastore
therefore waits for this transaction and never hands out the same ids. An empty ``NOTIFICATION_SEQUENCE`` (Hive
2.3's schema creates none) gets its row as ``ObjectStore`` creates it (``new MNotificationNextId(1)``).
``EVENT_TIME`` and each message's ``timestamp`` are the commit's second (``DbNotificationListener.now()``).
Rows go in with multi-row ``INSERT`` statements of 1,000 rows, as Hive 4 batches its inserts
(``executeBatch`` per ``maxBatchSize``), never one statement per event; ``insert_events`` (a merge's events, built
elsewhere) also ends a statement at ``INSERT_BYTES`` of messages.

``ABORT_TXN`` events belong to no table; their name columns are what ``DbNotificationListener.addNotificationLog``
(the direct-SQL path ``notifyEventWithDirectSql`` takes) writes for a ``NotificationEvent`` with no database, table or
catalog set: on 4.0 ``addNotificationLogBatch`` binds ``DB_NAME``, ``TBL_NAME`` and ``CAT_NAME`` with
``pst.setString(…, event.getDbName())`` etc., all NULL; 3.1.0's ``addNotificationLog`` (before HIVE-20542 made them
optional) builds the row with ``quoteString(event.getDbName())`` and ``quoteString(" ")``, so ``DB_NAME`` is the text
``null``, ``TBL_NAME`` one space, and names no ``CAT_NAME`` (NULL).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connections

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.ids import allocate_ids
from catalog_admin.models import NotificationEvent, NotificationSequence, Partition, TransactionWriteId
from catalog_admin.selectors.metastores import Metastore
from operations.events import messages
from operations.events.files import partition_files, table_files
from operations.events.messages import Altered
from operations.events.objects import PartitionObject, TableObject, read_partitions, read_table
from operations.events.planning import (
    ABORT_TXN,
    ADD_PARTITION,
    ALTER_PARTITION,
    ALTER_TABLE,
    CREATE_TABLE,
    DROP_PARTITION,
    DROP_TABLE,
)
from operations.preview import PlannedEvents
from operations.sql import MetastoreSql

__all__ = ("EventCapture", "Row", "capture_before", "insert_events", "write_events")

INSERT_BATCH = 1000
# Message text per multi-row INSERT: one statement stays well under MariaDB's default max_allowed_packet (16 MiB) and
# MySQL's (64 MiB) however large each message is.
INSERT_BYTES = 4 * 1024 * 1024
Row = tuple[str, str | None, str | None, str | None, str]  # event type, catalog, database, table, message
DEFAULT_CATALOG = "hive"
NO_TABLE_31 = (None, "null", " ")  # 3.1.0's direct SQL for an event of no table: catalog, database, table
NO_TABLE = (None, None, None)  # 4.0's addNotificationLogBatch binds the unset names: NULL


@dataclass
class EventCapture:
    """The table and partitions the events describe, as they were before the statements ran (no table for events of
    no table, e.g. ``ABORT_TXN``)."""

    table: TableObject | None
    partition_ids: list[int]
    partitions: dict[int, PartitionObject] = field(default_factory=dict)
    source: TableObject | None = None  # an exchange's source table: its partitions are read with it


def capture_before(metastore: Metastore, planned: PlannedEvents) -> EventCapture:
    """Under the table lock, before the statements: the table and the partitions in the events' scope."""
    version = metastore.schema.version
    if planned.transactions or _creates_table(planned):  # no table yet: CREATE TABLE, an undrop
        return EventCapture(table=None, partition_ids=[])  # no table yet (an undrop), or events of no table
    table = read_table(metastore.alias, version, planned.table_id)
    ids = _partition_ids(metastore.alias, planned) if planned.partitions else []
    if planned.partitions and planned.partitions.get("from_table"):  # EXCHANGE PARTITION: the source's partitions
        source = read_table(metastore.alias, version, planned.partitions["from_table"])
        parts = {p.id: p for p in read_partitions(metastore.alias, version, source, ids)}
        return EventCapture(table=table, partition_ids=ids, partitions=parts, source=source)
    partitions = {} if _counts(planned).get(ADD_PARTITION) and not _added_apart(planned) else {
        p.id: p for p in read_partitions(metastore.alias, version, table, ids)
    }  # fmt: skip
    return EventCapture(table=table, partition_ids=ids, partitions=partitions)


def write_events(
    metastore: Metastore, planned: PlannedEvents, before: EventCapture, *, write_id: int | None = None
) -> int:
    """After the statements: build each event from the before and after objects and insert them, 1,000 at a time
    (messages are built as they go in, so memory stays flat at 100,000 events); returns how many. ``write_id``: the
    write id of the Hive transaction the execution recorded (its ALTER messages carry it, 4.x).

    The planned number of ids is reserved first; when the events differ from the planned counts this raises
    ``stale_preview`` and the transaction rolls back, ids and rows alike."""
    now = int(time.time())
    planned_counts = _counts(planned)
    first_event = _reserve_event_ids(metastore.alias, planned.total)
    first_nl = allocate_ids(metastore.alias, NotificationEvent, planned.total) if planned.total else 0
    written: dict[str, int] = {}
    batch: list[Row] = []
    for row in _event_rows(metastore, planned, before, now, Altered(planned.truncate, write_id)):
        written[row[0]] = written.get(row[0], 0) + 1
        if sum(written.values()) > planned.total:
            break
        batch.append(row)
        if len(batch) == INSERT_BATCH:
            _insert(metastore, batch, now, first_event, first_nl)
            first_event, first_nl, batch = first_event + len(batch), first_nl + len(batch), []
    if written != planned_counts:
        raise ApplicationError(
            ErrorCode.STALE_PREVIEW,
            f"The change would write {written} notification events, the preview planned {planned_counts}; "
            "nothing was applied.",
            {"planned_events": planned_counts, "events": written},
        )
    _insert(metastore, batch, now, first_event, first_nl)
    return planned.total


def insert_events(metastore: Metastore, rows: Iterable[Row], total: int, now: int) -> int:
    """Insert ``total`` events (``rows``, built with ``now`` as their timestamp) with ids under
    ``NOTIFICATION_SEQUENCE``'s row lock, :data:`INSERT_BATCH` rows or :data:`INSERT_BYTES` of messages per
    statement; a different number of rows raises ``execution_failed`` (the caller's transaction rolls back)."""
    first_event = _reserve_event_ids(metastore.alias, total)
    first_nl = allocate_ids(metastore.alias, NotificationEvent, total) if total else 0
    batch: list[Row] = []
    written = size = 0
    for row in rows:
        written += 1
        if written > total:
            break
        batch.append(row)
        size += len(row[4])
        if len(batch) == INSERT_BATCH or size >= INSERT_BYTES:
            _insert(metastore, batch, now, first_event, first_nl)
            first_event, first_nl, batch, size = first_event + len(batch), first_nl + len(batch), [], 0
    if written != total:
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"{written if written <= total else 'more'} notification events were built, {total} counted; nothing was "
            "applied.",
            {"counted": total},
        )
    _insert(metastore, batch, now, first_event, first_nl)
    return total


def _event_rows(
    metastore: Metastore, planned: PlannedEvents, before: EventCapture, now: int, altered: Altered
) -> Iterator[Row]:
    """Each event in Hive's order, with the database and table columns ``DbNotificationListener`` sets: the table
    after the change for ALTER_TABLE (``onAlterTable``: ``event.setDbName(after.getDbName())``), the partition's
    table for partition events, the dropped or created table for DROP_TABLE / CREATE_TABLE."""
    version, alias, keys = metastore.schema.version, metastore.alias, list(planned.partition_keys)
    counts = _counts(planned)
    if ABORT_TXN in counts:
        yield from _abort_txn_rows(metastore, planned, now)
        return
    catalog = DEFAULT_CATALOG if version.capabilities.catalogs else None

    def row(kind: str, table: TableObject, message: dict[str, Any]) -> Row:
        return kind, catalog, table.database, table.name, messages.encode(version, message)

    if set(counts) == {CREATE_TABLE}:  # CREATE TABLE (HMSHandler.create_table_core), an unpartitioned undrop
        created = read_table(alias, version, planned.table_id)
        created_files = table_files(metastore.name, version, created)
        yield row(CREATE_TABLE, created, messages.create_table_message(version, created, now, created_files))
        return
    if DROP_TABLE in counts and CREATE_TABLE not in counts:  # DROP TABLE, a created table's revert: as it was
        assert before.table is not None, "a dropped table is captured before the statements"
        yield row(DROP_TABLE, before.table, messages.drop_table_message(version, before.table, now))
        return
    table_after = read_table(alias, version, planned.table_id)
    if before.table is None:  # an undrop: create_table, then add_partitions with every partition
        files = table_files(metastore.name, version, table_after)
        yield row(CREATE_TABLE, table_after, messages.create_table_message(version, table_after, now, files))
        before = EventCapture(table=table_after, partition_ids=_partition_ids(alias, planned))
        if ADD_PARTITION not in counts:
            return
    if before.source is not None:  # EXCHANGE PARTITION: added to the destination, then dropped from the source
        added = list(read_partitions(alias, version, table_after, before.partition_ids))
        added_files = partition_files(metastore.name, version, table_after, keys, added)
        message = messages.add_partition_message(version, table_after, keys, added, now, added_files)
        yield row(ADD_PARTITION, table_after, message)
        for part in before.partitions.values():
            message = messages.drop_partition_message(version, before.source, keys, part, now)
            yield row(DROP_PARTITION, before.source, message)
        return
    if _added_apart(planned):  # ADD PARTITION, MSCK and their reverts: the added first, then the dropped
        yield from _added_rows(metastore, planned, table_after, now, row)
        if DROP_PARTITION not in counts:
            return
    assert before.table is not None, "table events are captured with their table"

    if ALTER_TABLE in counts:
        message = messages.alter_table_message(version, before.table, table_after, now, altered)
        yield row(ALTER_TABLE, table_after, message)
        if ALTER_PARTITION not in counts:  # a relocated table: its partitions' ALTER_PARTITION events follow
            return
    if DROP_PARTITION in counts:
        for part in before.partitions.values():
            yield row(
                DROP_PARTITION, before.table, messages.drop_partition_message(version, before.table, keys, part, now)
            )
        return
    after = read_partitions(alias, version, table_after, before.partition_ids)
    if DROP_TABLE in counts:  # a rename into another database on Hive 3.1+
        yield row(DROP_TABLE, before.table, messages.drop_table_message(version, before.table, now))
        files = table_files(metastore.name, version, table_after)
        yield row(CREATE_TABLE, table_after, messages.create_table_message(version, table_after, now, files))
    if ADD_PARTITION in counts:  # one event carrying every partition, as add_partitions writes it
        added = list(after)
        files = partition_files(metastore.name, version, table_after, keys, added)
        message = messages.add_partition_message(version, table_after, keys, added, now, files)
        yield row(ADD_PARTITION, table_after, message)
        return
    for part in after:
        old = before.partitions.get(part.id)
        if old is not None and old.json != part.json:
            message = messages.alter_partition_message(version, table_after, keys, old, part, now, altered)
            yield row(ALTER_PARTITION, table_after, message)


def _added_apart(planned: PlannedEvents) -> bool:
    """The partitions added are named apart from those dropped (``added_names``/``added_ids``): found after the
    statements, in ADD_PARTITION events of ``batch`` partitions each."""
    selection = planned.partitions or {}
    return "added_names" in selection or "added_ids" in selection


def _added_rows(
    metastore: Metastore, planned: PlannedEvents, table: TableObject, now: int, row: Callable[..., Row]
) -> Iterator[Row]:
    """One ADD_PARTITION per ``batch`` of the added partitions, read after the statements (named: in the plan's
    order; by id: in id order)."""
    version, keys, selection = metastore.schema.version, list(planned.partition_keys), planned.partitions or {}
    order = {part_id: position for position, part_id in enumerate(sorted(selection.get("added_ids", [])))}
    names = selection.get("added_names", [])
    rows = Partition.objects.using(metastore.alias).filter(table_id=planned.table_id)
    for start in range(0, len(names), 5000):
        position = {name: start + offset for offset, name in enumerate(names[start : start + 5000])}
        for part_id, name in rows.filter(name__in=list(position)).values_list("pk", "name"):
            order[part_id] = position[name]
    found = read_partitions(metastore.alias, version, table, list(order)) if order else iter(())
    ordered = sorted(found, key=lambda part: order[part.id])
    batch = max(int(selection.get("batch") or len(ordered)), 1)
    for start in range(0, len(ordered), batch):
        added = ordered[start : start + batch]
        files = partition_files(metastore.name, version, table, keys, added)
        yield row(ADD_PARTITION, table, messages.add_partition_message(version, table, keys, added, now, files))


def _abort_txn_rows(metastore: Metastore, planned: PlannedEvents, now: int) -> Iterator[Row]:
    """One ABORT_TXN per transaction, in the plan's order (``TxnHandler.abortTxns``); on 4.0 each message names the
    databases the transaction allocated write ids in (``getTxnDbsUpdated``: ``SELECT DISTINCT T2W_DATABASE FROM
    TXN_TO_WRITE_ID WHERE T2W_TXNID = …``, read for all of them in one query here, sorted by name)."""
    version, ids = metastore.schema.version, list(planned.transactions)
    databases: dict[int, list[str]] = {txn_id: [] for txn_id in ids}
    if version.capabilities.abort_events_of_4:
        written = TransactionWriteId.objects.using(metastore.alias).filter(txn_id__in=ids)
        for txn_id, database in written.values_list("txn_id", "database").distinct().order_by("txn_id", "database"):
            databases[txn_id].append(database)
    names = NO_TABLE if version.capabilities.abort_events_of_4 else NO_TABLE_31
    for txn_id in ids:
        message = messages.abort_txn_message(version, txn_id, databases[txn_id], now)
        yield ABORT_TXN, *names, messages.encode(version, message)


def _insert(metastore: Metastore, rows: list[Row], now: int, first_event: int, first_nl: int) -> None:
    """One multi-row INSERT of ``rows`` with consecutive ids from ``first_event`` and ``first_nl``."""
    if not rows:
        return
    alias, version = metastore.alias, metastore.schema.version
    has_catalog = version.capabilities.catalogs  # NOTIFICATION_LOG.CAT_NAME
    sql = MetastoreSql(alias)
    names = ["id", "event_id", "event_time", "event_type", *(["catalog_name"] if has_catalog else []), "db_name",
             "table_name", "message", "message_format"]  # fmt: skip
    columns = ", ".join(sql.col(NotificationEvent, n) for n in names)
    fmt = messages.message_format(version)
    values = [
        (first_nl + i, first_event + i, now, kind, *([catalog] if has_catalog else []), database, table, message, fmt)
        for i, (kind, catalog, database, table, message) in enumerate(rows)
    ]
    placeholders = "(" + ", ".join(["%s"] * len(names)) + ")"
    with connections[alias].cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {sql.table(NotificationEvent)} ({columns}) VALUES {', '.join([placeholders] * len(rows))}",
            [v for row in values for v in row],
        )


def _reserve_event_ids(alias: str, count: int) -> int:
    """Lock ``NOTIFICATION_SEQUENCE`` (``SELECT … FOR UPDATE``) and take ``count`` event ids from it."""
    rows = NotificationSequence.objects.using(alias)
    if connections[alias].features.has_select_for_update:
        rows = rows.select_for_update()
    if count == 0:
        return 0
    row = rows.order_by("pk").first()
    if row is None:  # Hive 2.3's schema has no row until the first event (ObjectStore: new MNotificationNextId(1))
        nni_id = allocate_ids(alias, NotificationSequence, 1)
        NotificationSequence.objects.using(alias).create(id=nni_id, next_event_id=1 + count)
        return 1
    NotificationSequence.objects.using(alias).filter(pk=row.pk).update(next_event_id=row.next_event_id + count)
    return row.next_event_id


def _creates_table(planned: PlannedEvents) -> bool:
    """The events of an undrop: the table is created by the statements (CREATE_TABLE without DROP_TABLE)."""
    counts = _counts(planned)
    return CREATE_TABLE in counts and DROP_TABLE not in counts


def _partition_ids(alias: str, planned: PlannedEvents) -> list[int]:
    selection: dict[str, Any] = planned.partitions or {}
    partitions = Partition.objects.using(alias).filter(table_id=planned.table_id)
    if "ids" in selection:
        return sorted(selection["ids"])
    if selection.get("all"):
        return sorted(partitions.values_list("pk", flat=True))
    if "names" in selection:
        partitions = partitions.filter(name__in=selection["names"])
    elif "sd_ids" in selection:
        partitions = partitions.filter(sd_id__in=selection["sd_ids"])
    else:
        prefixes = selection.get("prefixes", [])
        partitions = partitions.filter(sd__location__startswith=prefixes[0]) if prefixes else partitions.none()
    return sorted(partitions.values_list("pk", flat=True))


def _counts(planned: PlannedEvents) -> dict[str, int]:
    return {kind: count for kind, count in planned.counts if count}
