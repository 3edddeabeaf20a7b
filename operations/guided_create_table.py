"""
The guided request's choices on a database page: ready-to-edit CREATE TABLE statements for one database (a managed
table, an external one, one LIKE a table of the database), so a steward starts from text that parses and previews.
A read: the database's row and its first table's name.
"""

from __future__ import annotations

from catalog_admin.models import Database, Table
from catalog_admin.selectors.metastores import Metastore

__all__ = ("NEW_TABLE", "create_table_choices")

NEW_TABLE = "new_table"
Choice = tuple[str, str, str, str]  # key, label, statement, hint


def create_table_choices(metastore: Metastore, database: str) -> tuple[Choice, ...]:
    """``(key, label, statement, hint)`` for each way to create a table in ``database`` (none when it is not one)."""
    row = Database.objects.on(metastore).filter(name=database).values_list("id", "location_uri").first()
    if row is None:
        return ()
    database_id, location = row
    ref = f"{_quote(database)}.{_quote(NEW_TABLE)}"
    choices = [
        ("create_table", "Create a table",
         f"CREATE TABLE {ref} (\n  `id` bigint COMMENT '…',\n  `name` string\n)\nPARTITIONED BY (`dt` string)\n"
         "STORED AS PARQUET",
         "Edit the columns, the partition keys (or leave PARTITIONED BY out) and the format: TEXTFILE, ORC, PARQUET, "
         "AVRO, SEQUENCEFILE or RCFILE. The table's directory is made under the database's."),
        ("create_external_table", "Create an external table",
         f"CREATE EXTERNAL TABLE {ref} (\n  `id` bigint,\n  `name` string\n)\nSTORED AS PARQUET\n"
         f"LOCATION '{location.rstrip('/')}/{NEW_TABLE}'",
         "For data written by others: the console never deletes an external table's files."),
    ]  # fmt: skip
    first = (
        Table.objects.using(metastore.alias)
        .filter(database_id=database_id, type__in=("MANAGED_TABLE", "EXTERNAL_TABLE"))
        .order_by("name")
        .values_list("name", flat=True)
        .first()
    )
    if first:
        hint = "Its columns, partition keys, format and bucketing; none of its properties, as Hive."
        statement = f"CREATE TABLE {ref} LIKE {_quote(database)}.{_quote(first)}"
        choices.append(("create_table_like", "Create a table like another", statement, hint))
    return tuple(choices)


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"
