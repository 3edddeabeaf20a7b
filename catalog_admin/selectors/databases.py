"""Reading databases of a metastore."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from catalog_admin.errors import NotFound
from catalog_admin.models import Database, DatabaseParam, Table, TableType
from catalog_admin.selectors.metastores import Metastore

__all__ = ("DatabaseSummary", "count_databases", "database_params", "get_database", "list_databases")


@dataclass(frozen=True)
class DatabaseSummary:
    """A database with its table counts by kind."""

    database: Database
    tables: int
    views: int
    external: int


def list_databases(metastore: Metastore) -> list[DatabaseSummary]:
    """Every database of the metastore, by name, with counts (one grouped query over TBLS)."""
    databases = list(Database.objects.on(metastore).order_by("name"))
    counts = {
        row["database_id"]: row
        for row in Table.objects.using(metastore.alias)
        .values("database_id")
        .annotate(
            total=Count("id"),
            views=Count(
                "id",
                filter=Q(type__in=[TableType.VIRTUAL_VIEW, TableType.MATERIALIZED_VIEW]),
            ),
            external=Count("id", filter=Q(type=TableType.EXTERNAL)),
        )
        .order_by()
    }
    return [
        DatabaseSummary(
            database=db,
            tables=counts.get(db.id, {}).get("total", 0),
            views=counts.get(db.id, {}).get("views", 0),
            external=counts.get(db.id, {}).get("external", 0),
        )
        for db in databases
    ]


def count_databases(metastore: Metastore) -> int:
    return Database.objects.using(metastore.alias).count()


def get_database(metastore: Metastore, name: str) -> Database:
    """The database called ``name`` (Hive names are case-insensitive and stored lower-case)."""
    database = Database.objects.on(metastore).filter(name=name.lower()).first()
    if database is None:
        raise NotFound("database", name, metastore=metastore.name)
    return database


def database_params(metastore: Metastore, database: Database) -> dict[str, str | None]:
    rows = DatabaseParam.objects.using(metastore.alias).filter(database_id=database.id).order_by("key")
    return {row.key: row.value for row in rows}
