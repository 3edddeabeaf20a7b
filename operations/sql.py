"""Portable SQL fragments for set-based metastore statements (PostgreSQL, MySQL/MariaDB, SQLite)."""

from __future__ import annotations

from django.db import connections
from django.db.models import Model

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

    def replace_prefix(self, column: str) -> str:
        """``new_prefix || SUBSTR(column, len(old_prefix) + 1)``; parameters: new prefix, start position."""
        return self.concat("%s", f"SUBSTR({column}, %s)")
