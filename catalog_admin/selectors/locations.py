"""
Who uses a directory: the tables and partitions whose storage descriptor points at, inside or above given locations,
and the databases' locations (governed roots).

:func:`location_users` reads SDS.LOCATION set-based: a prefix *range* (``>= 'x/' AND < 'x0'``, byte order) per
directory of a small *cover* of the locations, and one ``IN`` list of the ancestors above that cover, never ``LIKE``
and never a loop over rows, so an index on the column (Hive's scripts have none) serves it as range scans. Many
locations (a range ``DROP PARTITION`` of 100,000 directories) are lifted to their common parents, so a statement holds
a few ranges instead of one per location (each row of SDS was compared with every range); the rows found are then
narrowed to the locations asked for by binary search over the sorted rows.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.db import connections

from catalog_admin.hive.locations import SCHEME, GovernedRoots, root_locations
from catalog_admin.locations import normalize_location
from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from catalog_admin.selectors.metastores import Metastore

__all__ = (
    "GovernedRoots",
    "LocationUser",
    "covering",
    "database_locations",
    "governed_roots",
    "location_spellings",
    "location_users",
)

CHUNK = 100  # prefix ranges per statement
IN_CHUNK = 1_000  # ancestors per statement (an IN list: a hash or binary search per row, not a comparison per value)
COVER = 32  # directories the locations' ranges are lifted to before they are read


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
    cover = covering(locations, COVER)
    above = _outside(ancestors, cover)
    statements: list[tuple[Sequence[str], Sequence[str]]] = [
        (cover[i : i + CHUNK], ()) for i in range(0, len(cover), CHUNK)
    ]
    statements += [((), above[i : i + IN_CHUNK]) for i in range(0, len(above), IN_CHUNK)]
    read = {
        user.sd_id: user for chunk, equal in statements for user in _users(metastore, chunk, equal, excluding_table)
    }
    users = _at_or_inside(read.values(), locations, ancestors)
    return sorted(users, key=lambda u: (u.location, u.sd_id))


def covering(locations: Iterable[str], limit: int) -> list[str]:
    """At most ``limit`` directories (where the locations allow) that are, or lie above, every one of ``locations``:
    the deepest are replaced by their parents until few enough remain (never a filesystem's or bucket's root)."""
    current = _outermost({normalize_location(location) for location in locations})
    while len(current) > limit:
        deepest = max(_depth(location) for location in current)
        if deepest < 2:
            break
        current = _outermost({_parent(c) if _depth(c) == deepest else c for c in current})
    return current


def _split(location: str) -> tuple[str, str]:
    match = SCHEME.match(location)
    prefix = match.group(0) if match else ""
    return prefix, location[len(prefix) :]


def _depth(location: str) -> int:
    path = _split(location)[1].strip("/")
    return len(path.split("/")) if path else 0


def _parent(location: str) -> str:
    prefix, path = _split(location)
    return prefix + posixpath.dirname(path.rstrip("/"))


def _outermost(locations: Iterable[str]) -> list[str]:
    """``locations`` without those at or inside another (sorted with a trailing ``/``, an inner one follows its outer
    one)."""
    kept: list[str] = []
    for location in sorted(locations, key=lambda value: value + "/"):
        if not kept or not (location + "/").startswith(kept[-1] + "/"):
            kept.append(location)
    return kept


def _outside(ancestors: Sequence[str], cover: Sequence[str]) -> list[str]:
    """The ``ancestors`` not at or inside a directory of ``cover`` (whose ranges find them already)."""
    covered = set(cover)
    kept = []
    for ancestor in ancestors:
        normal = normalize_location(ancestor)
        prefixes = {normal} | {normal[:i] for i, char in enumerate(normal) if char == "/"}
        if not prefixes & covered:
            kept.append(ancestor)
    return kept


def _at_or_inside(
    users: Iterable[LocationUser], locations: Sequence[str], ancestors: Sequence[str]
) -> list[LocationUser]:
    """The ``users`` at one of the spellings of ``locations`` or ``ancestors``, or inside one of ``locations`` (the
    same byte-order prefix test as the SQL's ranges), found by binary search over the users sorted by location."""
    ordered = sorted(users, key=lambda user: user.location)
    keys = [user.location for user in ordered]
    exact = {spelling for value in (*locations, *ancestors) for spelling in location_spellings(value)}
    kept = {user.sd_id: user for user in ordered if user.location in exact}
    for value in locations:
        for spelling in location_spellings(value):
            low = bisect_left(keys, spelling + "/")
            kept.update((user.sd_id, user) for user in ordered[low : bisect_left(keys, spelling + "0", low)])
    return list(kept.values())


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
