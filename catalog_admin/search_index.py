"""
Trigram indexes for search on a PostgreSQL metastore: opt-in, created and dropped only by ``manage.py search_index``.

The console never changes Hive's schema on its own. These indexes are an addition an operator chooses: they serve the
``LIKE '%…%'`` predicates of :mod:`catalog_admin.selectors.search` (pg_trgm's GIN operator class supports ``LIKE``),
are named ``catalog_admin_search_*`` so that they are easy to find and drop, and change no table Hive reads or writes
(Hive's schema tool upgrades tables and indexes it knows; it ignores extra indexes, but drop them before a
``schematool -upgradeSchema`` to be safe). The console keeps no copy of the metastore: there is nothing to go stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("SEARCH_INDEXES", "SearchIndex", "create_search_indexes", "drop_search_indexes", "existing_search_indexes")


@dataclass(frozen=True)
class SearchIndex:
    name: str
    table: str
    expression: str
    where: str = ""

    def create_sql(self, *, concurrently: bool) -> str:
        how = "CONCURRENTLY " if concurrently else ""
        where = f" WHERE {self.where}" if self.where else ""
        return (
            f'CREATE INDEX {how}IF NOT EXISTS "{self.name}" ON "{self.table}" '
            f"USING gin (({self.expression}) gin_trgm_ops){where}"
        )


SEARCH_INDEXES = (
    SearchIndex("catalog_admin_search_tbl_name", "TBLS", '"TBL_NAME"'),
    SearchIndex("catalog_admin_search_column_name", "COLUMNS_V2", '"COLUMN_NAME"'),
    SearchIndex("catalog_admin_search_column_comment", "COLUMNS_V2", 'lower("COMMENT")'),
    SearchIndex(
        "catalog_admin_search_table_comment", "TABLE_PARAMS", 'lower("PARAM_VALUE")', "\"PARAM_KEY\" = 'comment'"
    ),
)


def _postgresql(alias: str) -> None:
    if connections[alias].vendor != "postgresql":
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Search indexes are for PostgreSQL metastores; '{alias}' is {connections[alias].vendor}: "
            "its search scans (see README, Search).",
            {"parameter": "metastore"},
        )


def existing_search_indexes(alias: str) -> list[str]:
    """The names of the search indexes present in the metastore's database."""
    _postgresql(alias)
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname = ANY(%s) ORDER BY indexname",
            [[index.name for index in SEARCH_INDEXES]],
        )
        return [row[0] for row in cursor.fetchall()]


def create_search_indexes(alias: str, *, concurrently: bool = True) -> list[str]:
    """``CREATE EXTENSION pg_trgm`` and the indexes (``CONCURRENTLY``: Hive keeps writing meanwhile); the SQL run."""
    _postgresql(alias)
    statements = ["CREATE EXTENSION IF NOT EXISTS pg_trgm"]
    statements += [index.create_sql(concurrently=concurrently) for index in SEARCH_INDEXES]
    _run(alias, statements)
    return statements


def drop_search_indexes(alias: str, *, concurrently: bool = True) -> list[str]:
    """Drop the search indexes (the pg_trgm extension stays: something else may use it); the SQL run."""
    _postgresql(alias)
    how = "CONCURRENTLY " if concurrently else ""
    statements = [f'DROP INDEX {how}IF EXISTS "{index.name}"' for index in SEARCH_INDEXES]
    _run(alias, statements)
    return statements


def _run(alias: str, statements: list[str]) -> None:
    with allow_metastore_writes(), connections[alias].cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
