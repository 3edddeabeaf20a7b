"""Global search across the databases and tables of a metastore."""

from __future__ import annotations

from dataclasses import dataclass

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Database, Table
from catalog_admin.selectors.metastores import Metastore

__all__ = ("SearchHit", "SearchResults", "search_catalog")

MIN_QUERY_LENGTH = 2


@dataclass(frozen=True)
class SearchHit:
    kind: str  # "database" or "table"
    database: str
    name: str
    type: str = ""


@dataclass(frozen=True)
class SearchResults:
    query: str
    databases: list[SearchHit]
    tables: list[SearchHit]
    truncated: bool


def search_catalog(metastore: Metastore, query: str, *, limit: int = 50) -> SearchResults:
    """Databases and tables whose name contains ``query``; exact and prefix matches first."""
    needle = query.strip().lower()
    if len(needle) < MIN_QUERY_LENGTH:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Search for at least {MIN_QUERY_LENGTH} characters.",
            {"parameter": "q"},
        )
    databases = [
        SearchHit(kind="database", database=name, name=name)
        for name in Database.objects.using(metastore.alias)
        .filter(name__contains=needle)
        .order_by("name")
        .values_list("name", flat=True)[:limit]
    ]
    rows = list(
        Table.objects.using(metastore.alias)
        .filter(name__contains=needle)
        .order_by("name", "database__name")
        .values_list("database__name", "name", "type")[: limit + 1]
    )
    tables = [SearchHit(kind="table", database=db, name=name, type=kind or "") for db, name, kind in rows[:limit]]
    tables.sort(
        key=lambda hit: (
            hit.name != needle,
            not hit.name.startswith(needle),
            hit.name,
            hit.database,
        )
    )
    return SearchResults(query=needle, databases=databases, tables=tables, truncated=len(rows) > limit)
