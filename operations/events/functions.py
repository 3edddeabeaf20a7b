"""
The notification events of a database's functions (issue 27), as ``DbNotificationListener`` writes them:
``onDropFunction`` (DROP_FUNCTION: ``JSONDropFunctionMessage``, ``String server, servicePrincipal, db, functionName;
Long timestamp`` in 2.3's ``metastore/…/messaging/json/`` and 3.1's ``standalone-metastore/…/messaging/json/``) for
each function ``DROP DATABASE … CASCADE`` drops, and ``onCreateFunction`` (CREATE_FUNCTION:
``JSONCreateFunctionMessage``, ``String server, servicePrincipal, db, functionObjJson; Long timestamp``, the function
as Thrift's ``TJSONProtocol`` writes it) for each function its undrop puts back. Both name the database and no table,
as the database's own events (:func:`operations.events.databases.database_event_names`).

Hive's order: 2.3's and 3.1's ``HiveMetaStoreClient.dropDatabase`` drops every table itself before it asks the server,
whose ``drop_database_core`` then drops the functions: DROP_TABLE …, DROP_FUNCTION …, DROP_DATABASE. 4.0's client
leaves the tables to the server (``dropDatabaseCascadePerDb``), which drops the functions first: DROP_FUNCTION …,
DROP_TABLE …, DROP_DATABASE (``Capabilities.drop_database_drops_functions_first``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections

from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.selectors.metastores import Metastore
from operations.events import messages
from operations.events.databases import database_event_names
from operations.events.thrift_json import T, encode_struct, field
from operations.events.writer import Row

__all__ = ("CREATE_FUNCTION", "DROP_FUNCTION", "created_function_rows", "dropped_function_rows")

CREATE_FUNCTION, DROP_FUNCTION = "CREATE_FUNCTION", "DROP_FUNCTION"
# hive_metastore.thrift's enums, as ObjectStore stores them: OWNER_TYPE by name, FUNC_TYPE and RESOURCE_TYPE by value.
_PRINCIPAL_TYPES = {"USER": 1, "ROLE": 2, "GROUP": 3}


@dataclass(frozen=True)
class FunctionObject:
    """A function as ``ObjectStore.convertToFunction`` reads it: its FUNCS row, its database and its resource URIs
    in their order."""

    name: str
    database: str
    catalog: str | None
    class_name: str | None
    owner: str | None
    owner_type: str | None
    create_time: int
    function_type: int
    resources: tuple[tuple[int, str], ...]


def dropped_function_rows(metastore: Metastore, database_id: int, now: int) -> list[Row]:
    """``onDropFunction`` of each function of the database, by name (read before the deletes)."""
    version = metastore.schema.version
    catalog, no_table = database_event_names(version)
    rows: list[Row] = []
    for function in _functions(metastore, database_id):
        message = {"server": "", "servicePrincipal": "", "db": function.database, "functionName": function.name,
                   "timestamp": now}  # fmt: skip
        rows.append((DROP_FUNCTION, catalog, function.database, no_table, messages.encode(version, message)))
    return rows


def created_function_rows(metastore: Metastore, database_id: int, now: int) -> list[Row]:
    """``onCreateFunction`` of each function of the database, by name (read after they were put back)."""
    version = metastore.schema.version
    catalog, no_table = database_event_names(version)
    rows: list[Row] = []
    for function in _functions(metastore, database_id):
        message = {"server": "", "servicePrincipal": "", "db": function.database,
                   "functionObjJson": function_json(version, function), "timestamp": now}  # fmt: skip
        rows.append((CREATE_FUNCTION, catalog, function.database, no_table, messages.encode(version, message)))
    return rows


def function_json(version: SchemaVersion, function: FunctionObject) -> str:
    """The Thrift ``Function`` (``1: functionName, 2: dbName, 3: className, 4: ownerName, 5: ownerType, 6: createTime,
    7: functionType, 8: resourceUris, 9: catName`` from 3.0) in ``TJSONProtocol``."""
    resources = [{1: T("i32", kind), 2: T("str", uri)} for kind, uri in function.resources]
    owner_type = _PRINCIPAL_TYPES.get((function.owner_type or "").upper())
    fields: dict[int, T | None] = {
        1: field("str", function.name),
        2: field("str", function.database),
        3: field("str", function.class_name),
        4: field("str", function.owner),
        5: field("i32", owner_type),
        6: T("i32", function.create_time),
        7: T("i32", function.function_type),
        8: T("lst", resources, "rec"),
        9: field("str", function.catalog) if version.capabilities.catalogs else None,
    }
    return encode_struct(fields)


def _functions(metastore: Metastore, database_id: int) -> list[FunctionObject]:
    """The database's functions by name with their resource URIs: two queries."""
    connection = connections[metastore.alias]
    if "FUNCS" not in {name.upper() for name in connection.introspection.table_names()}:
        return []
    q = connection.ops.quote_name
    catalog = f"d.{q('CTLG_NAME')}" if metastore.schema.version.capabilities.catalogs else "NULL"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT f.{q('FUNC_ID')}, f.{q('FUNC_NAME')}, d.{q('NAME')}, {catalog}, f.{q('CLASS_NAME')}, "
            f"f.{q('OWNER_NAME')}, f.{q('OWNER_TYPE')}, f.{q('CREATE_TIME')}, f.{q('FUNC_TYPE')} "
            f"FROM {q('FUNCS')} f JOIN {q('DBS')} d ON d.{q('DB_ID')} = f.{q('DB_ID')} "
            f"WHERE f.{q('DB_ID')} = %s ORDER BY f.{q('FUNC_NAME')}",
            [database_id],
        )
        found = cursor.fetchall()
        cursor.execute(
            f"SELECT r.{q('FUNC_ID')}, r.{q('RESOURCE_TYPE')}, r.{q('RESOURCE_URI')} FROM {q('FUNC_RU')} r "
            f"JOIN {q('FUNCS')} f ON f.{q('FUNC_ID')} = r.{q('FUNC_ID')} WHERE f.{q('DB_ID')} = %s "
            f"ORDER BY r.{q('FUNC_ID')}, r.{q('INTEGER_IDX')}",
            [database_id],
        )
        uris: dict[Any, list[tuple[int, str]]] = {}
        for function_id, kind, uri in cursor.fetchall():
            uris.setdefault(function_id, []).append((int(kind), str(uri)))
    return [
        FunctionObject(
            str(name),
            str(database),
            catalog_name,
            class_name,
            owner,
            owner_type,
            int(created or 0),
            int(kind or 1),
            tuple(uris.get(function_id, ())),
        )  # fmt: skip
        for function_id, name, database, catalog_name, class_name, owner, owner_type, created, kind in found
    ]
