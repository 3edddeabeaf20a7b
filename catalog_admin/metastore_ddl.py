"""
Create a Hive metastore schema of a given version in an empty SQLite database, generated from the models.

The tables, columns, primary keys and indexes come from the unmanaged models in
``catalog_admin.models`` (only what the requested schema version has), and the bootstrap rows
are those Hive's official ``hive-schema-<version>`` scripts insert. For PostgreSQL and MySQL use
Hive's own scripts (``schematool``) instead: this generator targets the embedded demo metastore.
"""

from __future__ import annotations

from pathlib import Path

from django.db import connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from catalog_admin.db import allow_metastore_writes
from catalog_admin.schema import SchemaVersion, field_available, model_available

__all__ = (
    "DEFAULT_SCHEMA_VERSION",
    "MetastoreSchemaError",
    "create_metastore_schema",
    "schema_statements",
    "warehouse_uri",
)

DEFAULT_SCHEMA_VERSION = "3.1.0"
NOTIFICATION_LOG_SEQUENCE = "org.apache.hadoop.hive.metastore.model.MNotificationLog"


class MetastoreSchemaError(Exception):
    """The schema cannot be created: unsupported version or backend, or the database is not empty."""


def create_metastore_schema(alias: str, version: str = DEFAULT_SCHEMA_VERSION, warehouse: str = "") -> None:
    """Create Hive schema ``version`` (tables and bootstrap rows) in the empty SQLite database ``alias``."""
    parsed = _supported_version(version)
    connection = connections[alias]
    if connection.vendor != "sqlite":
        raise MetastoreSchemaError(
            f"Database '{alias}' is {connection.vendor}; load Hive's official schema scripts there instead."
        )
    with allow_metastore_writes(), transaction.atomic(using=alias):
        if connection.introspection.table_names():
            raise MetastoreSchemaError(f"Database '{alias}' already has tables; refusing to create a metastore in it.")
        with connection.cursor() as cursor:
            for statement in schema_statements(connection, parsed):
                cursor.execute(statement)
            _insert_bootstrap_rows(cursor, connection, parsed, warehouse_uri(warehouse))


def schema_statements(connection: BaseDatabaseWrapper, version: SchemaVersion) -> list[str]:
    """``CREATE TABLE`` and ``CREATE INDEX`` statements for every model table that ``version`` has."""
    from catalog_admin.models import hive_models

    statements: list[str] = []
    for model in hive_models():
        if model_available(model, version):
            statements.append(_create_table_sql(connection, model, version))
            statements.extend(_create_index_sql(connection, model, version))
    return statements


def warehouse_uri(warehouse: str) -> str:
    """A warehouse directory as Hive stores locations: ``file:/abs/path`` for local paths, URIs unchanged."""
    if not warehouse or "://" in warehouse or warehouse.startswith("file:"):
        return warehouse
    return f"file:{Path(warehouse).resolve()}"


def _supported_version(version: str) -> SchemaVersion:
    parsed = SchemaVersion.parse(version)
    if not parsed.is_supported:
        raise MetastoreSchemaError(f"Hive schema version '{version}' is not supported.")
    return parsed


def _columns(model: type[models.Model], version: SchemaVersion) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if field_available(f, version)]


def _primary_key_columns(model: type[models.Model]) -> list[str]:
    pk = model._meta.pk
    fields = pk.fields if isinstance(pk, models.CompositePrimaryKey) else (pk,)
    return [f.column for f in fields]


def _column_sql(connection: BaseDatabaseWrapper, field: models.Field) -> str:
    parts = [connection.ops.quote_name(field.column), field.db_type(connection)]
    if not field.null:
        parts.append("NOT NULL")
    if field.unique and not field.primary_key:
        parts.append("UNIQUE")
    default = _default_sql(field)
    if default:
        parts.append(f"DEFAULT {default}")
    return " ".join(parts)


def _default_sql(field: models.Field) -> str:
    """A constant Python default as an SQL literal (Hive's scripts declare these as column defaults)."""
    if not field.has_default() or callable(field.default):
        return ""
    value = field.default
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return ""


def _create_table_sql(connection: BaseDatabaseWrapper, model: type[models.Model], version: SchemaVersion) -> str:
    quote = connection.ops.quote_name
    lines = [_column_sql(connection, field) for field in _columns(model, version)]
    lines.append("PRIMARY KEY ({})".format(", ".join(quote(c) for c in _primary_key_columns(model))))
    body = ",\n  ".join(lines)
    return f"CREATE TABLE {quote(model._meta.db_table)} (\n  {body}\n)"


def _create_index_sql(connection: BaseDatabaseWrapper, model: type[models.Model], version: SchemaVersion) -> list[str]:
    quote = connection.ops.quote_name
    statements = []
    for index in model._meta.indexes:
        fields = [model._meta.get_field(name.lstrip("-")) for name in index.fields]
        columns = [quote(f.column) for f in fields if field_available(f, version)]
        if columns:
            table = quote(model._meta.db_table)
            statements.append(f"CREATE INDEX {quote(index.name)} ON {table} ({', '.join(columns)})")
    return statements


def _insert_bootstrap_rows(cursor, connection: BaseDatabaseWrapper, version: SchemaVersion, location: str) -> None:
    """The rows Hive's official schema scripts insert (VERSION; catalog and notification rows since 3.0)."""
    quote = connection.ops.quote_name
    release = str(version)
    cursor.execute(
        f"INSERT INTO {quote('VERSION')} ({quote('VER_ID')}, {quote('SCHEMA_VERSION')}, {quote('VERSION_COMMENT')})"
        " VALUES (1, %s, %s)",
        [release, f"Hive release version {release}"],
    )
    if not version.capabilities.catalogs:
        return
    cursor.execute(
        f"INSERT INTO {quote('CTLGS')} ({quote('CTLG_ID')}, {quote('NAME')}, {quote('DESC')}, {quote('LOCATION_URI')})"
        " VALUES (1, %s, %s, %s)",
        ["hive", "Default catalog for Hive", location],
    )
    cursor.execute(
        f"INSERT INTO {quote('SEQUENCE_TABLE')} ({quote('SEQUENCE_NAME')}, {quote('NEXT_VAL')}) VALUES (%s, 1)",
        [NOTIFICATION_LOG_SEQUENCE],
    )
    cursor.execute(
        f"INSERT INTO {quote('NOTIFICATION_SEQUENCE')} ({quote('NNI_ID')}, {quote('NEXT_EVENT_ID')}) VALUES (1, 1)"
    )
    if version.capabilities.seeds_committed_transaction_zero:
        # Hive 4 seeds TXNS with a committed transaction 0 (its TXN_ID is an identity column there).
        cursor.execute(
            f"INSERT INTO {quote('TXNS')} ({quote('TXN_ID')}, {quote('TXN_STATE')}, {quote('TXN_STARTED')},"
            f" {quote('TXN_LAST_HEARTBEAT')}, {quote('TXN_USER')}, {quote('TXN_HOST')}) VALUES (0, 'c', 0, 0, '', '')"
        )
