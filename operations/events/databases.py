"""
The notification events of a database statement (issue 27), as ``DbNotificationListener`` writes them:
``onCreateDatabase`` (CREATE_DATABASE), ``onAlterDatabase`` (ALTER_DATABASE, 3.x+), ``onDropDatabase`` (DROP_DATABASE),
each naming the database and no table, in the version's message format (``operations.events.messages``), written in
the execution's transaction with ids under ``NOTIFICATION_SEQUENCE``'s row lock (``writer.insert_events``).
"""

from __future__ import annotations

import time

from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.events import messages
from operations.events.objects import DatabaseObject
from operations.events.writer import DEFAULT_CATALOG, Row, insert_events

__all__ = ("ALTER_DATABASE", "CREATE_DATABASE", "DROP_DATABASE", "database_event_names", "write_database_event")

CREATE_DATABASE, ALTER_DATABASE, DROP_DATABASE = "CREATE_DATABASE", "ALTER_DATABASE", "DROP_DATABASE"


def database_event_names(version: SchemaVersion) -> tuple[str | None, str | None]:
    """The catalog column of a database's event and its table column: 3.1's direct SQL writes one space for an event
    of no table, 4.0 NULL, 2.3 NULL (as ``operations/merge/events.py`` writes the merge's CREATE_DATABASE)."""
    capabilities = version.capabilities
    catalog = DEFAULT_CATALOG if capabilities.catalogs else None
    spaced = capabilities.database_messages_carry_json and not capabilities.database_messages_carry_catalog
    return catalog, " " if spaced else None


def write_database_event(
    metastore: Metastore, kind: str, before: DatabaseObject | None, after: DatabaseObject | None
) -> int:
    """Insert the one event of ``kind`` (inside the caller's transaction): CREATE_DATABASE of ``after``, DROP_DATABASE
    of ``before``, ALTER_DATABASE of both; returns how many were written (0: the metastore's events are off)."""
    if not metastore.config.events:
        return 0
    version = metastore.schema.version
    now = int(time.time())
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
    return insert_events(metastore, [row], 1, now)
