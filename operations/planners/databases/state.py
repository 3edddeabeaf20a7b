"""
One database as a plan depends on it (issue 27): its DBS row with every column the schema has, its DATABASE_PARAMS,
its DB_PRIVS rows, and how many tables and functions still name it; read in a fixed number of queries, with a
fingerprint a plan records and execution compares under the row's lock.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import connections

from catalog_admin.selectors.metastores import Metastore

__all__ = ("ABSENT", "DatabaseState", "read_database_state", "read_rows")

ABSENT = "absent"  # the state fingerprint of a database that does not exist


@dataclass(frozen=True)
class DatabaseState:
    """A database's rows as they are (``row``: DBS by column name; ``params``: sorted ``(key, value)``;
    ``privileges``: its DB_PRIVS rows by column name)."""

    row: dict[str, Any]
    params: tuple[tuple[str, str | None], ...]
    privileges: tuple[dict[str, Any], ...]
    tables: int
    functions: int

    @property
    def id(self) -> int:
        return int(self.row["DB_ID"])

    @property
    def name(self) -> str:
        return str(self.row["NAME"])

    @property
    def location(self) -> str:
        return str(self.row.get("DB_LOCATION_URI") or "")

    @property
    def managed_location(self) -> str:
        return str(self.row.get("DB_MANAGED_LOCATION_URI") or "")

    @property
    def fingerprint(self) -> str:
        """What a plan on this database binds: its rows and whether tables or functions name it."""
        return _digest([self.row, self.params, self.privileges, self.tables, self.functions])


def read_rows(metastore: Metastore, table: str, where: str, params: list[Any]) -> list[dict[str, Any]]:
    """Every column of ``table``'s rows matching ``where`` (column names as the schema spells them)."""
    connection = connections[metastore.alias]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} WHERE {where}", params)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def read_database_state(metastore: Metastore, name: str, *, for_update: bool = False) -> DatabaseState | None:
    """The database ``name`` of the default catalog (``None``: there is none); ``for_update`` locks its DBS row."""
    quote = connections[metastore.alias].ops.quote_name
    where = f"{quote('NAME')} = %s"
    params: list[Any] = [name]
    if metastore.schema.capabilities.catalogs:
        where += f" AND {quote('CTLG_NAME')} = %s"
        params.append("hive")
    if for_update and connections[metastore.alias].features.has_select_for_update:
        where += " FOR UPDATE"
    rows = read_rows(metastore, "DBS", where, params)
    if not rows:
        return None
    row = {key: _plain(value) for key, value in rows[0].items()}
    db_id = [row["DB_ID"]]
    by_id = f"{quote('DB_ID')} = %s"
    params_rows = read_rows(metastore, "DATABASE_PARAMS", by_id, db_id)
    privileges = sorted(
        (_plain_row(p) for p in read_rows(metastore, "DB_PRIVS", by_id, db_id)), key=lambda p: p["DB_GRANT_ID"]
    )
    return DatabaseState(
        row=row,
        params=tuple(sorted((str(p["PARAM_KEY"]), p["PARAM_VALUE"]) for p in params_rows)),
        privileges=tuple(privileges),
        tables=_count(metastore, "TBLS", db_id[0]),
        functions=_count(metastore, "FUNCS", db_id[0]),
    )


def _count(metastore: Metastore, table: str, db_id: int) -> int:
    """How many rows of ``table`` name the database (0 when the schema has no such table: the console's SQLite
    metastore, ``catalog_admin.metastore_ddl``, has no FUNCS)."""
    connection = connections[metastore.alias]
    quote = connection.ops.quote_name
    if table == "FUNCS" and connection.vendor == "sqlite" and table not in connection.introspection.table_names():
        return 0
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {quote(table)} WHERE {quote('DB_ID')} = %s", [db_id])
        return int(cursor.fetchone()[0])


def _plain(value: Any) -> Any:
    """A column's value as JSON keeps it (MySQL's BIT columns come back as bytes)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return int.from_bytes(bytes(value), "big")
    return value


def _plain_row(row: dict[str, Any]) -> dict[str, Any]:
    return {key: _plain(value) for key, value in row.items()}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
