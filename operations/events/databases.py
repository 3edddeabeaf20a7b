"""
The notification events of a database statement (issue 27), as ``DbNotificationListener`` writes them:
``onCreateDatabase`` (CREATE_DATABASE), ``onAlterDatabase`` (ALTER_DATABASE, 3.x+), ``onDropDatabase`` (DROP_DATABASE),
each naming the database and no table, in the version's message format (``operations.events.messages``), written in
the execution's transaction with ids under ``NOTIFICATION_SEQUENCE``'s row lock (``writer.insert_events``).

``DROP DATABASE … CASCADE`` writes what ``HMSHandler.drop_database_core`` fires: a DROP_TABLE per table
(``drop_table_core``; its partitions fire nothing), read before the deletes, then DROP_DATABASE. Its undrop writes
CREATE_DATABASE, then per table what the table's undrop writes: CREATE_TABLE and, for a partitioned table, one
ADD_PARTITION carrying every partition put back (``add_partitions``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.models import Table
from catalog_admin.selectors.metastores import Metastore
from operations.events import messages
from operations.events.files import partition_files, table_files
from operations.events.objects import DatabaseObject, MetastoreRows, read_partitions, read_table
from operations.events.planning import ADD_PARTITION, CREATE_TABLE, DROP_TABLE
from operations.events.writer import DEFAULT_CATALOG, Row, insert_events

__all__ = (
    "ADD_PARTITION",
    "ALTER_DATABASE",
    "CREATE_DATABASE",
    "CREATE_TABLE",
    "DROP_DATABASE",
    "DROP_TABLE",
    "created_table_rows",
    "database_event_names",
    "database_table_ids",
    "dropped_table_rows",
    "table_creation_rows",
    "write_database_event",
)

CREATE_DATABASE, ALTER_DATABASE, DROP_DATABASE = "CREATE_DATABASE", "ALTER_DATABASE", "DROP_DATABASE"


def database_event_names(version: SchemaVersion) -> tuple[str | None, str | None]:
    """The catalog column of a database's event and its table column: 3.1's direct SQL writes one space for an event
    of no table, 4.0 NULL, 2.3 NULL (as ``operations/merge/events.py`` writes the merge's CREATE_DATABASE)."""
    capabilities = version.capabilities
    catalog = DEFAULT_CATALOG if capabilities.catalogs else None
    spaced = capabilities.database_messages_carry_json and not capabilities.database_messages_carry_catalog
    return catalog, " " if spaced else None


def database_table_ids(metastore: Metastore, database_id: int) -> list[int]:
    """The database's tables in name order (as ``get_all_tables`` lists them for ``drop_database_core``)."""
    tables = Table.objects.using(metastore.alias).filter(database_id=database_id).order_by("name")
    return [int(i) for i in tables.values_list("pk", flat=True)]


def dropped_table_rows(metastore: Metastore, table_ids: Sequence[int], now: int) -> list[Row]:
    """``onDropTable`` of each table, as it is (read before the deletes)."""
    version = metastore.schema.version
    catalog = DEFAULT_CATALOG if version.capabilities.catalogs else None
    rows: list[Row] = []
    for table_id in table_ids:
        table = read_table(metastore.alias, version, table_id)
        message = messages.encode(version, messages.drop_table_message(version, table, now))
        rows.append((DROP_TABLE, catalog, table.database, table.name, message))
    return rows


def created_table_rows(metastore: Metastore, table_ids: Sequence[int], now: int) -> list[Row]:
    """``onCreateTable`` of each table put back, with its files, and one ``onAddPartition`` of all its partitions."""
    return [row for table_id in table_ids for row in table_creation_rows(metastore, table_id, now)]


def table_creation_rows(
    metastore: Metastore,
    table_id: int,
    now: int,
    *,
    partitions_per_event: int | None = None,
    partitions: int | None = None,
    rows: MetastoreRows | None = None,
) -> Iterator[Row]:
    """``onCreateTable`` of the table (with its files), then ``onAddPartition`` of its partitions (with theirs): one
    event of all of them, or one per ``partitions_per_event`` (a merge's batches). ``partitions``: their number when
    the caller knows it (0 asks nothing more). ``rows``: where the table's rows are read (default: the metastore as
    it is; a merge's prebuilt events: the rows it is about to publish)."""
    version, alias = metastore.schema.version, metastore.alias
    rows = rows or MetastoreRows(alias)
    catalog = DEFAULT_CATALOG if version.capabilities.catalogs else None
    table = read_table(alias, version, table_id, rows)
    message = messages.create_table_message(version, table, now, table_files(metastore.name, version, table))
    yield CREATE_TABLE, catalog, table.database, table.name, messages.encode(version, message)
    if partitions == 0:
        return
    ids = rows.partition_ids(table_id)
    if not ids:
        return
    keys = [name for name, _, _ in rows.partition_keys(table_id)]
    step = partitions_per_event or len(ids)
    for start in range(0, len(ids), step):
        parts = list(read_partitions(alias, version, table, ids[start : start + step], rows))
        found = partition_files(metastore.name, version, table, keys, parts)
        message = messages.add_partition_message(version, table, keys, parts, now, found)
        yield ADD_PARTITION, catalog, table.database, table.name, messages.encode(version, message)


def write_database_event(
    metastore: Metastore,
    kind: str,
    before: DatabaseObject | None,
    after: DatabaseObject | None,
    *,
    table_rows: Sequence[Row] = (),
    now: int | None = None,
) -> int:
    """Insert the event of ``kind`` (inside the caller's transaction): CREATE_DATABASE of ``after``, DROP_DATABASE
    of ``before``, ALTER_DATABASE of both; ``table_rows``: its tables' events (:func:`dropped_table_rows` go before a
    DROP_DATABASE, :func:`created_table_rows` after a CREATE_DATABASE); returns how many were written (0: the
    metastore's events are off)."""
    if not metastore.config.events:
        return 0
    version = metastore.schema.version
    now = int(time.time()) if now is None else now
    catalog, no_table = database_event_names(version)
    if kind == ALTER_DATABASE:
        assert before is not None and after is not None
        message = messages.alter_database_message(version, before, after, now)
        name = before.name
    else:
        database = after if kind == CREATE_DATABASE else before
        assert database is not None
        message = messages.database_message(version, database, now)
        name = database.name
    row: Row = (kind, catalog, name, no_table, messages.encode(version, message))
    rows = [*table_rows, row] if kind == DROP_DATABASE else [row, *table_rows]
    return insert_events(metastore, rows, len(rows), now)
