"""
Search over a metastore: databases, tables (by name or qualified ``db.table``), columns (by name or
``db.table.column``), and the comments of tables and columns.

Every part is one bounded query with ``LIKE '%…%'``. On PostgreSQL, ``manage.py search_index --create`` adds trigram
indexes (pg_trgm, :mod:`catalog_admin.search_index`) that serve exactly these predicates; without them, and on
MariaDB/MySQL and SQLite, the same queries scan (fine for thousands of tables, slow at 100,000: see README, "Search").
Hive stores database, table and column names in lower case; comments are compared lower-cased.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q
from django.db.models.functions import Lower

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Column, Database, Table, TableParam
from catalog_admin.selectors.metastores import Metastore

__all__ = ("MIN_QUERY_LENGTH", "ColumnHit", "CommentHit", "SearchHit", "SearchResults", "search_catalog")

MIN_QUERY_LENGTH = 2


@dataclass(frozen=True)
class SearchHit:
    kind: str  # "database" or "table"
    database: str
    name: str
    type: str = ""


@dataclass(frozen=True)
class ColumnHit:
    database: str
    table: str
    column: str
    type: str


@dataclass(frozen=True)
class CommentHit:
    """A table (``column`` empty) or a column whose comment contains the query."""

    database: str
    table: str
    column: str
    comment: str


@dataclass(frozen=True)
class SearchResults:
    query: str
    databases: list[SearchHit]
    tables: list[SearchHit]
    truncated: bool
    columns: list[ColumnHit] = field(default_factory=list)
    comments: list[CommentHit] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.databases) + len(self.tables) + len(self.columns) + len(self.comments)


def _checked(query: str) -> str:
    needle = query.strip().lower()
    if len(needle) < MIN_QUERY_LENGTH:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Search for at least {MIN_QUERY_LENGTH} characters.",
            {"parameter": "q"},
        )
    return needle


def search_catalog(metastore: Metastore, query: str, *, limit: int = 50) -> SearchResults:
    """Everything whose name (or qualified name) or comment contains ``query``; exact and prefix matches first."""
    needle = _checked(query)
    parts = needle.split(".")
    alias = metastore.alias
    if len(parts) == 1:
        databases = [
            SearchHit(kind="database", database=name, name=name)
            for name in Database.objects.using(alias)
            .filter(name__contains=needle)
            .order_by("name")
            .values_list("name", flat=True)[:limit]
        ]
        tables, truncated = _tables(alias, Q(name__contains=needle), needle, limit)
        columns = _columns(alias, Q(sd__cd__columns__name__contains=needle), limit)
        comments = _comments(alias, needle, limit)
        return SearchResults(needle, databases, tables, truncated, columns, comments)
    database, rest = parts[0], parts[1:]
    in_database = Q(database__name__startswith=database) if database else Q()
    tables, truncated = _tables(alias, in_database & Q(name__contains=rest[0]), rest[0], limit)
    columns: list[ColumnHit] = []
    if len(rest) > 1:
        table_match = Q(name__startswith=rest[0]) if rest[0] else Q()
        column = ".".join(rest[1:])
        columns = _columns(alias, in_database & table_match & Q(sd__cd__columns__name__contains=column), limit)
    return SearchResults(needle, [], tables, truncated, columns, [])


def _tables(alias: str, condition: Q, needle: str, limit: int) -> tuple[list[SearchHit], bool]:
    rows = list(
        Table.objects.using(alias)
        .filter(condition)
        .order_by("name", "database__name")
        .values_list("database__name", "name", "type")[: limit + 1]
    )
    tables = [SearchHit(kind="table", database=db, name=name, type=kind or "") for db, name, kind in rows[:limit]]
    tables.sort(key=lambda hit: (hit.name != needle, not hit.name.startswith(needle), hit.name, hit.database))
    return tables, len(rows) > limit


def _columns(alias: str, condition: Q, limit: int) -> list[ColumnHit]:
    """Columns of tables (not of partitions: a table's SD names its columns) matching ``condition``."""
    rows = (
        Table.objects.using(alias)
        .filter(condition)
        .order_by("sd__cd__columns__name", "database__name", "name")
        .values_list("database__name", "name", "sd__cd__columns__name", "sd__cd__columns__type")[:limit]
    )
    return [ColumnHit(db, table, column, type_ or "") for db, table, column, type_ in rows]


def _comments(alias: str, needle: str, limit: int) -> list[CommentHit]:
    """Tables (TABLE_PARAMS ``comment``) and columns (COLUMNS_V2.COMMENT) whose comment contains ``needle``."""
    tables = (
        TableParam.objects.using(alias)
        .filter(key="comment")
        .alias(lowered=Lower("value"))
        .filter(lowered__contains=needle)
        .order_by("table__database__name", "table__name")
        .values_list("table__database__name", "table__name", "value")[:limit]
    )
    hits = [CommentHit(db, table, "", comment or "") for db, table, comment in tables]
    columns = (
        Column.objects.using(alias)
        .alias(lowered=Lower("comment"))
        .filter(lowered__contains=needle)
        .values("cd_id", "name", "comment")[:limit]
    )
    found = {(row["cd_id"], row["name"]): row["comment"] for row in columns}
    if found:
        owners = (
            Table.objects.using(alias)
            .filter(sd__cd_id__in={cd for cd, _ in found})
            .order_by("database__name", "name")
            .values_list("database__name", "name", "sd__cd_id")[:limit]
        )
        for db, table, cd in owners:
            hits += [CommentHit(db, table, name, comment or "") for (c, name), comment in found.items() if c == cd]
    return hits[:limit]
