"""
Notification messages in each version's default format.

- Hive 2.3: ``hive.metastore.event.message.factory`` defaults to
  ``org.apache.hadoop.hive.metastore.messaging.json.JSONMessageFactory`` (``HiveConf``), format ``json-0.2``; the
  message is the Jackson text of ``JSONAlterTableMessage`` / ``JSONAlterPartitionMessage`` /
  ``JSONDropPartitionMessage`` / ``JSONAddPartitionMessage`` (fields in declaration order, read with ``javap``
  from hive-metastore-2.3.10.jar).
- Hive 3.1: ``MetastoreConf.EVENT_MESSAGE_FACTORY``'s JSON factory, format ``json-0.2``; the messages add ``tableType``
  and ``isTruncateOp`` (``standalone-metastore/.../JSONAlterTableMessage.java``).
- Hive 4.0: ``MetastoreConf.EVENT_MESSAGE_FACTORY`` defaults to ``...messaging.json.gzip.GzipJSONMessageEncoder``,
  format ``gzip(json-2.0)``: the JSON text gzipped and Base64-encoded (``DeSerializer.serialize``); messages add
  ``writeId`` and ``locOwner`` (``metastore-server/.../JSONAlterTableMessage.java``).

``server`` and ``servicePrincipal`` are Hive's ``hive.metastore.uris`` and Kerberos principal, empty by default.
"""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import dataclass
from typing import Any

from catalog_admin.hive.versions import SchemaVersion
from operations.events.objects import DatabaseObject, PartitionObject, TableObject

__all__ = (
    "Altered",
    "abort_txn_message",
    "add_partition_message",
    "alter_database_message",
    "alter_partition_message",
    "alter_table_message",
    "create_table_message",
    "database_message",
    "drop_partition_message",
    "drop_table_message",
    "encode",
    "message_format",
)

JSON_FORMAT = "json-0.2"
GZIP_FORMAT = "gzip(json-2.0)"


def message_format(version: SchemaVersion) -> str:
    """``MESSAGE_FORMAT`` of the version's default encoder."""
    return GZIP_FORMAT if version.capabilities.gzip_json_messages else JSON_FORMAT


def encode(version: SchemaVersion, message: dict[str, Any]) -> str:
    """The ``MESSAGE`` text: Jackson-style JSON; on 4.0 gzipped and Base64-encoded (``GzipJSONMessageEncoder``)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    if not version.capabilities.gzip_json_messages:
        return text
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def alter_table_message(
    version: SchemaVersion, before: TableObject, after: TableObject, now: int, altered: Altered | None = None
) -> dict[str, Any]:
    """``JSONAlterTableMessage``: db, table and table type of the table *before* the change, both objects."""
    altered = altered or Altered()
    message: dict[str, Any] = {"server": "", "servicePrincipal": "", "db": before.database, "table": before.name}
    if version.capabilities.messages_carry_table_type:
        message["tableType"] = before.table_type
    message |= {"tableObjBeforeJson": before.json, "tableObjAfterJson": after.json}
    if version.capabilities.messages_carry_location_owner_and_write_id:
        message["locOwner"] = None
    if version.capabilities.messages_carry_table_type:
        message["isTruncateOp"] = altered.truncate_op
    message["timestamp"] = now
    if version.capabilities.messages_carry_location_owner_and_write_id:
        message["writeId"] = altered.write_id
    return message


@dataclass(frozen=True)
class Altered:
    """What an ALTER_TABLE / ALTER_PARTITION message says of the change beside its objects: whether it is a
    TRUNCATE's (``alterTableStatsForTruncate``: ``new AlterTableEvent(table, table, true, true, writeId, …)``) and
    the write id of the statement's transaction (4.x; null without one)."""

    truncate: bool = False
    write_id: int | None = None

    @property
    def truncate_op(self) -> str:
        return "true" if self.truncate else "false"


def alter_partition_message(
    version: SchemaVersion,
    table: TableObject,
    keys: list[str],
    before: PartitionObject,
    after: PartitionObject,
    now: int,
    altered: Altered | None = None,
) -> dict[str, Any]:
    """``JSONAlterPartitionMessage``: the partition's key values before the change, both partition objects."""
    altered = altered or Altered()
    message = _table_part(version, table, now)
    message |= {
        "keyValues": dict(zip(keys, before.values, strict=False)),
        "partitionObjBeforeJson": before.json,
        "partitionObjAfterJson": after.json,
    }
    if version.capabilities.messages_carry_table_type:
        message["isTruncateOp"] = altered.truncate_op
    if version.capabilities.messages_carry_location_owner_and_write_id:
        message["writeId"] = altered.write_id
    return message


def drop_partition_message(
    version: SchemaVersion, table: TableObject, keys: list[str], part: PartitionObject, now: int
) -> dict[str, Any]:
    """``JSONDropPartitionMessage`` for one partition (``drop_partitions_req`` fires one event per partition)."""
    return _table_part(version, table, now) | {"partitions": [dict(zip(keys, part.values, strict=False))]}


def drop_table_message(version: SchemaVersion, table: TableObject, now: int) -> dict[str, Any]:
    """``JSONDropTableMessage``: the table as it was."""
    return _table_part(version, table, now)


def database_message(version: SchemaVersion, database: DatabaseObject, now: int) -> dict[str, Any]:
    """``JSONCreateDatabaseMessage`` and ``JSONDropDatabaseMessage`` (the same fields) in declaration order: 2.3
    ``server, servicePrincipal, db, timestamp``; 3.1 adds ``dbJson`` (``String server, servicePrincipal, db, dbJson;
    Long timestamp``, standalone-metastore/src/.../messaging/json/); 4.0 adds ``cat`` before ``db``
    (standalone-metastore/metastore-server/.../messaging/json/JSONCreateDatabaseMessage.java)."""
    message: dict[str, Any] = {"server": "", "servicePrincipal": ""}
    if version.capabilities.database_messages_carry_catalog:
        message["cat"] = database.catalog
    message["db"] = database.name
    if version.capabilities.database_messages_carry_json:
        message["dbJson"] = database.json
    message["timestamp"] = now
    return message


def alter_database_message(
    version: SchemaVersion, before: DatabaseObject, after: DatabaseObject, now: int
) -> dict[str, Any]:
    """``JSONAlterDatabaseMessage`` (3.1 and 4.0 alike): ``String server, servicePrincipal, db, dbObjBeforeJson,
    dbObjAfterJson; Long timestamp`` (standalone-metastore/.../messaging/json/JSONAlterDatabaseMessage.java; ``db`` is
    the name before). 2.3 writes no ALTER_DATABASE event (``Capabilities.alter_database_writes_event``)."""
    return {
        "server": "",
        "servicePrincipal": "",
        "db": before.name,
        "dbObjBeforeJson": before.json,
        "dbObjAfterJson": after.json,
        "timestamp": now,
    }


def create_table_message(version: SchemaVersion, table: TableObject, now: int, files: list[str]) -> dict[str, Any]:
    """``JSONCreateTableMessage``: the new table and the ``files`` in its directory (``events.files.table_files``)."""
    return _table_part(version, table, now) | {"files": files}


def add_partition_message(
    version: SchemaVersion,
    table: TableObject,
    keys: list[str],
    parts: list[PartitionObject],
    now: int,
    partition_files: list[dict[str, Any]],
) -> dict[str, Any]:
    """``JSONAddPartitionMessage`` for partitions added together (``add_partitions_core`` fires one event), with the
    files in each new partition's directory (``events.files.partition_files``). 4.0 declares ``locOwner`` after
    ``tableObjJson`` (``metastore-server/.../JSONAddPartitionMessage.java``; Jackson writes fields in declaration
    order, nulls included), null as in its ALTER_TABLE message."""
    message = _table_part(version, table, now)
    if version.capabilities.messages_carry_location_owner_and_write_id:
        message = {**{k: v for k, v in message.items() if k != "timestamp"}, "locOwner": None, "timestamp": now}
    message |= {
        "partitions": [dict(zip(keys, p.values, strict=False)) for p in parts],
        "partitionListJson": [p.json for p in parts],
        "partitionFiles": partition_files,
    }
    return message


def _table_part(version: SchemaVersion, table: TableObject, now: int) -> dict[str, Any]:
    message: dict[str, Any] = {"server": "", "servicePrincipal": "", "db": table.database, "table": table.name}
    if version.capabilities.messages_carry_table_type:
        message["tableType"] = table.table_type
    message |= {"tableObjJson": table.json, "timestamp": now}
    return message


def abort_txn_message(version: SchemaVersion, txn_id: int, dbs_updated: list[str], now: int) -> dict[str, Any]:
    """``JSONAbortTxnMessage``: ``txnid``, ``timestamp``, ``server``, ``servicePrincipal`` in declaration order (3.1:
    ``JSONMessageFactory.buildAbortTxnMessage(txnId)``); 4.0 adds ``dbsUpdated``, the databases the transaction
    allocated write ids in (``MessageBuilder.buildAbortTxnMessage(txnId, dbsUpdated)``, from
    ``TxnHandler.getTxnDbsUpdated``)."""
    message: dict[str, Any] = {"txnid": txn_id, "timestamp": now, "server": "", "servicePrincipal": ""}
    if version.capabilities.abort_events_of_4:
        message["dbsUpdated"] = dbs_updated
    return message
