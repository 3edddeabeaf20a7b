"""
Who uses a directory: the tables and partitions whose storage descriptor points at, inside or above given locations,
and the databases' locations (governed roots).

:func:`location_users` reads SDS.LOCATION set-based: a byte-order *range* (``>= 'low' AND < 'high'``) per directory of
a small *cover* of the locations, and one ``IN`` list of the ancestors above them, never ``LIKE`` and never a loop over
rows. Many locations (a range ``DROP PARTITION`` of 100,000 directories) are lifted to their common parents, so a
statement holds a few ranges instead of one per location; each range is then narrowed to the *span* of the locations
it covers (from the least of them to just past the greatest one's subtree), so a year's partitions of a
100,000-partition table read that year's rows, not every partition of the table directory. Hive's schemas have no
index on SDS.LOCATION (``hive-schema-*.sql``: SDS is indexed on SERDE_ID and CD_ID only), so the ranges filter one
scan of SDS; the rows found (those in the spans, and the ancestors) are joined to their owners and narrowed to the
locations asked for by their own ``/``-prefixes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import zip_longest
from operator import attrgetter
from typing import Any

from django.db import connections
from django.db.models import Model

from catalog_admin.hive.locations import SCHEME, GovernedRoots, root_locations
from catalog_admin.locations import normalize_location
from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from catalog_admin.selectors.metastores import Metastore

__all__ = (
    "GovernedRoots",
    "LocationUser",
    "byte_ordered",
    "covering",
    "database_locations",
    "governed_roots",
    "location_spellings",
    "location_users",
    "strangers_inside",
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
    spans = _spans(locations, covering(locations, COVER))
    span_chunks = [spans[i : i + CHUNK] for i in range(0, len(spans), CHUNK)]
    above_chunks = [ancestors[i : i + IN_CHUNK] for i in range(0, len(ancestors), IN_CHUNK)]
    # One scan of SDS answers a chunk of spans and one of ancestors together.
    statements = zip_longest(span_chunks, above_chunks, fillvalue=())
    read = {
        user.sd_id: user for chunk, equal in statements for user in _users(metastore, chunk, equal, excluding_table)
    }
    users = _at_or_inside(read.values(), locations, ancestors)
    return sorted(users, key=attrgetter("location", "sd_id"))


def _column(connection: Any, model: type[Model], field: str) -> str:
    """``model``'s column for ``field``, quoted for ``connection``."""
    return connection.ops.quote_name(model._meta.get_field(field).column)


def byte_ordered(connection: Any, column: str) -> str:
    """``column`` compared in byte order, whatever its collation (PostgreSQL databases often use a linguistic one):
    the order the locations' and names' ranges are built in."""
    return f'{column} COLLATE "C"' if connection.vendor == "postgresql" else column


def strangers_inside(metastore: Metastore, table_id: int, root: str, first: str, last: str) -> list[str]:
    """The locations from the directory ``first`` to the end of the directory ``last`` (in byte order; both inside the
    table root ``root`` of table ``table_id``) that are not one of the table's partitions at ``<root>/<its name>``,
    Hive's layout: another table's or partition's directory, or a partition of this table placed elsewhere in its
    tree. Usually none: one scan of SDS joined to the table's partitions, the layout compared in the statement (in
    each spelling of a local root), only the strangers returned."""
    connection = connections[metastore.alias]
    quote = connection.ops.quote_name
    sds, parts = quote(StorageDescriptor._meta.db_table), quote(Partition._meta.db_table)
    col = partial(_column, connection)

    location = f"s.{col(StorageDescriptor, 'location')}"
    ordered = byte_ordered(connection, location)
    name = f"p.{col(Partition, 'name')}"
    spellings = location_spellings(root)
    inside = " OR ".join(f"({ordered} >= %s AND {ordered} < %s)" for _ in location_spellings(first))
    joined = f"CONCAT(%s, {name})" if connection.vendor == "mysql" else f"(%s || {name})"
    laid_out = ", ".join([joined] * len(spellings))
    query = (
        f"SELECT {location} FROM {sds} s LEFT JOIN {parts} p ON p.{col(Partition, 'sd')} = "
        f"s.{col(StorageDescriptor, 'id')} AND p.{col(Partition, 'table')} = %s "
        f"WHERE ({inside}) AND (p.{col(Partition, 'id')} IS NULL OR {location} NOT IN ({laid_out}))"
    )
    params: list[Any] = [table_id]
    spans = zip(location_spellings(first), location_spellings(last), strict=True)
    params += [bound for low, high in spans for bound in (low, high + "0")]  # '0' follows '/': last's subtree too
    params += [spelling + "/" for spelling in spellings]
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return sorted(found for (found,) in cursor.fetchall())


def covering(locations: Iterable[str], limit: int) -> list[str]:
    """At most ``limit`` directories (where the locations allow) that are, or lie above, every one of ``locations``:
    the deepest are replaced by their parents until few enough remain (never a filesystem's or bucket's root)."""
    by_depth: dict[int, set[str]] = defaultdict(set)
    for location in {normalize_location(location) for location in locations}:
        by_depth[_depth(location)].add(location)
    # Each level is lifted at once; the members inside another are left out once, at the end (a member inside
    # another is covered by it whatever it is lifted to).
    while sum(map(len, by_depth.values())) > limit and (deepest := max(by_depth)) >= 2:
        by_depth[deepest - 1].update(_parent(location) for location in by_depth.pop(deepest))
    return _outermost(location for level in by_depth.values() for location in level)


def _spans(locations: Iterable[str], cover: Sequence[str]) -> list[tuple[str, str]]:
    """For each directory of ``cover``, the byte-order range of the ``locations`` at or inside it: from the least of
    them to the greatest of them followed by ``0`` (``'0'`` follows ``'/'``, so a location's subtree lies before
    it). Every location asked for, and everything inside one, lies in its cover directory's span; nothing else of
    that directory outside the span is read."""
    members = sorted({normalize_location(location) + "/" for location in locations})
    spans = []
    for directory in cover:
        low = bisect_left(members, directory + "/")
        inside = [member[:-1] for member in members[low : bisect_left(members, directory + "0", low)]]
        if inside:
            spans.append((min(inside), max(inside) + "0"))
    return spans


def _split(location: str) -> tuple[str, str]:
    if location.startswith("file:/") and not location.startswith("file://"):
        return "file:", location[5:]  # what SCHEME finds in the usual local location, without the expression
    match = SCHEME.match(location)
    prefix = match.group(0) if match else ""
    return prefix, location[len(prefix) :]


def _depth(location: str) -> int:
    path = _split(location)[1].strip("/")
    return path.count("/") + 1 if path else 0


def _parent(location: str) -> str:
    """The parent of a location at least two levels deep (its last ``/`` then lies in its path)."""
    path = location.rstrip("/")
    return path[: path.rfind("/")].rstrip("/")


def _outermost(locations: Iterable[str]) -> list[str]:
    """``locations`` without those at or inside another (sorted with a trailing ``/``, an inner one follows its outer
    one)."""
    kept: list[str] = []
    for location in sorted(locations, key=lambda value: value + "/"):
        if not kept or not (location + "/").startswith(kept[-1] + "/"):
            kept.append(location)
    return kept


def _at_or_inside(
    users: Iterable[LocationUser], locations: Sequence[str], ancestors: Sequence[str]
) -> list[LocationUser]:
    """The ``users`` at one of ``locations`` or ``ancestors``, or inside one of ``locations``, each row's location
    in its normal spelling (``/x`` and ``file:///x`` are ``file:/x``, as the statement's spellings read them) and
    its own ``/``-prefixes looked up in a set: the work grows with the rows read, not with the locations asked for."""
    inside = set(locations)
    exact = inside.union(ancestors)
    found = []
    for user in users:
        normal = normalize_location(user.location)
        if normal in exact or _below_one_of(normal, inside):
            found.append(user)
    return found


def _below_one_of(location: str, directories: set[str]) -> bool:
    """Whether ``location`` starts with one of ``directories`` followed by ``/``."""
    slash = location.find("/")
    while slash != -1:
        if location[:slash] in directories:
            return True
        slash = location.find("/", slash + 1)
    return False


def _users(
    metastore: Metastore, spans: Sequence[tuple[str, str]], ancestors: Sequence[str], excluding_table: int | None
) -> Iterator[LocationUser]:
    connection = connections[metastore.alias]
    quote = connection.ops.quote_name
    sds, tbls, parts, dbs = (quote(m._meta.db_table) for m in (StorageDescriptor, Table, Partition, Database))
    col = partial(_column, connection)

    location = f"s.{col(StorageDescriptor, 'location')}"
    ordered = byte_ordered(connection, location)
    conditions, params = [], []
    for low, high in spans:
        # Each spelling of a local path swaps one prefix for another, so the span keeps its order in each.
        for low_spelling, high_spelling in zip(location_spellings(low), location_spellings(high), strict=True):
            conditions.append(f"{ordered} >= %s AND {ordered} < %s")
            params += [low_spelling, high_spelling]
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
