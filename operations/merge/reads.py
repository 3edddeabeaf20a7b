"""Set-based reads of one metastore for the merge preview: raw SQL on the alias's connection, nothing written."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import connections

__all__ = ("MetastoreReader", "quoted_for", "read_beside")

T = TypeVar("T")


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


def read_beside(alias: str, reads: Sequence[Callable[[MetastoreReader], T]], workers: int = 2) -> list[T]:
    """The results of ``reads`` (each given a reader of metastore ``alias``), in order, computed by ``workers``
    threads with connections of their own, each taking the next read when done with one: the metastore's server
    runs that many statements at a time. In this thread, one after another, when this thread's connection to
    ``alias`` is inside a transaction (another connection would not see what that transaction wrote)."""
    if connections[alias].in_atomic_block or workers < 2 or len(reads) < 2:
        reader = MetastoreReader(alias)
        return [read(reader) for read in reads]
    results: list[Any] = [None] * len(reads)
    pending, taking, errors = iter(enumerate(reads)), threading.Lock(), []

    def work() -> None:
        try:
            reader = MetastoreReader(alias)
            while True:
                with taking:
                    item = next(pending, None)
                if item is None or errors:
                    return
                index, read = item
                results[index] = read(reader)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            errors.append(exc)
        finally:
            connections.close_all()  # this thread's connections only

    threads = [threading.Thread(target=work, name=f"read-{alias}-{n}") for n in range(min(workers, len(reads)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
