"""Set-based reads of one metastore for the merge preview: raw SQL on the alias's connection, nothing written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections

__all__ = ("MetastoreReader", "quoted_for")


class MetastoreReader:
    """Reads one metastore by alias; resolves the spelling of tables (PostgreSQL keeps Hive's unquoted txn tables
    lower-case, the others upper-case) and their columns through the connection's introspection."""

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self.connection = connections[alias]
        self.vendor = self.connection.vendor
        with self.connection.cursor() as cursor:
            names = self.connection.introspection.table_names(cursor)
        self._tables = {name.upper(): name for name in names}
        self._columns: dict[str, dict[str, str]] = {}

    def has_table(self, table: str) -> bool:
        return table.upper() in self._tables

    def table(self, table: str) -> str:
        """``table`` quoted as this metastore spells it."""
        return self.connection.ops.quote_name(self._tables[table.upper()])

    def columns(self, table: str) -> dict[str, str]:
        """Upper-cased column name → the column as spelled here, for an existing table."""
        key = table.upper()
        if key not in self._columns:
            with self.connection.cursor() as cursor:
                described = self.connection.introspection.get_table_description(cursor, self._tables[key])
            self._columns[key] = {c.name.upper(): c.name for c in described}
        return self._columns[key]

    def boolean_columns(self, table: str) -> set[str]:
        """Upper-cased names of ``table``'s boolean columns (PostgreSQL ``boolean``, MySQL ``BIT(1)``)."""
        introspection = self.connection.introspection
        with self.connection.cursor() as cursor:
            described = introspection.get_table_description(cursor, self._tables[table.upper()])
        if self.vendor == "mysql":  # Django's MySQL introspection has no type for BIT: its description names it
            return {c.name.upper() for c in described if getattr(c, "data_type", "") == "bit"}
        return {c.name.upper() for c in described if introspection.get_field_type(c.type_code, c) == "BooleanField"}

    def text_widths(self, table: str) -> dict[str, int | None]:
        """Upper-cased text columns of ``table`` → their declared width (None: unbounded, PostgreSQL ``text``), as the
        connection's introspection reads the schema (MySQL's ``TEXT`` types give their byte limit)."""
        introspection = self.connection.introspection
        with self.connection.cursor() as cursor:
            described = introspection.get_table_description(cursor, self._tables[table.upper()])
        text = ("CharField", "TextField")
        return {
            c.name.upper(): (int(c.internal_size) if c.internal_size and int(c.internal_size) > 0 else None)
            for c in described
            if introspection.data_types_reverse.get(c.type_code) in text
        }

    def column(self, table: str, column: str) -> str:
        return self.connection.ops.quote_name(self.columns(table)[column.upper()])

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Rows of ``sql`` written with double-quoted Hive names (converted for MySQL)."""
        with self.connection.cursor() as cursor:
            cursor.execute(quoted_for(sql, self.vendor), list(params))
            return list(cursor.fetchall())

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self.rows(sql, params)[0][0] or 0)

    def raw_rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Rows of ``sql`` already quoted for this vendor (names from :meth:`table` and :meth:`column`)."""
        with self.connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return list(cursor.fetchall())


def quoted_for(sql: str, vendor: str) -> str:
    """SQL written with double-quoted names, as ``vendor`` quotes them (backticks on MySQL/MariaDB)."""
    return sql.replace('"', "`") if vendor == "mysql" else sql
