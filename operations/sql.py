"""Portable SQL fragments for set-based metastore statements (PostgreSQL, MySQL/MariaDB, SQLite)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections
from django.db.models import Model

from catalog_admin.models import Partition

__all__ = ("MetastoreSql",)


class MetastoreSql:
    """Builds statements for one metastore connection: quoting (incl. lower-case ACID tables) and string functions."""

    def __init__(self, alias: str) -> None:
        self.connection = connections[alias]

    def table(self, model: type[Model]) -> str:
        return self.connection.ops.quote_name(model._meta.db_table)

    def col(self, model: type[Model], field: str) -> str:
        return self.connection.ops.quote_name(model._meta.get_field(field).column)

    def concat(self, *parts: str) -> str:
        if self.connection.vendor == "mysql":
            return f"CONCAT({', '.join(parts)})"
        return "(" + " || ".join(parts) + ")"

    def has_prefix(self, column: str) -> str:
        """``column`` starts with the string parameter that follows (no LIKE, so no escaping of % and _)."""
        return f"SUBSTR({column}, 1, %s) = %s"

    def of_table_partitions(self, column: str, partition_field: str = "id") -> str:
        """``column`` is one of a table's partitions' ``partition_field`` values (parameter: the table id).

        On PostgreSQL the id list is built once and probed through the column's index
        (``= ANY(ARRAY(…))``): a plain ``IN (SELECT …)`` there hash-joins a scan of the whole table.
        """
        subquery = (
            f"SELECT {self.col(Partition, partition_field)} FROM {self.table(Partition)} "
            f"WHERE {self.col(Partition, 'table')} = %s"
        )
        if self.connection.vendor == "postgresql":
            return f"{column} = ANY(ARRAY({subquery}))"
        return f"{column} IN ({subquery})"

    def replace_prefix(self, column: str) -> str:
        """``new_prefix || SUBSTR(column, len(old_prefix) + 1)``; parameters: new prefix, start position."""
        return self.concat("%s", f"SUBSTR({column}, %s)")

    def not_among(self, column: str, values: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
        """`` AND column is none of values`` and its parameters (nothing when ``values`` is empty).

        PostgreSQL takes the values as one array parameter; MySQL and SQLite one parameter each.
        """
        if not values:
            return "", ()
        if self.connection.vendor == "postgresql":
            return f" AND {column} <> ALL(%s)", (list(values),)
        return f" AND {column} NOT IN ({', '.join(['%s'] * len(values))})", tuple(values)

    def among_ids(self, column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
        """``column`` is one of the integer ``ids`` (a preview's count, never a plan's statement), and its parameters.

        PostgreSQL takes them as one array literal (``= ANY(%s::bigint[])``, parsed once: 2-3x faster than 5,000
        placeholders, issue 29); MySQL and SQLite one parameter each."""
        if self.connection.vendor == "postgresql":
            return f"{column} = ANY(%s::bigint[])", ["{" + ",".join(str(int(value)) for value in ids) + "}"]
        return f"{column} IN ({', '.join(['%s'] * len(ids))})", list(ids)
