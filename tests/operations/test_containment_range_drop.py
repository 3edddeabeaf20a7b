"""
The containment guard of a range ``DROP PARTITION`` (issue 29) on every metastore: it reads only the storage
descriptors at, inside or above the trashed directories (the span of the dropped partitions, not every partition of
the table's directory), and still blocks the drop when another table or partition uses a directory at, inside or
above one being trashed, naming it; a location beside the dropped directories, inside their span, blocks nothing.
"""

from __future__ import annotations

import pytest
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Partition, StorageDescriptor, Table
from catalog_admin.selectors import locations
from catalog_admin.selectors.locations import LocationUser
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.services.alter import alter_preview_statement

DROP = "ALTER TABLE sales.orders DROP PARTITION (dt >= '2024-01-02')"
DROPPED_DIRECTORY = "dt=2024-01-02/hour=3"  # one of the eight partitions the range drops (seven have a directory)
KEPT = "dt=2024-01-01/hour=6"  # a partition of sales.orders the range keeps


def orders_location(metastore: Metastore) -> str:
    return Table.objects.on(metastore, "sd").get(database__name="sales", name="orders").sd.location


def repoint(metastore: Metastore, sd_id: int, location: str) -> None:
    """Point a storage descriptor elsewhere, as a Hive client could."""
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=location)


def customers_sd(metastore: Metastore) -> int:
    return Table.objects.using(metastore.alias).get(database__name="sales", name="customers").sd_id


def kept_partition_sd(metastore: Metastore) -> int:
    return Partition.objects.using(metastore.alias).get(table__name="orders", name=KEPT).sd_id


def in_use(preview: Preview) -> list[str]:
    return [f.message for f in preview.blockers if f.code == "directory_in_use"]


@pytest.mark.parametrize(
    ("user", "where", "owner"),
    [
        ("table", f"/{DROPPED_DIRECTORY}", "sales.customers"),
        ("table", f"/{DROPPED_DIRECTORY}/nested", "sales.customers"),
        ("table", "/dt=2024-01-02", "sales.customers"),
        ("partition", f"/{DROPPED_DIRECTORY}/nested", f"sales.orders/{KEPT}"),
        ("partition", f"/{DROPPED_DIRECTORY}", f"sales.orders/{KEPT}"),
    ],
    ids=["table-at", "table-inside", "table-above", "partition-inside", "partition-at"],
)
@pytest.mark.parametrize("cover", [1, locations.COVER], ids=["lifted", "one-range-each"])
def test_a_range_drop_is_blocked_by_another_user_of_a_trashed_directory(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch, user: str, where: str, owner: str, cover: int
) -> None:
    """Another table (sales.customers) or a partition the range keeps, at, inside or above a dropped partition's
    directory: the drop is blocked, naming that table or partition and its directory, whether the guard reads one
    range per directory or the span of them all (lifted to their common parent, as for a year's drop)."""
    # given
    monkeypatch.setattr(locations, "COVER", cover)
    location = orders_location(metastore).rstrip("/") + where
    repoint(metastore, customers_sd(metastore) if user == "table" else kept_partition_sd(metastore), location)

    # when
    preview = alter_preview_statement(metastore=metastore, statement=DROP)

    # then
    assert preview.partitions_touched == 8
    assert any(owner in message and location in message for message in in_use(preview)), preview.blockers


def test_a_location_beside_the_dropped_directories_blocks_nothing(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sales.customers at ``dt=2024-01-02/hour=4``: inside the span of the dropped directories (between hour=3 and
    hour=6 in byte order) but at, inside and above none of them: the drop is not blocked for it."""
    # given
    monkeypatch.setattr(locations, "COVER", 1)
    location = orders_location(metastore).rstrip("/") + "/dt=2024-01-02/hour=4"
    repoint(metastore, customers_sd(metastore), location)

    # when
    preview = alter_preview_statement(metastore=metastore, statement=DROP)

    # then
    assert preview.moves
    assert in_use(preview) == []


def test_the_guard_reads_only_the_span_of_the_dropped_directories(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The storage descriptors the guard reads are the dropped partitions', their trash's and their ancestors': none
    of the partitions the range keeps, although they share the table's directory (the guard's cover, as for the
    thousands of directories of a year's drop)."""
    # given
    read: list[LocationUser] = []
    users = locations._users

    def spy(*args: object) -> object:
        found = list(users(*args))  # type: ignore[arg-type]
        read.extend(found)
        return iter(found)

    monkeypatch.setattr(locations, "_users", spy)
    monkeypatch.setattr(locations, "COVER", 2)  # as with thousands of directories: lifted to the table's directory
    kept = set(
        Partition.objects.using(metastore.alias)
        .filter(table__name="orders", table__database__name="sales", name__lt="dt=2024-01-02")
        .values_list("name", flat=True)
    )

    # when
    preview = alter_preview_statement(metastore=metastore, statement=DROP)

    # then
    partitions = {user.partition for user in read if user.table == "orders" and user.partition}
    assert len(kept) == 4 and sum(move.partitions_moving for move in preview.moves) == 7
    assert len(partitions) >= 7  # the dropped partitions' own rows
    assert not kept & partitions


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)  # PostgreSQL's EXPLAIN
def test_the_spans_and_the_ancestors_are_read_in_one_scan_of_sds(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard's read of a range drop is one statement, and PostgreSQL answers it with one scan of SDS (Hive's
    schemas have no index on SDS.LOCATION: the spans and the ancestors' ``IN`` filter that scan)."""
    # given
    statements: list[tuple[str, object]] = []
    reads = []
    users = locations._users

    def capture(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if 'COLLATE "C"' in sql and "COALESCE" in sql:  # the guard's ranges (byte order), by owner
            statements.append((sql, params))
        return execute(sql, params, many, context)

    def spy(*args: object) -> object:
        reads.append(args)
        return users(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(locations, "_users", spy)

    # when
    with connections[metastore.alias].execute_wrapper(capture):
        alter_preview_statement(metastore=metastore, statement=DROP)
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute("EXPLAIN " + statements[0][0], statements[0][1])
        plan = "\n".join(row[0] for row in cursor.fetchall())

    # then
    assert len(reads) == 1 and len(statements) == 1
    assert plan.count('on "SDS"') == 1, plan
