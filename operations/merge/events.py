"""
The notification events Hive writes for what a merge creates, written in the merge's publishing transaction (after
its rows, on the same connection, so they commit together), so Impala, replication and every ``NOTIFICATION_LOG``
consumer see the imported databases, tables and partitions: per database ``CREATE_DATABASE``, then per table
``CREATE_TABLE`` and its partitions' ``ADD_PARTITION`` events, each in the target version's message format
(``operations.events.messages``), ids under ``NOTIFICATION_SEQUENCE``'s row lock (``operations.events.writer``).
Nothing is written when the target's events are off (``METASTORE_EVENTS_<NAME>=off``).

The messages are built before they are inserted, while the publishing transaction writes the rows
(:class:`PrebuiltEvents`, in a thread, from the rows about to be published: ``operations.merge.event_rows``), so the
transaction only numbers and inserts them, as Hive builds a message before ``addNotificationLog`` takes the sequence's
lock. They are the messages built from the published rows (the same readers over the same rows; a test compares them
byte for byte), which is how a merge whose rows cannot be staged builds them, in the transaction.

Partitions go in batches of :data:`ADD_PARTITION_BATCH`, one ``ADD_PARTITION`` event each, as Hive adds many
partitions: ``Msck.createPartitionsInBatches`` calls ``add_partitions`` (one event, ``HMSHandler.add_partitions_core``
firing ``AddPartitionEvent`` with every partition of the call) per batch of ``MetastoreConf.MSCK_REPAIR_BATCH_SIZE``
(``metastore.msck.repair.batch.size`` / ``hive.msck.repair.batch.size``, default 3000). One event per table with all of
its partitions would make a message of hundreds of megabytes for a table of 100,000 partitions.

A merge's revert writes what Hive writes for ``DROP DATABASE … CASCADE`` (``HMSHandler.drop_database_core``): a
``DROP_TABLE`` per table (dropping a table fires no ``DROP_PARTITION``: ``drop_table_core`` fires ``DropTableEvent``
only), then ``DROP_DATABASE``, in the revert's transaction before its deletes.
"""

from __future__ import annotations

import pickle
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import connections

from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.events import messages
from operations.events.databases import table_creation_rows
from operations.events.objects import MetastoreRows, read_database, read_table
from operations.events.writer import DEFAULT_CATALOG, Row, insert_events
from operations.merge.event_rows import NotStaged, StagedRows
from operations.merge.reads import MetastoreReader
from operations.models import MergeImport

__all__ = (
    "ADD_PARTITION_BATCH",
    "PrebuiltEvents",
    "merge_event_counts",
    "prebuild_merge_events",
    "write_merge_events",
    "write_revert_events",
)

ADD_PARTITION_BATCH = 3000
CREATE_DATABASE, CREATE_TABLE, ADD_PARTITION = "CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION"
DROP_DATABASE, DROP_TABLE = "DROP_DATABASE", "DROP_TABLE"

# (DB_ID, [(TBL_ID, partition count)]) per imported database, in id order.
Imported = list[tuple[int, list[tuple[int, int]]]]


class PrebuiltEvents:
    """``merge``'s events built in a thread from the rows it is about to publish (:class:`StagedRows`), into a
    temporary file, while the publishing transaction writes them: that transaction then only numbers and inserts
    them (:func:`write_merge_events`). The messages are the ones built from the published rows (the same readers on
    the same rows; a test compares them)."""

    def __init__(self, merge: MergeImport, plan: dict) -> None:
        self.now = int(time.time())
        self.counts: dict[str, int] | None = None
        self.seconds = self.waited = 0.0  # the build's time, and how long the publish waited for it
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115 - closed by result() or discard()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, args=(merge, plan), name=f"merge-{merge.pk}-events")
        self._thread.start()

    def result(self) -> tuple[dict[str, int], Iterator[Row]] | None:
        """The counts and rows once built (None: they could not be built before the publish, :class:`NotStaged`);
        raises what the build raised."""
        started = time.monotonic()
        self._thread.join()
        self.waited = time.monotonic() - started
        if self._error is not None:
            self.discard()
            raise self._error
        if self.counts is None:
            self.discard()
            return None
        end, spool = self._spool.tell(), self._spool
        spool.seek(0)

        def replay() -> Iterator[Row]:
            try:
                while spool.tell() < end:
                    yield pickle.load(spool)  # noqa: S301 - our own rows, written by _build
            finally:
                spool.close()

        return self.counts, replay()

    def discard(self) -> None:
        """Wait for the build and drop what it built (the publish failed)."""
        self._thread.join()
        self._spool.close()

    def _build(self, merge: MergeImport, plan: dict) -> None:
        started = time.monotonic()
        try:
            metastore = get_metastore(merge.target)
            staged = StagedRows(merge, plan)
            imported = staged.imported()
            for row in _rows(metastore, imported, self.now, staged):
                pickle.dump(row, self._spool)
            self.counts = merge_event_counts(imported)
        except NotStaged:
            self.counts = None
        except BaseException as exc:  # noqa: BLE001 - raised again by result() in the publishing thread
            self._error = exc
        finally:
            connections.close_all()  # this thread's connections only
            self.seconds = time.monotonic() - started


def prebuild_merge_events(merge: MergeImport, plan: dict) -> PrebuiltEvents | None:
    """Start building ``merge``'s events from its copy ``plan`` (after its storage rows are copied, before the
    publish); None when the target's events are off."""
    if not get_metastore(merge.target).config.events or "DBS" not in merge.id_ranges:
        return None
    return PrebuiltEvents(merge, plan)


def write_merge_events(merge: MergeImport, prebuilt: PrebuiltEvents | None = None) -> dict[str, int]:
    """Insert the events of ``merge``'s imported rows on the target (inside the caller's transaction, after the
    rows): the ``prebuilt`` ones, or else built now from the published rows; returns their counts by type (empty
    when the target's events are off)."""
    metastore = get_metastore(merge.target)
    if not metastore.config.events or "DBS" not in merge.id_ranges:
        return {}
    built = prebuilt.result() if prebuilt is not None else None
    if built is not None:
        counts, rows = built
        insert_events(metastore, rows, sum(counts.values()), prebuilt.now if prebuilt else 0)
        return counts
    imported = _imported(merge)
    counts = merge_event_counts(imported)
    now = int(time.time())
    with _spooled(_rows(metastore, imported, now)) as rows:
        insert_events(metastore, rows, sum(counts.values()), now)
    return counts


def write_revert_events(merge: MergeImport) -> dict[str, int]:
    """Insert the DROP events of the databases and tables ``merge``'s revert deletes (inside the revert's
    transaction, before its deletes); returns their counts by type (empty when the target's events are off)."""
    metastore = get_metastore(merge.target)
    if not metastore.config.events or "DBS" not in merge.id_ranges:
        return {}
    imported = _imported(merge)
    counts = {DROP_TABLE: sum(len(tables) for _, tables in imported), DROP_DATABASE: len(imported)}
    now = int(time.time())
    with _spooled(_drop_rows(metastore, imported, now)) as rows:
        insert_events(metastore, rows, sum(counts.values()), now)
    return counts


@contextmanager
def _spooled(rows: Iterable[Row]) -> Iterator[Iterator[Row]]:
    """``rows`` built first into a temporary file, then read back: ``NOTIFICATION_SEQUENCE``'s row lock (taken when
    the ids are reserved, held to the commit) waits for no object read or file listing, as Hive builds its messages
    before ``addNotificationLog`` locks; memory stays one row."""
    with tempfile.TemporaryFile() as spool:
        for row in rows:
            pickle.dump(row, spool)
        end = spool.tell()
        spool.seek(0)

        def replay() -> Iterator[Row]:
            while spool.tell() < end:
                yield pickle.load(spool)  # noqa: S301 - our own rows, written just above

        yield replay()


def merge_event_counts(imported: Imported) -> dict[str, int]:
    """Events by type: one per database and table, one per :data:`ADD_PARTITION_BATCH` partitions of a table."""
    tables = [t for _, listed in imported for t in listed]
    batches = sum(-(-parts // ADD_PARTITION_BATCH) for _, parts in tables)
    return {CREATE_DATABASE: len(imported), CREATE_TABLE: len(tables), ADD_PARTITION: batches}


def _imported(merge: MergeImport) -> Imported:
    """The databases, tables and partition counts in the merge's journaled id ranges (one query each)."""
    reader = MetastoreReader(merge.target)
    db_low, db_high = merge.id_ranges["DBS"]
    databases = reader.rows('SELECT "DB_ID" FROM "DBS" WHERE "DB_ID" BETWEEN %s AND %s ORDER BY "DB_ID"',
                            [db_low, db_high])  # fmt: skip
    tables = reader.rows(
        'SELECT "DB_ID", "TBL_ID" FROM "TBLS" WHERE "DB_ID" BETWEEN %s AND %s ORDER BY "TBL_ID"', [db_low, db_high]
    )
    parts = dict(
        reader.rows(
            'SELECT p."TBL_ID", COUNT(*) FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
            'WHERE t."DB_ID" BETWEEN %s AND %s GROUP BY p."TBL_ID"',
            [db_low, db_high],
        )
    )
    by_database: dict[int, list[tuple[int, int]]] = {int(db_id): [] for (db_id,) in databases}
    for db_id, tbl_id in tables:
        by_database[int(db_id)].append((int(tbl_id), int(parts.get(tbl_id, 0))))
    return list(by_database.items())


def _drop_rows(metastore: Metastore, imported: Imported, now: int) -> Iterator[Row]:
    """``onDropTable`` for each table (the table as it was), then ``onDropDatabase``, database by database."""
    version, alias = metastore.schema.version, metastore.alias
    catalog, no_table = _names(version)
    for db_id, tables in imported:
        for tbl_id, _ in tables:
            table = read_table(alias, version, tbl_id)
            message = messages.drop_table_message(version, table, now)
            yield DROP_TABLE, catalog, table.database, table.name, messages.encode(version, message)
        database = read_database(alias, version, db_id)
        message = messages.database_message(version, database, now)
        yield DROP_DATABASE, catalog, database.name, no_table, messages.encode(version, message)


def _names(version: SchemaVersion) -> tuple[str | None, str | None]:
    """The catalog column of every event, and the table column of a database's event (3.1's direct SQL writes one
    space for an event of no table, 4.0 NULL: ``operations.events.writer``)."""
    capabilities = version.capabilities
    catalog = DEFAULT_CATALOG if capabilities.catalogs else None
    spaced = capabilities.database_messages_carry_json and not capabilities.database_messages_carry_catalog
    return catalog, " " if spaced else None


def _rows(metastore: Metastore, imported: Imported, now: int, source: MetastoreRows | None = None) -> Iterator[Row]:
    """Each event as ``DbNotificationListener`` writes it: ``onCreateDatabase`` (the database's name, no table),
    ``onCreateTable`` (the table and its files), ``onAddPartition`` (the partitions and their files); ``source``:
    where the rows are read (default: the target as it is)."""
    version, alias = metastore.schema.version, metastore.alias
    catalog, no_table = _names(version)
    for db_id, tables in imported:
        database = read_database(alias, version, db_id, source)
        message = messages.database_message(version, database, now)
        yield CREATE_DATABASE, catalog, database.name, no_table, messages.encode(version, message)
        for tbl_id, parts in tables:
            yield from table_creation_rows(
                metastore, tbl_id, now, partitions_per_event=ADD_PARTITION_BATCH, partitions=parts, rows=source
            )
