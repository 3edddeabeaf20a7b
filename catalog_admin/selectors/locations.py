"""
Who uses a directory: the tables and partitions whose storage descriptor points at, inside or above given locations,
and the databases' locations (governed roots).

:func:`location_users` is one set-based statement per chunk of locations over SDS.LOCATION: an equality per ancestor
and a prefix *range* (``>= 'x/' AND < 'x0'``, byte order) per location, never ``LIKE`` and never a loop over rows,
so an index on the column (Hive's scripts have none) serves it as range scans.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.db import connections

from catalog_admin.hive.locations import GovernedRoots, root_locations
from catalog_admin.locations import normalize_location
from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from catalog_admin.selectors.metastores import Metastore

__all__ = (
    "GovernedRoots",
    "LocationUser",
    "database_locations",
    "governed_roots",
    "location_spellings",
    "location_users",
)

CHUNK = 100  # locations per statement


@dataclass(frozen=True)
class LocationUser:
    """A table's or partition's storage descriptor and its location."""

    sd_id: int
    location: str
    table_id: int
    database: str
    table: str
    partition: str | None = None

    @property
    def owner(self) -> str:
        """``db.table`` or ``db.table/partition``."""
        base = f"{self.database}.{self.table}"
        return f"{base}/{self.partition}" if self.partition else base


def database_locations(metastore: Metastore) -> list[str]:
    """Every database's location, and its managed location where the schema has one (Hive 4)."""
    fields = ["location_uri"]
    if metastore.schema.has(Database, "managed_location_uri"):
        fields.append("managed_location_uri")
    rows = Database.objects.using(metastore.alias).values_list(*fields)
    return sorted({value for row in rows for value in row if value})


def governed_roots(metastore: Metastore) -> GovernedRoots:
    """The metastore's governed roots: its configured roots and the database locations inside one of them."""
    config = metastore.config
    return GovernedRoots(
        root_locations(config.root_locations, database_locations(metastore)), config.allow_outside_roots
    )


def location_spellings(location: str) -> list[str]:
    """The spellings one location may be stored under: ``file:/x``, ``file:///x`` and ``/x`` for local paths."""
    normal = normalize_location(location)
    if not normal.startswith("file:/"):
        return [normal]
    path = normal.removeprefix("file:")
    return [normal, f"file://{path}", path]


def location_users(
    metastore: Metastore,
    locations: Sequence[str],
    *,
    ancestors: Sequence[str] = (),
    excluding_table: int | None = None,
) -> list[LocationUser]:
    """Tables and partitions whose location is one of ``locations``, inside one, or one of ``ancestors`` (all given
    normalised); those of table ``excluding_table`` (its own row and its partitions) left out in the query."""
    users: dict[int, LocationUser] = {}
    for start in range(0, max(len(locations), len(ancestors)), CHUNK):
        chunk, above = locations[start : start + CHUNK], ancestors[start : start + CHUNK]
        for user in _users(metastore, chunk, above, excluding_table):
            users[user.sd_id] = user
    return sorted(users.values(), key=lambda u: (u.location, u.sd_id))


def _users(
    metastore: Metastore, locations: Sequence[str], ancestors: Sequence[str], excluding_table: int | None
) -> Iterator[LocationUser]:
    connection = connections[metastore.alias]
    quote = connection.ops.quote_name
    sds, tbls, parts, dbs = (quote(m._meta.db_table) for m in (StorageDescriptor, Table, Partition, Database))

    def col(model: type, field: str) -> str:
        return quote(model._meta.get_field(field).column)

    location = f"s.{col(StorageDescriptor, 'location')}"
    # Byte order, whatever the column's collation (PostgreSQL databases often use a linguistic one).
    ordered = f'{location} COLLATE "C"' if connection.vendor == "postgresql" else location
    conditions, params = [], []
    for value in locations:
        for spelling in location_spellings(value):
            conditions.append(f"{location} = %s OR ({ordered} >= %s AND {ordered} < %s)")
            params += [spelling, spelling + "/", spelling + "0"]  # '0' follows '/' in byte order
    spellings = [s for value in ancestors for s in location_spellings(value)]
    if spellings:
        conditions.append(f"{location} IN ({', '.join(['%s'] * len(spellings))})")
        params += spellings
    if not conditions:
        return
    owner_table = f"COALESCE(t.{col(Table, 'id')}, p.{col(Partition, 'table')})"
    excluded = f" AND {owner_table} <> %s" if excluding_table is not None else ""
    query = (
        f"SELECT s.{col(StorageDescriptor, 'id')}, {location}, {owner_table}, d.{col(Database, 'name')}, "
        f"o.{col(Table, 'name')}, p.{col(Partition, 'name')} FROM {sds} s "
        f"LEFT JOIN {tbls} t ON t.{col(Table, 'sd')} = s.{col(StorageDescriptor, 'id')} "
        f"LEFT JOIN {parts} p ON p.{col(Partition, 'sd')} = s.{col(StorageDescriptor, 'id')} "
        f"JOIN {tbls} o ON o.{col(Table, 'id')} = {owner_table} "
        f"JOIN {dbs} d ON d.{col(Database, 'id')} = o.{col(Table, 'database')} "
        f"WHERE ({' OR '.join(f'({c})' for c in conditions)}){excluded}"
    )
    with connection.cursor() as cursor:
        cursor.execute(query, (*params, *(() if excluding_table is None else (excluding_table,))))
        for sd_id, found, table_id, database, table, partition in cursor.fetchall():
            yield LocationUser(sd_id, found, table_id, database, table, partition)
