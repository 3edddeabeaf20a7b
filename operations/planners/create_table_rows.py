"""
The rows ``CREATE TABLE`` writes, as Hive's ``ObjectStore.createTable`` writes them (``convertToMTable``,
``convertToMStorageDescriptor``, ``convertToMSerDeInfo``, ``convertToMFieldSchemas``), as set-based inserts: one
multi-row ``INSERT`` per metastore table, ids from ``SEQUENCE_TABLE`` (:class:`NewId`, allocated at execution), the
creation time the database's clock at execution (``HMSHandler.create_table_core``: ``tbl.setCreateTime(now)`` and
``transient_lastDdlTime``), so a plan rebuilt later is the same plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model

from catalog_admin.models import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    PartitionKey,
    SerDe,
    SerDeParam,
    SortColumn,
    StorageDescriptor,
    Table,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.preview import NewId, Step
from operations.sql import MetastoreSql

__all__ = ("DDL_TIME", "NEW_IDS", "TableDefinition", "insert_steps")

DDL_TIME = "transient_lastDdlTime"
# The ids a CREATE TABLE allocates (the revert deletes exactly these rows).
NEW_IDS = {"TBLS": NewId("TBLS"), "SDS": NewId("SDS"), "CDS": NewId("CDS"), "SERDES": NewId("SERDES")}
# The epoch second of the statement, per database (the CREATE_TIME column; the parameter's text form below).
_NOW = {
    "postgresql": "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) AS BIGINT)",
    "mysql": "UNIX_TIMESTAMP()",
    "sqlite": "CAST(strftime('%%s', 'now') AS INTEGER)",
}
_NOW_TEXT = {
    "postgresql": f"CAST({_NOW['postgresql']} AS VARCHAR)",
    "mysql": "CAST(UNIX_TIMESTAMP() AS CHAR)",
    "sqlite": "strftime('%%s', 'now')",
}


@dataclass(frozen=True)
class TableDefinition:
    """Everything the rows of one new table hold (the planner resolved LIKE, formats and defaults)."""

    database_id: int
    name: str
    table_type: str
    owner: str
    columns: tuple[tuple[str, str, str | None], ...]
    partition_keys: tuple[tuple[str, str, str | None], ...]
    location: str
    input_format: str | None
    output_format: str | None
    serde_lib: str | None
    serde_params: tuple[tuple[str, str], ...]
    buckets: int
    bucket_columns: tuple[str, ...]
    sort_columns: tuple[tuple[str, int], ...]
    params: tuple[tuple[str, str], ...]  # every TABLE_PARAMS row but transient_lastDdlTime (the clock's)


def insert_steps(metastore: Metastore, table: TableDefinition) -> list[Step]:
    """Parents before children (Hive's foreign keys): CDS, COLUMNS_V2, SERDES, SERDE_PARAMS, SDS, BUCKETING_COLS,
    SORT_COLS, TBLS, PARTITION_KEYS, TABLE_PARAMS."""
    sql = MetastoreSql(metastore.alias)
    vendor = connections[metastore.alias].vendor
    cd, sd, serde, tbl = NEW_IDS["CDS"], NEW_IDS["SDS"], NEW_IDS["SERDES"], NEW_IDS["TBLS"]
    steps = [
        _insert(sql, ColumnDescriptor, ("id",), [(cd,)], "Create the column descriptor"),
        _insert(sql, Column, ("cd", "comment", "name", "type", "position"),
                [(cd, comment, name, kind, i) for i, (name, kind, comment) in enumerate(table.columns)],
                f"Add {len(table.columns)} column(s)"),
        _insert(sql, SerDe, _serde_fields(metastore), [_serde_row(metastore, serde, table)], "Create the SerDe"),
        _insert(sql, SerDeParam, ("serde", "key", "value"), [(serde, k, v) for k, v in table.serde_params],
                f"Add {len(table.serde_params)} SerDe parameter(s)"),
        _insert(sql, StorageDescriptor,
                ("id", "cd", "input_format", "is_compressed", "is_stored_as_subdirectories", "location",
                 "num_buckets", "output_format", "serde"),
                [(sd, cd, table.input_format, False, False, table.location, table.buckets, table.output_format,
                  serde)], "Create the storage descriptor"),
        _insert(sql, BucketingColumn, ("sd", "name", "position"),
                [(sd, name, i) for i, name in enumerate(table.bucket_columns)], "Add the bucketing columns"),
        _insert(sql, SortColumn, ("sd", "name", "order", "position"),
                [(sd, name, order, i) for i, (name, order) in enumerate(table.sort_columns)], "Add the sort columns"),
        _table_step(metastore, sql, vendor, table),
        _insert(sql, PartitionKey, ("table", "comment", "name", "type", "position"),
                [(tbl, comment, name, kind, i) for i, (name, kind, comment) in enumerate(table.partition_keys)],
                f"Add {len(table.partition_keys)} partition key(s)"),
        _params_step(sql, vendor, table.params),
    ]  # fmt: skip
    return [step for step in steps if step is not None]


def _serde_fields(metastore: Metastore) -> tuple[str, ...]:
    """SERDES' columns: 3.0 added DESCRIPTION, SERIALIZER_CLASS, DESERIALIZER_CLASS (NULL) and SERDE_TYPE
    (``convertToMSerDeInfo``: 0 for a SerDeInfo without a type)."""
    typed = ("serde_type",) if metastore.schema.has(SerDe, "serde_type") else ()
    return ("id", "name", "slib", *typed)


def _serde_row(metastore: Metastore, serde: NewId, table: TableDefinition) -> tuple[Any, ...]:
    typed = (0,) if metastore.schema.has(SerDe, "serde_type") else ()
    return (serde, None, table.serde_lib, *typed)


def _table_step(metastore: Metastore, sql: MetastoreSql, vendor: str, table: TableDefinition) -> Step:
    """TBLS: the row ``convertToMTable`` writes; OWNER_TYPE 'USER' from 3.0 (``HiveConf``'s session user); 4.0's
    WRITE_ID left to its default (0)."""
    fields = ["id", "create_time", "database", "last_access_time", "owner", "retention", "sd", "name", "type",
              "view_expanded_text", "view_original_text", "is_rewrite_enabled"]  # fmt: skip
    values: list[Any] = [NEW_IDS["TBLS"], None, table.database_id, 0, table.owner, 0, NEW_IDS["SDS"], table.name,
                         table.table_type, None, None, False]  # fmt: skip
    if metastore.schema.has(Table, "owner_type"):
        fields.append("owner_type")
        values.append("USER")
    columns = ", ".join(sql.col(Table, f) for f in fields)
    placeholders = ", ".join(_NOW[vendor] if f == "create_time" else "%s" for f in fields)
    params = tuple(v for f, v in zip(fields, values, strict=True) if f != "create_time")
    return Step(f"Create the table {table.name}", "TBLS", "insert",
                f"INSERT INTO {sql.table(Table)} ({columns}) VALUES ({placeholders})", params, 1)  # fmt: skip


def _params_step(sql: MetastoreSql, vendor: str, params: tuple[tuple[str, str], ...]) -> Step:
    """TABLE_PARAMS: the given rows and ``transient_lastDdlTime``, the statement's second as text."""
    columns = ", ".join(sql.col(TableParam, f) for f in ("table", "key", "value"))
    rows = ["(%s, %s, %s)"] * len(params) + [f"(%s, %s, {_NOW_TEXT[vendor]})"]
    values = tuple(v for key, value in params for v in (NEW_IDS["TBLS"], key, value)) + (NEW_IDS["TBLS"], DDL_TIME)
    return Step(f"Add {len(params) + 1} table parameter(s)", "TABLE_PARAMS", "insert",
                f"INSERT INTO {sql.table(TableParam)} ({columns}) VALUES {', '.join(rows)}", values,
                len(params) + 1)  # fmt: skip


def _insert(
    sql: MetastoreSql, model: type[Model], fields: Sequence[str], rows: list[tuple[Any, ...]], description: str
) -> Step | None:
    """One multi-row INSERT of ``rows`` (None when there are none)."""
    if not rows:
        return None
    columns = ", ".join(sql.col(model, f) for f in fields)
    values = ", ".join(["(" + ", ".join(["%s"] * len(fields)) + ")"] * len(rows))
    return Step(description, model._meta.db_table, "insert",
                f"INSERT INTO {sql.table(model)} ({columns}) VALUES {values}",
                tuple(v for row in rows for v in row), len(rows))  # fmt: skip
